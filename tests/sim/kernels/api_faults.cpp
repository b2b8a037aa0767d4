// Faulty uses of the integer, gather, math and debug APIs: each breaks one rule the simulator reports.
// x and y hold 1024 floats; every kernel works on the first n = 64 of them through the Harness.
#include "harness.h"
using namespace AscendC;

template <typename T, class F>
__aicore__ inline void Run(GM_ADDR x, GM_ADDR y, uint32_t tmpBytes, F f) {
    Harness<T, T> h(x, x, y, 256 / sizeof(T) * 2, 64, tmpBytes);
    h.Process([&](LocalTensor<T>& o, LocalTensor<T>& a, LocalTensor<T>& b, LocalTensor<uint8_t>& t) { f(o, a, b, t); });
}

extern "C" __global__ __aicore__ void shift_out_of_range(GM_ADDR x, GM_ADDR y) {
    Run<int16_t>(x, y, 32, [](auto& o, auto& a, auto&, auto&) { ShiftLeft(o, a, (int16_t)17, 64); });
}
extern "C" __global__ __aicore__ void compare_int32_lt(GM_ADDR x, GM_ADDR y) {
    Run<int32_t>(x, y, 32, [](auto&, auto& a, auto& b, auto& t) { Compare(t, a, b, CMPMODE::LT, 64); });
}
extern "C" __global__ __aicore__ void compare_scalar_unaligned_count(GM_ADDR x, GM_ADDR y) {
    Run<float>(x, y, 32, [](auto&, auto& a, auto&, auto& t) { CompareScalar(t, a, 0.0f, CMPMODE::GT, 32); });
}
// Gather with every byte offset equal to `offset`.
__aicore__ inline void GatherAt(GM_ADDR x, GM_ADDR y, uint32_t offset) {
    Run<float>(x, y, 256, [offset](auto& o, auto& a, auto&, auto& t) {
        LocalTensor<uint32_t> off = t.template ReinterpretCast<uint32_t>();
        Duplicate(off, offset, 64);
        PipeBarrier<PIPE_V>();
        Gather(o, a, off, 0, 64);
    });
}
extern "C" __global__ __aicore__ void gather_offset_outside(GM_ADDR x, GM_ADDR y) { GatherAt(x, y, 4096); }
extern "C" __global__ __aicore__ void gather_offset_misaligned(GM_ADDR x, GM_ADDR y) { GatherAt(x, y, 6); }
extern "C" __global__ __aicore__ void gather_mask_bad_pattern(GM_ADDR x, GM_ADDR y) {
    Run<float>(x, y, 32, [](auto& o, auto& a, auto&, auto&) {
        uint64_t kept = 0;
        GatherMask(o, a, 9, false, 0, {1, 1, 8, 0}, kept);
    });
}
extern "C" __global__ __aicore__ void tanh_small_tmp(GM_ADDR x, GM_ADDR y) {
    Run<half>(x, y, 256, [](auto& o, auto& a, auto&, auto& t) { Tanh(o, a, t, 64); });
}
extern "C" __global__ __aicore__ void erf_no_free_ub(GM_ADDR x, GM_ADDR y) {
    Run<float>(x, y, 194900, [](auto& o, auto& a, auto&, auto&) { Erf(o, a, 64); });
}
extern "C" __global__ __aicore__ void tanh_misaligned(GM_ADDR x, GM_ADDR y) {
    Run<float>(x, y, 256, [](auto& o, auto& a, auto&, auto& t) { Tanh(o, a[1], t, 32); });
}
extern "C" __global__ __aicore__ void tanh_tmp_overlaps_src(GM_ADDR x, GM_ADDR y) {
    Run<float>(x, y, 32, [](auto& o, auto& a, auto&, auto&) { Tanh(o, a, a.template ReinterpretCast<uint8_t>(), 64); });
}
extern "C" __global__ __aicore__ void cumsum_unaligned_inner(GM_ADDR x, GM_ADDR y) {
    Run<float>(x, y, 4096, [](auto& o, auto& a, auto&, auto& t) {
        LocalTensor<float> dst = o, last = o;
        CumSum<float>(dst, last, a, t, {8, 7});
    });
}
extern "C" __global__ __aicore__ void cumsum_small_tmp(GM_ADDR x, GM_ADDR y) {
    Run<float>(x, y, 1024, [](auto& o, auto& a, auto&, auto& t) {
        LocalTensor<float> dst = o, last = o[32];
        CumSum<float>(dst, last, a, t, {1, 32});
    });
}
extern "C" __global__ __aicore__ void arange_zero_step(GM_ADDR x, GM_ADDR y) {
    Run<int32_t>(x, y, 32, [](auto& o, auto&, auto&, auto&) { ArithProgression(o, 0, 0, 16); });
}
extern "C" __global__ __aicore__ void dump_unaligned(GM_ADDR x, GM_ADDR y) {
    Run<float>(x, y, 32, [](auto& o, auto&, auto&, auto&) { DumpTensor(o, 1, 3); });
}
extern "C" __global__ __aicore__ void xor_small_tmp(GM_ADDR x, GM_ADDR y) {
    Run<int16_t>(x, y, 64, [](auto& o, auto& a, auto& b, auto& t) { Xor(o, a, b, t, 64); });
}
