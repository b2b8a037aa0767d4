"""GM atomics (SetAtomicAdd/Max/Min + DataCopy/DataCopyPad) and CPU-debug printing (printf, DumpTensor)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ascdsl import sim

SRC = Path(__file__).parent / "kernels" / "atomics.cpp"
MODES = {"add": 0, "max": 1, "min": 2}


@pytest.mark.parametrize("pad", [0, 1])
@pytest.mark.parametrize("mode", list(MODES))
def test_float_rows_accumulate_across_blocks(rng, mode, pad):
    blocks, n = 5, 24 if pad else 64
    x = rng.standard_normal((blocks, n)).astype(np.float32)
    out = rng.standard_normal(n).astype(np.float32)
    expect = out.copy()
    res = sim.run_kernel(SRC, "accumulate_f32", [x, out, np.uint32(n), np.int32(MODES[mode]), np.int32(pad)], blocks,
                         shuffle_blocks=11)
    for row in x:
        expect = {"add": np.add, "max": np.maximum, "min": np.minimum}[mode](expect, row)
    if mode == "add":  # float addition is not associative: the sum follows the (shuffled) block order
        np.testing.assert_allclose(out, expect, rtol=1e-6, atol=1e-6)
    else:
        np.testing.assert_array_equal(out, expect)
    assert res.stats.gm_write_bytes == blocks * n * 4


def test_half_and_int32_add(rng):
    x = rng.integers(-2**31, 2**31, (3, 64), dtype=np.int64).astype(np.int32)
    out = np.zeros(64, np.int32)
    sim.run_kernel(SRC, "accumulate_i32", [x, out, np.uint32(64), np.int32(0), np.int32(0)], 3)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, x[0] + x[1] + x[2])  # wraps
    h = np.ascontiguousarray(np.array([[2048, 1, 0.5] * 22, [1, 1, 0.25] * 22], np.float16)[:, :64])
    hout = np.zeros(64, np.float16)
    sim.run_kernel(SRC, "accumulate_f16", [h, hout, np.uint32(64), np.int32(0), np.int32(0)], 2)
    np.testing.assert_array_equal(hout, (h[0] + h[1]))  # each add rounds to half: 2048 + 1 == 2048


def test_plain_write_over_atomic_accumulation_is_a_race():
    x, out = np.ones(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(sim.SimError) as info:
        sim.run_kernel(SRC, "atomic_then_plain", [x, out], 2, shuffle_blocks=1)
    assert info.value.api == "DataCopy"
    assert "blocks must write disjoint GM" in info.value.reason


def test_atomic_type_must_match_the_data():
    with pytest.raises(sim.SimError) as info:
        sim.run_kernel(SRC, "atomic_type_mismatch", [np.ones(8, np.float32), np.zeros(8, np.float32)], 1)
    assert (info.value.api, info.value.block) == ("DataCopy", 0)
    assert "copies float data while SetAtomic*<half> is active" in info.value.reason


def test_printf_and_dump_tensor_reach_stdout():
    x = np.arange(16, dtype=np.float32)
    res = sim.run_kernel(SRC, "print_and_dump", [x, np.zeros(8, np.float32)], 2)
    lines = res.stdout.splitlines()
    assert lines[:5] == [
        "block 0 of 2: 1.500000 0.250000",
        "DumpTensor: desc=7, data_type=float, position=VECIN",
        "[0, 2, 4, 6, 8, 10, 12, 14]",
        "gm:",
        "DumpTensor: desc=8, data_type=float, position=GM",
    ]
    assert lines[5] == "[0, 1, 2, 3, 4, 5, 6, 7]" and lines[6].startswith("block 1 of 2")


@pytest.mark.parametrize("scenario,api,reason", [
    (0, "DataCopy", "reads GM bytes that GlobalTensor::SetValue left in the scalar data cache"),
    (1, "GlobalTensor::GetValue", "reads GM through a data cache line that DataCopy has overwritten"),
])
def test_scalar_data_cache_needs_clean_and_invalidate(scenario, api, reason):
    x = np.arange(1, 9, dtype=np.float32)
    out = np.full(16, 7, np.float32)
    with pytest.raises(sim.SimError) as info:
        sim.run_kernel(SRC, "scalar_cache", [x, out, np.int32(scenario), np.int32(0)], 1)
    assert (info.value.api, info.value.block) == (api, 0)
    assert reason in info.value.reason and "DataCacheCleanAndInvalid" in info.value.reason
    out = np.full(16, 7, np.float32)
    sim.run_kernel(SRC, "scalar_cache", [x, out, np.int32(scenario), np.int32(1)], 1)
    if scenario == 0:
        np.testing.assert_array_equal(out[8:], [42] + [7] * 7)
    else:
        assert out[8] == x[1] + 7
