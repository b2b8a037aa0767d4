// SetAtomicAdd/SetAtomicMax/SetAtomicMin/SetAtomicNone: UB -> GM copies then combine with GM instead of
// overwriting it (A2 types: half, float, int16_t, int32_t, int8_t, bfloat16_t).
#ifndef ASCDSL_SIM_ASCDSL_SIM_ATOMIC_H
#define ASCDSL_SIM_ASCDSL_SIM_ATOMIC_H
#include "runtime.h"

namespace ascdsl_sim {

template <class T> constexpr bool atomic_ok = is_one_of_v<T, half, float, int16_t, int32_t, int8_t, bfloat16_t>;

template <class T>
void set_atomic(Atomic mode) {
    static_assert(atomic_ok<T>, "ascdsl sim: SetAtomicAdd/Max/Min support half, float, int16_t, int32_t, int8_t, bfloat16_t");
    st().atomic = mode;
    st().atomic_type = type_name<T>();
}

// gm[i] = gm[i] OP ub[i] for `count` elements of T: float types in float (rounded back to T), integers wrap.
template <class T>
void accumulate(const char* api, uint8_t* gm, const uint8_t* ub, uint64_t count) {
    const State& s = st();
    if constexpr (!atomic_ok<T>) {
        fail(api, "atomic ", s.atomic == Atomic::Add ? "add" : "max/min", " of ", type_name<T>(), " is not supported on A2");
    } else {
        require(std::string(s.atomic_type) == type_name<T>(), api, "copies ", type_name<T>(), " data while SetAtomic*<",
                s.atomic_type, "> is active (the atomic type must match the data)");
        for (uint64_t i = 0; i < count; ++i) {
            T g, u;
            std::memcpy(&g, gm + i * sizeof(T), sizeof(T));
            std::memcpy(&u, ub + i * sizeof(T), sizeof(T));
            using W = std::conditional_t<std::is_integral_v<T>, int64_t, float>;
            const W a = static_cast<W>(g), b = static_cast<W>(u);
            const W r = s.atomic == Atomic::Add ? a + b : s.atomic == Atomic::Max ? std::max(a, b) : std::min(a, b);
            const T out = static_cast<T>(r);
            std::memcpy(gm + i * sizeof(T), &out, sizeof(T));
        }
    }
}

}  // namespace ascdsl_sim

namespace AscendC {
template <typename T> inline void SetAtomicAdd() { ascdsl_sim::set_atomic<T>(ascdsl_sim::Atomic::Add); }
template <typename T> inline void SetAtomicMax() { ascdsl_sim::set_atomic<T>(ascdsl_sim::Atomic::Max); }
template <typename T> inline void SetAtomicMin() { ascdsl_sim::set_atomic<T>(ascdsl_sim::Atomic::Min); }
template <typename T> inline void SetAtomicType() { ascdsl_sim::st().atomic_type = ascdsl_sim::type_name<T>(); }
inline void SetAtomicNone() { ascdsl_sim::st().atomic = ascdsl_sim::Atomic::None; }
}  // namespace AscendC

#endif  // ASCDSL_SIM_ASCDSL_SIM_ATOMIC_H
