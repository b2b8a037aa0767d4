// The definitions behind launch.h: a launch's blocks run through a type-erased kernel call. Kernel
// libraries link them from one object built once (ascdsl/sim/build.py defines ASCDSL_SIM_PREBUILT_LAUNCH,
// so these functions are not compiled again into every kernel); other builds include them inline.
#ifndef ASCDSL_SIM_ASCDSL_SIM_LAUNCH_RUN_H
#define ASCDSL_SIM_ASCDSL_SIM_LAUNCH_RUN_H
#include "launch.h"

namespace ascdsl_sim {

// One core's run of a block: fresh UB (and cube memories) and timeline; a failed check becomes the outcome.
ASCDSL_SIM_LAUNCH_LINKAGE bool run_core(Outcome& out, int64_t b, int64_t n, BlockFn kernel, void* context) {
    reset_block(b, n);
    reset_timeline();
    try {
        kernel(context);
    } catch (const Failure& f) {
        out = Outcome{false, f.api, f.reason, b, st().fail_region, {}, {}};
    } catch (const std::exception& e) {
        out = Outcome{false, "kernel", std::string("C++ exception: ") + e.what(), b, -1, {}, {}};
    }
    return out.ok;
}

// A MIX block's figures: its cores ran side by side from time 0, so the span is the slowest core's; pipes and
// counters add up over the three cores.
ASCDSL_SIM_LAUNCH_LINKAGE void add_core(Counters& c, BlockCost& k) {
    const Counters& d = st().counters;
    c.gm_read_bytes += d.gm_read_bytes, c.gm_write_bytes += d.gm_write_bytes;
    c.gm_copies += d.gm_copies, c.ub_copies += d.ub_copies, c.ub_peak_bytes = std::max(c.ub_peak_bytes, d.ub_peak_bytes);
    for (const auto& [api, v] : d.vec) {
        VecCount& t = c.vec[api];
        t.calls += v.calls, t.elements += v.elements, t.rounds += v.rounds;
    }
    const BlockCost e = block_cost();
    k.cycles = std::max(k.cycles, e.cycles);
    for (int p = 0; p < kPipes; ++p) k.busy[p] += e.busy[p];
    k.vector_ideal += e.vector_ideal, k.copy_bytes += e.copy_bytes, k.cube_ideal += e.cube_ideal;
    k.l2_bytes += e.l2_bytes, k.floor_bytes += e.floor_bytes;
}

// Runs context i of `s` (from its start, or from its blocked wait) until it ends or blocks, with its state in st()
// and timeline() meanwhile.
ASCDSL_SIM_LAUNCH_LINKAGE void resume(Scheduler& s, size_t i) {
    constexpr size_t kStackBytes = 8 << 20;  // a thread's default stack; pages are committed as touched
    Context& c = s.contexts[i];
    swap_core(c);
    if (!c.started) {
        if (!c.stack) c.stack.reset(new char[kStackBytes]);
        getcontext(&c.context);
        c.context.uc_stack.ss_sp = c.stack.get();
        c.context.uc_stack.ss_size = kStackBytes;
        c.context.uc_link = &s.scheduler;
        makecontext(&c.context, s.entry, 0);
        c.started = true;
    }
    s.running = static_cast<int>(i);
    swapcontext(&s.scheduler, &c.context);
    s.running = -1;
    swap_core(c);
}

// Unwinds every context of `s` still waiting (its run failed or would hang).
ASCDSL_SIM_LAUNCH_LINKAGE void abandon_waiting(Scheduler& s) {
    s.abandon = true;
    for (size_t i = 0; i < s.contexts.size(); ++i)
        if (s.contexts[i].started && !s.contexts[i].done) resume(s, i);
    s.abandon = false;
}

// The MIX block the cores run (the kernel call and its block) and each core's outcome.
struct MixRun {
    int64_t b, n;
    BlockFn kernel;
    void* context;
    std::array<Outcome, 3> outcomes;
};
inline MixRun& mix_run() {
    static MixRun r;
    return r;
}

// What a core's context runs: core `running` of the block, to its end (or its failure, or an Abandoned
// unwinding it); uc_link then returns to the scheduler.
ASCDSL_SIM_LAUNCH_LINKAGE void run_mix_core() {
    Scheduler& m = mix_block();
    const int i = m.running;
    MixRun& r = mix_run();
    st().core = i == 0 ? AIC : AIV, st().sub_block = i == 0 ? 0 : i - 1;
    try {
        run_core(r.outcomes[static_cast<size_t>(i)], r.b, r.n, r.kernel, r.context);
    } catch (const Abandoned&) {
    }
    m.contexts[static_cast<size_t>(i)].done = true;
}

// One MIX block: its cores in turn (the AIC, AIV 0, AIV 1, round robin), each until it ends or waits for a flag
// no other core has set yet; the first failed check, or every unfinished core waiting, ends the block. Its
// figures (add_core) and its trace: the AIC's, then the slower AIV's.
ASCDSL_SIM_LAUNCH_LINKAGE Outcome run_mix_block(int64_t b, int64_t n, BlockFn kernel, void* context, Counters& c,
                                                BlockCost& k, std::vector<TraceEvent>& trace, uint64_t& dropped) {
    Scheduler& m = mix_block();
    MixRun& r = mix_run();
    r = MixRun{b, n, kernel, context, {}};
    st().flag_group = FlagGroup{};
    m.entry = &run_mix_core, m.progress = 0;
    for (size_t i = 0; i < 3; ++i) m.reset(i), m.contexts[i].state = {}, m.contexts[i].timeline = {};
    const auto failed = [&] {
        return std::find_if(r.outcomes.begin(), r.outcomes.end(), [](const Outcome& o) { return !o.ok; });
    };
    for (size_t next = 0; failed() == r.outcomes.end();) {
        size_t i = 0;
        while (i < 3 && !m.can_run((next + i) % 3)) ++i;
        if (i == 3) break;
        resume(m, (next + i) % 3);
        next = (next + i + 1) % 3;
    }
    Outcome out = failed() == r.outcomes.end() ? Outcome{} : *failed();
    if (out.ok && std::any_of(m.contexts.begin(), m.contexts.end(), [](const Context& core) { return !core.done; })) {
        std::string why;
        for (const Context& core : m.contexts)
            if (!core.done) why += (why.empty() ? "" : "; and ") + core.waits_for;
        out = Outcome{false, "CrossCoreWaitFlag", why + ": it would hang on the device", b, -1, {}, {}};
    }
    abandon_waiting(m);
    if (!out.ok) return out;
    std::vector<TraceEvent> aiv;  // the slower AIV's
    uint64_t aiv_dropped = 0;
    double aiv_span = -1;
    for (size_t i = 0; i < 3; ++i) {
        Context& core = m.contexts[i];
        swap_core(core);
        add_core(c, k);
        if (i == 0) {
            trace = timeline().trace, dropped = timeline().trace_dropped;
        } else if (block_cost().cycles > aiv_span) {
            aiv_span = block_cost().cycles, aiv = timeline().trace, aiv_dropped = timeline().trace_dropped;
        }
        swap_core(core);
    }
    for (TraceEvent& e : aiv) e.core = 1;
    trace.insert(trace.end(), aiv.begin(), aiv.end());
    dropped += aiv_dropped;
    return out;
}

// Keeps block b's figures in `out`, and its trace if its span is the longest so far.
ASCDSL_SIM_LAUNCH_LINKAGE void keep_block(Outcome& out, int64_t b, const Counters& c, const BlockCost& k,
                                          std::vector<TraceEvent>& trace, uint64_t dropped) {
    out.per_block[b] = c;
    out.per_block_cost[b] = k;
    if (out.trace_block < 0 || k.cycles > out.per_block_cost[out.trace_block].cycles) {
        out.trace_block = b;
        out.trace = std::move(trace);
        out.trace_dropped = dropped;
    }
}

// The launch the blocks' contexts run (run_grid).
struct GridRun {
    BlockFn kernel;
    void* context;
    Outcome* out;
    KernelCoreType core;  // the launch's (tikicpulib.h SetKernelMode)
};
inline GridRun& grid_run() {
    static GridRun r;
    return r;
}

// What a block's context runs: the block, to its end (or its failure, or an Abandoned unwinding it at a SyncAll);
// its figures when it ends.
ASCDSL_SIM_LAUNCH_LINKAGE void run_grid_block() {
    GridSync& g = grid_sync();
    const size_t i = static_cast<size_t>(g.scheduler.running);
    const GridRun& r = grid_run();
    Outcome& out = *r.out;
    const int64_t b = g.block_of[i];
    st().core = r.core, st().sub_block = 0;
    try {
        Outcome o;
        if (run_core(o, b, static_cast<int64_t>(out.per_block.size()), r.kernel, r.context)) {
            std::vector<TraceEvent> trace = std::move(timeline().trace);
            keep_block(out, b, st().counters, block_cost(), trace, timeline().trace_dropped);
        } else if (out.ok) {
            out = Outcome{false, o.api, o.reason, o.block, o.region, {}, {}};
        }
    } catch (const Abandoned&) {
    }
    g.scheduler.contexts[i].done = true;
}

// The blocks of a launch that is not MIX, in `order`, each in a context of grid_sync()'s scheduler: a block runs
// until it ends or waits at a SyncAll (grid_sync.h), then the next block in order that can go on, round robin (a
// new one in the first context whose block has ended). Without SyncAll every block runs to its end in context 0,
// one after another. The first failed check, or blocks waiting at a SyncAll that a block ended before reaching,
// ends the run.
ASCDSL_SIM_LAUNCH_LINKAGE void run_grid(Outcome& out, const std::vector<int64_t>& order, BlockFn kernel, void* context) {
    GridSync& g = grid_sync();
    Scheduler& s = g.scheduler;
    const size_t n = order.size();
    grid_run() = GridRun{kernel, context, &out, st().core};
    s.entry = &run_grid_block, s.progress = 0;
    g.calls.assign(n, 0), g.passed = g.arrived = 0, g.latest = g.release = 0;
    std::vector<int> context_of(n, -1);  // by position in order; -1 before the block starts
    std::vector<char> ended(n, 0);
    const auto can_run = [&](size_t p) {
        return !ended[p] && (context_of[p] < 0 || s.can_run(static_cast<size_t>(context_of[p])));
    };
    for (size_t next = 0; out.ok;) {
        size_t step = 0;
        while (step < n && !can_run((next + step) % n)) ++step;
        if (step == n) break;
        const size_t p = (next + step) % n;
        if (context_of[p] < 0) {
            size_t i = 0;
            while (i < s.contexts.size() && s.contexts[i].started && !s.contexts[i].done) ++i;
            if (i == s.contexts.size()) s.contexts.emplace_back(), g.block_of.push_back(0);
            s.reset(i);
            g.block_of[i] = order[p], context_of[p] = static_cast<int>(i);
        }
        resume(s, static_cast<size_t>(context_of[p]));
        ended[p] = s.contexts[static_cast<size_t>(context_of[p])].done;
        next = (p + 1) % n;
    }
    if (out.ok) {
        std::string waiting;
        int64_t early = -1;  // the lowest block that ended before the barrier the others wait at
        for (size_t p = 0; p < n; ++p) {
            const int64_t b = order[p];
            if (!ended[p])
                waiting += (waiting.empty() ? "" : ", ") + std::to_string(b);
            else if (g.calls[static_cast<size_t>(b)] <= g.passed && (early < 0 || b < early))
                early = b;
        }
        if (!waiting.empty())
            out = Outcome{false, "SyncAll", "block " + std::to_string(early) + " ended after " +
                          std::to_string(g.calls[static_cast<size_t>(early)]) + " SyncAll while blocks " + waiting +
                          " wait at SyncAll #" + std::to_string(g.passed + 1) + ": it would hang on the device",
                          early, -1, {}, {}};
    }
    abandon_waiting(s);
}

// The first reads shared by the blocks that run together (docs/performance.md, "Where the first reads land, per
// core"). The blocks ran one after another, so the first of a range's readers in run order fetched it from HBM and
// the others read it from the L2. On a device block b starts on core b % cores once that core's earlier blocks are
// done (their spans as run); the readers that start before the earliest-starting reader ends fetch the range
// together, each paying an even share, and the rest read it from the L2. A block's span moves by its change in HBM
// bytes at its copies' mean premium (cost.h read_premium), no lower than any of its pipes' busy cycles. Left as run:
// MIX launches, ranges a write or a scalar read touched, and a launch whose bytes outgrew the L2.
ASCDSL_SIM_LAUNCH_LINKAGE void share_first_reads(Outcome& out) {
    const State& s = st();
    const CostParams& params = timeline().params;
    if (static_cast<double>(s.l2_bytes) > params.l2_capacity) return;
    const size_t n = out.per_block_cost.size();
    const uint64_t cores = std::max<uint64_t>(params.cores, 1);
    std::vector<double> start(n), end(n), core_end(std::min<uint64_t>(cores, n), 0.0);
    for (size_t b = 0; b < n; ++b) {
        double& at = core_end[b % cores];
        start[b] = at;
        end[b] = at += out.per_block_cost[b].cycles;
    }
    std::vector<double> hbm(n, 0.0);  // HBM bytes each block pays beyond what it paid in the run
    std::vector<uint32_t> group;
    for (const auto& [lo, r] : s.readers) {
        if (std::find(r.blocks.begin(), r.blocks.end(), kUnshared) != r.blocks.end()) continue;
        const uint32_t earliest = *std::min_element(r.blocks.begin(), r.blocks.end(), [&](uint32_t a, uint32_t b) {
            return std::pair(start[a], a) < std::pair(start[b], b);
        });
        group.clear();
        for (const uint32_t b : r.blocks)
            if (b == earliest || start[b] < end[earliest]) group.push_back(b);
        const double bytes = static_cast<double>(r.end - lo);
        hbm[r.blocks.front()] -= bytes;
        for (const uint32_t b : group) hbm[b] += bytes / static_cast<double>(group.size());
    }
    for (size_t b = 0; b < n; ++b) {
        BlockCost& k = out.per_block_cost[b];
        if (hbm[b] == 0 || k.read_bytes == 0) continue;
        const double cycles = hbm[b] * k.read_premium / k.read_bytes;
        k.busy[pipe_index(Pipe::MTE2)] += cycles;
        k.cycles = std::max(k.cycles + cycles, *std::max_element(k.busy.begin(), k.busy.end()));
        k.l2_bytes -= hbm[b];
        k.floor_bytes += hbm[b];
    }
}

ASCDSL_SIM_LAUNCH_LINKAGE Outcome run_blocks_erased(const std::vector<int64_t>& order, BlockFn kernel, void* context,
                                                    bool mix) {
    Outcome out;
    out.mix = mix;
    out.per_block.resize(order.size());
    out.per_block_cost.resize(order.size());
    for (auto& r : st().gm) std::fill(r.owner.begin(), r.owner.end(), kNoOwner), r.published.clear(), r.read_by.clear();
    State& s = st();
    s.l2.clear(), s.l2_bytes = 0, s.readers.clear();
    s.mix = mix;
    if (mix) {
        for (const int64_t b : order) {
            std::vector<TraceEvent> trace;
            uint64_t dropped = 0;
            Counters c;
            BlockCost k;
            const Outcome o = run_mix_block(b, static_cast<int64_t>(order.size()), kernel, context, c, k, trace, dropped);
            if (!o.ok) {
                out = Outcome{false, o.api, o.reason, o.block, o.region, {}, {}};
                break;
            }
            keep_block(out, b, c, k, trace, dropped);
        }
    } else {
        run_grid(out, order, kernel, context);
    }
    if (out.ok && !mix && grid_sync().passed == 0) share_first_reads(out);
    std::fflush(stdout);
    return out;
}

ASCDSL_SIM_LAUNCH_LINKAGE std::string json_string(const std::string& s) {
    std::string o = "\"";
    for (const char c : s) {
        if (c == '"' || c == '\\') o += '\\';
        if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            o += buf;
        } else {
            o += c;
        }
    }
    return o + "\"";
}

ASCDSL_SIM_LAUNCH_LINKAGE std::string error_json(const Outcome& o) {
    return "{\"api\": " + json_string(o.api) + ", \"block\": " + std::to_string(o.block) +
           ", \"region\": " + std::to_string(o.region) + ", \"reason\": " + json_string(o.reason) + "}";
}

ASCDSL_SIM_LAUNCH_LINKAGE std::string outcome_json(const Outcome& o) {
    if (!o.ok) return "{\"error\": " + error_json(o) + "}";
    std::ostringstream os;
    os.precision(17);
    os << "{\"blocks\": [";
    for (size_t b = 0; b < o.per_block.size(); ++b) {
        const Counters& c = o.per_block[b];
        os << (b ? ", " : "") << "{\"gm_read_bytes\": " << c.gm_read_bytes << ", \"gm_write_bytes\": " << c.gm_write_bytes
           << ", \"gm_copies\": " << c.gm_copies << ", \"ub_copies\": " << c.ub_copies
           << ", \"ub_peak_bytes\": " << c.ub_peak_bytes << ", \"vector\": {";
        size_t i = 0;
        for (const auto& [api, n] : c.vec) os << (i++ ? ", " : "") << json_string(api) << ": [" << n.calls << ", " << n.elements << ", " << n.rounds << "]";
        const BlockCost& k = o.per_block_cost[b];
        os << "}, \"cost\": {\"cycles\": " << k.cycles << ", \"vector_ideal\": " << k.vector_ideal
           << ", \"copy_bytes\": " << k.copy_bytes << ", \"cube_ideal\": " << k.cube_ideal
           << ", \"l2_bytes\": " << k.l2_bytes << ", \"floor_bytes\": " << k.floor_bytes << ", \"busy\": {";
        for (int p = 0; p < kPipes; ++p) os << (p ? ", " : "") << json_string(pipe_short(static_cast<Pipe>(p))) << ": " << k.busy[p];
        os << "}}}";
    }
    os << "], \"trace\": {\"block\": " << o.trace_block << ", \"dropped\": " << o.trace_dropped
       << ", \"mix\": " << (o.mix ? "true" : "false") << ", \"names\": [";
    const std::vector<std::string>& names = timeline().trace_names;
    for (size_t i = 0; i < names.size(); ++i) os << (i ? ", " : "") << json_string(names[i]);
    os << "], \"events\": [";
    for (size_t i = 0; i < o.trace.size(); ++i) {
        const TraceEvent& e = o.trace[i];
        os << (i ? ", " : "") << "[" << e.pipe << ", " << (e.wait ? 1 : 0) << ", " << e.start << ", " << e.end << ", " << e.api
           << ", " << e.core << "]";
    }
    os << "]}}";
    return os.str();
}

ASCDSL_SIM_LAUNCH_LINKAGE void configure(const char* platform, uint64_t ub_bytes, uint64_t ub_budget, bool bf16, bool hazards, bool vv,
                      uint64_t tiling_key) {
    State& s = st();
    s.platform = platform;
    s.ub_bytes = ub_bytes;
    s.ub_budget = ub_budget;
    s.bf16 = bf16;
    s.check_hazards = hazards;
    s.check_vv = vv;
    s.tiling_key = tiling_key;
}

ASCDSL_SIM_LAUNCH_LINKAGE std::string& last_report() {
    static std::string r;
    return r;
}

// One run_kernel launch: GM regions are exactly the arrays Python passed.
ASCDSL_SIM_LAUNCH_LINKAGE int launch_erased(const LaunchConfig& c, BlockFn kernel, void* context) {
    configure(c.platform, c.ub_bytes, c.ub_budget_bytes, c.bf16, c.check_hazards, c.check_vv, c.tiling_key);
    set_cost_params(*c.cost);
    st().gm.clear();
    for (uint64_t i = 0; i < c.n_regions; ++i) st().gm.push_back(GmRegion{c.region_base[i], c.region_bytes[i], {}});
    const std::vector<int64_t> order(c.order, c.order + c.block_dim);
    const Outcome o = run_blocks_erased(order, kernel, context, c.mix != 0);
    last_report() = outcome_json(o);
    return o.ok ? 0 : 1;
}

}  // namespace ascdsl_sim

#endif  // ASCDSL_SIM_ASCDSL_SIM_LAUNCH_RUN_H
