// High-level math APIs (Tanh, Erf, Sin, Cos, Log2, Log, Log10, CumSum) and rounding through Cast.
#include "harness.h"
using namespace AscendC;

// out[k*n:(k+1)*n] = Tanh, Erf, Sin, Cos, Log2 (with a sharedTmpBuffer of tmpBytes), Log, Log10 of x.
template <typename T>
__aicore__ inline void MathAll(GM_ADDR a, GM_ADDR out, uint32_t n, uint32_t tmpBytes) {
    Harness<T, T> h(a, a, out, n, 7 * n, tmpBytes);
    h.Process([n](LocalTensor<T>& o, LocalTensor<T>& x, LocalTensor<T>&, LocalTensor<uint8_t>& t) {
        Tanh(o, x, t, n);
        Erf(o[n], x, t, n);
        Sin(o[2 * n], x, t, n);
        Cos(o[3 * n], x, t, n);
        Log2(o[4 * n], x, t, n);
        Log(o[5 * n], x, n);
        Log10(o[6 * n], x, n);
    });
}
extern "C" __global__ __aicore__ void math_f32(GM_ADDR a, GM_ADDR out, uint32_t n, uint32_t tmpBytes) {
    MathAll<float>(a, out, n, tmpBytes);
}
extern "C" __global__ __aicore__ void math_f16(GM_ADDR a, GM_ADDR out, uint32_t n, uint32_t tmpBytes) {
    MathAll<half>(a, out, n, tmpBytes);
}

// Without sharedTmpBuffer the APIs use the UB InitBuffer left free; Sin with isReuseSource in place.
extern "C" __global__ __aicore__ void math_no_tmp(GM_ADDR a, GM_ADDR out, uint32_t n) {
    Harness<float, float> h(a, a, out, n, 2 * n);
    h.Process([n](LocalTensor<float>& o, LocalTensor<float>& x, LocalTensor<float>&, LocalTensor<uint8_t>& t) {
        Tanh(o, x, n);
        Sin<float, true>(x, x, n);
        PipeBarrier<PIPE_V>();
        DataCopy(o[n], x, n);
    });
}

// CumSum of an [m, k] tile along the last axis (out[0:m*k], last row in out[m*k:(m+1)*k]) and the first axis.
template <typename T>
__aicore__ inline void CumSums(GM_ADDR a, GM_ADDR out, uint32_t m, uint32_t k) {
    Harness<T, T> h(a, a, out, m * k, 3 * m * k + k, 4 * 16 * k * sizeof(T) + m * k * 4);
    h.Process([m, k](LocalTensor<T>& o, LocalTensor<T>& x, LocalTensor<T>&, LocalTensor<uint8_t>& t) {
        static constexpr CumSumConfig rows{true, false, true};
        static constexpr CumSumConfig cols{false, false, false};
        LocalTensor<T> last = o[m * k];
        LocalTensor<T> dst = o;
        CumSum<T, rows>(dst, last, x, t, {m, k});
        LocalTensor<T> dst2 = o[m * k + k];
        CumSum<T, cols>(dst2, last, x, t, {m, k});
    });
}
extern "C" __global__ __aicore__ void cumsum_f32(GM_ADDR a, GM_ADDR out, uint32_t m, uint32_t k) {
    CumSums<float>(a, out, m, k);
}
extern "C" __global__ __aicore__ void cumsum_f16(GM_ADDR a, GM_ADDR out, uint32_t m, uint32_t k) {
    CumSums<half>(a, out, m, k);
}

// floor/ceil/round/trunc of half: Cast to float, Cast float -> float with the mode, Cast back (exact).
extern "C" __global__ __aicore__ void round_f16(GM_ADDR a, GM_ADDR out, uint32_t n, int32_t mode) {
    Harness<half, half> h(a, a, out, n, n, 2 * n * sizeof(float));
    h.Process([n, mode](LocalTensor<half>& o, LocalTensor<half>& x, LocalTensor<half>&, LocalTensor<uint8_t>& t) {
        LocalTensor<float> f = t.ReinterpretCast<float>();
        LocalTensor<float> r = f[n];
        Cast(f, x, RoundMode::CAST_NONE, n);
        PipeBarrier<PIPE_V>();
        Cast(r, f, static_cast<RoundMode>(mode), n);
        PipeBarrier<PIPE_V>();
        Cast(o, r, RoundMode::CAST_RINT, n);
    });
}
