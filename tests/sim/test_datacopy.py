"""DataCopy and DataCopyPad layouts (the documented worked examples) and scalar access."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ascdsl import sim

SRC = Path(__file__).parent / "kernels" / "datacopy.cpp"


def test_datacopy_params_counts_blocks_and_gaps():
    # half, blockCount=2, blockLen=3 blocks, srcGap=1 block, dstGap=2 blocks (the documented example)
    src = np.arange(256, dtype=np.float16)
    out0 = np.zeros(128, np.float16)
    out1 = np.full(128, -1, np.float16)
    res = sim.run_kernel(SRC, "copy_params", [src, out0, out1], 1)
    np.testing.assert_array_equal(out0[0:48], src[0:48])  # burst 0: GM blocks 0-2 -> UB blocks 0-2
    assert (out0[48:80].view(np.uint16) == 0xFFFF).all()  # 2-block UB gap: untouched (poison)
    np.testing.assert_array_equal(out0[80:128], src[64:112])  # burst 1 starts after a 1-block GM gap
    # UB -> GM with UB gap 2 and GM gap 1: the bursts land back 1 block apart
    np.testing.assert_array_equal(out1[0:48], src[0:48])
    np.testing.assert_array_equal(out1[48:64], -1)
    np.testing.assert_array_equal(out1[64:112], src[64:112])
    np.testing.assert_array_equal(out1[112:], -1)
    assert res.stats.gm_read_bytes == 2 * 96
    assert res.stats.gm_write_bytes == 256 + 2 * 96
    assert res.stats.gm_copies == 3


def test_datacopy_pad_layout():
    src = np.arange(48, dtype=np.float32)
    out = np.zeros(72, np.float32)
    packed = np.full(20, -7, np.float32)
    sim.run_kernel(SRC, "copy_pad", [src, out, packed], 1)
    rows = src.reshape(3, 16)
    # blockLen 48 B + rightPadding 16 B -> 64 B per burst, 192 B for 3 bursts; padding = -1
    np.testing.assert_array_equal(out[:48].reshape(3, 16), np.concatenate([rows[:, :12], np.full((3, 4), -1.0)], axis=1))
    # 20-byte bursts without padding: each 32-byte slot ends with copies of the burst's first element
    slots = out[48:72].reshape(3, 8)
    for r in range(3):
        np.testing.assert_array_equal(slots[r], [src[16 * r + i] for i in range(5)] + [src[16 * r]] * 3)
    # UB -> GM writes exactly blockLen bytes per burst
    np.testing.assert_array_equal(packed[:15], np.concatenate([src[16 * r: 16 * r + 5] for r in range(3)]))
    np.testing.assert_array_equal(packed[15:], -7)


def test_scalar_access_with_flags():
    x = np.arange(1, 9, dtype=np.float32)
    out = np.zeros(16, np.float32)
    sim.run_kernel(SRC, "scalar_access", [x, out], 1)
    np.testing.assert_array_equal(out[:8], 3 * x)
    assert out[8] == 6.0 and not out[9:].any()


def test_alloc_tensor_poisons_and_tiling_key_selects_the_branch():
    out = np.zeros(16, np.float32)
    res = sim.run_kernel(SRC, "realloc_and_key", [out], 1, tiling_key=2)
    assert (out[:8].view(np.uint32) == 0xFFFFFFFF).all()
    np.testing.assert_array_equal(out[8:], 2.0)
    assert res.stats.ub_peak_bytes == 96
    sim.run_kernel(SRC, "realloc_and_key", [out], 1)
    np.testing.assert_array_equal(out[8:], 3.0)
