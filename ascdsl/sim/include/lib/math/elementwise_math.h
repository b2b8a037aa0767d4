// High-level element-wise math of CANN 8.1 (lib/math): Tanh, Erf, Erfc, Sin, Cos, Tan, Sinh, Cosh, Asin, Acos, Atan,
// Asinh, Acosh, Atanh, Log, Log2, Log10, each with and without sharedTmpBuffer. Results are the double-precision function rounded to float, then to T (the
// numerics of ascdsl/numerics.py; the device's polynomial approximations differ within the dtype tolerance).
//
// Temporary space: the implementation splits sharedTmpBuffer into `live` slices, so it needs at least
// live x 256 B (GetXxxMaxMinTmpSize's minimum), and runs one round per slice-full of the input (a buffer of
// live x count x sizeof(T) B, GetXxxMaxMinTmpSize's maximum, runs one); without sharedTmpBuffer it takes
// the UB that InitBuffer left free. live per API (half / float): Tanh 2 / 1, Erf 8 / 3, Erfc 12 / 5, Sin and Cos 4 / 3 (2 with isReuseSource),
// Tan 10 / 4, Sinh 4 / 1, Cosh 6 / 2, Asin and Acos 6 / 4, Atan 6 / 5, Asinh 3 / 3, Acosh 2 / 1, Atanh 4 / 1,
// Log2 1 / 0; Log and Log10 need none.
#ifndef ASCDSL_SIM_LIB_MATH_ELEMENTWISE_MATH_H
#define ASCDSL_SIM_LIB_MATH_ELEMENTWISE_MATH_H
#include <cmath>

#include "../../ascdsl_sim/vector.h"

namespace ascdsl_sim {

// The sharedTmpBuffer (or the free UB standing in for it) must hold `need` bytes and not overlap dst/src;
// returns its bytes.
template <class T>
uint64_t check_math_tmp(const char* api, uint32_t time, const AscendC::LocalTensor<uint8_t>* tmp, uint64_t need,
                        const Operand& d, const Operand& s) {
    if (need == 0) return 0;
    const uint64_t have = tmp ? uint64_t(tmp->GetSize()) : st().ub_bytes - st().ub_used;
    require(have >= need, api, "temporary buffer of ", have, " B is below the minimum ", need, " B for ", type_name<T>(),
            " (", tmp ? "sharedTmpBuffer" : "free UB after InitBuffer", ")");
    if (!tmp) return have;
    Operand w = contiguous("sharedTmpBuffer", *tmp, need);
    check_operand(api, w);
    check_overlap(api, w, d, false);
    check_overlap(api, w, s, false);
    write_operand(api, Pipe::V, time, w);
    return have;
}

// The rounds CANN 8.1's math APIs run (impl/math/*/..._common_impl.h): each covers
// calSize = bytes / sizeof(T) / live / 32 * 32 elements, the last the tail.
template <class T>
uint64_t math_rounds(uint64_t count, uint64_t bytes, uint32_t live) {
    if (live == 0 || count == 0) return 1;
    const uint64_t cal = bytes / sizeof(T) / live / 32 * 32;
    return (count + cal - 1) / cal;
}

template <class T, class F>
void unary_math(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                const AscendC::LocalTensor<uint8_t>* tmp, uint32_t count, uint32_t live, F f) {
    static_assert(is_one_of_v<T, half, float>, "ascdsl sim: high-level math APIs support half and float");
    const uint32_t time = begin_op(api);
    Operand s = contiguous("srcTensor", src, count), d = contiguous("dstTensor", dst, count);
    check_operand(api, s);
    check_operand(api, d);
    check_overlap(api, d, s);
    read_operand(api, Pipe::V, s);
    const uint64_t rounds = math_rounds<T>(count, check_math_tmp<T>(api, time, tmp, uint64_t(live) * 256, d, s), live);
    for (uint32_t i = 0; i < count; ++i)
        dst.ptr()[i] = static_cast<T>(static_cast<float>(f(static_cast<double>(static_cast<float>(src.ptr()[i])))));
    write_operand(api, Pipe::V, time, d);
    count_vector(api, count, ceil_div(uint64_t(count) * sizeof(T), 256), sizeof(T), rounds);
}

}  // namespace ascdsl_sim

// NAME(dst, src[, sharedTmpBuffer][, calCount]) with `live` temporaries for half and for float.
#define ASCDSL_SIM_MATH_API(NAME, FN, LIVE_HALF, LIVE_FLOAT)                                                       \
    namespace AscendC {                                                                                            \
    template <typename T, bool isReuseSource = false>                                                              \
    inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                             \
                     const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount) {                      \
        ascdsl_sim::unary_math(#NAME, dstTensor, srcTensor, &sharedTmpBuffer, calCount,                            \
                               ascdsl_sim::is_half_v<T> ? LIVE_HALF : LIVE_FLOAT, [](double x) { return FN; });    \
    }                                                                                                              \
    template <typename T, bool isReuseSource = false>                                                              \
    inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                             \
                     const LocalTensor<uint8_t>& sharedTmpBuffer) {                                                \
        NAME<T, isReuseSource>(dstTensor, srcTensor, sharedTmpBuffer, srcTensor.GetSize());                        \
    }                                                                                                              \
    template <typename T, bool isReuseSource = false>                                                              \
    inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount) {  \
        ascdsl_sim::unary_math(#NAME, dstTensor, srcTensor, nullptr, calCount,                                     \
                               ascdsl_sim::is_half_v<T> ? LIVE_HALF : LIVE_FLOAT, [](double x) { return FN; });    \
    }                                                                                                              \
    template <typename T, bool isReuseSource = false>                                                              \
    inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor) {                           \
        NAME<T, isReuseSource>(dstTensor, srcTensor, srcTensor.GetSize());                                         \
    }                                                                                                              \
    }

ASCDSL_SIM_MATH_API(Tanh, std::tanh(x), 2, 1)
ASCDSL_SIM_MATH_API(Erf, std::erf(x), 8, 3)
ASCDSL_SIM_MATH_API(Erfc, std::erfc(x), 12, 5)
ASCDSL_SIM_MATH_API(Sin, std::sin(x), 4, (isReuseSource ? 2 : 3))
ASCDSL_SIM_MATH_API(Cos, std::cos(x), 4, (isReuseSource ? 2 : 3))
ASCDSL_SIM_MATH_API(Log2, std::log2(x), 1, 0)
ASCDSL_SIM_MATH_API(Tan, std::tan(x), 10, 4)
ASCDSL_SIM_MATH_API(Sinh, std::sinh(x), 4, 1)
ASCDSL_SIM_MATH_API(Cosh, std::cosh(x), 6, 2)
ASCDSL_SIM_MATH_API(Asin, std::asin(x), 6, 4)
ASCDSL_SIM_MATH_API(Acos, std::acos(x), 6, 4)
ASCDSL_SIM_MATH_API(Atan, std::atan(x), 6, 5)
ASCDSL_SIM_MATH_API(Asinh, std::asinh(x), 3, 3)
ASCDSL_SIM_MATH_API(Acosh, std::acosh(x), 2, 1)
ASCDSL_SIM_MATH_API(Atanh, std::atanh(x), 4, 1)

// Log and Log10 have no sharedTmpBuffer overloads.
namespace AscendC {
template <typename T, bool isReuseSource = false>
inline void Log(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, uint32_t calCount) {
    ascdsl_sim::unary_math("Log", dstTensor, srcTensor, nullptr, calCount, 0, [](double x) { return std::log(x); });
}
template <typename T, bool isReuseSource = false>
inline void Log(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor) {
    Log<T, isReuseSource>(dstTensor, srcTensor, srcTensor.GetSize());
}
template <typename T, bool isReuseSource = false>
inline void Log10(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, uint32_t calCount) {
    ascdsl_sim::unary_math("Log10", dstTensor, srcTensor, nullptr, calCount, 0, [](double x) { return std::log10(x); });
}
template <typename T, bool isReuseSource = false>
inline void Log10(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor) {
    Log10<T, isReuseSource>(dstTensor, srcTensor, srcTensor.GetSize());
}
}  // namespace AscendC

#endif  // ASCDSL_SIM_LIB_MATH_ELEMENTWISE_MATH_H
