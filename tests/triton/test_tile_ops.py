"""Triton-style kernels for the tile ops of the Ascend C backend (rewritten for ascdsl), each run on
the interpreter against NumPy and as generated Ascend C on the simulator against the interpreter:
bool outputs and masks from int and float comparisons, integer hashing arithmetic, per-row argmax
with a single-element store, `arange` casts and broadcast rows, a running sum, a transpose, an
interleave and the float math helpers."""
from __future__ import annotations

import numpy as np
import pytest

import ascdsl as triton
import ascdsl.language as tl
from ascdsl.language.extra import libdevice

pytestmark = pytest.mark.usefixtures("prebuilt_module")  # the simulator kernels in few g++ runs


def _both(kernel, grid, *args, **kw):
    """Outputs (the arrays written) of the interpreter and of the simulator."""
    outs = []
    for backend in ("interpreter", "sim"):
        copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        kernel[grid](*copies, backend=backend, **kw)
        outs.append(copies)
    return outs


@triton.jit
def in_range_kernel(x_ptr, lo_ptr, hi_ptr, flags_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    lo = tl.load(lo_ptr + offsets, mask=mask)
    hi = tl.load(hi_ptr + offsets, mask=mask)
    tl.store(flags_ptr + offsets, ((x >= lo) & (x < hi)) | (offsets % 7 == 0), mask=mask)


def test_bool_output_from_int_comparisons():
    rng = np.random.default_rng(0)
    n = 1000
    x, lo, hi = (rng.integers(-50, 50, n).astype(np.int32) for _ in range(3))
    want, got = _both(in_range_kernel, (triton.cdiv(n, 256),), x, lo, hi, np.zeros(n, np.bool_), n,
                      BLOCK_SIZE=256)
    assert (want[3] == (((x >= lo) & (x < hi)) | (np.arange(n) % 7 == 0))).all()
    np.testing.assert_array_equal(got[3], want[3])


@triton.jit
def hash_kernel(keys_ptr, out_ptr, n, buckets, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    k = tl.load(keys_ptr + offsets, mask=mask, other=0)
    h = (k ^ (k >> 16)) * 73244475
    h = h ^ (h >> 13)
    tl.store(out_ptr + offsets, tl.abs(h % buckets) + h // 1000003 * 0, mask=mask)


def test_integer_hashing():
    rng = np.random.default_rng(1)
    n = 777
    keys = rng.integers(-2 ** 31, 2 ** 31, n, dtype=np.int64).astype(np.int32)
    want, got = _both(hash_kernel, (triton.cdiv(n, 128),), keys, np.zeros(n, np.int32), n, 1021, BLOCK_SIZE=128)
    with np.errstate(over="ignore"):
        h = (keys ^ (keys >> 16)) * np.int32(73244475)
        h = h ^ (h >> 13)
    assert (want[1] == np.abs(np.fmod(h, 1021))).all()
    np.testing.assert_array_equal(got[1], want[1])


@triton.jit
def row_argmax_kernel(x_ptr, idx_ptr, max_ptr, n_cols, stride, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    value, index = tl.max(x, axis=0, return_indices=True)
    tl.store(idx_ptr + row, index)
    tl.store(max_ptr + row, value)


def test_row_argmax_with_single_element_stores():
    rng = np.random.default_rng(2)
    x = np.round(rng.standard_normal((6, 100)) * 2).astype(np.float32)  # ties: the lowest index wins
    want, got = _both(row_argmax_kernel, (6,), x, np.zeros(6, np.int32), np.zeros(6, np.float32), 100, 100,
                      BLOCK_SIZE=128)
    assert (want[1] == x.argmax(1)).all() and (want[2] == x.max(1)).all()
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[2], want[2])


@triton.jit
def positions_kernel(out_ptr, scale_ptr, n_rows, N: tl.constexpr, ROWS: tl.constexpr):
    rows = tl.arange(0, ROWS)[:, None]
    cols = tl.arange(0, N)
    scale = tl.load(scale_ptr + cols)[None, :]  # (1, N) against (ROWS, N)
    angle = rows.to(tl.float32) * scale + cols.to(tl.float32)[None, :] * 0.5
    tl.store(out_ptr + rows * N + cols[None, :], tl.where(angle > 3.0, angle, scale), mask=rows < n_rows)


def test_arange_casts_and_broadcast_rows():
    scale = np.linspace(0.1, 2.0, 16).astype(np.float32)
    want, got = _both(positions_kernel, (1,), np.zeros((5, 16), np.float32), scale, 5, N=16, ROWS=8)
    angle = np.arange(5)[:, None] * scale[None, :] + np.arange(16)[None, :] * np.float32(0.5)
    np.testing.assert_allclose(want[0], np.where(angle > 3, angle, scale[None, :]), rtol=1e-6)
    np.testing.assert_array_equal(got[0], want[0])


@triton.jit
def running_sum_kernel(x_ptr, out_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row * n_cols + cols, tl.cumsum(x, axis=0), mask=cols < n_cols)


def test_running_sum():
    x = np.random.default_rng(3).standard_normal((4, 50)).astype(np.float32)
    want, got = _both(running_sum_kernel, (4,), x, np.zeros_like(x), 50, BLOCK_SIZE=64)
    np.testing.assert_allclose(want[1], np.cumsum(x, 1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-6)


@triton.jit
def transpose_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    tl.store(out_ptr + cols[:, None] * M + rows[None, :], tl.trans(x))


@triton.jit
def interleave_kernel(re_ptr, im_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + tl.arange(0, 2 * N), tl.interleave(tl.load(re_ptr + offs), tl.load(im_ptr + offs)))


def test_transpose_and_interleave():
    x = np.arange(16 * 24, dtype=np.float32).reshape(16, 24)
    want, got = _both(transpose_kernel, (1,), x, np.zeros((24, 16), np.float32), M=16, N=24)
    assert (want[1] == x.T).all() and (got[1] == want[1]).all()
    re, im = np.arange(32, dtype=np.float32), -np.arange(32, dtype=np.float32)
    want, got = _both(interleave_kernel, (1,), re, im, np.zeros(64, np.float32), N=32)
    assert (want[2] == np.stack([re, im], 1).ravel()).all() and (got[2] == want[2]).all()


@triton.jit
def softplus_kernel(x_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    soft = tl.where(x > 20.0, x, tl.log1p(tl.exp(x)))
    tl.store(out_ptr + offsets, tl.where(libdevice.isnan(x), 0.0, soft + libdevice.pow(tl.abs(x), 0.5)), mask=mask)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_float_math_helpers(dtype):
    x = (np.random.default_rng(4).standard_normal(300) * 8).astype(dtype)
    x[0] = np.nan
    want, got = _both(softplus_kernel, (3,), x, np.zeros_like(x), 300, BLOCK_SIZE=128)
    xf = x.astype(np.float64)
    ref = np.where(np.isnan(xf), 0, np.where(xf > 20, xf, np.log1p(np.exp(xf))) + np.sqrt(np.abs(xf)))
    rtol = 1e-5 if dtype == np.float32 else 4e-3
    if dtype == np.float32:  # float16's exp overflows above 11 on both backends
        np.testing.assert_allclose(want[1].astype(np.float64), ref, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(got[1].astype(np.float64), want[1].astype(np.float64), rtol=rtol, atol=rtol)
