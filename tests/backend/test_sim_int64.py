"""int64 on the simulator (hazard checks on) against the interpreter, bit-exact: Triton's 64-bit offset idiom
(``pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)``, int64 row strides) is still an affine block
access, int32 tiles widen to int64, and masked int64 loads fill their masked lanes with an ``other`` of equal
32-bit halves through the int32 view (``Duplicate`` has no 64-bit form), with any other ``other`` from its words."""
import ml_dtypes
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from ascdsl.backend.decompose import decompose
from ascdsl.backend.select import select
from ascdsl.passes import run_passes
from ascdsl.platforms import get_platform
from tests.backend.helpers import both, each

RNG = np.random.default_rng(64)
PLATFORM = get_platform("Ascend910B3")


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
def int64_compare_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.where(x < 5, 1, 0))


@ascdsl.jit
def int64_sort_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.sort(tl.load(x_ptr + offs), 0))


@pytest.mark.parametrize("kernel, feature", [(int64_compare_kernel, "`lt` of int64 tiles"),
                                             (int64_sort_kernel, "`sort` of int64 tiles")], ids=["compare", "sort"])
def test_int64_comparisons_cannot_run_on_the_vector_cores(kernel, feature):
    with pytest.raises(ascdsl.CompilationError) as e:
        kernel[(1,)](_int64s(32), np.zeros(32, np.int64), BLOCK=32, backend="sim")
    assert f"{feature} cannot run on the Ascend A2 vector cores" in str(e.value)
    assert e.value.loc.file.endswith("test_sim_int64.py")


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


def test_int64_comparisons_say_the_same_on_either_route():
    """The vector-core check before the rewrites and the bool-tile check of selection (which an int64 comparison
    reaches only if a rewrite makes one) give the same located error."""
    with pytest.raises(ascdsl.CompilationError) as checked:
        int64_compare_kernel[(1,)](_int64s(32), np.zeros(32, np.int64), BLOCK=32, backend="sim")
    kernel = run_passes(int64_compare_kernel.specialize(*[tl.pointer_type(dtypes.int64)] * 2, BLOCK=32).kernels[0],
                        PLATFORM)
    with pytest.raises(ascdsl.CompilationError) as selected:
        select(decompose(kernel, PLATFORM), PLATFORM)
    for e in (checked, selected):
        assert "`lt` of int64 tiles cannot run on the Ascend A2 vector cores: their vector arithmetic and " \
               "comparisons take at most 32-bit elements" in str(e.value)
        assert e.value.loc.file.endswith("test_sim_int64.py") and "tl.where(x < 5, 1, 0)" in str(e.value)
    assert str(checked.value) == str(selected.value)
