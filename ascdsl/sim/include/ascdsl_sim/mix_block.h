// A MIX block's three cores (its AIC, AIV 0 and AIV 1), each in its own execution context: a ucontext with its
// own stack, run by launch_run.h's scheduler. Contexts rather than threads with a baton: one OS thread runs them
// all, so st() and timeline() need no locks or fences, and a core gives way only where the program says (a
// CrossCoreWaitFlag with no matching set), so every run interleaves alike. The running core's CoreState and
// CoreTimeline are in st() and timeline(); the others' are kept here.
#ifndef ASCDSL_SIM_ASCDSL_SIM_MIX_BLOCK_H
#define ASCDSL_SIM_ASCDSL_SIM_MIX_BLOCK_H
#include <ucontext.h>

#include <memory>
#include <utility>

#include "cost.h"

namespace ascdsl_sim {

struct MixCore {
    ucontext_t context;
    std::unique_ptr<char[]> stack;  // kept for the next block
    CoreState state;
    CoreTimeline timeline;
    bool started = false, done = false, blocked = false;
    uint64_t blocked_at = 0;  // FlagGroup::sets when it blocked: it may go on once another set is made
    std::string waits_for;    // why it is blocked: the error if every unfinished core is
};

struct MixBlock {
    ucontext_t scheduler;
    std::array<MixCore, 3> cores;  // the AIC, AIV 0, AIV 1: the round-robin order
    int running = -1;
    bool abandon = false;  // unwind the blocked cores of a block that failed or would hang
};

inline MixBlock& mix_block() {
    static MixBlock m;
    return m;
}

// Exchanges the running state and timeline (st(), timeline()) with core c's kept ones: in before it runs (or
// its figures are read), out after.
inline void swap_core(MixCore& c) {
    std::swap(static_cast<CoreState&>(st()), c.state);
    std::swap(static_cast<CoreTimeline&>(timeline()), c.timeline);
}

// Thrown from a blocked CrossCoreWaitFlag when its block is abandoned; the core's context ends with it.
struct Abandoned {};

// The running core cannot go on until another core sets a flag: back to the scheduler, which resumes it after
// the next set (then the caller checks again) or abandons it.
inline void block_core(std::string why) {
    MixBlock& m = mix_block();
    MixCore& c = m.cores[static_cast<size_t>(m.running)];
    c.blocked = true, c.blocked_at = st().flag_group.sets, c.waits_for = std::move(why);
    swapcontext(&c.context, &m.scheduler);
    c.blocked = false;
    if (m.abandon) throw Abandoned{};
}

}  // namespace ascdsl_sim

#endif  // ASCDSL_SIM_ASCDSL_SIM_MIX_BLOCK_H
