"""Integer vector APIs against NumPy: arithmetic, bitwise ops, shifts, int32 comparisons, bit-mask logic."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ascdsl import sim

SRC = Path(__file__).parent / "kernels" / "intops.cpp"


def run(name, *args, **kw):
    return sim.run_kernel(SRC, name, list(args), 1, **kw)


def ints(rng, dtype, n):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, endpoint=True, dtype=np.int64).astype(dtype)


def test_logic_int16(rng):
    n = 256
    a, b = ints(rng, np.int16, n), ints(rng, np.int16, n)
    out = np.full(6 * n, 99, np.int16)
    res = run("logic_i16", a, b, out, np.uint32(n))
    masked = np.full(n, 99, np.int16)
    masked[:100] = a[:100] & b[:100]
    expect = np.concatenate([a & b, a | b, ~a, (a.astype(np.int64) << 3).astype(np.int16), a >> 2, masked])
    np.testing.assert_array_equal(out, expect)
    assert res.stats.vector_calls["And"] == 2 and res.stats.vector_elements["And"] == n + 100


def test_logic_uint16_shift_is_logical(rng):
    n = 128
    a, b = ints(rng, np.uint16, n), ints(rng, np.uint16, n)
    out = np.zeros(3 * n, np.uint16)
    run("logic_u16", a, b, out, np.uint32(n))
    np.testing.assert_array_equal(out, np.concatenate([a | b, ~a, a >> 5]))


def test_shifts_32_bit(rng):
    n = 128
    a = ints(rng, np.int32, n)
    a[:4] = [-1, -8, -9, 23]
    out = np.zeros(4 * n, np.int32)
    run("shift_32", a, a.copy(), out, np.uint32(n))
    got = out.reshape(4, n)
    np.testing.assert_array_equal(got[0], a >> 4)
    np.testing.assert_array_equal(got[1], (a.astype(np.int64) + 8) >> 4)  # roundEn: round half up
    np.testing.assert_array_equal(got[2].view(np.uint32), a.view(np.uint32) >> 4)
    np.testing.assert_array_equal(got[3], (a.astype(np.int64) << 31).astype(np.int32))


@pytest.mark.parametrize("dtype,name", [(np.int16, "arith_i16"), (np.int32, "arith_i32")])
def test_int_arithmetic_wraps(rng, dtype, name):
    n = 128
    a, b = ints(rng, dtype, n), ints(rng, dtype, n)
    out = np.zeros(9 * n, dtype)
    run(name, a, b, out, np.uint32(n))
    with np.errstate(over="ignore"):
        s = dtype(-7), dtype(3), dtype(5)
        expect = [a + b, a - b, a * b, np.maximum(a, b), np.minimum(a, b), a + s[0], a * s[1], np.maximum(a, s[2]),
                  np.minimum(a, s[2])]
    np.testing.assert_array_equal(out.reshape(9, n), np.stack(expect))


def test_int_abs_composed(rng):
    n = 64
    a = ints(rng, np.int32, n)
    a[0] = np.iinfo(np.int32).min
    out = np.zeros(n, np.int32)
    run("abs_i32", a, a.copy(), out, np.uint32(n))
    np.testing.assert_array_equal(out, np.abs(a))  # NumPy wraps |INT_MIN| to INT_MIN as well


def test_int32_comparisons_as_bit_masks(rng):
    n = 256
    a = rng.integers(-5, 12, n, dtype=np.int32)
    b = rng.integers(-5, 12, n, dtype=np.int32)
    a[:2], b[:2] = [np.iinfo(np.int32).min, np.iinfo(np.int32).max], [np.iinfo(np.int32).max, np.iinfo(np.int32).min]
    out = np.zeros(n // 2, np.uint8)
    run("int_compare", a, b, out, np.uint32(n))
    bits = np.unpackbits(out, bitorder="little").reshape(4, n).astype(bool)
    np.testing.assert_array_equal(bits[0], a == b)
    np.testing.assert_array_equal(bits[1], a < b)
    np.testing.assert_array_equal(bits[2], a <= b)
    np.testing.assert_array_equal(bits[3], a == 7)


def test_masks_combined_then_select(rng):
    n = 256
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(2 * n, np.float32)
    run("mask_select", a, b, out, np.uint32(n))
    np.testing.assert_array_equal(out[:n], np.where((a < 0.5) & (b >= -0.25), a, b))
    np.testing.assert_array_equal(out[n:], np.where(~(a < 0.5), a, np.float32(0)))


def test_compare_scalar_repeat_form(rng):
    a = rng.standard_normal(256).astype(np.float16)
    out = np.zeros(32, np.uint8)
    res = run("compare_scalar_repeat", a, a.copy(), out)
    np.testing.assert_array_equal(np.unpackbits(out, bitorder="little").astype(bool), a > 0)
    assert res.stats.vector_elements["CompareScalar"] == 256


def test_xor_int16_with_and_without_temp(rng):
    n = 128
    a, b = ints(rng, np.int16, n), ints(rng, np.int16, n)
    out = np.zeros(2 * n, np.int16)
    res = run("xor_16", a, b, out, np.uint32(n))
    np.testing.assert_array_equal(out, np.concatenate([a ^ b, a ^ b]))
    assert res.stats.vector_calls["Xor"] == 2


def test_where_on_int32_selects_bits_through_a_float_view(rng):
    n = 64
    a = ints(rng, np.int32, n)
    b = a.copy()
    b[::3] += 1
    a[:4] = [-1, 0x7F800001, 0x7FC00000, np.iinfo(np.int32).min]  # NaN and -0.0 bit patterns survive the move
    b[:4] = a[:4]
    out = np.zeros(2 * n, np.int32)
    run("select_i32", a, b, out, np.uint32(n))
    np.testing.assert_array_equal(out[:n], np.where(a == b, np.int32(-3), a))
