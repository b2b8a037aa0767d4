"""The numerics rules (ascdsl.numerics) as the interpreter applies them to kernels."""
import ml_dtypes
import numpy as np
import pytest
from irbuild import KernelBuilder, Op, bf16, f16, f32, ptr
from test_interpreter import apply

from ascdsl import dtypes
from ascdsl.interpreter import run

RNG = np.random.default_rng(1)
BF16, F16, F32 = ml_dtypes.bfloat16, np.float16, np.float32


def to_bf16(x64: np.ndarray) -> np.ndarray:
    """Round float64 to bfloat16 once, to nearest even (ml_dtypes rounds via float32: twice).
    Valid for results in bfloat16's normal range."""
    bits = x64.view(np.uint64)
    lsb = (bits >> np.uint64(45)) & np.uint64(1)
    bits = (bits + np.uint64(0x0FFFFFFFFFFF) + lsb) & ~np.uint64(0x1FFFFFFFFFFF)
    return bits.view(np.float64).astype(F32).astype(BF16)


def finite_halves(n: int) -> np.ndarray:
    """Random float16 bit patterns: normals, subnormals, zeros of both signs; no inf/NaN."""
    x = RNG.integers(0, 1 << 16, n, dtype=np.uint32).astype(np.uint16).view(F16)
    return x[np.isfinite(x)]


def normal_bf16(n: int) -> np.ndarray:
    return (RNG.choice([-1, 1], n) * np.exp2(RNG.uniform(-20, 20, n))).astype(F32).astype(BF16)


def test_bf16_add_rounds_once_per_op():
    """The known Triton-interpreter bug: bf16 2.5 + 2.0 must be 4.5 exactly."""
    assert apply(Op.ADD, [np.array([2.5], BF16), np.array([2.0], BF16)], BF16)[0] == 4.5


def test_16_bit_results_round_after_every_op():
    """(1 + 2**-8) + 2**-8 in bf16: the first add ties to 1.0, so the second gives 1.0 again
    (computing the whole expression in float32 would give 1 + 2**-7)."""
    k = KernelBuilder(x=ptr(bf16), out=ptr(bf16))
    x, out = k.params
    tiny = k.load(x)
    k.store(out, k.op(Op.ADD, k.op(Op.ADD, k.const(1.0, bf16), tiny), tiny))
    got = np.zeros(1, BF16)
    run(k.build(), [np.array([2.0**-8], BF16), got], (1,))
    assert got[0] == 1.0


@pytest.mark.parametrize("op, fn", [(Op.ADD, np.add), (Op.SUB, np.subtract), (Op.MUL, np.multiply),
                                    (Op.DIV, np.divide), (Op.MAXIMUM, np.maximum), (Op.MINIMUM, np.minimum)])
def test_float16_binary_ops_are_correctly_rounded(op, fn):
    a, b = finite_halves(4000), finite_halves(4000)
    n = min(a.size, b.size)
    a, b = a[:n], b[:n]
    with np.errstate(all="ignore"):  # overflow to inf and 0/0 are part of the test
        want = fn(a.astype(np.float64), b.astype(np.float64)).astype(F16)  # float64 -> float16 rounds once
    np.testing.assert_array_equal(apply(op, [a, b], F16), want)


@pytest.mark.parametrize("op, fn", [(Op.ADD, np.add), (Op.SUB, np.subtract), (Op.MUL, np.multiply),
                                    (Op.DIV, np.divide)])
def test_bfloat16_binary_ops_are_correctly_rounded(op, fn):
    a, b = normal_bf16(4000), normal_bf16(4000)
    want = to_bf16(fn(a.astype(np.float64), b.astype(np.float64)))
    np.testing.assert_array_equal(apply(op, [a, b], BF16).view(np.uint16), want.view(np.uint16))


def test_sqrt_is_correctly_rounded_in_16_bit():
    h = np.abs(finite_halves(4000))
    np.testing.assert_array_equal(apply(Op.SQRT, [h], F16), np.sqrt(h.astype(np.float64)).astype(F16))
    b = np.abs(normal_bf16(4000))
    np.testing.assert_array_equal(apply(Op.SQRT, [b], BF16), to_bf16(np.sqrt(b.astype(np.float64))))


@pytest.mark.parametrize("op, fn", [(Op.EXP, np.exp), (Op.LOG, np.log), (Op.RSQRT, lambda x: 1 / np.sqrt(x)),
                                    (Op.SIGMOID, lambda x: 1 / (1 + np.exp(-x)))])
@pytest.mark.parametrize("dtype", dtypes.FLOATS, ids=str)
def test_transcendentals_within_the_dtype_tolerance(op, fn, dtype):
    x = RNG.uniform(0.01 if op in (Op.LOG, Op.RSQRT) else -10, 10, 2000).astype(dtype.np)
    got = apply(op, [x], dtype.np).astype(np.float64)
    np.testing.assert_allclose(got, fn(x.astype(np.float64)), rtol=dtype.rtol, atol=dtype.atol)


def test_rsqrt_and_sigmoid_are_evaluated_in_float32_and_rounded_once():
    x = RNG.uniform(0.01, 10, 500).astype(F16)
    x32 = x.astype(F32)
    np.testing.assert_array_equal(apply(Op.RSQRT, [x], F16), (1 / np.sqrt(x32)).astype(F16))
    np.testing.assert_array_equal(apply(Op.SIGMOID, [x], F16), (1 / (1 + np.exp(-x32))).astype(F16))


@pytest.mark.parametrize("dtype, big", [(f16, 2048.0), (bf16, 256.0)], ids=str)
def test_sum_accumulates_in_float32_and_rounds_once(dtype, big):
    """[big, 1, 1]: rounding after each add would give big twice (ties to even); once gives big + 2."""
    k = KernelBuilder(x=ptr(dtype), out=ptr(dtype))
    x, out = k.params
    s = k.reduce(Op.SUM, k.load(k.op(Op.PTR_ADD, x, k.arange(0, 3))))
    assert s.type.dtype == dtype
    k.store(out, s)
    got = np.zeros(1, dtype.np)
    run(k.build(), [np.array([big, 1, 1], dtype.np), got], (1,))
    assert got[0] == big + 2


def test_integer_division_matches_c_on_random_operands():
    a = RNG.integers(-2**31, 2**31, 5000).astype(np.int32)
    b = RNG.integers(-1000, 1000, 5000).astype(np.int32)
    b[b == 0] = 7
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    q = np.sign(a64) * np.sign(b64) * (np.abs(a64) // np.abs(b64))
    np.testing.assert_array_equal(apply(Op.IDIV, [a, b], np.int32), q)
    np.testing.assert_array_equal(apply(Op.MOD, [a, b], np.int32), a - q * b)


def test_float_to_int_casts_truncate_toward_zero_and_saturate():
    x = np.array([2.7, -2.7, 0.5, -0.5, 3e9, -3e9, np.inf, -np.inf, np.nan, 2147483520.0], F32)
    got = apply(Op.CAST, [x], np.int32)
    assert got.tolist() == [2, -2, 0, 0, 2**31 - 1, -2**31, 2**31 - 1, -2**31, 0, 2147483520]
    assert apply(Op.CAST, [np.array([300.0, -5.0, 2.9], BF16)], np.uint8).tolist() == [255, 0, 2]


def test_casts_to_floats_round_to_nearest_even():
    ties = np.array([1 + 2**-8, 1 + 3 * 2**-8, -(1 + 2**-8), 1 + 2**-8 + 2**-20], F32)
    assert apply(Op.CAST, [ties], BF16).astype(F32).tolist() == [1.0, 1 + 2**-6, -1.0, 1 + 2**-7]
    ints = np.array([2**24 + 1, 2**24 + 3, -7], np.int32)
    assert apply(Op.CAST, [ints], F32).tolist() == [2**24, 2**24 + 4, -7]
    halves = finite_halves(2000)
    want = halves.astype(F32).astype(BF16)
    np.testing.assert_array_equal(apply(Op.CAST, [halves], BF16).view(np.uint16), want.view(np.uint16))
    floats = np.array([0.0, -0.0, 0.1, np.nan], F32)
    assert apply(Op.CAST, [floats], np.bool_).tolist() == [False, False, True, True]


def test_int_to_bfloat16_rounds_through_float32():
    """Documented: 2**24 + 2**16 + 1 rounds to float32 2**24 + 2**16, a bf16 tie that goes to even."""
    got = apply(Op.CAST, [np.array([2**24 + 2**16 + 1], np.int32)], BF16)
    assert got.astype(np.float64)[0] == 2**24


def test_mixed_kernel_dtypes_follow_the_result_type():
    """A bf16 tile times a bf16 constant, compared in bf16, selected, stored: every step in bf16."""
    k = KernelBuilder(x=ptr(bf16), out=ptr(f32))
    x, out = k.params
    v = k.load(k.op(Op.PTR_ADD, x, k.arange(0, 4)))
    scaled = k.op(Op.MUL, v, 1.0 / 3.0)
    selected = k.op(Op.WHERE, k.op(Op.GT, v, 0.0), scaled, v)
    k.store(k.op(Op.PTR_ADD, out, k.arange(0, 4)), k.cast(selected, f32))
    xs, got = np.array([3, -1, 1.5, 7], BF16), np.zeros(4, F32)
    run(k.build(), [xs, got], (1,))
    third = np.array(1 / 3).astype(F32).astype(BF16)
    want = np.where(xs.astype(F32) > 0, (xs.astype(F32) * third.astype(F32)).astype(BF16), xs).astype(F32)
    np.testing.assert_array_equal(got, want)
