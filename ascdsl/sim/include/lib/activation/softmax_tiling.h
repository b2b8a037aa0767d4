// Host tiling of SoftmaxGrad / SoftmaxGradFront (CANN: lib/activation/softmax_tiling.h), written from
// the documented algorithm (A2/A3 and 310P branch; reference §2.17). For a shape viewed as [M, K] (K the
// last dim, 32-byte aligned) with E = 32 / dataTypeSize elements per block, one row needs
//     half: 2E + 3K + 64        float: isFront ? E + K + 64 : 2E + K + 64
// float words of temporary buffer; the minimum is one row, the maximum M rows. SoftMaxGradTilingFunc
// splits M into rangeM chunks of splitM rows (what the work buffer holds, a multiple of 8 below M,
// adjusted to basic blocks when M % 8 == 0 and K % 64 == 0) and a tail of tailM rows; splitM is 0 when
// the work buffer is below one row.
#ifndef ASCDSL_SIM_LIB_ACTIVATION_SOFTMAX_TILING_H
#define ASCDSL_SIM_LIB_ACTIVATION_SOFTMAX_TILING_H
#include <algorithm>
#include <cstdint>

#include "../../ascdsl_sim/softmax_grad_rows.h"
#include "../../graph/tensor.h"
#include "softmax_tilingdata.h"

namespace ascdsl_sim {
struct RowsCols {
    uint32_t m = 0, k = 0;
};

inline RowsCols last_axis_nd(const ge::Shape& shape) {
    RowsCols rc;
    if (shape.GetDimNum() == 0) return rc;
    rc.m = 1;
    for (size_t i = 0; i + 1 < shape.GetDimNum(); ++i) rc.m *= static_cast<uint32_t>(shape.GetDim(i));
    rc.k = static_cast<uint32_t>(shape.GetDim(shape.GetDimNum() - 1));
    return rc;
}

}  // namespace ascdsl_sim

namespace AscendC {

inline uint32_t GetSoftMaxGradMinTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize, const bool isFront,
                                         const bool isReuseSource) {
    (void)isReuseSource;
    if (srcShape.GetShapeSize() <= 0) return 0;
    return 4 * ascdsl_sim::softmax_grad_row_words(ascdsl_sim::last_axis_nd(srcShape).k, dataTypeSize, isFront);
}

inline uint32_t GetSoftMaxGradMaxTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize, const bool isFront,
                                         const bool isReuseSource) {
    return ascdsl_sim::last_axis_nd(srcShape).m * GetSoftMaxGradMinTmpSize(srcShape, dataTypeSize, isFront, isReuseSource);
}

inline void SoftMaxGradTilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize,
                                  const uint32_t localWorkSpaceSize, optiling::SoftMaxTiling& softmaxGradTiling,
                                  const bool isFront = false) {
    const uint32_t row = ascdsl_sim::softmax_grad_row_words(ascdsl_sim::last_axis_nd(srcShape).k, dataTypeSize, isFront);
    if (srcShape.GetShapeSize() <= 0 || row == 0) return;
    const auto [m, k] = ascdsl_sim::last_axis_nd(srcShape);
    const uint32_t e = 32 / dataTypeSize;
    uint32_t base = std::min(localWorkSpaceSize / 4 / row, m);
    if (base > 8 && base < m) base = base / 8 * 8;
    if (base > 8 && m % 8 == 0 && k % 64 == 0) {  // basic blocks: a multiple of 8 dividing M, under 64 x 256 elements
        base = base / 8 * 8;
        while (m % base != 0) base -= 8;
        while (base > 1 && base * k >= 64 * 256) base /= 2;
    }
    const uint32_t tail = base ? m % base : 0;
    softmaxGradTiling.set_srcM(m);
    softmaxGradTiling.set_srcK(k);
    softmaxGradTiling.set_srcSize(m * k);
    softmaxGradTiling.set_outMaxM(m);
    softmaxGradTiling.set_outMaxK(e);
    softmaxGradTiling.set_outMaxSize(m * e);
    softmaxGradTiling.set_splitM(base);
    softmaxGradTiling.set_splitK(k);
    softmaxGradTiling.set_splitSize(base * k);
    softmaxGradTiling.set_reduceM(base);
    softmaxGradTiling.set_reduceK(e);
    softmaxGradTiling.set_reduceSize(base * e);
    softmaxGradTiling.set_rangeM(base ? m / base : 0);
    softmaxGradTiling.set_tailM(tail);
    softmaxGradTiling.set_tailSplitSize(tail * k);
    softmaxGradTiling.set_tailReduceSize(tail * e);
}

}  // namespace AscendC

#endif  // ASCDSL_SIM_LIB_ACTIVATION_SOFTMAX_TILING_H
