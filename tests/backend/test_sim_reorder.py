"""Ops that move elements across lanes, on the simulator (hazard checks on) against the interpreter:
``tl.flip`` (1-D, both axes of 2-D), scans of 1-D tiles by ``+ * max min`` forward and reversed (int32
bit-exact, float products within the tolerance) and ``tl.sort`` (bitonic; float32 with NaN, infinities and
signed zeros, int32 with its extremes, ascending and descending), at sizes with and without a tail; flips
of 8-bit, bool and int64 tiles."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from tests.backend.helpers import RNG, both, each
from tests.backend.sweep import ALL_SWEEP, FLOAT_SWEEP
from tests.backend.test_sim_reductions import combine_max, combine_min


@ascdsl.jit
def flip_kernel(x_ptr, m_ptr, out_ptr, n, BLOCK: tl.constexpr, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.store(out_ptr + offs, tl.flip(x, 0), mask=offs < n)
    rows, cols = tl.arange(0, M)[:, None], tl.arange(0, N)[None, :]
    m = tl.load(m_ptr + rows * N + cols)
    tl.store(out_ptr + BLOCK + rows * N + cols, tl.flip(m, 0))
    tl.store(out_ptr + BLOCK + M * N + rows * N + cols, tl.flip(m, 1))


@pytest.mark.parametrize("dtype", ALL_SWEEP)
def test_flip_bit_exact(dtype):
    rng = np.random.default_rng(31)

    def check(block, m, n):
        x = (rng.standard_normal(block) * 100).astype(dtype.np)
        mat = (rng.standard_normal((m, n)) * 100).astype(dtype.np)
        want, got = both(flip_kernel[(1,)], x, mat, np.zeros(block + 2 * m * n, dtype.np), block, BLOCK=block,
                          M=m, N=n)
        bits = f"u{dtype.itemsize}"
        np.testing.assert_array_equal(got[2].view(bits), want[2].view(bits), err_msg=f"{block} {m}x{n}")
        assert (want[2][:block] == x[::-1]).all() and (want[2][block + m * n:].reshape(m, n) == mat[:, ::-1]).all()
    cases = [(64, 4, 16), (20, 3, 5)]
    each(check, cases)


@ascdsl.jit
def scan_kernel(x_ptr, out_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1)
    if OP == "sum":
        forward, backward = tl.cumsum(x, 0), tl.cumsum(x, 0, reverse=True)
    elif OP == "prod":
        forward, backward = tl.cumprod(x, 0), tl.cumprod(x, 0, reverse=True)
    elif OP == "max":
        forward, backward = tl.associative_scan(x, 0, combine_max), tl.associative_scan(x, 0, combine_max, reverse=True)
    else:
        forward, backward = tl.associative_scan(x, 0, combine_min), tl.associative_scan(x, 0, combine_min, reverse=True)
    tl.store(out_ptr + offs, forward, mask=offs < n)
    tl.store(out_ptr + n + offs, backward, mask=offs < n)


SCAN_REFERENCE = {"sum": np.cumsum, "prod": np.cumprod, "max": np.maximum.accumulate, "min": np.minimum.accumulate}


def test_int32_scans_of_1d_tiles_bit_exact():
    """int32 running sums and products wrap; extremes; forward and reversed; with a tail."""
    rng = np.random.default_rng(32)

    def check(op, block, n):
        x = rng.integers(-2 ** 31, 2 ** 31 - 1, n).astype(np.int32)
        if op == "prod":
            x = rng.choice([-3, -1, 1, 2, 3, 7], n).astype(np.int32)
        want, got = both(scan_kernel[(1,)], x, np.zeros(2 * n, np.int32), n, OP=op, BLOCK=block)
        np.testing.assert_array_equal(got[1], want[1], err_msg=f"{op} {n}")
        with np.errstate(over="ignore"):
            ref = SCAN_REFERENCE[op](x, dtype=np.int32) if op in ("sum", "prod") else SCAN_REFERENCE[op](x)
        assert (want[1][:n] == ref).all()
    cases = [(op, block, n) for op in SCAN_REFERENCE for block, n in ((64, 64), (32, 20))]
    each(check, cases)


@pytest.mark.parametrize("dtype", FLOAT_SWEEP)
def test_float_products_and_extremes_of_1d_tiles(dtype):
    """cumprod within the tolerance in float32 (another order than the interpreter's left-to-right fold) and
    bit-exact in 16-bit floats (the interpreter's log-depth steps, each rounded); running max/min bit-exact
    (infinities included)."""
    rng = np.random.default_rng(33)
    n = 100
    x = rng.uniform(0.8, 1.25, n).astype(dtype.np)
    want, got = both(scan_kernel[(1,)], x, np.zeros(2 * n, dtype.np), n, OP="prod", BLOCK=128)
    if dtype == dtypes.float32:
        ascdsl.testing.assert_close(got[1], want[1], dtype)
    else:
        np.testing.assert_array_equal(got[1], want[1])
    y = rng.standard_normal(n).astype(dtype.np)
    y[[3, 50]] = [np.inf, -np.inf]
    for op in ("max", "min"):
        want, got = both(scan_kernel[(1,)], y, np.zeros(2 * n, dtype.np), n, OP=op, BLOCK=128)
        np.testing.assert_array_equal(got[1], want[1], err_msg=op)


@ascdsl.jit
def sort_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.store(out_ptr + offs, tl.sort(x, 0), mask=offs < n)
    tl.store(out_ptr + n + offs, tl.sort(x, 0, descending=True), mask=offs < n)


@pytest.mark.parametrize("dtype", ALL_SWEEP)
def test_sort_of_1d_tiles(dtype):
    """Every output equals the interpreter's (NaNs last ascending and first descending, compared as NaN;
    -0.0 and 0.0 compared as equal, whose order the interpreter's sort leaves open); sizes that are no
    power of two (the network pads with the largest key)."""
    rng = np.random.default_rng(34)

    def check(block, n):
        if dtype.is_float:
            x = (rng.standard_normal(n) * 1e3).astype(dtype.np)
            x[:6] = [np.nan, np.inf, -np.inf, -0.0, 0.0, -np.nan]
            x[6:n // 2] = x[n // 2:n - 6]  # ties
        else:
            x = rng.integers(-2 ** 31, 2 ** 31 - 1, n).astype(np.int32)
            x[:4] = [-2 ** 31, 2 ** 31 - 1, 0, 0]
        want, got = both(sort_kernel[(1,)], x, np.zeros(2 * n, dtype.np), n, BLOCK=block)
        np.testing.assert_array_equal(got[1].astype(np.float64), want[1].astype(np.float64), err_msg=f"{block} {n}")
        tile = np.concatenate([x, np.zeros(block - n, x.dtype)]).astype(np.float32)  # other=0 past n
        assert (np.isnan(want[1][:n].astype(np.float32)) == np.isnan(np.sort(tile)[:n])).all()
    cases = [(256, 256), (32, 20), (8, 7)]
    each(check, cases)


@ascdsl.jit
def sort_rows_kernel(x_ptr, out_ptr, m, n, M: tl.constexpr, N: tl.constexpr):
    rows, cols = tl.arange(0, M)[:, None], tl.arange(0, N)[None, :]
    mask = (rows < m) & (cols < n)
    x = tl.load(x_ptr + rows * n + cols, mask=mask, other=0)
    tl.store(out_ptr + rows * n + cols, tl.sort(x, 1), mask=mask)
    tl.store(out_ptr + m * n + rows * n + cols, tl.sort(x, 1, descending=True), mask=mask)


@pytest.mark.parametrize("dtype", ALL_SWEEP)
def test_sort_along_rows_of_2d_tiles(dtype):
    """Every row sorted at once, bit-exact against the interpreter: rows whose UB pitch is the network's
    (16 and 8 columns) and rows the network pads further (24 columns in 32 lanes), NaNs and ties."""
    rng = np.random.default_rng(35)

    def check(m, n, rows, cols):
        x = (rng.standard_normal((m, n)) * 1e3).astype(dtype.np) if dtype.is_float else \
            rng.integers(-2 ** 31, 2 ** 31 - 1, (m, n)).astype(np.int32)
        if dtype.is_float:
            x[0, :3] = [np.nan, -np.inf, np.inf]
        x[-1, 1:] = x[-1, :-1]  # ties
        want, got = both(sort_rows_kernel[(1,)], x, np.zeros(2 * m * n, dtype.np), m, n, M=rows, N=cols)
        np.testing.assert_array_equal(got[1].astype(np.float64), want[1].astype(np.float64), err_msg=f"{m}x{n}")
        padded = np.zeros((rows, cols), np.float32)
        padded[:m, :n] = x.astype(np.float32)
        expect = np.sort(padded, 1)[:m, :n]
        np.testing.assert_array_equal(want[1][:m * n].reshape(m, n).astype(np.float32), expect)
    cases = [(3, 16, 4, 16), (5, 20, 5, 24), (2, 5, 2, 8)]
    each(check, cases)


@ascdsl.jit
def sort_columns_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rows, cols = tl.arange(0, M)[:, None], tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    tl.store(out_ptr + rows * N + cols, tl.sort(x, 0))
    tl.store(out_ptr + M * N + rows * N + cols, tl.sort(x, 0, descending=True))


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.float16, dtypes.int32])
def test_sort_along_axis_0_of_2d_tiles(dtype):
    """Every column sorted (the rows of the transpose, transposed back), bit-exact against the
    interpreter and NumPy: columns whose transpose's rows fill whole blocks and ones they do not
    (5 and 4 rows), NaNs, infinities and ties."""
    rng = np.random.default_rng(36)

    def check(m, n):
        x = (rng.standard_normal((m, n)) * 1e3).astype(dtype.np) if dtype.is_float else \
            rng.integers(-2 ** 31, 2 ** 31 - 1, (m, n)).astype(np.int32)
        if dtype.is_float:
            x[:3, 0] = [np.nan, -np.inf, np.inf]
        x[1:, -1] = x[:-1, -1]  # ties
        want, got = both(sort_columns_kernel[(1,)], x, np.zeros(2 * m * n, dtype.np), M=m, N=n)
        np.testing.assert_array_equal(got[1].astype(np.float64), want[1].astype(np.float64), err_msg=f"{m}x{n}")
        expect = np.sort(x.astype(np.float32), 0)
        np.testing.assert_array_equal(want[1][:m * n].reshape(m, n).astype(np.float32), expect)
        np.testing.assert_array_equal(want[1][m * n:].reshape(m, n).astype(np.float32)[:, 1:],
                                      expect[::-1, 1:])  # descending (NaN column aside)
    each(check, [(8, 16), (5, 8), (4, 16)])


@ascdsl.jit
def sort_int16_columns_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rows, cols = tl.arange(0, M)[:, None], tl.arange(0, N)[None, :]
    tl.store(out_ptr + rows * N + cols, tl.sort(tl.load(x_ptr + rows * N + cols), 0))


@ascdsl.jit
def flip_bytes_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.flip(tl.load(x_ptr + offs), 0))


@ascdsl.jit
def flip_bytes2_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.flip(x, 1))
    tl.store(out_ptr + M * N + offs, tl.flip(x, 0))
    tl.store(out_ptr + 2 * M * N + tl.arange(0, N)[:, None] * M + tl.arange(0, M)[None, :], tl.trans(x))


@pytest.mark.parametrize("dtype", [dtypes.int8, dtypes.uint8, dtypes.int64])
def test_flips_and_transposes_of_8_and_64_bit_tiles_bit_exact(dtype):
    """8-bit elements moved as float16 (exact for every 8-bit integer), cast back; int64 ones by `Gather`
    as their two int32 halves."""
    x = RNG.integers(np.iinfo(dtype.np).min, np.iinfo(dtype.np).max + 1, 64, dtype=dtype.np)
    want, got = both(flip_bytes_kernel[(1,)], x, np.zeros_like(x), BLOCK=64)
    assert np.array_equal(want[1], x[::-1]) and np.array_equal(got[1], want[1])
    x2 = x.reshape(2, 32)
    want, got = both(flip_bytes2_kernel[(1,)], x2, np.zeros(3 * 64, dtype.np), M=2, N=32)
    assert np.array_equal(want[1], np.concatenate([x2[:, ::-1].ravel(), x2[::-1].ravel(), x2.T.ravel()]))
    assert np.array_equal(got[1], want[1])


def test_flips_of_bool_tiles_bit_exact():
    """Their 0/1 values moved in float16, compared back."""
    x = RNG.integers(0, 2, 40).astype(np.bool_)
    want, got = both(flip_bytes_kernel[(1,)], x, np.zeros_like(x), BLOCK=40)
    assert np.array_equal(want[1], x[::-1]) and np.array_equal(got[1], want[1])


@ascdsl.jit
def sort_narrow_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.sort(x.to(tl.int8), descending=True).to(tl.float32))
    tl.store(out_ptr + BLOCK + offs, tl.sort(x.to(tl.int16) * 200).to(tl.float32))
    tl.store(out_ptr + 2 * BLOCK + offs, tl.sort(x > 0).to(tl.float32))


def test_sorts_of_8_and_16_bit_and_bool_tiles_bit_exact():
    """8-bit and bool tiles sorted as float16 values, int16 ones as int32 (both exact)."""
    x = RNG.integers(-128, 128, 40).astype(np.float32)
    want, got = both(sort_narrow_kernel[(1,)], x, np.zeros(120, np.float32), BLOCK=40)
    wide = (x.astype(np.int16) * 200).astype(np.int16)
    assert np.array_equal(want[1], np.concatenate([np.sort(x)[::-1], np.sort(wide), np.sort(x > 0)]))
    assert np.array_equal(got[1], want[1])
    cols = RNG.integers(-30000, 30000, 64).astype(np.int16)
    want, got = both(sort_int16_columns_kernel[(1,)], cols, np.zeros_like(cols), M=4, N=16)
    assert np.array_equal(want[1], np.sort(cols.reshape(4, 16), 0).ravel()) and np.array_equal(got[1], want[1])


@ascdsl.jit
def topk_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    x = tl.load(x_ptr + rows * N + tl.arange(0, N)[None, :])
    tl.store(out_ptr + rows * K + tl.arange(0, K)[None, :], tl.topk(x, K))


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.int32])
def test_topk_is_the_descending_sort_cut_to_k(dtype):
    """``tl.topk`` (Triton-for-Ascend's, as upstream Triton's): the k largest of each row, largest first."""
    rng = np.random.default_rng(36)

    def check(m, n, k):
        x = (rng.standard_normal((m, n)) * 1e3).astype(dtype.np) if dtype.is_float else \
            rng.integers(-2 ** 31, 2 ** 31 - 1, (m, n)).astype(np.int32)
        want, got = both(topk_kernel[(1,)], x, np.zeros((m, k), dtype.np), M=m, N=n, K=k)
        np.testing.assert_array_equal(want[1], -np.sort(-x.astype(np.float64), axis=1)[:, :k].astype(dtype.np))
        np.testing.assert_array_equal(got[1], want[1])
    each(check, [(4, 64, 8), (2, 16, 16), (3, 32, 1)])


def test_topk_of_a_k_that_is_not_a_power_of_two_is_a_located_error():
    x = np.zeros((2, 16), np.float32)
    with pytest.raises(ascdsl.CompilationError) as info:
        topk_kernel[(1,)](x, np.zeros((2, 3), np.float32), M=2, N=16, K=3)
    assert "tl.topk needs a constexpr power of two k <= 16" in str(info.value)
    assert "tests/backend/test_sim_reorder.py:" in str(info.value).splitlines()[0]
