// High-level SoftmaxGrad / SoftmaxGradFront (reference §2.17):
//   dst = (grad - rowsum(grad * src)) * src, or with isFront only rowsum broadcast to one 32-byte block per row.
// Rows are processed exactly as the tiling splits them: rangeM chunks of splitM rows, then tailM rows.
// Half inputs are computed in float and the results rounded to half as the v220/v200 implementations do.
#ifndef ASCDSL_SIM_LIB_ACTIVATION_SOFTMAXGRAD_H
#define ASCDSL_SIM_LIB_ACTIVATION_SOFTMAXGRAD_H
#include "../../ascdsl_sim/reduce.h"
#include "../../ascdsl_sim/softmax_grad_rows.h"
#include "../../kernel_tiling/kernel_tiling.h"

namespace AscendC {
struct SoftMaxShapeInfo {
    SoftMaxShapeInfo() = default;
    SoftMaxShapeInfo(uint32_t m, uint32_t k, uint32_t oriM, uint32_t oriK) : srcM(m), srcK(k), oriSrcM(oriM), oriSrcK(oriK) {}
    uint32_t srcM = 0, srcK = 0, oriSrcM = 0, oriSrcK = 0;
};
}  // namespace AscendC

namespace ascdsl_sim {

// How CANN's implementation casts its float results to half (FLOAT2HALF_ROUND_MODE): CAST_ROUND (ties away
// from zero) on v220 (A2/A3: membase/v220/softmax_common_impl.h), CAST_NONE (to nearest even) on v200 (310P).
inline Rounding softmax_float_to_half_rounding() {
    return st().platform.rfind("Ascend310P", 0) == 0 ? Rounding::Rint : Rounding::Round;
}

inline void check_softmax_tiling(const char* api, const SoftMaxTiling& t, uint32_t m, uint32_t k, uint32_t e) {
    auto field = [&](const char* name, uint64_t got, uint64_t want) {
        require(got == want, api, "tiling is inconsistent with the shape [", m, ", ", k, "]: ", name, " is ", got,
                ", expected ", want);
    };
    field("srcM", t.srcM, m);
    field("srcK", t.srcK, k);
    field("srcSize", t.srcSize, uint64_t(m) * k);
    field("splitK", t.splitK, k);
    require(t.splitM > 0 || m == 0, api, "tiling splitM is 0");
    field("splitM * rangeM + tailM", uint64_t(t.splitM) * t.rangeM + t.tailM, m);
    field("splitSize", t.splitSize, uint64_t(t.splitM) * k);
    field("tailSplitSize", t.tailSplitSize, uint64_t(t.tailM) * k);
    field("reduceM", t.reduceM, t.splitM);
    field("reduceK", t.reduceK, e);
    field("reduceSize", t.reduceSize, uint64_t(t.splitM) * e);
    field("tailReduceSize", t.tailReduceSize, uint64_t(t.tailM) * e);
}

template <class T, bool NZ>
void softmax_grad(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& grad,
                  const AscendC::LocalTensor<T>& src, const AscendC::LocalTensor<uint8_t>* tmp,
                  const SoftMaxTiling& t, bool front, const AscendC::SoftMaxShapeInfo& info) {
    static_assert(is_one_of_v<T, half, float>, "ascdsl sim: SoftmaxGrad supports half and float");
    const uint32_t m = info.srcM ? info.srcM : t.srcM, k = info.srcK ? info.srcK : t.srcK, e = 32 / sizeof(T);
    require(uint64_t(k) * sizeof(T) % 32 == 0, api, "srcK ", k, " x ", sizeof(T), " B is not 32-byte aligned");
    require(info.oriSrcM <= m && info.oriSrcK <= k, api, "oriSrcM/oriSrcK (", info.oriSrcM, ", ", info.oriSrcK,
            ") exceed srcM/srcK (", m, ", ", k, ")");
    require(!(NZ && front), api, "isFront with the NZ format is not modelled by the simulator");
    check_softmax_tiling(api, t, m, k, e);
    const uint64_t need = 4 * uint64_t(t.splitM) * softmax_grad_row_words(k, sizeof(T), front);
    const uint64_t have = tmp ? uint64_t(tmp->GetSize()) : st().ub_bytes - st().ub_used;
    require(have >= need, api, "temporary buffer of ", have, " B is below the minimum ", need, " B for splitM=",
            t.splitM, " (", tmp ? "sharedTmpBuffer" : "free UB after InitBuffer", ")");
    const uint32_t time = begin_op(api);
    Operand g = contiguous("gradTensor", grad, uint64_t(m) * k), s = contiguous("srcTensor", src, uint64_t(m) * k);
    Operand d = contiguous("dstTensor", dst, uint64_t(m) * (front ? e : k));
    for (Operand* o : {&g, &s}) {
        check_operand(api, *o);
        read_operand(api, Pipe::V, *o);
    }
    check_operand(api, d);
    if (tmp) {
        Operand w = contiguous("sharedTmpBuffer", *tmp, need);
        check_operand(api, w);
        for (const Operand* o : {&g, &s, &d}) check_overlap(api, w, *o, false);
        write_operand(api, Pipe::V, time, w);
    }
    auto at = [m](uint32_t row, uint32_t col, uint32_t width) -> uint64_t {
        if constexpr (NZ) return uint64_t(col / 16) * m * 16 + row * 16 + col % 16;
        return uint64_t(row) * width + col;
    };
    const T* gp = grad.ptr();
    const T* sp = src.ptr();
    T* dp = dst.ptr();
    std::vector<float> out(d.idx.size());
    auto rows = [&](uint32_t first, uint32_t count) {
        for (uint32_t r = first; r < first + count; ++r) {
            std::vector<float> prod(k);
            for (uint32_t c = 0; c < k; ++c) prod[c] = float(gp[at(r, c, k)]) * float(sp[at(r, c, k)]);
            const float sum = tree_sum<float>(prod);
            for (uint32_t c = 0; c < (front ? e : k); ++c)
                out[at(r, c, front ? e : k)] = front ? sum : (float(gp[at(r, c, k)]) - sum) * float(sp[at(r, c, k)]);
        }
    };
    for (uint32_t i = 0; i < t.rangeM; ++i) rows(i * t.splitM, t.splitM);
    rows(t.rangeM * t.splitM, t.tailM);
    const Rounding r = softmax_float_to_half_rounding();
    for (size_t i = 0; i < out.size(); ++i) {
        if constexpr (is_half_v<T>) dp[i] = half::from_bits(encode_half(round_to_format(out[i], kHalfFormat, r)));
        else dp[i] = out[i];
    }
    write_operand(api, Pipe::V, time, d);
    count_vector(api, uint64_t(m) * k, ceil_div(uint64_t(m) * k * sizeof(T), 256), sizeof(T));
}

}  // namespace ascdsl_sim

namespace AscendC {

template <typename T, bool isReuseSource = false, bool isDataFormatNZ = false>
inline void SoftmaxGrad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& gradTensor,
                        const LocalTensor<T>& srcTensor, const SoftMaxTiling& tiling, bool isFront = false,
                        const SoftMaxShapeInfo& softmaxShapeInfo = {}) {
    ascdsl_sim::softmax_grad<T, isDataFormatNZ>("SoftmaxGrad", dstTensor, gradTensor, srcTensor, nullptr, tiling,
                                                isFront, softmaxShapeInfo);
}
template <typename T, bool isReuseSource = false, bool isDataFormatNZ = false>
inline void SoftmaxGrad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& gradTensor,
                        const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                        const SoftMaxTiling& tiling, bool isFront = false, const SoftMaxShapeInfo& softmaxShapeInfo = {}) {
    ascdsl_sim::softmax_grad<T, isDataFormatNZ>("SoftmaxGrad", dstTensor, gradTensor, srcTensor, &sharedTmpBuffer,
                                                tiling, isFront, softmaxShapeInfo);
}
template <typename T, bool isBasicBlock = false, bool isDataFormatNZ = false>
inline void SoftmaxGradFront(const LocalTensor<T>& dstTensor, const LocalTensor<T>& gradTensor,
                             const LocalTensor<T>& srcTensor, const SoftMaxTiling& tiling,
                             const SoftMaxShapeInfo& softmaxShapeInfo = {}) {
    ascdsl_sim::softmax_grad<T, isDataFormatNZ>("SoftmaxGradFront", dstTensor, gradTensor, srcTensor, nullptr, tiling,
                                                true, softmaxShapeInfo);
}
template <typename T, bool isBasicBlock = false, bool isDataFormatNZ = false>
inline void SoftmaxGradFront(const LocalTensor<T>& dstTensor, const LocalTensor<T>& gradTensor,
                             const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                             const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}) {
    ascdsl_sim::softmax_grad<T, isDataFormatNZ>("SoftmaxGradFront", dstTensor, gradTensor, srcTensor,
                                                &sharedTmpBuffer, tiling, true, softmaxShapeInfo);
}

}  // namespace AscendC

#endif  // ASCDSL_SIM_LIB_ACTIVATION_SOFTMAXGRAD_H
