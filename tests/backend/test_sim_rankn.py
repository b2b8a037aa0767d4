"""Tiles of rank 4 on the simulator (hazard checks on) against the interpreter: made by `tl.reshape` of
loaded blocks, computed as their flat [A * B * C, D] view: elementwise math and broadcasts among
[A, B, C, D], [A, 1, C, D], [1, B, 1, D], [A, B, C, 1], [A, 1, 1, 1] and one row, reductions along every
axis and to a scalar, permutes, and scans, sorts and flips along the last axis of rank-3 and rank-4
tiles, and block loads and stores of rank 4 and 5 (masked, strided): bit-exact where the ops are exact."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from tests.backend.helpers import CANN, assert_type_checks, bits, both, data, each
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
def copy4_kernel(x_ptr, out_ptr, na, nb, nc, nd, xs0, xs1, xs2, os0, os1, os2,
                 A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, D: tl.constexpr):
    a = tl.arange(0, A)[:, None, None, None]
    b = tl.arange(0, B)[None, :, None, None]
    c = tl.arange(0, C)[None, None, :, None]
    d = tl.arange(0, D)[None, None, None, :]
    mask = (a < na) & (b < nb) & (c < nc) & (d < nd)
    x = tl.load(x_ptr + a * xs0 + b * xs1 + c * xs2 + d, mask=mask, other=-1)
    tl.store(out_ptr + a * os0 + b * os1 + c * os2 + d, x * 3 + 1)
    tl.store(out_ptr + A * os0 + a * os0 + b * os1 + c * os2 + d, x, mask=mask)


@pytest.mark.parametrize("dtype", ALL_SWEEP)
def test_rank4_block_loads_and_stores_masked_and_strided_bit_exact(dtype):
    """Masked in every axis (the masked lanes filled with ``other``), planes strided in GM or following
    each other (one 2-D copy), loads and stores."""
    def check(shape, valid, strided):
        a, b, c, d = shape
        src = data((a + 1, b + 1, c + 2, d + 3) if strided else shape, dtype)
        xs2 = src.shape[3]
        xs1, xs0 = src.shape[2] * xs2, src.shape[1] * src.shape[2] * xs2
        os2 = d + 5 if strided else d
        os1 = (c + 1) * os2 if strided else c * os2
        os0 = b * os1
        out = np.full(2 * a * os0, 7, dtype.np)
        want, got = both(copy4_kernel[(1,)], src, out, *valid, xs0, xs1, xs2, os0, os1, os2, A=a, B=b, C=c, D=d)
        np.testing.assert_array_equal(bits(got[1]), bits(want[1]), err_msg=f"{shape} {valid} {strided}")
        na, nb, nc, nd = valid
        expect = np.full(shape, -1, dtype.np)
        expect[:na, :nb, :nc, :nd] = src[:na, :nb, :nc, :nd]
        first = want[1][:a * os0].reshape(a, b, os1)[:, :, :c * os2].reshape(a, b, c, os2)[..., :d]
        assert (first == (expect * 3 + 1).astype(dtype.np)).all()
    each(check, [((2, 2, 3, 8), (2, 2, 3, 8), False), ((2, 3, 2, 8), (1, 2, 2, 5), True),
                 ((3, 2, 2, 16), (3, 2, 1, 16), True), ((2, 2, 2, 8), (2, 0, 2, 8), False)])


@ascdsl.jit
def load5_kernel(x_ptr, out_ptr, D: tl.constexpr):
    a = tl.arange(0, 2)[:, None, None, None, None]
    b = tl.arange(0, 2)[None, :, None, None, None]
    c = tl.arange(0, 2)[None, None, :, None, None]
    e = tl.arange(0, 3)[None, None, None, :, None]
    d = tl.arange(0, D)[None, None, None, None, :]
    offs = (((a * 2 + b) * 2 + c) * 4 + e) * D + d  # strided: every fourth row of D elements is left out
    tl.store(out_ptr + tl.arange(0, 24 * D), tl.reshape(tl.load(x_ptr + offs) * 2, (24 * D,)))


def test_rank5_block_loads():
    x = data(32 * 8, dtypes.float32)
    want, got = both(load5_kernel[(1,)], x, np.zeros(24 * 8, np.float32), D=8)
    assert np.array_equal(want[1], (x.reshape(8, 4, 8)[:, :3] * 2).ravel())
    assert np.array_equal(got[1], want[1])


@ascdsl.jit
def unit4_kernel(x_ptr, out_ptr, n, S: tl.constexpr, A: tl.constexpr, B: tl.constexpr):
    """``[A, B, 1, 1]`` (rows ``S`` apart in GM: one run when ``S == B``) and ``[A, 1, 1, 1]``, masked along axis 0."""
    a = tl.arange(0, A)[:, None, None, None]
    b = tl.arange(0, B)[None, :, None, None]
    u = tl.arange(0, 1)[None, None, :, None] + tl.arange(0, 1)[None, None, None, :]
    x = tl.load(x_ptr + a * S + b + u, mask=a < n, other=-1)
    tl.store(out_ptr + a * B + b + u, x)
    tl.store(out_ptr + A * B + a + u + tl.arange(0, 1)[None, :, None, None], tl.load(x_ptr + a * S + u))


@pytest.mark.parametrize("dtype", ALL_SWEEP)
def test_blocks_with_two_unit_axes_last_bit_exact(dtype):
    """Rank-4 blocks whose last two axes are 1 (a silent one-element copy before they lowered as the access
    without them)."""
    def check(a, b, s, n):
        x = data(a * s, dtype)
        want, got = both(unit4_kernel[(1,)], x, np.zeros(a * b + a, dtype.np), n, S=s, A=a, B=b)
        np.testing.assert_array_equal(bits(got[1]), bits(want[1]), err_msg=f"A={a} B={b} S={s} n={n}")
        rows = np.where(np.arange(a)[:, None] < n, x.reshape(a, s)[:, :b], -1).astype(dtype.np)
        assert (want[1][:a * b] == rows.ravel()).all() and (want[1][a * b:] == x[::s]).all()
    each(check, [(8, 8, 8, 8), (6, 3, 3, 4), (4, 5, 7, 3)])


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
        copy4_kernel.specialize(f16, f16, *[dtypes.int32] * 10, **dims),
        last_axis_kernel.specialize(f32, f32, **dims), reduce4_kernel.specialize(i32, i32, AXIS=1, M=N // B, **dims),
        scan.row_scans_kernel.specialize(f16, f16, 5, 30, ROWS=8, COLS=32),
        scan.int_scan_kernel.specialize(i32, i32, AXIS=1, ROWS=6, COLS=12),
        reorder.sort_rows_kernel.specialize(f32, f32, 5, 20, M=5, N=24),
        rank3.leading_axes_kernel.specialize(f32, i32, f32, A=2, B=3, C=8),
        hist.histogram_kernel.specialize(p[dtypes.int8], i32, 100, BLOCK=128, BINS=16))]
    assert_type_checks("new_lowerings", kernels, tmp_path)
