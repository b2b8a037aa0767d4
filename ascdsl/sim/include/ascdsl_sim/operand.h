// Operand bookkeeping shared by every UB instruction: lanes and strides, bounds, alignment,
// overlap, tensor lifetime and hazard checks.
#ifndef ASCDSL_SIM_ASCDSL_SIM_OPERAND_H
#define ASCDSL_SIM_ASCDSL_SIM_OPERAND_H
#include <type_traits>

#include "tensor.h"

namespace ascdsl_sim {

// A repeat count as Ascend C's uint8_t parameter, kept wide so that values over 255 are caught
// instead of wrapping silently as they would on the device.
struct RepeatTimes {
    int64_t value;
    template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
    RepeatTimes(I v) : value(static_cast<int64_t>(v)) {}
};

// The active lanes of one repeat and how many repeats run.
struct Lanes {
    std::vector<uint32_t> active;
    uint32_t repeat = 1;
    uint64_t elements() const { return static_cast<uint64_t>(active.size()) * repeat; }
};

// Counts and costs a vector instruction over lanes `lane_bytes` wide (the wider type for a Cast):
// every repeat with an active lane is a full repeat; the count form runs ceil(bytes / 256) repeats.
inline void count_vector(const char* api, const Lanes& l, uint64_t lane_bytes) {
    const uint64_t per_repeat = (static_cast<uint64_t>(l.active.size()) * lane_bytes + 255) / 256;
    count_vector(api, l.elements(), l.repeat * per_repeat, lane_bytes);
}

// Block and repeat strides of one operand, in 32-byte blocks.
struct Stride {
    uint32_t blk = 1, rep = 8;
};

inline void check_repeat(const char* api, int64_t repeat) {
    require(repeat >= 0 && repeat <= 255, api, "repeatTimes ", repeat, " is outside [0, 255]");
}

// Count form: `count` contiguous elements (counter mode: no repeat or 255 limit).
inline Lanes count_lanes(const char* api, int64_t count) {
    require(count >= 0, api, "count ", count, " is negative");
    Lanes l;
    l.active.resize(static_cast<size_t>(count));
    for (uint32_t i = 0; i < count; ++i) l.active[i] = i;
    return l;
}

// Continuous mask: the first `mask` lanes of every repeat.
inline Lanes mask_lanes(const char* api, uint64_t mask, int64_t repeat, uint32_t per_repeat) {
    check_repeat(api, repeat);
    require(mask <= per_repeat, api, "mask ", mask, " exceeds the ", per_repeat, " elements of one repeat");
    Lanes l;
    l.repeat = static_cast<uint32_t>(repeat);
    for (uint32_t i = 0; i < mask; ++i) l.active.push_back(i);
    return l;
}

// Bit mask: lane i is active when bit i of mask[i / 64] is set.
inline Lanes mask_lanes(const char* api, const uint64_t mask[], int64_t repeat, uint32_t per_repeat) {
    check_repeat(api, repeat);
    require(per_repeat > 64 || mask[1] == 0, api, "mask[1] must be 0 for 32-bit types (64 lanes per repeat)");
    Lanes l;
    l.repeat = static_cast<uint32_t>(repeat);
    for (uint32_t i = 0; i < per_repeat; ++i)
        if (mask[i / 64] >> (i % 64) & 1) l.active.push_back(i);
    return l;
}

// Element offsets, in lane order, that an operand with `elems_per_block` elements per 32-byte block touches.
inline std::vector<uint32_t> lane_offsets(const Lanes& l, Stride s, uint32_t elems_per_block) {
    std::vector<uint32_t> out;
    out.reserve(l.elements());
    for (uint32_t r = 0; r < l.repeat; ++r)
        for (uint32_t lane : l.active)
            out.push_back((r * s.rep + lane / elems_per_block * s.blk) * elems_per_block + lane % elems_per_block);
    return out;
}

// One UB operand of an instruction.
struct Operand {
    const char* name;
    uint64_t addr, size, esize;  // byte address, length in elements, element bytes
    int buf;
    uint32_t gen;
    std::vector<uint32_t> idx;   // element offsets touched
    uint64_t lo = 0, hi = 0;     // byte extent touched
};

template <class T>
Operand operand(const char* name, const AscendC::LocalTensor<T>& t, std::vector<uint32_t> idx) {
    Operand o{name, t.addr(), t.GetSize(), sizeof(T), t.buffer(), t.generation(), std::move(idx)};
    if (!o.idx.empty()) {
        const auto [mn, mx] = std::minmax_element(o.idx.begin(), o.idx.end());
        o.lo = o.addr + *mn * o.esize;
        o.hi = o.addr + (*mx + 1) * o.esize;
    }
    return o;
}

template <class T>
Operand contiguous(const char* name, const AscendC::LocalTensor<T>& t, uint64_t count) {
    std::vector<uint32_t> idx(count);
    for (uint32_t i = 0; i < count; ++i) idx[i] = i;
    return operand(name, t, std::move(idx));
}

// Lifetime, alignment and bounds of an operand.
inline void check_operand(const char* api, const Operand& o, uint64_t align = 32) {
    touch_buffer(api, o.buf, o.gen, o.name);
    require(o.addr % align == 0, api, "UB operand ", o.name, " at offset ", o.addr, " is not ", align,
            "-byte aligned");
    if (o.idx.empty()) return;
    const uint64_t last = (o.hi - o.addr) / o.esize - 1;
    require(last < o.size, api, "operand ", o.name, " touches element ", last, " of a tensor of ", o.size,
            " elements");
    require(o.hi <= st().ub_bytes, api, "operand ", o.name, " runs past the end of UB");
}

// dst may share a src's storage only when both start at the same byte and dst elements are not wider.
inline void check_overlap(const char* api, const Operand& dst, const Operand& src, bool allow_same_start = true) {
    if (dst.idx.empty() || src.idx.empty() || dst.hi <= src.lo || src.hi <= dst.lo) return;
    if (allow_same_start && dst.addr == src.addr && dst.esize <= src.esize) return;
    fail(api, "partial overlap of ", dst.name, " [", dst.lo, ", ", dst.hi, ") and ", src.name, " [", src.lo, ", ",
         src.hi, ") is not allowed");
}

template <class F>
void for_each_run(const Operand& o, F f) {
    size_t i = 0;
    while (i < o.idx.size()) {
        size_t j = i + 1;
        while (j < o.idx.size() && o.idx[j] == o.idx[j - 1] + 1) ++j;
        f(o.addr + o.idx[i] * o.esize, (j - i) * o.esize);
        i = j;
    }
}

inline void read_operand(const char* api, Pipe p, const Operand& o) {
    for_each_run(o, [&](uint64_t addr, uint64_t bytes) { ub_read(api, p, addr, bytes); });
}
inline void write_operand(const char* api, Pipe p, uint32_t time, const Operand& o) {
    for_each_run(o, [&](uint64_t addr, uint64_t bytes) { ub_write(api, p, time, addr, bytes); });
}

}  // namespace ascdsl_sim

#endif  // ASCDSL_SIM_ASCDSL_SIM_OPERAND_H
