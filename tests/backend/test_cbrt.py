"""``tl.math.cbrt`` (also ``libdevice.cbrt``): the interpreter against NumPy's float64 cube root, the
simulator's expansion (exp/log and a Newton step) against the interpreter within the dtype's tolerance,
on special values (NaN, +-inf, +-0.0, subnormal, the largest float32) and random ones; int tiles refused
at the call's line."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from ascdsl.language.extra import libdevice
from tests.backend.helpers import FLOATS, both

SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45, -1e-40, 1e-6, -8.0, 27.0, 65504.0, 3.0e38, -3.0e38]


@ascdsl.jit
def cbrt_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    tl.store(out_ptr + offs, tl.math.cbrt(x), mask=mask)
    tl.store(out_ptr + n + offs, libdevice.cbrt(x * 0.5), mask=mask)


def _inputs(n, dtype):
    x = (np.random.default_rng(3).standard_normal(n) * 50).astype(np.float32)
    x[:len(SPECIAL)] = SPECIAL
    with np.errstate(over="ignore"):  # 3e38 is inf in float16
        return x.astype(dtype.np)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_cbrt_interpreter_is_numpys_cube_root_rounded_to_the_dtype(dtype):
    n = 300
    x = _inputs(n, dtype)
    out = np.zeros(2 * n, dtype.np)
    cbrt_kernel[(ascdsl.cdiv(n, 128),)](x, out, n, BLOCK=128, backend="interpreter")
    xf = x.astype(np.float64)
    half = (x.astype(np.float32) * np.float32(0.5)).astype(dtype.np).astype(np.float64)
    want = np.concatenate([np.cbrt(xf), np.cbrt(half)])
    got = out.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_allclose(got, want, rtol=dtype.rtol, atol=0)
    assert got[3] == 0 and np.signbit(got[3]) and got[9] == 3.0 and got[8] == -2.0


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_cbrt_simulator_matches_the_interpreter_within_tolerance(dtype):
    n = 300
    x = _inputs(n, dtype)
    want, got = both(cbrt_kernel[(ascdsl.cdiv(n, 128),)], x, np.zeros(2 * n, dtype.np), n, BLOCK=128)
    g, w = got[1].astype(np.float64), want[1].astype(np.float64)
    np.testing.assert_array_equal(np.signbit(g), np.signbit(w))  # -0.0 and -inf keep their sign
    np.testing.assert_allclose(g, w, rtol=dtype.rtol, atol=dtype.atol)
    if dtype == dtypes.float32:  # the Newton step: within 3 float32 ulps of the cube root (38 without it)
        xf = x.astype(np.float32)
        np.testing.assert_allclose(g, np.cbrt(np.concatenate([xf, xf * np.float32(0.5)]).astype(np.float64)),
                                   rtol=3 * 2.0 ** -24, atol=0)


@ascdsl.jit
def int_cbrt_kernel(x_ptr, out_ptr):
    offs = tl.arange(0, 16)
    tl.store(out_ptr + offs, tl.math.cbrt(tl.load(x_ptr + offs)))


def test_cbrt_of_an_int_tile_is_a_located_error():
    with pytest.raises(ascdsl.CompilationError) as e:
        int_cbrt_kernel[(1,)](np.arange(16, dtype=np.int32), np.zeros(16, np.int32), backend="interpreter")
    assert "cbrt" in str(e.value) and e.value.loc.line == int_cbrt_kernel.fn.__code__.co_firstlineno + 3
