// High-level Xor of CANN 8.1 (int16_t/uint16_t; the basic API has no Xor): dst = src0 ^ src1 bitwise,
// built from And/Or/Not passes through one temporary slice: sharedTmpBuffer (or the free UB) of at least 256 B.
#ifndef ASCDSL_SIM_LIB_MATH_XOR_H
#define ASCDSL_SIM_LIB_MATH_XOR_H
#include "elementwise_math.h"

namespace ascdsl_sim {

template <class T>
void xor_op(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src0, const AscendC::LocalTensor<T>& src1,
            const AscendC::LocalTensor<uint8_t>* tmp, uint32_t count) {
    const char* api = "Xor";
    static_assert(is_one_of_v<T, int16_t, uint16_t>, "ascdsl sim: Xor supports int16_t and uint16_t");
    const uint32_t time = begin_op(api);
    Operand a = contiguous("src0Tensor", src0, count), b = contiguous("src1Tensor", src1, count);
    Operand d = contiguous("dstTensor", dst, count);
    for (const Operand* o : {&a, &b}) {
        check_operand(api, *o);
        check_overlap(api, d, *o);
        read_operand(api, Pipe::V, *o);
    }
    check_operand(api, d);
    check_math_tmp<T>(api, time, tmp, 256, d, a);
    if (tmp) check_overlap(api, contiguous("sharedTmpBuffer", *tmp, 256), b, false);
    for (uint32_t i = 0; i < count; ++i) dst.ptr()[i] = static_cast<T>(src0.ptr()[i] ^ src1.ptr()[i]);
    write_operand(api, Pipe::V, time, d);
    count_vector(api, count, ceil_div(uint64_t(count) * sizeof(T), 256), sizeof(T));
}

}  // namespace ascdsl_sim

namespace AscendC {
template <typename T, bool isReuseSource = false>
inline void Xor(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const LocalTensor<T>& src1Tensor,
                const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount) {
    ascdsl_sim::xor_op(dstTensor, src0Tensor, src1Tensor, &sharedTmpBuffer, calCount);
}
template <typename T, bool isReuseSource = false>
inline void Xor(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const LocalTensor<T>& src1Tensor,
                const LocalTensor<uint8_t>& sharedTmpBuffer) {
    ascdsl_sim::xor_op(dstTensor, src0Tensor, src1Tensor, &sharedTmpBuffer, src0Tensor.GetSize());
}
template <typename T, bool isReuseSource = false>
inline void Xor(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const LocalTensor<T>& src1Tensor,
                const uint32_t calCount) {
    ascdsl_sim::xor_op(dstTensor, src0Tensor, src1Tensor, nullptr, calCount);
}
}  // namespace AscendC

#endif  // ASCDSL_SIM_LIB_MATH_XOR_H
