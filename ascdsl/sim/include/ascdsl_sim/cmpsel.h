// Compare (bit-packed uint8 result, little-endian bits) and Select (reference §2.15).
// Both use the reserved UB above the planner budget (TMP_UB_OFFSET) on the device.
#ifndef ASCDSL_SIM_ASCDSL_SIM_CMPSEL_H
#define ASCDSL_SIM_ASCDSL_SIM_CMPSEL_H
#include "vector.h"

namespace ascdsl_sim {

inline void check_reserved_ub(const char* api) {
    const State& s = st();
    require(s.ub_used <= s.ub_budget, api, "uses the reserved UB at offset ", s.ub_budget, " but InitBuffer claimed ",
            s.ub_used, " B; keep buffers within ", s.ub_budget, " B; buffers: ", buffer_list());
}

template <class W>
bool compare(W a, W b, AscendC::CMPMODE m) {
    switch (m) {
    case AscendC::CMPMODE::LT: return a < b;
    case AscendC::CMPMODE::GT: return a > b;
    case AscendC::CMPMODE::EQ: return a == b;
    case AscendC::CMPMODE::LE: return a <= b;
    case AscendC::CMPMODE::GE: return a >= b;
    case AscendC::CMPMODE::NE: return a != b;
    }
    return false;
}

// Compare (src1 a tensor) and CompareScalar (src1 a T): bit i of dst = src0[lane i] cmp src1.
template <class T, class U, class Src1>
void compare_op(const char* api, const AscendC::LocalTensor<U>& dst, const AscendC::LocalTensor<T>& src0,
                const Src1& src1, AscendC::CMPMODE mode, const Lanes& l, Stride s0, Stride s1) {
    static_assert(is_one_of_v<T, half, float, int32_t>, "ascdsl sim: Compare/CompareScalar support half, float and int32_t");
    static_assert(sizeof(U) == 1, "ascdsl sim: Compare/CompareScalar write a uint8_t bit mask");
    constexpr bool scalar = std::is_same_v<Src1, T>;
    if constexpr (std::is_same_v<T, int32_t>)
        require(mode == AscendC::CMPMODE::EQ, api,
                "int32_t supports EQ only on A2 (compose the others exactly: a >= b is Max(a, b) EQ a, a < b is Not of that)");
    check_reserved_ub(api);
    const uint32_t time = begin_op(api);
    Operand a = operand("src0", src0, lane_offsets(l, s0, per_block<T>()));
    check_operand(api, a);
    read_operand(api, Pipe::V, a);
    auto rhs = [&]() {
        if constexpr (scalar) {
            return [v = src1](size_t) { return static_cast<wide_t<T>>(v); };
        } else {
            Operand b = operand("src1", src1, lane_offsets(l, s1, per_block<T>()));
            check_operand(api, b);
            read_operand(api, Pipe::V, b);
            return [p = src1.ptr(), idx = std::move(b.idx)](size_t i) { return static_cast<wide_t<T>>(p[idx[i]]); };
        }
    }();
    Operand d = contiguous("dst", dst, (l.elements() + 7) / 8);
    check_operand(api, d);
    std::vector<uint8_t> bits(d.idx.size(), 0);
    for (size_t i = 0; i < a.idx.size(); ++i)
        if (compare<wide_t<T>>(src0.ptr()[a.idx[i]], rhs(i), mode)) bits[i / 8] |= uint8_t(1u << (i % 8));
    std::memcpy(dst.ptr(), bits.data(), bits.size());
    write_operand(api, Pipe::V, time, d);
    count_vector(api, l, sizeof(T));
}

template <class T>
void check_compare_count(const char* api, uint32_t calCount) {
    require(uint64_t(calCount) * sizeof(T) % 256 == 0, api, "count ", calCount, " x ", sizeof(T),
            " B is not a multiple of 256 bytes (the device skips the unaligned tail)");
}

// dst = bit ? src0 : src1. Mode 0 reuses the first repeat's mask bits every repeat; modes 1 and 2 consume them in order.
template <class T, class U, class Src1>
void select_op(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<U>& mask,
               const AscendC::LocalTensor<T>& src0, Src1 src1, AscendC::SELMODE mode, const Lanes& l,
               const AscendC::BinaryRepeatParams& p) {
    const char* api = "Select";
    static_assert(is_one_of_v<T, half, float>, "ascdsl sim: Select supports half and float");
    constexpr bool scalar = std::is_same_v<Src1, T>;
    require(scalar == (mode == AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE), api,
            scalar ? "a scalar src1 needs SELMODE::VSEL_TENSOR_SCALAR_MODE"
                   : "a tensor src1 needs VSEL_CMPMASK_SPR or VSEL_TENSOR_TENSOR_MODE");
    check_reserved_ub(api);
    const uint32_t width = per_repeat<T>(), na = static_cast<uint32_t>(l.active.size());
    std::vector<uint32_t> bit(l.elements());
    for (uint32_t r = 0; r < l.repeat; ++r)
        for (uint32_t k = 0; k < na; ++k)
            bit[r * na + k] = mode == AscendC::SELMODE::VSEL_CMPMASK_SPR ? l.active[k] % width : r * width + l.active[k];
    const uint32_t nbits = bit.empty() ? 0 : *std::max_element(bit.begin(), bit.end()) + 1;
    Operand m = contiguous("selMask", mask, (nbits + 8 * sizeof(U) - 1) / (8 * sizeof(U)));
    check_operand(api, m);
    read_operand(api, Pipe::V, m);
    const uint8_t* mbits = reinterpret_cast<const uint8_t*>(mask.ptr());
    if constexpr (scalar) {
        elementwise(api, l, [&, i = size_t(0)](T a) mutable { const uint32_t b = bit[i++]; return (mbits[b / 8] >> (b % 8) & 1) ? a : src1; },
                    Arg<T>{"dst", dst, {p.dstBlkStride, p.dstRepStride}}, Arg<T>{"src0", src0, {p.src0BlkStride, p.src0RepStride}});
    } else {
        elementwise(api, l, [&, i = size_t(0)](T a, T b) mutable { const uint32_t k = bit[i++]; return (mbits[k / 8] >> (k % 8) & 1) ? a : b; },
                    Arg<T>{"dst", dst, {p.dstBlkStride, p.dstRepStride}}, Arg<T>{"src0", src0, {p.src0BlkStride, p.src0RepStride}},
                    Arg<T>{"src1", src1, {p.src1BlkStride, p.src1RepStride}});
    }
}

}  // namespace ascdsl_sim

namespace AscendC {

// The repeat forms ignore mask on A2 ("reserved"): every lane of each repeat is compared.
template <typename T, typename U, bool isSetMask = true, typename Mask>
inline void Compare(const LocalTensor<U>& dstLocal, const LocalTensor<T>& src0Local, const LocalTensor<T>& src1Local,
                    CMPMODE cmpMode, Mask mask, const ascdsl_sim::RepeatTimes repeatTimes,
                    const BinaryRepeatParams& p) {
    (void)mask;
    constexpr uint32_t w = ascdsl_sim::per_repeat<T>();
    ascdsl_sim::compare_op("Compare", dstLocal, src0Local, src1Local, cmpMode,
                           ascdsl_sim::mask_lanes("Compare", w, repeatTimes.value, w),
                           {p.src0BlkStride, p.src0RepStride}, {p.src1BlkStride, p.src1RepStride});
}
template <typename T, typename U>
inline void Compare(const LocalTensor<U>& dstLocal, const LocalTensor<T>& src0Local, const LocalTensor<T>& src1Local,
                    CMPMODE cmpMode, uint32_t calCount) {
    ascdsl_sim::check_compare_count<T>("Compare", calCount);
    ascdsl_sim::compare_op("Compare", dstLocal, src0Local, src1Local, cmpMode,
                           ascdsl_sim::count_lanes("Compare", calCount), {}, {});
}
template <typename T, typename U, bool isSetMask = true, typename Mask>
inline void CompareScalar(const LocalTensor<U>& dstLocal, const LocalTensor<T>& src0Local, const T src1Scalar,
                          CMPMODE cmpMode, Mask mask, const ascdsl_sim::RepeatTimes repeatTimes,
                          const UnaryRepeatParams& p) {
    (void)mask;
    constexpr uint32_t w = ascdsl_sim::per_repeat<T>();
    ascdsl_sim::compare_op("CompareScalar", dstLocal, src0Local, src1Scalar, cmpMode,
                           ascdsl_sim::mask_lanes("CompareScalar", w, repeatTimes.value, w),
                           {p.srcBlkStride, p.srcRepStride}, {});
}
template <typename T, typename U>
inline void CompareScalar(const LocalTensor<U>& dstLocal, const LocalTensor<T>& src0Local, const T src1Scalar,
                          CMPMODE cmpMode, uint32_t calCount) {
    ascdsl_sim::check_compare_count<T>("CompareScalar", calCount);
    ascdsl_sim::compare_op("CompareScalar", dstLocal, src0Local, src1Scalar, cmpMode,
                           ascdsl_sim::count_lanes("CompareScalar", calCount), {}, {});
}
template <typename T, typename U>
inline void Select(const LocalTensor<T>& dstLocal, const LocalTensor<U>& selMask, const LocalTensor<T>& src0Local,
                   const LocalTensor<T>& src1Local, SELMODE selMode, uint32_t calCount) {
    ascdsl_sim::select_op(dstLocal, selMask, src0Local, src1Local, selMode, ascdsl_sim::count_lanes("Select", calCount),
                          BinaryRepeatParams{});
}
template <typename T, typename U>
inline void Select(const LocalTensor<T>& dstLocal, const LocalTensor<U>& selMask, const LocalTensor<T>& src0Local,
                   T src1Local, SELMODE selMode, uint32_t calCount) {
    ascdsl_sim::select_op(dstLocal, selMask, src0Local, src1Local, selMode, ascdsl_sim::count_lanes("Select", calCount),
                          BinaryRepeatParams{});
}
template <typename T, typename U, bool isSetMask = true>
inline void Select(const LocalTensor<T>& dstLocal, const LocalTensor<U>& selMask, const LocalTensor<T>& src0Local,
                   const LocalTensor<T>& src1Local, SELMODE selMode, uint64_t mask,
                   const ascdsl_sim::RepeatTimes repeatTimes, const BinaryRepeatParams& repeatParams) {
    ascdsl_sim::select_op(dstLocal, selMask, src0Local, src1Local, selMode,
                          ascdsl_sim::mask_lanes("Select", mask, repeatTimes.value, ascdsl_sim::per_repeat<T>()),
                          repeatParams);
}

}  // namespace AscendC

#endif  // ASCDSL_SIM_ASCDSL_SIM_CMPSEL_H
