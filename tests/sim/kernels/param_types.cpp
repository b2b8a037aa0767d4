// The field types of every API parameter struct the generated code initialises, as CANN 8.1 declares
// them (basic_api/interface/kernel_struct_*.h): compiled against the simulator's headers and, where
// present, the real ones, so a braced initialiser that narrows fails in the simulator's build too.
#include <cstdint>
#include <type_traits>

#include "kernel_operator.h"

using namespace AscendC;

#define FIELD(S, f, T) static_assert(std::is_same_v<decltype(S::f), T>, #S "::" #f " is " #T " in CANN 8.1")

FIELD(UnaryRepeatParams, dstBlkStride, uint16_t);
FIELD(UnaryRepeatParams, srcBlkStride, uint16_t);
FIELD(UnaryRepeatParams, dstRepStride, uint8_t);
FIELD(UnaryRepeatParams, srcRepStride, uint8_t);
FIELD(BinaryRepeatParams, dstBlkStride, uint8_t);
FIELD(BinaryRepeatParams, src0BlkStride, uint8_t);
FIELD(BinaryRepeatParams, src1BlkStride, uint8_t);
FIELD(BinaryRepeatParams, dstRepStride, uint8_t);
FIELD(BinaryRepeatParams, src0RepStride, uint8_t);
FIELD(BinaryRepeatParams, src1RepStride, uint8_t);
FIELD(DataCopyParams, blockCount, uint16_t);
FIELD(DataCopyParams, blockLen, uint16_t);
FIELD(DataCopyParams, srcStride, uint16_t);
FIELD(DataCopyParams, dstStride, uint16_t);
FIELD(DataCopyExtParams, blockCount, uint16_t);
FIELD(DataCopyExtParams, blockLen, uint32_t);
FIELD(DataCopyExtParams, srcStride, uint32_t);
FIELD(DataCopyExtParams, dstStride, uint32_t);
FIELD(DataCopyExtParams, rsv, uint32_t);
FIELD(DataCopyPadExtParams<float>, isPad, bool);
FIELD(DataCopyPadExtParams<float>, leftPadding, uint8_t);
FIELD(DataCopyPadExtParams<float>, rightPadding, uint8_t);
FIELD(DataCopyPadExtParams<float>, paddingValue, float);
FIELD(GatherRepeatParams, blockNumber, uint32_t);
FIELD(GatherRepeatParams, dstRepStride, uint16_t);
FIELD(GatherRepeatParams, dstBlkStride, uint8_t);
FIELD(GatherMaskParams, src0BlockStride, uint8_t);
FIELD(GatherMaskParams, repeatTimes, uint16_t);
FIELD(GatherMaskParams, src0RepeatStride, uint16_t);
FIELD(GatherMaskParams, src1RepeatStride, uint8_t);
FIELD(BrcbRepeatParams, dstBlkStride, uint16_t);
FIELD(BrcbRepeatParams, dstRepStride, uint16_t);
FIELD(Nd2NzParams, ndNum, uint16_t);
FIELD(Nd2NzParams, nValue, uint16_t);
FIELD(Nd2NzParams, dValue, uint16_t);
FIELD(Nd2NzParams, srcNdMatrixStride, uint16_t);
FIELD(Nd2NzParams, srcDValue, uint16_t);
FIELD(Nd2NzParams, dstNzC0Stride, uint16_t);
FIELD(Nd2NzParams, dstNzNStride, uint16_t);
FIELD(Nd2NzParams, dstNzMatrixStride, uint16_t);
FIELD(LoadData2DParams, startIndex, uint16_t);
FIELD(LoadData2DParams, dstGap, uint16_t);
FIELD(LoadData2DParams, srcStride, uint16_t);
FIELD(LoadData2DParams, ifTranspose, bool);
FIELD(LoadData2DParams, repeatTimes, uint8_t);
FIELD(LoadData2DParams, sid, uint8_t);
FIELD(LoadData2DParams, addrMode, uint8_t);
FIELD(MmadParams, m, uint16_t);
FIELD(MmadParams, n, uint16_t);
FIELD(MmadParams, k, uint16_t);
FIELD(MmadParams, isBias, bool);
FIELD(MmadParams, fmOffset, int32_t);
FIELD(MmadParams, unitFlag, uint8_t);
FIELD(MmadParams, cmatrixSource, bool);
FIELD(MmadParams, cmatrixInitVal, bool);
FIELD(FixpipeParamsV220, nSize, uint16_t);
FIELD(FixpipeParamsV220, mSize, uint16_t);
FIELD(FixpipeParamsV220, srcStride, uint16_t);
FIELD(FixpipeParamsV220, dstStride, uint32_t);
FIELD(FixpipeParamsV220, quantPre, QuantMode_t);
FIELD(FixpipeParamsV220, ndNum, uint16_t);
FIELD(FixpipeParamsV220, srcNdStride, uint16_t);
FIELD(FixpipeParamsV220, dstNdStride, uint16_t);
FIELD(FixpipeParamsV220, reluEn, bool);
