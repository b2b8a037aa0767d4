"""Reductions on the simulator (hazard checks on) against the interpreter: argmax/argmin of 1-D tiles,
along either axis of 2-D tiles and of 2-D tiles to a scalar (bit-exact, ties resolved to the lowest
index), 2-D tiles reduced straight to a scalar and `tl.reduce` with a known combine function (max/min
bit-exact, sums within the dtype's tolerance), in float32/float16/bfloat16, and int32 sum/max/min/
argmax/argmin (bit-exact); other combine functions (general folds, tests/backend/test_sim_combine.py)."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from tests.backend.helpers import both, data, each
from tests.backend.sweep import ALL_SWEEP, FLOAT_SWEEP


def _ties(shape, dtype):
    """Data with repeated extremes (rounded to few values, so ties are everywhere)."""
    return np.round(data(shape, dtype).astype(np.float32)).astype(dtype.np)


@ascdsl.jit
def arg_1d_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=-100.0)
    hi, lo = tl.argmax(x, axis=0), tl.argmin(x, axis=0)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), tl.int32) + hi * 1000 + lo)


@pytest.mark.parametrize("dtype", FLOAT_SWEEP)
def test_argmax_argmin_1d_bit_exact(dtype):
    def check(n, block):
        x = _ties(n, dtype)
        want, got = both(arg_1d_kernel[(1,)], x, np.zeros(block, np.int32), n, BLOCK=block)
        np.testing.assert_array_equal(got[1], want[1], err_msg=f"n={n}")
        padded = np.concatenate([x.astype(np.float32), np.full(block - n, -100, np.float32)])
        assert want[1][0] == np.argmax(padded) * 1000 + np.argmin(padded)
    cases = [(5, 8), (100, 128), (3000, 4096)]
    each(check, cases)


@ascdsl.jit
def arg_2d_kernel(x_ptr, out_ptr, m, n, ROWS: tl.constexpr, COLS: tl.constexpr):
    rows = tl.arange(0, ROWS)[:, None]
    cols = tl.arange(0, COLS)[None, :]
    x = tl.load(x_ptr + rows * n + cols, mask=(rows < m) & (cols < n), other=0.0)
    tl.store(out_ptr + tl.arange(0, ROWS), tl.argmax(x, axis=1))
    tl.store(out_ptr + ROWS + tl.arange(0, COLS), tl.argmin(x, axis=0))
    tl.store(out_ptr + ROWS + COLS + rows * COLS + cols, tl.argmin(x, axis=1, keep_dims=True) + cols * 0)


@pytest.mark.parametrize("dtype", FLOAT_SWEEP)
def test_argmax_argmin_along_an_axis_bit_exact(dtype):
    def check(m, n, rows, cols):
        x = _ties((m, n), dtype)
        want, got = both(arg_2d_kernel[(1,)], x, np.zeros(rows + cols + rows * cols, np.int32), m, n, ROWS=rows, COLS=cols)
        np.testing.assert_array_equal(got[1], want[1], err_msg=f"{m}x{n}")
        assert (want[1][:m] == np.argmax(x.astype(np.float32), axis=1)).all()
    cases = [(5, 33, 8, 64), (16, 8, 16, 8), (3, 100, 4, 128)]
    each(check, cases)


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


@pytest.mark.parametrize("dtype", FLOAT_SWEEP)
def test_whole_tile_and_combine_reductions_within_tolerance(dtype):
    def check(m, n, rows, cols):
        x = data((m, n), dtype)
        out = np.zeros(3 * cols + rows, np.float32)
        want, got = both(whole_tile_kernel[(1,)], x, out, m, n, ROWS=rows, COLS=cols)
        np.testing.assert_allclose(got[1], want[1], rtol=dtype.rtol, atol=dtype.atol * n, err_msg=f"{m}x{n}")
        np.testing.assert_allclose(want[1][0], x.astype(np.float64).sum(), rtol=dtype.rtol, atol=dtype.atol * n)
    cases = [(5, 33, 8, 64), (16, 8, 16, 8)]
    each(check, cases)


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


def test_products_fold_bit_exact():
    x = (1 + data(64, ascdsl.dtypes.float32) / 16).astype(np.float32)
    for block in (8, 37, 64):  # both multiply in the same tree
        want, got = both(product_kernel[(1,)], x, np.zeros(block, np.float32), BLOCK=block)
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_allclose(want[1][0], np.prod(x[:block].astype(np.float64)), rtol=1e-5)


@pytest.mark.parametrize("dtype", ALL_SWEEP)
def test_argmax_of_a_2d_tile_to_a_scalar_bit_exact(dtype):
    for block in (8, 16):
        x = _ties((block, block), dtype)
        x.ravel()[[5, block * 3 + 1]] = 50  # two maxima: the first in row-major order wins
        want, got = both(argmax_2d_scalar_kernel[(1,)], x, np.zeros(block, np.int32), BLOCK=block)
        np.testing.assert_array_equal(got[1], want[1])
        assert want[1][0] == 5


@ascdsl.jit
def grid_and_flat(x_ptr, ROWS: tl.constexpr, COLS: tl.constexpr):
    """The ROWS x COLS tile at ``x_ptr``, as a 2-D tile and as a 1-D one."""
    x = tl.load(x_ptr + tl.arange(0, ROWS)[:, None] * COLS + tl.arange(0, COLS)[None, :])
    return x, tl.load(x_ptr + tl.arange(0, ROWS * COLS))


@ascdsl.jit
def int_arg_kernel(x_ptr, out_ptr, ROWS: tl.constexpr, COLS: tl.constexpr):
    x, flat = grid_and_flat(x_ptr, ROWS, COLS)
    tl.store(out_ptr + tl.arange(0, ROWS), tl.argmax(x, axis=1) + tl.argmin(flat, axis=0))
    tl.store(out_ptr + ROWS + tl.arange(0, COLS), tl.argmin(x, axis=0))


def test_int32_argmax_argmin_bit_exact():
    rng = np.random.default_rng(6)
    for rows, cols in ((8, 8), (16, 24)):
        x = rng.integers(-3, 4, (rows, cols)).astype(np.int32)
        x[0, 0] = 2 ** 31 - 1  # beyond float32's exact integers next to its neighbour
        x[0, 1] = 2 ** 31 - 2
        want, got = both(int_arg_kernel[(1,)], x, np.zeros(rows + cols, np.int32), ROWS=rows, COLS=cols)
        np.testing.assert_array_equal(got[1], want[1])
        assert (want[1][:rows] == x.argmax(1) + x.ravel().argmin()).all()


@ascdsl.jit
def int_reduce_kernel(x_ptr, out_ptr, ROWS: tl.constexpr, COLS: tl.constexpr):
    x, flat = grid_and_flat(x_ptr, ROWS, COLS)
    rows = tl.arange(0, ROWS)[:, None]
    cols = tl.arange(0, COLS)[None, :]
    tl.store(out_ptr + tl.arange(0, COLS), tl.sum(x, axis=0) + tl.max(flat) - tl.min(x))
    tl.store(out_ptr + COLS + tl.arange(0, ROWS), tl.max(x, axis=1) - tl.sum(flat, axis=0))
    positive = tl.sum(flat > 0)  # a count: the bool tile cast to int32
    tl.store(out_ptr + COLS + ROWS + rows * COLS + cols, tl.min(x, axis=1, keep_dims=True) + cols * 0 + positive)


def test_int32_reductions_bit_exact():
    rng = np.random.default_rng(9)
    for rows, cols in ((5, 8), (16, 24)):
        x = rng.integers(-2 ** 31, 2 ** 31, (rows, cols), dtype=np.int64).astype(np.int32)  # sums wrap
        want, got = both(int_reduce_kernel[(1,)], x, np.zeros(cols + rows + rows * cols, np.int32), ROWS=rows,
                          COLS=cols)
        np.testing.assert_array_equal(got[1], want[1], err_msg=f"{rows}x{cols}")
        with np.errstate(over="ignore"):
            assert (want[1][:cols] == x.sum(0, dtype=np.int32) + x.max() - x.min()).all()
        assert (want[1][-rows * cols:].reshape(rows, cols) == x.min(1, keepdims=True) + (x > 0).sum()).all()  # counts too


@ascdsl.jit
def int_keep_dims_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    lo = tl.min(x, axis=0, keep_dims=True)
    hi = tl.max(x, axis=0, keep_dims=True)
    total = tl.sum(x, axis=0, keep_dims=True)
    tl.store(out_ptr + offs, (x - lo) * 4 + (hi - x) * 2 + total + tl.argmin(x, 0) * 100000 + tl.argmax(x, 0))


def test_int32_reductions_of_1d_tiles_keeping_their_dim_bit_exact():
    """A ``[1]`` result combines the lanes of the last block too (it was the block's first lane); a tile
    that is not whole 32-byte blocks (5, 37, 741 elements: `tl.argmin` of the public suite's 37-element
    tiles) combines its tail's lanes on the scalar unit (it was refused)."""
    rng = np.random.default_rng(4)
    for n in (5, 8, 37, 64, 96, 741):
        x = rng.integers(-1000, 1000, n).astype(np.int32)
        x[(n // 2 + 3) % n] = -5000  # the extremes away from lane 0 of any block
        x[n - 2] = 5000
        x[n - 1] = -6000 if n % 8 else x[n - 1]  # the minimum in the tail
        want, got = both(int_keep_dims_kernel[(1,)], x, np.zeros(n, np.int32), BLOCK=n)
        np.testing.assert_array_equal(got[1], want[1], err_msg=str(n))
        assert (want[1] == (x - x.min()) * 4 + (x.max() - x) * 2 + x.sum() + x.argmin() * 100000 + x.argmax()).all()


@ascdsl.jit
def narrow_reductions_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    cols, rows = tl.arange(0, N), tl.arange(0, M)
    tl.store(out_ptr + cols, tl.argmax(x, 0))
    tl.store(out_ptr + N + rows, tl.argmin(x, 1))
    tl.store(out_ptr + N + M + cols, tl.max(x, 0).to(tl.int32))
    tl.store(out_ptr + 2 * N + M + rows, tl.min(x, 1).to(tl.int32))
    tl.store(out_ptr + 2 * N + 2 * M, tl.argmax(tl.ravel(x), 0))
    tl.store(out_ptr + 2 * N + 2 * M + 1, tl.max(tl.ravel(x), 0).to(tl.int32))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16], ids=lambda d: np.dtype(d).name)
def test_reductions_of_8_and_16_bit_integers_bit_exact(dtype):
    """max/min/argmax/argmin of 8- and 16-bit integer tiles, in int32 (exact; ties: the lowest index)."""
    m, n = 8, 32
    info = np.iinfo(dtype)
    x = np.random.default_rng(8).integers(info.min, info.max, (m, n), endpoint=True).astype(dtype)
    x[2, 5] = x[6, 5] = info.max  # a tie in a column
    want, got = both(narrow_reductions_kernel[(1,)], x, np.zeros(2 * n + 2 * m + 2, np.int32), M=m, N=n)
    np.testing.assert_array_equal(want[1][:n], x.argmax(0))
    np.testing.assert_array_equal(want[1][2 * n + 2 * m:], [x.argmax(), x.max()])
    np.testing.assert_array_equal(got[1], want[1])


@ascdsl.jit
def _larger(a, b):
    return tl.maximum(a, b)


@ascdsl.jit
def unit_axis_kernel(x_ptr, out_ptr, idx_ptr, sum_ptr, L: tl.constexpr, M: tl.constexpr, N: tl.constexpr,
                     K: tl.constexpr):
    """Reductions of a ``[L, M, N, K]`` tile whose N is 1 (a 5-D kernel of public tests folds a
    ``[3, 11, 1, 3, 42]`` tile this way): along K, then along the unit axis, then to one element."""
    l, m, n, k = tl.arange(0, L), tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    x = tl.load(x_ptr + l[:, None, None, None] * (M * N * K) + m[None, :, None, None] * (N * K)
                + n[None, None, :, None] * K + k[None, None, None, :])
    lmn = tl.reduce(x, 3, _larger)
    lm = tl.max(lmn, 2)
    tl.store(out_ptr + l[:, None] * M + m[None, :], lm)
    tl.store(out_ptr + L * M, tl.max(tl.max(lm, 1), 0))
    tl.store(idx_ptr + l[:, None] * M + m[None, :], tl.argmax(lmn, 2))
    tl.store(sum_ptr + l[:, None] * M + m[None, :], tl.sum(lmn, 2))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int16, np.int8])
def test_reductions_along_an_axis_of_one_element_bit_exact(dtype):
    """An axis of extent 1 reduces to its element (once an out-of-bounds `WholeReduceMax` or a silently
    wrong int8 maximum on the simulator); argmax along it is 0, a sum of int8 widens it to int32."""
    shape = (8, 11, 1, 42)
    x = np.random.default_rng(3).integers(-100, 120, shape).astype(dtype)
    sums = np.zeros(88, np.int32 if dtype in (np.int8, np.int16) else dtype)
    want, got = both(unit_axis_kernel[(1,)], x, np.zeros(89, dtype), np.zeros(88, np.int32), sums, *shape)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)
    lm = x.max(axis=(2, 3))
    np.testing.assert_array_equal(want[1], np.append(lm.reshape(-1), lm.max()))
    assert not want[2].any() and (want[3] == lm.reshape(-1)).all()


@ascdsl.jit
def line_reductions_kernel(x_ptr, out_ptr, idx_ptr, N: tl.constexpr):
    i, one = tl.arange(0, N), tl.arange(0, 1)
    column = tl.load(x_ptr + i[:, None])  # [N, 1]
    row = tl.load(x_ptr + i[None, :])  # [1, N]
    tl.store(out_ptr + one[:, None] + one[None, :], tl.max(column, 0, keep_dims=True))
    tl.store(out_ptr + 1 + one[:, None] + one[None, :], tl.min(row, 1, keep_dims=True))
    tl.store(out_ptr + 2 + one, tl.max(column, 0))
    tl.store(out_ptr + 3 + one, tl.min(row, 1))
    tl.store(idx_ptr + one, tl.argmax(column, 0))
    tl.store(idx_ptr + 1 + one, tl.argmin(row, 1))
    x = tl.load(x_ptr + i)
    tl.store(out_ptr + 4 + i, x - tl.max(x, 0, keep_dims=True))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int16])
def test_reductions_of_a_row_or_a_column_bit_exact(dtype):
    """A reduction of a ``[N, 1]`` column along axis 0 or a ``[1, N]`` row along axis 1 is that of its N
    elements in a row (a column's rows were folded in halves at unaligned offsets: a misaligned ``Max`` or
    an unaligned ``DataCopy`` on the simulator); a float ``[N]`` tile reduced keeping its dim fills the
    ``[1]`` tile (its scalar never reached it: NaN, a silent wrong answer)."""
    n = 42
    x = np.random.default_rng(5).permutation(np.arange(-20, 22)).astype(dtype)
    want, got = both(line_reductions_kernel[(1,)], x, np.zeros(4 + n, dtype), np.zeros(2, np.int32), N=n)
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[2], want[2])
    np.testing.assert_array_equal(want[1], np.concatenate([[x.max(), x.min(), x.max(), x.min()], x - x.max()]))
    assert list(want[2]) == [x.argmax(), x.argmin()]
