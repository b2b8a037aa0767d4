// A MIX kernel, hand-written: the AIC computes C = A * B (16 x 16 x 16, half) into a GM workspace and sets
// cross-core flag 0; each of its two AIVs waits for it, applies relu to its 8 rows and stores them.
// `fault` breaks the protocol: 1 = the AIC sets no flag, 2 = the AIVs read without waiting.
#include "cube.cpp"

extern "C" __global__ __aicore__ void matmul_relu_mix(GM_ADDR a, GM_ADDR b, GM_ADDR ws, GM_ADDR c, uint32_t fault)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIC {
        TiledMatmul<half, false> op;
        op.Init(a, b, ws, 16, 16, 16, 16, 16, 16);
        op.Process();
        if (fault != 1) CrossCoreSetFlag<2, PIPE_FIX>(0);
        return;
    }
    if (fault != 2) CrossCoreWaitFlag<2, PIPE_S>(0);
    const uint32_t rows = 8 * 16, offset = static_cast<uint32_t>(GetSubBlockIdx()) * rows;
    GlobalTensor<half> wsGm, cGm;
    wsGm.SetGlobalBuffer((__gm__ half*)ws + offset);
    cGm.SetGlobalBuffer((__gm__ half*)c + offset);
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> in;
    TQue<QuePosition::VECOUT, 1> out;
    pipe.InitBuffer(in, 1, rows * sizeof(half));
    pipe.InitBuffer(out, 1, rows * sizeof(half));
    LocalTensor<half> x = in.AllocTensor<half>();
    DataCopy(x, wsGm, rows);
    in.EnQue(x);
    x = in.DeQue<half>();
    LocalTensor<half> y = out.AllocTensor<half>();
    Relu(y, x, rows);
    in.FreeTensor(x);
    out.EnQue(y);
    y = out.DeQue<half>();
    DataCopy(cGm, y, rows);
    out.FreeTensor(y);
}

// Each core of a MIX block prints what it is: GetBlockIdx, GetBlockNum, GetTaskRation and GetSubBlockIdx.
extern "C" __global__ __aicore__ void mix_ids()
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIC {
        printf("AIC %d of %d: ration %d, sub-block %d\n", static_cast<int>(GetBlockIdx()),
               static_cast<int>(GetBlockNum()), static_cast<int>(GetTaskRation()), static_cast<int>(GetSubBlockIdx()));
        CrossCoreSetFlag<2, PIPE_FIX>(0);
        return;
    }
    CrossCoreWaitFlag<2, PIPE_S>(0);
    printf("AIV %d of %d: ration %d, sub-block %d\n", static_cast<int>(GetBlockIdx()),
           static_cast<int>(GetBlockNum()), static_cast<int>(GetTaskRation()), static_cast<int>(GetSubBlockIdx()));
}

// The other direction: each AIV doubles its 8 rows of A into the GM workspace and sets cross-core flag 1; the
// AIC waits for both AIVs' sets, then computes C = (2 A) * B (16 x 16 x 16, half) from the workspace.
// `fault` breaks the protocol: 1 = AIV 1 sets no flag, 2 = the AIC reads without waiting.
extern "C" __global__ __aicore__ void doubled_matmul_mix(GM_ADDR a, GM_ADDR b, GM_ADDR ws, GM_ADDR c, uint32_t fault)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIV {
        const uint32_t rows = 8 * 16, offset = static_cast<uint32_t>(GetSubBlockIdx()) * rows;
        GlobalTensor<half> aGm, wsGm;
        aGm.SetGlobalBuffer((__gm__ half*)a + offset);
        wsGm.SetGlobalBuffer((__gm__ half*)ws + offset);
        TPipe pipe;
        TQue<QuePosition::VECIN, 1> in;
        TQue<QuePosition::VECOUT, 1> out;
        pipe.InitBuffer(in, 1, rows * sizeof(half));
        pipe.InitBuffer(out, 1, rows * sizeof(half));
        LocalTensor<half> x = in.AllocTensor<half>();
        DataCopy(x, aGm, rows);
        in.EnQue(x);
        x = in.DeQue<half>();
        LocalTensor<half> y = out.AllocTensor<half>();
        Muls(y, x, static_cast<half>(2), rows);
        in.FreeTensor(x);
        out.EnQue(y);
        y = out.DeQue<half>();
        DataCopy(wsGm, y, rows);
        out.FreeTensor(y);
        if (fault != 1 || GetSubBlockIdx() == 0) CrossCoreSetFlag<2, PIPE_MTE3>(1);
        return;
    }
    if (fault != 2) CrossCoreWaitFlag<2, PIPE_S>(1);
    TiledMatmul<half, false> op;
    op.Init(ws, b, c, 16, 16, 16, 16, 16, 16);
    op.Process();
}
