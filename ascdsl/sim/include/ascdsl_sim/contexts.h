// Execution contexts: programs that may wait for each other (a MIX block's three cores, cross_core.h; the blocks
// of a launch, grid_sync.h), each a ucontext with its own stack, run by a Scheduler (launch_run.h). Contexts
// rather than threads with a baton: one OS thread runs them all, so st() and timeline() need no locks or fences,
// and a context gives way only where the program says (a wait nothing has satisfied yet), so every run
// interleaves alike. The running context's CoreState and CoreTimeline are in st() and timeline(); the others'
// are kept here.
#ifndef ASCDSL_SIM_ASCDSL_SIM_CONTEXTS_H
#define ASCDSL_SIM_ASCDSL_SIM_CONTEXTS_H
#include <ucontext.h>

#include <deque>
#include <memory>
#include <utility>

#include "cost.h"

namespace ascdsl_sim {

struct Context {
    ucontext_t context;
    std::unique_ptr<char[]> stack;  // kept for the next program it runs
    CoreState state;
    CoreTimeline timeline;
    bool started = false, done = false, blocked = false;
    uint64_t blocked_at = 0;  // Scheduler::progress when it blocked: it may go on once that has moved
    std::string waits_for;    // why it is blocked: the error if every unfinished context is
};

struct Scheduler {
    ucontext_t scheduler;
    std::deque<Context> contexts;  // a deque: a suspended ucontext must not move
    int running = -1;
    bool abandon = false;   // unwind the blocked contexts of a run that failed or would hang
    uint64_t progress = 0;  // bumped by whatever may let a blocked context go on (a flag set, a barrier's release)
    void (*entry)() = nullptr;  // what a context runs (`running` tells it which it is)

    // Makes context i ready to run `entry` from its start.
    void reset(size_t i) {
        Context& c = contexts[i];
        c.started = c.done = c.blocked = false;
    }
    bool can_run(size_t i) const {
        const Context& c = contexts[i];
        return !c.done && (!c.blocked || c.blocked_at != progress);
    }
};

// Exchanges the running state and timeline (st(), timeline()) with context c's kept ones: in before it runs (or
// its figures are read), out after.
inline void swap_core(Context& c) {
    std::swap(static_cast<CoreState&>(st()), c.state);
    std::swap(static_cast<CoreTimeline&>(timeline()), c.timeline);
}

// Thrown from a blocked wait when its run is abandoned; the context ends with it.
struct Abandoned {};

// The running context of `s` cannot go on until something moves s.progress: back to the scheduler, which resumes
// it after that (then the caller checks again) or abandons it.
inline void block_core(Scheduler& s, std::string why) {
    Context& c = s.contexts[static_cast<size_t>(s.running)];
    c.blocked = true, c.blocked_at = s.progress, c.waits_for = std::move(why);
    swapcontext(&c.context, &s.scheduler);
    c.blocked = false;
    if (s.abandon) throw Abandoned{};
}

}  // namespace ascdsl_sim

#endif  // ASCDSL_SIM_ASCDSL_SIM_CONTEXTS_H
