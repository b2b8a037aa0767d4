"""Gather, GatherMask, ArithProgression and CreateVecIndex against NumPy."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ascdsl import sim

SRC = Path(__file__).parent / "kernels" / "gather.cpp"


def run(name, *args, **kw):
    return sim.run_kernel(SRC, name, list(args), 1, **kw)


def test_gather_by_byte_offsets(rng):
    n = 200  # over 3 repeats of 64: full repeats plus a tail
    src = rng.standard_normal(n).astype(np.float32)
    idx = rng.integers(0, n, n).astype(np.uint32)
    out = np.zeros(n, np.float32)
    res = run("gather_f32", src, (idx * 4).view(np.float32), out, np.uint32(n))
    np.testing.assert_array_equal(out, src[idx])
    assert res.stats.vector_elements["Gather"] == n


def test_gather_repeat_form_with_base_and_mask(rng):
    src = rng.standard_normal(256).astype(np.float16)
    idx = rng.integers(0, 256 - 32, 128).astype(np.uint32)  # base 64 B = 32 halves
    out = np.full(128, -1, np.float16)
    run("gather_f16_masked", src, (idx * 2).view(np.float16), out)
    expect = np.full(128, -1, np.float16)
    expect[:100] = src[32 + idx[:100]]
    np.testing.assert_array_equal(out, expect)


def test_gather_mask_built_in_patterns(rng):
    src = rng.standard_normal(128).astype(np.float32)
    out = np.zeros(104, np.float32)
    run("gather_mask_fixed", src, src.copy(), out)
    np.testing.assert_array_equal(out[:64], src[0::2])
    np.testing.assert_array_equal(out[64:96], src[3::4])
    assert out[96] == 64 * 1000 + 32


def test_gather_mask_compacts_by_a_compare_mask(rng):
    n = 256
    src = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n + 8, np.float32)
    run("compact_positive", src, src.copy(), out, np.uint32(n))
    kept = src[src > 0]
    np.testing.assert_array_equal(out[: kept.size], kept)
    assert out[n] == kept.size


def progression(first, diff, n, dtype):
    """CANN's order: the first 32-byte block by scalar math, later blocks/repeats by adding diff * width."""
    blk, rep = 32 // np.dtype(dtype).itemsize, 256 // np.dtype(dtype).itemsize
    wide = np.float32 if np.dtype(dtype).kind == "f" else np.int64
    written = -(-n // blk) * blk if n > blk else n
    v = np.zeros(written, dtype)
    for i in range(min(written, blk)):
        v[i] = dtype(wide(first) + wide(diff) * wide(i))
    for i in range(blk, min(written, rep)):
        v[i] = dtype(wide(v[i - blk]) + wide(dtype(np.float32(diff) * blk)))
    for i in range(rep, written):
        v[i] = dtype(wide(v[i - rep]) + wide(dtype(np.float32(diff) * rep)))
    return v


@pytest.mark.parametrize("name,dtype,first,diff,n", [
    ("arange_i32", np.int32, 0, 1, 300), ("arange_i32", np.int32, -7, 3, 5),
    ("arange_f32", np.float32, 0.5, 0.1, 200), ("arange_f16", np.float16, 1.0, 0.25, 150),
])
def test_arith_progression(name, dtype, first, diff, n):
    size = -(-n * np.dtype(dtype).itemsize // 32) * 32 // np.dtype(dtype).itemsize
    out = np.zeros(size, dtype)
    scalar = np.int32 if dtype == np.int32 else np.float32
    run(name, np.zeros(32 // np.dtype(dtype).itemsize, dtype), out, np.uint32(n), scalar(first), scalar(diff))
    expect = progression(dtype(first), dtype(diff), n, dtype)
    np.testing.assert_array_equal(out[: expect.size], expect)
    if dtype == np.int32:
        np.testing.assert_array_equal(out[:n], first + diff * np.arange(n))


def test_create_vec_index_then_cast():
    n = 104
    out = np.zeros(2 * n, np.int32)
    run("vec_index", np.zeros(8, np.int32), out, np.uint32(n))
    np.testing.assert_array_equal(out[:n], 5 + np.arange(n))
    np.testing.assert_array_equal(out[n:].view(np.float32), (5 + np.arange(n)).astype(np.float32))
