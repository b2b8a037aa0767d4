// DataCopy (GM<->UB, UB<->UB; count and DataCopyParams forms) and DataCopyPad (reference §2.5, §2.6).
// DataCopyParams counts 32-byte blocks; DataCopyExtParams counts bytes on the GM side and blocks on the
// UB side. Strides are gaps between bursts, never pitches.
#ifndef ASCDSL_SIM_ASCDSL_SIM_DATA_COPY_H
#define ASCDSL_SIM_ASCDSL_SIM_DATA_COPY_H
#include "atomic.h"
#include "operand.h"

namespace AscendC {

struct DataCopyParams {
    DataCopyParams() = default;
    DataCopyParams(const uint16_t count, const uint16_t len, const uint16_t srcStrideIn, const uint16_t dstStrideIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn) {}
    uint16_t blockCount = 1, blockLen = 0, srcStride = 0, dstStride = 0;
};

struct DataCopyExtParams {
    DataCopyExtParams() = default;
    DataCopyExtParams(const uint16_t count, const uint32_t len, const uint32_t srcStrideIn, const uint32_t dstStrideIn,
                      const uint32_t rsvIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn), rsv(rsvIn) {}
    uint16_t blockCount = 1;
    uint32_t blockLen = 0, srcStride = 0, dstStride = 0, rsv = 0;
};

template <typename T>
struct DataCopyPadExtParams {
    DataCopyPadExtParams() = default;
    DataCopyPadExtParams(const bool isPadValue, const uint8_t leftPadValue, const uint8_t rightPadValue, T padValue)
        : isPad(isPadValue), leftPadding(leftPadValue), rightPadding(rightPadValue), paddingValue(padValue) {}
    bool isPad = false;
    uint8_t leftPadding = 0, rightPadding = 0;
    T paddingValue = T(0);
};

}  // namespace AscendC

namespace ascdsl_sim {

constexpr uint64_t ceil32(uint64_t n) { return (n + 31) / 32 * 32; }

// A burst pattern in bytes: `count` bursts of `len` bytes, `gm_pitch`/`ub_pitch` bytes apart.
struct Bursts {
    uint64_t count, len, gm_pitch, ub_pitch;
    uint64_t ub_lead = 0;  // UB bytes before the data of each burst (left padding)
    uint64_t ub_span;      // UB bytes each burst occupies
};

inline void check_burst_count(const char* api, uint64_t count) {
    require(count <= 4095, api, "blockCount ", count, " is over 4095");
}

template <class T>
void check_ub_extent(const char* api, const AscendC::LocalTensor<T>& t, const char* name, const Bursts& b, uint64_t span) {
    touch_buffer(api, t.buffer(), t.generation(), name);
    require(t.addr() % 32 == 0, api, "UB operand ", name, " at offset ", t.addr(), " is not 32-byte aligned");
    const uint64_t extent = b.count ? (b.count - 1) * b.ub_pitch + span : 0;
    require(extent <= uint64_t(t.GetSize()) * sizeof(T), api, "the copy covers ", extent, " bytes of UB but ", name,
            " holds ", uint64_t(t.GetSize()) * sizeof(T), " bytes");
}

// MTE2 moves bursts from GM into UB; `pad(burst)` fills each burst's padding afterwards.
template <class T, class Pad>
void gm_to_ub(const char* api, const AscendC::LocalTensor<T>& dst, const T* gm, const Bursts& b, Pad pad) {
    check_burst_count(api, b.count);
    require(cube_mem_of(static_cast<int>(dst.position())) < 0, api, "dst is a cube-core (L1/L0) tensor: GM -> L1 "
            "takes Nd2NzParams, and L0A/L0B/L0C are filled by LoadData and Mmad");
    const uint32_t time = begin_op(api);
    check_ub_extent(api, dst, "dst", b, b.ub_span);
    uint8_t* ub = st().ub + dst.addr();
    const uint8_t* src = reinterpret_cast<const uint8_t*>(gm);
    uint64_t seen = 0;
    for (uint64_t i = 0; i < b.count; ++i) {
        seen += gm_read(api, src + i * b.gm_pitch, b.len, true);
        dma_gm(api, src + i * b.gm_pitch, b.len, false);
        uint8_t* burst = ub + i * b.ub_pitch;
        std::memcpy(burst + b.ub_lead, src + i * b.gm_pitch, b.len);
        pad(burst);
        ub_write(api, Pipe::MTE2, time, dst.addr() + i * b.ub_pitch, b.ub_span);
    }
    st().counters.gm_copies += 1;
    count_copy(Pipe::MTE2, b.count, b.count * b.len, seen);
}

// MTE3 moves bursts from UB to GM, combining them with GM while SetAtomicAdd/Max/Min is active.
template <class T>
void ub_to_gm(const char* api, T* gm, const AscendC::LocalTensor<T>& src, const Bursts& b) {
    check_burst_count(api, b.count);
    begin_op(api);
    check_ub_extent(api, src, "src", b, b.len);
    const bool atomic = st().atomic != Atomic::None;
    require(!atomic || b.len % sizeof(T) == 0, api, "an atomic copy of ", b.len, " B is not whole ", type_name<T>(), " elements");
    uint8_t* dst = reinterpret_cast<uint8_t*>(gm);
    for (uint64_t i = 0; i < b.count; ++i) {
        ub_read(api, Pipe::MTE3, src.addr() + i * b.ub_pitch, b.len);
        const uint8_t* from = st().ub + src.addr() + i * b.ub_pitch;
        gm_write(api, dst + i * b.gm_pitch, b.len, atomic, from);
        dma_gm(api, dst + i * b.gm_pitch, b.len, true);
        if (atomic) accumulate<T>(api, dst + i * b.gm_pitch, from, b.len / sizeof(T));
        else std::memcpy(dst + i * b.gm_pitch, from, b.len);
    }
    st().counters.gm_copies += 1;
    count_copy(Pipe::MTE3, b.count, b.count * b.len, 0);
}

// UB -> UB copy (runs on the vector pipe).
template <class T>
void ub_to_ub(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, const Bursts& b) {
    const char* api = "DataCopy";
    check_burst_count(api, b.count);
    const uint32_t time = begin_op(api);
    check_ub_extent(api, src, "src", b, b.len);
    check_ub_extent(api, dst, "dst", Bursts{b.count, b.len, b.ub_pitch, b.gm_pitch, 0, b.len}, b.len);
    std::vector<uint8_t> data(b.count * b.len);
    for (uint64_t i = 0; i < b.count; ++i) {
        ub_read(api, Pipe::V, src.addr() + i * b.ub_pitch, b.len);
        std::memcpy(data.data() + i * b.len, st().ub + src.addr() + i * b.ub_pitch, b.len);
    }
    for (uint64_t i = 0; i < b.count; ++i) {  // the dst pitch travels in gm_pitch
        std::memcpy(st().ub + dst.addr() + i * b.gm_pitch, data.data() + i * b.len, b.len);
        ub_write(api, Pipe::V, time, dst.addr() + i * b.gm_pitch, b.len);
    }
    st().counters.ub_copies += 1;
    count_ub_copy(b.count * b.len);
}

template <class T>
Bursts count_bursts(const char* api, uint32_t count) {
    const uint64_t bytes = uint64_t(count) * sizeof(T);
    require(bytes % 32 == 0, api, "count ", count, " x ", sizeof(T), " B = ", bytes,
            " B is not a multiple of 32 bytes (the device would copy only ", bytes / 32 * 32,
            " B); use DataCopyPad for unaligned lengths");
    return Bursts{1, bytes, bytes, bytes, 0, bytes};
}

// DataCopyParams: blockLen and both gaps in 32-byte blocks. gm_gap is the gap on the GM side.
inline Bursts block_bursts(const AscendC::DataCopyParams& p, uint64_t gm_gap, uint64_t ub_gap) {
    const uint64_t len = uint64_t(p.blockLen) * 32;
    return Bursts{p.blockCount, len, len + gm_gap * 32, len + ub_gap * 32, 0, len};
}

inline void no_pad(uint8_t*) {}

}  // namespace ascdsl_sim

namespace AscendC {

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count) {
    ascdsl_sim::gm_to_ub("DataCopy", dst, src.GetPhyAddr(), ascdsl_sim::count_bursts<T>("DataCopy", count),
                         ascdsl_sim::no_pad);
}
template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
    ascdsl_sim::ub_to_gm("DataCopy", dst.GetPhyAddr(0), src, ascdsl_sim::count_bursts<T>("DataCopy", count));
}
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
    ascdsl_sim::ub_to_ub(dst, src, ascdsl_sim::count_bursts<T>("DataCopy", count));
}
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p) {
    ascdsl_sim::gm_to_ub("DataCopy", dst, src.GetPhyAddr(), ascdsl_sim::block_bursts(p, p.srcStride, p.dstStride),
                         ascdsl_sim::no_pad);
}
template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
    ascdsl_sim::ub_to_gm("DataCopy", dst.GetPhyAddr(0), src, ascdsl_sim::block_bursts(p, p.dstStride, p.srcStride));
}
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
    ascdsl_sim::ub_to_ub(dst, src, ascdsl_sim::block_bursts(p, p.dstStride, p.srcStride));
}

// GM -> UB. Each burst lands in UB padded up to 32 bytes: [left pad | data | right pad | dummy].
template <typename T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                        const DataCopyPadExtParams<T>& pad) {
    const char* api = "DataCopyPad";
    const uint64_t left = pad.leftPadding * sizeof(T), right = pad.rightPadding * sizeof(T);
    ascdsl_sim::require(left <= 32 && right <= 32, api, "padding of ", left, " B left / ", right,
                        " B right is over 32 bytes per side");
    ascdsl_sim::require(p.blockLen <= 2097151, api, "blockLen ", p.blockLen, " B is over 2097151");
    ascdsl_sim::require(p.blockLen % sizeof(T) == 0, api, "blockLen ", p.blockLen, " B is not a multiple of the ",
                        sizeof(T), "-byte element");
    if (p.blockLen == 0) return;
    const uint64_t span = ascdsl_sim::ceil32(p.blockLen + left + right);
    const ascdsl_sim::Bursts b{p.blockCount, p.blockLen, p.blockLen + uint64_t(p.srcStride),
                               span + uint64_t(p.dstStride) * 32, left, span};
    auto fill = [&](uint8_t* burst) {
        T* e = reinterpret_cast<T*>(burst);
        const uint64_t n = span / sizeof(T), first = left / sizeof(T), end = first + p.blockLen / sizeof(T);
        const bool dummy_is_first = !pad.isPad && left == 0 && right == 0;
        for (uint64_t i = 0; i < n; ++i) {
            if (i >= first && i < end) continue;
            if (pad.isPad) e[i] = pad.paddingValue;
            else if (dummy_is_first) e[i] = e[0];
            // otherwise the padding is undefined on the device: it keeps the poison pattern
        }
    };
    ascdsl_sim::gm_to_ub(api, dst, src.GetPhyAddr(), b, fill);
}

// UB -> GM: reads each burst from a 32-byte aligned UB slot, writes exactly blockLen bytes to GM.
template <typename T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p) {
    const char* api = "DataCopyPad";
    ascdsl_sim::require(p.blockLen <= 2097151, api, "blockLen ", p.blockLen, " B is over 2097151");
    if (p.blockLen == 0) return;
    const ascdsl_sim::Bursts b{p.blockCount, p.blockLen, p.blockLen + uint64_t(p.dstStride),
                               ascdsl_sim::ceil32(p.blockLen) + uint64_t(p.srcStride) * 32, 0, p.blockLen};
    ascdsl_sim::ub_to_gm(api, dst.GetPhyAddr(0), src, b);
}

}  // namespace AscendC

#endif  // ASCDSL_SIM_ASCDSL_SIM_DATA_COPY_H
