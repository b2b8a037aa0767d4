// High-level SoftmaxGrad / SoftmaxGradFront and Sum in the classic style, tiling read from GM.
#include "kernel_operator.h"
#include "lib/activation/softmaxgrad.h"
#include "lib/reduce/sum.h"
using namespace AscendC;

#pragma pack(1)
struct SoftmaxGradTilingData {
    uint32_t m;         // rows
    uint32_t k;         // row length (32-byte aligned)
    uint32_t tmpBytes;  // sharedTmpBuffer size; 0 = let the API take free UB
    uint32_t front;     // 1 = SoftmaxGradFront
    SoftMaxTiling softmax;
};
#pragma pack()

template <typename T>
class KernelSoftmaxGrad {
public:
    __aicore__ inline void Init(GM_ADDR grad, GM_ADDR y, GM_ADDR out, const SoftmaxGradTilingData& t) {
        t_ = t;
        outLen_ = t.m * (t.front ? 32 / sizeof(T) : t.k);
        gradGm_.SetGlobalBuffer((__gm__ T*)grad, t.m * t.k);
        yGm_.SetGlobalBuffer((__gm__ T*)y, t.m * t.k);
        outGm_.SetGlobalBuffer((__gm__ T*)out, outLen_);
        pipe_.InitBuffer(gradQ_, 1, t.m * t.k * sizeof(T));
        pipe_.InitBuffer(yQ_, 1, t.m * t.k * sizeof(T));
        pipe_.InitBuffer(outQ_, 1, outLen_ * sizeof(T));
        if (t.tmpBytes) pipe_.InitBuffer(tmp_, t.tmpBytes);
    }
    __aicore__ inline void Process() {
        CopyIn();
        Compute();
        CopyOut();
    }

private:
    __aicore__ inline void CopyIn() {
        LocalTensor<T> g = gradQ_.AllocTensor<T>();
        LocalTensor<T> y = yQ_.AllocTensor<T>();
        DataCopy(g, gradGm_, t_.m * t_.k);
        DataCopy(y, yGm_, t_.m * t_.k);
        gradQ_.EnQue(g);
        yQ_.EnQue(y);
    }
    __aicore__ inline void Compute() {
        LocalTensor<T> g = gradQ_.DeQue<T>();
        LocalTensor<T> y = yQ_.DeQue<T>();
        LocalTensor<T> o = outQ_.AllocTensor<T>();
        SoftMaxShapeInfo shape{t_.m, t_.k, t_.m, t_.k};
        if (t_.tmpBytes && t_.front) {
            SoftmaxGradFront<T>(o, g, y, tmp_.Get<uint8_t>(), t_.softmax, shape);
        } else if (t_.tmpBytes) {
            SoftmaxGrad<T>(o, g, y, tmp_.Get<uint8_t>(), t_.softmax, false, shape);
        } else if (t_.front) {
            SoftmaxGradFront<T>(o, g, y, t_.softmax, shape);
        } else {
            SoftmaxGrad<T>(o, g, y, t_.softmax, false, shape);
        }
        outQ_.EnQue(o);
        gradQ_.FreeTensor(g);
        yQ_.FreeTensor(y);
    }
    __aicore__ inline void CopyOut() {
        LocalTensor<T> o = outQ_.DeQue<T>();
        DataCopy(outGm_, o, outLen_);
        outQ_.FreeTensor(o);
    }

    TPipe pipe_;
    TQue<QuePosition::VECIN, 1> gradQ_, yQ_;
    TQue<QuePosition::VECOUT, 1> outQ_;
    TBuf<TPosition::VECCALC> tmp_;
    GlobalTensor<T> gradGm_, yGm_, outGm_;
    SoftmaxGradTilingData t_;
    uint32_t outLen_;
};

extern "C" __global__ __aicore__ void softmax_grad_f32(GM_ADDR grad, GM_ADDR y, GM_ADDR out, GM_ADDR workspace,
                                                       GM_ADDR tiling) {
    GET_TILING_DATA(t, tiling);
    KernelSoftmaxGrad<float> op;
    op.Init(grad, y, out, t);
    op.Process();
}

extern "C" __global__ __aicore__ void softmax_grad_f16(GM_ADDR grad, GM_ADDR y, GM_ADDR out, GM_ADDR workspace,
                                                       GM_ADDR tiling) {
    GET_TILING_DATA(t, tiling);
    KernelSoftmaxGrad<half> op;
    op.Init(grad, y, out, t);
    op.Process();
}

// Sum over the last axis: dst[i] = sum(src[i, :n]) for rows of `inner` (n rounded up to 32 bytes).
extern "C" __global__ __aicore__ void sum_rows(GM_ADDR src, GM_ADDR dst, uint32_t outter, uint32_t inner, uint32_t n) {
    GlobalTensor<float> srcGm, dstGm;
    srcGm.SetGlobalBuffer((__gm__ float*)src, outter * inner);
    dstGm.SetGlobalBuffer((__gm__ float*)dst, 8);
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> inQ;
    TQue<QuePosition::VECOUT, 1> outQ;
    TBuf<TPosition::VECCALC> tmp;
    pipe.InitBuffer(inQ, 1, outter * inner * sizeof(float));
    pipe.InitBuffer(outQ, 1, 32);
    pipe.InitBuffer(tmp, 1024);
    LocalTensor<float> x = inQ.AllocTensor<float>();
    DataCopy(x, srcGm, outter * inner);
    inQ.EnQue(x);
    x = inQ.DeQue<float>();
    LocalTensor<float> o = outQ.AllocTensor<float>();
    Duplicate(o, 0.0f, 8);
    PipeBarrier<PIPE_V>();
    Sum(o, x, tmp.Get<uint8_t>(), {outter, inner, n});
    outQ.EnQue(o);
    inQ.FreeTensor(x);
    o = outQ.DeQue<float>();
    DataCopy(dstGm, o, 8);
    outQ.FreeTensor(o);
}
