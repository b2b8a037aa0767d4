// High-level ArithProgression: dst[i] = firstValue + i * diffValue, computed as CANN 8.1 does (the first
// 32-byte block by the scalar unit, then each block and each 256-byte repeat from the previous one by Adds,
// all in T's arithmetic), so float results carry the same roundings. Writes count rounded up to a block.
#ifndef ASCDSL_SIM_LIB_INDEX_ARITHPROGRESSION_H
#define ASCDSL_SIM_LIB_INDEX_ARITHPROGRESSION_H
#include "../../ascdsl_sim/vector.h"

namespace ascdsl_sim {

template <class T>
void arith_progression(const AscendC::LocalTensor<T>& dst, T first, T diff, int32_t count) {
    const char* api = "ArithProgression";
    static_assert(is_one_of_v<T, half, float, int16_t, int32_t>, "ascdsl sim: ArithProgression supports half, float, int16_t, int32_t");
    using W = wide_t<T>;
    require(static_cast<float>(diff) > 0.0f, api, "diffValue must be greater than 0");
    require(count >= 0, api, "count ", count, " is negative");
    const int64_t blk = per_block<T>(), rep = per_repeat<T>();
    const int64_t written = count > blk ? ceil_div(count, blk) * blk : count;
    require(written <= int64_t(dst.GetSize()), api, "writes ", written, " elements (count rounded up to a 32-byte block) "
            "into a tensor of ", dst.GetSize());
    std::vector<T> v(written);
    for (int64_t i = 0; i < std::min(written, blk); ++i) v[i] = static_cast<T>(static_cast<W>(first) + static_cast<W>(diff) * static_cast<W>(i));
    for (int64_t i = blk; i < std::min(written, rep); ++i)
        v[i] = static_cast<T>(static_cast<W>(v[i - blk]) + static_cast<W>(static_cast<T>(static_cast<float>(diff) * blk)));
    for (int64_t i = rep; i < written; ++i)
        v[i] = static_cast<T>(static_cast<W>(v[i - rep]) + static_cast<W>(static_cast<T>(static_cast<float>(diff) * rep)));
    const uint32_t time = begin_op(api);
    Operand d = contiguous("dstLocal", dst, written);
    check_operand(api, d);
    std::copy(v.begin(), v.end(), dst.ptr());
    write_operand(api, Pipe::V, time, d);
    count_vector(api, written, ceil_div(written * int64_t(sizeof(T)), 256), sizeof(T));
    barrier(Pipe::V), count_barrier(Pipe::V, false);  // the implementation ends with PipeBarrier<PIPE_V>
}

}  // namespace ascdsl_sim

namespace AscendC {
template <typename T>
inline void ArithProgression(const LocalTensor<T>& dstLocal, const T firstValue, const T diffValue, const int32_t count) {
    ascdsl_sim::arith_progression(dstLocal, firstValue, diffValue, count);
}
}  // namespace AscendC

#endif  // ASCDSL_SIM_LIB_INDEX_ARITHPROGRESSION_H
