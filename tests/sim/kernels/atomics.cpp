// GM accumulation with SetAtomicAdd/Max/Min: every block combines its row of x into the same out row.
#include "kernel_operator.h"
using namespace AscendC;

// Block b loads x[b*n : (b+1)*n] and writes it to out[0:n] with the atomic mode `mode` (0 add, 1 max, 2 min);
// `pad` uses DataCopyPad for the write (n need not fill 32 bytes).
template <typename T>
__aicore__ inline void AccumulateRows(GM_ADDR x, GM_ADDR out, uint32_t n, int32_t mode, int32_t pad) {
    GlobalTensor<T> xGm, outGm;
    xGm.SetGlobalBuffer((__gm__ T*)x + GetBlockIdx() * n, n);
    outGm.SetGlobalBuffer((__gm__ T*)out, n);
    TPipe pipe;
    TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> que;
    pipe.InitBuffer(que, 1, (n * sizeof(T) + 31) / 32 * 32);
    LocalTensor<T> t = que.AllocTensor<T>();
    DataCopyPad(t, xGm, {1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0}, {false, 0, 0, T(0)});
    que.EnQue(t);
    t = que.DeQue<T>();
    if (mode == 0) SetAtomicAdd<T>();
    else if (mode == 1) SetAtomicMax<T>();
    else SetAtomicMin<T>();
    if (pad) DataCopyPad(outGm, t, {1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0});
    else DataCopy(outGm, t, n);
    SetAtomicNone();
    que.FreeTensor(t);
}
extern "C" __global__ __aicore__ void accumulate_f32(GM_ADDR x, GM_ADDR out, uint32_t n, int32_t mode, int32_t pad) {
    AccumulateRows<float>(x, out, n, mode, pad);
}
extern "C" __global__ __aicore__ void accumulate_f16(GM_ADDR x, GM_ADDR out, uint32_t n, int32_t mode, int32_t pad) {
    AccumulateRows<half>(x, out, n, mode, pad);
}
extern "C" __global__ __aicore__ void accumulate_i32(GM_ADDR x, GM_ADDR out, uint32_t n, int32_t mode, int32_t pad) {
    AccumulateRows<int32_t>(x, out, n, mode, pad);
}

// x[0:8] loaded through a VECIN->VECOUT queue, ready to be copied out; out is a GlobalTensor of 16 floats.
struct EightFloats {
    __aicore__ inline EightFloats(GM_ADDR x, GM_ADDR out) {
        xGm.SetGlobalBuffer((__gm__ float*)x, 8);
        outGm.SetGlobalBuffer((__gm__ float*)out, 16);
        pipe.InitBuffer(que, 1, 32);
        t = que.AllocTensor<float>();
    }
    __aicore__ inline void Load(const GlobalTensor<float>& from) {
        DataCopy(t, from, 8);
        que.EnQue(t);
        t = que.DeQue<float>();
    }
    GlobalTensor<float> xGm, outGm;
    TPipe pipe;
    TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> que;
    LocalTensor<float> t;
};

// Faults: block 0 writes out plainly, the others add atomically; and a float copy under SetAtomicAdd<half>.
extern "C" __global__ __aicore__ void atomic_then_plain(GM_ADDR x, GM_ADDR out) {
    EightFloats e(x, out);
    e.Load(e.xGm);
    if (GetBlockIdx() != 0) SetAtomicAdd<float>();
    DataCopy(e.outGm, e.t, 8);
    SetAtomicNone();
}

extern "C" __global__ __aicore__ void atomic_type_mismatch(GM_ADDR x, GM_ADDR out) {
    EightFloats e(x, out);
    e.Load(e.xGm);
    SetAtomicAdd<half>();
    DataCopy(e.outGm, e.t, 8);
}

// printf with int, float and half arguments, then DumpTensor of a UB tensor and of GM.
extern "C" __global__ __aicore__ void print_and_dump(GM_ADDR x, GM_ADDR out) {
    GlobalTensor<float> xGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, 16);
    TPipe pipe;
    TQue<TPosition::VECIN, 1> que;
    pipe.InitBuffer(que, 1, 64);
    LocalTensor<float> t = que.AllocTensor<float>();
    DataCopy(t, xGm, 16);
    que.EnQue(t);
    t = que.DeQue<float>();
    Muls(t, t, 2.0f, 16);
    printf("block %d of %d: %f %f\n", (int)GetBlockIdx(), (int)GetBlockNum(), 1.5f, static_cast<float>((half)0.25f));
    DumpTensor(t, 7, 8);
    PRINTF("gm:\n");
    DumpTensor(xGm, 8, 8);
    que.FreeTensor(t);
}

// The scalar data cache: scenario 0 writes out[0] with SetValue and then reads out[0:8] with DataCopy;
// scenario 1 reads out[0] with GetValue, overwrites out[0:8] by DataCopy and reads out[1] with GetValue
// (into out[8]). `clean` puts a DataCacheCleanAndInvalid of that line in between.
extern "C" __global__ __aicore__ void scalar_cache(GM_ADDR x, GM_ADDR out, int32_t scenario, int32_t clean) {
    EightFloats e(x, out);
    if (scenario == 0) {
        e.outGm.SetValue(0, 42.0f);
        if (clean) DataCacheCleanAndInvalid<float, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(e.outGm);
        e.Load(e.outGm);
        DataCopy(e.outGm[8], e.t, 8);
    } else {
        const float before = e.outGm.GetValue(0);
        e.Load(e.xGm);
        DataCopy(e.outGm, e.t, 8);
        if (clean) DataCacheCleanAndInvalid<float, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(e.outGm);
        e.outGm.SetValue(8, e.outGm.GetValue(1) + before);
    }
}
