"""Bool tiles as values on the simulator (hazard checks on) against the interpreter, bit-exact:
comparison masks cast to numbers and stored (int8 and bool pointers), bool tiles loaded and used as
conditions, ``tl.where`` on int32 data; what stays unsupported is a located error."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from tests.backend.helpers import both, data, each
from tests.backend.sweep import ALL_SWEEP

INT_MIN, INT_MAX = np.iinfo(np.int32).min, np.iinfo(np.int32).max


@ascdsl.jit
def bool_values_kernel(x_ptr, y_ptr, flags_ptr, bytes_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    inside = (x > -1.0) & (x < y)
    tl.store(flags_ptr + offs, inside | (y == 0.0), mask=mask)
    tl.store(bytes_ptr + offs, ~inside, mask=mask)
    tl.store(out_ptr + offs, inside.to(out_ptr.dtype.element_ty) + (x >= 0.5), mask=mask)


@pytest.mark.parametrize("dtype", ALL_SWEEP)
def test_stored_and_cast_bool_tiles_bit_exact(dtype):
    def check(n, block):
        x, y = data(n, dtype), data(n, dtype)
        y[::7] = 0
        x[1::5] = y[1::5]
        outs = (np.zeros(n, np.bool_), np.zeros(n, np.int8), np.zeros(n, dtype.np))
        want, got = both(bool_values_kernel[(ascdsl.cdiv(n, block),)], x, y, *outs, n, BLOCK=block)
        for k in (2, 3, 4):
            np.testing.assert_array_equal(got[k], want[k], err_msg=f"output {k}, n={n}")
        inside = (x > -1) & (x < y)
        assert (want[2] == inside | (y == 0)).all() and (want[3] == ~inside).all()
    cases = [(33, 32), (1000, 256)]
    each(check, cases)


@ascdsl.jit
def bool_load_kernel(flags_ptr, x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    flags = tl.load(flags_ptr + offs, mask=mask)
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, tl.where(flags & (x != 3), x, -x), mask=mask)


@ascdsl.jit
def bool_load_other_kernel(flags_ptr, out_ptr, n, m, ROWS: tl.constexpr, COLS: tl.constexpr):
    offs = tl.arange(0, COLS)
    flags = tl.load(flags_ptr + offs, mask=offs < n, other=False)
    tl.store(out_ptr + offs, tl.where(flags, 1.0, 0.0))
    rows = tl.arange(0, ROWS)[:, None]
    cols = tl.arange(0, COLS)[None, :]
    grid = tl.load(flags_ptr + rows * COLS + cols, mask=(rows < m) & (cols < n), other=True)
    tl.store(out_ptr + COLS + rows * COLS + cols, tl.where(grid, 2.0, -1.0))


def test_loaded_bool_tiles_with_other_bit_exact():
    rng = np.random.default_rng(8)
    for n, m in ((3, 2), (64, 4), (40, 1)):
        flags = rng.integers(0, 2, 4 * 64).astype(np.bool_)
        want, got = both(bool_load_other_kernel[(1,)], flags, np.zeros(64 + 4 * 64, np.float32), n, m, ROWS=4,
                          COLS=64)
        np.testing.assert_array_equal(got[1], want[1], err_msg=f"n={n}, m={m}")
        assert (want[1][n:64] == 0).all() and (want[1][64:].reshape(4, 64)[m:] == 2).all()


@ascdsl.jit
def bool_load_runtime_other_kernel(flags_ptr, out_ptr, fill, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    flags = tl.load(flags_ptr + offs, mask=offs < 3, other=fill > 0)
    tl.store(out_ptr + offs, tl.where(flags, 1.0, 0.0))


def test_loaded_bool_tiles_are_conditions_bit_exact():
    rng = np.random.default_rng(3)
    n = 300
    flags = rng.integers(0, 2, n).astype(np.bool_)
    x = rng.integers(-5, 6, n).astype(np.int32)
    want, got = both(bool_load_kernel[(ascdsl.cdiv(n, 128),)], flags, x, np.zeros(n, np.int32), n, BLOCK=128)
    np.testing.assert_array_equal(got[2], want[2])
    assert (want[2] == np.where(flags & (x != 3), x, -x)).all()


@ascdsl.jit
def int_where_kernel(a_ptr, b_ptr, out_ptr, n, lo, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0)
    b = tl.load(b_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, tl.where(a > b, a, b), mask=mask)
    tl.store(out_ptr + n + offs, tl.where(a < lo, lo, a), mask=mask)
    tl.store(out_ptr + 2 * n + offs, tl.where((a & 1) == 0, -1, a), mask=mask)
    tl.store(out_ptr + 3 * n + offs, tl.where(a.to(tl.float32) > 0.5, 2147483647, -2147483648), mask=mask)


def test_where_on_int32_tiles_bit_exact():
    rng = np.random.default_rng(5)
    for n, block in ((33, 32), (1000, 256)):
        a = rng.integers(INT_MIN, INT_MAX, n, dtype=np.int64).astype(np.int32)
        b = rng.integers(INT_MIN, INT_MAX, n, dtype=np.int64).astype(np.int32)
        a[:4] = [INT_MIN, INT_MAX, -1, 0x7FC00001]  # the last one is a NaN pattern viewed as float32
        want, got = both(int_where_kernel[(ascdsl.cdiv(n, block),)], a, b, np.zeros(4 * n, np.int32), n, -7,
                          BLOCK=block)
        np.testing.assert_array_equal(got[2], want[2], err_msg=f"n={n}")
        assert (want[2][:n] == np.maximum(a, b)).all()


def test_masked_bool_load_with_a_runtime_other_bit_exact():
    flags = np.array([True, False, True] + [False, True] * 30 + [True], np.bool_)
    for fill in (0, 1):
        want, got = both(bool_load_runtime_other_kernel[(1,)], flags, np.zeros(64, np.float32), fill, BLOCK=64)
        np.testing.assert_array_equal(got[1], want[1], err_msg=f"fill={fill}")
        assert (want[1][:3] == flags[:3]).all() and (want[1][3:] == fill).all()


def test_int16_comparisons_select_bit_exact():
    x = np.arange(-32, 32, dtype=np.int16) * 1000
    want, got = both(int16_where_kernel[(1,)], x, np.zeros_like(x), BLOCK=64)
    np.testing.assert_array_equal(got[1], want[1])
    assert (want[1] == np.maximum(x, 0)).all()


@ascdsl.jit
def int16_where_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.where(x > 0, x, 0))


@ascdsl.jit
def bool_extremes_kernel(x_ptr, y_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    i = tl.arange(0, A)[:, None, None] * B * C + tl.arange(0, B)[None, :, None] * C + tl.arange(0, C)[None, None, :]
    x = tl.load(x_ptr + i)
    y = tl.load(y_ptr + i)
    n, ac = A * B * C, tl.arange(0, A)[:, None] * C + tl.arange(0, C)[None, :]
    tl.store(out_ptr + i, tl.minimum(x, y))
    tl.store(out_ptr + n + i, tl.maximum(x, ~y) & tl.minimum(y, True) | tl.minimum(x, False))
    tl.store(out_ptr + 2 * n + ac, tl.min(x, 1))
    tl.store(out_ptr + 2 * n + A * C + ac, tl.max(y, 1))
    tl.store(out_ptr + 2 * n + 2 * A * C + tl.arange(0, C), tl.min(tl.max(x, 1), 0))
    tl.store(out_ptr + 2 * n + 2 * A * C + C, tl.max(tl.ravel(y), 0))


@pytest.mark.parametrize("shape", [(2, 3, 8), (3, 5, 42)])
def test_minimum_and_maximum_of_bool_tiles_bit_exact(shape):
    """``minimum``/``maximum`` of bool tiles and ``tl.min``/``tl.max`` of a 3-D bool tile along an axis
    and to a scalar are ``all``/``any`` (the public suite's bool min/max were refused)."""
    rng = np.random.default_rng(7)
    a, b, c = shape
    x, y = (rng.random(shape) < p for p in (0.8, 0.3))
    n = x.size
    want, got = both(bool_extremes_kernel[(1,)], x, y, np.zeros(2 * n + 2 * a * c + c + 1, bool), *shape)
    np.testing.assert_array_equal(got[2], want[2])
    expect = np.concatenate([(x & y).ravel(), ((x | ~y) & y).ravel(), x.all(1).ravel(), y.any(1).ravel(),
                             x.any(1).all(0), [y.any()]])
    np.testing.assert_array_equal(want[2], expect)


@ascdsl.jit
def truth_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = tl.where(offs < n, 1, 0).to(tl.int1)  # a mask made of numbers, as the public suite writes it
    x = tl.load(x_ptr + offs, mask=inside, other=0)
    tl.store(out_ptr + offs, tl.where(x.to(tl.int1), 1.0, -1.0), mask=inside)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int16, np.int8, np.uint8])
def test_numbers_cast_to_bool_are_compared_with_zero_bit_exact(dtype):
    """``x.to(tl.int1)`` of a number tile is ``x != 0`` (NaN is true), usable as a mask and a condition
    (it was refused as a `tl.where` condition that is not a comparison)."""
    x = np.random.default_rng(3).integers(-2, 3, 96).astype(dtype)
    if np.dtype(dtype).kind == "f":
        x[5] = np.nan
    want, got = both(truth_kernel[(3,)], x, np.zeros(96, np.float32), 70, BLOCK=32)
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(want[1][:70], np.where(x[:70] != 0, 1.0, -1.0))
