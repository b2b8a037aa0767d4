"""int32 tile arithmetic on the simulator (hazard checks on) against the interpreter, bit-exact:
truncating ``//`` and ``%`` (float32 estimate plus exact fix-up), ``abs``, bitwise ops and shifts,
on edge values (INT_MIN, INT_MAX, +-1, large magnitudes) and random ones, with tile and scalar
divisors."""
import numpy as np

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from tests.backend.helpers import both, each

INT_MIN, INT_MAX = np.iinfo(np.int32).min, np.iinfo(np.int32).max


@ascdsl.jit
def int_result(a, b, d, k, I: tl.constexpr):
    results = (a // b, a % b, a // 7, a % -3, a // d, a % d, 1000003 // b, tl.abs(a), -a,
               a & b, a | b, a ^ b, ~a, a & 0xFF, a | -16, a << 3, a >> 5, a >> k, a << k,
               tl.maximum(a, b), tl.minimum(a, 3), a * b - a, (a + 1) // (b | 1), a % (b & 7 | 1))
    return results[I]


@ascdsl.jit
def int_arith_kernel(a_ptr, b_ptr, out_ptr, n, d, k, GROUP: tl.constexpr, BLOCK: tl.constexpr):
    """Four of the results of `int_result` (a kernel stores at most four tiles)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=1)
    b = tl.load(b_ptr + offs, mask=mask, other=1)
    for j in tl.static_range(4):
        tl.store(out_ptr + j * n + offs, int_result(a, b, d, k, GROUP * 4 + j), mask=mask)


OUTPUTS = 24


def _operands(n, rng):
    edges = np.array([INT_MIN, INT_MAX, -1, 0, 1, -7, 7, INT_MIN + 1, 2 ** 30, -(2 ** 30), 2 ** 24 + 1,
                      -(2 ** 24) - 1, 123456789, -987654321], np.int32)
    divisors = np.array([-1, 1, INT_MIN, INT_MAX, 2, -2, 3, -3, 2 ** 30 + 1, -(2 ** 30) - 1, 65537, -7, 2 ** 24 + 1,
                         1000], np.int32)
    a = rng.integers(INT_MIN, INT_MAX, n, dtype=np.int64, endpoint=True).astype(np.int32)
    b = rng.integers(INT_MIN, INT_MAX, n, dtype=np.int64, endpoint=True).astype(np.int32)
    b[n // 3:] = rng.integers(-300, 300, n - n // 3)
    magnitude = np.exp2(rng.uniform(0, 31, n // 3)).astype(np.int64).clip(1, INT_MAX)  # log-uniform divisors
    b[n // 3: n // 3 + len(magnitude)] = (magnitude * rng.choice([-1, 1], len(magnitude))).astype(np.int32)
    b[b == 0] = 5
    a[: len(edges) ** 2] = np.repeat(edges, len(divisors))[: min(n, len(edges) ** 2)]
    b[: len(edges) ** 2] = np.tile(divisors, len(edges))[: min(n, len(edges) ** 2)]
    return a, b


def test_int32_arithmetic_bit_exact():
    rng = np.random.default_rng(11)

    def check(n, block, d, k, group):
        a, b = _operands(n, rng)
        want, got = both(int_arith_kernel[(ascdsl.cdiv(n, block),)], a, b, np.zeros(4 * n, np.int32), n, d, k,
                          GROUP=group, BLOCK=block)
        for j in range(4):
            np.testing.assert_array_equal(got[2][j * n:(j + 1) * n], want[2][j * n:(j + 1) * n],
                                          err_msg=f"result {group * 4 + j}, n={n}")
    cases = [(300, 256, -5, 7, g) for g in range(OUTPUTS // 4)] + [(33, 32, 1 << 20, 31, 0), (6000, 2048, INT_MIN, 0, 0)]
    each(check, cases)
    a, b = _operands(300, np.random.default_rng(11))
    want, _ = both(int_arith_kernel[(2,)], a, b, np.zeros(4 * 300, np.int32), 300, -5, 7, GROUP=0, BLOCK=256)
    q = want[2][:300]  # the spec is C's truncating division
    ok = (a != INT_MIN) | (b != -1)
    assert (q[ok] == (np.trunc(a[ok].astype(np.float64) / b[ok]))).all()


@ascdsl.jit
def byte_cast_kernel(q_ptr, x_ptr, f_ptr, out_ptr, bytes_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    q = tl.load(q_ptr + offs, mask=mask, other=0)  # int8
    x = tl.load(x_ptr + offs, mask=mask, other=0)  # int32
    f = tl.load(f_ptr + offs, mask=mask, other=0.0)  # float32
    tl.store(out_ptr + offs, q.to(tl.int32) * 3 + q.to(tl.float32).to(tl.int32), mask=mask)
    tl.store(bytes_ptr + offs, x.to(tl.int8), mask=mask)
    tl.store(bytes_ptr + n + offs, f.to(tl.int8), mask=mask)
    tl.store(bytes_ptr + 2 * n + offs, (x.to(tl.uint8).to(tl.int32) - 128).to(tl.int8), mask=mask)


def test_casts_to_and_from_int8_bit_exact():
    rng = np.random.default_rng(12)
    n = 300
    q = rng.integers(-128, 128, n).astype(np.int8)
    x = rng.integers(INT_MIN, INT_MAX, n, dtype=np.int64).astype(np.int32)
    f = (rng.standard_normal(n) * 200).astype(np.float32)
    f[:5] = [np.nan, np.inf, -np.inf, 127.9, -128.7]
    want, got = both(byte_cast_kernel[(ascdsl.cdiv(n, 128),)], q, x, f, np.zeros(n, np.int32),
                      np.zeros(3 * n, np.int8), n, BLOCK=128)
    np.testing.assert_array_equal(got[3], want[3])
    np.testing.assert_array_equal(got[4], want[4])
    assert (want[4][:n] == x.astype(np.int8)).all() and (want[3] == q.astype(np.int32) * 4).all()
    assert list(want[4][n:n + 5]) == [0, 127, -128, 127, -128]


@ascdsl.jit
def byte_math_kernel(a_ptr, b_ptr, out_ptr, flags_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)  # int8
    b = tl.load(b_ptr + offs)
    tl.store(out_ptr + offs, a + b)  # wraps in int8
    tl.store(out_ptr + BLOCK + offs, a * 3 - (b >> 1) ^ 0x55)
    tl.store(out_ptr + 2 * BLOCK + offs, tl.where(a > b, a // 3, tl.maximum(b, -100)))
    tl.store(flags_ptr + offs, (a & 1) == 0)


def test_int8_math_bit_exact():
    rng = np.random.default_rng(13)
    a, b = (rng.integers(-128, 128, 256).astype(np.int8) for _ in range(2))
    a[:4], b[:4] = [127, -128, 100, -128], [1, -1, 100, -128]
    want, got = both(byte_math_kernel[(1,)], a, b, np.zeros(3 * 256, np.int8), np.zeros(256, np.bool_), BLOCK=256)
    np.testing.assert_array_equal(got[2], want[2])
    np.testing.assert_array_equal(got[3], want[3])
    with np.errstate(over="ignore"):
        assert (want[2][:256] == a + b).all()


@ascdsl.jit
def byte_accumulator_kernel(in_ptr, out_ptr, Y, START: tl.constexpr, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
    rows = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    acc = tl.full([XBLOCK, RBLOCK], START, in_ptr.dtype.element_ty)
    for r in range(0, Y, RBLOCK):
        acc = acc ^ tl.load(in_ptr + (r + tl.arange(0, RBLOCK))[None, :] + Y * rows[:, None])
    tl.store(out_ptr + rows, tl.xor_sum(acc, 1))


def test_8_bit_loop_accumulators_filled_from_a_constant_bit_exact():
    """An int8/uint8 tile a loop accumulates, starting from ``tl.full`` of a constant, is filled as the byte
    twice over its int16 view (A2 has no 8-bit ``Duplicate``: it was a g++ error about generated code)."""
    rng = np.random.default_rng(9)
    for dtype, start in ((np.int8, -3), (np.uint8, 200), (np.int8, 0)):
        x = rng.integers(0, 256, (64, 96)).astype(np.uint8).view(dtype)
        want, got = both(byte_accumulator_kernel[(2,)], x, np.zeros(64, dtype), 96, START=start, XBLOCK=32,
                         RBLOCK=32)
        np.testing.assert_array_equal(got[1], want[1])
        start_byte = np.array(start).astype(dtype)
        expect = np.bitwise_xor.reduce(x.reshape(64, 3, 32), axis=1)
        expect = np.bitwise_xor.reduce(expect ^ start_byte, axis=1)
        np.testing.assert_array_equal(want[1], expect)


@ascdsl.jit
def bf16_int_cast_kernel(b_ptr, i_ptr, to_int_ptr, to_bf16_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(to_int_ptr + offs, tl.load(b_ptr + offs).to(tl.int32))
    tl.store(to_bf16_ptr + offs, tl.load(i_ptr + offs).to(tl.bfloat16))


def test_bfloat16_and_int32_cast_through_float32_bit_exact():
    """bfloat16 -> int32 truncates (NaN 0, saturating), int32 -> bfloat16 rounds through float32, as the
    interpreter's casts (A2 has no direct Cast between them; was "does not support casting")."""
    rng = np.random.default_rng(3)
    f = (rng.standard_normal(64) * 1e5).astype(np.float32)
    f[:6] = [np.nan, np.inf, -np.inf, 3e9, -2.7, 0.5]
    b = f.astype(dtypes.bfloat16.np)
    i = rng.integers(INT_MIN, INT_MAX, 64, dtype=np.int64).astype(np.int32)
    want, got = both(bf16_int_cast_kernel[(1,)], b, i, np.zeros(64, np.int32), np.zeros(64, dtypes.bfloat16.np),
                     BLOCK=64)
    assert list(want[2][:6]) == [0, INT_MAX, INT_MIN, INT_MAX, -2, 0]
    np.testing.assert_array_equal(got[2], want[2])
    np.testing.assert_array_equal(got[3].view(np.uint16), want[3].view(np.uint16))
