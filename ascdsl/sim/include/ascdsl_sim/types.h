// half and bfloat16_t storage types and the rounding arithmetic shared by Cast and the vector ops.
#ifndef ASCDSL_SIM_ASCDSL_SIM_TYPES_H
#define ASCDSL_SIM_ASCDSL_SIM_TYPES_H
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace ascdsl_sim {

// Rounding of a real value onto an integer grid (the RoundMode semantics of Cast).
enum class Rounding : uint8_t { Rint, Floor, Ceil, Round, Trunc, Odd };

inline double round_integral(double q, Rounding r) {
    switch (r) {
    case Rounding::Rint: return std::nearbyint(q);  // default FE_TONEAREST: ties to even
    case Rounding::Floor: return std::floor(q);
    case Rounding::Ceil: return std::ceil(q);
    case Rounding::Round: return std::round(q);  // ties away from zero
    case Rounding::Trunc: return std::trunc(q);
    case Rounding::Odd: {  // von Neumann: an inexact result gets an odd last digit
        double t = std::trunc(q);
        if (t != q && std::fmod(t, 2.0) == 0.0) t += q > 0 ? 1.0 : -1.0;
        return t;
    }
    }
    return q;
}

struct FloatFormat {
    int mantissa_bits;  // fraction bits
    int min_exponent;   // exponent of the smallest normal number
    double max_finite;
};
constexpr FloatFormat kHalfFormat{10, -14, 65504.0};
constexpr FloatFormat kBf16Format{7, -126, 3.38953138925153547590470800371487866880e38};
constexpr FloatFormat kFloatFormat{23, -126, 3.40282346638528859811704183484516925440e38};

// The value of x rounded to format f with rounding r (x itself when not finite).
inline double round_to_format(double x, FloatFormat f, Rounding r) {
    if (!std::isfinite(x) || x == 0.0) return x;
    int e;
    std::frexp(x, &e);
    const double ulp = std::ldexp(1.0, std::max(e - 1, f.min_exponent) - f.mantissa_bits);
    const double v = round_integral(x / ulp, r) * ulp;
    if (std::fabs(v) <= f.max_finite) return v;
    const bool neg = v < 0;
    const bool to_inf = r == Rounding::Rint || r == Rounding::Round || (r == Rounding::Floor && neg) ||
                        (r == Rounding::Ceil && !neg);
    const double mag = to_inf ? INFINITY : f.max_finite;
    return neg ? -mag : mag;
}

inline uint32_t float_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float bits_float(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

// Encodes a value that is exactly representable in IEEE binary16.
inline uint16_t encode_half(double v) {
    const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
    const double a = std::fabs(v);
    if (std::isnan(v)) return sign | 0x7E00;
    if (std::isinf(a)) return sign | 0x7C00;
    if (a < 6.103515625e-05) return sign | static_cast<uint16_t>(a * 16777216.0);  // subnormal: units of 2^-24
    int e;
    const double m = std::frexp(a, &e);
    return sign | static_cast<uint16_t>((e + 14) << 10) | static_cast<uint16_t>((m * 2.0 - 1.0) * 1024.0);
}

inline float decode_half(uint16_t h) {
    const float sign = (h & 0x8000) ? -1.0f : 1.0f;
    const int exp = (h >> 10) & 0x1F, frac = h & 0x3FF;
    if (exp == 0) return sign * std::ldexp(static_cast<float>(frac), -24);
    if (exp == 31) return frac ? bits_float(0x7FC00000u | (h & 0x8000u) << 16) : sign * INFINITY;
    return sign * std::ldexp(static_cast<float>(frac | 0x400), exp - 25);
}

}  // namespace ascdsl_sim

// IEEE binary16. Arithmetic happens in float (implicit conversion); construction rounds to nearest even.
struct half {
    uint16_t bits = 0;
    half() = default;
    half(float f) : bits(ascdsl_sim::encode_half(ascdsl_sim::round_to_format(f, ascdsl_sim::kHalfFormat,
                                                                             ascdsl_sim::Rounding::Rint))) {}
    operator float() const { return ascdsl_sim::decode_half(bits); }
    static half from_bits(uint16_t b) { half h; h.bits = b; return h; }
};

// bfloat16: the top 16 bits of a float. Construction rounds to nearest even.
struct bfloat16_t {
    uint16_t bits = 0;
    bfloat16_t() = default;
    bfloat16_t(float f) : bits(static_cast<uint16_t>(ascdsl_sim::float_bits(static_cast<float>(
                              ascdsl_sim::round_to_format(f, ascdsl_sim::kBf16Format, ascdsl_sim::Rounding::Rint))) >> 16)) {}
    operator float() const { return ascdsl_sim::bits_float(static_cast<uint32_t>(bits) << 16); }
    static bfloat16_t from_bits(uint16_t b) { bfloat16_t h; h.bits = b; return h; }
};

namespace ascdsl_sim {
template <class T> constexpr bool is_half_v = std::is_same_v<T, half>;
template <class T> constexpr bool is_bf16_v = std::is_same_v<T, bfloat16_t>;
template <class T, class... Us> constexpr bool is_one_of_v = (std::is_same_v<T, Us> || ...);

// The type vector arithmetic on T is carried out in, and the rounding back to T.
template <class T> using compute_t = std::conditional_t<is_half_v<T> || is_bf16_v<T>, float, T>;

template <class T> inline const char* type_name() {
    if constexpr (std::is_same_v<T, float>) return "float";
    else if constexpr (is_half_v<T>) return "half";
    else if constexpr (is_bf16_v<T>) return "bfloat16_t";
    else if constexpr (std::is_same_v<T, int32_t>) return "int32_t";
    else if constexpr (std::is_same_v<T, uint32_t>) return "uint32_t";
    else if constexpr (std::is_same_v<T, int16_t>) return "int16_t";
    else if constexpr (std::is_same_v<T, uint16_t>) return "uint16_t";
    else if constexpr (std::is_same_v<T, int8_t>) return "int8_t";
    else if constexpr (std::is_same_v<T, uint8_t>) return "uint8_t";
    else if constexpr (std::is_same_v<T, int64_t>) return "int64_t";
    else if constexpr (std::is_same_v<T, uint64_t>) return "uint64_t";
    else if constexpr (std::is_same_v<T, double>) return "double";
    else return "?";
}
}  // namespace ascdsl_sim

namespace AscendC {
// Compile-time type test, as kernels write `if constexpr (IsSameType<T, float>::value)`.
template <typename T, typename U> struct IsSameType { static constexpr bool value = std::is_same_v<T, U>; };
}  // namespace AscendC

#endif  // ASCDSL_SIM_ASCDSL_SIM_TYPES_H
