// Faulty kernels: each breaks exactly one rule the simulator must report. x and y hold 1024 floats.
#include "kernel_operator.h"
using namespace AscendC;

// A block's view of x and y plus one VECIN queue, one VECOUT queue and a VECCALC buffer of 1 KiB each.
struct Setup {
    __aicore__ inline Setup(GM_ADDR x, GM_ADDR y) {
        xGm.SetGlobalBuffer((__gm__ float*)x, 1024);
        yGm.SetGlobalBuffer((__gm__ float*)y, 1024);
        pipe.InitBuffer(inQ, 1, 1024);
        pipe.InitBuffer(outQ, 1, 1024);
        pipe.InitBuffer(calc, 1024);
    }
    // x[0:256] loaded through the queue and dequeued: ready for the vector pipe.
    __aicore__ inline LocalTensor<float> Load() {
        LocalTensor<float> t = inQ.AllocTensor<float>();
        DataCopy(t, xGm, 256);
        inQ.EnQue(t);
        return inQ.DeQue<float>();
    }
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> inQ;
    TQue<QuePosition::VECOUT, 1> outQ;
    TBuf<TPosition::VECCALC> calc;
    GlobalTensor<float> xGm, yGm;
};

// ---- UB size and buffer limits ----
extern "C" __global__ __aicore__ void ub_overflow(GM_ADDR x, GM_ADDR y) {
    TPipe pipe;
    TQue<QuePosition::VECIN, 2> a;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(a, 2, 64 * 1024);
    pipe.InitBuffer(b, 70000);
}

extern "C" __global__ __aicore__ void reserved_ub(GM_ADDR x, GM_ADDR y) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> big, mask;
    pipe.InitBuffer(big, 186 * 1024);
    pipe.InitBuffer(mask, 256);
    LocalTensor<float> t = big.Get<float>();
    Duplicate(t, 1.0f, 64);
    PipeBarrier<PIPE_V>();
    Compare(mask.Get<uint8_t>(), t, t, CMPMODE::EQ, 64);
}

extern "C" __global__ __aicore__ void too_many_queue_buffers(GM_ADDR x, GM_ADDR y) {
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> q[5];
    for (auto& que : q) pipe.InitBuffer(que, 2, 256);
}

extern "C" __global__ __aicore__ void too_many_buffers(GM_ADDR x, GM_ADDR y) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> bufs[65];
    for (auto& b : bufs) pipe.InitBuffer(b, 32);
}

// ---- operand and parameter checks ----
extern "C" __global__ __aicore__ void misaligned_operand(GM_ADDR x, GM_ADDR y) {
    Setup s(x, y);
    LocalTensor<float> in = s.Load();
    LocalTensor<float> out = s.outQ.AllocTensor<float>();
    Add(out, in[1], in, 8);
}

extern "C" __global__ __aicore__ void datacopy_unaligned_count(GM_ADDR x, GM_ADDR y) {
    Setup s(x, y);
    LocalTensor<float> t = s.inQ.AllocTensor<float>();
    DataCopy(t, s.xGm, 7);
}

extern "C" __global__ __aicore__ void compare_unaligned_count(GM_ADDR x, GM_ADDR y) {
    Setup s(x, y);
    LocalTensor<float> in = s.Load();
    Compare(s.calc.Get<uint8_t>(), in, in, CMPMODE::EQ, 32);
}

extern "C" __global__ __aicore__ void pad_too_wide(GM_ADDR x, GM_ADDR y) {
    Setup s(x, y);
    LocalTensor<float> t = s.inQ.AllocTensor<float>();
    DataCopyPad(t, s.xGm, {1, 16, 0, 0, 0}, {true, 0, 9, 0.0f});
}

extern "C" __global__ __aicore__ void block_count_over(GM_ADDR x, GM_ADDR y) {
    Setup s(x, y);
    LocalTensor<float> t = s.inQ.AllocTensor<float>();
    DataCopy(t, s.xGm, {5000, 1, 0, 0});
}

extern "C" __global__ __aicore__ void repeat_over_255(GM_ADDR x, GM_ADDR y, int32_t repeat) {
    Setup s(x, y);
    LocalTensor<float> in = s.Load();
    LocalTensor<float> out = s.outQ.AllocTensor<float>();
    Add(out, in, in, 64, repeat, {1, 1, 1, 0, 0, 0});
}

extern "C" __global__ __aicore__ void widening_cast_overlap(GM_ADDR x, GM_ADDR y) {
    Setup s(x, y);
    LocalTensor<half> h = s.calc.Get<half>();
    Duplicate(h, (half)1.0f, 64);
    PipeBarrier<PIPE_V>();
    Cast(h.ReinterpretCast<float>(), h, RoundMode::CAST_NONE, 64);
}

extern "C" __global__ __aicore__ void reduce_max_small_work(GM_ADDR x, GM_ADDR y) {
    Setup s(x, y);
    LocalTensor<float> in = s.Load();
    LocalTensor<float> out = s.outQ.AllocTensor<float>();
    LocalTensor<float> work = s.calc.Get<float>(8);
    ReduceMax(out, in, work, 256, true);  // 4 repeats: 8 + 8 elements with the index level
}

extern "C" __global__ __aicore__ void operand_past_end(GM_ADDR x, GM_ADDR y) {
    Setup s(x, y);
    LocalTensor<float> in = s.Load();
    LocalTensor<float> out = s.outQ.AllocTensor<float>();
    Add(out, in, in, 512);
}

// ---- queue misuse ----
extern "C" __global__ __aicore__ void deque_empty(GM_ADDR x, GM_ADDR y) {
    Setup s(x, y);
    s.inQ.DeQue<float>();
}

// A bound queue's buffer loaded (handed from MTE2 to V) but dequeued as if computed (V to MTE3).
extern "C" __global__ __aicore__ void bound_deque_wrong_hand_over(GM_ADDR x, GM_ADDR y) {
    Setup s(x, y);
    TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> q;
    s.pipe.InitBuffer(q, 1, 1024);
    LocalTensor<float> t = q.AllocTensor<float>();
    DataCopy(t, s.xGm, 256);
    q.EnQue<TPosition::GM, TPosition::VECIN>(t);
    q.DeQue<TPosition::VECOUT, TPosition::GM, float>();
}

// A bound queue used as CANN's kernels use it: loaded, computed in place, stored from the same buffer.
extern "C" __global__ __aicore__ void bound_in_place(GM_ADDR x, GM_ADDR y) {
    Setup s(x, y);
    TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> q;
    s.pipe.InitBuffer(q, 2, 1024);
    for (int i = 0; i < 4; ++i) {
        LocalTensor<float> t = q.AllocTensor<float>();
        DataCopy(t, s.xGm[i * 256], 256);
        q.EnQue<TPosition::GM, TPosition::VECIN>(t);
        LocalTensor<float> v = q.DeQue<TPosition::GM, TPosition::VECIN, float>();
        Muls(v, v, 2.0f, 256);
        q.EnQue<TPosition::VECOUT, TPosition::GM>(v);
        LocalTensor<float> o = q.DeQue<TPosition::VECOUT, TPosition::GM, float>();
        DataCopy(s.yGm[i * 256], o, 256);
        q.FreeTensor(o);
    }
}

extern "C" __global__ __aicore__ void alloc_beyond_count(GM_ADDR x, GM_ADDR y) {
    Setup s(x, y);
    s.inQ.AllocTensor<float>();
    s.inQ.AllocTensor<float>();
}

extern "C" __global__ __aicore__ void enque_beyond_depth(GM_ADDR x, GM_ADDR y) {
    TPipe pipe;
    TQue<QuePosition::VECOUT, 1> q;
    pipe.InitBuffer(q, 2, 256);
    LocalTensor<float> a = q.AllocTensor<float>();
    LocalTensor<float> b = q.AllocTensor<float>();
    q.EnQue(a);
    q.EnQue(b);
}

extern "C" __global__ __aicore__ void free_twice(GM_ADDR x, GM_ADDR y) {
    Setup s(x, y);
    LocalTensor<float> t = s.outQ.AllocTensor<float>();
    s.outQ.FreeTensor(t);
    s.outQ.FreeTensor(t);
}

extern "C" __global__ __aicore__ void free_wrong_queue(GM_ADDR x, GM_ADDR y) {
    Setup s(x, y);
    LocalTensor<float> t = s.outQ.AllocTensor<float>();
    s.inQ.FreeTensor(t);
}

// ---- GM ----
// Block 1 reads past the end of x.
extern "C" __global__ __aicore__ void gm_out_of_bounds(GM_ADDR x, GM_ADDR y) {
    Setup s(x, y);
    LocalTensor<float> t = s.inQ.AllocTensor<float>();
    DataCopy(t, s.xGm[GetBlockIdx() * 1000], 256);
}

// Every block writes y[0:64].
extern "C" __global__ __aicore__ void gm_write_race(GM_ADDR x, GM_ADDR y, uint32_t alike) {
    Setup s(x, y);
    LocalTensor<float> out = s.outQ.AllocTensor<float>();
    // `alike`: every block the same values (a benign overlap); else each block its own, differing in their
    // low bytes: 1 + blockIdx ulps of 1.0f
    const double ulps = alike ? 0.0 : static_cast<double>(GetBlockIdx());
    Duplicate(out, static_cast<float>(1.0 + ulps * 1.1920928955078125e-07), 64);
    s.outQ.EnQue(out);
    out = s.outQ.DeQue<float>();
    DataCopy(s.yGm, out, 64);
    s.outQ.FreeTensor(out);
}

// ---- hazards ----
extern "C" __global__ __aicore__ void vv_missing_barrier(GM_ADDR x, GM_ADDR y) {
    Setup s(x, y);
    LocalTensor<float> in = s.Load();
    LocalTensor<float> tmp = s.calc.Get<float>();
    Exp(tmp, in, 256);
    Muls(tmp, tmp, 2.0f, 256);
}

extern "C" __global__ __aicore__ void vs_missing_flag(GM_ADDR x, GM_ADDR y) {
    Setup s(x, y);
    LocalTensor<float> in = s.Load();
    LocalTensor<float> tmp = s.calc.Get<float>();
    Exp(tmp, in, 256);
    s.yGm.SetValue(0, tmp.GetValue(3));
}

extern "C" __global__ __aicore__ void sv_missing_flag(GM_ADDR x, GM_ADDR y) {
    Setup s(x, y);
    LocalTensor<float> tmp = s.calc.Get<float>();
    tmp.SetValue(0, 1.0f);
    Adds(tmp, tmp, 1.0f, 8);
}

extern "C" __global__ __aicore__ void mte2_v_missing_sync(GM_ADDR x, GM_ADDR y) {
    Setup s(x, y);
    LocalTensor<float> tmp = s.calc.Get<float>();
    DataCopy(tmp, s.xGm, 64);
    Exp(tmp, tmp, 64);
}

extern "C" __global__ __aicore__ void v_mte3_missing_sync(GM_ADDR x, GM_ADDR y) {
    Setup s(x, y);
    LocalTensor<float> tmp = s.calc.Get<float>();
    Duplicate(tmp, 1.0f, 64);
    DataCopy(s.yGm, tmp, 64);
}

// The next tile is loaded over data the vector pipe is still reading: needs V_MTE2.
extern "C" __global__ __aicore__ void war_missing_sync(GM_ADDR x, GM_ADDR y) {
    Setup s(x, y);
    LocalTensor<float> tmp = s.calc.Get<float>();
    DataCopy(tmp, s.xGm, 64);
    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    Exp(tmp[64], tmp, 64);
    DataCopy(tmp, s.xGm[64], 64);
}

// A vector result written over bytes an unfinished copy-in also writes: needs MTE2_V.
extern "C" __global__ __aicore__ void waw_missing_sync(GM_ADDR x, GM_ADDR y) {
    Setup s(x, y);
    LocalTensor<float> tmp = s.calc.Get<float>();
    DataCopy(tmp, s.xGm, 64);
    Duplicate(tmp, 0.0f, 64);
}

extern "C" __global__ __aicore__ void touch_while_queued(GM_ADDR x, GM_ADDR y) {
    Setup s(x, y);
    LocalTensor<float> out = s.outQ.AllocTensor<float>();
    Duplicate(out, 1.0f, 64);
    s.outQ.EnQue(out);
    Adds(out, out, 1.0f, 64);
}

extern "C" __global__ __aicore__ void use_after_free(GM_ADDR x, GM_ADDR y) {
    Setup s(x, y);
    LocalTensor<float> in = s.Load();
    s.inQ.FreeTensor(in);
    LocalTensor<float> tmp = s.calc.Get<float>();
    Exp(tmp, in, 64);
}

extern "C" __global__ __aicore__ void wait_without_set(GM_ADDR x, GM_ADDR y) {
    WaitFlag<HardEvent::V_S>(EVENT_ID2);
}
