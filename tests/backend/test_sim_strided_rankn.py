"""Strided loads and stores (non-unit innermost stride) of tiles of rank 3 and 4 on the simulator
(hazard and bounds checks on) against the interpreter, bit-exact: runtime and constant strides whose rows
follow each other in GM or interleave, masked along every axis by `index < bound` masks (with `other`),
float32, float16, int8 and int64 elements, and atomic adds. Every GM tensor ends at the last valid lane,
so a masked-off lane that reached GM would fail the simulator's bounds check."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from tests.backend.helpers import RNG, both, data, each

DTYPES = [dtypes.float32, dtypes.float16, dtypes.int8, dtypes.int64]
OTHER = 7


@ascdsl.jit
def repro_store_kernel(x, o, s, B: tl.constexpr):
    v = tl.load(x + tl.arange(0, 2)[:, None, None] * 8 + tl.arange(0, 2)[None, :, None] * 4
                + tl.arange(0, 4)[None, None, :])
    i = tl.arange(0, 2)[:, None, None] * 64 + tl.arange(0, 2)[None, :, None] * 32 + tl.arange(0, 4)[None, None, :] * s
    tl.store(o + i, v)


@ascdsl.jit
def repro_load_kernel(x, o, s, B: tl.constexpr):
    i = tl.arange(0, 2)[:, None, None] * 64 + tl.arange(0, 2)[None, :, None] * 32 + tl.arange(0, 4)[None, None, :] * s
    v = tl.load(x + i)
    tl.store(o + tl.arange(0, 2)[:, None, None] * 8 + tl.arange(0, 2)[None, :, None] * 4
             + tl.arange(0, 4)[None, None, :], v)


@ascdsl.jit
def load3_kernel(x_ptr, out_ptr, s0, s1, s2, n0, n1, n2, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    a, b, c = tl.arange(0, A)[:, None, None], tl.arange(0, B)[None, :, None], tl.arange(0, C)[None, None, :]
    v = tl.load(x_ptr + a * s0 + b * s1 + c * s2, mask=(a < n0) & (b < n1) & (c < n2), other=7)
    tl.store(out_ptr + a * (B * C) + b * C + c, v)


@ascdsl.jit
def store3_kernel(x_ptr, out_ptr, s0, s1, s2, n0, n1, n2, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    a, b, c = tl.arange(0, A)[:, None, None], tl.arange(0, B)[None, :, None], tl.arange(0, C)[None, None, :]
    v = tl.load(x_ptr + a * (B * C) + b * C + c)
    tl.store(out_ptr + a * s0 + b * s1 + c * s2, v, mask=(a < n0) & (b < n1) & (c < n2))


@ascdsl.jit
def copy4_kernel(x_ptr, out_ptr, s0, s1, s2, s3, t0, t1, t2, t3, n0, n1, n2, n3,
                 A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, D: tl.constexpr):
    a, b = tl.arange(0, A)[:, None, None, None], tl.arange(0, B)[None, :, None, None]
    c, d = tl.arange(0, C)[None, None, :, None], tl.arange(0, D)[None, None, None, :]
    m = (a < n0) & (b < n1) & (c < n2) & (d < n3)
    v = tl.load(x_ptr + a * s0 + b * s1 + c * s2 + d * s3, mask=m, other=7)
    tl.store(out_ptr + a * t0 + b * t1 + c * t2 + d * t3, v, mask=m)


def _lanes(shape, strides, bounds):
    """The GM offsets of an access's lanes (``[*shape]``), whether each is valid, and the length of a
    tensor that ends at its last valid lane."""
    index = np.indices(shape)
    at = sum(i * s for i, s in zip(index, strides))
    valid = np.logical_and.reduce([i < n for i, n in zip(index, bounds)])
    return at, valid, int(at[valid].max()) + 1 if valid.any() else 1


def _exact(got, want, msg):
    np.testing.assert_array_equal(got.view(f"u{got.dtype.itemsize}"), want.view(f"u{want.dtype.itemsize}"),
                                  err_msg=msg)


SHAPES_3 = [((3, 2, 5), (32, 16, 3)), ((3, 2, 5), (7, 40, 2)), ((1, 3, 4), (50, 9, 2)), ((2, 1, 16), (40, 3, 2))]
"""``(shape, strides)``: rows that follow each other in GM, planes interleaved with rows, unit leading axes."""


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_rank3_strided_store_and_load_of_the_issue(dtype):
    def check(kernel, s):
        if kernel is repro_store_kernel:
            x, o = data(16, dtype), data(_lanes((2, 2, 4), (64, 32, s), (2, 2, 4))[2], dtype)
        else:
            x, o = data(_lanes((2, 2, 4), (64, 32, s), (2, 2, 4))[2], dtype), data(16, dtype)
        want, got = both(kernel[(1,)], x, o, s, B=1)
        _exact(got[1], want[1], f"{kernel.__name__} s={s}")
        at = _lanes((2, 2, 4), (64, 32, s), (2, 2, 4))[0].reshape(-1)
        expect = want[1][at] if kernel is repro_store_kernel else want[1]
        _exact(expect, x if kernel is repro_store_kernel else x[at], "interpreter")
    each(check, [(kernel, s) for kernel in (repro_store_kernel, repro_load_kernel) for s in (3, 8)])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_rank3_masked_strided_loads_bit_exact(dtype):
    def check(shape, strides, bounds):
        at, valid, n = _lanes(shape, strides, bounds)
        x = data(n, dtype)
        want, got = both(load3_kernel[(1,)], x, np.zeros(at.size, dtype.np), *strides, *bounds,
                         A=shape[0], B=shape[1], C=shape[2])
        _exact(want[1], np.where(valid, x[np.where(valid, at, 0)], OTHER).astype(dtype.np).reshape(-1), "interpreter")
        _exact(got[1], want[1], f"{shape} strides {strides} bounds {bounds}")
    cases = [(shape, strides, bounds) for shape, strides in SHAPES_3
             for bounds in (shape, (shape[0] - 1, *shape[1:]), (shape[0], 0, shape[2]), (*shape[:2], shape[2] - 2))]
    cases.append(((3, 2, 5), (32, 16, 3), (2, 1, 3)))
    each(check, cases)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_rank3_masked_strided_stores_bit_exact(dtype):
    def check(shape, strides, bounds):
        at, valid, n = _lanes(shape, strides, bounds)
        x, o = data(shape, dtype), data(n, dtype)
        want, got = both(store3_kernel[(1,)], x, o, *strides, *bounds, A=shape[0], B=shape[1], C=shape[2])
        expect = o.copy()
        expect[at[valid]] = x[valid]
        _exact(want[1], expect, "interpreter")
        _exact(got[1], want[1], f"{shape} strides {strides} bounds {bounds}")
    cases = [(shape, strides, bounds) for shape, strides in SHAPES_3
             for bounds in (shape, (shape[0] - 1, *shape[1:]), (shape[0], shape[1] - 1, shape[2]),
                            (*shape[:2], shape[2] - 2))]
    cases.append(((3, 2, 5), (7, 40, 2), (2, 1, 3)))
    each(check, cases)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_rank4_masked_strided_load_and_store_bit_exact(dtype):
    shape = (2, 3, 2, 4)
    src, dst = (60, 3, 20, 2), (50, 16, 8, 2)

    def check(bounds):
        at, valid, n = _lanes(shape, src, bounds)
        to, _, m = _lanes(shape, dst, bounds)
        x, o = data(n, dtype), data(m, dtype)
        want, got = both(copy4_kernel[(1,)], x, o, *src, *dst, *bounds, A=2, B=3, C=2, D=4)
        expect = o.copy()
        expect[to[valid]] = x[at[valid]]
        _exact(want[1], expect, "interpreter")
        _exact(got[1], want[1], f"bounds {bounds}")
    each(check, [(shape,), ((1, 3, 2, 4),), ((2, 2, 2, 4),), ((2, 3, 1, 4),), ((2, 3, 2, 3),), ((1, 2, 1, 1),)])


@ascdsl.jit
def atomic3_kernel(x_ptr, out_ptr, s, n1, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    a, b, c = tl.arange(0, A)[:, None, None], tl.arange(0, B)[None, :, None], tl.arange(0, C)[None, None, :]
    v = tl.load(x_ptr + tl.program_id(0) * (A * B * C) + a * (B * C) + b * C + c)
    tl.atomic_add(out_ptr + a * (B * C * s) + b * (C * s) + c * s, v, mask=b < n1)


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.int32], ids=str)
def test_rank3_masked_strided_atomics_of_three_programs(dtype):
    def check(s, n1):
        at, valid, n = _lanes((2, 3, 4), (12 * s, 4 * s, s), (2, n1, 4))
        x = RNG.integers(-9, 9, (3, 2, 3, 4)).astype(dtype.np)  # sums of small ints: exact in any order
        want, got = both(atomic3_kernel[(3,)], x, np.zeros(n, dtype.np), s, n1, A=2, B=3, C=4)
        expect = np.zeros(n, dtype.np)
        expect[at[valid]] = x.sum(axis=0)[valid]
        _exact(want[1], expect, "interpreter")
        _exact(got[1], want[1], f"s={s} n1={n1}")
    each(check, [(2, 3), (3, 2), (1, 1)])
