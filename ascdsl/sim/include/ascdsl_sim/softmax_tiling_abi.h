// C entry points into the SoftmaxGrad host tiling functions, for ascdsl.softmax_tiling (ctypes).
#ifndef ASCDSL_SIM_ASCDSL_SIM_SOFTMAX_TILING_ABI_H
#define ASCDSL_SIM_ASCDSL_SIM_SOFTMAX_TILING_ABI_H
#include <cstdint>
#include <vector>

#include "../lib/activation/softmax_tiling.h"

// GetSoftMaxGradMaxTmpSize (max) or GetSoftMaxGradMinTmpSize of the shape dims[0..ndim).
extern "C" uint32_t ascdsl_softmax_grad_tmp_size(const int64_t* dims, uint32_t ndim, uint32_t type_size, bool front,
                                                 bool max) {
    const ge::Shape shape(std::vector<int64_t>(dims, dims + ndim));
    return max ? AscendC::GetSoftMaxGradMaxTmpSize(shape, type_size, front, false)
               : AscendC::GetSoftMaxGradMinTmpSize(shape, type_size, front, false);
}

// SoftMaxGradTilingFunc of the shape dims[0..ndim) into words[0..16) (the kernel-side SoftMaxTiling).
extern "C" void ascdsl_softmax_grad_tiling(const int64_t* dims, uint32_t ndim, uint32_t type_size, uint32_t work,
                                           bool front, uint32_t* words) {
    optiling::SoftMaxTiling tiling;
    AscendC::SoftMaxGradTilingFunc(ge::Shape(std::vector<int64_t>(dims, dims + ndim)), type_size, work, tiling, front);
    tiling.SaveToBuffer(words, 16 * sizeof(uint32_t));
}

#endif  // ASCDSL_SIM_ASCDSL_SIM_SOFTMAX_TILING_ABI_H
