// A direct-launch main.cpp for CANN's CPU debug mode running sync_all.cpp's exchange (tests/sim/test_sync_all.py).
// Usage: main BLOCKS SYNC; prints the blocks whose result is wrong.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tikicpulib.h"

extern "C" __global__ __aicore__ void exchange(GM_ADDR slots, GM_ADDR out, uint32_t sync);

int main(int argc, char** argv) {
    if (argc < 3) return 2;
    const uint32_t blocks = static_cast<uint32_t>(std::atoi(argv[1])), sync = static_cast<uint32_t>(std::atoi(argv[2]));
    const size_t bytes = blocks * 8 * sizeof(float);
    float* slots = (float*)AscendC::GmAlloc(bytes);
    float* out = (float*)AscendC::GmAlloc(bytes);
    std::memset(slots, 0, bytes);
    std::memset(out, 0, bytes);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(exchange, blocks, (GM_ADDR)slots, (GM_ADDR)out, sync);
    std::printf("wrong:");
    for (uint32_t b = 0; b < blocks; ++b)
        if (out[b * 8] != 2.0f * ((b + 1) % blocks + 1)) std::printf(" %u", b);
    std::printf("\n");
    AscendC::GmFree(slots);
    AscendC::GmFree(out);
    return 0;
}
