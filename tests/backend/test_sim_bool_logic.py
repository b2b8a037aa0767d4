"""Bool tiles combined with ``& | ^ ~`` (bit masks through And/Or/Xor/Not) as ``tl.where`` conditions,
on the simulator against the interpreter: bit-exact."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from tests.backend.helpers import FLOATS, both, data


@ascdsl.jit
def bool_logic_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    inside = (x > -1.0) & (x < 1.0)
    tl.store(out_ptr + offs, tl.where(inside | (y > 2.0), x, y), mask=mask)
    tl.store(out_ptr + n + offs, tl.where(~inside, x, 0.0), mask=mask)
    tl.store(out_ptr + 2 * n + offs, tl.where((x > y) ^ (y > 0.0), y, x), mask=mask)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_bool_tile_logic_bit_exact(dtype):
    for n, block in ((33, 32), (1000, 256)):
        x, y = data(n, dtype), data(n, dtype)
        want, got = both(bool_logic_kernel[(ascdsl.cdiv(n, block),)], x, y, np.zeros(3 * n, dtype.np), n, BLOCK=block)
        bits = np.uint16 if dtype.itemsize == 2 else np.uint32
        np.testing.assert_array_equal(got[2].view(bits), want[2].view(bits), err_msg=f"n={n}")
        inside = (x > -1) & (x < 1)
        assert (want[2][n:2 * n] == np.where(~inside, x, 0)).all()


@ascdsl.jit
def int_compare_kernel(a_ptr, b_ptr, f_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0)
    b = tl.load(b_ptr + offs, mask=mask, other=0)
    f = tl.load(f_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, tl.where(a < b, f, -f), mask=mask)
    tl.store(out_ptr + n + offs, tl.where((a >= 3) | (a == b), f, 0.0), mask=mask)
    tl.store(out_ptr + 2 * n + offs, tl.where((a != b) & (a <= b) & (a > -2), f, 1.0), mask=mask)


def test_int32_comparisons_bit_exact():
    rng = np.random.default_rng(7)
    for n, block in ((33, 32), (1000, 256)):
        a = rng.integers(-5, 6, n).astype(np.int32)
        b = rng.integers(-5, 6, n).astype(np.int32)
        a[:2], b[:2] = [np.iinfo(np.int32).min, np.iinfo(np.int32).max], [np.iinfo(np.int32).max, np.iinfo(np.int32).min]
        f = data(n, dtypes.float32)
        want, got = both(int_compare_kernel[(ascdsl.cdiv(n, block),)], a, b, f, np.zeros(3 * n, np.float32), n,
                          BLOCK=block)
        np.testing.assert_array_equal(got[3].view(np.uint32), want[3].view(np.uint32), err_msg=f"n={n}")
        assert (want[3][:n] == np.where(a < b, f, -f)).all()


@ascdsl.jit
def where_of_bools_kernel(x_ptr, y_ptr, out_ptr, n, flag, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x_ptr + offs, mask=mask, other=0.0) > 0
    b = tl.load(y_ptr + offs, mask=mask, other=0.0) < 0.5
    tl.store(out_ptr + offs, tl.where(offs % 3 == 0, a, b), mask=mask)
    tl.store(out_ptr + BLOCK + offs, tl.where(a, flag, b), mask=mask)
    tl.store(out_ptr + 2 * BLOCK + offs, tl.where(b, a, True), mask=mask)


@pytest.mark.parametrize("flag", [True, False])
def test_where_of_bool_tiles_and_scalars(flag):
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal(64).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    want, got = both(where_of_bools_kernel[(1,)], x, y, np.zeros(192, np.bool_), 60, flag, BLOCK=64)
    a, b = x[:60] > 0, y[:60] < 0.5
    np.testing.assert_array_equal(want[2][:60], np.where(np.arange(60) % 3 == 0, a, b))
    np.testing.assert_array_equal(want[2][64:124], np.where(a, flag, b))
    np.testing.assert_array_equal(got[2], want[2])


@ascdsl.jit
def strided_bools_kernel(x_ptr, out_ptr, n, flag, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK) * 2
    loaded = tl.load(x_ptr + offs, mask=offs < n, other=flag)  # strided: bytes copied one by one, a runtime other
    tl.store(out_ptr + tl.arange(0, BLOCK), loaded)
    tl.store(out_ptr + BLOCK + tl.arange(0, BLOCK), loaded & (tl.arange(0, BLOCK) % 2 == 0))


@pytest.mark.parametrize("flag", [True, False])
def test_strided_bool_loads_with_a_runtime_other(flag):
    x = np.random.default_rng(4).integers(0, 2, 64).astype(np.bool_)
    want, got = both(strided_bools_kernel[(1,)], x, np.zeros(64, np.bool_), 40, flag, BLOCK=32)
    np.testing.assert_array_equal(want[1][:32], np.where(np.arange(32) * 2 < 40, x[::2], flag))
    np.testing.assert_array_equal(got[1], want[1])


@ascdsl.jit
def outer_mask_kernel(x_ptr, y_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    a, b = tl.load(x_ptr + tl.arange(0, M)), tl.load(y_ptr + tl.arange(0, N))
    both_ways = (a > 0)[:, None] & (b < 0.5)[None, :]  # bool tiles expanded and broadcast against each other
    tl.store(out_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :],
             tl.where(both_ways, a[:, None] + b[None, :], 0.0))


def test_expanded_bool_tiles_as_an_outer_mask():
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal(8).astype(np.float32), rng.standard_normal(16).astype(np.float32)
    want, got = both(outer_mask_kernel[(1,)], a, b, np.zeros(128, np.float32), M=8, N=16)
    expect = np.where((a > 0)[:, None] & (b < 0.5)[None, :], a[:, None] + b[None, :], 0.0).ravel()
    np.testing.assert_array_equal(want[2], expect.astype(np.float32))
    np.testing.assert_array_equal(got[2], want[2])
