// Runs the blocks of one launch (each in an execution context, interleaved at SyncAll; a MIX block's cores
// interleaved, its blocks in turn), each with fresh poisoned UB, and reports counters or the
// first failed check as JSON (read by ascdsl/sim/runner.py). The work is in launch_run.h.
#ifndef ASCDSL_SIM_ASCDSL_SIM_LAUNCH_H
#define ASCDSL_SIM_ASCDSL_SIM_LAUNCH_H
#include <exception>

#include "cross_core.h"
#include "grid_sync.h"

namespace ascdsl_sim {

struct Outcome {
    bool ok = true;
    std::string api, reason;
    int64_t block = -1;
    int64_t region = -1;  // State::fail_region of the failure
    std::vector<Counters> per_block;
    std::vector<BlockCost> per_block_cost;
    int64_t trace_block = -1;  // the block of the longest span, whose timeline is kept
    std::vector<TraceEvent> trace;
    uint64_t trace_dropped = 0;
    bool mix = false;  // a MIX launch: the trace's intervals are of a block's three cores
};

#ifndef ASCDSL_SIM_LAUNCH_LINKAGE
#ifdef ASCDSL_SIM_PREBUILT_LAUNCH  // defined in a prebuilt object the build links
#define ASCDSL_SIM_LAUNCH_LINKAGE
#else
#define ASCDSL_SIM_LAUNCH_LINKAGE inline
#endif
#endif

using BlockFn = void (*)(void*);

ASCDSL_SIM_LAUNCH_LINKAGE Outcome run_blocks_erased(const std::vector<int64_t>& order, BlockFn kernel, void* context,
                                                    bool mix);
ASCDSL_SIM_LAUNCH_LINKAGE std::string error_json(const Outcome& o);
ASCDSL_SIM_LAUNCH_LINKAGE std::string outcome_json(const Outcome& o);
ASCDSL_SIM_LAUNCH_LINKAGE void configure(const char* platform, uint64_t ub_bytes, uint64_t ub_budget, bool bf16,
                                         bool hazards, bool vv, uint64_t tiling_key);
ASCDSL_SIM_LAUNCH_LINKAGE std::string& last_report();
ASCDSL_SIM_LAUNCH_LINKAGE int launch_erased(const LaunchConfig& c, BlockFn kernel, void* context);

template <class Kernel>
void call_kernel(void* kernel) {
    (*static_cast<Kernel*>(kernel))();
}

// The blocks of `order`, each a call of `kernel` (with `mix`, on each of a block's three cores: cross_core.h);
// the first failed check ends the run.
template <class Kernel>
Outcome run_blocks(const std::vector<int64_t>& order, Kernel kernel, bool mix) {
    return run_blocks_erased(order, &call_kernel<Kernel>, &kernel, mix);
}

// One run_kernel launch: GM regions are exactly the arrays Python passed.
template <class Kernel>
int launch(const LaunchConfig& c, Kernel kernel) {
    return launch_erased(c, &call_kernel<Kernel>, &kernel);
}

}  // namespace ascdsl_sim

#if !defined(ASCDSL_SIM_PREBUILT_LAUNCH)
#include "launch_run.h"
#endif

#endif  // ASCDSL_SIM_ASCDSL_SIM_LAUNCH_H
