"""Index tiles and broadcasts on the simulator (hazard checks on) against the interpreter, bit-exact:
`tl.arange` computed in the kernel and cast, one-element tiles against `(BLOCK,)` tiles, and `(1, N)`
/ `(M, 1)` tiles spread over `(M, N)` where more than arithmetic reads them, in
float32/float16/bfloat16 and int32."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from tests.backend.helpers import both, data, each
from tests.backend.sweep import ALL_SWEEP


@ascdsl.jit
def arange_kernel(out_ptr, idx_ptr, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    tl.store(out_ptr + cols, cols.to(tl.float32) * 0.5 - 3.0, mask=mask)
    tl.store(idx_ptr + cols, (tl.arange(3, BLOCK + 3) * 7) // 2, mask=mask)


def test_arange_values_and_casts_bit_exact():
    for n, block in ((5, 8), (1000, 1024)):
        want, got = both(arange_kernel[(1,)], np.zeros(n, np.float32), np.zeros(n, np.int32), n, BLOCK=block)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
        assert (want[0] == np.arange(n) * 0.5 - 3).all() and (want[1] == (np.arange(3, n + 3) * 7) // 2).all()


@ascdsl.jit
def one_element_kernel(x_ptr, s_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    s = tl.load(s_ptr + tl.arange(0, 1))
    tl.store(out_ptr + offs, x * s + s, mask=mask)
    tl.store(out_ptr + n + offs, tl.where(x > s, x, s), mask=mask)


@pytest.mark.parametrize("dtype", ALL_SWEEP)
def test_one_element_tile_against_a_block_bit_exact(dtype):
    n = 300
    x, s = data(n, dtype), data(1, dtype)
    want, got = both(one_element_kernel[(ascdsl.cdiv(n, 128),)], x, s, np.zeros(2 * n, dtype.np), n, BLOCK=128)
    np.testing.assert_array_equal(got[2], want[2])
    assert (want[2][n:] == np.maximum(x, s)).all()


@ascdsl.jit
def spread_kernel(x_ptr, row_ptr, col_ptr, out_ptr, m, n, ROWS: tl.constexpr, COLS: tl.constexpr):
    rows = tl.arange(0, ROWS)[:, None]
    cols = tl.arange(0, COLS)[None, :]
    mask = (rows < m) & (cols < n)
    x = tl.load(x_ptr + rows * n + cols, mask=mask, other=0)
    r = tl.load(row_ptr + cols, mask=cols < n, other=0)  # (1, COLS)
    c = tl.load(col_ptr + rows, mask=rows < m, other=0)  # (ROWS, 1)
    tl.store(out_ptr + rows * n + cols, tl.where(x > r, c, x), mask=mask)
    tl.store(out_ptr + m * n + rows * n + cols, tl.broadcast_to(c, (ROWS, COLS)), mask=mask)
    tl.store(out_ptr + 2 * m * n + rows, c * 3 - c, mask=rows < m)  # a (ROWS, 1) store


@pytest.mark.parametrize("dtype", ALL_SWEEP)
def test_rows_and_columns_spread_over_a_tile_bit_exact(dtype):
    def check(m, n, rows, cols):
        x, r, c = data((m, n), dtype), data(n, dtype), data(m, dtype)
        if dtype.is_float:
            c[0] = -0.0
        want, got = both(spread_kernel[(1,)], x, r, c, np.zeros(2 * m * n + m, dtype.np), m, n, ROWS=rows,
                          COLS=cols)
        bits = got[3].view(np.uint16) if dtype.itemsize == 2 else got[3].view(np.uint32)
        np.testing.assert_array_equal(bits, want[3].view(bits.dtype), err_msg=f"{m}x{n}")
        assert (want[3][m * n:2 * m * n].reshape(m, n) == c[:, None]).all() and (want[3][2 * m * n:] == c * 3 - c).all()
    cases = [(5, 33, 8, 64), (3, 8, 4, 8)]
    each(check, cases)


@ascdsl.jit
def row_scale_kernel(x_ptr, c_ptr, out_ptr, m, n, ROWS: tl.constexpr, COLS: tl.constexpr):
    rows = tl.arange(0, ROWS)[:, None]
    cols = tl.arange(0, COLS)[None, :]
    mask = (rows < m) & (cols < n)
    x = tl.load(x_ptr + rows * n + cols, mask=mask, other=0)
    c = tl.load(c_ptr + rows, mask=rows < m, other=0)  # (ROWS, 1)
    tl.store(out_ptr + rows * n + cols, x * c - c, mask=mask)


# few long rows whose length is not whole repeats (each row's whole repeats in one call, then the
# partial repeat of every row as one column chunk), whole repeats, and many rows (column chunks)
ROW_SCALE = [(3, 200, 4, 200, "float32"), (3, 1000, 3, 1000, "float16"), (2, 512, 2, 512, "float32"),
             (60, 72, 64, 72, "float32"), (5, 1100, 8, 1104, "bfloat16")]


@pytest.mark.parametrize("m,n,rows,cols,dtype", ROW_SCALE)
def test_a_row_value_broadcast_over_rows_of_any_length_bit_exact(m, n, rows, cols, dtype):
    dt = getattr(tl, dtype)
    x, c = data((m, n), dt), data((m, 1), dt)
    want, got = both(row_scale_kernel[(1,)], x, c, np.zeros((m, n), dt.np), m, n, ROWS=rows, COLS=cols)
    np.testing.assert_array_equal(got[2], want[2])
    assert np.array_equal(want[2], (x.astype(np.float32) * c - c).astype(dt.np)) or dt is not tl.float32
