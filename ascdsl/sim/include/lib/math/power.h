// High-level Power of CANN 8.1: dst = base ** exponent with a tensor or a scalar on either side (half and
// float here; the device also has int32_t, not modelled). The value is pow in double rounded to float,
// then to T. Temporary space (A2): 256 B plus `live` float slices of at least 256 B each, live = 4 / 5
// (tensor-tensor / with a scalar) for float and 7 for half; without sharedTmpBuffer, the free UB.
#ifndef ASCDSL_SIM_LIB_MATH_POWER_H
#define ASCDSL_SIM_LIB_MATH_POWER_H
#include "elementwise_math.h"

namespace ascdsl_sim {

// One side of Power: a tensor operand or a scalar.
template <class T>
struct PowSide {
    const AscendC::LocalTensor<T>* tensor;
    T scalar;
    float at(uint32_t i) const { return static_cast<float>(tensor ? tensor->ptr()[i] : scalar); }
};

template <class T>
void power(const AscendC::LocalTensor<T>& dst, PowSide<T> base, PowSide<T> exponent,
           const AscendC::LocalTensor<uint8_t>* tmp, uint32_t count) {
    const char* api = "Power";
    static_assert(is_one_of_v<T, half, float>, "ascdsl sim: Power is modelled for half and float (not int32_t)");
    const uint32_t time = begin_op(api);
    Operand d = contiguous("dstTensor", dst, count);
    check_operand(api, d);
    std::vector<Operand> srcs;
    for (const PowSide<T>* side : {&base, &exponent}) {
        if (!side->tensor) continue;
        srcs.push_back(contiguous(side == &base ? "src0Tensor" : "src1Tensor", *side->tensor, count));
        check_operand(api, srcs.back());
        check_overlap(api, d, srcs.back());
        read_operand(api, Pipe::V, srcs.back());
    }
    const uint32_t live = is_half_v<T> ? 7 : (base.tensor && exponent.tensor ? 4 : 5);
    check_math_tmp<T>(api, time, tmp, 256 + uint64_t(live) * 256, d, srcs.front());
    for (uint32_t i = 0; i < count; ++i)
        dst.ptr()[i] = static_cast<T>(static_cast<float>(std::pow(double(base.at(i)), double(exponent.at(i)))));
    write_operand(api, Pipe::V, time, d);
    count_vector(api, count, ceil_div(uint64_t(count) * sizeof(T), 256), sizeof(T));
}

}  // namespace ascdsl_sim

// Power(dst, BASE, EXPONENT[, sharedTmpBuffer][, calCount]); SIZE is the count when calCount is omitted.
#define ASCDSL_SIM_POWER(BASE_PARAM, EXP_PARAM, BASE, EXP, SIZE)                                                   \
    template <typename T, bool isReuseSource = false>                                                             \
    inline void Power(const LocalTensor<T>& dstTensor, BASE_PARAM, EXP_PARAM,                                    \
                      const LocalTensor<uint8_t>& sharedTmpBuffer, uint32_t calCount) {                          \
        ascdsl_sim::power<T>(dstTensor, BASE, EXP, &sharedTmpBuffer, calCount);                                   \
    }                                                                                                             \
    template <typename T, bool isReuseSource = false>                                                             \
    inline void Power(const LocalTensor<T>& dstTensor, BASE_PARAM, EXP_PARAM, uint32_t calCount) {               \
        ascdsl_sim::power<T>(dstTensor, BASE, EXP, nullptr, calCount);                                            \
    }                                                                                                             \
    template <typename T, bool isReuseSource = false>                                                             \
    inline void Power(const LocalTensor<T>& dstTensor, BASE_PARAM, EXP_PARAM,                                    \
                      const LocalTensor<uint8_t>& sharedTmpBuffer) {                                             \
        ascdsl_sim::power<T>(dstTensor, BASE, EXP, &sharedTmpBuffer, SIZE);                                       \
    }                                                                                                             \
    template <typename T, bool isReuseSource = false>                                                             \
    inline void Power(const LocalTensor<T>& dstTensor, BASE_PARAM, EXP_PARAM) {                                  \
        ascdsl_sim::power<T>(dstTensor, BASE, EXP, nullptr, SIZE);                                                \
    }

namespace AscendC {
ASCDSL_SIM_POWER(const LocalTensor<T>& src0Tensor, const LocalTensor<T>& src1Tensor, (ascdsl_sim::PowSide<T>{&src0Tensor, T()}),
                 (ascdsl_sim::PowSide<T>{&src1Tensor, T()}), src0Tensor.GetSize())
ASCDSL_SIM_POWER(const LocalTensor<T>& src0Tensor, const T& src1Scalar, (ascdsl_sim::PowSide<T>{&src0Tensor, T()}),
                 (ascdsl_sim::PowSide<T>{nullptr, src1Scalar}), src0Tensor.GetSize())
ASCDSL_SIM_POWER(const T& src0Scalar, const LocalTensor<T>& src1Tensor, (ascdsl_sim::PowSide<T>{nullptr, src0Scalar}),
                 (ascdsl_sim::PowSide<T>{&src1Tensor, T()}), src1Tensor.GetSize())
}  // namespace AscendC

#endif  // ASCDSL_SIM_LIB_MATH_POWER_H
