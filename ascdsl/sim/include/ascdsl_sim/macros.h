// Kernel-entry and tiling macros of the CPU build (reference §2.1, §3.1, §3.2).
#ifndef ASCDSL_SIM_ASCDSL_SIM_MACROS_H
#define ASCDSL_SIM_ASCDSL_SIM_MACROS_H
#include <cstdio>

#include "runtime.h"

#define __aicore__
#define __global__
#define __gm__
#define __ubuf__
#define __inout_pipe__(p)
#define __sync_alias__
#define GM_ADDR uint8_t*

#define KERNEL_TYPE_AIV_ONLY 1
#define KERNEL_TYPE_AIC_ONLY 2
#define KERNEL_TYPE_MIX_AIV_1_0 3
#define KERNEL_TYPE_MIX_AIC_1_1 4
#define KERNEL_TYPE_MIX_AIC_1_2 5
#define KERNEL_TASK_TYPE_DEFAULT(type)
#define KERNEL_TASK_TYPE(key, type)

#define g_coreType (ascdsl_sim::st().core)
#define ASCEND_IS_AIV (g_coreType == AIV)
#define ASCEND_IS_AIC (g_coreType == AIC)

#define g_tilingKey (ascdsl_sim::st().tiling_key)
#define TILING_KEY_IS(k) (g_tilingKey == (k))

namespace ascdsl_sim {
// Copies a tiling struct out of the GM tiling buffer (bounds-checked like any GM read).
template <class T>
void load_tiling(T* out, const uint8_t* tiling) {
    gm_read("GET_TILING_DATA", tiling, sizeof(T));
    std::memcpy(static_cast<void*>(out), tiling, sizeof(T));
}
}  // namespace ascdsl_sim

#define GET_TILING_DATA_WITH_STRUCT(type, var, tiling) \
    type var;                                          \
    ascdsl_sim::load_tiling(&var, tiling)
// The struct comes from run_kernel(..., tiling_type="Name") (msopgen generates it per op on the device).
#define GET_TILING_DATA(var, tiling) GET_TILING_DATA_WITH_STRUCT(ASCDSL_TILING_TYPE, var, tiling)

#endif  // ASCDSL_SIM_ASCDSL_SIM_MACROS_H
