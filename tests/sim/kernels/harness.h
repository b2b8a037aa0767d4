// Classic TPipe/TQue CopyIn -> Compute -> CopyOut around one compute step, shared by the API tests.
// Inputs in0/in1 (nIn elements each) and the initial dst (nOut elements) go through VECIN queues;
// Compute copies the initial dst into the VECOUT tensor (so masked lanes keep it) and calls f.
#pragma once
#include "kernel_operator.h"

template <typename TIn, typename TOut>
class Harness {
public:
    __aicore__ inline Harness(GM_ADDR in0, GM_ADDR in1, GM_ADDR out, uint32_t nIn, uint32_t nOut, uint32_t tmpBytes = 32)
        : nIn_(nIn), nOut_(nOut) {
        in0Gm_.SetGlobalBuffer((__gm__ TIn*)in0, nIn);
        in1Gm_.SetGlobalBuffer((__gm__ TIn*)in1, nIn);
        outGm_.SetGlobalBuffer((__gm__ TOut*)out, nOut);
        pipe_.InitBuffer(in0Q_, 1, nIn * sizeof(TIn));
        pipe_.InitBuffer(in1Q_, 1, nIn * sizeof(TIn));
        pipe_.InitBuffer(initQ_, 1, nOut * sizeof(TOut));
        pipe_.InitBuffer(outQ_, 1, nOut * sizeof(TOut));
        pipe_.InitBuffer(tmp_, tmpBytes);
    }
    template <class F>
    __aicore__ inline void Process(F f) {
        CopyIn();
        Compute(f);
        CopyOut();
    }

private:
    __aicore__ inline void CopyIn() {
        AscendC::LocalTensor<TIn> a = in0Q_.template AllocTensor<TIn>();
        AscendC::LocalTensor<TIn> b = in1Q_.template AllocTensor<TIn>();
        AscendC::LocalTensor<TOut> c = initQ_.template AllocTensor<TOut>();
        AscendC::DataCopy(a, in0Gm_, nIn_);
        AscendC::DataCopy(b, in1Gm_, nIn_);
        AscendC::DataCopy(c, outGm_, nOut_);
        in0Q_.EnQue(a);
        in1Q_.EnQue(b);
        initQ_.EnQue(c);
    }
    template <class F>
    __aicore__ inline void Compute(F f) {
        AscendC::LocalTensor<TIn> a = in0Q_.template DeQue<TIn>();
        AscendC::LocalTensor<TIn> b = in1Q_.template DeQue<TIn>();
        AscendC::LocalTensor<TOut> c = initQ_.template DeQue<TOut>();
        AscendC::LocalTensor<TOut> o = outQ_.template AllocTensor<TOut>();
        AscendC::DataCopy(o, c, nOut_);
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::LocalTensor<uint8_t> t = tmp_.template Get<uint8_t>();
        f(o, a, b, t);
        outQ_.EnQue(o);
        in0Q_.FreeTensor(a);
        in1Q_.FreeTensor(b);
        initQ_.FreeTensor(c);
    }
    __aicore__ inline void CopyOut() {
        AscendC::LocalTensor<TOut> o = outQ_.template DeQue<TOut>();
        AscendC::DataCopy(outGm_, o, nOut_);
        outQ_.FreeTensor(o);
    }

    AscendC::TPipe pipe_;
    AscendC::TQue<AscendC::QuePosition::VECIN, 1> in0Q_, in1Q_, initQ_;
    AscendC::TQue<AscendC::QuePosition::VECOUT, 1> outQ_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> tmp_;
    AscendC::GlobalTensor<TIn> in0Gm_, in1Gm_;
    AscendC::GlobalTensor<TOut> outGm_;
    uint32_t nIn_, nOut_;
};
