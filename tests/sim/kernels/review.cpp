// Kernels from the review of the simulator: each pins one semantic or check that was wrong before.
#include "kernel_operator.h"
using namespace AscendC;

// MTE3 copies t out; then an in-place vector op overwrites t without an MTE3_V flag: a WAR hazard
// (the op's own vector read of t must not hide MTE3's pending read).
extern "C" __global__ __aicore__ void war_inplace(GM_ADDR x, GM_ADDR y) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> calc;
    pipe.InitBuffer(calc, 1024);
    GlobalTensor<float> yGm;
    yGm.SetGlobalBuffer((__gm__ float*)y, 1024);
    LocalTensor<float> t = calc.Get<float>();
    Duplicate(t, 1.0f, 64);
    SetFlag<HardEvent::V_MTE3>(0);
    WaitFlag<HardEvent::V_MTE3>(0);
    DataCopy(yGm, t, 64);
    PipeBarrier<PIPE_V>();
    Muls(t, t, 2.0f, 64);
}

// The same with the vector read in a separate op before the overwrite; `sync` adds the missing flag.
extern "C" __global__ __aicore__ void war_after_vector_read(GM_ADDR x, GM_ADDR y, int32_t sync) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> calc;
    pipe.InitBuffer(calc, 1024);
    GlobalTensor<float> yGm;
    yGm.SetGlobalBuffer((__gm__ float*)y, 1024);
    LocalTensor<float> t = calc.Get<float>();
    Duplicate(t, 1.0f, 64);
    SetFlag<HardEvent::V_MTE3>(0);
    WaitFlag<HardEvent::V_MTE3>(0);
    DataCopy(yGm, t, 64);
    PipeBarrier<PIPE_V>();
    Muls(t[64], t, 2.0f, 64);
    if (sync) {
        SetFlag<HardEvent::MTE3_V>(0);
        WaitFlag<HardEvent::MTE3_V>(0);
    }
    Duplicate(t, 3.0f, 64);
}
