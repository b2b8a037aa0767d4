// The temporary buffer of the high-level SoftmaxGrad per row, shared by its host tiling and the kernel-side check.
#ifndef ASCDSL_SIM_ASCDSL_SIM_SOFTMAX_GRAD_ROWS_H
#define ASCDSL_SIM_ASCDSL_SIM_SOFTMAX_GRAD_ROWS_H
#include <cstdint>

namespace ascdsl_sim {
// Float words one row of k elements needs, E = 32 / type_size (A2/A3 and 310P): half 2E + 3K + 64, float
// isFront ? E + K + 64 : 2E + K + 64; 0 for a dtype the API lacks.
inline uint32_t softmax_grad_row_words(uint32_t k, uint32_t type_size, bool front) {
    if (type_size != 2 && type_size != 4) return 0;
    const uint32_t e = 32 / type_size;
    if (type_size == 2) return 2 * e + 3 * k + 64;
    return (front ? e : 2 * e) + k + 64;
}
}  // namespace ascdsl_sim

#endif  // ASCDSL_SIM_ASCDSL_SIM_SOFTMAX_GRAD_ROWS_H
