"""int32 tile arithmetic on the simulator (hazard checks on) against the interpreter, bit-exact:
truncating ``//`` and ``%`` (float32 estimate plus exact fix-up), ``abs``, bitwise ops and shifts,
on edge values (INT_MIN, INT_MAX, +-1, large magnitudes) and random ones, with tile and scalar
divisors."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from tests.backend.test_sim import _both, prebuilt

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
        want, got = _both(int_arith_kernel[(ascdsl.cdiv(n, block),)], a, b, np.zeros(4 * n, np.int32), n, d, k,
                          GROUP=group, BLOCK=block)
        for j in range(4):
            np.testing.assert_array_equal(got[2][j * n:(j + 1) * n], want[2][j * n:(j + 1) * n],
                                          err_msg=f"result {group * 4 + j}, n={n}")
    cases = [(300, 256, -5, 7, g) for g in range(OUTPUTS // 4)] + [(33, 32, 1 << 20, 31, 0), (6000, 2048, INT_MIN, 0, 0)]
    prebuilt(check, cases)
    for case in cases:
        check(*case)
    a, b = _operands(300, np.random.default_rng(11))
    want, _ = _both(int_arith_kernel[(2,)], a, b, np.zeros(4 * 300, np.int32), 300, -5, 7, GROUP=0, BLOCK=256)
    q = want[2][:300]  # the spec is C's truncating division
    ok = (a != INT_MIN) | (b != -1)
    assert (q[ok] == (np.trunc(a[ok].astype(np.float64) / b[ok]))).all()
