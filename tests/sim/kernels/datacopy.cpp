// DataCopy (DataCopyParams form) and DataCopyPad layouts, and scalar GetValue/SetValue with flags.
#include "kernel_operator.h"
using namespace AscendC;

// GM -> UB with blockCount 2, blockLen 3 blocks, src gap 1 block, dst gap 2 blocks (half), then the
// whole UB span to out0 (count form) and the bursts back to out1 with UB gap 2 and GM gap 1.
extern "C" __global__ __aicore__ void copy_params(GM_ADDR src, GM_ADDR out0, GM_ADDR out1) {
    GlobalTensor<half> srcGm, out0Gm, out1Gm;
    srcGm.SetGlobalBuffer((__gm__ half*)src);
    out0Gm.SetGlobalBuffer((__gm__ half*)out0);
    out1Gm.SetGlobalBuffer((__gm__ half*)out1);
    TPipe pipe;
    TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> que;
    pipe.InitBuffer(que, 1, 8 * 32);
    LocalTensor<half> t = que.AllocTensor<half>();
    DataCopy(t, srcGm, DataCopyParams(2, 3, 1, 2));
    que.EnQue(t);
    LocalTensor<half> u = que.DeQue<half>();
    DataCopy(out0Gm, u, 8 * 16);
    DataCopy(out1Gm, u, {2, 3, 2, 1});
    que.FreeTensor(u);
}

// DataCopyPad GM -> UB: 3 bursts of 48 B from GM rows 64 B apart (gap 16 B), right padding 4 floats of -1,
// so every burst takes 64 B in UB. Then 3 bursts of 20 B without padding: dummy = the burst's first element.
// Finally UB -> GM of the 20-byte bursts, packed, which must write exactly 60 bytes.
extern "C" __global__ __aicore__ void copy_pad(GM_ADDR src, GM_ADDR out, GM_ADDR packed) {
    GlobalTensor<float> srcGm, outGm, packedGm;
    srcGm.SetGlobalBuffer((__gm__ float*)src);
    outGm.SetGlobalBuffer((__gm__ float*)out);
    packedGm.SetGlobalBuffer((__gm__ float*)packed);
    TPipe pipe;
    TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> que;
    pipe.InitBuffer(que, 1, 72 * sizeof(float));
    LocalTensor<float> t = que.AllocTensor<float>();
    DataCopyPad(t, srcGm, {3, 48, 16, 0, 0}, {true, 0, 4, -1.0f});
    DataCopyPad(t[48], srcGm, {3, 20, 44, 0, 0}, {false, 0, 0, 0.0f});
    que.EnQue(t);
    LocalTensor<float> u = que.DeQue<float>();
    DataCopy(outGm, u, 72);
    DataCopyPad(packedGm, u[48], {3, 20, 0, 0, 0});
    que.FreeTensor(u);
}

// Scalar access: out[i] = 2 * x[i] computed on the vector pipe, read back with GetValue after V_S and
// written to GM with SetValue; then a scalar SetValue feeds a vector op after S_V.
extern "C" __global__ __aicore__ void scalar_access(GM_ADDR x, GM_ADDR out) {
    GlobalTensor<float> xGm, outGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, 8);
    outGm.SetGlobalBuffer((__gm__ float*)out, 16);
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> inQ;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(inQ, 1, 32);
    pipe.InitBuffer(buf, 64);
    LocalTensor<float> in = inQ.AllocTensor<float>();
    DataCopy(in, xGm, 8);
    inQ.EnQue(in);
    in = inQ.DeQue<float>();
    LocalTensor<float> y = buf.Get<float>();
    Muls(y, in, 2.0f, 8);
    SetFlag<HardEvent::V_S>(EVENT_ID0);
    WaitFlag<HardEvent::V_S>(EVENT_ID0);
    for (int i = 0; i < 8; ++i) outGm.SetValue(i, y.GetValue(i) + xGm.GetValue(i));
    y.SetValue(8, 5.0f);
    SetFlag<HardEvent::S_V>(EVENT_ID1);
    WaitFlag<HardEvent::S_V>(EVENT_ID1);
    Adds(y[8], y[8], 1.0f, 8);
    SetFlag<HardEvent::V_S>(EVENT_ID0);
    WaitFlag<HardEvent::V_S>(EVENT_ID0);
    outGm.SetValue(8, y.GetValue(8));
    inQ.FreeTensor(in);
}

// out[0:8]: a VECOUT buffer reallocated after holding data reads back as poison (AllocTensor poisons);
// out[8:16]: a TBuf view at byte offset 32 filled with 2 when the tiling key is 2, else 3.
extern "C" __global__ __aicore__ void realloc_and_key(GM_ADDR out) {
    GlobalTensor<float> outGm;
    outGm.SetGlobalBuffer((__gm__ float*)out, 16);
    TPipe pipe;
    TQue<QuePosition::VECOUT, 1> que;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(que, 1, 32);
    pipe.InitBuffer(buf, 64);
    LocalTensor<float> t = que.AllocTensor<float>();
    Duplicate(t, 1.0f, 8);
    que.EnQue(t);
    t = que.DeQue<float>();
    que.FreeTensor(t);
    t = que.AllocTensor<float>();
    que.EnQue(t);
    t = que.DeQue<float>();
    DataCopy(outGm, t, 8);
    que.FreeTensor(t);
    LocalTensor<float> view = buf.GetWithOffset<float>(8, 32);
    if (TILING_KEY_IS(2)) {
        Duplicate(view, 2.0f, 8);
    } else {
        Duplicate(view, 3.0f, 8);
    }
    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
    DataCopy(outGm[8], view, 8);
}
