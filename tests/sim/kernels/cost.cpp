// Kernels whose cost is obvious, to pin the cost model (tests/sim/test_cost.py).
#include "kernel_operator.h"
using namespace AscendC;

// One GM -> UB copy of `n` floats in a single burst, and nothing else on any pipe; block b copies from
// element b * step (step 0: every block reads the same bytes, all but the first from the L2).
extern "C" __global__ __aicore__ void one_copy(GM_ADDR x, uint32_t n, uint32_t step) {
    GlobalTensor<float> xGm;
    xGm.SetGlobalBuffer((__gm__ float*)x + step * GetBlockIdx(), n);
    TPipe pipe;
    TQue<TPosition::VECIN, 1> que;
    pipe.InitBuffer(que, 1, n * sizeof(float));
    LocalTensor<float> t = que.AllocTensor<float>();
    DataCopy(t, xGm, n);
    que.EnQue(t);
    LocalTensor<float> u = que.DeQue<float>();
    que.FreeTensor(u);
}

// The same copy of `n` floats as `bursts` back-to-back DataCopyPad bursts.
extern "C" __global__ __aicore__ void burst_copy(GM_ADDR x, uint32_t n, uint32_t bursts) {
    GlobalTensor<float> xGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, n);
    TPipe pipe;
    TQue<TPosition::VECIN, 1> que;
    pipe.InitBuffer(que, 1, n * sizeof(float));
    LocalTensor<float> t = que.AllocTensor<float>();
    DataCopyPad(t, xGm, {uint16_t(bursts), uint32_t(n / bursts * sizeof(float)), 0, 0, 0}, {false, 0, 0, 0.0f});
    que.EnQue(t);
    LocalTensor<float> u = que.DeQue<float>();
    que.FreeTensor(u);
}

// One Exp over `n` floats in the count form (mask 0) or over n / 64 repeats of `mask` lanes.
extern "C" __global__ __aicore__ void one_exp(uint32_t n, uint32_t mask) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 2 * n * sizeof(float));
    LocalTensor<float> a = buf.Get<float>();
    if (mask == 0) Exp(a[n], a, n);
    else Exp(a[n], a, uint64_t(mask), n / 64, {1, 1, 8, 8});
}

// `count` dependent Adds over `n` floats, with or without a PipeBarrier<PIPE_V> after each.
extern "C" __global__ __aicore__ void add_chain(uint32_t n, uint32_t count, uint32_t barriers) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 2 * n * sizeof(float));
    LocalTensor<float> a = buf.Get<float>();
    for (uint32_t i = 0; i < count; ++i) {
        Add(a[n], a[n], a, n);
        if (barriers) PipeBarrier<PIPE_V>();
    }
}

// y = 2 * x in `tiles` tiles of `tile` floats: CopyIn, Compute (`work` dependent Muls), CopyOut, with
// BUFFERS buffers per queue.
template <int32_t BUFFERS>
__aicore__ inline void scale(GM_ADDR x, GM_ADDR y, uint32_t tile, uint32_t tiles, uint32_t work) {
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, tile * tiles);
    yGm.SetGlobalBuffer((__gm__ float*)y, tile * tiles);
    TPipe pipe;
    TQue<TPosition::VECIN, BUFFERS> in;
    TQue<TPosition::VECOUT, BUFFERS> out;
    pipe.InitBuffer(in, BUFFERS, tile * sizeof(float));
    pipe.InitBuffer(out, BUFFERS, tile * sizeof(float));
    for (uint32_t i = 0; i < tiles; ++i) {
        LocalTensor<float> a = in.template AllocTensor<float>();
        DataCopy(a, xGm[i * tile], tile);
        in.EnQue(a);
        LocalTensor<float> b = in.template DeQue<float>();
        LocalTensor<float> c = out.template AllocTensor<float>();
        Muls(c, b, 2.0f, tile);
        for (uint32_t w = 1; w < work; ++w) {
            PipeBarrier<PIPE_V>();
            Muls(c, c, 1.0f, tile);
        }
        out.EnQue(c);
        in.FreeTensor(b);
        LocalTensor<float> d = out.template DeQue<float>();
        DataCopy(yGm[i * tile], d, tile);
        out.FreeTensor(d);
    }
}

extern "C" __global__ __aicore__ void scale_single(GM_ADDR x, GM_ADDR y, uint32_t tile, uint32_t tiles, uint32_t work) {
    scale<1>(x, y, tile, tiles, work);
}
extern "C" __global__ __aicore__ void scale_double(GM_ADDR x, GM_ADDR y, uint32_t tile, uint32_t tiles, uint32_t work) {
    scale<2>(x, y, tile, tiles, work);
}

// A vector result read by the scalar unit: the WaitFlag<V_S> stalls dispatch until Exp is done.
extern "C" __global__ __aicore__ void scalar_waits(GM_ADDR out, uint32_t n) {
    GlobalTensor<float> outGm;
    outGm.SetGlobalBuffer((__gm__ float*)out, 1);
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 2 * n * sizeof(float));
    LocalTensor<float> a = buf.Get<float>();
    Duplicate(a, 1.0f, n);
    PipeBarrier<PIPE_V>();
    Exp(a[n], a, n);
    SetFlag<HardEvent::V_S>(EVENT_ID0);
    WaitFlag<HardEvent::V_S>(EVENT_ID0);
    outGm.SetValue(0, a.GetValue(n));
}
