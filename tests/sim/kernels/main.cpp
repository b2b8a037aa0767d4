// A direct-launch main.cpp written for CANN's CPU debug mode: it runs unchanged on the simulator.
// Usage: main [fault]
#include <cstdio>
#include <cstring>

#include "tikicpulib.h"

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t totalLength,
                                                 uint32_t tileLength);
extern "C" __global__ __aicore__ void gm_out_of_bounds(GM_ADDR x, GM_ADDR y);

int main(int argc, char** argv) {
    const uint32_t blockDim = 8, totalLength = blockDim * 2048;
    const size_t bytes = totalLength * sizeof(float);
    uint8_t* x = (uint8_t*)AscendC::GmAlloc(bytes);
    uint8_t* y = (uint8_t*)AscendC::GmAlloc(bytes);
    uint8_t* z = (uint8_t*)AscendC::GmAlloc(bytes);
    for (uint32_t i = 0; i < totalLength; ++i) {
        ((float*)x)[i] = i * 0.5f;
        ((float*)y)[i] = 1.0f;
    }
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_SET_TILING_KEY(1);
    if (argc > 1 && std::strcmp(argv[1], "fault") == 0) {
        uint8_t* a = (uint8_t*)AscendC::GmAlloc(1024 * sizeof(float));  // block 1 reads past its end
        ICPU_RUN_KF(gm_out_of_bounds, 2, a, y);
    } else {
        ICPU_RUN_KF(add_custom, blockDim, x, y, z, totalLength, 512u);
    }
    uint32_t wrong = 0;
    for (uint32_t i = 0; i < totalLength; ++i) wrong += ((float*)z)[i] != (i * 0.5f + 1.0f) * 2.0f;
    std::printf("mismatches: %u\n", wrong);
    AscendC::GmFree((void*)x);
    AscendC::GmFree((void*)y);
    AscendC::GmFree((void*)z);
    return wrong == 0 ? 0 : 1;
}
