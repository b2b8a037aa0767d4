"""int64 on the simulator (hazard checks on) against the interpreter, bit-exact: Triton's 64-bit offset idiom
(``pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)``, int64 row strides) is still an affine block
access, int32 tiles widen to int64, and masked int64 loads fill their masked lanes with an ``other`` of equal
32-bit halves through the int32 view (``Duplicate`` has no 64-bit form); another ``other`` is a located error."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from tests.backend.helpers import both, each

RNG = np.random.default_rng(64)


@ascdsl.jit
def wide_offsets_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


@ascdsl.jit
def wide_rows_kernel(x_ptr, out_ptr, m, n, stride, ROWS: tl.constexpr, COLS: tl.constexpr):
    rows = (tl.program_id(0) * ROWS + tl.arange(0, ROWS)).to(tl.int64)
    cols = tl.arange(0, COLS)
    mask = (rows[:, None] < m) & (cols[None, :] < n)
    x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=mask, other=0.0)
    tl.store(out_ptr + rows[:, None] * stride + cols[None, :], x - tl.max(x, axis=1)[:, None], mask=mask)


@ascdsl.jit
def widen_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask).to(tl.int64), mask=mask)


@ascdsl.jit
def int64_fill_kernel(x_ptr, out_ptr, m, n, OTHER: tl.constexpr, ROWS: tl.constexpr, COLS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, COLS)
    x = tl.load(x_ptr + rows[:, None] * n + cols[None, :], mask=(rows[:, None] < m) & (cols[None, :] < n),
                other=OTHER)
    tl.store(out_ptr + rows[:, None] * COLS + cols[None, :], x)


@ascdsl.jit
def int64_tail_kernel(x_ptr, out_ptr, n, OTHER: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n, other=OTHER))


def test_int64_offsets_are_block_accesses():
    def check(n, block):
        x = RNG.standard_normal(n).astype(np.float32)
        want, got = both(wide_offsets_kernel[(ascdsl.cdiv(n, block),)], x, np.zeros(n, np.float32), n, BLOCK=block)
        np.testing.assert_array_equal(want[1], x * 2)
        np.testing.assert_array_equal(got[1], want[1])
    each(check, [(1000, 256), (77, 32)])


def test_int64_row_offsets_of_2d_blocks():
    def check(m, n, rows, cols):
        x = RNG.standard_normal((m, n)).astype(np.float32)
        want, got = both(wide_rows_kernel[(ascdsl.cdiv(m, rows),)], x, np.zeros_like(x), m, n, n, ROWS=rows, COLS=cols)
        np.testing.assert_array_equal(want[1], x - x.max(axis=1, keepdims=True))
        np.testing.assert_array_equal(got[1], want[1])
    each(check, [(37, 50, 8, 64), (5, 16, 4, 16)])


def test_int32_tiles_widen_to_int64():
    n = 1000
    x = RNG.integers(-2**31, 2**31 - 1, n, endpoint=True).astype(np.int32)
    want, got = both(widen_kernel[(4,)], x, np.zeros(n, np.int64), n, BLOCK=256)
    np.testing.assert_array_equal(want[1], x.astype(np.int64))
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("other", [0, -1], ids=lambda o: f"other={o}")
def test_masked_int64_loads_fill_with_equal_halves(other):
    def check(kernel, grid, x, out, *args, **kw):
        want, got = both(kernel[grid], x, out, *args, OTHER=other, **kw)
        np.testing.assert_array_equal(got[1], want[1])
        return want[1]
    big = RNG.integers(-10**15, 10**15, (40, 13)).astype(np.int64)
    block = check(int64_fill_kernel, (3,), big, np.zeros((48, 16), np.int64), 40, 13, ROWS=16, COLS=16)
    assert (block[:40, 13:] == other).all() and (block[40:] == other).all()
    np.testing.assert_array_equal(block[:40, :13], big)
    flat = RNG.integers(-10**15, 10**15, 1000).astype(np.int64)
    tail = check(int64_tail_kernel, (4,), flat, np.zeros(1024, np.int64), 1000, BLOCK=256)
    assert (tail[1000:] == other).all()


def test_int64_other_of_unequal_halves_is_a_located_error():
    x = np.arange(100, dtype=np.int64)
    with pytest.raises(ascdsl.CompilationError) as e:
        int64_tail_kernel[(1,)](x, np.zeros(128, np.int64), 100, OTHER=5, BLOCK=128, backend="sim")
    assert "not a constant with equal 32-bit halves" in str(e.value)
    assert e.value.loc.file.endswith("test_sim_int64.py")
