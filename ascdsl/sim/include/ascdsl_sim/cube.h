// The cube core's data path: GM -> L1 with ND-to-Nz (DataCopy with Nd2NzParams), L1 -> L0A/L0B
// (LoadData with LoadData2DParams), Mmad into L0C, L0C -> GM (Fixpipe with FixpipeParamsV220).
// Signatures and parameter structs as CANN 8.1 declares them (basic_api/interface/kernel_operator_mm_intf.h,
// kernel_struct_mm.h, kernel_operator_fixpipe_intf.h, kernel_struct_fixpipe.h, kernel_struct_data_copy.h).
//
// Layouts (reference section 5; C0 = 32 bytes of elements, 16 for half/bfloat16, 32 for int8):
// * L1 Nz: element (r, c) of an ND matrix lands at (c / C0) * dstNzC0Stride * C0 + r * dstNzNStride * C0 + c % C0;
// * L0A (A, m x k): 16 x C0 fractals row-major over (m / 16, k / C0), each fractal row-major;
// * L0B (B, k x n): C0 x 16 fractals row-major over (k / C0, n / 16), each fractal holding B's columns as rows
//   (element (kk, nn) at fractal offset (nn % 16) * C0 + kk % C0);
// * L0C (C, m x n, float or int32): 16 x 16 fractals column-major over (n / 16, m / 16) (NZ), each row-major.
// Mmad reads only the m x n x k it is given; everything else of a fractal may hold anything.
//
// LoadDataWithTranspose moves 32 x 32 squares of 8-bit elements transposed from L1 to L0A/L0B.
// InitConstValue fills A1/A2/B1/B2 with a value (blocks of 32 bytes in L1, 512 in L0A/L0B).
// Cost model: DataCopy GM -> L1 runs on MTE2 and Fixpipe on the GM link as MTE3 (as copies do), LoadData on
// MTE1 at the L1 -> L0A/L0B rates, Mmad on M at cube_macs_per_cycle (ascdsl/sim/cost.py); the hazard checker
// does not follow the cube pipes: these calls are ordered by their queues.
#ifndef ASCDSL_SIM_ASCDSL_SIM_CUBE_H
#define ASCDSL_SIM_ASCDSL_SIM_CUBE_H
#include "data_copy.h"
#include "pipe.h"

// CANN's compiler defines this enum (the quantisation a Fixpipe applies on the way out of L0C).
enum QuantMode_t {
    NoQuant = 0, F322F16, F322BF16, DEQF16, VDEQF16, QF322B8_PRE, VQF322B8_PRE, REQ8, VREQ8
};

namespace AscendC {

struct Nd2NzParams {
    Nd2NzParams() {}
    Nd2NzParams(const uint16_t ndNumIn, const uint16_t nValueIn, const uint16_t dValueIn,
                const uint16_t srcNdMatrixStrideIn, const uint16_t srcDValueIn, const uint16_t dstNzC0StrideIn,
                const uint16_t dstNzNStrideIn, const uint16_t dstNzMatrixStrideIn)
        : ndNum(ndNumIn), nValue(nValueIn), dValue(dValueIn), srcNdMatrixStride(srcNdMatrixStrideIn),
          srcDValue(srcDValueIn), dstNzC0Stride(dstNzC0StrideIn), dstNzNStride(dstNzNStrideIn),
          dstNzMatrixStride(dstNzMatrixStrideIn) {}
    uint16_t ndNum = 0;
    uint16_t nValue = 0;
    uint16_t dValue = 0;
    uint16_t srcNdMatrixStride = 0;
    uint16_t srcDValue = 0;
    uint16_t dstNzC0Stride = 0;
    uint16_t dstNzNStride = 0;
    uint16_t dstNzMatrixStride = 0;
};

struct LoadData2DParams {
    LoadData2DParams() {}
    LoadData2DParams(const uint16_t startIndexIn, const uint8_t repeatTimesIn, const uint16_t srcStrideIn,
                     const uint8_t sidIn, const uint16_t dstGapIn, const bool ifTransposeIn, const uint8_t addrModeIn)
        : startIndex(startIndexIn), dstGap(dstGapIn), srcStride(srcStrideIn), ifTranspose(ifTransposeIn),
          repeatTimes(repeatTimesIn), sid(sidIn), addrMode(addrModeIn) {}
    uint16_t startIndex = 0;
    uint16_t dstGap = 0;
    uint16_t srcStride = 0;
    bool ifTranspose = 0;
    uint8_t repeatTimes = 0;
    uint8_t sid = 0;
    uint8_t addrMode = 0;
};
using LoadData2dParams = LoadData2DParams;

struct LoadData2dTransposeParams {
    LoadData2dTransposeParams() {}
    LoadData2dTransposeParams(const uint16_t startIndexIn, const uint8_t repeatTimesIn, const uint16_t srcStrideIn,
                              const uint16_t dstGapIn, const uint16_t dstfracGapIn, const uint8_t addrModeIn)
        : startIndex(startIndexIn), repeatTimes(repeatTimesIn), srcStride(srcStrideIn), dstGap(dstGapIn),
          dstFracGap(dstfracGapIn), addrMode(addrModeIn) {}
    LoadData2dTransposeParams(const uint16_t startIndexIn, const uint8_t repeatTimesIn, const uint16_t srcStrideIn,
                              const uint16_t dstGapIn, const uint16_t dstfracGapIn)
        : startIndex(startIndexIn), repeatTimes(repeatTimesIn), srcStride(srcStrideIn), dstGap(dstGapIn),
          dstFracGap(dstfracGapIn) {}
    uint16_t startIndex = 0;
    uint8_t repeatTimes = 0;
    uint16_t srcStride = 0;
    uint16_t dstGap = 0;
    uint16_t dstFracGap = 0;
    uint8_t addrMode = 0;
};

struct MmadParams {
    MmadParams() {}
    MmadParams(const uint16_t mIn, const uint16_t nIn, const uint16_t kIn, const bool isBiasIn, const int32_t fmOffsetIn,
               const bool enSsparseIn, const bool enWinogradAIn, const bool enWinogradBIn)
        : m(mIn), n(nIn), k(kIn), isBias(isBiasIn), fmOffset(fmOffsetIn), enSsparse(enSsparseIn),
          enWinogradA(enWinogradAIn), enWinogradB(enWinogradBIn) {}
    MmadParams(const uint16_t mIn, const uint16_t nIn, const uint16_t kIn, const uint8_t unitFlagIn,
               const bool cmatrixSourceIn, const bool cmatrixInitValIn)
        : m(mIn), n(nIn), k(kIn), unitFlag(unitFlagIn), cmatrixSource(cmatrixSourceIn), cmatrixInitVal(cmatrixInitValIn) {}
    uint16_t m = 0;
    uint16_t n = 0;
    uint16_t k = 0;
    bool isBias = false;
    int32_t fmOffset = 0;
    bool enSsparse = false;
    bool enWinogradA = false;
    bool enWinogradB = false;
    uint8_t unitFlag = 0;
    bool kDirectionAlign = false;
    bool cmatrixSource = false;
    bool cmatrixInitVal = true;  // 1: C starts at 0; 0: the product accumulates onto C in L0C
};

template <typename U>
struct InitConstValueParams {
    InitConstValueParams() {}
    InitConstValueParams(const uint16_t repeatTimesIn, const uint16_t blockNumIn, const uint16_t dstGapIn,
                         const U initValueIn)
        : repeatTimes(repeatTimesIn), blockNum(blockNumIn), dstGap(dstGapIn), initValue(initValueIn) {}
    InitConstValueParams(const uint16_t repeatTimesIn, const U initValueIn)
        : repeatTimes(repeatTimesIn), initValue(initValueIn) {}
    uint16_t repeatTimes = 0;
    uint16_t blockNum = 0;
    uint16_t dstGap = 0;
    U initValue = 0;
};

enum class CO2Layout : uint8_t { NZ = 0, ROW_MAJOR, COLUMN_MAJOR };
struct FixpipeConfig {
    CO2Layout format;
};
constexpr FixpipeConfig CFG_NZ = {CO2Layout::NZ};
constexpr FixpipeConfig CFG_ROW_MAJOR = {CO2Layout::ROW_MAJOR};
constexpr FixpipeConfig CFG_COLUMN_MAJOR = {CO2Layout::COLUMN_MAJOR};

struct FixpipeParamsV220 {
    FixpipeParamsV220() {}
    FixpipeParamsV220(const uint16_t nSizeIn, const uint16_t mSizeIn, const uint16_t srcStrideIn,
                      const uint32_t dstStrideIn, const bool reluEnIn)
        : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn), reluEn(reluEnIn) {}
    FixpipeParamsV220(const uint16_t nSizeIn, const uint16_t mSizeIn, const uint16_t srcStrideIn,
                      const uint32_t dstStrideIn, const bool reluEnIn, const QuantMode_t quantPreIn,
                      const int64_t deqScalarIn, const uint16_t ndNumIn, const uint16_t srcNdStrideIn,
                      const uint16_t dstNdStrideIn, const uint8_t unitFlagIn)
        : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn), quantPre(quantPreIn),
          deqScalar(static_cast<uint64_t>(deqScalarIn)), ndNum(ndNumIn), srcNdStride(srcNdStrideIn),
          dstNdStride(dstNdStrideIn), reluEn(reluEnIn), unitFlag(unitFlagIn) {}
    uint16_t nSize = 0;
    uint16_t mSize = 0;
    uint16_t srcStride = 0;
    uint32_t dstStride = 0;
    QuantMode_t quantPre = QuantMode_t::NoQuant;
    uint64_t deqScalar = 0;
    uint16_t ndNum = 1;
    uint16_t srcNdStride = 0;
    uint16_t dstNdStride = 0;
    bool reluEn = false;
    uint8_t unitFlag = 0;
    bool isChannelSplit = false;
};

}  // namespace AscendC

namespace ascdsl_sim {

using AscendC::TPosition;

template <class T> constexpr uint32_t kC0 = 32 / sizeof(T);  // elements of one 32-byte fractal row
constexpr uint32_t kFractalBytes = 512;

template <class T>
void require_position(const char* api, const AscendC::LocalTensor<T>& t, const char* operand,
                      std::initializer_list<TPosition> allowed, const char* names) {
    touch_buffer(api, t.buffer(), t.generation(), operand);
    for (const TPosition p : allowed)
        if (t.position() == p) return;
    fail(api, "operand ", operand, " is a ", position_name(static_cast<int>(t.position())), " tensor; ", api,
         " takes ", names, " here");
}

// The element `i` past the start of `t` (bounds-checked against the tensor).
template <class T>
T& at(const char* api, const AscendC::LocalTensor<T>& t, uint64_t i, const char* operand) {
    require(i < t.GetSize(), api, operand, " element ", i, " is outside its tensor of ", t.GetSize(), " elements");
    return t.ptr()[i];
}

// GM -> L1: ndNum ND matrices of nValue rows x dValue elements (row pitch srcDValue, matrix pitch
// srcNdMatrixStride, in elements) into Nz fractals of C0 columns.
template <class T>
void nd2nz(const AscendC::LocalTensor<T>& dst, const T* gm, const AscendC::Nd2NzParams& p) {
    const char* api = "DataCopy";
    require_position(api, dst, "dst", {TPosition::A1, TPosition::B1}, "an A1/B1 (L1) destination with Nd2NzParams");
    require(p.ndNum >= 1 && p.nValue <= 16384 && p.dValue <= 65535, api, "Nd2NzParams ndNum ", p.ndNum,
            ", nValue ", p.nValue, ": ndNum must be at least 1 and nValue at most 16384");
    require(p.srcDValue >= p.dValue, api, "Nd2NzParams srcDValue ", p.srcDValue, " is less than dValue ", p.dValue,
            " (the source rows would overlap)");
    require(p.dstNzNStride >= 1, api, "Nd2NzParams dstNzNStride must be at least 1");
    const uint32_t c0 = kC0<T>;
    uint64_t seen = 0;
    for (uint32_t m = 0; m < p.ndNum; ++m)
        for (uint32_t r = 0; r < p.nValue; ++r) {
            const T* row = gm + uint64_t(m) * p.srcNdMatrixStride + uint64_t(r) * p.srcDValue;
            seen += gm_read(api, row, uint64_t(p.dValue) * sizeof(T), true);
            for (uint32_t c = 0; c < p.dValue; ++c)
                at(api, dst, uint64_t(m) * p.dstNzMatrixStride + uint64_t(c / c0) * p.dstNzC0Stride * c0 +
                                 uint64_t(r) * p.dstNzNStride * c0 + c % c0, "dst") = row[c];
        }
    st().counters.gm_copies += 1;
    count_copy(Pipe::MTE2, uint64_t(p.ndNum) * p.nValue, uint64_t(p.ndNum) * p.nValue * p.dValue * sizeof(T), seen,
               "DataCopy GM->L1");
}

// L1 -> L0A/L0B: repeatTimes fractals of 512 bytes, the r-th read at fractal startIndex + r * srcStride
// and written at fractal r * (1 + dstGap); ifTranspose transposes each (16 x 16, 16-bit) fractal, into L0A or L0B.
template <class T>
void load_2d(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, const AscendC::LoadData2DParams& p) {
    const char* api = "LoadData";
    require_position(api, src, "src", {TPosition::A1, TPosition::B1}, "an A1/B1 (L1) source");
    require_position(api, dst, "dst", {TPosition::A2, TPosition::B2}, "an A2 (L0A) or B2 (L0B) destination");
    require(p.repeatTimes >= 1, api, "LoadData2DParams repeatTimes must be at least 1");
    // CANN 8.1 dav_c220 passes ifTranspose to load_cbuf_to_ca and load_cbuf_to_cb both; a fractal is square
    // only for 16-bit elements (8- and 32-bit ones transpose by LoadDataWithTranspose)
    require(!p.ifTranspose || sizeof(T) == 2, api, "ifTranspose transposes 16 x 16 fractals of 16-bit elements only");
    const uint32_t per = kFractalBytes / sizeof(T), c0 = kC0<T>;
    const double start = dispatch();
    for (uint32_t r = 0; r < p.repeatTimes; ++r) {
        const uint64_t s = (uint64_t(p.startIndex) + uint64_t(r) * p.srcStride) * per;
        const uint64_t d = uint64_t(r) * (1 + p.dstGap) * per;
        at(api, src, s + per - 1, "src"), at(api, dst, d + per - 1, "dst");  // bounds of both fractals
        for (uint32_t i = 0; i < 16; ++i)
            for (uint32_t j = 0; j < c0; ++j)
                dst.ptr()[d + i * c0 + j] = p.ifTranspose ? src.ptr()[s + j * c0 + i] : src.ptr()[s + i * c0 + j];
    }
    const CostParams& k = timeline().params;
    const double rate = dst.position() == TPosition::A2 ? k.l1_to_l0a_bytes_per_cycle : k.l1_to_l0b_bytes_per_cycle;
    occupy(Pipe::MTE1, start, double(p.repeatTimes) * kFractalBytes / rate, api);
}

// L1 -> L0A/L0B transposing 8-bit squares: the r-th repeat reads the 32 x 32 square (two consecutive 16 x 32
// fractals) at square startIndex + r * srcStride and writes its transpose as two 16 x 32 fractals, the first at
// fractal r * (1 + dstGap), the second 1 + dstFracGap fractals after it (the layout of the API reference's
// LoadDataWithTranspose; 16- and 32-bit squares are not simulated).
template <class T>
void load_2d_transpose(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                       const AscendC::LoadData2dTransposeParams& p) {
    const char* api = "LoadDataWithTranspose";
    static_assert(sizeof(T) == 1, "LoadDataWithTranspose: only 8-bit squares are simulated");
    require_position(api, src, "src", {TPosition::A1, TPosition::B1}, "an A1/B1 (L1) source");
    require_position(api, dst, "dst", {TPosition::A2, TPosition::B2}, "an A2 (L0A) or B2 (L0B) destination");
    require(p.repeatTimes >= 1, api, "LoadData2dTransposeParams repeatTimes must be at least 1");
    const uint64_t per = kFractalBytes;  // elements of one fractal
    const double start = dispatch();
    for (uint64_t r = 0; r < p.repeatTimes; ++r) {
        const uint64_t s = (uint64_t(p.startIndex) + r * p.srcStride) * 2 * per;
        const uint64_t d[2] = {r * (1 + p.dstGap) * per, (r * (1 + p.dstGap) + 1 + p.dstFracGap) * per};
        at(api, src, s + 2 * per - 1, "src"), at(api, dst, d[0] + per - 1, "dst"), at(api, dst, d[1] + per - 1, "dst");
        for (uint64_t i = 0; i < 32; ++i)  // row i of the transpose is column i of the square
            for (uint64_t j = 0; j < 32; ++j)
                dst.ptr()[d[i / 16] + (i % 16) * 32 + j] = src.ptr()[s + j * 32 + i];
    }
    const CostParams& k = timeline().params;
    const double rate = dst.position() == TPosition::A2 ? k.l1_to_l0a_bytes_per_cycle : k.l1_to_l0b_bytes_per_cycle;
    occupy(Pipe::MTE1, start, double(p.repeatTimes) * 2 * kFractalBytes / rate, api);
}

// A1/A2/B1/B2 := initValue: repeatTimes runs of blockNum blocks (32 bytes in L1, 512 in L0A/L0B), dstGap blocks
// apart; timed as MTE1 moves into L0A/L0B (writes to L1 at the L0A rate: no public figure).
template <class T, class U>
void init_const(const AscendC::LocalTensor<T>& dst, const AscendC::InitConstValueParams<U>& p) {
    const char* api = "InitConstValue";
    static_assert(is_one_of_v<T, half, bfloat16_t, int16_t, uint16_t, float, int32_t, uint32_t>,
                  "InitConstValue (A2) takes half, bfloat16_t, int16_t, uint16_t, float, int32_t or uint32_t");
    require_position(api, dst, "dst", {TPosition::A1, TPosition::A2, TPosition::B1, TPosition::B2},
                     "an A1/A2/B1/B2 destination");
    require(p.repeatTimes <= 32767 && p.blockNum <= 32767 && p.dstGap <= 32767, api,
            "repeatTimes, blockNum and dstGap must be at most 32767");
    const bool l0 = dst.position() == TPosition::A2 || dst.position() == TPosition::B2;
    const uint64_t block = (l0 ? kFractalBytes : 32) / sizeof(T);
    const double start = dispatch();
    for (uint64_t r = 0; r < p.repeatTimes; ++r)
        for (uint64_t i = 0; i < uint64_t(p.blockNum) * block; ++i)
            at(api, dst, r * (uint64_t(p.blockNum) + p.dstGap) * block + i, "dst") = static_cast<T>(p.initValue);
    const CostParams& k = timeline().params;
    const double rate = dst.position() == TPosition::B2 ? k.l1_to_l0b_bytes_per_cycle : k.l1_to_l0a_bytes_per_cycle;
    occupy(Pipe::MTE1, start, double(p.repeatTimes) * p.blockNum * block * sizeof(T) / rate, api);
}

// The accumulator type of a cube product and the value one operand element contributes.
template <class A> using acc_t = std::conditional_t<std::is_same_v<A, int8_t>, int32_t, float>;

// row[j] += x * y[j] for j < n: the inner loop of a cube product, compiled optimised (lanes are independent, so
// vectorising it changes no result) because the simulator's default -Og leaves a large product slow.
template <class C>
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("O3")))
#endif
void accumulate_row(C* row, C x, const C* y, uint32_t n) {
    for (uint32_t j = 0; j < n; ++j) row[j] += x * y[j];
}

// C (m x n, NZ in L0C) = [C +] A (m x k, L0A) * B (k x n, L0B), accumulated in float (int32 for int8) in k order.
template <class C, class A, class B>
void mmad(const AscendC::LocalTensor<C>& dst, const AscendC::LocalTensor<A>& a, const AscendC::LocalTensor<B>& b,
          const AscendC::MmadParams& p) {
    const char* api = "Mmad";
    static_assert(std::is_same_v<A, B>, "Mmad: fmLocal and filterLocal must have one element type");
    static_assert(is_one_of_v<A, half, bfloat16_t, int8_t, float>, "Mmad takes half, bfloat16_t, int8_t or float operands");
    static_assert(std::is_same_v<C, acc_t<A>>, "Mmad accumulates half/bfloat16_t/float into float and int8_t into int32_t");
    require_position(api, dst, "dstLocal", {TPosition::CO1}, "a CO1 (L0C) destination");
    require_position(api, a, "fmLocal", {TPosition::A2}, "an A2 (L0A) left matrix");
    require_position(api, b, "filterLocal", {TPosition::B2}, "a B2 (L0B) right matrix");
    require(!p.cmatrixSource && !p.isBias, api, "a bias (cmatrixSource/isBias) is not simulated");
    require(p.m <= 4095 && p.n <= 4095 && p.k <= 4095, api, "m, n and k must be at most 4095");
    const uint32_t c0 = kC0<A>;
    const uint32_t m1 = (p.m + 15) / 16, k1 = (p.k + c0 - 1) / c0, n1 = (p.n + 15) / 16;
    if (p.m && p.n) at(api, dst, (uint64_t(n1) * m1 - 1) * 256 + 255, "dstLocal");
    if (p.m && p.k) at(api, a, (uint64_t(m1) * k1) * 16 * c0 - 1, "fmLocal");
    if (p.k && p.n) at(api, b, (uint64_t(k1) * n1) * 16 * c0 - 1, "filterLocal");
    // The operands unpacked to row-major accumulator-typed matrices (exact: a product of two 16-bit floats fits
    // float's mantissa), then each row of C accumulated over k in order: every element sees the sums it would in
    // a dot product of its own, and the innermost loop runs over independent lanes.
    std::vector<C> x(size_t(p.m) * p.k), y(size_t(p.k) * p.n), row(p.n);
    for (uint32_t i = 0; i < p.m; ++i)
        for (uint32_t kk = 0; kk < p.k; ++kk)
            x[size_t(i) * p.k + kk] = static_cast<C>(a.ptr()[((i / 16) * k1 + kk / c0) * 16 * c0 + (i % 16) * c0 + kk % c0]);
    for (uint32_t kk = 0; kk < p.k; ++kk)
        for (uint32_t j = 0; j < p.n; ++j)
            y[size_t(kk) * p.n + j] = static_cast<C>(b.ptr()[((kk / c0) * n1 + j / 16) * 16 * c0 + (j % 16) * c0 + kk % c0]);
    for (uint32_t i = 0; i < p.m; ++i) {
        C* c = dst.ptr() + (i / 16) * 256 + (i % 16) * 16;  // (i, j) at c[(j / 16) * m1 * 256 + j % 16]
        for (uint32_t j = 0; j < p.n; ++j) row[j] = p.cmatrixInitVal ? C(0) : c[(j / 16) * m1 * 256 + j % 16];
        for (uint32_t kk = 0; kk < p.k; ++kk) accumulate_row(row.data(), x[size_t(i) * p.k + kk], y.data() + size_t(kk) * p.n, p.n);
        for (uint32_t j = 0; j < p.n; ++j) c[(j / 16) * m1 * 256 + j % 16] = row[j];
    }
    VecCount& n = st().counters.vec[api];
    n.calls += 1;
    n.elements += uint64_t(p.m) * p.n * p.k;
    // the cube multiplies whole fractals: 16 x 16 x (32 bytes of K) per step, float at a quarter of half's rate
    Timeline& t = timeline();
    const double rate = t.params.cube_macs_per_cycle * (std::is_same_v<A, float> ? 0.25 : sizeof(A) == 1 ? 2.0 : 1.0);
    occupy(Pipe::M, dispatch(), double(m1) * 16 * n1 * 16 * k1 * c0 / rate, api);
    t.cost.cube_ideal += double(p.m) * p.n * p.k / rate;
}

// L0C (NZ, srcStride rows per fractal column) -> GM (ND, row pitch dstStride elements): mSize x nSize,
// converted by quantPre (float -> half or bfloat16_t rounding to nearest even), ReLU first if reluEn.
template <AscendC::CO2Layout layout, class D, class S>
void fixpipe(D* gm, const AscendC::LocalTensor<S>& src, const AscendC::FixpipeParamsV220& p) {
    const char* api = "Fixpipe";
    require_position(api, src, "srcLocal", {TPosition::CO1}, "a CO1 (L0C) source");
    static_assert(layout == AscendC::CO2Layout::ROW_MAJOR, "Fixpipe: only CFG_ROW_MAJOR (NZ -> ND) is simulated");
    constexpr QuantMode_t need = std::is_same_v<S, float> && is_half_v<D> ? F322F16
                                 : std::is_same_v<S, float> && is_bf16_v<D> ? F322BF16 : NoQuant;
    static_assert(std::is_same_v<S, D> || need != NoQuant, "Fixpipe converts float to half/bfloat16_t, or copies");
    require(p.quantPre == need, api, "quantPre ", static_cast<int>(p.quantPre), " does not convert ", type_name<S>(),
            " to ", type_name<D>(), " (it must be ", static_cast<int>(need), ")");
    require(p.ndNum == 1, api, "ndNum > 1 is not simulated");
    require(p.srcStride >= p.mSize && p.srcStride % 16 == 0, api, "srcStride ", p.srcStride,
            " must be a multiple of 16 of at least mSize ", p.mSize);
    require(p.dstStride >= p.nSize, api, "dstStride ", p.dstStride, " is less than nSize ", p.nSize, " (rows overlap)");
    if (p.mSize && p.nSize) at(api, src, (uint64_t((p.nSize - 1) / 16) * p.srcStride + p.mSize - 1) * 16 + 15, "srcLocal");
    for (uint32_t i = 0; i < p.mSize; ++i) {
        D* row = gm + uint64_t(i) * p.dstStride;
        gm_write(api, row, uint64_t(p.nSize) * sizeof(D));
        for (uint32_t j = 0; j < p.nSize; ++j) {
            S v = src.ptr()[(uint64_t(j / 16) * p.srcStride + i) * 16 + j % 16];
            if (p.reluEn && v < S(0)) v = S(0);
            row[j] = static_cast<D>(v);  // half/bfloat16_t construction rounds to nearest even
        }
    }
    st().counters.gm_copies += 1;
    count_copy(Pipe::MTE3, p.mSize, uint64_t(p.mSize) * p.nSize * sizeof(D), 0, "Fixpipe L0C->GM");
}

}  // namespace ascdsl_sim

namespace AscendC {

template <typename T>
inline void DataCopy(const LocalTensor<T>& dstLocal, const GlobalTensor<T>& srcGlobal, const Nd2NzParams& intriParams) {
    ascdsl_sim::nd2nz(dstLocal, srcGlobal.GetPhyAddr(), intriParams);
}

template <typename T>
inline void LoadData(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const LoadData2DParams& loadDataParams) {
    ascdsl_sim::load_2d(dstLocal, srcLocal, loadDataParams);
}

template <typename T>
inline void LoadDataWithTranspose(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal,
                                  const LoadData2dTransposeParams& loadDataParams) {
    ascdsl_sim::load_2d_transpose(dstLocal, srcLocal, loadDataParams);
}

template <typename T, typename U>
inline void InitConstValue(const LocalTensor<T>& dstLocal, const InitConstValueParams<U>& initConstValueParams) {
    static_assert(std::is_same_v<T, U>, "InitConstValue: initValue must have the tensor's element type");
    ascdsl_sim::init_const(dstLocal, initConstValueParams);
}

template <typename DstT, typename Src0T, typename Src1T>
inline void Mmad(const LocalTensor<DstT>& dstLocal, const LocalTensor<Src0T>& fmLocal,
                 const LocalTensor<Src1T>& filterLocal, const MmadParams& mmadParams) {
    ascdsl_sim::mmad(dstLocal, fmLocal, filterLocal, mmadParams);
}

template <typename DstT, typename SrcT, const FixpipeConfig& config = CFG_ROW_MAJOR>
inline void Fixpipe(const GlobalTensor<DstT>& dstGlobal, const LocalTensor<SrcT>& srcLocal,
                    const FixpipeParamsV220& intriParams) {
    ascdsl_sim::fixpipe<config.format>(dstGlobal.GetPhyAddr(0), srcLocal, intriParams);
}

}  // namespace AscendC

#endif  // ASCDSL_SIM_ASCDSL_SIM_CUBE_H
