// High-level CumSum of CANN 8.1 over an [outter, inner] tensor (inner 32-byte aligned): along the last axis
// (each row's prefix sums, config.isLastAxis) or the first axis (down each column); config.outputLastRow
// also copies the last result row to lastRowTensor. Sums run in order in float and round once to T.
// sharedTmpBuffer minimum: last axis 16 x inner x sizeof(T) x 2 B (+ 16 x inner x 2 B for half);
// first axis outter x inner x 4 B for half, none for float. Without it, the free UB after InitBuffer.
#ifndef ASCDSL_SIM_LIB_MATH_CUMSUM_H
#define ASCDSL_SIM_LIB_MATH_CUMSUM_H
#include "elementwise_math.h"

namespace AscendC {
struct CumSumConfig {
    bool isLastAxis{true};
    bool isReuseSource{false};
    bool outputLastRow{false};
};
struct CumSumInfo {
    uint32_t outter{0};
    uint32_t inner{0};  // 32-byte aligned
};
constexpr CumSumConfig defaultCumSumConfig = {true, false, true};
}  // namespace AscendC

namespace ascdsl_sim {

template <class T>
void cumsum(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& lastRow, const AscendC::LocalTensor<T>& src,
            const AscendC::LocalTensor<uint8_t>* tmp, const AscendC::CumSumInfo& info, const AscendC::CumSumConfig& config) {
    const char* api = "CumSum";
    static_assert(is_one_of_v<T, half, float>, "ascdsl sim: CumSum supports half and float");
    const uint64_t m = info.outter, k = info.inner;
    require(k > 0 && k * sizeof(T) % 32 == 0, api, "inner ", k, " x ", sizeof(T), " B is not a positive multiple of 32 bytes");
    const uint32_t time = begin_op(api);
    Operand s = contiguous("srcTensor", src, m * k), d = contiguous("dstTensor", dst, m * k);
    check_operand(api, s);
    check_operand(api, d);
    check_overlap(api, d, s);
    read_operand(api, Pipe::V, s);
    const uint64_t need = config.isLastAxis ? 16 * k * sizeof(T) * 2 + (is_half_v<T> ? 16 * k * 2 : 0)
                                            : (is_half_v<T> ? m * k * 4 : 0);
    check_math_tmp<T>(api, time, tmp, need, d, s);
    std::vector<float> acc(m * k);
    for (uint64_t r = 0; r < m; ++r)
        for (uint64_t c = 0; c < k; ++c) {
            const float x = static_cast<float>(src.ptr()[r * k + c]);
            const bool first = config.isLastAxis ? c == 0 : r == 0;
            acc[r * k + c] = first ? x : acc[config.isLastAxis ? r * k + c - 1 : (r - 1) * k + c] + x;
        }
    for (uint64_t i = 0; i < m * k; ++i) dst.ptr()[i] = static_cast<T>(acc[i]);
    write_operand(api, Pipe::V, time, d);
    if (config.outputLastRow && m > 0) {
        Operand l = contiguous("lastRowTensor", lastRow, k);
        check_operand(api, l);
        check_overlap(api, l, d, false);
        std::copy(dst.ptr() + (m - 1) * k, dst.ptr() + m * k, lastRow.ptr());
        write_operand(api, Pipe::V, time, l);
    }
    count_vector(api, m * k, ceil_div(m * k * sizeof(T), 256), sizeof(T));
}

}  // namespace ascdsl_sim

namespace AscendC {
template <typename T, const CumSumConfig& config = defaultCumSumConfig>
inline void CumSum(LocalTensor<T>& dstTensor, LocalTensor<T>& lastRowTensor, const LocalTensor<T>& srcTensor,
                   LocalTensor<uint8_t>& sharedTmpBuffer, const CumSumInfo& cumSumInfo) {
    ascdsl_sim::cumsum(dstTensor, lastRowTensor, srcTensor, &sharedTmpBuffer, cumSumInfo, config);
}
template <typename T, const CumSumConfig& config = defaultCumSumConfig>
inline void CumSum(LocalTensor<T>& dstTensor, LocalTensor<T>& lastRowTensor, const LocalTensor<T>& srcTensor,
                   const CumSumInfo& cumSumInfo) {
    ascdsl_sim::cumsum(dstTensor, lastRowTensor, srcTensor, nullptr, cumSumInfo, config);
}
}  // namespace AscendC

#endif  // ASCDSL_SIM_LIB_MATH_CUMSUM_H
