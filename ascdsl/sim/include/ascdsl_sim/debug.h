// CPU-debug printing: printf/PRINTF (half and bfloat16_t arguments print as float, double is refused as on
// the device) and DumpTensor (waits for every pipe like the device's PipeBarrier<PIPE_ALL>, then prints).
#ifndef ASCDSL_SIM_ASCDSL_SIM_DEBUG_H
#define ASCDSL_SIM_ASCDSL_SIM_DEBUG_H
#include <cstdio>

#include "pipe.h"

namespace ascdsl_sim {

template <class T>
auto printf_arg(const T& v) {
    static_assert(!std::is_same_v<T, double>, "ascdsl sim: printf does not support double arguments on the device");
    if constexpr (is_half_v<T> || is_bf16_v<T> || std::is_same_v<T, float>) return static_cast<double>(static_cast<float>(v));
    else return v;
}

template <class T>
void print_value(const T& v) {
    if constexpr (std::is_floating_point_v<compute_t<T>>) std::printf("%g", static_cast<double>(static_cast<float>(v)));
    else if constexpr (std::is_signed_v<T>) std::printf("%lld", static_cast<long long>(v));
    else std::printf("%llu", static_cast<unsigned long long>(v));
}

// "DumpTensor: desc=D, data_type=T, position=P" then the first `count` elements.
template <class T>
void dump(const char* position, uint32_t desc, const T* data, uint32_t count) {
    std::printf("DumpTensor: desc=%u, data_type=%s, position=%s\n[", desc, type_name<T>(), position);
    for (uint32_t i = 0; i < count; ++i) {
        if (i) std::printf(", ");
        print_value(data[i]);
    }
    std::printf("]\n");
}

}  // namespace ascdsl_sim

namespace AscendC {

template <class... Args>
inline void printf(const char* fmt, Args&&... args) {
    std::printf(fmt, ascdsl_sim::printf_arg(args)...);
}
template <class... Args>
inline void PRINTF(const char* fmt, Args&&... args) {
    AscendC::printf(fmt, std::forward<Args>(args)...);
}

template <typename T>
inline void DumpTensor(const LocalTensor<T>& tensor, uint32_t desc, uint32_t dumpSize) {
    const char* api = "DumpTensor";
    ascdsl_sim::require(uint64_t(dumpSize) * sizeof(T) % 32 == 0, api, "dumpSize ", dumpSize, " x ", sizeof(T),
                        " B is not 32-byte aligned");
    ascdsl_sim::require(dumpSize <= tensor.GetSize(), api, "dumpSize ", dumpSize, " exceeds the tensor's ",
                        tensor.GetSize(), " elements");
    ascdsl_sim::touch_buffer(api, tensor.buffer(), tensor.generation(), "tensor");
    ascdsl_sim::begin_op(api);
    ascdsl_sim::barrier_all();
    ascdsl_sim::dump(ascdsl_sim::position_name(tensor.GetPosition()), desc, tensor.ptr(), dumpSize);
}
template <typename T>
inline void DumpTensor(const GlobalTensor<T>& tensor, uint32_t desc, uint32_t dumpSize) {
    const char* api = "DumpTensor";
    ascdsl_sim::require(uint64_t(dumpSize) * sizeof(T) % 32 == 0, api, "dumpSize ", dumpSize, " x ", sizeof(T),
                        " B is not 32-byte aligned");
    ascdsl_sim::gm_region(api, tensor.GetPhyAddr(), uint64_t(dumpSize) * sizeof(T), "read");  // not counted as traffic
    ascdsl_sim::begin_op(api);
    ascdsl_sim::barrier_all();
    ascdsl_sim::dump("GM", desc, tensor.GetPhyAddr(), dumpSize);
}

}  // namespace AscendC

#endif  // ASCDSL_SIM_ASCDSL_SIM_DEBUG_H
