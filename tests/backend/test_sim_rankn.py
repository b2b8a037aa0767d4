"""Tiles of rank 4 on the simulator (hazard checks on) against the interpreter: made by `tl.reshape` of
loaded blocks, computed as their flat [A * B * C, D] view: elementwise math and broadcasts among
[A, B, C, D], [A, 1, C, D], [1, B, 1, D], [A, B, C, 1], [A, 1, 1, 1] and one row, reductions along every
axis and to a scalar, permutes, and scans, sorts and flips along the last axis of rank-3 and rank-4
tiles: bit-exact where the ops are exact. A block load of rank 4 is a located error."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from tests.backend.helpers import CANN, assert_type_checks, both, data, each
from tests.backend.sweep import ALL_SWEEP, FLOAT_SWEEP
from tests.backend.test_sim_reductions import combine_max, combine_min

A, B, C, D = 2, 3, 2, 8
SHAPE = (A, B, C, D)
N = A * B * C * D


@ascdsl.jit
def broadcast4_kernel(x_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, D: tl.constexpr):
    i = tl.arange(0, A * B * C * D)
    x = tl.reshape(tl.load(x_ptr + i), (A, B, C, D))
    y = x * 2 - tl.max(x, axis=1, keep_dims=True) + tl.sum(x, axis=3, keep_dims=True)
    y = y + tl.min(tl.min(x, axis=2, keep_dims=True), axis=0, keep_dims=True)  # [1, B, 1, D]
    y = y + tl.max(tl.max(tl.max(x, 3, keep_dims=True), 2, keep_dims=True), 1, keep_dims=True)  # [A, 1, 1, 1]
    y = y + tl.reshape(tl.load(x_ptr + tl.arange(0, D)), (1, 1, 1, D)) + 1
    tl.store(out_ptr + i, tl.reshape(y, (A * B * C * D,)))
    tl.store(out_ptr + A * B * C * D, tl.sum(x))


@pytest.mark.parametrize("dtype", FLOAT_SWEEP)
def test_rank4_elementwise_broadcasts_and_reductions(dtype):
    x = data(SHAPE, dtype)
    want, got = both(broadcast4_kernel[(1,)], x, np.zeros(N + 1, dtype.np), A=A, B=B, C=C, D=D)
    w, g = want[1].astype(np.float64), got[1].astype(np.float64)
    np.testing.assert_allclose(g, w, rtol=dtype.rtol, atol=dtype.atol * N)
    f = x.astype(np.float64)
    expect = (f * 2 - f.max(1, keepdims=True) + f.sum(3, keepdims=True) + f.min((0, 2), keepdims=True)
              + f.max((1, 2, 3), keepdims=True) + f.reshape(-1)[:D] + 1)
    np.testing.assert_allclose(w[:N], expect.reshape(-1), rtol=4 * dtype.rtol, atol=dtype.atol * N)


@ascdsl.jit
def reduce4_kernel(x_ptr, out_ptr, AXIS: tl.constexpr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr,
                   D: tl.constexpr, M: tl.constexpr):
    x = tl.reshape(tl.load(x_ptr + tl.arange(0, A * B * C * D)), (A, B, C, D))
    o = tl.arange(0, M)
    tl.store(out_ptr + o, tl.reshape(tl.max(x, axis=AXIS), (M,)))
    tl.store(out_ptr + M + o, tl.reshape(tl.sum(x, axis=AXIS), (M,)))


@pytest.mark.parametrize("dtype", ALL_SWEEP)
def test_rank4_reductions_along_every_axis(dtype):
    def check(axis):
        x = data(SHAPE, dtype)
        m = N // SHAPE[axis]
        want, got = both(reduce4_kernel[(1,)], x, np.zeros(2 * m, dtype.np), AXIS=axis, A=A, B=B, C=C, D=D, M=m)
        np.testing.assert_array_equal(got[1][:m], want[1][:m], err_msg=f"axis {axis}")  # max is exact
        assert (want[1][:m] == x.max(axis=axis).ravel()).all()
        np.testing.assert_allclose(got[1][m:].astype(np.float64), want[1][m:].astype(np.float64),
                                   rtol=dtype.rtol, atol=dtype.atol * 4, err_msg=f"axis {axis}")
    cases = [(0,), (1,), (2,), (3,)]
    each(check, cases)


@ascdsl.jit
def permute4_kernel(x_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, D: tl.constexpr):
    i = tl.arange(0, A * B * C * D)
    x = tl.reshape(tl.load(x_ptr + i), (A, B, C, D))
    tl.store(out_ptr + i, tl.reshape(tl.permute(x, (2, 0, 3, 1)), (A * B * C * D,)))
    tl.store(out_ptr + A * B * C * D + i, tl.reshape(tl.permute(x, (1, 0, 2, 3)), (A * B * C * D,)))


@pytest.mark.parametrize("dtype", ALL_SWEEP)
def test_rank4_permutes_bit_exact(dtype):
    x = data(SHAPE, dtype)
    want, got = both(permute4_kernel[(1,)], x, np.zeros(2 * N, dtype.np), A=A, B=B, C=C, D=D)
    np.testing.assert_array_equal(got[1], want[1])
    expect = np.concatenate([x.transpose(2, 0, 3, 1).ravel(), x.transpose(1, 0, 2, 3).ravel()])
    assert (want[1] == expect).all()


@ascdsl.jit
def last_axis_kernel(x_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, D: tl.constexpr):
    i = tl.arange(0, A * B * C * D)
    n = A * B * C * D
    x4 = tl.reshape(tl.load(x_ptr + i), (A, B, C, D))
    x3 = tl.reshape(x4, (A * B, C, D))
    tl.store(out_ptr + i, tl.reshape(tl.sort(x4, 3), (n,)))
    tl.store(out_ptr + n + i, tl.reshape(tl.sort(x3, 2, descending=True), (n,)))
    tl.store(out_ptr + 2 * n + i, tl.reshape(tl.associative_scan(tl.flip(x3, 2), 2, combine_max), (n,)))
    tl.store(out_ptr + 3 * n + i, tl.reshape(tl.associative_scan(x4, 3, combine_min, reverse=True), (n,)))


@pytest.mark.parametrize("dtype", ALL_SWEEP)
def test_sorts_flips_and_scans_along_the_last_axis_of_rank3_and_rank4(dtype):
    x = data(SHAPE, dtype)
    want, got = both(last_axis_kernel[(1,)], x, np.zeros(4 * N, dtype.np), A=A, B=B, C=C, D=D)
    np.testing.assert_array_equal(got[1], want[1])
    expect = [np.sort(x, 3), -np.sort(-x, 3), np.maximum.accumulate(x[..., ::-1], 3),
              np.minimum.accumulate(x[..., ::-1], 3)[..., ::-1]]
    assert (want[1] == np.concatenate([e.ravel() for e in expect])).all()


@ascdsl.jit
def load4_kernel(x_ptr, out_ptr, D: tl.constexpr):
    a = tl.arange(0, 2)[:, None, None, None]
    b = tl.arange(0, 2)[None, :, None, None]
    c = tl.arange(0, 2)[None, None, :, None]
    d = tl.arange(0, D)[None, None, None, :]
    offs = ((a * 2 + b) * 2 + c) * D + d
    tl.store(out_ptr + tl.arange(0, 8 * D), tl.reshape(tl.load(x_ptr + offs), (8 * D,)))


def test_rank4_block_loads_are_located_errors():
    with pytest.raises(ascdsl.CompilationError, match="of tiles of rank 4") as err:
        load4_kernel[(1,)](np.ones(64, np.float32), np.zeros(64, np.float32), D=8, backend="sim")
    assert "test_sim_rankn.py" in str(err.value)


@CANN
def test_new_lowerings_type_check_against_cann(tmp_path):
    """Rank-4 tiles, scans and sorts along rows and leading axes and histograms, in one kernel file, against
    the real CANN headers."""
    from tests.backend import test_sim_histogram as hist, test_sim_rank3 as rank3, test_sim_reorder as reorder
    from tests.backend import test_sim_scan as scan
    p = {d: tl.pointer_type(d) for d in (dtypes.float32, dtypes.float16, dtypes.int32, dtypes.int8)}
    f32, f16, i32 = p[dtypes.float32], p[dtypes.float16], p[dtypes.int32]
    dims = dict(A=A, B=B, C=C, D=D)
    kernels = [k.kernels[0] for k in (
        broadcast4_kernel.specialize(f32, f32, **dims), permute4_kernel.specialize(f16, f16, **dims),
        last_axis_kernel.specialize(f32, f32, **dims), reduce4_kernel.specialize(i32, i32, AXIS=1, M=N // B, **dims),
        scan.row_scans_kernel.specialize(f16, f16, 5, 30, ROWS=8, COLS=32),
        scan.int_scan_kernel.specialize(i32, i32, AXIS=1, ROWS=6, COLS=12),
        reorder.sort_rows_kernel.specialize(f32, f32, 5, 20, M=5, N=24),
        rank3.leading_axes_kernel.specialize(f32, i32, f32, A=2, B=3, C=8),
        hist.histogram_kernel.specialize(p[dtypes.int8], i32, 100, BLOCK=128, BINS=16))]
    assert_type_checks("new_lowerings", kernels, tmp_path)
