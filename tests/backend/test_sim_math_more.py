"""The rest of Triton's float math on the simulator (hazard checks on) against the interpreter:
isnan/isinf/isfinite/signbit (bit-exact), clamp, fdiv, div_rn, sqrt_rn (bit-exact: Max/Min, Div,
Sqrt), fma, log1p, expm1, log10 and pow (the dtype's tolerance), in float32/float16/bfloat16, on
special values (NaN, +-inf, -0.0, tiny and large) and random ones."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from ascdsl.language.extra import libdevice
from tests.backend.helpers import FLOATS, both
from tests.backend.sweep import FLOAT_SWEEP

SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-6, -1e-6, 1e-3, -0.5, -1.0, 65504.0, 3.0e38]


@ascdsl.jit
def predicate_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, libdevice.isnan(x), mask=mask)
    tl.store(out_ptr + n + offs, libdevice.isinf(x) | (libdevice.signbit(x) & ~libdevice.isnan(x)), mask=mask)
    tl.store(out_ptr + 2 * n + offs, libdevice.isfinite(x), mask=mask)


@pytest.mark.parametrize("dtype", FLOAT_SWEEP)
def test_float_predicates_bit_exact(dtype):
    n = 200
    x = (np.random.default_rng(1).standard_normal(n) * 100).astype(np.float32)
    x[:len(SPECIAL)] = SPECIAL
    with np.errstate(over="ignore"):  # 3e38 is inf in float16
        x = x.astype(dtype.np)
    want, got = both(predicate_kernel[(ascdsl.cdiv(n, 128),)], x, np.zeros(3 * n, np.int8), n, BLOCK=128)
    np.testing.assert_array_equal(got[1], want[1])
    xf = x.astype(np.float32)
    assert (want[1][:n] == np.isnan(xf)).all() and (want[1][2 * n:] == np.isfinite(xf)).all()
    assert (want[1][n:2 * n] == (np.isinf(xf) | np.signbit(xf) & ~np.isnan(xf))).all()


@ascdsl.jit
def exact_math_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = tl.load(y_ptr + offs, mask=mask, other=1.0)
    tl.store(out_ptr + offs, tl.clamp(x, -1.5, 2.0), mask=mask)
    tl.store(out_ptr + n + offs, tl.fdiv(x, y) + tl.div_rn(y, x), mask=mask)
    tl.store(out_ptr + 2 * n + offs, tl.sqrt_rn(tl.abs(x)), mask=mask)


@ascdsl.jit
def inexact_math_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = tl.load(y_ptr + offs, mask=mask, other=1.0)
    tl.store(out_ptr + offs, tl.fma(x, y, 0.5), mask=mask)
    tl.store(out_ptr + n + offs, tl.log1p(tl.abs(x)) + libdevice.expm1(y), mask=mask)
    tl.store(out_ptr + 2 * n + offs, tl.log10(tl.abs(x)), mask=mask)
    tl.store(out_ptr + 3 * n + offs, libdevice.pow(tl.abs(x), y) + libdevice.pow(x, 2.0), mask=mask)


def _inputs(n, dtype):
    rng = np.random.default_rng(2)
    x = (rng.standard_normal(n) * 2).astype(np.float32)
    y = rng.uniform(-3, 3, n).astype(np.float32)
    x[:6] = [1e-6, -1e-7, 1e-3, 0.25, 8.0, 0.0]  # log1p near 0, where log(1 + x) would lose every digit
    y[:6] = [1e-6, -1e-7, 1e-4, -20.0, 0.0, 2.0]  # expm1 near 0 and where exp underflows toward -1
    return x.astype(dtype.np), y.astype(dtype.np)


@pytest.mark.parametrize("dtype", FLOAT_SWEEP)
def test_exact_float_math_bit_exact(dtype):
    n = 300
    x, y = _inputs(n, dtype)
    want, got = both(exact_math_kernel[(ascdsl.cdiv(n, 128),)], x, y, np.zeros(3 * n, dtype.np), n, BLOCK=128)
    bits = f"u{dtype.itemsize}"
    np.testing.assert_array_equal(got[2].view(bits), want[2].view(bits))
    assert (want[2][:n] == np.clip(x, -1.5, 2.0)).all()


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_inexact_float_math_within_tolerance(dtype):
    n = 300
    x, y = _inputs(n, dtype)
    want, got = both(inexact_math_kernel[(ascdsl.cdiv(n, 128),)], x, y, np.zeros(4 * n, dtype.np), n, BLOCK=128)
    np.testing.assert_allclose(got[2].astype(np.float64), want[2].astype(np.float64), rtol=dtype.rtol,
                               atol=dtype.atol)
    if dtype == dtypes.float32:  # the corrections keep full relative precision near 0
        k = np.array([0, 2])
        np.testing.assert_allclose(got[2][n + k], np.log1p(np.abs(x[k].astype(np.float64))) + np.expm1(
            y[k].astype(np.float64)), rtol=1e-6)
