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

// Faults: block 0 writes out plainly, the others add atomically; and a float copy under SetAtomicAdd<half>.
extern "C" __global__ __aicore__ void atomic_then_plain(GM_ADDR x, GM_ADDR out) {
    GlobalTensor<float> xGm, outGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, 8);
    outGm.SetGlobalBuffer((__gm__ float*)out, 8);
    TPipe pipe;
    TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> que;
    pipe.InitBuffer(que, 1, 32);
    LocalTensor<float> t = que.AllocTensor<float>();
    DataCopy(t, xGm, 8);
    que.EnQue(t);
    t = que.DeQue<float>();
    if (GetBlockIdx() != 0) SetAtomicAdd<float>();
    DataCopy(outGm, t, 8);
    SetAtomicNone();
    que.FreeTensor(t);
}

extern "C" __global__ __aicore__ void atomic_type_mismatch(GM_ADDR x, GM_ADDR out) {
    GlobalTensor<float> xGm, outGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, 8);
    outGm.SetGlobalBuffer((__gm__ float*)out, 8);
    TPipe pipe;
    TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> que;
    pipe.InitBuffer(que, 1, 32);
    LocalTensor<float> t = que.AllocTensor<float>();
    DataCopy(t, xGm, 8);
    que.EnQue(t);
    t = que.DeQue<float>();
    SetAtomicAdd<half>();
    DataCopy(outGm, t, 8);
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
    printf("block %d of %d: %f %f\n", (int)GetBlockIdx(), (int)GetBlockNum(), 1.5f, (half)0.25f);
    DumpTensor(t, 7, 8);
    PRINTF("gm:\n");
    DumpTensor(xGm, 8, 8);
    que.FreeTensor(t);
}
