// Issue 24's plan for 16-bit rows of any short length k read flat, written by hand to price it before the
// backend builds it (docs/performance.md, "Rows packed at a pitch of k"): softmax_grad's
// out = (grad - sum(grad * src, row)) * src on half rows, computed in float32 rows packed at a pitch of k
// elements (not padded to blocks). Row i starts at element k * i: block k * i / 8, lane (k * i) % 8, a lane
// offset that cycles with period c = 8 / gcd(k, 8) rows, so rows of one residue class r lie k * c / 8 blocks
// apart. Per class, one WholeReduceSum under a bit mask of the row's lanes (shifted by its offset) sums its
// rows, and one Sub under the same mask, src1 a Brcb'd block of each row's sum at block stride 0, subtracts
// them; everything else is flat (count form). Needs offset + k <= 64 (a row within one repeat).
// The structure (queues, barriers, copy-in / compute / copy-out a tile) is the generated rows kernel's.
#include "kernel_operator.h"
using namespace AscendC;

class PackedRows {
public:
    __aicore__ inline void Init(GM_ADDR grad, GM_ADDR src, GM_ADDR out, uint32_t k, uint32_t rowsPerTile,
                                uint32_t perCore, uint32_t bigCores)
    {
        const uint32_t pid = static_cast<uint32_t>(GetBlockIdx());
        start_ = pid * perCore + (pid < bigCores ? pid : bigCores);
        end_ = start_ + perCore + (pid < bigCores ? 1 : 0);
        k_ = k;
        rows_ = rowsPerTile;
        uint32_t g = k;
        for (uint32_t b = 8; b != 0;) {  // gcd(k, 8)
            const uint32_t t = g % b;
            g = b;
            b = t;
        }
        classes_ = 8 / g;
        classStride_ = k * classes_ / 8;
        slot_ = ((rows_ + classes_ - 1) / classes_ + 7) / 8 * 8;  // a class's sums, whole blocks
        const uint32_t flat = (rows_ * k + 15) / 16 * 16;
        gradGm_.SetGlobalBuffer((__gm__ half*)grad);
        srcGm_.SetGlobalBuffer((__gm__ half*)src);
        outGm_.SetGlobalBuffer((__gm__ half*)out);
        pipe_.InitBuffer(gradQ_, 2, flat * sizeof(half));
        pipe_.InitBuffer(srcQ_, 2, flat * sizeof(half));
        pipe_.InitBuffer(gradBuf_, flat * sizeof(float));
        pipe_.InitBuffer(srcBuf_, flat * sizeof(float));
        pipe_.InitBuffer(sumBuf_, classes_ * slot_ * sizeof(float));
        const uint32_t blocks = classes_ * slot_ * 8;  // the Brcb'd sums; grad * src before them
        pipe_.InitBuffer(brcbBuf_, (flat > blocks ? flat : blocks) * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t row0 = start_; row0 < end_; row0 += rows_) {
            const uint32_t n = end_ - row0 < rows_ ? end_ - row0 : rows_;
            CopyIn(row0, n);
            Compute(n);
            CopyOut(row0, n);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t row0, uint32_t n)
    {
        const DataCopyExtParams params{1, static_cast<uint32_t>(n * k_ * sizeof(half)), 0, 0, 0};
        const DataCopyPadExtParams<half> pad{false, 0, 0, (half)0.0f};
        LocalTensor<half> grad = gradQ_.AllocTensor<half>();
        DataCopyPad(grad, gradGm_[static_cast<uint64_t>(row0) * k_], params, pad);
        gradQ_.EnQue<TPosition::GM, TPosition::VECIN>(grad);
        LocalTensor<half> src = srcQ_.AllocTensor<half>();
        DataCopyPad(src, srcGm_[static_cast<uint64_t>(row0) * k_], params, pad);
        srcQ_.EnQue(src);
    }
    __aicore__ inline void Compute(uint32_t n)
    {
        LocalTensor<float> grad = gradBuf_.Get<float>();
        LocalTensor<float> src = srcBuf_.Get<float>();
        LocalTensor<float> sums = sumBuf_.Get<float>();
        LocalTensor<float> brcb = brcbBuf_.Get<float>();
        LocalTensor<half> gradIn = gradQ_.DeQue<TPosition::GM, TPosition::VECIN, half>();
        LocalTensor<half> srcIn = srcQ_.DeQue<half>();
        const uint32_t lanes = n * k_;
        Cast(grad, gradIn, RoundMode::CAST_NONE, lanes);
        Cast(src, srcIn, RoundMode::CAST_NONE, lanes);
        PipeBarrier<PIPE_V>();
        Mul(brcb, grad, src, lanes);  // grad * src, in the Brcb buffer until the sums are taken
        PipeBarrier<PIPE_V>();
        for (uint32_t r = 0; r < classes_ && r < n; ++r) {
            uint64_t mask[2] = {RowMask(r), 0};
            for (uint32_t j = 0; j < Count(r, n); j += MAX_REPEATS) {  // j: the class's row, 255 a call
                WholeReduceSum(sums[r * slot_ + j], brcb[(k_ * r / 8 + j * classStride_) * 8], mask,
                               Repeats(r, n, j), 1, 1, classStride_);
            }
        }
        PipeBarrier<PIPE_V>();
        for (uint32_t i = 0; i < classes_ * slot_ / 8; i += MAX_REPEATS) {  // 8 sums a repeat
            const uint32_t rest = classes_ * slot_ / 8 - i;
            Brcb(brcb[i * 64], sums[i * 8], static_cast<uint8_t>(rest < MAX_REPEATS ? rest : MAX_REPEATS), {1, 8});
        }
        PipeBarrier<PIPE_V>();
        for (uint32_t r = 0; r < classes_ && r < n; ++r) {
            uint64_t mask[2] = {RowMask(r), 0};
            const uint8_t stride = static_cast<uint8_t>(classStride_);
            for (uint32_t j = 0; j < Count(r, n); j += MAX_REPEATS) {
                const uint32_t at = (k_ * r / 8 + j * classStride_) * 8;
                Sub(grad[at], grad[at], brcb[(r * slot_ + j) * 8], mask, Repeats(r, n, j),
                    {1, 1, 0, stride, stride, 1});
            }
        }
        PipeBarrier<PIPE_V>();
        Mul(grad, grad, src, lanes);
        PipeBarrier<PIPE_V>();
        Cast(gradIn, grad, RoundMode::CAST_RINT, lanes);
        gradQ_.EnQue<TPosition::VECOUT, TPosition::GM>(gradIn);
        srcQ_.FreeTensor(srcIn);
    }
    __aicore__ inline void CopyOut(uint32_t row0, uint32_t n)
    {
        LocalTensor<half> out = gradQ_.DeQue<TPosition::VECOUT, TPosition::GM, half>();
        const DataCopyExtParams params{1, static_cast<uint32_t>(n * k_ * sizeof(half)), 0, 0, 0};
        DataCopyPad(outGm_[static_cast<uint64_t>(row0) * k_], out, params);
        gradQ_.FreeTensor(out);
    }
    // The lanes of class r's rows from their block start: k bits shifted by the lane offset (k * r) % 8.
    __aicore__ inline uint64_t RowMask(uint32_t r) const
    {
        const uint64_t row = k_ == 64 ? ~0ull : (1ull << k_) - 1;
        return row << (k_ * r % 8);
    }
    // Rows r, r + c, r + 2c, ... of a tile of n rows.
    __aicore__ inline uint32_t Count(uint32_t r, uint32_t n) const { return (n - r + classes_ - 1) / classes_; }
    // The repeats of one call from the class's row j: at most MAX_REPEATS.
    __aicore__ inline uint8_t Repeats(uint32_t r, uint32_t n, uint32_t j) const
    {
        const uint32_t rest = Count(r, n) - j;
        return static_cast<uint8_t>(rest < MAX_REPEATS ? rest : MAX_REPEATS);
    }
    static constexpr uint32_t MAX_REPEATS = 255;

    TPipe pipe_;
    TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> gradQ_;
    TQue<QuePosition::VECIN, 1> srcQ_;
    TBuf<TPosition::VECCALC> gradBuf_, srcBuf_, sumBuf_, brcbBuf_;
    GlobalTensor<half> gradGm_, srcGm_, outGm_;
    uint32_t start_ = 0, end_ = 0, k_ = 0, rows_ = 0, classes_ = 1, classStride_ = 1, slot_ = 8;
};

extern "C" __global__ __aicore__ void softmax_grad_packed_f16(GM_ADDR grad, GM_ADDR src, GM_ADDR out, uint32_t k,
                                                              uint32_t rowsPerTile, uint32_t perCore,
                                                              uint32_t bigCores)
{
    PackedRows op;
    op.Init(grad, src, out, k, rowsPerTile, perCore, bigCores);
    op.Process();
}
