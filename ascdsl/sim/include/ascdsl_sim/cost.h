// The cost model's per-block timeline: the scalar unit dispatches every API call in program order and
// each pipe (MTE2, V, MTE3) runs its instructions in order, after the dispatch and after whatever
// flag, queue buffer or barrier it waits for. The constants and what the model leaves out are
// documented in ascdsl/sim/cost.py; every API reaches the model through the hooks at the end of this
// file (a new vector API only has to call count_vector, which operand.h wraps for Lanes).
#ifndef ASCDSL_SIM_ASCDSL_SIM_COST_H
#define ASCDSL_SIM_ASCDSL_SIM_COST_H
#include <cmath>
#include <initializer_list>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime.h"

namespace ascdsl_sim {

// Mirrored by ascdsl/sim/runner.py::_CostParams; all costs in core cycles.
struct CostParams {
    double scalar_issue = 0;        // scalar unit: dispatching one API call
    double vector_issue = 0;        // vector pipe: start-up of one instruction
    double barrier_drain = 0;       // PipeBarrier: the pipe drains before the next instruction
    double flag_latency = 0;        // SetFlag (or EnQue/FreeTensor) to the waiting pipe
    double copy_setup = 0;          // MTE2/MTE3: start-up of one DataCopy/DataCopyPad
    double burst_cycles = 0;        // MTE2/MTE3: each burst of a copy
    double gm_bytes_per_cycle = 1;  // this core's share of GM bandwidth (reads and writes together)
    double scalar_gm_latency = 0;   // a scalar GM access (GlobalTensor::GetValue/SetValue)
    uint64_t n_apis = 0;            // per-API vector costs: cycles per repeat and extra internal passes
    const char* const* api_names = nullptr;
    const double* api_cycles_per_repeat = nullptr;
    const double* api_extra_passes = nullptr;
    double cube_macs_per_cycle = 1;  // cube unit: multiply-adds per cycle of 16-bit operands
    double scalar_ub_access = 0;     // a scalar UB access (LocalTensor::GetValue/SetValue) and its loop's arithmetic
    double l2_bytes_per_cycle = 1;   // a read the L2 serves: bytes per cycle on this core's link
    double l2_burst_cycles = 0;      // MTE2: each burst of a read the L2 serves (the segment at the L2's rate)
    double l2_capacity = 0;          // bytes the L2 holds: re-reads hit while the launch's bytes so far fit it
    double l2_write_bytes_per_cycle = 1;  // a write the L2 takes: bytes per cycle on this core's link
    double l2_write_burst_cycles = 0;     // MTE3/Fixpipe: each burst of a write the L2 takes
    double l1_to_l0a_bytes_per_cycle = 1;  // MTE1: LoadData L1 -> L0A
    double l1_to_l0b_bytes_per_cycle = 1;  // MTE1: LoadData L1 -> L0B
    uint64_t cores = 1;                    // the cores the blocks run on: block b on core b % cores
    double sync_all_latency = 0;           // SyncAll: from the last block's arrival until every block goes on
};

// What one block cost: its span, the busy cycles of each pipe, and its share of the floor.
struct BlockCost {
    double cycles = 0;
    std::array<double, kPipes> busy{};
    double vector_ideal = 0;  // vector cycles with every repeat full and no issue overhead
    double copy_bytes = 0;    // bytes MTE2 and MTE3 moved between GM and UB (or L1, and Fixpipe from L0C)
    double cube_ideal = 0;    // cube cycles of the products' multiply-adds at peak
    double l2_bytes = 0;      // bytes of copy_bytes the L2 served (read before in the launch), not HBM
    double floor_bytes = 0;   // bytes the floor counts: every byte written, a byte read only the first time
    // The GM -> UB/L1 copies' bytes and how many cycles more they cost from HBM than from the L2 (each copy's
    // bytes and bursts at both rates): what a byte moved between the two costs the block, on average.
    double read_bytes = 0, read_premium = 0;
};

// One interval of a pipe's timeline: an instruction running (busy) or the pipe held by a flag, a queue
// buffer or a barrier past the time it was free (wait). `api` indexes Timeline::trace_names; `core` is 0 but
// for the intervals of a MIX block's vector core (1), beside its cube core's (0).
struct TraceEvent {
    int pipe;
    bool wait;
    double start, end;
    int api;
    int core = 0;
};
constexpr size_t kTraceEvents = 20000;  // per block; events past it are counted, not kept

// One core's timeline (a MIX block's cores each have one, swapped in with their CoreState).
struct CoreTimeline {
    double scalar = 0;                  // when the scalar unit dispatches the next call
    std::array<double, kPipes> ready{};  // when each pipe has finished its last instruction
    std::map<double, double> link;      // busy intervals [start, end) of this core's GM link
    std::map<double, double> hbm;       // busy intervals of this core's share of HBM: its reads the L2 missed
    std::vector<std::pair<double, double>> write_backs;  // (start, cycles) of the L2's write-backs of its writes
    std::map<std::pair<int, int>, double> flags;  // (HardEvent, id) -> time the flag is set
    std::map<int, double> buffer_ready;          // queue buffer -> time of its last EnQue/FreeTensor
    BlockCost cost;
    std::vector<TraceEvent> trace;       // this block's intervals, in the order the model placed them
    uint64_t trace_dropped = 0;
};

struct Timeline : CoreTimeline {
    CostParams params;
    std::map<std::string, std::pair<double, double>, std::less<>> api_cost;  // name -> (cycles per repeat, extra passes)
    std::vector<std::string> trace_names;  // API names of the trace
    std::map<std::string, int, std::less<>> trace_index;
};

inline Timeline& timeline() {
    static Timeline t;
    return t;
}

inline void set_cost_params(const CostParams& p) {
    Timeline& t = timeline();
    t.params = p;
    t.api_cost.clear();
    for (uint64_t i = 0; i < p.n_apis; ++i) t.api_cost[p.api_names[i]] = {p.api_cycles_per_repeat[i], p.api_extra_passes[i]};
}

inline void reset_timeline() { static_cast<CoreTimeline&>(timeline()) = CoreTimeline{}; }


// ---- internals ----
inline int pipe_index(Pipe p) { return static_cast<int>(p); }

// Records one interval of the block's timeline (report.html draws them).
inline void trace(Pipe p, bool wait, double start, double end, std::string_view api) {
    Timeline& t = timeline();
    if (end <= start) return;
    if (t.trace.size() >= kTraceEvents) {
        ++t.trace_dropped;
        return;
    }
    auto it = t.trace_index.find(api);
    if (it == t.trace_index.end()) {
        it = t.trace_index.emplace(std::string(api), static_cast<int>(t.trace_names.size())).first;
        t.trace_names.emplace_back(api);
    }
    t.trace.push_back(TraceEvent{pipe_index(p), wait, start, end, it->second});
}

// The scalar unit dispatches one call; returns the earliest time the call's pipe may start it.
inline double dispatch() {
    Timeline& t = timeline();
    t.scalar += t.params.scalar_issue;
    t.cost.busy[pipe_index(Pipe::S)] += t.params.scalar_issue;
    trace(Pipe::S, false, t.scalar - t.params.scalar_issue, t.scalar, "dispatch");
    return t.scalar;
}

// Runs `cycles` of work on pipe p no earlier than `earliest`; returns the finish time.
inline double occupy(Pipe p, double earliest, double cycles, std::string_view api) {
    Timeline& t = timeline();
    double& ready = t.ready[pipe_index(p)];
    ready = std::max(ready, earliest) + cycles;
    t.cost.busy[pipe_index(p)] += cycles;
    trace(p, false, ready - cycles, ready, api);
    return ready;
}

// The time pipe `src` reaches this point of the program (all it was given so far is done).
inline double reached(Pipe src) {
    Timeline& t = timeline();
    return src == Pipe::S ? t.scalar : std::max(t.ready[pipe_index(src)], t.scalar);
}

// Pipe `dst` may not start anything before `time` (`why`: the wait, in the trace).
inline void hold(Pipe dst, double time, std::string_view why) {
    Timeline& t = timeline();
    double& r = dst == Pipe::S ? t.scalar : t.ready[pipe_index(dst)];
    trace(dst, true, r, time, why);
    r = std::max(r, time);
}

// Moves `cycles` of data from `start` on over each of `uses` (the core's GM link, its share of HBM) at once, in
// the gaps they all left (a transfer dispatched later may use them earlier), and with `record` marks them busy;
// returns when the last byte has moved.
inline double transfer(double start, double cycles, std::initializer_list<std::map<double, double>*> uses,
                       bool record = true) {
    if (cycles <= 0) return start;
    double t = start, left = cycles;
    while (left > 0) {
        for (bool moved = true; moved;) {  // the first time from t on that every resource is free
            moved = false;
            for (std::map<double, double>* busy : uses) {
                const auto it = busy->upper_bound(t);
                if (it != busy->begin() && std::prev(it)->second > t) t = std::prev(it)->second, moved = true;
            }
        }
        double next = t + left;
        bool last = true;  // no resource is busy again before the transfer is done
        for (std::map<double, double>* busy : uses) {
            const auto it = busy->upper_bound(t);
            if (it != busy->end() && it->first < next) next = it->first, last = false;
        }
        if (next > t && record)
            for (std::map<double, double>* busy : uses) (*busy)[t] = next;
        if (last) return next;
        left -= next - t;
        t = next;
    }
    return t;
}

inline BlockCost block_cost() {
    Timeline& t = timeline();
    BlockCost c = t.cost;
    c.cycles = t.scalar;
    for (const double r : t.ready) c.cycles = std::max(c.cycles, r);
    double drained = 0;  // the write-backs in turn, in the gaps the reads from HBM left: the block ends after them
    for (const auto& [start, cycles] : t.write_backs) drained = transfer(std::max(drained, start), cycles, {&t.hbm}, false);
    c.cycles = std::max(c.cycles, drained);
    return c;
}

// ---- hooks ----

// Counts one vector instruction of `elements` active lanes, `lane_bytes` wide, in `repeats` repeats,
// and runs it on the vector pipe: issue + repeats * cycles per repeat (+ its internal passes, once per
// round: a high-level API whose temporary buffer holds less than its whole input runs `rounds` times).
inline void count_vector(const char* api, uint64_t elements, uint64_t repeats, uint64_t lane_bytes,
                         uint64_t rounds = 1) {
    VecCount& c = st().counters.vec[api];
    c.calls += 1;
    c.elements += elements;
    c.rounds += rounds;
    Timeline& t = timeline();
    const auto it = t.api_cost.find(api);
    const auto [per_repeat, extra] = it == t.api_cost.end() ? std::pair<double, double>{1.0, 0.0} : it->second;
    const double passes = extra * static_cast<double>(rounds) * (t.params.vector_issue + t.params.barrier_drain);
    occupy(Pipe::V, dispatch(), t.params.vector_issue + passes + static_cast<double>(repeats) * per_repeat, api);
    t.cost.vector_ideal += static_cast<double>(elements * lane_bytes) / 256.0 * per_repeat;
}

// A DataCopy/DataCopyPad between GM and UB (or L1) on MTE2 (in) or MTE3 (out): start-up and bursts on the
// pipe, then the bytes over the core's GM link, which MTE2 and MTE3 share. `seen`: the bytes of a read the
// launch had read or written before, which the L2 serves while the launch's bytes fit it; the rest come from
// HBM, over the link and the core's share of HBM at once. While the launch's bytes fit the L2, a write lands in
// it at its write rate and the L2 writes it back over the core's share of HBM from then on, in the gaps the reads
// from HBM leave (a read goes first), which the block's span waits for (block_cost); else it goes to HBM as a read
// from it does.
inline void count_copy(Pipe p, uint64_t bursts, uint64_t bytes, uint64_t seen, const char* label = nullptr) {
    Timeline& t = timeline();
    const CostParams& k = t.params;
    double& ready = t.ready[pipe_index(p)];
    const bool fits = static_cast<double>(st().l2_bytes) <= k.l2_capacity;
    const bool write_back = p != Pipe::MTE2 && fits;
    const double hits = fits ? static_cast<double>(seen) : 0.0;
    const double in_l2 = write_back ? static_cast<double>(bytes) : hits;  // bytes between the core and the L2 only
    const double l2_share = bytes ? in_l2 / static_cast<double>(bytes) : 0.0;
    const double l2_burst = write_back ? k.l2_write_burst_cycles : k.l2_burst_cycles;
    const double setup = k.copy_setup + static_cast<double>(bursts) * (k.burst_cycles * (1 - l2_share) + l2_burst * l2_share);
    const double hbm = (static_cast<double>(bytes) - in_l2) / k.gm_bytes_per_cycle;
    const double cycles = hbm + in_l2 / (write_back ? k.l2_write_bytes_per_cycle : k.l2_bytes_per_cycle);
    const double begin = std::max(ready, dispatch());
    const double horizon = std::min(t.ready[pipe_index(Pipe::MTE2)], t.ready[pipe_index(Pipe::MTE3)]);
    while (!t.link.empty() && t.link.begin()->second <= horizon) t.link.erase(t.link.begin());  // no copy starts earlier
    ready = ascdsl_sim::transfer(ascdsl_sim::transfer(begin + setup, hbm, {&t.link, &t.hbm}), cycles - hbm, {&t.link});
    if (write_back) t.write_backs.emplace_back(begin + setup, in_l2 / k.gm_bytes_per_cycle);
    trace(p, false, begin, ready, label ? label : p == Pipe::MTE2 ? "DataCopy GM->UB" : "DataCopy UB->GM");
    t.cost.busy[pipe_index(p)] += setup + cycles;
    t.cost.copy_bytes += static_cast<double>(bytes);
    t.cost.l2_bytes += hits;
    t.cost.floor_bytes += static_cast<double>(bytes - seen);
    if (p == Pipe::MTE2) {
        t.cost.read_bytes += static_cast<double>(bytes);
        t.cost.read_premium += static_cast<double>(bursts) * (k.burst_cycles - k.l2_burst_cycles) +
                               static_cast<double>(bytes) * (1 / k.gm_bytes_per_cycle - 1 / k.l2_bytes_per_cycle);
    }
}

// A UB -> UB DataCopy runs on the vector pipe, one repeat per 256 bytes.
inline void count_ub_copy(uint64_t bytes) {
    Timeline& t = timeline();
    occupy(Pipe::V, dispatch(), t.params.vector_issue + std::ceil(static_cast<double>(bytes) / 256.0), "DataCopy UB->UB");
    t.cost.vector_ideal += static_cast<double>(bytes) / 256.0;
}

// PipeBarrier<p>: the pipe drains; PIPE_ALL (p = S here) waits for every pipe and the scalar unit.
inline void count_barrier(Pipe p, bool all) {
    Timeline& t = timeline();
    const double now = dispatch();
    if (!all) {
        occupy(p, now, t.params.barrier_drain, "PipeBarrier");
        return;
    }
    double done = now;
    for (const double r : t.ready) done = std::max(done, r);
    done += t.params.barrier_drain;
    for (int p = 0; p < kPipes; ++p) hold(static_cast<Pipe>(p), done, "PipeBarrier<PIPE_ALL>");
    t.ready.fill(done);
    t.scalar = done;
}

// SetFlag/WaitFlag, and the flags hidden in EnQue/DeQue (buffer handed to the consumer) and
// FreeTensor/AllocTensor (buffer handed back to the producer).
inline void count_set_flag(int event, int id, Pipe src) {
    dispatch();
    timeline().flags[{event, id}] = reached(src) + timeline().params.flag_latency;
}
inline void count_wait_flag(int event, int id, Pipe dst) {
    dispatch();
    hold(dst, timeline().flags[{event, id}], "WaitFlag");
}
inline void count_release(int buffer, Pipe src) {
    dispatch();
    timeline().buffer_ready[buffer] = reached(src) + timeline().params.flag_latency;
}
inline void count_acquire(int buffer, Pipe dst) {
    dispatch();
    hold(dst, timeline().buffer_ready[buffer], "queue buffer");
}

// A call that runs on the scalar unit only (GetValue/SetValue on UB, and with `gm` on GM): its dispatch, then
// the access itself, which holds the scalar unit.
inline void count_scalar(bool gm = false) {
    dispatch();
    Timeline& t = timeline();
    const double cycles = gm ? t.params.scalar_gm_latency : t.params.scalar_ub_access;
    trace(Pipe::S, false, t.scalar, t.scalar + cycles, gm ? "GM scalar access" : "UB scalar access");
    t.scalar += cycles;
    t.cost.busy[pipe_index(Pipe::S)] += cycles;
}

}  // namespace ascdsl_sim

#endif  // ASCDSL_SIM_ASCDSL_SIM_COST_H
