"""Scans on the simulator (hazard checks on) against the interpreter: `tl.cumsum` along the last axis
(the CumSum API; reversed as sum - cumsum + x) and `tl.cumsum`/`tl.cumprod`/`tl.associative_scan`
with a max combine, forward and reversed, down the rows of a 2-D tile (a log-depth scan), float sums and
products within the dtype's tolerance, max and int32 bit-exact; products, maxima and int32 sums along the
last axis of a 2-D tile, every row at once (1-D scans: test_sim_reorder.py)."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from tests.backend.helpers import both, data, each
from tests.backend.sweep import FLOAT_SWEEP
from tests.backend.test_sim_reductions import combine_max


def _scan_tolerance(x, dtype, axis):
    """The interpreter rounds 16-bit partial sums at each of its log-depth steps: allow the dtype's
    relative tolerance of the running sum of magnitudes per step."""
    steps = max(1, int(np.ceil(np.log2(x.shape[axis]))))
    return dtype.atol + dtype.rtol * steps * np.cumsum(np.abs(x.astype(np.float64)), axis=axis)


@ascdsl.jit
def cumsum_1d_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, tl.cumsum(x, 0), mask=offs < n)
    tl.store(out_ptr + n + offs, tl.cumsum(x, 0, reverse=True), mask=offs < n)


@pytest.mark.parametrize("dtype", FLOAT_SWEEP)
def test_cumsum_1d_within_tolerance(dtype):
    for n, block in ((5, 8), (200, 256)):
        x = data(n, dtype)
        want, got = both(cumsum_1d_kernel[(1,)], x, np.zeros(2 * n, dtype.np), n, BLOCK=block)
        g, w = got[1].astype(np.float64), want[1].astype(np.float64)
        assert (np.abs(g[:n] - w[:n]) <= _scan_tolerance(x, dtype, 0)).all(), f"n={n}"
        total = _scan_tolerance(x, dtype, 0)[-1]  # sum(x) - cumsum(x) + x: the error of the whole sum
        assert (np.abs(g[n:] - w[n:]) <= total).all(), f"reversed, n={n}"
        assert np.allclose(w[n:], np.cumsum(x[::-1].astype(np.float64))[::-1], atol=total)


@ascdsl.jit
def _block(m, n, ROWS: tl.constexpr, COLS: tl.constexpr):
    """The offsets of an ``[m, n]`` array in a ``[ROWS, COLS]`` block and its mask."""
    rows = tl.arange(0, ROWS)[:, None]
    cols = tl.arange(0, COLS)[None, :]
    return rows * n + cols, (rows < m) & (cols < n)


@ascdsl.jit
def scan_2d_kernel(x_ptr, out_ptr, m, n, ROWS: tl.constexpr, COLS: tl.constexpr):
    offs, mask = _block(m, n, ROWS, COLS)
    x = tl.load(x_ptr + offs, mask=mask, other=1)
    tl.store(out_ptr + offs, tl.cumsum(x, 1), mask=mask)
    tl.store(out_ptr + m * n + offs, tl.cumsum(x, 0, reverse=True), mask=mask)
    tl.store(out_ptr + 2 * m * n + offs, tl.cumprod(x, 0), mask=mask)
    both_ways = tl.associative_scan(x, 0, combine_max) + tl.associative_scan(x, 0, combine_max, reverse=True)
    tl.store(out_ptr + 3 * m * n + offs, both_ways, mask=mask)


@pytest.mark.parametrize("dtype", FLOAT_SWEEP)
def test_scans_of_2d_tiles_within_tolerance(dtype):
    def check(m, n, rows, cols):
        x = (1 + data((m, n), dtype).astype(np.float32) / 30).astype(dtype.np)  # products stay near 1
        want, got = both(scan_2d_kernel[(1,)], x, np.zeros(4 * m * n, dtype.np), m, n, ROWS=rows, COLS=cols)
        w, g = (a.astype(np.float64).reshape(4, m, n) for a in (want[1], got[1]))
        assert (np.abs(g[0] - w[0]) <= _scan_tolerance(x, dtype, 1)).all(), f"{m}x{n}"
        padded = np.ones((rows, cols))  # the masked lanes hold `other`: reversed scans see them
        padded[:m, :n] = x.astype(np.float64)
        assert (np.abs(g[1] - w[1]) <= _scan_tolerance(padded[::-1], dtype, 0)[::-1][:m, :n]).all(), f"{m}x{n}"
        np.testing.assert_allclose(g[2], w[2], rtol=dtype.rtol * 2 * np.log2(2 * m), atol=dtype.atol,
                                   err_msg=f"{m}x{n}")
        np.testing.assert_array_equal(g[3], w[3])  # running maxima are exact, forward and reversed
        two_ways = np.maximum.accumulate(padded, 0) + np.maximum.accumulate(padded[::-1], 0)[::-1]
        np.testing.assert_allclose(w[3], two_ways[:m, :n], rtol=dtype.rtol)
    cases = [(5, 33, 8, 64), (16, 8, 16, 8), (3, 7, 3, 8)]
    each(check, cases)


@ascdsl.jit
def int_scan_kernel(x_ptr, out_ptr, AXIS: tl.constexpr, ROWS: tl.constexpr, COLS: tl.constexpr):
    offs = tl.arange(0, ROWS)[:, None] * COLS + tl.arange(0, COLS)[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.cumsum(x, AXIS) + tl.cumsum(x, AXIS, reverse=True) * 3 + tl.cumprod(x, AXIS))


@pytest.mark.parametrize("axis", [0, 1])
def test_int32_scans_bit_exact(axis):
    """Down the rows and along them (every row at once), forward and reversed; products wrap as C's do."""
    x = np.random.default_rng(4).integers(-9, 10, (6, 12)).astype(np.int32)
    want, got = both(int_scan_kernel[(1,)], x, np.zeros_like(x), AXIS=axis, ROWS=6, COLS=12)
    np.testing.assert_array_equal(got[1], want[1])
    flipped = np.flip(x, axis)
    expect = np.cumsum(x, axis) + np.flip(np.cumsum(flipped, axis), axis) * 3 + np.cumprod(x, axis)
    assert (want[1] == expect.astype(np.int32)).all()


@ascdsl.jit
def row_scans_kernel(x_ptr, out_ptr, m, n, ROWS: tl.constexpr, COLS: tl.constexpr):
    offs, mask = _block(m, n, ROWS, COLS)
    x = tl.load(x_ptr + offs, mask=mask, other=1)
    tl.store(out_ptr + offs, tl.cumprod(x, 1), mask=mask)
    tl.store(out_ptr + m * n + offs, tl.associative_scan(x, 1, combine_max), mask=mask)
    tl.store(out_ptr + 2 * m * n + offs, tl.associative_scan(x, 1, combine_max, reverse=True), mask=mask)
    tl.store(out_ptr + 3 * m * n + offs, tl.cumprod(x, 1, reverse=True), mask=mask)


@pytest.mark.parametrize("dtype", FLOAT_SWEEP)
def test_scans_along_rows_of_2d_tiles(dtype):
    """Products and running maxima along the last axis of a 2-D tile, forward and reversed, every row at
    once: maxima bit-exact, products within the dtype's tolerance per step."""
    def check(m, n, rows, cols):
        x = (1 + data((m, n), dtype).astype(np.float32) / 30).astype(dtype.np)
        want, got = both(row_scans_kernel[(1,)], x, np.zeros(4 * m * n, dtype.np), m, n, ROWS=rows, COLS=cols)
        w, g = (a.astype(np.float64).reshape(4, m, n) for a in (want[1], got[1]))
        padded = np.ones((rows, cols))  # the masked lanes hold `other`: reversed scans see them
        padded[:m, :n] = x.astype(np.float64)
        np.testing.assert_array_equal(g[1:3], w[1:3])
        np.testing.assert_allclose(w[1], np.maximum.accumulate(padded, 1)[:m, :n], rtol=dtype.rtol)
        np.testing.assert_allclose(w[2], np.maximum.accumulate(padded[:, ::-1], 1)[:, ::-1][:m, :n], rtol=dtype.rtol)
        for i in (0, 3):
            np.testing.assert_allclose(g[i], w[i], rtol=dtype.rtol * 2 * np.log2(2 * cols), atol=dtype.atol,
                                       err_msg=f"{m}x{n}")
    cases = [(5, 33, 8, 64), (3, 7, 4, 8), (2, 16, 2, 16)]
    each(check, cases)
