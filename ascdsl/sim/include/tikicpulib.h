// CANN CPU-debug compatibility: GmAlloc/GmFree, SetKernelMode, ICPU_SET_TILING_KEY and ICPU_RUN_KF, so a
// direct-launch main.cpp written for CANN's CPU debug mode builds and runs on the simulator unchanged.
// The platform comes from the environment that ascdsl.sim.run_main sets (default Ascend910B3); run_main
// also defines what CANN's CPU-debug build defines (ASCENDC_CPU_DEBUG, __CCE_KT_TEST__, __CCE_AICORE__, ...).
#ifndef ASCDSL_SIM_TIKICPULIB_H
#define ASCDSL_SIM_TIKICPULIB_H
#ifndef ASCENDC_CPU_DEBUG
#error "tikicpulib.h needs the CPU-debug build's definitions (ASCENDC_CPU_DEBUG, __CCE_KT_TEST__, ...): build with ascdsl.sim.run_main or CMake's RUN_MODE=cpu"
#endif
#include <cstdlib>
#include <numeric>

#include "ascdsl_sim/launch.h"
#include "kernel_operator.h"

enum class KernelMode { MIX_MODE = 0, AIC_MODE, AIV_MODE, MIX_AIC_1_1, MIX_AIC_1_2 };
namespace AscendC {
using ::KernelMode;
}

namespace ascdsl_sim {

inline uint64_t env_u64(const char* name, uint64_t fallback) {
    const char* v = std::getenv(name);
    return v ? std::strtoull(v, nullptr, 10) : fallback;
}

// Whether SetKernelMode asked for a MIX launch (KernelMode::MIX_MODE: an AIC and its two AIVs per block).
inline bool& mix_mode() {
    static bool mix = false;
    return mix;
}

// ICPU_RUN_KF: every block in order (or shuffled by ASCDSL_SIM_SHUFFLE_SEED); a failed check ends the process.
template <class Kernel>
void icpu_run(uint64_t block_dim, Kernel kernel) {
    const char* platform = std::getenv("ASCDSL_SIM_PLATFORM");
    configure(platform ? platform : "Ascend910B3", env_u64("ASCDSL_SIM_UB_BYTES", 192 * 1024),
              env_u64("ASCDSL_SIM_UB_BUDGET", 184 * 1024), env_u64("ASCDSL_SIM_BF16", 1),
              env_u64("ASCDSL_SIM_HAZARDS", 1), env_u64("ASCDSL_SIM_VV", 1), st().tiling_key);
    timeline().params.cores = env_u64("ASCDSL_SIM_CORES", 40);  // the vector cores SyncAll's blocks must fit
    std::vector<int64_t> order(block_dim);
    std::iota(order.begin(), order.end(), 0);
    if (const char* seed = std::getenv("ASCDSL_SIM_SHUFFLE_SEED")) {
        uint64_t x = std::strtoull(seed, nullptr, 10) * 6364136223846793005ull + 1442695040888963407ull;
        for (size_t i = order.size(); i > 1; --i) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            std::swap(order[i - 1], order[(x >> 33) % i]);
        }
    }
    const Outcome o = run_blocks(order, kernel, mix_mode());
    if (!o.ok) {
        std::fprintf(stderr, "ASCDSL_SIM_ERROR %s\n", error_json(o).c_str());
        std::exit(1);
    }
}

}  // namespace ascdsl_sim

namespace AscendC {

// Shared GM for the kernel arguments; only memory from GmAlloc counts as GM.
inline void* GmAlloc(size_t size) {
    void* p = std::aligned_alloc(32, (size + 31) / 32 * 32 + 32);
    ascdsl_sim::st().gm.push_back(ascdsl_sim::GmRegion{reinterpret_cast<uintptr_t>(p), size, {}});
    return p;
}

inline void GmFree(void* ptr) {
    auto& gm = ascdsl_sim::st().gm;
    gm.erase(std::remove_if(gm.begin(), gm.end(),
                            [ptr](const ascdsl_sim::GmRegion& r) { return r.base == reinterpret_cast<uintptr_t>(ptr); }),
             gm.end());
    std::free(ptr);
}

inline void SetKernelMode(KernelMode mode) {
    g_coreType = mode == KernelMode::AIC_MODE ? AIC : AIV;
    ascdsl_sim::mix_mode() = mode == KernelMode::MIX_MODE || mode == KernelMode::MIX_AIC_1_2;
}

}  // namespace AscendC

#define ICPU_SET_TILING_KEY(key) (ascdsl_sim::st().tiling_key = (key))
#define ICPU_RUN_KF(func, blockdim, ...) ascdsl_sim::icpu_run((blockdim), [&]() { func(__VA_ARGS__); })

#endif
