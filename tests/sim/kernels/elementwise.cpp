// Element-wise APIs (binary, tensor-scalar, unary, Duplicate, Cast) in count and repeat forms.
#include "harness.h"
using namespace AscendC;

// out[k*n:(k+1)*n] = op_k(a, b) for Add, Sub, Mul, Div, Max, Min.
template <typename T>
__aicore__ inline void BinaryCount(GM_ADDR a, GM_ADDR b, GM_ADDR out, uint32_t n) {
    Harness<T, T> h(a, b, out, n, 6 * n);
    h.Process([n](LocalTensor<T>& o, LocalTensor<T>& x, LocalTensor<T>& y, LocalTensor<uint8_t>&) {
        Add(o, x, y, n);
        Sub(o[n], x, y, n);
        Mul(o[2 * n], x, y, n);
        Div(o[3 * n], x, y, n);
        Max(o[4 * n], x, y, n);
        Min(o[5 * n], x, y, n);
    });
}
extern "C" __global__ __aicore__ void binary_count_f32(GM_ADDR a, GM_ADDR b, GM_ADDR out, uint32_t n) {
    BinaryCount<float>(a, b, out, n);
}
extern "C" __global__ __aicore__ void binary_count_f16(GM_ADDR a, GM_ADDR b, GM_ADDR out, uint32_t n) {
    BinaryCount<half>(a, b, out, n);
}

// int32: Add/Sub/Mul/Max/Min wrap like the hardware (no Div for integers).
extern "C" __global__ __aicore__ void binary_count_i32(GM_ADDR a, GM_ADDR b, GM_ADDR out, uint32_t n) {
    Harness<int32_t, int32_t> h(a, b, out, n, 5 * n);
    h.Process([n](LocalTensor<int32_t>& o, LocalTensor<int32_t>& x, LocalTensor<int32_t>& y, LocalTensor<uint8_t>&) {
        Add(o, x, y, n);
        Sub(o[n], x, y, n);
        Mul(o[2 * n], x, y, n);
        Max(o[3 * n], x, y, n);
        Min(o[4 * n], x, y, n);
    });
}

// Repeat forms on 256 floats: continuous mask 40 over 2 repeats, a bit mask, and strided blocks.
extern "C" __global__ __aicore__ void binary_repeat(GM_ADDR a, GM_ADDR b, GM_ADDR out) {
    Harness<float, float> h(a, b, out, 256, 3 * 256);
    h.Process([](LocalTensor<float>& o, LocalTensor<float>& x, LocalTensor<float>& y, LocalTensor<uint8_t>&) {
        Add(o, x, y, 40, 2, {1, 1, 1, 8, 8, 8});
        uint64_t bits[2] = {0xF0F0F0F0F0F0F0F0ull, 0};
        Mul(o[256], x, y, bits, 4, {1, 1, 1, 8, 8, 8});
        // dst blocks 2 apart, src1 broadcast from one block (blkStride 0, repStride 0)
        Sub(o[512], x, y, 64, 2, {2, 1, 0, 16, 8, 0});
    });
}

// Repeats run in order: dst and src1 at repeat stride 0 accumulate the repeats of src0 (as CANN's
// BigBlockReduceSum folds a long row onto its first repeat).
extern "C" __global__ __aicore__ void binary_accumulate(GM_ADDR a, GM_ADDR b, GM_ADDR out) {
    Harness<float, float> h(a, b, out, 256, 64);
    h.Process([](LocalTensor<float>& o, LocalTensor<float>& x, LocalTensor<float>&, LocalTensor<uint8_t>&) {
        Adds(o, x, 0.0f, 64);
        PipeBarrier<PIPE_V>();
        Add(o, x[64], o, 64, 3, {1, 1, 1, 0, 8, 0});
    });
}

// Tensor-scalar ops, count form, then Muls in repeat form with a mask.
extern "C" __global__ __aicore__ void scalar_ops(GM_ADDR a, GM_ADDR b, GM_ADDR out, uint32_t n) {
    Harness<float, float> h(a, b, out, n, 5 * n);
    h.Process([n](LocalTensor<float>& o, LocalTensor<float>& x, LocalTensor<float>&, LocalTensor<uint8_t>&) {
        Adds(o, x, 1.5f, n);
        Muls(o[n], x, -2.0f, n);
        Maxs(o[2 * n], x, 0.25f, n);
        Mins(o[3 * n], x, 0.25f, n);
        Muls(o[4 * n], x, 3.0f, 16, 2, {1, 1, 8, 8});
    });
}

extern "C" __global__ __aicore__ void scalar_ops_f16(GM_ADDR a, GM_ADDR b, GM_ADDR out, uint32_t n) {
    Harness<half, half> h(a, b, out, n, 2 * n);
    h.Process([n](LocalTensor<half>& o, LocalTensor<half>& x, LocalTensor<half>&, LocalTensor<uint8_t>&) {
        Muls(o, x, (half)3.0f, n);
        Adds(o[n], x, (half)0.1f, n);
    });
}

template <typename T>
__aicore__ inline void UnaryCount(GM_ADDR a, GM_ADDR out, uint32_t n) {
    Harness<T, T> h(a, a, out, n, 7 * n);
    h.Process([n](LocalTensor<T>& o, LocalTensor<T>& x, LocalTensor<T>&, LocalTensor<uint8_t>&) {
        Exp(o, x, n);
        Ln(o[n], x, n);
        Abs(o[2 * n], x, n);
        Sqrt(o[3 * n], x, n);
        Rsqrt(o[4 * n], x, n);
        Reciprocal(o[5 * n], x, n);
        Relu(o[6 * n], x, n);
    });
}
extern "C" __global__ __aicore__ void unary_f32(GM_ADDR a, GM_ADDR out, uint32_t n) { UnaryCount<float>(a, out, n); }
extern "C" __global__ __aicore__ void unary_f16(GM_ADDR a, GM_ADDR out, uint32_t n) { UnaryCount<half>(a, out, n); }

// Unary repeat form: Exp on the first 8 lanes of each block-strided repeat.
extern "C" __global__ __aicore__ void unary_repeat(GM_ADDR a, GM_ADDR out) {
    Harness<float, float> h(a, a, out, 128, 128);
    h.Process([](LocalTensor<float>& o, LocalTensor<float>& x, LocalTensor<float>&, LocalTensor<uint8_t>&) {
        uint64_t bits[2] = {0x00000000000000FFull, 0};
        Abs(o, x, bits, 2, {1, 1, 8, 8});
    });
}

// Duplicate: count form, then masked repeat form with dst block stride 2.
extern "C" __global__ __aicore__ void duplicate(GM_ADDR a, GM_ADDR out) {
    Harness<float, float> h(a, a, out, 64, 320);
    h.Process([](LocalTensor<float>& o, LocalTensor<float>&, LocalTensor<float>&, LocalTensor<uint8_t>&) {
        Duplicate(o, 7.0f, 64);
        Duplicate(o[64], -1.0f, 12, 2, 2, 16);
    });
}

// Cast with a RoundMode chosen at run time: out = Cast<TD>(in).
template <typename TS, typename TD>
__aicore__ inline void CastCount(GM_ADDR in, GM_ADDR out, uint32_t n, int32_t mode) {
    Harness<TS, TD> h(in, in, out, n, n);
    h.Process([n, mode](LocalTensor<TD>& o, LocalTensor<TS>& x, LocalTensor<TS>&, LocalTensor<uint8_t>&) {
        Cast(o, x, static_cast<RoundMode>(mode), n);
    });
}
extern "C" __global__ __aicore__ void cast_f32_f16(GM_ADDR in, GM_ADDR out, uint32_t n, int32_t mode) {
    CastCount<float, half>(in, out, n, mode);
}
extern "C" __global__ __aicore__ void cast_f32_bf16(GM_ADDR in, GM_ADDR out, uint32_t n, int32_t mode) {
    CastCount<float, bfloat16_t>(in, out, n, mode);
}
extern "C" __global__ __aicore__ void cast_f16_f32(GM_ADDR in, GM_ADDR out, uint32_t n, int32_t mode) {
    CastCount<half, float>(in, out, n, mode);
}
extern "C" __global__ __aicore__ void cast_bf16_f32(GM_ADDR in, GM_ADDR out, uint32_t n, int32_t mode) {
    CastCount<bfloat16_t, float>(in, out, n, mode);
}
extern "C" __global__ __aicore__ void cast_f32_i32(GM_ADDR in, GM_ADDR out, uint32_t n, int32_t mode) {
    CastCount<float, int32_t>(in, out, n, mode);
}
extern "C" __global__ __aicore__ void cast_i32_f32(GM_ADDR in, GM_ADDR out, uint32_t n, int32_t mode) {
    CastCount<int32_t, float>(in, out, n, mode);
}
extern "C" __global__ __aicore__ void cast_f32_f32(GM_ADDR in, GM_ADDR out, uint32_t n, int32_t mode) {
    CastCount<float, float>(in, out, n, mode);
}
extern "C" __global__ __aicore__ void cast_i64_f32(GM_ADDR in, GM_ADDR out, uint32_t n, int32_t mode) {
    CastCount<int64_t, float>(in, out, n, mode);
}
extern "C" __global__ __aicore__ void cast_f16_i8(GM_ADDR in, GM_ADDR out, uint32_t n, int32_t mode) {
    CastCount<half, int8_t>(in, out, n, mode);
}

// Cast half -> float in repeat form: 64 lanes per repeat, src repeat stride 4 blocks.
extern "C" __global__ __aicore__ void cast_repeat(GM_ADDR in, GM_ADDR out) {
    Harness<half, float> h(in, in, out, 128, 128);
    h.Process([](LocalTensor<float>& o, LocalTensor<half>& x, LocalTensor<half>&, LocalTensor<uint8_t>&) {
        Cast(o, x, RoundMode::CAST_NONE, 64, 2, {1, 1, 8, 4});
    });
}
