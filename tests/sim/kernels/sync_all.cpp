// SyncAll, the barrier over every block of a launch (tests/sim/test_sync_all.py): blocks exchanging values through
// GM, barriers in a loop, the protocol errors, and a cost test. `sync` 0 puts PipeBarrier<PIPE_ALL> (what SyncAll
// starts with) where the SyncAll was.
#include "kernel_operator.h"
using namespace AscendC;

constexpr uint32_t SLOT = 8;  // floats per block's GM slot: one 32-byte block

// A block's 32-byte UB tile and its GM traffic, ordered by flags.
class Slot {
public:
    __aicore__ inline Slot()
    {
        pipe.InitBuffer(buf, SLOT * sizeof(float));
        t = buf.Get<float>();
    }
    __aicore__ inline void Load(const GlobalTensor<float>& gm, uint32_t slot)
    {
        DataCopy(t, gm[slot * SLOT], SLOT);
        SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    }
    __aicore__ inline void Store(const GlobalTensor<float>& gm, uint32_t slot)
    {
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        DataCopy(gm[slot * SLOT], t, SLOT);
        SetFlag<HardEvent::MTE3_V>(EVENT_ID0);
        WaitFlag<HardEvent::MTE3_V>(EVENT_ID0);
    }

    LocalTensor<float> t;

private:
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
};

__aicore__ inline void Barrier(uint32_t sync)
{
    if (sync) {
        SyncAll();
    } else {
        PipeBarrier<PIPE_ALL>();
    }
}

// Block b writes b + 1 to its slot, then stores twice the value in block (b + 1) % n's slot to out[b].
extern "C" __global__ __aicore__ void exchange(GM_ADDR slots, GM_ADDR out, uint32_t sync)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    const uint32_t b = GetBlockIdx(), n = GetBlockNum();
    GlobalTensor<float> slotGm, outGm;
    slotGm.SetGlobalBuffer((__gm__ float*)slots, n * SLOT);
    outGm.SetGlobalBuffer((__gm__ float*)out, n * SLOT);
    Slot s;
    Duplicate(s.t, static_cast<float>(b + 1), SLOT);
    s.Store(slotGm, b);
    Barrier(sync);
    s.Load(slotGm, (b + 1) % n);
    Muls(s.t, s.t, 2.0f, SLOT);
    s.Store(outGm, b);
}

// `rounds` steps of a ring: each block's value becomes its next block's times 2 plus its own index; two barriers a
// step (the slots are read before any block writes them again). `early`: block n - 1 returns before the first.
extern "C" __global__ __aicore__ void ring(GM_ADDR init, GM_ADDR slots, GM_ADDR out, uint32_t rounds, uint32_t early)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    const uint32_t b = GetBlockIdx(), n = GetBlockNum();
    if (early && b == n - 1) return;
    GlobalTensor<float> initGm, slotGm, outGm;
    initGm.SetGlobalBuffer((__gm__ float*)init, n * SLOT);
    slotGm.SetGlobalBuffer((__gm__ float*)slots, n * SLOT);
    outGm.SetGlobalBuffer((__gm__ float*)out, n * SLOT);
    Slot s;
    s.Load(initGm, b);
    for (uint32_t r = 0; r < rounds; ++r) {
        s.Store(slotGm, b);
        SyncAll();
        s.Load(slotGm, (b + 1) % n);
        Muls(s.t, s.t, 2.0f, SLOT);
        PipeBarrier<PIPE_V>();
        Adds(s.t, s.t, static_cast<float>(b), SLOT);
        SyncAll();
    }
    s.Store(outGm, b);
}

// Block 0 runs `work` vector instructions over a 16 KiB tile before the barrier, the others none; then every block
// stores its slot.
extern "C" __global__ __aicore__ void slow_first(GM_ADDR out, uint32_t work, uint32_t sync)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    constexpr uint32_t TILE = 4096;
    const uint32_t b = GetBlockIdx();
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, TILE * sizeof(float));
    LocalTensor<float> x = buf.Get<float>();
    Duplicate(x, 1.0f, TILE);
    for (uint32_t i = 0; b == 0 && i < work; ++i) {
        PipeBarrier<PIPE_V>();
        Muls(x, x, 1.0f, TILE);
    }
    Barrier(sync);
    GlobalTensor<float> outGm;
    outGm.SetGlobalBuffer((__gm__ float*)out, GetBlockNum() * SLOT);
    DataCopy(outGm[b * SLOT], x, SLOT);
}

// SyncAll<false> (the AIC and AIV cores of a MIX launch).
extern "C" __global__ __aicore__ void sync_all_cores()
{
    SyncAll<false>();
}

// SyncAll<true>, to run in a MIX launch.
extern "C" __global__ __aicore__ void sync_all_mix()
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    SyncAll();
}

// The software form, over a GM workspace of flags.
extern "C" __global__ __aicore__ void sync_all_soft(GM_ADDR workspace)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 8 * 32);
    GlobalTensor<int32_t> ws;
    ws.SetGlobalBuffer((__gm__ int32_t*)workspace, GetBlockNum() * 8);
    SyncAll(ws, buf.Get<int32_t>());
}
