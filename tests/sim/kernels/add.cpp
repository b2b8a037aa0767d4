// The classic double-buffered vector add, z = (x + y) * 2, split evenly over the blocks.
#include "kernel_operator.h"
using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;

class KernelAdd {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t totalLength, uint32_t tileLength) {
        blockLength_ = totalLength / GetBlockNum();
        tileLength_ = tileLength;
        tileNum_ = blockLength_ / tileLength;
        xGm_.SetGlobalBuffer((__gm__ float*)x + blockLength_ * GetBlockIdx(), blockLength_);
        yGm_.SetGlobalBuffer((__gm__ float*)y + blockLength_ * GetBlockIdx(), blockLength_);
        zGm_.SetGlobalBuffer((__gm__ float*)z + blockLength_ * GetBlockIdx(), blockLength_);
        pipe_.InitBuffer(inQueueX_, BUFFER_NUM, tileLength_ * sizeof(float));
        pipe_.InitBuffer(inQueueY_, BUFFER_NUM, tileLength_ * sizeof(float));
        pipe_.InitBuffer(outQueueZ_, BUFFER_NUM, tileLength_ * sizeof(float));
    }
    __aicore__ inline void Process() {
        for (uint32_t i = 0; i < tileNum_; i++) {
            CopyIn(i);
            Compute(i);
            CopyOut(i);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t progress) {
        LocalTensor<float> xLocal = inQueueX_.AllocTensor<float>();
        LocalTensor<float> yLocal = inQueueY_.AllocTensor<float>();
        DataCopy(xLocal, xGm_[progress * tileLength_], tileLength_);
        DataCopy(yLocal, yGm_[progress * tileLength_], tileLength_);
        inQueueX_.EnQue(xLocal);
        inQueueY_.EnQue(yLocal);
    }
    __aicore__ inline void Compute(uint32_t progress) {
        LocalTensor<float> xLocal = inQueueX_.DeQue<float>();
        LocalTensor<float> yLocal = inQueueY_.DeQue<float>();
        LocalTensor<float> zLocal = outQueueZ_.AllocTensor<float>();
        Add(zLocal, xLocal, yLocal, tileLength_);
        PipeBarrier<PIPE_V>();
        Muls(zLocal, zLocal, 2.0f, tileLength_);
        outQueueZ_.EnQue<float>(zLocal);
        inQueueX_.FreeTensor(xLocal);
        inQueueY_.FreeTensor(yLocal);
    }
    __aicore__ inline void CopyOut(uint32_t progress) {
        LocalTensor<float> zLocal = outQueueZ_.DeQue<float>();
        DataCopy(zGm_[progress * tileLength_], zLocal, tileLength_);
        outQueueZ_.FreeTensor(zLocal);
    }

    TPipe pipe_;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX_, inQueueY_;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueZ_;
    GlobalTensor<float> xGm_, yGm_, zGm_;
    uint32_t blockLength_, tileLength_, tileNum_;
};

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t totalLength,
                                                 uint32_t tileLength) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    KernelAdd op;
    op.Init(x, y, z, totalLength, tileLength);
    op.Process();
}
