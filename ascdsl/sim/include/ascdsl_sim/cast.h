// Cast with every RoundMode and the Atlas A2 conversion table (reference §2.11).
#ifndef ASCDSL_SIM_ASCDSL_SIM_CAST_H
#define ASCDSL_SIM_ASCDSL_SIM_CAST_H
#include <limits>

#include "vector.h"

namespace ascdsl_sim {

using AscendC::RoundMode;

constexpr uint8_t mode_bit(RoundMode m) { return static_cast<uint8_t>(1u << static_cast<int>(m)); }
constexpr uint8_t kNone = mode_bit(RoundMode::CAST_NONE);
constexpr uint8_t kOdd = mode_bit(RoundMode::CAST_ODD);
constexpr uint8_t kRounding = mode_bit(RoundMode::CAST_RINT) | mode_bit(RoundMode::CAST_FLOOR) |
                              mode_bit(RoundMode::CAST_CEIL) | mode_bit(RoundMode::CAST_ROUND) |
                              mode_bit(RoundMode::CAST_TRUNC);

// Round modes allowed for src type S -> dst type D on A2/A3; 0 = no such conversion.
template <class D, class S>
constexpr uint8_t cast_modes() {
    if constexpr (is_half_v<S> && std::is_same_v<D, float>) return kNone;
    else if constexpr (std::is_same_v<S, float> && is_half_v<D>) return kRounding | kNone | kOdd;
    else if constexpr (is_bf16_v<S> && std::is_same_v<D, float>) return kNone;
    else if constexpr (std::is_same_v<S, float> && is_bf16_v<D>) return kRounding;
    else if constexpr (is_bf16_v<S> && std::is_same_v<D, int32_t>) return kRounding;
    else if constexpr (is_half_v<S> && is_one_of_v<D, int32_t, int16_t>) return kRounding;
    else if constexpr (is_half_v<S> && is_one_of_v<D, int8_t, uint8_t>) return kRounding | kNone;
    else if constexpr (std::is_same_v<S, int32_t> && std::is_same_v<D, float>) return kRounding | kNone;
    else if constexpr (std::is_same_v<S, float> && is_one_of_v<D, int32_t, int16_t, int64_t>) return kRounding;
    else if constexpr (std::is_same_v<S, float> && std::is_same_v<D, float>) return kRounding;
    else if constexpr (is_one_of_v<S, int16_t, int8_t, uint8_t> && is_half_v<D>) return kNone;
    else if constexpr (std::is_same_v<S, int16_t> && std::is_same_v<D, float>) return kNone;
    else if constexpr (std::is_same_v<S, int32_t> && is_one_of_v<D, int16_t, int64_t>) return kNone;
    else if constexpr (std::is_same_v<S, int64_t> && std::is_same_v<D, int32_t>) return kNone;
    else if constexpr (std::is_same_v<S, int64_t> && std::is_same_v<D, float>) return kRounding;
    else return 0;
}

inline const char* mode_name(RoundMode m) {
    static const char* const names[] = {"CAST_NONE", "CAST_RINT", "CAST_FLOOR", "CAST_CEIL",
                                        "CAST_ROUND", "CAST_TRUNC", "CAST_ODD"};
    return names[static_cast<int>(m)];
}

inline Rounding rounding(RoundMode m) {
    switch (m) {
    case RoundMode::CAST_FLOOR: return Rounding::Floor;
    case RoundMode::CAST_CEIL: return Rounding::Ceil;
    case RoundMode::CAST_ROUND: return Rounding::Round;
    case RoundMode::CAST_TRUNC: return Rounding::Trunc;
    case RoundMode::CAST_ODD: return Rounding::Odd;
    default: return Rounding::Rint;  // CAST_NONE rounds to nearest even when the conversion is inexact
    }
}

// int64_t -> float rounded once in mode `r` (through double would round twice past 2**53): the nearest float
// (the hardware's CAST_RINT, as C++'s conversion), moved one step where the mode wants the other neighbour.
inline float int64_to_float(int64_t v, Rounding r) {
    const float nearest = static_cast<float>(v);  // integral: every float from 2**24 up is an integer
    const __int128 exact = v, got = static_cast<__int128>(nearest);
    if (got == exact || r == Rounding::Rint) return nearest;
    const float below = got > exact ? std::nextafter(nearest, -INFINITY) : nearest;
    const float above = got > exact ? nearest : std::nextafter(nearest, INFINITY);
    switch (r) {
    case Rounding::Floor: return below;
    case Rounding::Ceil: return above;
    case Rounding::Trunc: return v < 0 ? above : below;
    default: {  // Round: halves away from zero
        const __int128 down = exact - static_cast<__int128>(below), up = static_cast<__int128>(above) - exact;
        if (down != up) return down < up ? below : above;
        return v < 0 ? below : above;
    }
    }
}

template <class D, class S>
D convert(S v, Rounding r) {
    if constexpr (std::is_same_v<S, int64_t> && std::is_same_v<D, float>) return int64_to_float(v, r);
    const double x = static_cast<double>(static_cast<wide_t<S>>(v));
    if constexpr (is_half_v<D>) return half::from_bits(encode_half(round_to_format(x, kHalfFormat, r)));
    else if constexpr (is_bf16_v<D>)
        return bfloat16_t::from_bits(static_cast<uint16_t>(float_bits(static_cast<float>(round_to_format(x, kBf16Format, r))) >> 16));
    else if constexpr (std::is_same_v<D, float> && std::is_same_v<S, float>) return static_cast<float>(round_integral(x, r));
    else if constexpr (std::is_same_v<D, float>) return static_cast<float>(round_to_format(x, kFloatFormat, r));
    else {  // integer destination: round, then saturate (NaN -> 0)
        if (std::isnan(x)) return D(0);
        const double q = std::is_floating_point_v<compute_t<S>> ? round_integral(x, r) : x;
        if (q <= static_cast<double>(std::numeric_limits<D>::lowest())) return std::numeric_limits<D>::lowest();
        if (q >= static_cast<double>(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
        return static_cast<D>(q);
    }
}

template <class D, class S>
void cast(const AscendC::LocalTensor<D>& dst, const AscendC::LocalTensor<S>& src, RoundMode mode, const Lanes& l,
          const AscendC::UnaryRepeatParams& p) {
    constexpr uint8_t allowed = cast_modes<D, S>();
    static_assert(allowed != 0, "ascdsl sim: Cast: this src -> dst conversion does not exist on A2/A3");
    if ((is_bf16_v<D> || is_bf16_v<S>) && !st().bf16)
        fail("Cast", "bfloat16_t conversions are not available on ", st().platform);
    if (!(allowed & mode_bit(mode))) {
        std::string ok;
        for (int m = 0; m < 7; ++m)
            if (allowed & (1 << m)) ok += std::string(ok.empty() ? "" : ", ") + mode_name(static_cast<RoundMode>(m));
        fail("Cast", "Cast from ", type_name<S>(), " to ", type_name<D>(), " with ", mode_name(mode),
             " is not supported (allowed: ", ok, ")");
    }
    const Rounding r = rounding(mode);
    elementwise("Cast", l, [r](S v) { return convert<D, S>(v, r); }, Arg<D>{"dst", dst, {p.dstBlkStride, p.dstRepStride}},
                Arg<S>{"src", src, {p.srcBlkStride, p.srcRepStride}});
}

template <class D, class S> constexpr uint32_t cast_per_repeat() { return 256 / std::max(sizeof(D), sizeof(S)); }

}  // namespace ascdsl_sim

namespace AscendC {
// Repeat form with a continuous (uint64_t) or bit (uint64_t[2]) mask; lanes per repeat follow the wider type.
template <typename T1, typename T2, bool isSetMask = true, typename Mask>
inline void Cast(const LocalTensor<T1>& dstLocal, const LocalTensor<T2>& srcLocal, const RoundMode& round_mode,
                 Mask mask, const ascdsl_sim::RepeatTimes repeatTimes, const UnaryRepeatParams& p) {
    ascdsl_sim::cast(dstLocal, srcLocal, round_mode,
                     ascdsl_sim::mask_lanes("Cast", mask, repeatTimes.value, ascdsl_sim::cast_per_repeat<T1, T2>()), p);
}
template <typename T1, typename T2>
inline void Cast(const LocalTensor<T1>& dstLocal, const LocalTensor<T2>& srcLocal, const RoundMode& round_mode,
                 const uint32_t calCount) {
    ascdsl_sim::cast(dstLocal, srcLocal, round_mode, ascdsl_sim::count_lanes("Cast", calCount), UnaryRepeatParams{});
}
}  // namespace AscendC

#endif  // ASCDSL_SIM_ASCDSL_SIM_CAST_H
