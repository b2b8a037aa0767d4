// Reductions, Brcb, Compare and Select.
#include "harness.h"
using namespace AscendC;

// out[0] = ReduceSum, out[8..9] = ReduceMax value/index, out[16..17] = ReduceMin value/index.
extern "C" __global__ __aicore__ void reduce_all_f32(GM_ADDR a, GM_ADDR out, uint32_t n) {
    Harness<float, float> h(a, a, out, n, 24, 1024);
    h.Process([n](LocalTensor<float>& o, LocalTensor<float>& x, LocalTensor<float>&, LocalTensor<uint8_t>& t) {
        LocalTensor<float> work = t.ReinterpretCast<float>();
        ReduceSum(o, x, work, n);
        ReduceMax(o[8], x, work[64], n, true);
        ReduceMin(o[16], x, work[128], n, true);
    });
}

extern "C" __global__ __aicore__ void reduce_sum_f16(GM_ADDR a, GM_ADDR out, uint32_t n) {
    Harness<half, half> h(a, a, out, n, 16, 1024);
    h.Process([n](LocalTensor<half>& o, LocalTensor<half>& x, LocalTensor<half>&, LocalTensor<uint8_t>& t) {
        ReduceSum(o, x, t.ReinterpretCast<half>(), n);
    });
}

// Repeat form: 3 repeats of 64 floats, tree of trees.
extern "C" __global__ __aicore__ void reduce_sum_repeat(GM_ADDR a, GM_ADDR out) {
    Harness<float, float> h(a, a, out, 192, 8, 1024);
    h.Process([](LocalTensor<float>& o, LocalTensor<float>& x, LocalTensor<float>&, LocalTensor<uint8_t>& t) {
        ReduceSum(o, x, t.ReinterpretCast<float>(), 64, 3, 8);
    });
}

// WholeReduceSum: one sum per repeat of `mask` lanes; rows of 64 floats, dstRepStride 1.
extern "C" __global__ __aicore__ void whole_reduce_sum(GM_ADDR a, GM_ADDR out, int32_t mask, int32_t repeat) {
    Harness<float, float> h(a, a, out, 512, 16);
    h.Process([mask, repeat](LocalTensor<float>& o, LocalTensor<float>& x, LocalTensor<float>&, LocalTensor<uint8_t>&) {
        WholeReduceSum(o, x, mask, repeat, 1, 1, 8);
    });
}

// WholeReduceMax with every ReduceOrder: 2 repeats each, outputs 8 floats apart.
extern "C" __global__ __aicore__ void whole_reduce_max(GM_ADDR a, GM_ADDR out) {
    Harness<float, float> h(a, a, out, 128, 32);
    h.Process([](LocalTensor<float>& o, LocalTensor<float>& x, LocalTensor<float>&, LocalTensor<uint8_t>&) {
        WholeReduceMax(o, x, 64, 2, 1, 1, 8);
        WholeReduceMax(o[8], x, 64, 2, 1, 1, 8, ReduceOrder::ORDER_INDEX_VALUE);
        WholeReduceMax(o[16], x, 64, 2, 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE);
        WholeReduceMin(o[24], x, 64, 2, 1, 1, 8, ReduceOrder::ORDER_ONLY_INDEX);
    });
}

// BlockReduceSum: 8 sums per repeat (one per 32-byte block), 2 repeats.
extern "C" __global__ __aicore__ void block_reduce_sum(GM_ADDR a, GM_ADDR out) {
    Harness<float, float> h(a, a, out, 128, 16);
    h.Process([](LocalTensor<float>& o, LocalTensor<float>& x, LocalTensor<float>&, LocalTensor<uint8_t>&) {
        BlockReduceSum(o, x, 2, 64, 1, 1, 8);
    });
}

// Brcb: 16 floats -> 16 blocks of 8 copies each (2 repeats).
extern "C" __global__ __aicore__ void brcb(GM_ADDR a, GM_ADDR out) {
    Harness<float, float> h(a, a, out, 16, 128);
    h.Process([](LocalTensor<float>& o, LocalTensor<float>& x, LocalTensor<float>&, LocalTensor<uint8_t>&) {
        Brcb(o, x, 2, {1, 8});
    });
}

// Compare (count form) in mode `mode`: n floats -> n bits.
extern "C" __global__ __aicore__ void compare(GM_ADDR a, GM_ADDR b, GM_ADDR out, uint32_t n, int32_t mode) {
    Harness<float, uint8_t> h(a, b, out, n, 32);
    h.Process([n, mode](LocalTensor<uint8_t>& o, LocalTensor<float>& x, LocalTensor<float>& y, LocalTensor<uint8_t>&) {
        Compare(o, x, y, static_cast<CMPMODE>(mode), n);
    });
}

// Compare in repeat form (2 repeats of 64) on half: bits of repeat r start at byte r * 8... of 128 lanes.
extern "C" __global__ __aicore__ void compare_repeat_f16(GM_ADDR a, GM_ADDR b, GM_ADDR out) {
    Harness<half, uint8_t> h(a, b, out, 256, 32);
    h.Process([](LocalTensor<uint8_t>& o, LocalTensor<half>& x, LocalTensor<half>& y, LocalTensor<uint8_t>&) {
        Compare(o, x, y, CMPMODE::LT, 128, 2, {1, 1, 1, 8, 8, 8});
    });
}

// Compare then Select: out[0:n] = a < b ? a : b (tensor mode), out[n:2n] = a < b ? a : 0.5 (scalar mode).
extern "C" __global__ __aicore__ void select_modes(GM_ADDR a, GM_ADDR b, GM_ADDR out, uint32_t n) {
    Harness<float, float> h(a, b, out, n, 2 * n, 256);
    h.Process([n](LocalTensor<float>& o, LocalTensor<float>& x, LocalTensor<float>& y, LocalTensor<uint8_t>& t) {
        Compare(t, x, y, CMPMODE::LT, n);
        PipeBarrier<PIPE_V>();
        Select(o, t, x, y, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
        Select(o[n], t, x, 0.5f, SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
    });
}

// Select mode 0 reuses the first repeat's 64 mask bits in every repeat.
extern "C" __global__ __aicore__ void select_mode0(GM_ADDR a, GM_ADDR b, GM_ADDR out, GM_ADDR mask) {
    Harness<float, float> h(a, b, out, 128, 128, 32);
    GlobalTensor<uint8_t> maskGm;
    maskGm.SetGlobalBuffer((__gm__ uint8_t*)mask, 32);
    h.Process([&](LocalTensor<float>& o, LocalTensor<float>& x, LocalTensor<float>& y, LocalTensor<uint8_t>& t) {
        DataCopy(t, maskGm, 32);
        SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
        Select(o, t, x, y, SELMODE::VSEL_CMPMASK_SPR, 128);
    });
}
