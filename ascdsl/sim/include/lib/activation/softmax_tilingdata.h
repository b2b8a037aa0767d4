// Host-side optiling::SoftMaxTiling (CANN: lib/activation/softmax_tilingdata.h, a BEGIN_TILING_DATA_DEF
// of 16 uint32_t fields): set_/get_ accessors and SaveToBuffer into the kernel-side SoftMaxTiling.
#ifndef ASCDSL_SIM_LIB_ACTIVATION_SOFTMAX_TILINGDATA_H
#define ASCDSL_SIM_LIB_ACTIVATION_SOFTMAX_TILINGDATA_H
#include <cstddef>
#include <cstdint>
#include <cstring>

#define ASCDSL_SOFTMAX_TILING_FIELDS(X)                                                                    \
    X(srcM) X(srcK) X(srcSize) X(outMaxM) X(outMaxK) X(outMaxSize) X(splitM) X(splitK) X(splitSize)       \
    X(reduceM) X(reduceK) X(reduceSize) X(rangeM) X(tailM) X(tailSplitSize) X(tailReduceSize)

namespace optiling {
class SoftMaxTiling {
public:
#define ASCDSL_ACCESSORS(f)                     \
    void set_##f(uint32_t value) { f##_ = value; } \
    uint32_t get_##f() { return f##_; }
    ASCDSL_SOFTMAX_TILING_FIELDS(ASCDSL_ACCESSORS)
#undef ASCDSL_ACCESSORS
    // The fields in declaration order, as the kernel-side struct lays them out; at most capacity bytes.
    void SaveToBuffer(void* pdata, size_t capacity) {
        const uint32_t words[] = {
#define ASCDSL_WORD(f) f##_,
            ASCDSL_SOFTMAX_TILING_FIELDS(ASCDSL_WORD)
#undef ASCDSL_WORD
        };
        std::memcpy(pdata, words, capacity < sizeof(words) ? capacity : sizeof(words));
    }
    size_t GetDataSize() const { return 16 * sizeof(uint32_t); }

private:
#define ASCDSL_FIELD(f) uint32_t f##_ = 0;
    ASCDSL_SOFTMAX_TILING_FIELDS(ASCDSL_FIELD)
#undef ASCDSL_FIELD
};
}  // namespace optiling

#endif  // ASCDSL_SIM_LIB_ACTIVATION_SOFTMAX_TILINGDATA_H
