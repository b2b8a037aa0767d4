"""Shape ops on the simulator (hazard checks on) against the interpreter, bit-exact: free reshapes and
views, reshapes between padded rows and 2-D transposes (Gather), `tl.cat` along axis 0, `tl.split`,
`tl.interleave` and `tl.join` (of 2-D tiles too), in float32/float16/bfloat16 and int32; reshapes of
8-bit tiles that move elements within padded rows and concatenations whose second tile starts inside a
block (moved as float16)."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from tests.backend.helpers import bits, both, data, each
from tests.backend.sweep import ALL_SWEEP, FLOAT_SWEEP

@ascdsl.jit
def reshape_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M * N)
    x = tl.reshape(tl.load(x_ptr + offs), (M, N))  # rows of whole blocks: the same UB layout
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    tl.store(out_ptr + rows * N + cols, x + 1)
    tl.store(out_ptr + M * N + offs, tl.view(x * 2, (M * N,)))
    tl.store(out_ptr + 2 * M * N + tl.arange(0, M), tl.ravel(tl.sum(x, axis=1, keep_dims=True)))


@pytest.mark.parametrize("dtype", FLOAT_SWEEP)
def test_free_reshapes_bit_exact(dtype):
    x = data(4 * 16, dtype)
    want, got = both(reshape_kernel[(1,)], x, np.zeros(2 * 64 + 4, dtype.np), M=4, N=16)
    np.testing.assert_allclose(got[1][128:].astype(np.float64), want[1][128:].astype(np.float64), rtol=dtype.rtol,
                               atol=dtype.atol * 16)
    np.testing.assert_array_equal(bits(got[1][:128]), bits(want[1][:128]))


@ascdsl.jit
def transpose_kernel(x_ptr, out_ptr, m, n, ROWS: tl.constexpr, COLS: tl.constexpr):
    rows = tl.arange(0, ROWS)[:, None]
    cols = tl.arange(0, COLS)[None, :]
    x = tl.load(x_ptr + rows * n + cols, mask=(rows < m) & (cols < n), other=0)
    t = tl.trans(x)  # (COLS, ROWS)
    t_rows, t_cols = tl.arange(0, COLS)[:, None], tl.arange(0, ROWS)[None, :]
    tl.store(out_ptr + t_rows * m + t_cols, t, mask=(t_rows < n) & (t_cols < m))
    tl.store(out_ptr + m * n + rows * n + cols, tl.permute(t, (1, 0)) - x, mask=(rows < m) & (cols < n))


@pytest.mark.parametrize("dtype", ALL_SWEEP)
def test_transposes_bit_exact(dtype):
    def check(m, n, rows, cols):
        x = data((m, n), dtype)
        want, got = both(transpose_kernel[(1,)], x, np.zeros(2 * m * n, dtype.np), m, n, ROWS=rows, COLS=cols)
        np.testing.assert_array_equal(bits(got[1]), bits(want[1]), err_msg=f"{m}x{n}")
        assert (want[1][:m * n].reshape(n, m) == x.T).all()
    cases = [(5, 33, 8, 64), (16, 8, 16, 8), (3, 100, 4, 128)]
    each(check, cases)


@ascdsl.jit
def cat_kernel(a_ptr, b_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr, N: tl.constexpr):
    cols = tl.arange(0, N)[None, :]
    a = tl.load(a_ptr + tl.arange(0, A)[:, None] * N + cols)
    b = tl.load(b_ptr + tl.arange(0, B)[:, None] * N + cols)
    tl.store(out_ptr + tl.arange(0, A + B)[:, None] * N + cols, tl.cat(a, b, can_reorder=True) * 3)
    flat = tl.cat(tl.load(a_ptr + tl.arange(0, A * N)), tl.load(b_ptr + tl.arange(0, B * N)), can_reorder=True)
    tl.store(out_ptr + (A + B) * N + tl.arange(0, (A + B) * N), flat)


@pytest.mark.parametrize("dtype", ALL_SWEEP)
def test_cat_bit_exact(dtype):
    a, b = data((4, 8), dtype), data((2, 8), dtype)
    want, got = both(cat_kernel[(1,)], a, b, np.zeros(2 * 6 * 8, dtype.np), A=4, B=2, N=8)
    np.testing.assert_array_equal(bits(got[2]), bits(want[2]))
    assert (want[2][48:] == np.concatenate([a.ravel(), b.ravel()])).all()


@ascdsl.jit
def repitch_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M * N)
    x = tl.reshape(tl.load(x_ptr + offs), (M, N))  # 1-D -> padded rows: a Gather
    r = tl.reshape(x * 2, (N, M))  # padded rows -> other padded rows
    rows, cols = tl.arange(0, N)[:, None], tl.arange(0, M)[None, :]
    tl.store(out_ptr + rows * M + cols, r)
    tl.store(out_ptr + M * N + offs, tl.reshape(r + 1, (M * N,)))  # padded rows -> 1-D


@pytest.mark.parametrize("dtype", ALL_SWEEP)
def test_reshapes_between_padded_rows_bit_exact(dtype):
    def check(m, n):
        x = data(m * n, dtype)
        want, got = both(repitch_kernel[(1,)], x, np.zeros(2 * m * n, dtype.np), M=m, N=n)
        np.testing.assert_array_equal(bits(got[1]), bits(want[1]), err_msg=f"{m}x{n}")
        assert (want[1][:m * n] == (x * 2).astype(dtype.np)).all()
    cases = [(4, 6), (16, 4), (3, 40)]
    each(check, cases)


@ascdsl.jit
def padded_reshape_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.reshape(tl.load(x_ptr + offs).to(tl.int8), (BLOCK // 4, 4))
    tl.store(out_ptr + offs, tl.reshape(x * 2, (BLOCK,)).to(tl.float32))


@ascdsl.jit
def unaligned_cat_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    y = tl.load(y_ptr + tl.arange(0, N))
    tl.store(out_ptr + tl.arange(0, 2 * N), tl.cat(x, y * 2, can_reorder=True) + 1)


@pytest.mark.parametrize("dtype", ALL_SWEEP)
def test_cat_whose_second_tile_starts_inside_a_block_bit_exact(dtype):
    def check(n):
        x, y = data(n, dtype), data(n, dtype)
        want, got = both(unaligned_cat_kernel[(1,)], x, y, np.zeros(2 * n, dtype.np), N=n)
        np.testing.assert_array_equal(bits(got[2]), bits(want[2]), err_msg=f"N={n}")
        assert (want[2][:n] == x + 1).all()
    each(check, [(2,), (4,), (8 if dtype.itemsize == 2 else 16,)])


@ascdsl.jit
def unaligned_byte_cat_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 4)).to(tl.int8)
    tl.store(out_ptr + tl.arange(0, 8), tl.cat(x, x, can_reorder=True).to(tl.float32))


@ascdsl.jit
def join_kernel(a_ptr, b_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    pairs = tl.join(a, b + 1)  # (N, 2): rows padded to a block in UB
    tl.store(out_ptr + offs[:, None] * 2 + tl.arange(0, 2)[None, :], pairs)
    lo, hi = tl.split(pairs)
    tl.store(out_ptr + 2 * N + offs, hi - lo)


@pytest.mark.parametrize("dtype", ALL_SWEEP)
def test_join_as_a_tile_of_pairs_bit_exact(dtype):
    for n in (8, 40):
        a, b = data(n, dtype), data(n, dtype)
        want, got = both(join_kernel[(1,)], a, b, np.zeros(3 * n, dtype.np), N=n)
        np.testing.assert_array_equal(bits(got[2]), bits(want[2]), err_msg=f"N={n}")
        assert (want[2][:2 * n:2] == a).all()


def test_8_bit_reshapes_and_cats_that_move_elements_bit_exact():
    """Moved as float16 (exact for every 8-bit integer), cast back."""
    x = np.arange(-30, 34, dtype=np.float32)
    for kernel in (padded_reshape_kernel, unaligned_byte_cat_kernel):
        want, got = both(kernel[(1,)], x, np.zeros(64, np.float32), BLOCK=64)
        assert np.array_equal(got[1], want[1]), kernel.name
    assert np.array_equal(want[1][:8], np.concatenate([x[:4], x[:4]]))


@ascdsl.jit
def join2d_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :]
    x = tl.load(x_ptr + offs)
    a, b = tl.split(tl.join(x, x + 1))
    tl.store(out_ptr + offs, a + b)


def test_split_of_a_join_of_2d_tiles_bit_exact():
    x = data(32, dtypes.float32)
    want, got = both(join2d_kernel[(1,)], x, np.zeros(32, np.float32), BLOCK=64)
    assert np.array_equal(bits(got[1]), bits(want[1])) and np.array_equal(want[1], x + (x + 1))


@ascdsl.jit
def pairs_kernel(x_ptr, out_ptr, N: tl.constexpr):
    pairs = tl.load(x_ptr + tl.arange(0, 2 * N))
    re, im = tl.split(tl.reshape(pairs, (N, 2)))
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, re - im)
    rows = tl.load(x_ptr + offs[:, None] * 2 + tl.arange(0, 2)[None, :])  # (N, 2) with padded rows
    a, b = rows.split()
    tl.store(out_ptr + N + tl.arange(0, 2 * N), tl.interleave(b, a * 2))


@pytest.mark.parametrize("dtype", ALL_SWEEP)
def test_split_and_interleave_bit_exact(dtype):
    for n in (8, 100):
        x = data(2 * n, dtype)
        want, got = both(pairs_kernel[(1,)], x, np.zeros(3 * n, dtype.np), N=n)
        np.testing.assert_array_equal(bits(got[1]), bits(want[1]), err_msg=f"N={n}")
        assert (want[1][n + 1:3 * n:2] == (x[::2] * 2).astype(dtype.np)).all()
