"""Shape ops that move the elements of tiles of rank 2 to 4 on the simulator (hazard checks on) against
the interpreter, bit for bit (they are moves): `tl.cat` of rank-3 and rank-4 tiles, `tl.join` of 2-D and
rank-3 tiles (results of rank 3 and 4), `tl.split` of rank-3 and rank-4 tiles, `tl.interleave` of 2-D and
rank-3 tiles, and re-pitching reshapes of rank-3 8-bit tiles, with last axes that do not fill 32-byte
blocks, in float32, int8, int32 and float16; permutes into `[.., 1]` tiles and `tl.cat` of `[M, 1]` columns;
the same moves of bool tiles; gathers and scatters through rank-3 and rank-4 index tiles; the same moves
of int64 tiles (as int32 pairs)."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from tests.backend.helpers import RNG, bits, both, data, each

DTYPES = [pytest.param(d, id=str(d)) for d in (dtypes.float32, dtypes.int8)] + [
    pytest.param(d, id=str(d), marks=pytest.mark.slow) for d in (dtypes.int32, dtypes.float16)]


@ascdsl.jit
def moves2_kernel(x_ptr, y_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    i = tl.arange(0, M * N)
    x = tl.reshape(tl.load(x_ptr + i), (M, N))
    y = tl.reshape(tl.load(y_ptr + i), (M, N))
    j = tl.arange(0, 2 * M * N)
    tl.store(out_ptr + j, tl.reshape(tl.join(x, y), (2 * M * N,)))
    tl.store(out_ptr + 2 * M * N + j, tl.reshape(tl.interleave(y, x), (2 * M * N,)))


@ascdsl.jit
def moves3_kernel(x_ptr, y_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    n = A * B * C
    i = tl.arange(0, n)
    x = tl.reshape(tl.load(x_ptr + i), (A, B, C))
    y = tl.reshape(tl.load(y_ptr + i), (A, B, C))
    j = tl.arange(0, 2 * n)
    tl.store(out_ptr + j, tl.reshape(tl.cat(x, y, can_reorder=True), (2 * n,)))
    tl.store(out_ptr + 2 * n + j, tl.reshape(tl.join(x, y), (2 * n,)))
    tl.store(out_ptr + 4 * n + j, tl.reshape(tl.interleave(y, x), (2 * n,)))
    lo, hi = tl.split(tl.reshape(tl.load(x_ptr + j), (A, B, C, 2)))
    tl.store(out_ptr + 6 * n + i, tl.reshape(hi, (n,)))
    tl.store(out_ptr + 7 * n + i, tl.reshape(lo, (n,)))
    tl.store(out_ptr + 8 * n + i, tl.reshape(tl.reshape(x, (B, C, A)), (n,)))


@ascdsl.jit
def moves4_kernel(x_ptr, y_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, D: tl.constexpr):
    n = A * B * C * D
    i = tl.arange(0, n)
    x = tl.reshape(tl.load(x_ptr + i), (A, B, C, D))
    y = tl.reshape(tl.load(y_ptr + i), (A, B, C, D))
    j = tl.arange(0, 2 * n)
    tl.store(out_ptr + j, tl.reshape(tl.cat(y, x, can_reorder=True), (2 * n,)))
    lo, hi = tl.split(tl.reshape(tl.load(x_ptr + j), (A, B, C, D, 2)))
    tl.store(out_ptr + 2 * n + i, tl.reshape(hi, (n,)))
    tl.store(out_ptr + 3 * n + i, tl.reshape(lo, (n,)))
    tl.store(out_ptr + 4 * n + i, tl.reshape(tl.reshape(x, (A * B, D, C)), (n,)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_joins_and_interleaves_of_2d_tiles_bit_exact(dtype):
    def check(m, n):
        x, y = data(m * n, dtype), data(m * n, dtype)
        want, got = both(moves2_kernel[(1,)], x, y, np.zeros(4 * m * n, dtype.np), M=m, N=n)
        np.testing.assert_array_equal(bits(got[2]), bits(want[2]), err_msg=f"{m}x{n}")
        assert (want[2][:2 * m * n] == np.stack([x, y], -1).ravel()).all()
        assert (want[2][2 * m * n:] == np.stack([y, x], -1).ravel()).all()
    each(check, [(3, 5), (2, 8), (4, 16)])


@pytest.mark.parametrize("dtype", DTYPES)
def test_cats_joins_splits_and_reshapes_of_rank_3_tiles_bit_exact(dtype):
    def check(shape):
        n = int(np.prod(shape))
        x, y = data(2 * n, dtype), data(n, dtype)
        want, got = both(moves3_kernel[(1,)], x, y, np.zeros(9 * n, dtype.np), A=shape[0], B=shape[1], C=shape[2])
        np.testing.assert_array_equal(bits(got[2]), bits(want[2]), err_msg=f"{shape}")
        head = x[:n]
        expect = [head, y, np.stack([head, y], -1).ravel(), np.stack([y, head], -1).ravel(), x[1::2], x[::2], head]
        assert (want[2] == np.concatenate(expect)).all()
    each(check, [((2, 3, 5),), ((3, 2, 8),), ((2, 2, 33),)])


@pytest.mark.parametrize("dtype", DTYPES)
def test_cats_splits_and_reshapes_of_rank_4_tiles_bit_exact(dtype):
    def check(shape):
        n = int(np.prod(shape))
        x, y = data(2 * n, dtype), data(n, dtype)
        a, b, c, d = shape
        want, got = both(moves4_kernel[(1,)], x, y, np.zeros(5 * n, dtype.np), A=a, B=b, C=c, D=d)
        np.testing.assert_array_equal(bits(got[2]), bits(want[2]), err_msg=f"{shape}")
        assert (want[2] == np.concatenate([y, x[:n], x[1::2], x[::2], x[:n]])).all()
    each(check, [((2, 3, 2, 5),), ((2, 1, 3, 8),)])


@ascdsl.jit
def columns_kernel(x_ptr, out_ptr, M: tl.constexpr):
    x = tl.reshape(tl.load(x_ptr + tl.arange(0, 6 * M)), (2, 3 * M, 1))
    tl.store(out_ptr + tl.arange(0, 6 * M), tl.reshape(tl.permute(x, (1, 0, 2)), (6 * M,)))
    y = tl.reshape(tl.load(x_ptr + tl.arange(0, 6 * M)), (3, 1, M, 2))
    tl.store(out_ptr + 6 * M + tl.arange(0, 6 * M), tl.reshape(tl.permute(y, (2, 3, 0, 1)), (6 * M,)))
    c = tl.reshape(tl.load(x_ptr + tl.arange(0, M)), (M, 1))
    tl.store(out_ptr + 12 * M + tl.arange(0, 2 * M), tl.reshape(tl.cat(c, c, can_reorder=True), (2 * M,)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_permutes_into_columns_and_cats_of_columns_bit_exact(dtype):
    def check(m):
        x = data(6 * m, dtype)
        want, got = both(columns_kernel[(1,)], x, np.zeros(14 * m, dtype.np), M=m)
        np.testing.assert_array_equal(bits(got[1]), bits(want[1]), err_msg=f"M={m}")
        expect = [x.reshape(2, 3 * m).T.ravel(), x.reshape(3, m, 2).transpose(1, 2, 0).ravel(), x[:m], x[:m]]
        assert (want[1] == np.concatenate(expect)).all()
    each(check, [(3,), (8,)])


@ascdsl.jit
def bool_moves_kernel(x_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    n = A * B * C
    i = tl.arange(0, n)
    x = tl.reshape(tl.load(x_ptr + i), (A, B, C))
    lo, hi = tl.split(tl.join(x > 0, x < 1))
    tl.store(out_ptr + i, tl.reshape(tl.where(lo & ~hi, x, -x), (n,)))
    cat = tl.cat(x > 1, x < -1, can_reorder=True)
    tl.store(out_ptr + n + tl.arange(0, 2 * n), tl.reshape(tl.where(cat, 1.0, 2.0), (2 * n,)))
    moved = tl.permute(x > 0.5, (2, 0, 1))
    tl.store(out_ptr + 3 * n + i, tl.reshape(tl.where(moved, tl.permute(x, (2, 0, 1)), 0.0), (n,)))
    flat = tl.reshape(x < 0.5, (n,))
    tl.store(out_ptr + 4 * n + i, tl.where(tl.flip(flat, 0), 1.0, 0.0))
    t = tl.trans(tl.reshape(x, (A * B, C)) > 0)
    tl.store(out_ptr + 5 * n + i, tl.reshape(tl.where(t, 3.0, 4.0), (n,)))


def test_bool_tiles_moved_as_their_values_bit_exact():
    def check(shape):
        n = int(np.prod(shape))
        x = data(n, dtypes.float32)
        want, got = both(bool_moves_kernel[(1,)], x, np.zeros(6 * n, np.float32), A=shape[0], B=shape[1], C=shape[2])
        np.testing.assert_array_equal(bits(got[1]), bits(want[1]), err_msg=f"{shape}")
        x3 = x.reshape(shape)
        expect = [np.where((x3 > 0) & ~(x3 < 1), x3, -x3).ravel(),
                  np.where(np.concatenate([x3 > 1, x3 < -1]), 1.0, 2.0).ravel(),
                  np.where(x3.transpose(2, 0, 1) > 0.5, x3.transpose(2, 0, 1), 0.0).ravel(),
                  np.where((x < 0.5)[::-1], 1.0, 0.0), np.where(x3.reshape(-1, shape[2]).T > 0, 3.0, 4.0).ravel()]
        assert (want[1] == np.concatenate(expect).astype(np.float32)).all()
    each(check, [((2, 3, 5),), ((1, 4, 8),)])


@ascdsl.jit
def gather3_kernel(x_ptr, idx_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    offs = tl.reshape(tl.arange(0, A * B * C), (A, B, C))
    idx = tl.load(idx_ptr + offs)
    tl.store(out_ptr + offs, tl.load(x_ptr + idx))
    tl.store(out_ptr + A * B * C + idx, tl.load(x_ptr + offs) + 1)
    quad = tl.reshape(idx, (A, B, C // 2, 2)) if C % 2 == 0 else tl.reshape(idx, (A, B, 1, C))
    tl.store(out_ptr + 2 * A * B * C + quad, tl.load(x_ptr + quad))


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.int32])
def test_gathers_and_scatters_through_rank_3_and_4_index_tiles_bit_exact(dtype):
    def check(shape):
        n = int(np.prod(shape))
        x, idx = data(n, dtype), RNG.permutation(n).astype(np.int32)
        want, got = both(gather3_kernel[(1,)], x, idx, np.zeros(3 * n, dtype.np), A=shape[0], B=shape[1], C=shape[2])
        np.testing.assert_array_equal(bits(got[2]), bits(want[2]), err_msg=f"{shape}")
        scattered = np.zeros(n, dtype.np)
        scattered[idx] = x + 1
        assert (want[2] == np.concatenate([x[idx], scattered, x])).all()
    each(check, [((2, 3, 5),), ((2, 2, 8),)])


@ascdsl.jit
def moves64_kernel(x_ptr, y_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    n = M * N
    i = tl.arange(0, n)
    flat = tl.load(x_ptr + i)
    x = tl.reshape(flat, (M, N))
    y = tl.reshape(tl.load(y_ptr + i), (M, N))
    tl.store(out_ptr + i, tl.flip(flat, 0))
    tl.store(out_ptr + n + i, tl.reshape(tl.flip(x, 1), (n,)))
    tl.store(out_ptr + 2 * n + i, tl.reshape(tl.flip(x, 0), (n,)))
    tl.store(out_ptr + 3 * n + i, tl.reshape(tl.trans(x), (n,)))
    tl.store(out_ptr + 4 * n + i, tl.reshape(tl.permute(tl.reshape(x, (M, 2, N // 2)), (2, 0, 1)), (n,)))
    tl.store(out_ptr + 5 * n + i, tl.reshape(tl.permute(tl.reshape(x, (M, 2, N // 2)), (0, 2, 1)), (n,)))
    j = tl.arange(0, 2 * n)
    tl.store(out_ptr + 6 * n + j, tl.reshape(tl.interleave(x, y), (2 * n,)))
    tl.store(out_ptr + 8 * n + j, tl.reshape(tl.join(x, y), (2 * n,)))
    tl.store(out_ptr + 10 * n + j, tl.cat(flat, tl.reshape(y, (n,)), can_reorder=True))
    lo, hi = tl.split(tl.reshape(tl.load(x_ptr + j), (M, N, 2)))
    tl.store(out_ptr + 12 * n + i, tl.reshape(hi, (n,)))
    tl.store(out_ptr + 13 * n + i, tl.reshape(lo, (n,)))
    tl.store(out_ptr + 14 * n + i, tl.reshape(tl.reshape(flat, (N, M)), (n,)))


@pytest.mark.parametrize("M, N", [(2, 4), pytest.param(3, 6, marks=pytest.mark.slow), (4, 12)])
def test_moves_of_int64_tiles_bit_exact(M, N):
    """Flips, transposes, permutes (2-D and rank 3), interleaves, joins, splits, a `tl.cat` and a re-pitching
    reshape of int64 tiles: each int64 lane moved by `Gather` as its two int32 halves (rows of 4 and 8
    int64 lanes: their int32 offsets are laid out without rows that start inside blocks)."""
    n = M * N
    x, y = RNG.integers(-2 ** 62, 2 ** 62, 2 * n), RNG.integers(-2 ** 62, 2 ** 62, n)
    want, got = both(moves64_kernel[(1,)], x, y, np.zeros(15 * n, np.int64), M=M, N=N)
    a, b = x[:n].reshape(M, N), y.reshape(M, N)
    assert np.array_equal(want[2][:4 * n], np.concatenate([x[:n][::-1], a[:, ::-1].ravel(), a[::-1].ravel(), a.T.ravel()]))
    assert np.array_equal(got[2], want[2])


@ascdsl.jit
def trans_line_kernel(x_ptr, out_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    row = tl.reshape(tl.load(x_ptr + i), (1, N))
    column = tl.trans(row)
    tl.store(out_ptr + i, tl.reshape(column, (N,)))
    tl.store(out_ptr + N + i, tl.reshape(tl.trans(column + column), (N,)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("N", [42, 64])
def test_transposes_of_one_row_and_one_column(dtype, N):
    """`tl.trans` of a `[1, N]` row into an `[N, 1]` column and back, with rows that do not fill 32-byte
    blocks: the elements keep their order, so the move is a copy (a Gather of the row once ran past it)."""
    x = data(N, dtype)
    want, got = both(trans_line_kernel[(1,)], x, np.zeros(2 * N, dtype.np), N=N)
    assert np.array_equal(bits(got[1]), bits(want[1]))
