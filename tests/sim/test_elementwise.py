"""Element-wise APIs against NumPy: binary, tensor-scalar, unary, Duplicate and Cast."""
from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from ascdsl import sim

SRC = Path(__file__).parent / "kernels" / "elementwise.cpp"
SENTINEL = -99.0


def run(name, *args, block_dim=1, **kw):
    return sim.run_kernel(SRC, name, list(args), block_dim, **kw)


@pytest.mark.parametrize("dtype,name", [(np.float32, "binary_count_f32"), (np.float16, "binary_count_f16")])
def test_binary_count_form(rng, dtype, name):
    n = 320  # not a multiple of one repeat: the count form has no repeat limit
    a = rng.standard_normal(n).astype(dtype)
    b = rng.uniform(0.5, 2.0, n).astype(dtype)
    out = np.zeros(6 * n, dtype)
    res = run(name, a, b, out, np.uint32(n))
    expect = np.concatenate([a + b, a - b, a * b, a / b, np.maximum(a, b), np.minimum(a, b)])
    np.testing.assert_array_equal(out, expect)
    assert res.stats.vector_calls == {"Add": 1, "Sub": 1, "Mul": 1, "Div": 1, "Max": 1, "Min": 1}
    assert res.stats.vector_elements["Add"] == n
    assert (res.stats.ub_copies, res.stats.gm_copies) == (1, 4)


def test_repeats_run_in_order_so_stride_zero_accumulates(rng):
    x = rng.standard_normal(256).astype(np.float32)
    out = np.zeros(64, np.float32)
    res = run("binary_accumulate", x, np.zeros(256, np.float32), out)
    want = x[:64].copy()
    for k in range(1, 4):
        want = x[64 * k:64 * (k + 1)] + want
    np.testing.assert_array_equal(out, want)
    assert res.stats.vector_elements["Add"] == 3 * 64


def test_binary_int32_wraps(rng):
    n = 64
    a = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
    b = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
    out = np.zeros(5 * n, np.int32)
    run("binary_count_i32", a, b, out, np.uint32(n))
    with np.errstate(over="ignore"):
        expect = np.concatenate([a + b, a - b, a * b, np.maximum(a, b), np.minimum(a, b)])
    np.testing.assert_array_equal(out, expect)


def test_binary_repeat_form_masks_and_strides(rng):
    a = rng.standard_normal(256).astype(np.float32)
    b = rng.standard_normal(256).astype(np.float32)
    out = np.full(3 * 256, SENTINEL, np.float32)
    res = run("binary_repeat", a, b, out)
    expect = np.full(3 * 256, SENTINEL, np.float32)
    for r in range(2):  # continuous mask 40: the first 40 lanes of each repeat; the rest keep dst
        expect[r * 64: r * 64 + 40] = a[r * 64: r * 64 + 40] + b[r * 64: r * 64 + 40]
    lanes = np.array([i for i in range(256) if (i % 64) % 8 >= 4])  # bit mask 0xF0F0...
    expect[256 + lanes] = a[lanes] * b[lanes]
    for r in range(2):  # dst blocks 2 apart (repeat stride 16), src1 one block re-read everywhere
        for blk in range(8):
            for e in range(8):
                d = (r * 16 + blk * 2) * 8 + e
                expect[512 + d] = a[(r * 8 + blk) * 8 + e] - b[e]
    np.testing.assert_array_equal(out, expect)
    assert res.stats.vector_elements["Add"] == 80
    assert res.stats.vector_elements["Mul"] == 128


def test_scalar_ops(rng):
    n = 128
    a = rng.standard_normal(n).astype(np.float32)
    out = np.full(5 * n, SENTINEL, np.float32)
    run("scalar_ops", a, a.copy(), out, np.uint32(n))
    masked = np.full(n, SENTINEL, np.float32)
    masked[:16], masked[64:80] = a[:16] * 3, a[64:80] * 3
    expect = np.concatenate([a + np.float32(1.5), a * np.float32(-2), np.maximum(a, 0.25), np.minimum(a, 0.25), masked])
    np.testing.assert_array_equal(out, expect)


def test_scalar_ops_half(rng):
    n = 128
    a = rng.standard_normal(n).astype(np.float16)
    out = np.zeros(2 * n, np.float16)
    run("scalar_ops_f16", a, a.copy(), out, np.uint32(n))
    np.testing.assert_array_equal(out, np.concatenate([a * np.float16(3), a + np.float16(0.1)]))


def test_unary_f32(rng):
    n = 64
    a = rng.uniform(-4, 4, n).astype(np.float32)
    out = np.zeros(7 * n, np.float32)
    run("unary_f32", a, out, np.uint32(n))
    got = out.reshape(7, n)
    pos = a > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        np.testing.assert_allclose(got[0], np.exp(a), rtol=1e-6)
        np.testing.assert_allclose(got[1][pos], np.log(a[pos]), rtol=1e-6)
        assert np.isnan(got[1][~pos]).all()
        np.testing.assert_array_equal(got[2], np.abs(a))
        np.testing.assert_array_equal(got[3][pos], np.sqrt(a[pos]))
        np.testing.assert_array_equal(got[4][pos], np.float32(1) / np.sqrt(a[pos]))
        np.testing.assert_array_equal(got[5], np.float32(1) / a)
        np.testing.assert_array_equal(got[6], np.maximum(a, 0))


def test_unary_f16(rng):
    n = 128
    a = rng.uniform(0.1, 4, n).astype(np.float16)
    out = np.zeros(7 * n, np.float16)
    run("unary_f16", a, out, np.uint32(n))
    got = out.reshape(7, n).astype(np.float32)
    x = a.astype(np.float32)
    for row, ref in zip(got, [np.exp(x), np.log(x), x, np.sqrt(x), 1 / np.sqrt(x), 1 / x, x]):
        np.testing.assert_allclose(row, ref.astype(np.float16).astype(np.float32), rtol=1e-3)  # one half ulp


def test_unary_repeat_bit_mask(rng):
    a = rng.standard_normal(128).astype(np.float32)
    out = np.full(128, SENTINEL, np.float32)
    run("unary_repeat", a, out)
    expect = np.full(128, SENTINEL, np.float32)
    expect[0:8], expect[64:72] = np.abs(a[0:8]), np.abs(a[64:72])
    np.testing.assert_array_equal(out, expect)


def test_duplicate():
    out = np.full(320, SENTINEL, np.float32)
    run("duplicate", np.zeros(64, np.float32), out)
    expect = np.full(320, SENTINEL, np.float32)
    expect[:64] = 7
    for r in range(2):
        for lane in range(12):
            expect[64 + (r * 16 + lane // 8 * 2) * 8 + lane % 8] = -1
    np.testing.assert_array_equal(out, expect)


# ---- Cast ----
MODES = {"CAST_NONE": 0, "CAST_RINT": 1, "CAST_FLOOR": 2, "CAST_CEIL": 3, "CAST_ROUND": 4, "CAST_TRUNC": 5, "CAST_ODD": 6}


def neighbours(x: np.ndarray, narrow):
    """The two values of the narrow type bracketing each x (lo <= x <= hi), found by stepping ulps."""
    r = x.astype(narrow)
    up = r.astype(np.float64) < x
    down = r.astype(np.float64) > x
    with np.errstate(over="ignore"):  # stepping past the largest finite value is never selected
        lo = np.where(down, np.nextafter(r, narrow(-np.inf)), r).astype(narrow)
        hi = np.where(up, np.nextafter(r, narrow(np.inf)), r).astype(narrow)
    return lo, hi


def pick(x: np.ndarray, lo: np.ndarray, hi: np.ndarray, mode: str, lo_odd, hi_odd):
    xl, xh = lo.astype(np.float64), hi.astype(np.float64)
    exact = xl == xh
    if mode in ("CAST_RINT", "CAST_NONE"):
        tie_even = np.where(lo_odd, hi, lo)
        nearer = np.where(x - xl < xh - x, lo, hi)
        return np.where(exact, lo, np.where(x - xl == xh - x, tie_even, nearer))
    if mode == "CAST_FLOOR":
        return lo
    if mode == "CAST_CEIL":
        return hi
    if mode == "CAST_TRUNC":
        return np.where(x > 0, lo, hi)
    if mode == "CAST_ROUND":
        nearer = np.where(x - xl < xh - x, lo, hi)
        return np.where(x - xl == xh - x, np.where(x > 0, hi, lo), nearer)
    return np.where(exact, lo, np.where(lo_odd, lo, hi))  # CAST_ODD


HALF_INPUTS = np.array(
    [1.0, 1 + 2**-11, 1 + 3 * 2**-11, -(1 + 2**-11), 2.5e-7, -3.1e-5, 65504.0, 0.1, -0.1, 1234.567, 3.14159, -2.71828,
     6.0e-8, 1e-3, -7.77, 100.03125] * 4, np.float32)


@pytest.mark.parametrize("mode", ["CAST_NONE", "CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND", "CAST_TRUNC", "CAST_ODD"])
def test_cast_float_to_half_every_mode(mode):
    out = np.zeros(HALF_INPUTS.size, np.float16)
    run("cast_f32_f16", HALF_INPUTS, out, np.uint32(HALF_INPUTS.size), np.int32(MODES[mode]))
    x = HALF_INPUTS.astype(np.float64)
    lo, hi = neighbours(x, np.float16)
    expect = pick(x, lo, hi, mode, lo.view(np.uint16) & 1 == 1, hi.view(np.uint16) & 1 == 1)
    np.testing.assert_array_equal(out.view(np.uint16), expect.view(np.uint16))


def test_cast_rint_is_half_to_even_and_round_is_away_from_zero():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 1.2, -1.7] * 2, np.float32)
    out = np.zeros(x.size, np.int32)
    run("cast_f32_i32", x, out, np.uint32(x.size), np.int32(MODES["CAST_RINT"]))
    np.testing.assert_array_equal(out[:8], [0, 2, 2, 0, -2, -2, 1, -2])
    run("cast_f32_i32", x, out, np.uint32(x.size), np.int32(MODES["CAST_ROUND"]))
    np.testing.assert_array_equal(out[:8], [1, 2, 3, -1, -2, -3, 1, -2])
    run("cast_f32_i32", x, out, np.uint32(x.size), np.int32(MODES["CAST_FLOOR"]))
    np.testing.assert_array_equal(out[:8], [0, 1, 2, -1, -2, -3, 1, -2])
    run("cast_f32_i32", x, out, np.uint32(x.size), np.int32(MODES["CAST_CEIL"]))
    np.testing.assert_array_equal(out[:8], [1, 2, 3, 0, -1, -2, 2, -1])
    run("cast_f32_i32", x, out, np.uint32(x.size), np.int32(MODES["CAST_TRUNC"]))
    np.testing.assert_array_equal(out[:8], [0, 1, 2, 0, -1, -2, 1, -1])


@pytest.mark.parametrize("mode", ["CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND", "CAST_TRUNC"])
def test_cast_int64_to_float_rounds_once_in_every_mode(mode):
    """int64_t -> float (CANN 8.1 dav_c220 has it in these five modes): one rounding of the exact integer,
    ties included (2**60 + 2**36 is halfway between floats; + 1 is above it, which a double would lose)."""
    x = np.array([2**60 + 2**36, 2**60 + 2**36 + 1, -(2**60 + 2**36), -(2**60 + 2**36 + 1), 2**60 + 3 * 2**36,
                  2**24 + 1, -(2**24 + 3), 7, 2**63 - 1, -2**63, 2**53 + 1, -(2**53 + 1), 0, -1, 2**40 + 2**16, 5],
                 np.int64)
    out = np.zeros(x.size, np.float32)
    run("cast_i64_f32", x, out, np.uint32(x.size), np.int32(MODES[mode]))
    np.testing.assert_array_equal(out, np.array([_rounded(int(v), mode) for v in x], np.float32))


def _rounded(v: int, mode: str) -> np.float32:
    """``v`` rounded once to float32 in ``mode``, from its two float neighbours compared as Python integers."""
    lo = _float_below(v)
    hi = lo if int(lo) == v else np.nextafter(lo, np.float32(np.inf))
    down, up = v - int(lo), int(hi) - v
    if down == 0 or mode == "CAST_FLOOR" or mode == "CAST_TRUNC" and v > 0:
        return lo
    if mode in ("CAST_CEIL", "CAST_TRUNC"):
        return hi
    if down != up:
        return lo if down < up else hi
    if mode == "CAST_ROUND":
        return hi if v > 0 else lo
    return lo if lo.view(np.uint32) & 1 == 0 else hi  # CAST_RINT: the even one


def _float_below(v: int) -> np.float32:
    """The largest float32 not above the integer ``v`` (exactly: compared as Python integers)."""
    f = np.float32(v)
    while int(f) > v:
        f = np.nextafter(f, np.float32(-np.inf))
    return f


def test_cast_float_to_integral_float_and_int_to_float():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 1.2, -1.7], np.float32)
    out = np.zeros(8, np.float32)
    run("cast_f32_f32", x, out, np.uint32(8), np.int32(MODES["CAST_RINT"]))
    np.testing.assert_array_equal(out, np.rint(x))
    big = np.array([16777217, -16777219, 2**31 - 1, 3, 33554435, 7, 8, 9], np.int32)  # not all exact in float
    run("cast_i32_f32", big, out, np.uint32(8), np.int32(MODES["CAST_NONE"]))
    np.testing.assert_array_equal(out, big.astype(np.float32))  # NumPy rounds to nearest even too


def test_cast_half_and_bf16_to_float_are_exact(rng):
    h = rng.standard_normal(32).astype(np.float16)
    out = np.zeros(32, np.float32)
    run("cast_f16_f32", h, out, np.uint32(32), np.int32(0))
    np.testing.assert_array_equal(out, h.astype(np.float32))
    b = rng.standard_normal(32).astype(ml_dtypes.bfloat16)
    run("cast_bf16_f32", b, out, np.uint32(32), np.int32(0))
    np.testing.assert_array_equal(out, b.astype(np.float32))


@pytest.mark.parametrize("mode", ["CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND", "CAST_TRUNC"])
def test_cast_float_to_bf16(rng, mode):
    x = np.concatenate([rng.standard_normal(24), [1 + 2**-8, 1 + 3 * 2**-8, -(1 + 2**-8), 3.0, 1e-30, -7e20, 0.1, 255.5]]).astype(np.float32)
    out = np.zeros(x.size, ml_dtypes.bfloat16)
    run("cast_f32_bf16", x, out, np.uint32(x.size), np.int32(MODES[mode]))
    bits = x.view(np.uint32)
    toward_zero = (bits & 0xFFFF0000).view(np.float32)
    away = np.where(toward_zero == x, toward_zero, ((bits & 0xFFFF0000) + 0x10000).view(np.float32))
    lo = np.where(x > 0, toward_zero, away).astype(np.float64)
    hi = np.where(x > 0, away, toward_zero).astype(np.float64)
    lo_b, hi_b = lo.astype(np.float32).astype(ml_dtypes.bfloat16), hi.astype(np.float32).astype(ml_dtypes.bfloat16)
    expect = pick(x.astype(np.float64), lo_b, hi_b, mode, lo_b.view(np.uint16) & 1 == 1, hi_b.view(np.uint16) & 1 == 1)
    np.testing.assert_array_equal(out.view(np.uint16), expect.view(np.uint16))
    if mode == "CAST_RINT":
        np.testing.assert_array_equal(out.view(np.uint16), x.astype(ml_dtypes.bfloat16).view(np.uint16))


def test_cast_half_to_int8_saturates():
    h = np.array([300, -300, 1.5, -2.5] * 8, np.float16)
    out = np.zeros(32, np.int8)
    run("cast_f16_i8", h, out, np.uint32(32), np.int32(MODES["CAST_RINT"]))
    np.testing.assert_array_equal(out[:4], [127, -128, 2, -2])


def test_cast_repeat_form_half_to_float(rng):
    h = rng.standard_normal(128).astype(np.float16)
    out = np.zeros(128, np.float32)
    run("cast_repeat", h, out)
    np.testing.assert_array_equal(out, h.astype(np.float32))
