// The cube core's data path, hand-written: a tiled C = A * B (A: M x K row-major, B: K x N row-major, or
// given transposed as N x K), each block computing its output tiles through L1, L0A/L0B and L0C.
#include "kernel_operator.h"
using namespace AscendC;

template <typename T> struct CubeOut { using type = T; };
template <> struct CubeOut<int8_t> { using type = int32_t; };

__aicore__ inline uint32_t CeilTo(uint32_t x, uint32_t n) { return (x + n - 1) / n * n; }

// bTransposed: B arrives as its transpose (N x K row-major), so its Nz fractals are L0B's as they are;
// otherwise B's 16 x 16 fractals are transposed on the way from L1 to L0B (16-bit types), or its 32 x 32 squares
// of two 16 x 32 fractals (int8, LoadDataWithTranspose: K rows in L1 a whole number of squares).
template <typename T, bool bTransposed>
class TiledMatmul {
public:
    using OutT = typename CubeOut<T>::type;
    using AccT = typename std::conditional<IsSameType<T, int8_t>::value, int32_t, float>::type;
    static constexpr uint32_t C0 = 32 / sizeof(T);
    static constexpr uint32_t FRACTAL = 512 / sizeof(T);

    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR c, uint32_t m, uint32_t n, uint32_t k,
                                uint32_t baseM, uint32_t baseN, uint32_t baseK)
    {
        M = m, N = n, K = k, baseM_ = baseM, baseN_ = baseN, baseK_ = baseK;
        aGm.SetGlobalBuffer((__gm__ T*)a);
        bGm.SetGlobalBuffer((__gm__ T*)b);
        cGm.SetGlobalBuffer((__gm__ OutT*)c);
        pipe.InitBuffer(inQueueA1, 2, baseM * baseK * sizeof(T));
        pipe.InitBuffer(inQueueB1, 2, baseK * baseN * sizeof(T));
        pipe.InitBuffer(inQueueA2, 2, baseM * baseK * sizeof(T));
        pipe.InitBuffer(inQueueB2, 2, baseK * baseN * sizeof(T));
        pipe.InitBuffer(outQueueCO1, 1, baseM * baseN * sizeof(AccT));
    }

    __aicore__ inline void Process()
    {
        const uint32_t tilesN = (N + baseN_ - 1) / baseN_;
        const uint32_t tiles = (M + baseM_ - 1) / baseM_ * tilesN;
        for (uint32_t t = GetBlockIdx(); t < tiles; t += GetBlockNum()) {
            const uint32_t m0 = t / tilesN * baseM_, n0 = t % tilesN * baseN_;
            const uint32_t mt = M - m0 < baseM_ ? M - m0 : baseM_, nt = N - n0 < baseN_ ? N - n0 : baseN_;
            LocalTensor<AccT> c1 = outQueueCO1.AllocTensor<AccT>();
            for (uint32_t k0 = 0; k0 < K; k0 += baseK_) {
                const uint32_t kt = K - k0 < baseK_ ? K - k0 : baseK_;
                CopyIn(m0, n0, k0, mt, nt, kt);
                SplitA(mt, kt);
                SplitB(nt, kt);
                Compute(c1, mt, nt, kt, k0 == 0);
            }
            outQueueCO1.EnQue(c1);
            CopyOut(m0, n0, mt, nt);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t m0, uint32_t n0, uint32_t k0, uint32_t mt, uint32_t nt, uint32_t kt)
    {
        LocalTensor<T> a1 = inQueueA1.AllocTensor<T>();
        DataCopy(a1, aGm[uint64_t(m0) * K + k0], Nd2NzParams(1, mt, kt, 0, K, CeilTo(mt, 16), 1, 0));
        inQueueA1.EnQue(a1);
        LocalTensor<T> b1 = inQueueB1.AllocTensor<T>();
        if constexpr (bTransposed) {
            DataCopy(b1, bGm[uint64_t(n0) * K + k0], Nd2NzParams(1, nt, kt, 0, K, CeilTo(nt, 16), 1, 0));
        } else {
            DataCopy(b1, bGm[uint64_t(k0) * N + n0], Nd2NzParams(1, kt, nt, 0, N, CeilTo(kt, C0), 1, 0));
        }
        inQueueB1.EnQue(b1);
    }

    // L1 Nz (fractals column-major) -> L0A (fractals row-major): one LoadData per row of fractals.
    __aicore__ inline void SplitA(uint32_t mt, uint32_t kt)
    {
        const uint32_t m1 = CeilTo(mt, 16) / 16, k1 = CeilTo(kt, C0) / C0;
        LocalTensor<T> a1 = inQueueA1.DeQue<T>();
        LocalTensor<T> a2 = inQueueA2.AllocTensor<T>();
        for (uint32_t i = 0; i < m1; i++) {
            LoadData(a2[i * k1 * FRACTAL], a1, LoadData2DParams(i, k1, m1, 0, 0, false, 0));
        }
        inQueueA2.EnQue(a2);
        inQueueA1.FreeTensor(a1);
    }

    __aicore__ inline void SplitB(uint32_t nt, uint32_t kt)
    {
        const uint32_t n1 = CeilTo(nt, 16) / 16, k1 = CeilTo(kt, C0) / C0;
        LocalTensor<T> b1 = inQueueB1.DeQue<T>();
        LocalTensor<T> b2 = inQueueB2.AllocTensor<T>();
        if constexpr (bTransposed) {
            // B^T's Nz fractals (16 columns of B x C0 of K), column-major over K: already L0B's order
            for (uint32_t j = 0; j < k1; j++) {
                LoadData(b2[j * n1 * FRACTAL], b1, LoadData2DParams(j * n1, n1, 1, 0, 0, false, 0));
            }
        } else if constexpr (sizeof(T) == 1) {
            // square (j, c) of K x N at c * k1 + j: its transpose is L0B's fractals (j, 2c) and (j, 2c + 1)
            for (uint32_t j = 0; j < k1; j++) {
                LoadDataWithTranspose(b2[j * n1 * FRACTAL], b1[j * 2 * FRACTAL],
                                      LoadData2dTransposeParams(0, (n1 + 1) / 2, k1, 1, 0));
            }
        } else {
            for (uint32_t j = 0; j < k1; j++) {
                LoadData(b2[j * n1 * FRACTAL], b1, LoadData2DParams(j, n1, k1, 0, 0, true, 0));
            }
        }
        inQueueB2.EnQue(b2);
        inQueueB1.FreeTensor(b1);
    }

    __aicore__ inline void Compute(LocalTensor<AccT>& c1, uint32_t mt, uint32_t nt, uint32_t kt, bool first)
    {
        LocalTensor<T> a2 = inQueueA2.DeQue<T>();
        LocalTensor<T> b2 = inQueueB2.DeQue<T>();
        MmadParams params;
        params.m = mt;
        params.n = nt;
        params.k = kt;
        params.cmatrixInitVal = first;
        Mmad(c1, a2, b2, params);
        inQueueA2.FreeTensor(a2);
        inQueueB2.FreeTensor(b2);
    }

    __aicore__ inline void CopyOut(uint32_t m0, uint32_t n0, uint32_t mt, uint32_t nt)
    {
        LocalTensor<AccT> c1 = outQueueCO1.DeQue<AccT>();
        FixpipeParamsV220 params;
        params.nSize = nt;
        params.mSize = mt;
        params.srcStride = CeilTo(mt, 16);
        params.dstStride = N;
        if constexpr (IsSameType<OutT, half>::value) {
            params.quantPre = QuantMode_t::F322F16;
        } else if constexpr (IsSameType<OutT, bfloat16_t>::value) {
            params.quantPre = QuantMode_t::F322BF16;
        }
        Fixpipe<OutT, AccT, CFG_ROW_MAJOR>(cGm[uint64_t(m0) * N + n0], c1, params);
        outQueueCO1.FreeTensor(c1);
    }

    TPipe pipe;
    TQue<TPosition::A1, 1> inQueueA1;
    TQue<TPosition::B1, 1> inQueueB1;
    TQue<TPosition::A2, 1> inQueueA2;
    TQue<TPosition::B2, 1> inQueueB2;
    TQue<TPosition::CO1, 1> outQueueCO1;
    GlobalTensor<T> aGm, bGm;
    GlobalTensor<OutT> cGm;
    uint32_t M = 0, N = 0, K = 0, baseM_ = 0, baseN_ = 0, baseK_ = 0;
};

extern "C" __global__ __aicore__ void matmul_half(GM_ADDR a, GM_ADDR b, GM_ADDR c, uint32_t m, uint32_t n, uint32_t k,
                                             uint32_t baseM, uint32_t baseN, uint32_t baseK)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    TiledMatmul<half, false> op;
    op.Init(a, b, c, m, n, k, baseM, baseN, baseK);
    op.Process();
}

extern "C" __global__ __aicore__ void matmul_bf16(GM_ADDR a, GM_ADDR b, GM_ADDR c, uint32_t m, uint32_t n, uint32_t k,
                                             uint32_t baseM, uint32_t baseN, uint32_t baseK)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    TiledMatmul<bfloat16_t, false> op;
    op.Init(a, b, c, m, n, k, baseM, baseN, baseK);
    op.Process();
}

extern "C" __global__ __aicore__ void matmul_half_bt(GM_ADDR a, GM_ADDR b, GM_ADDR c, uint32_t m, uint32_t n, uint32_t k,
                                             uint32_t baseM, uint32_t baseN, uint32_t baseK)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    TiledMatmul<half, true> op;
    op.Init(a, b, c, m, n, k, baseM, baseN, baseK);
    op.Process();
}

extern "C" __global__ __aicore__ void matmul_int8(GM_ADDR a, GM_ADDR b, GM_ADDR c, uint32_t m, uint32_t n, uint32_t k,
                                             uint32_t baseM, uint32_t baseN, uint32_t baseK)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    TiledMatmul<int8_t, false> op;
    op.Init(a, b, c, m, n, k, baseM, baseN, baseK);
    op.Process();
}

extern "C" __global__ __aicore__ void matmul_int8_bt(GM_ADDR a, GM_ADDR b, GM_ADDR c, uint32_t m, uint32_t n, uint32_t k,
                                             uint32_t baseM, uint32_t baseN, uint32_t baseK)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    TiledMatmul<int8_t, true> op;
    op.Init(a, b, c, m, n, k, baseM, baseN, baseK);
    op.Process();
}


// Faults: L0A holds 64 KB; a Fixpipe whose quantPre does not convert float to half.
extern "C" __global__ __aicore__ void l0a_overflow(GM_ADDR a)
{
    (void)a;
    TPipe pipe;
    TQue<TPosition::A2, 1> inQueueA2;
    pipe.InitBuffer(inQueueA2, 2, 40 * 1024);
}

extern "C" __global__ __aicore__ void fixpipe_without_quant(GM_ADDR c)
{
    GlobalTensor<half> cGm;
    cGm.SetGlobalBuffer((__gm__ half*)c);
    TPipe pipe;
    TQue<TPosition::CO1, 1> outQueueCO1;
    pipe.InitBuffer(outQueueCO1, 1, 16 * 16 * sizeof(float));
    LocalTensor<float> c1 = outQueueCO1.AllocTensor<float>();
    FixpipeParamsV220 params;
    params.nSize = 16;
    params.mSize = 16;
    params.srcStride = 16;
    params.dstStride = 16;
    Fixpipe(cGm, c1, params);
    outQueueCO1.FreeTensor(c1);
}

// InitConstValue: L0A zeroed (4 fractals of K), then 1 in fractals 0 and 2 (2 runs of 1 block, 1 block apart); L0B
// 1 throughout: every element of C = A * B (16 x 16, k = 64) counts the 32 ones of its row of A.
extern "C" __global__ __aicore__ void init_const_value(GM_ADDR c)
{
    GlobalTensor<half> cGm;
    cGm.SetGlobalBuffer((__gm__ half*)c);
    TPipe pipe;
    TQue<TPosition::A2, 1> inQueueA2;
    TQue<TPosition::B2, 1> inQueueB2;
    TQue<TPosition::CO1, 1> outQueueCO1;
    pipe.InitBuffer(inQueueA2, 1, 4 * 512);
    pipe.InitBuffer(inQueueB2, 1, 4 * 512);
    pipe.InitBuffer(outQueueCO1, 1, 16 * 16 * sizeof(float));
    LocalTensor<half> a2 = inQueueA2.AllocTensor<half>();
    InitConstValue(a2, InitConstValueParams<half>(1, 4, 0, half(0)));
    InitConstValue(a2, InitConstValueParams<half>(2, 1, 1, half(1)));
    LocalTensor<half> b2 = inQueueB2.AllocTensor<half>();
    InitConstValue(b2.ReinterpretCast<uint16_t>(), InitConstValueParams<uint16_t>(4, 1, 0, 0x3C00));  // half 1.0
    LocalTensor<float> c1 = outQueueCO1.AllocTensor<float>();
    Mmad(c1, a2, b2, MmadParams(16, 16, 64, 0, false, true));
    FixpipeParamsV220 params(16, 16, 16, 16, false);
    params.quantPre = QuantMode_t::F322F16;
    Fixpipe<half, float, CFG_ROW_MAJOR>(cGm, c1, params);
    inQueueA2.FreeTensor(a2);
    inQueueB2.FreeTensor(b2);
    outQueueCO1.FreeTensor(c1);
}
