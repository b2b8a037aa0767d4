// Issue 24's plan for 16-bit rows of any short length k read flat, written by hand to price it before the
// backend builds it (docs/performance.md, "Rows packed at a pitch of k"): softmax_grad's
// out = (grad - sum(grad * src, row)) * src on half (or float) rows, computed in float32 rows packed at a pitch
// of k elements (not padded to blocks): half rows cast, float rows in their input buffers. Row i starts at
// element k * i: block k * i / 8, lane (k * i) % 8, a lane offset that cycles with period c = 8 / gcd(k, 8)
// rows, so rows of one residue class r lie k * c / 8 blocks apart. Per class, one WholeReduceSum under a bit
// mask of the row's lanes (shifted by its offset) sums its rows into their places in row order (dstRepStride
// c), and one Sub under the same mask, src1 the Brcb'd block of each row's sum at block stride 0 and repeat
// stride c, subtracts them; everything else is flat (count form). A row past one repeat (offset + k > 64
// lanes) takes those calls once per repeat it spans, each under the mask of its lanes there, and the partial
// sums are added (Add). Needs k * c / 8 <= 255 (the 8-bit repeat stride): k < 256.
// The structure (queues, barriers, copy-in / compute / copy-out a tile) is the generated rows kernel's.
#include "kernel_operator.h"
using namespace AscendC;

template <typename T>
class PackedRows {
    static constexpr bool CAST = sizeof(T) == 2;  // half rows are computed in float32 copies

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
        sums_ = (rows_ + 7) / 8 * 8;  // the row sums in row order, whole blocks
        const uint32_t flat = (rows_ * k + 15) / 16 * 16;
        gradGm_.SetGlobalBuffer((__gm__ T*)grad);
        srcGm_.SetGlobalBuffer((__gm__ T*)src);
        outGm_.SetGlobalBuffer((__gm__ T*)out);
        pipe_.InitBuffer(gradQ_, 2, flat * sizeof(T));
        pipe_.InitBuffer(srcQ_, 2, flat * sizeof(T));
        if constexpr (CAST) {
            pipe_.InitBuffer(gradBuf_, flat * sizeof(float));
            pipe_.InitBuffer(srcBuf_, flat * sizeof(float));
        }
        chunks_ = (7 + k + 63) / 64;  // the most repeats a row spans (from a lane offset up to 7)
        pipe_.InitBuffer(sumBuf_, sums_ * sizeof(float));
        pipe_.InitBuffer(partBuf_, (chunks_ > 1 ? chunks_ - 1 : 1) * sums_ * sizeof(float));
        const uint32_t blocks = sums_ * 8;  // the Brcb'd sums; grad * src before them
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
        const DataCopyExtParams params{1, static_cast<uint32_t>(n * k_ * sizeof(T)), 0, 0, 0};
        const DataCopyPadExtParams<T> pad{false, 0, 0, static_cast<T>(0.0f)};
        LocalTensor<T> grad = gradQ_.template AllocTensor<T>();
        DataCopyPad(grad, gradGm_[static_cast<uint64_t>(row0) * k_], params, pad);
        gradQ_.EnQue<TPosition::GM, TPosition::VECIN>(grad);
        LocalTensor<T> src = srcQ_.template AllocTensor<T>();
        DataCopyPad(src, srcGm_[static_cast<uint64_t>(row0) * k_], params, pad);
        srcQ_.EnQue(src);
    }
    __aicore__ inline void Compute(uint32_t n)
    {
        LocalTensor<float> sums = sumBuf_.template Get<float>();
        LocalTensor<float> brcb = brcbBuf_.template Get<float>();
        LocalTensor<float> parts = partBuf_.template Get<float>();
        LocalTensor<T> gradIn = gradQ_.template DeQue<TPosition::GM, TPosition::VECIN, T>();
        LocalTensor<T> srcIn = srcQ_.template DeQue<T>();
        const uint32_t lanes = n * k_;
        LocalTensor<float> grad, src;
        if constexpr (CAST) {
            grad = gradBuf_.template Get<float>();
            src = srcBuf_.template Get<float>();
            Cast(grad, gradIn, RoundMode::CAST_NONE, lanes);
            Cast(src, srcIn, RoundMode::CAST_NONE, lanes);
            PipeBarrier<PIPE_V>();
        } else {
            grad = gradIn;
            src = srcIn;
        }
        Mul(brcb, grad, src, lanes);  // grad * src, in the Brcb buffer until the sums are taken
        if (chunks_ > 1) {  // a class whose rows take fewer repeats adds zeros
            Duplicate(parts, 0.0f, (chunks_ - 1) * sums_);
        }
        PipeBarrier<PIPE_V>();
        for (uint32_t r = 0; r < classes_ && r < n; ++r) {
            for (uint32_t q = 0; q < Chunks(r); ++q) {  // q: the repeat of a row, from its first block
                uint64_t mask[2] = {ChunkMask(r, q), 0};
                LocalTensor<float> into = q == 0 ? sums : parts[(q - 1) * sums_];
                for (uint32_t j = 0; j < Count(r, n); j += MAX_REPEATS) {  // j: the class's row, 255 a call
                    // the sum of row r + j * c into its place in row order: dstRepStride c
                    WholeReduceSum(into[r + j * classes_], brcb[Block(r, q, j) * 8], mask, Repeats(r, n, j),
                                   classes_, 1, classStride_);
                }
            }
        }
        for (uint32_t q = 1; q < chunks_; ++q) {
            PipeBarrier<PIPE_V>();
            Add(sums, sums, parts[(q - 1) * sums_], n);
        }
        PipeBarrier<PIPE_V>();
        for (uint32_t i = 0; i < (n + 7) / 8; i += MAX_REPEATS) {  // 8 sums a repeat: row i's fills block i
            const uint32_t rest = (n + 7) / 8 - i;
            Brcb(brcb[i * 64], sums[i * 8], static_cast<uint8_t>(rest < MAX_REPEATS ? rest : MAX_REPEATS), {1, 8});
        }
        PipeBarrier<PIPE_V>();
        const uint8_t stride = static_cast<uint8_t>(classStride_);
        for (uint32_t r = 0; r < classes_ && r < n; ++r) {
            for (uint32_t q = 0; q < Chunks(r); ++q) {
                uint64_t mask[2] = {ChunkMask(r, q), 0};
                for (uint32_t j = 0; j < Count(r, n); j += MAX_REPEATS) {
                    const uint32_t at = Block(r, q, j) * 8;
                    Sub(grad[at], grad[at], brcb[(r + j * classes_) * 8], mask, Repeats(r, n, j),
                        {1, 1, 0, stride, stride, static_cast<uint8_t>(classes_)});
                }
            }
        }
        PipeBarrier<PIPE_V>();
        Mul(grad, grad, src, lanes);
        if constexpr (CAST) {
            PipeBarrier<PIPE_V>();
            Cast(gradIn, grad, RoundMode::CAST_RINT, lanes);
        }
        gradQ_.template EnQue<TPosition::VECOUT, TPosition::GM>(gradIn);
        srcQ_.FreeTensor(srcIn);
    }
    __aicore__ inline void CopyOut(uint32_t row0, uint32_t n)
    {
        LocalTensor<T> out = gradQ_.template DeQue<TPosition::VECOUT, TPosition::GM, T>();
        const DataCopyExtParams params{1, static_cast<uint32_t>(n * k_ * sizeof(T)), 0, 0, 0};
        DataCopyPad(outGm_[static_cast<uint64_t>(row0) * k_], out, params);
        gradQ_.FreeTensor(out);
    }
    // The first block of repeat q of the class's row j (of class r).
    __aicore__ inline uint32_t Block(uint32_t r, uint32_t q, uint32_t j) const
    {
        return k_ * r / 8 + 8 * q + j * classStride_;
    }
    // The repeats a row of class r spans from its block start: its lane offset (k * r) % 8 plus k lanes.
    __aicore__ inline uint32_t Chunks(uint32_t r) const { return (k_ * r % 8 + k_ + 63) / 64; }
    // The row's lanes in its repeat q: lanes [offset, offset + k) of its first block's, cut to [64q, 64q + 64).
    __aicore__ inline uint64_t ChunkMask(uint32_t r, uint32_t q) const
    {
        const uint32_t first = k_ * r % 8, lo = first > 64 * q ? first : 64 * q;
        const uint32_t hi = first + k_ < 64 * q + 64 ? first + k_ : 64 * q + 64;
        const uint64_t lanes = hi - lo == 64 ? ~0ull : (1ull << (hi - lo)) - 1;
        return lanes << (lo - 64 * q);
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
    TBuf<TPosition::VECCALC> gradBuf_, srcBuf_, sumBuf_, partBuf_, brcbBuf_;
    GlobalTensor<T> gradGm_, srcGm_, outGm_;
    uint32_t start_ = 0, end_ = 0, k_ = 0, rows_ = 0, classes_ = 1, classStride_ = 1, sums_ = 8, chunks_ = 1;
};

extern "C" __global__ __aicore__ void softmax_grad_packed_f16(GM_ADDR grad, GM_ADDR src, GM_ADDR out, uint32_t k,
                                                              uint32_t rowsPerTile, uint32_t perCore,
                                                              uint32_t bigCores)
{
    PackedRows<half> op;
    op.Init(grad, src, out, k, rowsPerTile, perCore, bigCores);
    op.Process();
}

extern "C" __global__ __aicore__ void softmax_grad_packed_f32(GM_ADDR grad, GM_ADDR src, GM_ADDR out, uint32_t k,
                                                              uint32_t rowsPerTile, uint32_t perCore,
                                                              uint32_t bigCores)
{
    PackedRows<float> op;
    op.Init(grad, src, out, k, rowsPerTile, perCore, bigCores);
    op.Process();
}
