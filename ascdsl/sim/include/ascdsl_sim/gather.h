// Gather (UB gather by byte offsets), GatherMask (compaction by a bit pattern) and CreateVecIndex.
#ifndef ASCDSL_SIM_ASCDSL_SIM_GATHER_H
#define ASCDSL_SIM_ASCDSL_SIM_GATHER_H
#include "vector.h"

namespace AscendC {

struct GatherRepeatParams {
    GatherRepeatParams() = default;
    GatherRepeatParams(const uint8_t dstBlkStrideIn, const uint8_t dstRepStrideIn)
        : dstRepStride(dstRepStrideIn), dstBlkStride(dstBlkStrideIn) {}
    uint32_t blockNumber = 8;
    uint16_t dstRepStride = 8;
    uint8_t dstBlkStride = 1, src0BlkStride = 1, src1BlkStride = 1, src0RepStride = 8, src1RepStride = 8;
    bool repeatStrideMode = false, strideSizeMode = false;
};

enum class GatherMaskMode : uint8_t { VERSION_V1 = 0, VERSION_V2 = 1 };
constexpr GatherMaskMode defaultGatherMaskMode = GatherMaskMode::VERSION_V2;  // A2 (__CCE_AICORE__ == 220)

struct GatherMaskParams {
    GatherMaskParams() = default;
    GatherMaskParams(const uint8_t src0BlockStrideIn, const uint16_t repeatTimesIn, const uint16_t src0RepeatStrideIn,
                     const uint8_t src1RepeatStrideIn)
        : src0BlockStride(src0BlockStrideIn), repeatTimes(repeatTimesIn), src0RepeatStride(src0RepeatStrideIn),
          src1RepeatStride(src1RepeatStrideIn) {}
    uint8_t src0BlockStride = 1;
    uint16_t repeatTimes = 0;
    uint16_t src0RepeatStride = 8;
    uint8_t src1RepeatStride = 8;
};

}  // namespace AscendC

namespace ascdsl_sim {

template <class T> constexpr bool gather_ok = is_one_of_v<T, half, bfloat16_t, int16_t, uint16_t, float, int32_t, uint32_t>;

// dst[lane] = the element of T at byte srcBaseAddr + offset[k] of src, offsets consumed in lane order.
template <class T>
void gather(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
            const AscendC::LocalTensor<uint32_t>& offsets, uint32_t base, const Lanes& l, uint32_t dstRepStride) {
    const char* api = "Gather";
    static_assert(gather_ok<T>, "ascdsl sim: Gather supports 16- and 32-bit element types");
    const uint32_t time = begin_op(api);
    std::vector<uint32_t> oidx;  // lane j of repeat r reads offset r * (256 / sizeof(T)) + j
    for (uint32_t r = 0; r < l.repeat; ++r)
        for (uint32_t lane : l.active) oidx.push_back(r * per_repeat<T>() + lane);
    Operand off = operand("srcOffsetLocal", offsets, oidx);
    check_operand(api, off);
    read_operand(api, Pipe::V, off);
    const uint64_t src_bytes = uint64_t(src.GetSize()) * sizeof(T);
    std::vector<uint32_t> sidx;
    for (uint32_t k : oidx) {
        const uint64_t byte = uint64_t(base) + offsets.ptr()[k];
        require(byte % sizeof(T) == 0, api, "offset ", offsets.ptr()[k], " (+ srcBaseAddr ", base, ") at index ", k,
                " is not a multiple of the ", sizeof(T), "-byte element");
        require(byte + sizeof(T) <= src_bytes, api, "offset ", offsets.ptr()[k], " (+ srcBaseAddr ", base, ") at index ",
                k, " is outside the ", src_bytes, "-byte srcLocal");
        sidx.push_back(static_cast<uint32_t>(byte / sizeof(T)));
    }
    Operand s = operand("srcLocal", src, sidx);
    check_operand(api, s);
    for_each_run(s, [&](uint64_t addr, uint64_t bytes) { ub_read(api, Pipe::V, addr, bytes); });
    Operand d = operand("dstLocal", dst, lane_offsets(l, {1, dstRepStride}, per_block<T>()));
    check_operand(api, d);
    check_overlap(api, d, s, false);
    for (size_t k = 0; k < d.idx.size(); ++k) dst.ptr()[d.idx[k]] = src.ptr()[sidx[k]];
    write_operand(api, Pipe::V, time, d);
    count_vector(api, l, sizeof(T));
}

// Whether element `i` of a repeat is kept by built-in GatherMask pattern 1..7.
inline bool fixed_pattern(uint8_t pattern, uint32_t i) {
    switch (pattern) {
    case 1: return i % 2 == 0;
    case 2: return i % 2 == 1;
    case 7: return true;
    default: return i % 4 == uint32_t(pattern - 3);
    }
}

// GatherMask: the kept src0 elements, packed from dst[0]. Normal mode: repeatTimes repeats of 256 bytes;
// counter mode (reduceMode): repeatTimes repeats of `mask` elements. A user pattern's bits are consumed in
// order within a repeat; repeat r starts at byte r * src1RepeatStride * 32 of the pattern.
template <class T, class Keep>
uint64_t gather_mask(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src0, bool reduceMode,
                     uint32_t mask, const AscendC::GatherMaskParams& p, Keep keep) {
    const char* api = "GatherMask";
    static_assert(gather_ok<T>, "ascdsl sim: GatherMask supports 16- and 32-bit element types");
    check_repeat(api, p.repeatTimes);
    Lanes l = count_lanes(api, reduceMode ? mask : per_repeat<T>());
    l.repeat = p.repeatTimes;
    const uint32_t time = begin_op(api);
    Operand s = operand("src0", src0, lane_offsets(l, {p.src0BlockStride, p.src0RepeatStride}, per_block<T>()));
    check_operand(api, s);
    read_operand(api, Pipe::V, s);
    std::vector<T> kept;
    const size_t width = l.active.size();
    for (size_t k = 0; k < s.idx.size(); ++k)
        if (keep(uint32_t(k / width), uint32_t(k % width))) kept.push_back(src0.ptr()[s.idx[k]]);
    Operand d = contiguous("dst", dst, kept.size());
    check_operand(api, d);
    check_overlap(api, d, s);
    std::copy(kept.begin(), kept.end(), dst.ptr());
    write_operand(api, Pipe::V, time, d);
    count_vector(api, l, sizeof(T));
    return kept.size();
}

}  // namespace ascdsl_sim

namespace AscendC {

template <typename T, typename Mask>
inline void Gather(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const LocalTensor<uint32_t>& srcOffsetLocal,
                   const uint32_t srcBaseAddr, Mask mask, const ascdsl_sim::RepeatTimes repeatTimes,
                   const uint16_t dstRepStride) {
    ascdsl_sim::gather(dstLocal, srcLocal, srcOffsetLocal, srcBaseAddr,
                       ascdsl_sim::mask_lanes("Gather", mask, repeatTimes.value, ascdsl_sim::per_repeat<T>()), dstRepStride);
}
// The count form runs count / (256 / sizeof(T)) full repeats (a uint8_t: at most 255) and one tail repeat.
template <typename T>
inline void Gather(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const LocalTensor<uint32_t>& srcOffsetLocal,
                   const uint32_t srcBaseAddr, const uint32_t count) {
    ascdsl_sim::require(count / ascdsl_sim::per_repeat<T>() <= 255, "Gather", "count ", count, " needs ",
                        count / ascdsl_sim::per_repeat<T>(), " full repeats, over the 255 of the count form");
    ascdsl_sim::gather(dstLocal, srcLocal, srcOffsetLocal, srcBaseAddr, ascdsl_sim::count_lanes("Gather", count), 8);
}

template <typename T, typename U, GatherMaskMode mode = defaultGatherMaskMode>
inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<U>& src1Pattern,
                       const bool reduceMode, const uint32_t mask, const GatherMaskParams& p, uint64_t& rsvdCnt) {
    static_assert(sizeof(U) == sizeof(T) && ascdsl_sim::is_one_of_v<U, uint16_t, uint32_t>,
                  "ascdsl sim: GatherMask: the pattern is uint16_t for 16-bit data, uint32_t for 32-bit data");
    const char* api = "GatherMask";
    const uint32_t width = reduceMode ? mask : ascdsl_sim::per_repeat<T>();
    const uint64_t last_bit = p.repeatTimes ? uint64_t(p.repeatTimes - 1) * p.src1RepeatStride * 256 + width : 0;
    ascdsl_sim::Operand pat = ascdsl_sim::contiguous("src1Pattern", src1Pattern, (last_bit + 8 * sizeof(U) - 1) / (8 * sizeof(U)));
    ascdsl_sim::check_operand(api, pat);
    ascdsl_sim::read_operand(api, ascdsl_sim::Pipe::V, pat);
    const uint8_t* bits = reinterpret_cast<const uint8_t*>(src1Pattern.ptr());
    rsvdCnt = ascdsl_sim::gather_mask(dst, src0, reduceMode, mask, p, [&](uint32_t r, uint32_t i) {
        const uint64_t b = uint64_t(r) * p.src1RepeatStride * 256 + i;
        return (bits[b / 8] >> (b % 8) & 1) != 0;
    });
}
template <typename T, GatherMaskMode mode = defaultGatherMaskMode>
inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const uint8_t src1Pattern,
                       const bool reduceMode, const uint32_t mask, const GatherMaskParams& p, uint64_t& rsvdCnt) {
    ascdsl_sim::require(src1Pattern >= 1 && src1Pattern <= 7, "GatherMask", "built-in src1Pattern ", int(src1Pattern),
                        " is outside [1, 7]");
    rsvdCnt = ascdsl_sim::gather_mask(dst, src0, reduceMode, mask, p,
                                      [src1Pattern](uint32_t, uint32_t i) { return ascdsl_sim::fixed_pattern(src1Pattern, i); });
}

// dst[i] = firstValue + i (in T's arithmetic), count form and repeat form.
template <typename T>
inline void CreateVecIndex(LocalTensor<T> dstLocal, const T& firstValue, uint32_t calCount) {
    static_assert(ascdsl_sim::is_one_of_v<T, int16_t, half, int32_t, float>, "ascdsl sim: CreateVecIndex: unsupported element type");
    const ascdsl_sim::Lanes l = ascdsl_sim::count_lanes("CreateVecIndex", calCount);
    uint32_t i = 0;
    ascdsl_sim::elementwise("CreateVecIndex", l, [&]() { return static_cast<T>(static_cast<ascdsl_sim::wide_t<T>>(firstValue) + i++); },
                            ascdsl_sim::Arg<T>{"dst", dstLocal, {}});
}

}  // namespace AscendC

#endif  // ASCDSL_SIM_ASCDSL_SIM_GATHER_H
