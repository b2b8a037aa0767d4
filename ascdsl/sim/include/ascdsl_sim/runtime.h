// Per-block simulator state: UB arena, GM buffers, counters, queue buffers and the hazard checker.
#ifndef ASCDSL_SIM_ASCDSL_SIM_RUNTIME_H
#define ASCDSL_SIM_ASCDSL_SIM_RUNTIME_H
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "types.h"

// The core a block runs on: g_coreType (macros.h) and ASCEND_IS_AIC / ASCEND_IS_AIV read it.
enum KernelCoreType { AIV = 0, AIC = 1 };

namespace ascdsl_sim {

// A check that failed; the launcher adds the block index.
struct Failure {
    std::string api, reason;
};

template <class... Parts>
[[noreturn]] void fail(const char* api, const Parts&... parts) {
    std::ostringstream os;
    (os << ... << parts);
    throw Failure{api, os.str()};
}

template <class... Parts>
inline void require(bool ok, const char* api, const Parts&... parts) {
    if (!ok) fail(api, parts...);
}

// The pipes of an AI vector core that touch UB, and the cube unit of an AI cube core (M: it never touches
// UB, so the hazard checker's stamps, two bits of pipe, never name it).
enum class Pipe : uint8_t { MTE2, V, MTE3, S, M, MTE1 };
constexpr int kPipes = 6;
inline const char* pipe_name(Pipe p) {
    static const char* const names[] = {"PIPE_MTE2", "PIPE_V", "PIPE_MTE3", "PIPE_S", "PIPE_M"};
    return names[static_cast<int>(p)];
}
inline const char* pipe_short(Pipe p) {
    static const char* const names[] = {"MTE2", "V", "MTE3", "S", "M", "MTE1"};
    return names[static_cast<int>(p)];
}

struct CostParams;  // cost.h

// What Python passes to a launch (mirrored by ascdsl/sim/runner.py::_LaunchConfig).
struct LaunchConfig {
    const char* platform;
    uint64_t ub_bytes;
    uint64_t ub_budget_bytes;  // Compare/Select use the reserved UB above this offset
    uint64_t bf16;             // the platform has bf16 conversions
    uint64_t check_hazards;
    uint64_t check_vv;
    uint64_t block_dim;
    const int64_t* order;  // block_dim block indices, in run order
    uint64_t tiling_key;
    uint64_t n_regions;
    const uint64_t* region_base;
    const uint64_t* region_bytes;
    const CostParams* cost;
    uint64_t mix;  // a MIX kernel: each block runs as its AI cube core and its two AI vector cores (cross_core.h)
};

struct VecCount {
    uint64_t calls = 0, elements = 0, rounds = 0;  // rounds: a high-level API's passes over its temporary buffer
};
struct Counters {
    uint64_t gm_read_bytes = 0, gm_write_bytes = 0, gm_copies = 0, ub_copies = 0, ub_peak_bytes = 0;
    std::map<std::string, VecCount> vec;
};

struct GmRegion {
    uintptr_t base;
    uint64_t bytes;
    // block that wrote each byte; kNoOwner when none, kAtomicBy | block when that block alone accumulated it
    // atomically, kAtomicOwner when several blocks did
    std::vector<uint32_t> owner;
    // For each byte a core of a MIX kernel wrote: its cross_core_sets at the write (the write is published by
    // its next CrossCoreSetFlag, of any flag id); kNoOwner when no core of one did.
    std::vector<uint32_t> published;
    // For each byte a core of a MIX kernel read: its block << 32 and its cross_core_sets at the read (the read
    // is signalled done by its next CrossCoreSetFlag, of any flag id); kNoRead when no core of one did.
    std::vector<uint64_t> read_by;
};
constexpr uint32_t kNoOwner = 0xFFFFFFFF, kAtomicOwner = 0xFFFFFFFE, kAtomicBy = 0x80000000, kByAiv = 0x80000000,
                   kAivShift = 30, kSetCount = 0x3FFFFFFF;
constexpr uint64_t kNoRead = ~uint64_t{0};

// SetAtomicAdd/Max/Min: how MTE3 combines UB data with GM (reference: SetAtomicAdd).
enum class Atomic : uint8_t { None, Add, Max, Min };

enum class BufState : uint8_t { Free, Allocated, Queued, Dequeued };
struct QueueBuffer {
    int queue;
    uint32_t addr, bytes;
    BufState state = BufState::Free;
    uint32_t gen = 0;                     // bumped by each AllocTensor: stale handles are detected
    std::array<uint32_t, kPipes> flag{};  // vector clock carried by EnQue/FreeTensor
    Pipe handed_by = Pipe::V, handed_to = Pipe::V;  // the pipes of its last EnQue's hand-over
};
struct Queue {
    int position;  // AscendC::TPosition
    int depth;
    bool is_tbuf;
    Pipe producer, consumer;
    std::vector<int> buffers;
    std::deque<int> queued;
    size_t cursor = 0;  // AllocTensor takes buffers round-robin from here, as CANN's TQue does
};

struct PendingFlag {
    bool set = false;
    std::array<uint32_t, kPipes> clock{};
};

// One 64-byte line of the scalar unit's data cache: bytes written by GlobalTensor::SetValue and not yet
// written back, and whether DMA has overwritten GM under it since the scalar unit cached it.
struct DcacheLine {
    uint64_t dirty = 0;  // bit i: byte i of the line
    bool stale = false;
};

// What one core of a block owns: its UB (or cube memories), hazard checker, queues, scalar data cache and
// counters. A MIX block's three cores each have one (launch_run.h swaps the running core's in and out of
// st()); every other block has the one in State.
struct CoreState {
    std::vector<uint8_t> ub_storage;
    uint8_t* ub = nullptr;
    Counters counters;
    // Hazard checker: per UB byte, (time << 2 | pipe) of its last write, and of its last read by each pipe
    // that can have a read pending (V and MTE3: a later read on another pipe does not make an earlier,
    // unsynchronised one safe; MTE2 never reads UB and a scalar read is complete when it returns); 0 = none.
    std::vector<uint32_t> stamp;
    std::array<std::vector<uint32_t>, kPipes> read_stamp;  // indexed by pipe; empty for MTE2 and S
    std::vector<const char*> op_name;  // API name by time
    uint32_t now = 0;
    uint32_t vc[kPipes][kPipes] = {};  // vc[p][q]: pipe p knows pipe q's ops up to this time are done
    std::map<std::pair<int, int>, PendingFlag> flags;  // (HardEvent, event id)
    std::vector<Queue> queues;
    std::vector<QueueBuffer> buffers;
    uint64_t ub_used = 0;
    std::map<uintptr_t, DcacheLine> dcache;  // by line address
    Atomic atomic = Atomic::None;
    const char* atomic_type = "";  // element type named by SetAtomicAdd<T> (and friends)
    int64_t fail_region = -1;  // the GM region (index in gm) a failed GM check concerns, or the nearest
    // The cube core's buffers (cube.h): L1, L0A, L0B, L0C, each a separate memory with its own allocator.
    std::array<std::vector<uint8_t>, 4> cube_storage;
    std::array<uint8_t*, 4> cube = {};
    std::array<uint64_t, 4> cube_used = {};
    // The core it is (MIX kernels, cross_core.h) and its sub-block (GetSubBlockIdx) on an AIV.
    KernelCoreType core = AIV;
    int64_t sub_block = 0;
    int64_t block_idx = 0;  // the block it runs (a context of the launch's blocks keeps its own: grid_sync.h)
};

// The cross-core flags of a MIX block's group (cross_core.h), kept with the time each set was issued on its
// setter's timeline (a wait completes no earlier). A set by the AIC counts once for each AIV; the AIC's wait
// takes one set of each AIV.
// A CrossCoreSetFlag: when it reaches its waiter (cost model) and how many sets of any flag id its core had
// made before it (the GM publication check: a write or read before it is signalled by it).
struct CrossCoreSet {
    double at;
    uint32_t index;
};
struct FlagGroup {
    std::array<std::vector<CrossCoreSet>, 16> aic_sets;                 // per flag id
    std::array<std::array<uint32_t, 16>, 2> aiv_taken = {};              // per AIV and flag id: of aic_sets
    std::array<std::array<std::vector<CrossCoreSet>, 16>, 2> aiv_sets;  // per AIV and flag id
    std::array<uint32_t, 16> aic_taken = {};                             // per flag id: of each AIV's aiv_sets
    uint32_t aic_set_total = 0;
    std::array<uint32_t, 2> aiv_set_total = {};
    // The GM publication check, over the sets a core's waits took on any flag id: the AIC's of each AIV's sets,
    // each AIV's of the AIC's, how many sets the setter had made up to the latest one taken.
    std::array<uint32_t, 2> aic_seen = {}, aiv_seen = {};
};

struct ReadRange {
    uintptr_t end;
    std::vector<uint32_t> blocks;
};
constexpr uint32_t kUnshared = 0xFFFFFFFF;

// The launch's state: the running core's (CoreState) and what the cores and blocks of the launch share.
struct State : CoreState {
    std::string platform = "Ascend910B3";
    uint64_t ub_bytes = 192 * 1024, ub_budget = 184 * 1024;
    bool bf16 = true, check_hazards = true, check_vv = true;
    int64_t block_num = 1;
    uint64_t tiling_key = 0;
    std::vector<GmRegion> gm;
    bool mix = false;  // a MIX kernel: each block runs as an AIC and its two AIVs
    FlagGroup flag_group;
    // The L2 (cost model): GM byte ranges [start, end) this launch has read or written, disjoint and not
    // adjacent, and how many bytes they hold.
    std::map<uintptr_t, uintptr_t> l2;
    uint64_t l2_bytes = 0;
    // Who read what (the first reads shared by the blocks that run together, launch_run.h): GM byte ranges
    // [start, end) the copies of the launch read, disjoint, with the blocks that read each in run order;
    // kUnshared among them when a write or a scalar read touched the range (its first fetch is left as charged).
    std::map<uintptr_t, ReadRange> readers;
};

inline State& st() {
    static State s;
    return s;
}

// Fresh, poisoned UB and empty bookkeeping for the next block (for the running core's state).
inline void reset_block(int64_t idx, int64_t num) {
    State& s = st();
    s.block_idx = idx;
    s.block_num = num;
    s.fail_region = -1;
    s.ub_storage.assign(s.ub_bytes + 64, 0xFF);
    s.ub = s.ub_storage.data() + (32 - reinterpret_cast<uintptr_t>(s.ub_storage.data()) % 32) % 32;
    s.stamp.assign(s.ub_bytes, 0);
    for (const Pipe p : {Pipe::V, Pipe::MTE3}) s.read_stamp[static_cast<int>(p)].assign(s.ub_bytes, 0);
    s.op_name.assign(1, "");
    s.now = 0;
    std::fill(&s.vc[0][0], &s.vc[0][0] + kPipes * kPipes, 0u);
    s.flags.clear();
    s.queues.clear();
    s.buffers.clear();
    s.ub_used = 0;
    s.atomic = Atomic::None;
    s.dcache.clear();
    s.counters = Counters{};
    for (int m = 0; m < 4; ++m) s.cube_used[m] = 0, s.cube[m] = nullptr;  // allocated by the first cube InitBuffer
}

// ---- memories ----
// The cube core's memories (reference section 4: l1_size, l0_a/b, l0_c of the platform ini).
enum class CubeMem : uint8_t { L1, L0A, L0B, L0C };
constexpr uint64_t kCubeMemBytes[4] = {512 * 1024, 64 * 1024, 64 * 1024, 128 * 1024};
inline const char* cube_mem_name(int m) {
    static const char* const names[] = {"L1", "L0A", "L0B", "L0C"};
    return names[m];
}
// The cube memory of a TPosition (AscendC numbering: A1 = 1, A2, B1, B2, C1, C2, CO1 = 7), or -1 for UB.
inline int cube_mem_of(int position) {
    switch (position) {
    case 1: case 3: case 5: return static_cast<int>(CubeMem::L1);  // A1, B1, C1
    case 2: return static_cast<int>(CubeMem::L0A);                 // A2
    case 4: return static_cast<int>(CubeMem::L0B);                 // B2
    case 7: return static_cast<int>(CubeMem::L0C);                 // CO1
    default: return -1;
    }
}
// The bytes a LocalTensor of `position` addresses from.
inline uint8_t* mem_base(int position) {
    const int m = cube_mem_of(position);
    return m < 0 ? st().ub : st().cube[m];
}

// ---- hazard checker ----
// Starts an operation and returns its time stamp.
inline uint32_t begin_op(const char* api) {
    State& s = st();
    s.op_name.push_back(api);
    return ++s.now;
}

// The synchronisation that orders an access on pipe `next` after one on pipe `prev`.
inline std::string needed_sync(Pipe prev, Pipe next) {
    if (prev == Pipe::V && next == Pipe::V) return "PipeBarrier<PIPE_V>()";
    const std::string flag = std::string("SetFlag/WaitFlag<HardEvent::") + pipe_short(prev) + "_" + pipe_short(next) + ">";
    if ((prev == Pipe::MTE2 && next == Pipe::V) || (prev == Pipe::V && next == Pipe::MTE3)) return flag + " (or EnQue/DeQue)";
    if ((prev == Pipe::V && next == Pipe::MTE2) || (prev == Pipe::MTE3 && next == Pipe::V))
        return flag + " (or FreeTensor/AllocTensor)";
    return flag;
}

enum class Access { ReadAfterWrite, WriteAfterWrite, WriteAfterRead };

// Fails unless pipe `p` may now access UB bytes [addr, addr+bytes) given their last write (or, for
// WriteAfterRead, their last read by pipe `reader`). One pipe runs in order, except that a vector read of a
// vector result needs PipeBarrier<PIPE_V> (unless check_vv is off); a scalar read is complete before anything
// after it issues.
inline void check_order(const char* api, Pipe p, uint64_t addr, uint64_t bytes, Access kind, Pipe reader = Pipe::S) {
    State& s = st();
    if (!s.check_hazards) return;
    const bool war = kind == Access::WriteAfterRead;
    const uint32_t* stamp = (war ? s.read_stamp[static_cast<int>(reader)] : s.stamp).data() + addr;
    uint32_t last_ok = 0;
    for (uint64_t i = 0; i < bytes; ++i) {
        const uint32_t w = stamp[i];
        if (w == last_ok) continue;
        const Pipe prev = static_cast<Pipe>(w & 3);
        const uint32_t t = w >> 2;
        const bool vv_barrier = kind == Access::ReadAfterWrite && p == Pipe::V && s.check_vv;
        if ((prev == p && !vv_barrier) || (war && prev == Pipe::S) ||
            s.vc[static_cast<int>(p)][static_cast<int>(prev)] >= t) {
            last_ok = w;
            continue;
        }
        char where[64];
        std::snprintf(where, sizeof where, "0x%llx", static_cast<unsigned long long>(addr + i));
        fail(api, "missing synchronisation: ", pipe_name(p), kind == Access::ReadAfterWrite ? " reads" : " overwrites",
             " UB byte ", where, war ? " read by " : " written by ", s.op_name[t], " on ", pipe_name(prev), " (op #", t,
             ") with no ", needed_sync(prev, p), " in between");
    }
}

// Pipe `reader` reads UB bytes [addr, addr+bytes) in the current operation.
inline void ub_read(const char* api, Pipe reader, uint64_t addr, uint64_t bytes) {
    State& s = st();
    check_order(api, reader, addr, bytes, Access::ReadAfterWrite);
    std::vector<uint32_t>& rs = s.read_stamp[static_cast<int>(reader)];
    if (!rs.empty()) std::fill_n(rs.data() + addr, bytes, s.now << 2 | static_cast<uint32_t>(reader));
}

// Pipe `writer` writes UB bytes [addr, addr+bytes) in the operation stamped `time`.
inline void ub_write(const char* api, Pipe writer, uint32_t time, uint64_t addr, uint64_t bytes) {
    State& s = st();
    check_order(api, writer, addr, bytes, Access::WriteAfterWrite);
    for (const Pipe reader : {Pipe::V, Pipe::MTE3})
        if (reader != writer) check_order(api, writer, addr, bytes, Access::WriteAfterRead, reader);
    std::fill_n(s.stamp.data() + addr, bytes, time << 2 | static_cast<uint32_t>(writer));
}

// A flag set by `src` now: everything src has done so far, plus what src already knew.
inline std::array<uint32_t, kPipes> flag_clock(Pipe src) {
    State& s = st();
    std::array<uint32_t, kPipes> c;
    for (int q = 0; q < kPipes; ++q) c[q] = s.vc[static_cast<int>(src)][q];
    c[static_cast<int>(src)] = s.now;
    return c;
}
inline void merge_clock(Pipe dst, const std::array<uint32_t, kPipes>& c) {
    State& s = st();
    for (int q = 0; q < kPipes; ++q) s.vc[static_cast<int>(dst)][q] = std::max(s.vc[static_cast<int>(dst)][q], c[q]);
}
inline void barrier(Pipe p) { st().vc[static_cast<int>(p)][static_cast<int>(p)] = st().now; }
inline void barrier_all() {
    State& s = st();
    for (auto& row : s.vc) std::fill(row, row + kPipes, s.now);
}

// ---- tensor lifetime ----
inline void touch_buffer(const char* api, int buf, uint32_t gen, const char* operand) {
    if (buf < 0) return;
    const QueueBuffer& b = st().buffers[buf];
    if (b.gen != gen || b.state == BufState::Free)
        fail(api, "operand ", operand, " uses a tensor after FreeTensor (queue buffer #", buf, ")");
    if (b.state == BufState::Queued)
        fail(api, "operand ", operand, " touches a tensor between EnQue and DeQue (queue buffer #", buf, ")");
}

// ---- GM ----
inline GmRegion& gm_region(const char* api, const void* p, uint64_t bytes, const char* what) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    uint64_t nearest = UINT64_MAX;
    for (GmRegion& r : st().gm) {
        if (a >= r.base && a + bytes <= r.base + r.bytes) return r;
        // the region the access starts in, else the one its start is nearest: a run past a buffer's
        // end belongs to that buffer, whatever lies after it and however long the access
        const uint64_t gap = a < r.base ? r.base - a : a < r.base + r.bytes ? 0 : a - (r.base + r.bytes);
        if (gap < nearest) nearest = gap, st().fail_region = &r - st().gm.data();
    }
    char buf[96];
    std::snprintf(buf, sizeof buf, "%p..+%llu", p, static_cast<unsigned long long>(bytes));
    fail(api, "GM ", what, " [", buf, " bytes) is outside every GM buffer passed to the kernel");
}

// Records GM bytes [p, p + bytes) as moved through the L2 in this launch; returns how many of them it held
// already (read or written earlier in the launch, by this block or another).
inline uint64_t l2_touch(const void* p, uint64_t bytes) {
    State& s = st();
    const uintptr_t lo = reinterpret_cast<uintptr_t>(p), hi = lo + bytes;
    uintptr_t start = lo, end = hi;
    uint64_t seen = 0;
    auto it = s.l2.upper_bound(lo);
    if (it != s.l2.begin() && std::prev(it)->second >= lo) --it;
    while (it != s.l2.end() && it->first <= hi) {
        seen += std::min(hi, it->second) > std::max(lo, it->first) ? std::min(hi, it->second) - std::max(lo, it->first) : 0;
        start = std::min(start, it->first), end = std::max(end, it->second);
        it = s.l2.erase(it);
    }
    s.l2[start] = end;
    s.l2_bytes += bytes - seen;
    return seen;
}

// Notes `who` (a block, or kUnshared) as a reader of GM bytes [lo, hi) in State::readers. The blocks of a launch
// that is not MIX run one after another, so a block already noted is the last of a range's readers.
inline void note_reader(uintptr_t lo, uintptr_t hi, uint32_t who) {
    std::map<uintptr_t, ReadRange>& m = st().readers;
    auto it = m.upper_bound(lo);
    if (it != m.begin() && std::prev(it)->second.end > lo) {
        --it;
        if (it->first < lo) {  // split the range that starts before lo
            ReadRange tail = it->second;
            it->second.end = lo;
            it = m.emplace_hint(std::next(it), lo, std::move(tail));
        }
    }
    for (uintptr_t at = lo; at < hi;) {
        if (it == m.end() || it->first > at) {  // a gap no read has covered yet
            const uintptr_t end = it == m.end() ? hi : std::min(hi, it->first);
            it = m.emplace_hint(it, at, ReadRange{end, {who}});
        } else if (it->second.end > hi) {  // split the range that ends after hi
            ReadRange tail = it->second;
            it->second.end = hi;
            m.emplace_hint(std::next(it), hi, std::move(tail));
        }
        if (it->second.blocks.back() != who) it->second.blocks.push_back(who);
        if (it != m.begin() && std::prev(it)->second.end == it->first && std::prev(it)->second.blocks == it->second.blocks) {
            std::prev(it)->second.end = it->second.end;
            it = std::prev(m.erase(it));
        }
        at = it->second.end;
        ++it;
    }
}

// The running core of a MIX block and the CrossCoreSetFlag it has made: on an AIV, kByAiv and its sub-block
// at kAivShift.
inline uint32_t cross_core_sets(const State& s) {
    const FlagGroup& g = s.flag_group;
    if (s.core == AIC) return g.aic_set_total;
    const auto sub = static_cast<uint32_t>(s.sub_block);
    return kByAiv | (sub << kAivShift) | g.aiv_set_total[sub];
}

// Whether the running core has taken a set (a wait on any flag id) that the core of `sets` (cross_core_sets of
// the other core type) made after its count: what it wrote or read then is signalled to the running core.
inline bool signalled(const State& s, uint32_t sets) {
    const FlagGroup& g = s.flag_group;
    const uint32_t seen = (sets & kByAiv) != 0 ? g.aic_seen[(sets >> kAivShift) & 1] : g.aiv_seen[static_cast<size_t>(s.sub_block)];
    return seen > (sets & kSetCount);
}

// The core's name in an error: "the AIC" or "AIV <sub-block>".
inline std::string core_name(const State& s) {
    return s.core == AIC ? "the AIC" : "AIV " + std::to_string(s.sub_block);
}

// On a core of a MIX kernel, GM bytes the other core type of its block read must have been signalled read (a
// CrossCoreSetFlag after the read, which this core waited for) before it overwrites them.
inline void check_overwrite(const char* api, GmRegion& r, uint64_t off, uint64_t bytes) {
    State& s = st();
    const bool by_aiv = s.core == AIV;
    for (uint64_t i = 0; i < bytes; ++i) {
        const uint64_t e = r.read_by[off + i];
        const uint32_t sets = static_cast<uint32_t>(e);
        if (e == kNoRead || (e >> 32) != static_cast<uint64_t>(s.block_idx) || ((sets & kByAiv) != 0) == by_aiv) continue;
        if (!signalled(s, sets)) {
            s.fail_region = &r - s.gm.data();
            fail(api, "GM byte ", off + i, " of a ", r.bytes, "-byte buffer is written by ", core_name(s), " of block ",
                 s.block_idx, " before the read of ", by_aiv ? "the AIC" : "an AIV", " of block ", s.block_idx,
                 " is signalled to it (CrossCoreSetFlag after the read, CrossCoreWaitFlag before the write)");
        }
    }
}

// On an AIV of a MIX kernel, bytes its AIC wrote must have been published by a CrossCoreSetFlag the AIV
// waited for; on its AIC, bytes its AIVs wrote by CrossCoreSetFlags of theirs the AIC waited for (the
// simulator runs one core at a time, so the data may be there either way: the check is what tells).
// `copy`: a DataCopy's read (MTE2), whose first fetch the blocks running together share; else a scalar read.
inline uint64_t gm_read(const char* api, const void* p, uint64_t bytes, bool copy = false) {
    if (bytes == 0) return 0;
    GmRegion& r = gm_region(api, p, bytes, "read");
    State& s = st();
    if (s.mix && s.core == AIC && !r.published.empty()) {
        const uint64_t off = reinterpret_cast<uintptr_t>(p) - r.base;
        for (uint64_t i = 0; i < bytes; ++i) {
            const uint32_t e = r.published[off + i];
            if (e == kNoOwner || !(e & kByAiv)) continue;
            if (r.owner[off + i] != static_cast<uint32_t>(s.block_idx) || !signalled(s, e)) {
                s.fail_region = &r - s.gm.data();
                fail(api, "GM byte ", off + i, " of a ", r.bytes, "-byte buffer is read by the AIC of block ",
                     s.block_idx, " before the write of an AIV of block ", r.owner[off + i], " is signalled to it "
                     "(CrossCoreSetFlag after the write, CrossCoreWaitFlag before the read)");
            }
        }
    }
    if (s.mix && s.core == AIV && !r.published.empty()) {
        const uint64_t off = reinterpret_cast<uintptr_t>(p) - r.base;
        for (uint64_t i = 0; i < bytes; ++i) {
            const uint32_t e = r.published[off + i];
            if (e == kNoOwner || (e & kByAiv)) continue;
            if (r.owner[off + i] != static_cast<uint32_t>(s.block_idx) || !signalled(s, e)) {
                s.fail_region = &r - s.gm.data();
                fail(api, "GM byte ", off + i, " of a ", r.bytes, "-byte buffer is read by AIV ", s.sub_block,
                     " of block ", s.block_idx, " before the write of the AIC of block ", r.owner[off + i],
                     " is signalled to it (CrossCoreSetFlag after the write, CrossCoreWaitFlag before the read)");
            }
        }
    }
    if (s.mix) {
        if (r.read_by.empty()) r.read_by.assign(r.bytes, kNoRead);
        std::fill_n(r.read_by.begin() + static_cast<int64_t>(reinterpret_cast<uintptr_t>(p) - r.base), bytes,
                    static_cast<uint64_t>(s.block_idx) << 32 | cross_core_sets(s));
    }
    s.counters.gm_read_bytes += bytes;
    if (!s.mix) {
        const uintptr_t lo = reinterpret_cast<uintptr_t>(p);
        note_reader(lo, lo + bytes, copy ? static_cast<uint32_t>(s.block_idx) : kUnshared);
    }
    return l2_touch(p, bytes);
}

// Plain writes of different blocks must not touch the same byte, unless the later one writes the value
// the byte holds (``data``: the bytes about to be written; two programs storing one result alike, as a
// device gives whatever their order); atomic writes (SetAtomicAdd...) of any number of blocks may, as
// long as no block writes that byte plainly, but the one block that alone accumulated it (its MTE3 copies run
// in order: the plain write lands last, as the interpreter's program order says).
inline void gm_write(const char* api, const void* p, uint64_t bytes, bool atomic = false, const void* data = nullptr) {
    if (bytes == 0) return;
    GmRegion& r = gm_region(api, p, bytes, "write");
    State& s = st();
    if (r.owner.empty()) r.owner.assign(r.bytes, kNoOwner);
    const uint64_t off = reinterpret_cast<uintptr_t>(p) - r.base;
    if (s.mix && !r.read_by.empty()) check_overwrite(api, r, off, bytes);
    const uint32_t me = static_cast<uint32_t>(s.block_idx);
    const uint8_t* now = static_cast<const uint8_t*>(p);
    const uint8_t* next = static_cast<const uint8_t*>(data);
    for (uint64_t i = 0; i < bytes; ++i) {
        uint32_t& o = r.owner[off + i];
        const bool accumulated = o != kNoOwner && (o & kAtomicBy) != 0;  // by one block or by several
        const bool mine = o == kNoOwner || o == me || o == (kAtomicBy | me);
        const bool alike = next != nullptr && !atomic && !accumulated && now[i] == next[i];
        const bool ok = mine || (atomic && accumulated) || alike;
        if (!ok) s.fail_region = &r - s.gm.data();
        if (!ok && accumulated)
            fail(api, "GM byte ", off + i, " of a ", r.bytes,
                 "-byte buffer is accumulated atomically (SetAtomicAdd...) by ",
                 o == kAtomicOwner ? "several blocks" : "block " + std::to_string(o & ~kAtomicBy),
                 " and written plainly by block ", s.block_idx, " (blocks must write disjoint GM)");
        if (!ok)
            fail(api, "GM byte ", off + i, " of a ", r.bytes, "-byte buffer is written by block ", o, " and by block ",
                 s.block_idx, atomic ? " (atomically)" : next ? " with another value" : "", " (blocks must write disjoint GM)");
        o = !atomic ? me : mine ? (kAtomicBy | me) : kAtomicOwner;
    }
    if (s.mix) {
        if (r.published.empty()) r.published.assign(r.bytes, kNoOwner);
        std::fill_n(r.published.begin() + static_cast<int64_t>(off), bytes, cross_core_sets(s));
    }
    s.counters.gm_write_bytes += bytes;
    if (!s.mix) note_reader(reinterpret_cast<uintptr_t>(p), reinterpret_cast<uintptr_t>(p) + bytes, kUnshared);
    l2_touch(p, bytes);
}

}  // namespace ascdsl_sim

#endif  // ASCDSL_SIM_ASCDSL_SIM_RUNTIME_H
