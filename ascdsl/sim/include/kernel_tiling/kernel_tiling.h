// Kernel-side tiling structs of the high-level APIs (CANN: highlevel_api/kernel_tiling/kernel_tiling.h).
#ifndef ASCDSL_SIM_KERNEL_TILING_KERNEL_TILING_H
#define ASCDSL_SIM_KERNEL_TILING_KERNEL_TILING_H
#include <cstdint>

#pragma pack(push, 8)
struct SoftMaxTiling {
    uint32_t srcM = 0, srcK = 0, srcSize = 0;
    uint32_t outMaxM = 0, outMaxK = 0, outMaxSize = 0;
    uint32_t splitM = 0, splitK = 0, splitSize = 0;
    uint32_t reduceM = 0, reduceK = 0, reduceSize = 0;
    uint32_t rangeM = 0, tailM = 0, tailSplitSize = 0, tailReduceSize = 0;
};
#pragma pack(pop)

namespace AscendC {
using ::SoftMaxTiling;
}

#endif  // ASCDSL_SIM_KERNEL_TILING_KERNEL_TILING_H
