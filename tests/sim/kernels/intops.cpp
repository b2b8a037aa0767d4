// Integer vector arithmetic, bitwise ops, shifts, int32 comparisons and bit-mask logic.
#include "harness.h"
using namespace AscendC;

// int16: out[k*n:(k+1)*n] for And, Or, Not(a), a << 3, a >> 2 (arithmetic), then the repeat form of And
// with a continuous mask of 100 lanes (the rest keep dst).
extern "C" __global__ __aicore__ void logic_i16(GM_ADDR a, GM_ADDR b, GM_ADDR out, uint32_t n) {
    Harness<int16_t, int16_t> h(a, b, out, n, 6 * n);
    h.Process([n](LocalTensor<int16_t>& o, LocalTensor<int16_t>& x, LocalTensor<int16_t>& y, LocalTensor<uint8_t>&) {
        And(o, x, y, n);
        Or(o[n], x, y, n);
        Not(o[2 * n], x, n);
        ShiftLeft(o[3 * n], x, (int16_t)3, n);
        ShiftRight(o[4 * n], x, (int16_t)2, n);
        And(o[5 * n], x, y, 100, 1, {1, 1, 1, 8, 8, 8});
    });
}

// uint16 Or/Not and logical right shift.
extern "C" __global__ __aicore__ void logic_u16(GM_ADDR a, GM_ADDR b, GM_ADDR out, uint32_t n) {
    Harness<uint16_t, uint16_t> h(a, b, out, n, 3 * n);
    h.Process([n](LocalTensor<uint16_t>& o, LocalTensor<uint16_t>& x, LocalTensor<uint16_t>& y, LocalTensor<uint8_t>&) {
        Or(o, x, y, n);
        Not(o[n], x, n);
        ShiftRight(o[2 * n], x, (uint16_t)5, n);
    });
}

// 32-bit shifts: int32 arithmetic and rounding right shift, uint32 logical right shift, left shift by 31.
extern "C" __global__ __aicore__ void shift_32(GM_ADDR a, GM_ADDR b, GM_ADDR out, uint32_t n) {
    Harness<int32_t, int32_t> h(a, b, out, n, 4 * n);
    h.Process([n](LocalTensor<int32_t>& o, LocalTensor<int32_t>& x, LocalTensor<int32_t>&, LocalTensor<uint8_t>&) {
        ShiftRight(o, x, 4, n);
        ShiftRight(o[n], x, 4, 64, n / 64, {1, 1, 8, 8}, true);
        LocalTensor<uint32_t> u = x.ReinterpretCast<uint32_t>();
        LocalTensor<uint32_t> ou = o[2 * n].ReinterpretCast<uint32_t>();
        ShiftRight(ou, u, 4u, n);
        ShiftLeft(o[3 * n], x, 31, n);
    });
}

// int16 and int32 arithmetic with a scalar, and int16 binary ops, all wrapping.
template <typename T>
__aicore__ inline void IntArith(GM_ADDR a, GM_ADDR b, GM_ADDR out, uint32_t n) {
    Harness<T, T> h(a, b, out, n, 9 * n);
    h.Process([n](LocalTensor<T>& o, LocalTensor<T>& x, LocalTensor<T>& y, LocalTensor<uint8_t>&) {
        Add(o, x, y, n);
        Sub(o[n], x, y, n);
        Mul(o[2 * n], x, y, n);
        Max(o[3 * n], x, y, n);
        Min(o[4 * n], x, y, n);
        Adds(o[5 * n], x, (T)-7, n);
        Muls(o[6 * n], x, (T)3, n);
        Maxs(o[7 * n], x, (T)5, n);
        Mins(o[8 * n], x, (T)5, n);
    });
}
extern "C" __global__ __aicore__ void arith_i16(GM_ADDR a, GM_ADDR b, GM_ADDR out, uint32_t n) {
    IntArith<int16_t>(a, b, out, n);
}
extern "C" __global__ __aicore__ void arith_i32(GM_ADDR a, GM_ADDR b, GM_ADDR out, uint32_t n) {
    IntArith<int32_t>(a, b, out, n);
}

// Integer |x| without an integer Abs: Max(x, -x) (wraps at the minimum like C).
extern "C" __global__ __aicore__ void abs_i32(GM_ADDR a, GM_ADDR b, GM_ADDR out, uint32_t n) {
    Harness<int32_t, int32_t> h(a, b, out, n, n, n * sizeof(int32_t));
    h.Process([n](LocalTensor<int32_t>& o, LocalTensor<int32_t>& x, LocalTensor<int32_t>&, LocalTensor<uint8_t>& t) {
        LocalTensor<int32_t> neg = t.ReinterpretCast<int32_t>();
        Muls(neg, x, -1, n);
        PipeBarrier<PIPE_V>();
        Max(o, x, neg, n);
    });
}

// Bool tiles as bit masks: out bytes [0, n/8) = a == b (int32 Compare), [n/8, 2n/8) = a < b composed exactly
// as Not(Max(a, b) == a), [2n/8, 3n/8) = (a == b) | (a < b), [3n/8, 4n/8) = a == 7 (CompareScalar).
extern "C" __global__ __aicore__ void int_compare(GM_ADDR a, GM_ADDR b, GM_ADDR out, uint32_t n) {
    Harness<int32_t, uint8_t> h(a, b, out, n, n / 2, n * sizeof(int32_t));
    h.Process([n](LocalTensor<uint8_t>& o, LocalTensor<int32_t>& x, LocalTensor<int32_t>& y, LocalTensor<uint8_t>& t) {
        const uint32_t bytes = n / 8;
        LocalTensor<int32_t> mx = t.ReinterpretCast<int32_t>();
        Compare(o, x, y, CMPMODE::EQ, n);
        Max(mx, x, y, n);
        PipeBarrier<PIPE_V>();
        Compare(o[bytes], mx, x, CMPMODE::EQ, n);
        CompareScalar(o[3 * bytes], x, 7, CMPMODE::EQ, n);
        PipeBarrier<PIPE_V>();
        LocalTensor<uint16_t> ge = o[bytes].ReinterpretCast<uint16_t>();
        Not(ge, ge, bytes / 2);
        PipeBarrier<PIPE_V>();
        Or(o[2 * bytes].ReinterpretCast<uint16_t>(), o.ReinterpretCast<uint16_t>(), ge, bytes / 2);
    });
}

// where(a < 0.5 & b >= -0.25, a, b) and where(~(a < 0.5), a, 0): CompareScalar on float, masks combined
// with And/Not on uint16 views, then Select.
extern "C" __global__ __aicore__ void mask_select(GM_ADDR a, GM_ADDR b, GM_ADDR out, uint32_t n) {
    Harness<float, float> h(a, b, out, n, 2 * n, n / 8 * 3);
    h.Process([n](LocalTensor<float>& o, LocalTensor<float>& x, LocalTensor<float>& y, LocalTensor<uint8_t>& t) {
        const uint32_t bytes = n / 8;
        CompareScalar(t, x, 0.5f, CMPMODE::LT, n);
        CompareScalar(t[bytes], y, -0.25f, CMPMODE::GE, n);
        PipeBarrier<PIPE_V>();
        And(t[2 * bytes].ReinterpretCast<uint16_t>(), t.ReinterpretCast<uint16_t>(),
            t[bytes].ReinterpretCast<uint16_t>(), bytes / 2);
        PipeBarrier<PIPE_V>();
        Not(t[bytes].ReinterpretCast<uint16_t>(), t.ReinterpretCast<uint16_t>(), bytes / 2);
        PipeBarrier<PIPE_V>();
        Select(o, t[2 * bytes], x, y, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
        Select(o[n], t[bytes], x, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
    });
}

// CompareScalar in repeat form on half (2 repeats of 128 lanes, GT).
extern "C" __global__ __aicore__ void compare_scalar_repeat(GM_ADDR a, GM_ADDR b, GM_ADDR out) {
    Harness<half, uint8_t> h(a, b, out, 256, 32);
    h.Process([](LocalTensor<uint8_t>& o, LocalTensor<half>& x, LocalTensor<half>&, LocalTensor<uint8_t>&) {
        CompareScalar(o, x, (half)0.0f, CMPMODE::GT, 128, 2, {1, 1, 8, 8});
    });
}

// Xor (high-level): out[0:n] = a ^ b on int16 with a shared temp, out[n:2n] = the same on uint16 views
// without one (bool tiles as bit masks combine the same way: a ^ b of two Compare results).
extern "C" __global__ __aicore__ void xor_16(GM_ADDR a, GM_ADDR b, GM_ADDR out, uint32_t n) {
    Harness<int16_t, int16_t> h(a, b, out, n, 2 * n, 256);
    h.Process([n](LocalTensor<int16_t>& o, LocalTensor<int16_t>& x, LocalTensor<int16_t>& y, LocalTensor<uint8_t>& t) {
        Xor(o, x, y, t, n);
        Xor(o[n].ReinterpretCast<uint16_t>(), x.ReinterpretCast<uint16_t>(), y.ReinterpretCast<uint16_t>(), n);
    });
}

// where(c, a, b) on int32 data: Select on the float view moves the bits unchanged; c = (a == b) from Compare.
extern "C" __global__ __aicore__ void select_i32(GM_ADDR a, GM_ADDR b, GM_ADDR out, uint32_t n) {
    Harness<int32_t, int32_t> h(a, b, out, n, 2 * n, n / 8);
    h.Process([n](LocalTensor<int32_t>& o, LocalTensor<int32_t>& x, LocalTensor<int32_t>& y, LocalTensor<uint8_t>& t) {
        Compare(t, x, y, CMPMODE::EQ, n);
        Duplicate(o[n], -3, n);
        PipeBarrier<PIPE_V>();
        Select(o.ReinterpretCast<float>(), t, o[n].ReinterpretCast<float>(), x.ReinterpretCast<float>(),
               SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
    });
}
