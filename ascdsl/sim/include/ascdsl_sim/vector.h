// Element-wise vector instructions: binary, tensor-scalar, unary and Duplicate, each in the count form
// and the repeat form with a continuous or bit mask (inactive lanes keep their old dst value).
#ifndef ASCDSL_SIM_ASCDSL_SIM_VECTOR_H
#define ASCDSL_SIM_ASCDSL_SIM_VECTOR_H
#include <array>
#include <tuple>
#include <utility>

#include "operand.h"

namespace AscendC {

struct BinaryRepeatParams {
    BinaryRepeatParams() = default;
    BinaryRepeatParams(uint8_t dstBlkStrideIn, uint8_t src0BlkStrideIn, uint8_t src1BlkStrideIn,
                       uint8_t dstRepStrideIn, uint8_t src0RepStrideIn, uint8_t src1RepStrideIn)
        : dstBlkStride(dstBlkStrideIn), src0BlkStride(src0BlkStrideIn), src1BlkStride(src1BlkStrideIn),
          dstRepStride(dstRepStrideIn), src0RepStride(src0RepStrideIn), src1RepStride(src1RepStrideIn) {}
    uint8_t dstBlkStride = 1, src0BlkStride = 1, src1BlkStride = 1;
    uint8_t dstRepStride = 8, src0RepStride = 8, src1RepStride = 8;
};

struct UnaryRepeatParams {
    UnaryRepeatParams() = default;
    UnaryRepeatParams(uint16_t dstBlkStrideIn, uint16_t srcBlkStrideIn, uint8_t dstRepStrideIn, uint8_t srcRepStrideIn)
        : dstBlkStride(dstBlkStrideIn), srcBlkStride(srcBlkStrideIn), dstRepStride(dstRepStrideIn),
          srcRepStride(srcRepStrideIn) {}
    uint16_t dstBlkStride = 1, srcBlkStride = 1;
    uint8_t dstRepStride = 8, srcRepStride = 8;
};

}  // namespace AscendC

namespace ascdsl_sim {

template <class T> constexpr uint32_t per_block() { return 32 / sizeof(T); }
template <class T> constexpr uint32_t per_repeat() { return 256 / sizeof(T); }

// Arithmetic type of an element: float for half/bf16, int64_t for integers (wrap on the way back).
template <class T> using wide_t = std::conditional_t<std::is_integral_v<T>, int64_t, compute_t<T>>;

template <class T>
struct Arg {
    const char* name;
    const AscendC::LocalTensor<T>& t;
    Stride s;
};

template <class D, class F, class... S, size_t... K>
void compute_lanes(std::vector<D>& out, size_t from, F& f, const std::array<Operand, sizeof...(S)>& os,
                   std::index_sequence<K...>, const S*... p) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = f(p[os[K].idx[from + i]]...);
}

// The vector pipe runs dst[lane] = f(src[lane]...) over the active lanes, repeat after repeat: a repeat
// reads all its sources before it writes dst, and sees what earlier repeats wrote (so a dst at repeat
// stride 0 that is also a source at repeat stride 0 accumulates, as CANN's BigBlockReduceSum uses it).
template <class D, class F, class... S>
void elementwise(const char* api, const Lanes& l, F f, const Arg<D>& dst, const Arg<S>&... srcs) {
    require(dst.s.blk != 0, api, "dstBlkStride must not be 0");
    const uint32_t time = begin_op(api);
    Operand od = operand(dst.name, dst.t, lane_offsets(l, dst.s, per_block<D>()));
    std::array<Operand, sizeof...(S)> os{operand(srcs.name, srcs.t, lane_offsets(l, srcs.s, per_block<S>()))...};
    check_operand(api, od);
    for (const Operand& o : os) {
        check_operand(api, o);
        check_overlap(api, od, o);
        read_operand(api, Pipe::V, o);
    }
    const size_t per = l.active.size();
    std::vector<D> out(per);
    D* p = dst.t.ptr();
    for (size_t from = 0; from < od.idx.size(); from += per) {
        compute_lanes<D, F, S...>(out, from, f, os, std::index_sequence_for<S...>{}, srcs.t.ptr()...);
        for (size_t i = 0; i < per; ++i) p[od.idx[from + i]] = out[i];
    }
    write_operand(api, Pipe::V, time, od);
    count_vector(api, l, std::max({sizeof(D), sizeof(S)...}));
}

constexpr const char* kTypeMessage =
    "element type not supported by this vector API on A2/A3 (there is no bfloat16_t arithmetic: Cast to float first)";

template <class Op, class T>
void binary(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src0,
            const AscendC::LocalTensor<T>& src1, const Lanes& l, const AscendC::BinaryRepeatParams& p) {
    auto f = [](T a, T b) { return static_cast<T>(Op::apply(static_cast<wide_t<T>>(a), static_cast<wide_t<T>>(b))); };
    elementwise(api, l, f, Arg<T>{"dst", dst, {p.dstBlkStride, p.dstRepStride}},
                Arg<T>{"src0", src0, {p.src0BlkStride, p.src0RepStride}},
                Arg<T>{"src1", src1, {p.src1BlkStride, p.src1RepStride}});
}

template <class Op, class T>
void with_scalar(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                 const T& scalar, const Lanes& l, const AscendC::UnaryRepeatParams& p) {
    const wide_t<T> s = static_cast<wide_t<T>>(scalar);
    auto f = [s](T a) { return static_cast<T>(Op::apply(static_cast<wide_t<T>>(a), s)); };
    elementwise(api, l, f, Arg<T>{"dst", dst, {p.dstBlkStride, p.dstRepStride}},
                Arg<T>{"src", src, {p.srcBlkStride, p.srcRepStride}});
}

template <class Op, class T>
void unary(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, const Lanes& l,
           const AscendC::UnaryRepeatParams& p) {
    auto f = [](T a) { return static_cast<T>(Op::apply(static_cast<wide_t<T>>(a))); };
    elementwise(api, l, f, Arg<T>{"dst", dst, {p.dstBlkStride, p.dstRepStride}},
                Arg<T>{"src", src, {p.srcBlkStride, p.srcRepStride}});
}

// Shifts by a scalar in [0, bit width]; ShiftRight is arithmetic on signed types, and with roundEn it adds
// the last bit shifted out (round half up).
template <class Op, class T>
void shift(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, const T& scalar,
           const Lanes& l, const AscendC::UnaryRepeatParams& p, bool roundEn = false) {
    const int64_t s = static_cast<int64_t>(scalar);
    require(s >= 0 && s <= int64_t(8 * sizeof(T)), api, "shift ", s, " is outside [0, ", 8 * sizeof(T), "]");
    auto f = [s, roundEn](T a) {
        const int64_t r = Op::apply(static_cast<int64_t>(a), s);
        return static_cast<T>(roundEn && s > 0 ? r + (static_cast<int64_t>(a) >> (s - 1) & 1) : r);
    };
    elementwise(api, l, f, Arg<T>{"dst", dst, {p.dstBlkStride, p.dstRepStride}},
                Arg<T>{"src", src, {p.srcBlkStride, p.srcRepStride}});
}

template <class W> W max_of(W a, W b) { return a > b ? a : b; }
template <class W> W min_of(W a, W b) { return a < b ? a : b; }

}  // namespace ascdsl_sim

// Each element-wise API has a repeat form (a continuous uint64_t mask or a uint64_t[2] bit mask; one
// template serves both overloads) and a count form. SHAPE picks the engine, operands and repeat params.
#define ASCDSL_SIM_UNPAREN(...) __VA_ARGS__
#define ASCDSL_SIM_APPLY(MACRO, ARGS) MACRO ARGS
#define ASCDSL_SIM_SHAPE_BINARY \
    binary, (const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1), (dst, src0, src1), BinaryRepeatParams
#define ASCDSL_SIM_SHAPE_SCALAR \
    with_scalar, (const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue), (dst, src, scalarValue), UnaryRepeatParams
#define ASCDSL_SIM_SHAPE_SHIFT \
    shift, (const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue), (dst, src, scalarValue), UnaryRepeatParams
#define ASCDSL_SIM_SHAPE_UNARY \
    unary, (const LocalTensor<T>& dst, const LocalTensor<T>& src), (dst, src), UnaryRepeatParams

#define ASCDSL_SIM_FORMS(NAME, ENGINE, OPERANDS, ARGS, PARAMS)                                                     \
    namespace AscendC {                                                                                            \
    template <typename T, bool isSetMask = true, typename Mask>                                                    \
    inline void NAME(ASCDSL_SIM_UNPAREN OPERANDS, Mask mask, const ascdsl_sim::RepeatTimes repeatTimes,            \
                     const PARAMS& p) {                                                                            \
        static_assert(ascdsl_sim::NAME##_op::ok<T>, "ascdsl sim: " #NAME ": unsupported element type");           \
        ascdsl_sim::ENGINE<ascdsl_sim::NAME##_op>(                                                                 \
            #NAME, ASCDSL_SIM_UNPAREN ARGS,                                                                        \
            ascdsl_sim::mask_lanes(#NAME, mask, repeatTimes.value, ascdsl_sim::per_repeat<T>()), p);              \
    }                                                                                                              \
    template <typename T, bool isSetMask = true>                                                                   \
    inline void NAME(ASCDSL_SIM_UNPAREN OPERANDS, const int32_t& calCount) {                                       \
        static_assert(ascdsl_sim::NAME##_op::ok<T>, "ascdsl sim: " #NAME ": unsupported element type");           \
        ascdsl_sim::ENGINE<ascdsl_sim::NAME##_op>(#NAME, ASCDSL_SIM_UNPAREN ARGS,                                  \
                                                  ascdsl_sim::count_lanes(#NAME, calCount), PARAMS{});             \
    }                                                                                                              \
    }

#define ASCDSL_SIM_OP(NAME, SHAPE, EXPR, ...)                                                \
    namespace ascdsl_sim {                                                                   \
    struct NAME##_op {                                                                       \
        template <class T> static constexpr bool ok = is_one_of_v<T, __VA_ARGS__>;           \
        template <class W> static W apply(W a, [[maybe_unused]] W b = W()) { return EXPR; } \
    };                                                                                       \
    }                                                                                        \
    ASCDSL_SIM_APPLY(ASCDSL_SIM_FORMS, (NAME, ASCDSL_SIM_SHAPE_##SHAPE))

ASCDSL_SIM_OP(Add, BINARY, a + b, int16_t, half, int32_t, float)
ASCDSL_SIM_OP(Sub, BINARY, a - b, int16_t, half, int32_t, float)
ASCDSL_SIM_OP(Mul, BINARY, a * b, int16_t, half, int32_t, float)
ASCDSL_SIM_OP(Div, BINARY, a / b, half, float)
ASCDSL_SIM_OP(Max, BINARY, max_of(a, b), int16_t, half, int32_t, float)
ASCDSL_SIM_OP(Min, BINARY, min_of(a, b), int16_t, half, int32_t, float)

ASCDSL_SIM_OP(Adds, SCALAR, a + b, int16_t, half, int32_t, float)
ASCDSL_SIM_OP(Muls, SCALAR, a * b, int16_t, half, int32_t, float)
ASCDSL_SIM_OP(Maxs, SCALAR, max_of(a, b), int16_t, half, int32_t, float)
ASCDSL_SIM_OP(Mins, SCALAR, min_of(a, b), int16_t, half, int32_t, float)

ASCDSL_SIM_OP(Exp, UNARY, std::exp(a), half, float)
ASCDSL_SIM_OP(Ln, UNARY, std::log(a), half, float)
ASCDSL_SIM_OP(Abs, UNARY, std::abs(a), half, float)
ASCDSL_SIM_OP(Sqrt, UNARY, std::sqrt(a), half, float)
ASCDSL_SIM_OP(Rsqrt, UNARY, W(1) / std::sqrt(a), half, float)
ASCDSL_SIM_OP(Reciprocal, UNARY, W(1) / a, half, float)
ASCDSL_SIM_OP(Relu, UNARY, max_of(a, W(0)), half, int32_t, float)

// Bitwise ops: 16-bit types only on A2. (CANN 8.1 also accepts 32-bit types in the count form of And/Or but
// reinterprets them as int16_t and counts calCount 16-bit lanes: ReinterpretCast to int16_t and pass 2 * count.)
ASCDSL_SIM_OP(And, BINARY, a & b, int16_t, uint16_t)
ASCDSL_SIM_OP(Or, BINARY, a | b, int16_t, uint16_t)
ASCDSL_SIM_OP(Not, UNARY, ~a, int16_t, uint16_t)
ASCDSL_SIM_OP(ShiftLeft, SHIFT, static_cast<W>(static_cast<uint64_t>(a) << b), int16_t, uint16_t, int32_t, uint32_t)

namespace ascdsl_sim {
struct ShiftRight_op {
    template <class T> static constexpr bool ok = is_one_of_v<T, int16_t, uint16_t, int32_t, uint32_t>;
    static int64_t apply(int64_t a, int64_t b) { return b >= 63 ? (a < 0 ? -1 : 0) : a >> b; }
};
}  // namespace ascdsl_sim

namespace AscendC {
template <typename T, bool isSetMask = true, typename Mask>
inline void ShiftRight(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, Mask mask,
                       const ascdsl_sim::RepeatTimes repeatTimes, const UnaryRepeatParams& p, bool roundEn = false) {
    static_assert(ascdsl_sim::ShiftRight_op::ok<T>, "ascdsl sim: ShiftRight: unsupported element type");
    ascdsl_sim::shift<ascdsl_sim::ShiftRight_op>(
        "ShiftRight", dst, src, scalarValue,
        ascdsl_sim::mask_lanes("ShiftRight", mask, repeatTimes.value, ascdsl_sim::per_repeat<T>()), p, roundEn);
}
template <typename T, bool isSetMask = true>
inline void ShiftRight(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, const int32_t& calCount) {
    static_assert(ascdsl_sim::ShiftRight_op::ok<T>, "ascdsl sim: ShiftRight: unsupported element type");
    ascdsl_sim::shift<ascdsl_sim::ShiftRight_op>("ShiftRight", dst, src, scalarValue,
                                                 ascdsl_sim::count_lanes("ShiftRight", calCount), UnaryRepeatParams{});
}
}  // namespace AscendC

namespace ascdsl_sim {
template <class T> constexpr bool duplicate_ok = is_one_of_v<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>;
template <class T>
void duplicate(const AscendC::LocalTensor<T>& dst, const T& v, const Lanes& l, Stride s) {
    static_assert(duplicate_ok<T>, "ascdsl sim: Duplicate: unsupported element type");
    elementwise("Duplicate", l, [v]() { return v; }, Arg<T>{"dst", dst, s});
}
}  // namespace ascdsl_sim

namespace AscendC {
template <typename T, bool isSetMask = true, typename Mask>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, Mask mask, const ascdsl_sim::RepeatTimes repeatTimes,
                      const uint16_t dstBlockStride, const uint8_t dstRepeatStride) {
    ascdsl_sim::duplicate(dst, scalarValue,
                          ascdsl_sim::mask_lanes("Duplicate", mask, repeatTimes.value, ascdsl_sim::per_repeat<T>()),
                          {dstBlockStride, dstRepeatStride});
}
template <typename T>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const int32_t& calCount) {
    ascdsl_sim::duplicate(dst, scalarValue, ascdsl_sim::count_lanes("Duplicate", calCount), {});
}
}  // namespace AscendC

#endif  // ASCDSL_SIM_ASCDSL_SIM_VECTOR_H
