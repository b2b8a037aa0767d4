// SyncAll, the barrier over every block of a launch (CANN 8.1 basic_api/interface/kernel_operator_common_intf.h:97;
// dav_c220 kernel_operator_sync_impl.h:141: PipeBarrier<PIPE_ALL>, then an FFTS cross-core sync over every AIV of
// the launch and a wait for it). The blocks of a launch that is not MIX run as execution contexts (contexts.h,
// launch_run.h run_grid): a block at its n-th SyncAll gives way until every block of the launch has reached its
// n-th, then all go on, with every GM write before the barrier visible after it (the blocks share GM). Writes on
// either side of a barrier are ordered, so the check that blocks write disjoint GM starts afresh after one.
// Errors (each would hang on the device): more blocks than vector cores (not every block is resident), a block
// that ends while others wait, SyncAll<false> (its AICs' half) outside a MIX launch. SyncAll in a MIX launch and
// the GM/UB software form are not modelled.
// Cost model: the core drains (PIPE_ALL), then every block's pipes resume at the latest arrival over the blocks
// plus sync_all_latency (assumed: ascdsl/sim/cost.py).
#ifndef ASCDSL_SIM_ASCDSL_SIM_GRID_SYNC_H
#define ASCDSL_SIM_ASCDSL_SIM_GRID_SYNC_H
#include "contexts.h"
#include "sync.h"
#include "tensor.h"

namespace ascdsl_sim {

// One launch's barriers: its scheduler (a context per block running or waiting, kept for the next block once
// its block ends) and where the blocks are.
struct GridSync {
    Scheduler scheduler;
    std::vector<int64_t> block_of;  // the block each context runs
    std::vector<uint64_t> calls;    // per block: the SyncAll calls it made
    uint64_t passed = 0;            // barriers every block has reached
    uint64_t arrived = 0;           // blocks at barrier #passed
    double latest = 0;              // the latest arrival at it (cost model)
    double release = 0;             // when the blocks leave barrier #passed - 1
};

inline GridSync& grid_sync() {
    static GridSync g;
    return g;
}

// Every block has reached the current barrier: it opens, and GM writes after it are ordered after those before.
inline void release_barrier(GridSync& g) {
    g.release = g.latest + timeline().params.sync_all_latency;
    ++g.passed, g.arrived = 0, g.latest = 0;
    ++g.scheduler.progress;
    for (GmRegion& r : st().gm) std::fill(r.owner.begin(), r.owner.end(), kNoOwner);
}

inline void sync_all(bool aiv_only) {
    State& s = st();
    require(!s.mix, "SyncAll", "SyncAll in a MIX launch is not modelled (only launches of vector cores)");
    require(aiv_only, "SyncAll", "SyncAll<false> also waits for the AI cube cores of a MIX launch; block ", s.block_idx,
            " runs in a launch of vector cores only: it would hang on the device");
    const uint64_t cores = timeline().params.cores;
    require(static_cast<uint64_t>(s.block_num) <= cores, "SyncAll", "block ", s.block_idx, " waits for all ",
            s.block_num, " blocks of the launch, but only ", cores, " run at once on the platform's vector cores: it "
            "would hang on the device");
    pipe_barrier(PIPE_ALL);
    GridSync& g = grid_sync();
    const uint64_t n = g.calls[static_cast<size_t>(s.block_idx)]++;
    g.latest = std::max(g.latest, timeline().scalar);
    if (++g.arrived == static_cast<uint64_t>(s.block_num)) release_barrier(g);
    while (g.passed <= n)
        block_core(g.scheduler, "block " + std::to_string(s.block_idx) + " waits at SyncAll #" + std::to_string(n + 1));
    for (int p = 0; p < kPipes; ++p) hold(static_cast<Pipe>(p), g.release, "SyncAll");
}

}  // namespace ascdsl_sim

namespace AscendC {

template <bool isAIVOnly = true>
inline void SyncAll() { ascdsl_sim::sync_all(isAIVOnly); }

// The software form (a GM workspace of flags every core polls) is not modelled.
template <bool isAIVOnly = true>
inline void SyncAll(const GlobalTensor<int32_t>&, const LocalTensor<int32_t>&, const int32_t = 0) {
    ascdsl_sim::fail("SyncAll", "the GM/UB workspace form of SyncAll is not modelled: use SyncAll<true>() (the "
                     "hardware barrier)");
}

}  // namespace AscendC

#endif  // ASCDSL_SIM_ASCDSL_SIM_GRID_SYNC_H
