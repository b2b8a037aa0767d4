"""Single-element loads and stores on the simulator against the interpreter: ``tl.store(Mean + row,
mean)`` (a one-element ``DataCopyPad``), ``tl.load(ptr + i)`` (``GetValue`` on the scalar unit) as
a value, an offset and a loop bound, under scalar masks, and from a tensor the kernel stored to before."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from tests.backend.helpers import FLOATS, both, data, prebuilt


@ascdsl.jit
def row_stats_kernel(x_ptr, mean_ptr, rstd_ptr, scale_ptr, out_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n
    var = tl.sum(x * x, axis=0) / n - mean * mean
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    s = tl.load(scale_ptr + row)
    tl.store(out_ptr + row * n + offs, ((x - mean) * rstd * s).to(out_ptr.dtype.element_ty), mask=offs < n)


@ascdsl.jit
def masked_single_kernel(x_ptr, out_ptr, n):
    pid = tl.program_id(0)
    v = tl.load(x_ptr + pid, mask=pid < n, other=-1.5)
    tl.store(out_ptr + pid, v * 2.0, mask=pid % 2 == 0)


@ascdsl.jit
def ragged_rows_kernel(x_ptr, starts_ptr, lens_ptr, out_ptr, total_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    start = tl.load(starts_ptr + pid)
    length = tl.load(lens_ptr + pid)
    acc = tl.zeros((BLOCK,), tl.float32)
    for off in range(0, length, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + start + cols, mask=cols < length, other=0.0)
        tl.store(out_ptr + start + cols, x * 3.0, mask=cols < length)
        acc += x
    tl.store(total_ptr + pid, tl.max(acc, axis=0))


@ascdsl.jit
def load_after_store_kernel(x_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(x_ptr + i, tl.zeros((BLOCK,), tl.float32))
    v = tl.load(x_ptr + 3)
    tl.store(x_ptr + BLOCK + i, tl.zeros((BLOCK,), tl.float32) + v)


def _check_stats(dtype):
    rows, n = 6, 100
    x, scale = data((rows, n), dtype), data(rows, dtype)
    want, got = both(row_stats_kernel[(rows,)], x, np.zeros(rows, np.float32), np.zeros(rows, dtype.np), scale,
                      np.zeros((rows, n), dtype.np), n, 1e-5, BLOCK=128)
    for k in (1, 2, 4):  # mean, rstd (stored as the pointer's dtype), out
        np.testing.assert_allclose(got[k].astype(np.float64), want[k].astype(np.float64), rtol=dtype.rtol,
                                   atol=dtype.atol)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_mean_and_rstd_stores_and_a_scalar_load(dtype):
    prebuilt(_check_stats, [(d,) for d in FLOATS])
    _check_stats(dtype)


def _check_masked(dtype):
    x = data(5, dtype)
    want, got = both(masked_single_kernel[(8,)], x, np.full(8, 9.0, dtype.np), 5)
    assert got[1].tobytes() == want[1].tobytes()


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_masked_single_element_loads_and_stores(dtype):
    prebuilt(_check_masked, [(d,) for d in FLOATS])
    _check_masked(dtype)


def test_loaded_offsets_and_loop_bounds():
    lens = np.array([5, 0, 130, 64, 1], np.int32)
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int32)
    x = data(int(lens.sum()), dtypes.float32)
    want, got = both(ragged_rows_kernel[(5,)], x, starts, lens, np.zeros_like(x), np.zeros(5, np.float32),
                      BLOCK=64)
    assert got[3].tobytes() == want[3].tobytes()
    assert got[4].tobytes() == want[4].tobytes()


def test_a_single_element_load_of_a_stored_tensor_reads_the_store():
    want, got = both(load_after_store_kernel[(1,)], np.ones(64, np.float32), BLOCK=32)
    np.testing.assert_array_equal(got[0], want[0])
    assert (want[0] == 0).all()  # v is the stored 0, not the 1 before the store


@ascdsl.jit
def int64_scalars_kernel(idx_ptr, out_ptr, big):
    pid = tl.program_id(0)
    i = tl.load(idx_ptr + pid)  # an int64 element
    v = i * 3 + big  # int64 arithmetic (big needs int64)
    tl.store(out_ptr + pid, (v % 1000003).to(tl.int32))


@ascdsl.jit
def narrow_and_wide_stores_kernel(i64_ptr, i8_ptr, u8_ptr, big):
    pid = tl.program_id(0)
    tl.store(i64_ptr + pid, big * 2 - pid)
    tl.store(i8_ptr + pid, (pid * 50 - 70).to(tl.int8))
    tl.store(u8_ptr + pid, (pid * 90).to(tl.uint8))  # 270 wraps to 14


def test_int64_scalar_loads_and_arithmetic():
    idx = np.array([1, -5, 2**40, 7], np.int64)
    want, got = both(int64_scalars_kernel[(4,)], idx, np.zeros(4, np.int32), 2**33)
    assert np.array_equal(want[1], ((idx * 3 + 2**33) % 1000003).astype(np.int32))  # C's %: these are positive
    assert got[1].tobytes() == want[1].tobytes()


def test_single_stores_of_types_duplicate_has_no_form_for():
    """int64, int8 and uint8 elements: written through int32/int16 views of their buffer."""
    want, got = both(narrow_and_wide_stores_kernel[(4,)], np.zeros(4, np.int64), np.zeros(4, np.int8),
                      np.zeros(4, np.uint8), 2**33 + 5)
    assert np.array_equal(want[0], 2 * (2**33 + 5) - np.arange(4)) and np.array_equal(want[2], [0, 90, 180, 14])
    for w, g in zip(want[:3], got[:3]):
        assert g.tobytes() == w.tobytes()


def test_single_stores_of_program_ids_over_a_3d_grid():
    """``tl.store(out_ptr + pid, pid * SCALE)``: ``pid`` is an int64 GM offset, stored as int32."""
    from tests.test_launch import grid_kernel
    want, got = both(grid_kernel[(3, 2, 2)], np.zeros(12, np.int32), SCALE=3)
    assert np.array_equal(want[0], np.arange(12) * 3) and got[0].tobytes() == want[0].tobytes()
