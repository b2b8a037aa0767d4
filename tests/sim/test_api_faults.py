"""Each check of the integer, gather, math and debug APIs trips on a faulty kernel and names API and reason."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ascdsl import sim

SRC = Path(__file__).parent / "kernels" / "api_faults.cpp"


@pytest.mark.parametrize(
    "kernel,api,reason",
    [
        ("shift_out_of_range", "ShiftLeft", "shift 17 is outside [0, 16]"),
        ("compare_int32_lt", "Compare", "int32_t supports EQ only on A2"),
        ("compare_scalar_unaligned_count", "CompareScalar", "count 32 x 4 B is not a multiple of 256 bytes"),
        ("gather_offset_outside", "Gather", "offset 4096 (+ srcBaseAddr 0) at index 0 is outside the 512-byte srcLocal"),
        ("gather_offset_misaligned", "Gather", "offset 6 (+ srcBaseAddr 0) at index 0 is not a multiple of the 4-byte element"),
        ("gather_mask_bad_pattern", "GatherMask", "built-in src1Pattern 9 is outside [1, 7]"),
        ("tanh_small_tmp", "Tanh", "temporary buffer of 256 B is below the minimum 512 B for half (sharedTmpBuffer)"),
        ("erf_no_free_ub", "Erf", "below the minimum 768 B for float (free UB after InitBuffer)"),
        ("tanh_misaligned", "Tanh", "UB operand srcTensor at offset 4 is not 32-byte aligned"),
        ("tanh_tmp_overlaps_src", "Tanh", "partial overlap of sharedTmpBuffer"),
        ("cumsum_unaligned_inner", "CumSum", "inner 7 x 4 B is not a positive multiple of 32 bytes"),
        ("cumsum_small_tmp", "CumSum", "temporary buffer of 1024 B is below the minimum 4096 B for float"),
        ("arange_zero_step", "ArithProgression", "diffValue must be greater than 0"),
        ("dump_unaligned", "DumpTensor", "dumpSize 3 x 4 B is not 32-byte aligned"),
        ("xor_small_tmp", "Xor", "temporary buffer of 64 B is below the minimum 256 B for int16_t (sharedTmpBuffer)"),
    ],
)
def test_api_check_names_api_and_reason(kernel, api, reason):
    x, y = np.zeros(1024, np.float32), np.zeros(1024, np.float32)
    with pytest.raises(sim.SimError) as info:
        sim.run_kernel(SRC, kernel, [x, y], 1)
    assert (info.value.api, info.value.block) == (api, 0)
    assert reason in info.value.reason
