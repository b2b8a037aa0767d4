// Reductions (reference §2.13): ReduceSum/ReduceMax/ReduceMin, WholeReduceSum/Max/Min,
// BlockReduceSum/Max/Min, and Brcb (§2.14). Sums are pairwise trees in lane order; half saturates.
#ifndef ASCDSL_SIM_ASCDSL_SIM_REDUCE_H
#define ASCDSL_SIM_ASCDSL_SIM_REDUCE_H
#include "vector.h"

namespace ascdsl_sim {

// One addition step in T's arithmetic: half rounds each step and saturates at +-65504.
template <class T>
wide_t<T> add_step(wide_t<T> a, wide_t<T> b) {
    if constexpr (is_half_v<T>) {
        const float r = static_cast<float>(half(a + b));
        return std::isinf(r) && std::isfinite(a) && std::isfinite(b) ? std::copysign(65504.0f, r) : r;
    } else {
        return a + b;
    }
}

// Pairwise tree: (0+1), (2+3), ... level by level; an odd element is carried to the next level.
template <class T>
wide_t<T> tree_sum(std::vector<wide_t<T>> v) {
    if (v.empty()) return wide_t<T>(0);
    while (v.size() > 1) {
        const size_t n = v.size();
        for (size_t i = 0; i < n / 2; ++i) v[i] = add_step<T>(v[2 * i], v[2 * i + 1]);
        if (n % 2) v[n / 2] = v[n - 1];
        v.resize((n + 1) / 2);
    }
    return v[0];
}

// Per repeat, the full lane vector with inactive lanes as 0 (what the tree adds).
template <class T>
std::vector<std::vector<wide_t<T>>> repeat_values(const Lanes& l, const Operand& src, uint32_t width) {
    const T* p = reinterpret_cast<const T*>(st().ub + src.addr);
    std::vector<std::vector<wide_t<T>>> out(l.repeat, std::vector<wide_t<T>>(width, wide_t<T>(0)));
    const size_t na = l.active.size();
    for (uint32_t r = 0; r < l.repeat; ++r)
        for (size_t k = 0; k < na; ++k) out[r][l.active[k]] = static_cast<wide_t<T>>(p[src.idx[r * na + k]]);
    return out;
}

enum class Reduce { Sum, Max, Min };

struct Extreme {
    float value;
    uint32_t index;
};

// The max (or min) of the active lanes; the lowest index wins ties.
template <class T>
Extreme extreme(const std::vector<wide_t<T>>& v, const std::vector<uint32_t>& lanes, bool is_max) {
    Extreme e{static_cast<float>(v[lanes.empty() ? 0 : lanes[0]]), lanes.empty() ? 0 : lanes[0]};
    for (uint32_t lane : lanes) {
        const float x = static_cast<float>(v[lane]);
        if (is_max ? x > e.value : x < e.value) e = {x, lane};
    }
    return e;
}

template <class T>
void store_index(T* p, uint32_t index) {
    if constexpr (sizeof(T) == 2) {
        const uint16_t i = static_cast<uint16_t>(index);
        std::memcpy(p, &i, 2);
    } else {
        std::memcpy(p, &index, 4);
    }
}

template <class T>
Operand reduce_source(const char* api, const AscendC::LocalTensor<T>& src, const Lanes& l, Stride s) {
    static_assert(is_one_of_v<T, half, float>, "ascdsl sim: reductions support half and float only");
    Operand o = operand("src", src, lane_offsets(l, s, per_block<T>()));
    check_operand(api, o);
    read_operand(api, Pipe::V, o);
    return o;
}

// Writes `values` at element offsets `idx` of dst (alignment `align` bytes) on the vector pipe.
template <class T>
void reduce_store(const char* api, uint32_t time, const AscendC::LocalTensor<T>& dst,
                  const std::vector<std::pair<uint32_t, T>>& values, uint64_t align) {
    std::vector<uint32_t> idx;
    for (const auto& v : values) idx.push_back(v.first);
    Operand o = operand("dst", dst, idx);
    check_operand(api, o, align);
    for (const auto& v : values) dst.ptr()[v.first] = v.second;
    write_operand(api, Pipe::V, time, o);
}

// WholeReduceSum/Max/Min: one result per repeat.
template <class T>
void whole_reduce(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                  const Lanes& l, int32_t dstRepStride, int32_t srcBlkStride, int32_t srcRepStride, Reduce kind,
                  AscendC::ReduceOrder order) {
    using AscendC::ReduceOrder;
    const uint32_t time = begin_op(api);
    const Operand s = reduce_source(api, src, l, {uint32_t(srcBlkStride), uint32_t(srcRepStride)});
    const auto reps = repeat_values<T>(l, s, per_repeat<T>());
    std::vector<std::pair<uint32_t, T>> out;
    for (uint32_t r = 0; r < l.repeat; ++r) {
        if (kind == Reduce::Sum) {
            out.push_back({r * dstRepStride, static_cast<T>(tree_sum<T>(reps[r]))});
            continue;
        }
        const Extreme e = extreme<T>(reps[r], l.active, kind == Reduce::Max);
        T index_slot;
        store_index(&index_slot, e.index);
        if (order == ReduceOrder::ORDER_ONLY_VALUE) {
            out.push_back({r * dstRepStride, static_cast<T>(e.value)});
        } else if (order == ReduceOrder::ORDER_ONLY_INDEX) {  // uint32 index, stride unit 4 bytes
            const uint32_t pos = r * dstRepStride * 4 / sizeof(T);
            uint32_t i32 = e.index;
            T slots[2];
            std::memcpy(slots, &i32, 4);
            for (uint32_t k = 0; k < 4 / sizeof(T); ++k) out.push_back({pos + k, slots[k]});
        } else {
            const bool value_first = order == ReduceOrder::ORDER_VALUE_INDEX;
            out.push_back({2 * r * dstRepStride + (value_first ? 0 : 1), static_cast<T>(e.value)});
            out.push_back({2 * r * dstRepStride + (value_first ? 1 : 0), index_slot});
        }
    }
    reduce_store(api, time, dst, out, sizeof(T));
    count_vector(api, l, sizeof(T));
}

// BlockReduceSum/Max/Min: one result per 32-byte block, 8 per repeat.
template <class T>
void block_reduce(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                  const Lanes& l, int32_t dstRepStride, int32_t srcBlkStride, int32_t srcRepStride, Reduce kind) {
    const uint32_t time = begin_op(api);
    const Operand s = reduce_source(api, src, l, {uint32_t(srcBlkStride), uint32_t(srcRepStride)});
    const auto reps = repeat_values<T>(l, s, per_repeat<T>());
    constexpr uint32_t epb = per_block<T>();
    std::vector<std::pair<uint32_t, T>> out;
    for (uint32_t r = 0; r < l.repeat; ++r)
        for (uint32_t b = 0; b < 8; ++b) {
            std::vector<wide_t<T>> block(reps[r].begin() + b * epb, reps[r].begin() + (b + 1) * epb);
            std::vector<uint32_t> lanes;
            for (uint32_t lane : l.active)
                if (lane / epb == b) lanes.push_back(lane % epb);
            const T v = kind == Reduce::Sum ? static_cast<T>(tree_sum<T>(block))
                                  : static_cast<T>(extreme<T>(block, lanes, kind == Reduce::Max).value);
            out.push_back({r * dstRepStride * 8 + b, v});
        }
    reduce_store(api, time, dst, out, sizeof(T) * 8);
    count_vector(api, l, sizeof(T));
}

constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Documented minimum workLocal elements of ReduceMax/ReduceMin (with index: one more level per fold).
template <class T>
int64_t reduce_max_work(int64_t first_repeat, bool with_index) {
    const int64_t blk = per_block<T>(), rep = per_repeat<T>();
    int64_t total = ceil_div(2 * first_repeat, blk) * blk;
    for (int64_t r = first_repeat; with_index && r > 1;) {
        r = ceil_div(2 * r, rep);
        total += ceil_div(2 * r, blk) * blk;
    }
    return total;
}

// ReduceSum/ReduceMax/ReduceMin: one result in dst[0] (and the index in dst[1] with calIndex).
// Count form (tree per repeat, repeats accumulated in order) when `count_form`, else repeat form (tree of trees).
template <class T>
void reduce_all(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                const AscendC::LocalTensor<T>& work, const Lanes& l, bool count_form, Reduce kind, bool calIndex,
                uint32_t srcRepStride = 8) {
    const uint32_t time = begin_op(api);
    const uint32_t width = per_repeat<T>();
    if (kind != Reduce::Sum || !count_form) {
        const int64_t first = count_form ? std::max<int64_t>(1, int64_t(l.active.size()) / width) : l.repeat;
        const int64_t need = kind == Reduce::Sum ? ceil_div(first, per_block<T>()) * per_block<T>() : reduce_max_work<T>(first, calIndex);
        require(int64_t(work.GetSize()) >= need, api, "workLocal holds ", work.GetSize(),
                " elements, below the documented minimum of ", need);
        Operand w = contiguous("workLocal", work, need);
        check_operand(api, w);
        write_operand(api, Pipe::V, time, w);
    }
    std::vector<std::pair<uint32_t, T>> out;
    if (count_form) {  // split the contiguous range into repeats of `width` lanes
        const uint64_t n = l.active.size();
        Operand s = contiguous("src", src, n);
        check_operand(api, s);
        read_operand(api, Pipe::V, s);
        const T* p = src.ptr();
        std::vector<wide_t<T>> v(p, p + n);
        if (kind == Reduce::Sum) {
            wide_t<T> acc = 0;
            for (uint64_t start = 0; start < n; start += width) {
                std::vector<wide_t<T>> chunk(v.begin() + start, v.begin() + std::min<uint64_t>(n, start + width));
                chunk.resize(width, wide_t<T>(0));
                acc = start == 0 ? tree_sum<T>(chunk) : add_step<T>(acc, tree_sum<T>(chunk));
            }
            out.push_back({0, static_cast<T>(acc)});
        } else {
            std::vector<uint32_t> all(n);
            for (uint32_t i = 0; i < n; ++i) all[i] = i;
            const Extreme e = extreme<T>(v, all, kind == Reduce::Max);
            out.push_back({0, static_cast<T>(e.value)});
            if (calIndex) {
                T slot;
                store_index(&slot, e.index);
                out.push_back({1, slot});
            }
        }
    } else {
        const Operand s = reduce_source(api, src, l, {1, srcRepStride});
        const auto reps = repeat_values<T>(l, s, width);
        if (kind == Reduce::Sum) {
            std::vector<wide_t<T>> sums;
            for (const auto& r : reps) sums.push_back(tree_sum<T>(r));
            out.push_back({0, static_cast<T>(tree_sum<T>(sums))});
        } else {
            Extreme best{0, 0};
            for (uint32_t r = 0; r < l.repeat; ++r) {
                const Extreme e = extreme<T>(reps[r], l.active, kind == Reduce::Max);
                if (r == 0 || (kind == Reduce::Max ? e.value > best.value : e.value < best.value)) best = {e.value, r * width + e.index};
            }
            out.push_back({0, static_cast<T>(best.value)});
            if (calIndex) {
                T slot;
                store_index(&slot, best.index);
                out.push_back({1, slot});
            }
        }
    }
    reduce_store(api, time, dst, out, 32);
    count_vector(api, l, sizeof(T));
}

}  // namespace ascdsl_sim

namespace AscendC {

#define ASCDSL_SIM_REDUCE_ALL(NAME, KIND, INDEX_PARAM, INDEX_ARG)                                                    \
    template <typename T, bool isSetMask = true>                                                                  \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work,            \
                     const int32_t count INDEX_PARAM) {                                                           \
        ascdsl_sim::reduce_all(#NAME, dst, src, work, ascdsl_sim::count_lanes(#NAME, count), true, ascdsl_sim::Reduce::KIND, INDEX_ARG); \
    }                                                                                                             \
    template <typename T, bool isSetMask = true>                                                                  \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work,            \
                     const int32_t mask, const int32_t repeatTimes, const int32_t srcRepStride INDEX_PARAM) {     \
        ascdsl_sim::reduce_all(#NAME, dst, src, work,                                                             \
                               ascdsl_sim::mask_lanes(#NAME, uint64_t(mask), repeatTimes, ascdsl_sim::per_repeat<T>()), \
                               false, ascdsl_sim::Reduce::KIND, INDEX_ARG, uint32_t(srcRepStride));                                   \
    }

#define ASCDSL_SIM_COMMA ,
ASCDSL_SIM_REDUCE_ALL(ReduceSum, Sum, , false)
ASCDSL_SIM_REDUCE_ALL(ReduceMax, Max, ASCDSL_SIM_COMMA bool calIndex = 0, calIndex)
ASCDSL_SIM_REDUCE_ALL(ReduceMin, Min, ASCDSL_SIM_COMMA bool calIndex = 0, calIndex)

// WholeReduce*/BlockReduce*: one template per API serves the int32_t mask and uint64_t[2] bit-mask overloads.
#define ASCDSL_SIM_WHOLE_REDUCE(NAME, KIND, ORDER_PARAM, ORDER_ARG)                                                 \
    template <typename T, bool isSetMask = true, typename Mask>                                                   \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const Mask mask,                       \
                     const int32_t repeatTimes, const int32_t dstRepStride, const int32_t srcBlkStride,           \
                     const int32_t srcRepStride ORDER_PARAM) {                                                    \
        ascdsl_sim::whole_reduce(#NAME, dst, src,                                                                 \
                                 ascdsl_sim::mask_lanes(#NAME, mask, repeatTimes, ascdsl_sim::per_repeat<T>()),    \
                                 dstRepStride, srcBlkStride, srcRepStride, ascdsl_sim::Reduce::KIND, ORDER_ARG);                      \
    }

ASCDSL_SIM_WHOLE_REDUCE(WholeReduceSum, Sum, , ReduceOrder::ORDER_ONLY_VALUE)
ASCDSL_SIM_WHOLE_REDUCE(WholeReduceMax, Max, ASCDSL_SIM_COMMA ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX, order)
ASCDSL_SIM_WHOLE_REDUCE(WholeReduceMin, Min, ASCDSL_SIM_COMMA ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX, order)

#define ASCDSL_SIM_BLOCK_REDUCE(NAME, KIND)                                                                         \
    template <typename T, bool isSetMask = true, typename Mask>                                                   \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeat, const Mask mask,  \
                     const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride) {        \
        ascdsl_sim::block_reduce(#NAME, dst, src,                                                                 \
                                 ascdsl_sim::mask_lanes(#NAME, mask, repeat, ascdsl_sim::per_repeat<T>()),         \
                                 dstRepStride, srcBlkStride, srcRepStride, ascdsl_sim::Reduce::KIND);                                 \
    }

ASCDSL_SIM_BLOCK_REDUCE(BlockReduceSum, Sum)
ASCDSL_SIM_BLOCK_REDUCE(BlockReduceMax, Max)
ASCDSL_SIM_BLOCK_REDUCE(BlockReduceMin, Min)

struct BrcbRepeatParams {
    BrcbRepeatParams() = default;
    BrcbRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t dstRepStrideIn)
        : dstBlkStride(dstBlkStrideIn), dstRepStride(dstRepStrideIn) {}
    uint16_t dstBlkStride = 1, dstRepStride = 8;
};

// Each repeat broadcasts 8 consecutive src elements, element j to the whole 32-byte block j of dst.
template <typename T>
inline void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const ascdsl_sim::RepeatTimes repeatTimes,
                 const BrcbRepeatParams& p) {
    using namespace ascdsl_sim;
    const char* api = "Brcb";
    static_assert(is_one_of_v<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>,
                  "ascdsl sim: Brcb: unsupported element type");
    check_repeat(api, repeatTimes.value);
    require(p.dstBlkStride != 0, api, "dstBlkStride must not be 0");
    const uint32_t repeat = static_cast<uint32_t>(repeatTimes.value), epb = per_block<T>();
    const uint32_t time = begin_op(api);
    Operand s = contiguous("src", src0, repeat * 8);
    std::vector<uint32_t> didx;
    for (uint32_t i = 0; i < repeat; ++i)
        for (uint32_t j = 0; j < 8; ++j)
            for (uint32_t e = 0; e < epb; ++e) didx.push_back((i * p.dstRepStride + j * p.dstBlkStride) * epb + e);
    Operand d = operand("dst", dst, didx);
    check_operand(api, s);
    check_operand(api, d);
    check_overlap(api, d, s, false);
    read_operand(api, Pipe::V, s);
    for (size_t k = 0; k < didx.size(); ++k) dst.ptr()[didx[k]] = src0.ptr()[k / epb];
    write_operand(api, Pipe::V, time, d);
    count_vector(api, repeat * 8, repeat, 32);  // each element fills a 32-byte block
}

}  // namespace AscendC

#endif  // ASCDSL_SIM_ASCDSL_SIM_REDUCE_H
