"""Math builtins on scalars (``tl.rsqrt(ms + eps)`` of an RMSNorm, ``sqrt``/``exp``/``log``/``abs``/
``sigmoid``/``exp2`` of a scalar argument) on the simulator against the interpreter: each runs on a
one-element tile, so the results are those of the tile ops (bit-exact where the tile op is)."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from tests.backend.helpers import FLOATS, both, data


@ascdsl.jit
def rms_scale_kernel(x_ptr, out_ptr, n, eps, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    ms = tl.sum(x * x, axis=0) / n
    tl.store(out_ptr + offs, x * tl.rsqrt(ms + eps), mask=mask)


@ascdsl.jit
def scalar_math_kernel(x_ptr, out_ptr, s, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x * tl.sqrt(tl.abs(s)))
    tl.store(out_ptr + BLOCK + offs, x + tl.exp(s))
    tl.store(out_ptr + 2 * BLOCK + offs, x - tl.log(tl.abs(s) + 1.0))
    tl.store(out_ptr + 3 * BLOCK + offs, x * tl.sigmoid(s) + tl.exp2(s))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_rsqrt_of_a_reduced_scalar(dtype):
    for n in (1, 33, 200):
        x = data(n, dtype)
        want, got = both(rms_scale_kernel[(1,)], x, np.zeros(n, dtype.np), n, 1e-5, BLOCK=256)
        np.testing.assert_allclose(got[1].astype(np.float64), want[1].astype(np.float64),
                                   rtol=dtype.rtol, atol=dtype.atol, err_msg=f"n={n}")


@pytest.mark.parametrize("s", [-2.5, 0.75])
def test_math_builtins_on_a_scalar_argument(s):
    x = data(64, dtypes.float32)
    want, got = both(scalar_math_kernel[(1,)], x, np.zeros(4 * 64, np.float32), s, BLOCK=64)
    np.testing.assert_array_equal(got[1][:64], want[1][:64])  # sqrt and abs are exact
    np.testing.assert_allclose(got[1], want[1], rtol=dtypes.float32.rtol, atol=dtypes.float32.atol)


@ascdsl.jit
def exact_scalar_ops_kernel(x_ptr, out_ptr, s, t, i, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    bits = (~i) * 1000 + tl.abs(i) * 100 + (i << 3) + (i >> 1)
    flags = tl.math.isnan(s).to(tl.int32) + 2 * tl.math.isinf(s).to(tl.int32) + 4 * tl.math.isfinite(t).to(tl.int32)
    tl.store(out_ptr + offs, x + tl.where(s > t, s, t))
    tl.store(out_ptr + BLOCK + offs, x + bits.to(tl.float32))
    tl.store(out_ptr + 2 * BLOCK + offs, x + flags.to(tl.float32))


@pytest.mark.parametrize("s,t,i", [(1.5, -2.0, -7), (float("nan"), 3.0, 12), (float("-inf"), float("inf"), 0)],
                         ids=["finite", "nan", "inf"])
def test_exact_scalar_ops_bit_exact(s, t, i):
    """``where``, ``~``, int ``abs``, shifts, isnan/isinf/isfinite of scalars: C expressions."""
    x = data(32, dtypes.float32)
    want, got = both(exact_scalar_ops_kernel[(1,)], x, np.zeros(3 * 32, np.float32), s, t, i, BLOCK=32)
    assert got[1].tobytes() == want[1].tobytes()
