"""int64 on the simulator (hazard checks on) against the interpreter, bit-exact: Triton's 64-bit offset idiom
(``pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)``, int64 row strides) is still an affine block
access, int32 tiles widen to int64, and masked int64 loads fill their masked lanes with an ``other`` of equal
32-bit halves through the int32 view (``Duplicate`` has no 64-bit form), with any other ``other`` from its words.
Arithmetic, comparisons, reductions and scans of int64 tiles run on the scalar unit
(:mod:`ascdsl.backend.legalise_types.scalarunit`)."""
import ml_dtypes
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes, sim
from ascdsl.sim import cost
from tests.backend.helpers import CANN, assert_type_checks, both, each

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


@pytest.mark.parametrize("other", [0, -1, 5, -100, 2**40 + 7], ids=lambda o: f"other={o}")
def test_masked_int64_loads_fill_their_masked_lanes(other):
    """0 and -1 fill the int32 view of the masked lanes; other values fill the tile with their words, the loaded
    lanes gathered over them."""
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


@ascdsl.jit
def int64_where_kernel(x_ptr, y_ptr, out_ptr, n, fill, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=fill)
    y = tl.load(y_ptr + offs, mask=mask, other=0)
    keep = (x.to(tl.int32) & 3) == 1
    tl.store(out_ptr + offs, tl.where(keep, x, y), mask=mask)
    tl.store(out_ptr + n + offs, tl.where(offs % 3 == 0, fill, x), mask=mask)


def test_where_of_int64_tiles_selects_whole_words():
    n = 300
    x, y = RNG.integers(-2**62, 2**62, n, dtype=np.int64), RNG.integers(-2**62, 2**62, n, dtype=np.int64)
    for fill in (2**33 + 1, -3):
        want, got = both(int64_where_kernel[(2,)], x, y, np.zeros(2 * n, np.int64), n, fill, BLOCK=256)
        np.testing.assert_array_equal(want[2][:n], np.where((x & 3) == 1, x, y))
        np.testing.assert_array_equal(got[2], want[2])


@ascdsl.jit
def int64_cast_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask).to(out_ptr.dtype.element_ty), mask=mask)


@ascdsl.jit
def int64_gather_kernel(x_ptr, index_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    index = tl.load(index_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, tl.load(x_ptr + index.to(tl.int32), mask=mask), mask=mask)
    tl.store(out_ptr + n + index, tl.load(x_ptr + index, mask=mask) + 1.0, mask=mask)  # int64 indices as they are


def _int64s(n):
    x = RNG.integers(-2**63, 2**63 - 1, n, endpoint=True, dtype=np.int64)
    x[:8] = [0, -1, 2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**32 + 5, -2**63]
    return x


@pytest.mark.parametrize("dst", [np.int32, np.int16, np.int8, np.uint8], ids=lambda d: np.dtype(d).name)
def test_int64_tiles_narrow_to_their_low_bits(dst):
    n = 300
    x = _int64s(n)
    want, got = both(int64_cast_kernel[(2,)], x, np.zeros(n, dst), n, BLOCK=256)
    np.testing.assert_array_equal(want[1], x.astype(dst))  # C's conversion modulo 2**bits
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("src", [np.int16, np.int8, np.uint8, np.float32, np.float16], ids=lambda d: np.dtype(d).name)
def test_tiles_widen_to_int64(src):
    n = 300
    if np.dtype(src).kind == "f":
        x = (RNG.standard_normal(n) * 1000).astype(src)
        x[:4] = [np.nan, np.inf, -np.inf, -0.5]
    else:
        info = np.iinfo(src)
        x = RNG.integers(info.min, info.max, n, endpoint=True).astype(src)
    want, got = both(int64_cast_kernel[(2,)], x, np.zeros(n, np.int64), n, BLOCK=256)
    np.testing.assert_array_equal(got[1], want[1])


def test_gathers_and_scatters_through_int64_indices():
    n = 1000
    x = RNG.standard_normal(n).astype(np.float32)
    index = RNG.permutation(n).astype(np.int64)
    want, got = both(int64_gather_kernel[(4,)], x, index, np.zeros(2 * n, np.float32), n, BLOCK=256)
    np.testing.assert_array_equal(want[2][:n], x[index])
    np.testing.assert_array_equal(want[2][n + index], x[index] + 1)
    np.testing.assert_array_equal(got[2], want[2])


@pytest.mark.parametrize("dst", [np.float32, np.float16, "bfloat16"], ids=str)
def test_int64_tiles_convert_to_floats_rounding_once(dst):
    """``Cast`` int64 -> float32 in ``CAST_RINT`` rounds once (halfway cases past ``2**53`` included, where a
    conversion through double would round twice); 16-bit floats round again from float32, as the interpreter."""
    dst = ml_dtypes.bfloat16 if dst == "bfloat16" else dst
    n = 300
    x = _int64s(n)
    x[8:14] = [2**60 + 2**36 + 1, -(2**60 + 2**36 + 1), 2**24 + 1, 2**53 + 2**29, 2**63 - 1, -(2**62) - 1]
    want, got = both(int64_cast_kernel[(2,)], x, np.zeros(n, dst), n, BLOCK=256)
    if dst == np.float32:
        np.testing.assert_array_equal(want[1][8:10], np.float32([2.0**60 + 2**37, -(2.0**60 + 2**37)]))
    np.testing.assert_array_equal(got[1].view(np.uint8), want[1].view(np.uint8))


@ascdsl.jit
def fill_kernel(out_ptr, value, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.full((BLOCK,), value, out_ptr.dtype.element_ty))
    tl.store(out_ptr + BLOCK + offs, tl.zeros((BLOCK,), out_ptr.dtype.element_ty) - 1)


@ascdsl.jit
def fill_const_kernel(out_ptr, VALUE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.full((BLOCK,), VALUE, out_ptr.dtype.element_ty))


@pytest.mark.parametrize("dtype, values", [
    (np.int64, [0, -1, 5, -100, 2**40 + 3, -2**63, 2**32 - 1]),
    (np.int8, [0, -1, 5, -128, 127]),
    (np.uint8, [0, 200, 255]),
], ids=["int64", "int8", "uint8"])
def test_tiles_of_64_and_8_bit_elements_fill_from_scalars(dtype, values):
    """Constants and runtime scalars (through ``Duplicate`` of the 32- or 16-bit view, or the int64 words
    gathered); ``zeros - 1`` of 8-bit tiles computes in int32 and wraps back."""
    def check(value, block):
        if dtype == np.int64:
            want, got = both(fill_const_kernel[(1,)], np.zeros(block, dtype), VALUE=value, BLOCK=block)
            np.testing.assert_array_equal(want[0], np.full(block, value, dtype))
            np.testing.assert_array_equal(got[0], want[0])
        else:
            want, got = both(fill_kernel[(1,)], np.zeros(2 * block, dtype), value, BLOCK=block)
            np.testing.assert_array_equal(want[0][:block], np.full(block, value, dtype))
            np.testing.assert_array_equal(got[0], want[0])
    each(check, [(value, block) for value in values for block in (64, 40)])


def test_int64_tiles_fill_from_runtime_int64_scalars():
    for value in (7, -(2**35) - 9, 2**62 + 1):
        want, got = both(fill_const_kernel[(1,)], np.zeros(64, np.int64), VALUE=value, BLOCK=64)
        np.testing.assert_array_equal(got[0], want[0])
        runtime = np.zeros(64, np.int64), np.zeros(64, np.int64)
        wide_fill_kernel[(1,)](runtime[0], value, BLOCK=64)
        wide_fill_kernel[(1,)](runtime[1], value, BLOCK=64, backend="sim")
        np.testing.assert_array_equal(runtime[0], np.full(64, value, np.int64))
        np.testing.assert_array_equal(runtime[1], runtime[0])


@ascdsl.jit
def wide_fill_kernel(out_ptr, value, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.full((BLOCK,), value.to(tl.int64), tl.int64))


@ascdsl.jit
def int64_masked_gather_kernel(x_ptr, index_ptr, out_ptr, n, OTHER: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    index = tl.load(index_ptr + offs, mask=offs < n, other=0)
    tl.store(out_ptr + offs, tl.load(x_ptr + index, mask=(offs < n) & (index % 3 != 0), other=OTHER))


@pytest.mark.parametrize("other", [0, 2**40 + 7], ids=lambda o: f"other={o}")
def test_masked_int64_gathers_fill_with_any_other(other):
    n = 200
    x = _int64s(64)
    index = RNG.integers(0, 64, n).astype(np.int32)
    want, got = both(int64_masked_gather_kernel[(1,)], x, index, np.zeros(256, np.int64), n, OTHER=other, BLOCK=256)
    np.testing.assert_array_equal(want[2][:n], np.where(index % 3 != 0, x[index], other))
    np.testing.assert_array_equal(got[2], want[2])


@ascdsl.jit
def int64_column_kernel(x_ptr, out_ptr, at, M: tl.constexpr):
    one = tl.load(x_ptr + at + tl.arange(0, 1))
    rows = tl.arange(0, M)
    column = tl.broadcast_to(one[:, None], (M, 1))
    tl.store(out_ptr + rows[:, None], column)
    tl.store(out_ptr + M + rows, tl.broadcast_to(one, (M,)))
    own = tl.load(x_ptr + rows[:, None])
    tl.store(out_ptr + 2 * M + rows[:, None], tl.where(rows[:, None] % 3 == 0, one[:, None], own))
    tl.store(out_ptr + 3 * M + rows[:, None], column.to(tl.int32).to(tl.int64))


def test_one_int64_element_broadcasts_to_columns_and_lines():
    """Its two words ``Brcb``'d into a block each and gathered alternately (A2 has no int64 ``Add`` to spread it)."""
    def check(at, m):
        x = _int64s(max(m, 8))
        want, got = both(int64_column_kernel[(1,)], x, np.zeros(4 * m, np.int64), at, M=m)
        rows = np.arange(m)
        np.testing.assert_array_equal(want[1][:2 * m], np.full(2 * m, x[at]))
        np.testing.assert_array_equal(want[1][2 * m:3 * m], np.where(rows % 3 == 0, x[at], x[:m]))
        np.testing.assert_array_equal(got[1], want[1])
    each(check, [(at, m) for at in (2, 6) for m in (8, 40, 256)])


@ascdsl.jit
def int64_others_kernel(x_ptr, out_ptr, m, n, fill, ROWS: tl.constexpr, COLS: tl.constexpr):
    rows, cols = tl.arange(0, ROWS), tl.arange(0, COLS)
    mask = (rows[:, None] < m) & (cols[None, :] < n)
    block = tl.load(x_ptr + rows[:, None] * n + cols[None, :], mask=mask, other=fill)
    tl.store(out_ptr + rows[:, None] * COLS + cols[None, :], block)
    strided = tl.load(x_ptr + cols * 3, mask=cols < n, other=fill)
    tl.store(out_ptr + ROWS * COLS + cols, strided)
    column = tl.load(x_ptr + rows[:, None] * n, mask=rows[:, None] < m, other=fill)
    tl.store(out_ptr + ROWS * COLS + COLS + rows[:, None], column)
    planes = tl.arange(0, 2)[:, None, None] * ROWS * COLS + rows[None, :, None] * COLS + cols[None, None, :]
    cube = tl.load(x_ptr + planes, mask=(rows[None, :, None] < m) & (cols[None, None, :] < n), other=fill)
    tl.store(out_ptr + ROWS * COLS + COLS + ROWS + planes, cube)


def test_masked_int64_block_and_strided_loads_fill_any_other_alike():
    """A runtime ``other`` of unequal 32-bit halves: its words fill the tile, the loaded lanes are gathered over them
    (block loads of rank 1 to 3 and strided ones alike)."""
    def check(m, n, fill):
        x = _int64s(2 * 8 * 16)
        want, got = both(int64_others_kernel[(1,)], x, np.zeros(8 * 16 * 3 + 16 + 8, np.int64), m, n, fill,
                         ROWS=8, COLS=16)
        np.testing.assert_array_equal(want[1][:8 * 16].reshape(8, 16)[m:], fill)
        np.testing.assert_array_equal(got[1], want[1])
    each(check, [(m, n, fill) for m, n in ((5, 11), (8, 16), (0, 3)) for fill in (2**40 + 7, -(2**35) - 9)])



def _wide(n):
    """int64 values that need all 64 bits: near +-2**62 and +-2**63, and pairs equal in one 32-bit half only."""
    x = RNG.integers(-2**63, 2**63 - 1, n, endpoint=True, dtype=np.int64)
    near = RNG.integers(-2**20, 2**20, n // 3, dtype=np.int64)
    x[:n // 3] = np.where(near % 2 == 0, 2**62, -2**62) + near
    x[n // 3:n // 3 + 8] = [2**62, -2**62, 2**63 - 1, -2**63, 2**32, 2**32 + 1, -(2**32), 1]
    return x


def _pairs(n):
    """``x`` and ``y`` with equal lanes, lanes equal in their low or high word only, and wrapping sums."""
    x, y = _wide(n), _wide(n)
    y[::5] = x[::5]
    y[1::7] = x[1::7] ^ (1 << 40)  # the same low word
    y[2::7] = x[2::7] ^ 1  # the same high word
    return x, y


@ascdsl.jit
def int64_compare_kernel(x_ptr, y_ptr, out_ptr, n, limit, middle, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    y = tl.load(y_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, (x == y).to(tl.int8), mask=mask)
    tl.store(out_ptr + n + offs, (x != y).to(tl.int8), mask=mask)
    tl.store(out_ptr + 2 * n + offs, (x < y).to(tl.int8), mask=mask)
    tl.store(out_ptr + 3 * n + offs, (x <= y).to(tl.int8), mask=mask)
    tl.store(out_ptr + 4 * n + offs, (x > y).to(tl.int8), mask=mask)
    tl.store(out_ptr + 5 * n + offs, (x >= y).to(tl.int8), mask=mask)
    tl.store(out_ptr + 6 * n + offs, tl.where((x < limit) & (y >= 0), 1, 0).to(tl.int8), mask=mask)
    tl.store(out_ptr + 7 * n + offs, offs < middle, mask=mask)  # an int32 tile widened by an int64 scalar


def test_int64_comparisons_run_on_the_scalar_unit():
    """All six comparisons of two loaded tiles with a masked tail, one with a runtime scalar combined with
    another mask, and an int32 tile against an int64 scalar, into the bit masks ``tl.where``, ``&`` and the
    stores of bools read."""
    def check(n, block):
        x, y = _pairs(n)
        limit, middle = int(x[3]), np.int64(n // 2)
        want, got = both(int64_compare_kernel[(ascdsl.cdiv(n, block),)], x, y, np.zeros(8 * n, np.int8), n, limit,
                         middle, BLOCK=block)
        expected = [x == y, x != y, x < y, x <= y, x > y, x >= y, (x < limit) & (y >= 0),
                    np.arange(n) < middle]
        np.testing.assert_array_equal(want[2], np.concatenate(expected).astype(np.int8))
        np.testing.assert_array_equal(got[2], want[2])
    each(check, [(37, 64), (781, 256)])


def _c_division(a: int, b: int) -> tuple[int, int]:
    """C's truncating quotient and remainder of Python ints, NumPy's 0 and 0 for a zero divisor."""
    if b == 0:
        return 0, 0
    q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    return q, a - q * b


def _int64s_of(values) -> np.ndarray:
    """Python ints wrapped to int64."""
    return np.array([(v + 2**63) % 2**64 - 2**63 for v in values], np.int64)


@ascdsl.jit
def int64_arith_kernel(x_ptr, y_ptr, out_ptr, n, step, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    results = (x + y, x - y, x * y, x & y, x | y, x ^ y, ~x, -x, tl.abs(x), tl.maximum(x, y), tl.minimum(x, y),
               x + step, 3 * y - step, x // (y >> 40), x % (y >> 40), x // 7)
    for k in tl.static_range(len(results)):
        tl.store(out_ptr + k * n + offs, results[k], mask=mask)


def test_int64_arithmetic_wraps_as_the_interpreter():
    """``+ - *`` wrap past +-2**63 (in ``uint64_t`` on the scalar unit), bitwise ops, negation and ``abs`` of
    ``-2**63``, maxima and minima, a runtime int64 scalar operand, and ``//``/``%`` truncating, with divisors
    of 0 and -1 (NumPy's 0 and wrap, where C++ traps)."""
    def check(n, block):
        x, y = _pairs(n)
        y[3::11], y[4::11], x[4::22] = 0, -(2**40), -(2**63)  # divisors y >> 40 of 0 and -1 (of -2**63 too)
        step = 2**62 + 5
        want, got = both(int64_arith_kernel[(ascdsl.cdiv(n, block),)], x, y, np.zeros(16 * n, np.int64), n, step,
                         BLOCK=block)
        quotients, remainders = zip(*map(_c_division, x.tolist(), (y >> 40).tolist()))
        with np.errstate(over="ignore"):
            expected = [x + y, x - y, x * y, x & y, x | y, x ^ y, ~x, -x, np.abs(x), np.maximum(x, y),
                        np.minimum(x, y), x + np.int64(step), 3 * y - np.int64(step), _int64s_of(quotients),
                        _int64s_of(remainders), _int64s_of(_c_division(a, 7)[0] for a in x.tolist())]
        np.testing.assert_array_equal(want[2], np.concatenate(expected))
        np.testing.assert_array_equal(got[2], want[2])
    each(check, [(37, 64), (781, 256)])


@ascdsl.jit
def int64_shift_kernel(x_ptr, s_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x, s = tl.load(x_ptr + offs), tl.load(s_ptr + offs)
    tl.store(out_ptr + offs, x << s)
    tl.store(out_ptr + BLOCK + offs, x >> s)
    tl.store(out_ptr + 2 * BLOCK + offs, (x << 3) ^ (x >> 61))


def test_int64_shifts_by_any_amount():
    """Amounts in and outside ``[0, 64)`` (NumPy's 0 and sign outside, undefined in C++) and by constants."""
    n = 64
    x, amounts = _wide(n), RNG.integers(-3, 70, n).astype(np.int64)
    want, got = both(int64_shift_kernel[(1,)], x, amounts, np.zeros(3 * n, np.int64), BLOCK=n)
    np.testing.assert_array_equal(want[2][:n], np.left_shift(x, amounts))
    np.testing.assert_array_equal(want[2][n:2 * n], np.right_shift(x, amounts))
    np.testing.assert_array_equal(got[2], want[2])


@ascdsl.jit
def int64_rank3_kernel(x_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    a, b, c = tl.arange(0, A), tl.arange(0, B), tl.arange(0, C)
    x = tl.load(x_ptr + a[:, None, None] * B * C + b[None, :, None] * C + c[None, None, :])
    tl.store(out_ptr + b[:, None] * C + c[None, :], tl.max(x, axis=0))
    at = B * C
    tl.store(out_ptr + at + a[:, None] * C + c[None, :], tl.min(x, axis=1))
    at += A * C
    tl.store(out_ptr + at + tl.arange(0, A * B), tl.reshape(tl.sum(x, axis=2), (A * B,)))
    at += A * B
    tl.store(out_ptr + at + a[:, None, None] * C + c[None, None, :], tl.sum(x, axis=1, keep_dims=True))
    at += A * C
    tl.store(out_ptr + at, tl.sum(x))
    tl.store(out_ptr + at + 1, tl.max(x))
    tl.store(out_ptr + at + 2, tl.min(x))
    tl.store(out_ptr + at + 3, tl.sum(tl.where((x & 1) == 0, 0, x)))  # a mask over padded rows


def test_int64_reductions_of_a_3d_tile_along_each_axis_and_to_a_scalar():
    """Rows of 6 int64 lanes padded to 8 in UB: every axis walked at its UB stride; sums wrap."""
    a, b, c = 3, 5, 6
    x = _wide(a * b * c)
    want, got = both(int64_rank3_kernel[(1,)], x, np.zeros(b * c + 2 * a * c + a * b + 4, np.int64), A=a, B=b, C=c)
    t = x.reshape(a, b, c)
    with np.errstate(over="ignore"):
        expected = [t.max(axis=0).ravel(), t.min(axis=1).ravel(), t.sum(axis=2).ravel(), t.sum(axis=1).ravel(),
                    [t.sum(), t.max(), t.min(), np.where((t & 1) == 0, 0, t).sum()]]
    np.testing.assert_array_equal(want[1], np.concatenate(expected))
    np.testing.assert_array_equal(got[1], want[1])


@ascdsl.jit
def int64_rank5_kernel(x_ptr, out_ptr, AXIS: tl.constexpr, N: tl.constexpr, M: tl.constexpr):
    x = tl.reshape(tl.load(x_ptr + tl.arange(0, N)), (2, 3, 4, 4, 4))
    tl.store(out_ptr + tl.arange(0, M), tl.reshape(tl.max(x, axis=AXIS), (M,)))
    tl.store(out_ptr + M + tl.arange(0, M), tl.reshape(tl.min(x, axis=AXIS), (M,)))
    tl.store(out_ptr + 2 * M + tl.arange(0, M), tl.reshape(tl.sum(x, axis=AXIS), (M,)))


def test_int64_reductions_of_a_5d_tile_along_one_axis():
    shape = (2, 3, 4, 4, 4)
    x = _wide(int(np.prod(shape)))

    def check(axis):
        m = x.size // shape[axis]
        want, got = both(int64_rank5_kernel[(1,)], x, np.zeros(3 * m, np.int64), AXIS=axis, N=x.size, M=m)
        t = x.reshape(shape)
        with np.errstate(over="ignore"):
            expected = [t.max(axis=axis).ravel(), t.min(axis=axis).ravel(), t.sum(axis=axis).ravel()]
        np.testing.assert_array_equal(want[1], np.concatenate(expected))
        np.testing.assert_array_equal(got[1], want[1])
    each(check, [(axis,) for axis in range(5)])


@ascdsl.jit
def int64_scan_kernel(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr):
    r, c = tl.arange(0, R), tl.arange(0, C)
    x = tl.load(x_ptr + r[:, None] * C + c[None, :])
    tl.store(out_ptr + r[:, None] * C + c[None, :], tl.cumsum(x, axis=1))
    tl.store(out_ptr + R * C + r[:, None] * C + c[None, :], tl.cumsum(x, axis=0))
    line = tl.load(x_ptr + tl.arange(0, R * C))
    tl.store(out_ptr + 2 * R * C + tl.arange(0, R * C), tl.cumsum(line, axis=0))
    tl.store(out_ptr + 3 * R * C + tl.arange(0, R * C), tl.cumsum(line, axis=0, reverse=True))


def test_int64_cumulative_sums_wrap_as_the_interpreter():
    r, c = 5, 6
    x = _wide(r * c)
    want, got = both(int64_scan_kernel[(1,)], x, np.zeros(4 * r * c, np.int64), R=r, C=c)
    t = x.reshape(r, c)
    with np.errstate(over="ignore"):
        expected = [np.cumsum(t, axis=1).ravel(), np.cumsum(t, axis=0).ravel(), np.cumsum(x),
                    np.cumsum(x[::-1])[::-1]]
    np.testing.assert_array_equal(want[1], np.concatenate(expected))
    np.testing.assert_array_equal(got[1], want[1])


@ascdsl.jit
def int64_accumulate_kernel(x_ptr, out_ptr, start, ROUNDS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.int64)
    total = tl.full((BLOCK,), start, tl.int64)
    for k in range(ROUNDS):
        x = tl.load(x_ptr + k * BLOCK + offs)
        acc += x
        total = tl.maximum(total, x) - 1
    tl.store(out_ptr + offs, acc)
    tl.store(out_ptr + BLOCK + offs, total)
    tl.store(out_ptr + 2 * BLOCK, tl.sum(acc, axis=0))


def test_int64_tiles_fill_from_a_runtime_scalar_and_accumulate_in_a_loop():
    """``tl.zeros`` and ``tl.full`` of a runtime int64 initialise loop-carried int64 tiles the scalar unit
    updates (the vector fills ordered before its reads, its writes before the next round's)."""
    rounds, block = 3, 40
    x = _wide(rounds * block)
    start = -(2**40) - 3
    want, got = both(int64_accumulate_kernel[(1,)], x, np.zeros(2 * block + 1, np.int64), start, ROUNDS=rounds,
                     BLOCK=block)
    t = x.reshape(rounds, block)
    total = np.full(block, start, np.int64)
    with np.errstate(over="ignore"):
        for row in t:
            total = np.maximum(total, row) - 1
        np.testing.assert_array_equal(want[1], np.concatenate([t.sum(axis=0), total, [t.sum()]]))
    np.testing.assert_array_equal(got[1], want[1])


def test_the_scalar_unit_loop_is_charged_per_element():
    """One int64 comparison of 1024 lanes costs its GetValue/SetValue accesses on the scalar unit (at least
    ``scalar_ub_access`` each), far above the vector ``Compare`` of the same int32 tile."""
    n, k = 1024, cost.A2
    runs = {}
    for dt in (np.int64, np.int32):
        x = RNG.integers(-1000, 1000, n).astype(dt)
        with sim.record() as runs[dt]:
            want, got = both(compare_once_kernel[(1,)], x, x[::-1].copy(), np.zeros(n, np.int8), BLOCK=n)
        np.testing.assert_array_equal(got[2], want[2])
    # read after both launches: the module's recording, which runs nothing on the simulator, reaches the second
    cycles = {dt: r[-1].stats.pipe_busy["S"] for dt, r in runs.items()}
    accesses = 2 * n + n // 8  # both operands' lanes read, a mask byte written per 8 lanes
    assert cycles[np.int64] >= accesses * (k.scalar_ub_access.value + k.scalar_issue.value)
    assert cycles[np.int64] > 100 * cycles[np.int32]


@ascdsl.jit
def compare_once_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.where(tl.load(x_ptr + offs) == tl.load(y_ptr + offs), 1, 0).to(tl.int8))


@ascdsl.jit
def int64_sort_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.sort(tl.load(x_ptr + offs), 0))


@ascdsl.jit
def int64_argmax_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.argmax(tl.load(x_ptr + offs), 0) + offs)


@pytest.mark.parametrize("kernel, feature", [(int64_sort_kernel, "`sort` of int64 tiles"),
                                             (int64_argmax_kernel, "`argmax` of int64 tiles")], ids=["sort", "argmax"])
def test_what_the_scalar_unit_does_not_run_on_int64_tiles_is_a_located_error(kernel, feature):
    with pytest.raises(ascdsl.CompilationError) as e:
        kernel[(1,)](_int64s(32), np.zeros(32, np.int64), BLOCK=32, backend="sim")
    assert f"{feature} cannot run on the Ascend A2 vector cores: their vector arithmetic and comparisons take at " \
           "most 32-bit elements" in str(e.value)
    assert "the scalar unit runs `+ - * // % & | ^ ~ << >>`" in str(e.value)
    assert e.value.loc.file.endswith("test_sim_int64.py")


@CANN
def test_scalar_unit_loops_type_check_against_cann(tmp_path):
    """The comparison, arithmetic, reduction, scan and loop kernels above against the real CANN headers."""
    i64, i8 = tl.pointer_type(dtypes.int64), tl.pointer_type(dtypes.int8)
    kernels = [k.kernels[0] for k in (
        int64_compare_kernel.specialize(i64, i64, i8, tl.int32, tl.int64, tl.int64, BLOCK=64),
        int64_arith_kernel.specialize(i64, i64, i64, tl.int32, tl.int64, BLOCK=64),
        int64_shift_kernel.specialize(i64, i64, i64, BLOCK=64),
        int64_rank3_kernel.specialize(i64, i64, A=3, B=5, C=6),
        int64_scan_kernel.specialize(i64, i64, R=5, C=6),
        int64_accumulate_kernel.specialize(i64, i64, tl.int64, ROUNDS=3, BLOCK=40))]
    assert_type_checks("int64_scalar_unit", kernels, tmp_path)
