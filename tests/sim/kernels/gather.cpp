// Gather by byte offsets, GatherMask compaction, ArithProgression and CreateVecIndex.
#include "harness.h"
using namespace AscendC;

// out[i] = src[offset[i] / 4] for n floats (the offsets travel as the bits of the second input).
extern "C" __global__ __aicore__ void gather_f32(GM_ADDR src, GM_ADDR offsets, GM_ADDR out, uint32_t n) {
    Harness<float, float> h(src, offsets, out, n, n);
    h.Process([n](LocalTensor<float>& o, LocalTensor<float>& x, LocalTensor<float>& y, LocalTensor<uint8_t>&) {
        Gather(o, x, y.ReinterpretCast<uint32_t>(), 0, n);
    });
}

// Repeat form on half with srcBaseAddr 64: one repeat, the first 100 lanes (the rest keep dst).
extern "C" __global__ __aicore__ void gather_f16_masked(GM_ADDR src, GM_ADDR offsets, GM_ADDR out) {
    Harness<half, half> h(src, offsets, out, 256, 128);
    h.Process([](LocalTensor<half>& o, LocalTensor<half>& x, LocalTensor<half>& y, LocalTensor<uint8_t>&) {
        Gather(o, x, y.ReinterpretCast<uint32_t>(), 64, 100, 1, 8);
    });
}

// Built-in patterns in normal mode (2 repeats of 64 floats): out[0:64] = even elements (pattern 1),
// out[64:96] = every 4th starting at 3 (pattern 6); out[96] = the two kept counts.
extern "C" __global__ __aicore__ void gather_mask_fixed(GM_ADDR src, GM_ADDR b, GM_ADDR out) {
    Harness<float, float> h(src, b, out, 128, 104);
    h.Process([](LocalTensor<float>& o, LocalTensor<float>& x, LocalTensor<float>&, LocalTensor<uint8_t>&) {
        uint64_t even = 0, fourth = 0;
        GatherMask(o, x, 1, false, 0, {1, 2, 8, 0}, even);
        GatherMask(o[64], x, 6, false, 0, {1, 2, 8, 0}, fourth);
        Duplicate(o[96], static_cast<float>(even * 1000 + fourth), 8);
    });
}

// Compaction: out[0:k] = the x > 0 elements of n floats (CompareScalar bits as a uint32 pattern, counter
// mode, one repeat of n elements); out[n:n+8] = k.
extern "C" __global__ __aicore__ void compact_positive(GM_ADDR src, GM_ADDR b, GM_ADDR out, uint32_t n) {
    Harness<float, float> h(src, b, out, n, n + 8, n / 8);
    h.Process([n](LocalTensor<float>& o, LocalTensor<float>& x, LocalTensor<float>&, LocalTensor<uint8_t>& t) {
        CompareScalar(t, x, 0.0f, CMPMODE::GT, n);
        PipeBarrier<PIPE_V>();
        uint64_t kept = 0;
        GatherMask(o, x, t.ReinterpretCast<uint32_t>(), true, n, {1, 1, 8, 0}, kept);
        Duplicate(o[n], static_cast<float>(kept), 8);
    });
}

// out = ArithProgression(first, diff, n) for int32, float and half (n up to the tensor's size).
template <typename T>
__aicore__ inline void Progression(GM_ADDR a, GM_ADDR out, uint32_t n, T first, T diff) {
    Harness<T, T> h(a, a, out, 32 / sizeof(T), (n * sizeof(T) + 31) / 32 * 32 / sizeof(T));
    h.Process([=](LocalTensor<T>& o, LocalTensor<T>&, LocalTensor<T>&, LocalTensor<uint8_t>&) {
        ArithProgression(o, first, diff, n);
    });
}
extern "C" __global__ __aicore__ void arange_i32(GM_ADDR a, GM_ADDR out, uint32_t n, int32_t first, int32_t diff) {
    Progression<int32_t>(a, out, n, first, diff);
}
extern "C" __global__ __aicore__ void arange_f32(GM_ADDR a, GM_ADDR out, uint32_t n, float first, float diff) {
    Progression<float>(a, out, n, first, diff);
}
extern "C" __global__ __aicore__ void arange_f16(GM_ADDR a, GM_ADDR out, uint32_t n, float first, float diff) {
    Progression<half>(a, out, n, (half)first, (half)diff);
}

// out[i] = 5 + i for n int32 (CreateVecIndex), then the arange feeds a float Cast (tl.arange(...).to(float)).
extern "C" __global__ __aicore__ void vec_index(GM_ADDR a, GM_ADDR out, uint32_t n) {
    Harness<int32_t, int32_t> h(a, a, out, 8, 2 * n);
    h.Process([n](LocalTensor<int32_t>& o, LocalTensor<int32_t>&, LocalTensor<int32_t>&, LocalTensor<uint8_t>&) {
        CreateVecIndex(o, 5, n);
        PipeBarrier<PIPE_V>();
        Cast(o[n].ReinterpretCast<float>(), o, RoundMode::CAST_NONE, n);
    });
}
