"""Reductions on the simulator (hazard checks on) against the interpreter: argmax/argmin of 1-D tiles
and along either axis of 2-D tiles (bit-exact, ties resolved to the lowest index), 2-D tiles reduced
straight to a scalar and `tl.reduce` with a known combine function (max/min bit-exact, sums within
the dtype's tolerance), in float32/float16/bfloat16; other combine functions are located errors."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from tests.backend.test_sim import FLOATS, _both, _data, prebuilt


def _ties(shape, dtype):
    """Data with repeated extremes (rounded to few values, so ties are everywhere)."""
    return np.round(_data(shape, dtype).astype(np.float32)).astype(dtype.np)


@ascdsl.jit
def arg_1d_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=-100.0)
    hi, lo = tl.argmax(x, axis=0), tl.argmin(x, axis=0)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), tl.int32) + hi * 1000 + lo)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_argmax_argmin_1d_bit_exact(dtype):
    for n, block in ((5, 8), (100, 128), (3000, 4096)):
        x = _ties(n, dtype)
        want, got = _both(arg_1d_kernel[(1,)], x, np.zeros(block, np.int32), n, BLOCK=block)
        np.testing.assert_array_equal(got[1], want[1], err_msg=f"n={n}")
        padded = np.concatenate([x.astype(np.float32), np.full(block - n, -100, np.float32)])
        assert want[1][0] == np.argmax(padded) * 1000 + np.argmin(padded)


@ascdsl.jit
def arg_2d_kernel(x_ptr, out_ptr, m, n, ROWS: tl.constexpr, COLS: tl.constexpr):
    rows = tl.arange(0, ROWS)[:, None]
    cols = tl.arange(0, COLS)[None, :]
    x = tl.load(x_ptr + rows * n + cols, mask=(rows < m) & (cols < n), other=0.0)
    tl.store(out_ptr + tl.arange(0, ROWS), tl.argmax(x, axis=1))
    tl.store(out_ptr + ROWS + tl.arange(0, COLS), tl.argmin(x, axis=0))
    tl.store(out_ptr + ROWS + COLS + rows * COLS + cols, tl.argmin(x, axis=1, keep_dims=True) + cols * 0)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_argmax_argmin_along_an_axis_bit_exact(dtype):
    def check(m, n, rows, cols):
        x = _ties((m, n), dtype)
        want, got = _both(arg_2d_kernel[(1,)], x, np.zeros(rows + cols + rows * cols, np.int32), m, n, ROWS=rows, COLS=cols)
        np.testing.assert_array_equal(got[1], want[1], err_msg=f"{m}x{n}")
        assert (want[1][:m] == np.argmax(x.astype(np.float32), axis=1)).all()
    cases = [(5, 33, 8, 64), (16, 8, 16, 8), (3, 100, 4, 128)]
    prebuilt(check, cases)
    for case in cases:
        check(*case)


@ascdsl.jit
def combine_add(a, b):
    return a + b


@ascdsl.jit
def combine_max(a, b):
    return tl.maximum(b, a)


@ascdsl.jit
def combine_min(a, b):
    return tl.minimum(a, b)


@ascdsl.jit
def whole_tile_kernel(x_ptr, out_ptr, m, n, ROWS: tl.constexpr, COLS: tl.constexpr):
    rows = tl.arange(0, ROWS)[:, None]
    cols = tl.arange(0, COLS)[None, :]
    x = tl.load(x_ptr + rows * n + cols, mask=(rows < m) & (cols < n), other=0.0)
    out = tl.arange(0, COLS)
    tl.store(out_ptr + out, tl.zeros((COLS,), tl.float32) + tl.sum(x))
    tl.store(out_ptr + COLS + out, tl.zeros((COLS,), tl.float32) + tl.max(x) + tl.reduce(x, None, combine_min))
    tl.store(out_ptr + 2 * COLS + out, tl.reduce(x, 0, combine_add).to(tl.float32) + tl.reduce(x, 0, combine_max))
    tl.store(out_ptr + 3 * COLS + tl.arange(0, ROWS), tl.reduce(x, 1, combine_add))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_whole_tile_and_combine_reductions_within_tolerance(dtype):
    def check(m, n, rows, cols):
        x = _data((m, n), dtype)
        out = np.zeros(3 * cols + rows, np.float32)
        want, got = _both(whole_tile_kernel[(1,)], x, out, m, n, ROWS=rows, COLS=cols)
        np.testing.assert_allclose(got[1], want[1], rtol=dtype.rtol, atol=dtype.atol * n, err_msg=f"{m}x{n}")
        np.testing.assert_allclose(want[1][0], x.astype(np.float64).sum(), rtol=dtype.rtol, atol=dtype.atol * n)
    cases = [(5, 33, 8, 64), (16, 8, 16, 8)]
    prebuilt(check, cases)
    for case in cases:
        check(*case)


@ascdsl.jit
def combine_mul(a, b):
    return a * b


@ascdsl.jit
def product_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p = tl.reduce(tl.load(x_ptr + offs), 0, combine_mul)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), tl.float32) + p)


@ascdsl.jit
def argmax_2d_scalar_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    rows = tl.arange(0, BLOCK)[:, None]
    cols = tl.arange(0, BLOCK)[None, :]
    i = tl.argmax(tl.load(x_ptr + rows * BLOCK + cols), axis=None)
    tl.store(out_ptr + tl.arange(0, BLOCK), tl.zeros((BLOCK,), tl.int32) + i)


@pytest.mark.parametrize("kernel, message", [
    (product_kernel, "`tl.reduce` with this combine function"),
    (argmax_2d_scalar_kernel, "`argmax` of a 2-D tile to a scalar"),
], ids=["product", "argmax-2d-scalar"])
def test_unsupported_reductions_are_located_errors(kernel, message):
    with pytest.raises(ascdsl.CompilationError, match=message) as err:
        kernel[(1,)](np.ones(64, np.float32), np.zeros(64, np.float32), BLOCK=8, backend="sim")
    assert "test_sim_reductions.py" in str(err.value)
