// MIX kernels, hand-written (tests/sim/test_cube.py): an AIC and its two AIVs passing tiles through GM.
#include "cube.cpp"

// What an AIV of these kernels does with a 16 x 16 half tile: its 8 rows (GetSubBlockIdx) GM -> UB, a vector op
// of them, UB -> GM.
class AivRows {
public:
    static constexpr uint32_t ROWS = 8 * 16;

    __aicore__ inline void Init()
    {
        pipe.InitBuffer(in, 1, ROWS * sizeof(half));
        pipe.InitBuffer(out, 1, ROWS * sizeof(half));
    }

    template <class Op>
    __aicore__ inline void Run(GM_ADDR src, GM_ADDR dst, Op op)
    {
        const uint32_t offset = static_cast<uint32_t>(GetSubBlockIdx()) * ROWS;
        GlobalTensor<half> srcGm, dstGm;
        srcGm.SetGlobalBuffer((__gm__ half*)src + offset);
        dstGm.SetGlobalBuffer((__gm__ half*)dst + offset);
        LocalTensor<half> x = in.AllocTensor<half>();
        DataCopy(x, srcGm, ROWS);
        in.EnQue(x);
        x = in.DeQue<half>();
        LocalTensor<half> y = out.AllocTensor<half>();
        op(y, x, ROWS);
        in.FreeTensor(x);
        out.EnQue(y);
        y = out.DeQue<half>();
        DataCopy(dstGm, y, ROWS);
        out.FreeTensor(y);
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> in;
    TQue<QuePosition::VECOUT, 1> out;
};

// The AIC computes C = A * B (16 x 16 x 16, half) into a GM workspace and sets
// cross-core flag 0; each of its two AIVs waits for it, applies relu to its 8 rows and stores them.
// `fault` breaks the protocol: 1 = the AIC sets no flag, 2 = the AIVs read without waiting.
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
    AivRows rows;
    rows.Init();
    rows.Run(ws, c, [](const LocalTensor<half>& y, const LocalTensor<half>& x, uint32_t n) { Relu(y, x, n); });
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
        AivRows rows;
        rows.Init();
        rows.Run(a, ws, [](const LocalTensor<half>& y, const LocalTensor<half>& x, uint32_t n) {
            Muls(y, x, static_cast<half>(2), n);
        });
        if (fault != 1 || GetSubBlockIdx() == 0) CrossCoreSetFlag<2, PIPE_MTE3>(1);
        return;
    }
    if (fault != 2) CrossCoreWaitFlag<2, PIPE_S>(1);
    TiledMatmul<half, false> op;
    op.Init(ws, b, c, 16, 16, 16, 16, 16, 16);
    op.Process();
}

// Tiles both ways over `steps` steps, on `chains` independent 16 x 16 half tiles: the AIC multiplies chain t's
// left operand (A's tile t at the first step, else xs's) by B into the workspace ws and sets flag 0; its AIVs
// scale their rows of it by 1/4 into xs, the AIC's next left operand, and set flag 1, or at the last step into
// C. The AIC waits for flag 1 before each product past the first step. With two chains it multiplies one while
// its AIVs scale the other; with one the cores take turns. `fault` 1: the AIC waits for flag 1 before its first
// product, while its AIVs wait for flag 0 (both sides wait).
extern "C" __global__ __aicore__ void ping_pong_mix(GM_ADDR a, GM_ADDR b, GM_ADDR ws, GM_ADDR xs, GM_ADDR c,
                                                    uint32_t chains, uint32_t steps, uint32_t fault)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    constexpr uint32_t TILE = 16 * 16 * sizeof(half);
    if ASCEND_IS_AIC {
        if (fault == 1) CrossCoreWaitFlag<2, PIPE_S>(1);
        for (uint32_t s = 0; s < steps; ++s) {
            for (uint32_t t = 0; t < chains; ++t) {
                if (s > 0) CrossCoreWaitFlag<2, PIPE_S>(1);
                TiledMatmul<half, false> op;
                op.Init((s == 0 ? a : xs) + t * TILE, b, ws + t * TILE, 16, 16, 16, 16, 16, 16);
                op.Process();
                CrossCoreSetFlag<2, PIPE_FIX>(0);
            }
        }
        return;
    }
    AivRows rows;
    rows.Init();
    for (uint32_t s = 0; s < steps; ++s) {
        for (uint32_t t = 0; t < chains; ++t) {
            CrossCoreWaitFlag<2, PIPE_S>(0);
            rows.Run(ws + t * TILE, (s + 1 == steps ? c : xs) + t * TILE,
                     [](const LocalTensor<half>& y, const LocalTensor<half>& x, uint32_t n) {
                         Muls(y, x, static_cast<half>(0.25f), n);
                     });
            if (s + 1 < steps) CrossCoreSetFlag<2, PIPE_MTE3>(1);
        }
    }
}

// Two tiles published by flags of two ids: the AIC computes A * B (16 x 16 x 16, half) into the workspace's
// tile 0 and sets flag 0, then again into its tile 1 and sets flag 1; each AIV waits for flag 1 and takes its
// rows of tile 1 (relu) into C's tile 1, then waits for flag 0 and does the same with tile 0: each read comes
// after a wait whose set followed the tile's write, though not in the order of the sets. `fault` 1: the AIVs
// read tile 1 after waiting for flag 0 only, whose set came before tile 1's write.
extern "C" __global__ __aicore__ void two_flags_mix(GM_ADDR a, GM_ADDR b, GM_ADDR ws, GM_ADDR c, uint32_t fault)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    constexpr uint32_t TILE = 16 * 16 * sizeof(half);
    if ASCEND_IS_AIC {
        for (uint16_t t = 0; t < 2; ++t) {
            TiledMatmul<half, false> op;
            op.Init(a, b, ws + t * TILE, 16, 16, 16, 16, 16, 16);
            op.Process();
            CrossCoreSetFlag<2, PIPE_FIX>(t);
        }
        return;
    }
    AivRows rows;
    rows.Init();
    const auto relu = [](const LocalTensor<half>& y, const LocalTensor<half>& x, uint32_t n) { Relu(y, x, n); };
    CrossCoreWaitFlag<2, PIPE_S>(fault == 1 ? 0 : 1);
    rows.Run(ws + TILE, c + TILE, relu);
    CrossCoreWaitFlag<2, PIPE_S>(fault == 1 ? 1 : 0);
    rows.Run(ws, c, relu);
}
