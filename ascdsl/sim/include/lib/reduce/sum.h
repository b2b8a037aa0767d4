// High-level Sum (reference §2.17): dst[i] = pairwise-tree sum of src[i*inner : i*inner + n], i < outter.
#ifndef ASCDSL_SIM_LIB_REDUCE_SUM_H
#define ASCDSL_SIM_LIB_REDUCE_SUM_H
#include "../../ascdsl_sim/reduce.h"

namespace AscendC {
struct SumParams {
    uint32_t outter = 1;
    uint32_t inner;  // n rounded up to 32 bytes, in elements
    uint32_t n;
};
}  // namespace AscendC

namespace ascdsl_sim {

template <class T>
void sum_rows(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
              const AscendC::LocalTensor<uint8_t>* tmp, const AscendC::SumParams& p) {
    const char* api = "Sum";
    static_assert(is_one_of_v<T, half, float>, "ascdsl sim: Sum supports half and float");
    const uint64_t inner = ceil_div(uint64_t(p.n) * sizeof(T), 32) * 32 / sizeof(T);
    require(p.inner == inner, api, "SumParams.inner is ", p.inner, ", expected ", inner, " (n = ", p.n,
            " rounded up to 32 bytes)");
    const uint32_t time = begin_op(api);
    Operand s = contiguous("srcTensor", src, uint64_t(p.outter) * p.inner);
    Operand d = contiguous("dstTensor", dst, p.outter);
    check_operand(api, s);
    check_operand(api, d);
    check_overlap(api, d, s, false);
    read_operand(api, Pipe::V, s);
    if (tmp) {
        Operand w = contiguous("sharedTmpBuffer", *tmp, tmp->GetSize());
        check_operand(api, w);
        check_overlap(api, w, s, false);
        check_overlap(api, w, d, false);
        write_operand(api, Pipe::V, time, w);
    }
    for (uint32_t i = 0; i < p.outter; ++i) {
        const T* row = src.ptr() + uint64_t(i) * p.inner;
        dst.ptr()[i] = static_cast<T>(tree_sum<T>(std::vector<wide_t<T>>(row, row + p.n)));
    }
    write_operand(api, Pipe::V, time, d);
    count_vector(api, uint64_t(p.outter) * p.n, ceil_div(uint64_t(p.outter) * p.inner * sizeof(T), 256), sizeof(T));
}

}  // namespace ascdsl_sim

namespace AscendC {
template <typename T, int32_t reduceDim = -1, bool isReuseSource = false, bool isBasicBlock = false>
inline void Sum(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                const LocalTensor<uint8_t>& sharedTmpBuffer, const SumParams& sumParams) {
    ascdsl_sim::sum_rows(dstTensor, srcTensor, &sharedTmpBuffer, sumParams);
}
template <typename T, int32_t reduceDim = -1, bool isReuseSource = false, bool isBasicBlock = false>
inline void Sum(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const SumParams& sumParams) {
    ascdsl_sim::sum_rows<T>(dstTensor, srcTensor, nullptr, sumParams);
}
}  // namespace AscendC

#endif  // ASCDSL_SIM_LIB_REDUCE_SUM_H
