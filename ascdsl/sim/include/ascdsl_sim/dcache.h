// The scalar unit's data cache in front of GM (reference: DataCacheCleanAndInvalid). GlobalTensor::GetValue
// and SetValue go through it, DataCopy does not: DMA reading bytes SetValue left in the cache, DMA writing
// GM under a cached line and a later GetValue of that line, or DMA and SetValue writing the same bytes
// without DataCacheCleanAndInvalid in between would all see or leave stale data on the device.
#ifndef ASCDSL_SIM_ASCDSL_SIM_DCACHE_H
#define ASCDSL_SIM_ASCDSL_SIM_DCACHE_H
#include "runtime.h"

namespace ascdsl_sim {

constexpr uintptr_t kLine = 64;

template <class F>
void for_each_line(const void* p, uint64_t bytes, F f) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    for (uintptr_t line = a / kLine * kLine; line < a + bytes; line += kLine) {
        const uintptr_t lo = std::max(line, a), hi = std::min(line + kLine, a + bytes);
        const uint64_t bits = (hi - lo == 64 ? ~0ull : ((1ull << (hi - lo)) - 1)) << (lo - line);
        f(line, bits);
    }
}

constexpr const char* kDcciHint = " (call DataCacheCleanAndInvalid<T, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT> in between)";

// GlobalTensor::GetValue/SetValue: the scalar unit caches the lines it touches.
inline void scalar_gm(const char* api, const void* p, uint64_t bytes, bool write) {
    for_each_line(p, bytes, [&](uintptr_t line, uint64_t bits) {
        DcacheLine& l = st().dcache[line];
        require(write || !l.stale, api, "reads GM through a data cache line that DataCopy has overwritten since the "
                "scalar unit cached it", kDcciHint);
        if (write) l.dirty |= bits;
    });
}

// DataCopy GM -> UB (write = false) or UB -> GM (write = true) over bytes the scalar unit may have cached.
inline void dma_gm(const char* api, const void* p, uint64_t bytes, bool write) {
    auto& cache = st().dcache;
    if (cache.empty()) return;
    for_each_line(p, bytes, [&](uintptr_t line, uint64_t bits) {
        auto it = cache.find(line);
        if (it == cache.end()) return;
        require(!(it->second.dirty & bits), api, write ? "overwrites GM bytes" : "reads GM bytes",
                " that GlobalTensor::SetValue left in the scalar data cache", kDcciHint);
        if (write) it->second.stale = true;
    });
}

inline void clean_invalidate(const void* p, bool entire) {
    auto& cache = st().dcache;
    if (entire) cache.clear();
    else cache.erase(reinterpret_cast<uintptr_t>(p) / kLine * kLine);
}

}  // namespace ascdsl_sim

namespace AscendC {
enum class CacheLine : uint64_t { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE };
enum class DcciDst : uint64_t { CACHELINE_ALL = 0, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };
template <typename T> class GlobalTensor;

// Writes back and drops the 64-byte line holding dst's first element (or the whole data cache).
template <typename T, CacheLine entireType, DcciDst dcciDst>
inline void DataCacheCleanAndInvalid(const GlobalTensor<T>& dstTensor) {
    static_assert(dcciDst == DcciDst::CACHELINE_OUT || dcciDst == DcciDst::CACHELINE_ALL,
                  "ascdsl sim: DataCacheCleanAndInvalid: CACHELINE_UB and CACHELINE_ATOMIC are reserved on A2");
    ascdsl_sim::clean_invalidate(dstTensor.GetPhyAddr(), entireType == CacheLine::ENTIRE_DATA_CACHE);
}
template <typename T, CacheLine entireType>
inline void DataCacheCleanAndInvalid(const GlobalTensor<T>& dstTensor) {
    ascdsl_sim::clean_invalidate(dstTensor.GetPhyAddr(), entireType == CacheLine::ENTIRE_DATA_CACHE);
}
}  // namespace AscendC

#endif  // ASCDSL_SIM_ASCDSL_SIM_DCACHE_H
