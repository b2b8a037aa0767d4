// Cross-core synchronisation of MIX kernels (CANN 8.1 basic_api/interface/kernel_operator_common_intf.h):
// CrossCoreSetFlag / CrossCoreWaitFlag, GetSubBlockIdx, GetTaskRation and GetUserWorkspace
// (ASCEND_IS_AIC / ASCEND_IS_AIV: macros.h).
// A block of a MIX kernel is one AIC and its two AIVs (A2: 1 AIC : 2 AIV), in mode 2 (the group's AIC-AIV
// mode; dav_c220's SyncAll uses it both ways). The simulator runs the cores of a block one after the other,
// in the order the launch gives (launch.h): the AIC then AIV 0 and AIV 1, consistent with flags that go from
// the AIC to its AIVs, or AIV 0 and AIV 1 then the AIC, consistent with flags from the AIVs to their AIC.
// A set by the AIC counts once for each AIV, and a wait on an AIV takes one of them; the AIC's wait takes
// one set of each of its AIVs (the group's flag counts both). A wait with none left would hang on the
// device (or waits on a core the simulator runs first): an error here. Modes 0 and 1 are refused.
#ifndef ASCDSL_SIM_ASCDSL_SIM_CROSS_CORE_H
#define ASCDSL_SIM_ASCDSL_SIM_CROSS_CORE_H
#include <algorithm>

#include "pipe.h"

namespace AscendC {

inline int64_t GetSubBlockIdx() { return ascdsl_sim::st().sub_block; }

// CANN 8.1 (dav_c220/kernel_operator_common_impl.h): past the system workspace on the device; in CPU debug (and
// here), where the launch passes the user workspace itself, the workspace as it is.
inline GM_ADDR GetUserWorkspace(GM_ADDR workspace) {
    ascdsl_sim::require(workspace != nullptr, "GetUserWorkspace", "workspace can not be nullptr");
    return workspace;
}

// CANN 8.1 (get_subblockdim): 2 on an AIV of a MIX kernel (its AIC's AIVs), 1 on an AIC and in a kernel of one
// core type.
inline int64_t GetTaskRation() { return ascdsl_sim::st().mix && ascdsl_sim::st().core == AIV ? 2 : 1; }

template <uint8_t modeId, pipe_t pipe>
inline void CrossCoreSetFlag(uint16_t flagId) {
    ascdsl_sim::State& s = ascdsl_sim::st();
    ascdsl_sim::require(s.mix, "CrossCoreSetFlag", "a cross-core flag in a kernel not launched as MIX");
    ascdsl_sim::require(modeId == 2, "CrossCoreSetFlag", "mode ", int{modeId}, " is not modelled (only mode 2, AIC-AIV)");
    ascdsl_sim::require(flagId < 16, "CrossCoreSetFlag", "flag id ", flagId, " is outside [0, 15]");
    if (s.core == AIV) {
        const size_t sub = static_cast<size_t>(s.sub_block);
        ++s.aiv_sets[sub][flagId];
        ++s.aiv_set_total[sub];
        return;
    }
    ++s.aic_sets;
    for (auto& p : s.pending) ++p[flagId];
}

template <uint8_t modeId = 0, pipe_t pipe = PIPE_S>
inline void CrossCoreWaitFlag(uint16_t flagId) {
    ascdsl_sim::State& s = ascdsl_sim::st();
    ascdsl_sim::require(s.mix, "CrossCoreWaitFlag", "a cross-core flag in a kernel not launched as MIX");
    ascdsl_sim::require(modeId == 2, "CrossCoreWaitFlag", "mode ", int{modeId}, " is not modelled (only mode 2, AIC-AIV)");
    ascdsl_sim::require(flagId < 16, "CrossCoreWaitFlag", "flag id ", flagId, " is outside [0, 15]");
    if (s.core == AIC) {
        const uint32_t sets = std::min(s.aiv_sets[0][flagId], s.aiv_sets[1][flagId]);
        ascdsl_sim::require(sets > s.aic_waits[flagId], "CrossCoreWaitFlag", "the AIC waits for flag ", flagId,
                            " with no matching CrossCoreSetFlag left from both its AIVs (", s.aiv_sets[0][flagId],
                            " and ", s.aiv_sets[1][flagId], " set, ", s.aic_waits[flagId],
                            " taken): it would hang on the device");
        ++s.aic_waits[flagId];
        ++s.aic_wait_total;
        return;
    }
    uint32_t& n = s.pending[static_cast<size_t>(s.sub_block)][flagId];
    ascdsl_sim::require(n > 0, "CrossCoreWaitFlag", "AIV ", s.sub_block, " waits for flag ", flagId,
                        " with no matching CrossCoreSetFlag left from its AIC (", s.aic_sets,
                        " set in all): it would hang on the device");
    --n;
    ++s.aiv_waits[static_cast<size_t>(s.sub_block)];
}

}  // namespace AscendC

#endif  // ASCDSL_SIM_ASCDSL_SIM_CROSS_CORE_H
