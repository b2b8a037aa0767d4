// Cross-core synchronisation of MIX kernels (CANN 8.1 basic_api/interface/kernel_operator_common_intf.h):
// CrossCoreSetFlag / CrossCoreWaitFlag, GetSubBlockIdx, GetTaskRation and GetUserWorkspace
// (ASCEND_IS_AIC / ASCEND_IS_AIV: macros.h).
// A block of a MIX kernel is one AIC and its two AIVs (A2: 1 AIC : 2 AIV), in mode 2 (the group's AIC-AIV
// mode; dav_c220's SyncAll uses it both ways). The simulator runs the three cores interleaved (contexts.h):
// a wait with no matching set left gives way to the next core that can go on, and when none can the block
// would hang on the device: an error naming the waiting core and flag. A set by the AIC counts once for each
// AIV, and a wait on an AIV takes one of them; the AIC's wait takes one set of each of its AIVs (the group's
// flag counts both). Modes 0 and 1 are refused.
// Cost model: a wait holds its pipe until the matching set was issued on the setter's timeline (the set's pipe
// reached it) plus flag_latency, the in-core hand-over's assumed figure (no public figure for cross-core).
#ifndef ASCDSL_SIM_ASCDSL_SIM_CROSS_CORE_H
#define ASCDSL_SIM_ASCDSL_SIM_CROSS_CORE_H
#include <algorithm>

#include "contexts.h"
#include "macros.h"
#include "pipe.h"

namespace ascdsl_sim {

// The scheduler of a MIX block's cores: its contexts are the AIC, AIV 0 and AIV 1, the round-robin order.
inline Scheduler& mix_block() {
    static Scheduler m;
    if (m.contexts.empty()) m.contexts.resize(3);
    return m;
}

// The model's pipe of a cross-core flag's pipe_t (Fixpipe runs on MTE3 here, cube.h).
inline Pipe cross_core_pipe(pipe_t p) {
    switch (p) {
    case PIPE_V: return Pipe::V;
    case PIPE_M: return Pipe::M;
    case PIPE_MTE1: return Pipe::MTE1;
    case PIPE_MTE2: return Pipe::MTE2;
    case PIPE_MTE3: case PIPE_FIX: return Pipe::MTE3;
    default: return Pipe::S;
    }
}

inline void check_cross_core(const char* api, uint8_t mode, uint16_t flag) {
    require(st().mix, api, "a cross-core flag in a kernel not launched as MIX");
    require(mode == 2, api, "mode ", int{mode}, " is not modelled (only mode 2, AIC-AIV)");
    require(flag < 16, api, "flag id ", flag, " is outside [0, 15]");
}

}  // namespace ascdsl_sim

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
    ascdsl_sim::check_cross_core("CrossCoreSetFlag", modeId, flagId);
    ascdsl_sim::State& s = ascdsl_sim::st();
    ascdsl_sim::FlagGroup& g = s.flag_group;
    ascdsl_sim::dispatch();
    const double at = ascdsl_sim::reached(ascdsl_sim::cross_core_pipe(pipe)) + ascdsl_sim::timeline().params.flag_latency;
    if (s.core == AIV) {
        const size_t sub = static_cast<size_t>(s.sub_block);
        g.aiv_sets[sub][flagId].push_back({at, g.aiv_set_total[sub]++});
    } else {
        g.aic_sets[flagId].push_back({at, g.aic_set_total++});
    }
    ++ascdsl_sim::mix_block().progress;
}

template <uint8_t modeId = 0, pipe_t pipe = PIPE_S>
inline void CrossCoreWaitFlag(uint16_t flagId) {
    ascdsl_sim::check_cross_core("CrossCoreWaitFlag", modeId, flagId);
    ascdsl_sim::State& s = ascdsl_sim::st();
    ascdsl_sim::FlagGroup& g = s.flag_group;
    ascdsl_sim::dispatch();
    double at;
    if (s.core == AIC) {
        const uint32_t taken = g.aic_taken[flagId];
        while (std::min(g.aiv_sets[0][flagId].size(), g.aiv_sets[1][flagId].size()) <= taken) {
            std::ostringstream why;
            why << "the AIC waits for flag " << flagId << " with no matching CrossCoreSetFlag left from both its AIVs ("
                << g.aiv_sets[0][flagId].size() << " and " << g.aiv_sets[1][flagId].size() << " set, " << taken
                << " taken)";
            ascdsl_sim::block_core(ascdsl_sim::mix_block(), why.str());
        }
        at = 0;
        for (size_t sub = 0; sub < 2; ++sub) {
            const ascdsl_sim::CrossCoreSet& set = g.aiv_sets[sub][flagId][taken];
            at = std::max(at, set.at);
            g.aic_seen[sub] = std::max(g.aic_seen[sub], set.index + 1);
        }
        ++g.aic_taken[flagId];
    } else {
        const size_t sub = static_cast<size_t>(s.sub_block);
        uint32_t& taken = g.aiv_taken[sub][flagId];
        while (g.aic_sets[flagId].size() <= taken) {
            std::ostringstream why;
            why << "AIV " << sub << " waits for flag " << flagId << " with no matching CrossCoreSetFlag left from its AIC ("
                << g.aic_set_total << " set in all)";
            ascdsl_sim::block_core(ascdsl_sim::mix_block(), why.str());
        }
        const ascdsl_sim::CrossCoreSet& set = g.aic_sets[flagId][taken++];
        at = set.at;
        g.aiv_seen[sub] = std::max(g.aiv_seen[sub], set.index + 1);
    }
    ascdsl_sim::hold(ascdsl_sim::cross_core_pipe(pipe), at, "CrossCoreWaitFlag");
}

}  // namespace AscendC

#endif  // ASCDSL_SIM_ASCDSL_SIM_CROSS_CORE_H
