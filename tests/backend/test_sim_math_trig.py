"""Trigonometric, hyperbolic and sign math on the simulator (hazard checks on) against the interpreter:
tan, sinh, cosh, asin, acos, atan, asinh, acosh, atanh (the high-level APIs with their sharedTmpBuffer),
atan2 and hypot (built on Atan and Sqrt) within the dtype's tolerance; copysign and nextafter (bits)
bit-exact; on special values (NaN, +-inf, +-0.0, subnormals, the largest float) and random ones, as
tiles and as scalars."""

import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from ascdsl.language.extra import libdevice
from tests.backend.helpers import CANN, assert_type_checks, both, prebuilt
from tests.backend.sweep import FLOAT_SWEEP

UNARY = (("tan", np.tan), ("sinh", np.sinh), ("cosh", np.cosh), ("asin", np.arcsin), ("acos", np.arccos),
         ("atan", np.arctan), ("asinh", np.arcsinh), ("acosh", np.arccosh), ("atanh", np.arctanh))
"""The group of three each result belongs to is ``index // 3``; the kernel maps ``x`` in [-1, 1] into each
function's domain first (by exact multiplications)."""
DOMAIN = {"tan": (1.4, 0.0), "sinh": (5.0, 0.0), "cosh": (5.0, 0.0), "asin": (1.0, 0.0), "acos": (1.0, 0.0),
          "atan": (10.0, 0.0), "asinh": (10.0, 0.0), "acosh": (9.0, 1.0), "atanh": (0.99, 0.0)}
"""``(scale, shift)``: the function's argument is ``x * scale`` (``|x| * scale + shift`` where shift is set)."""


@ascdsl.jit
def unary_kernel(x_ptr, out_ptr, n, GROUP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    if GROUP == 0:
        a, b, c = libdevice.tan(x * 1.4), libdevice.sinh(x * 5.0), libdevice.cosh(x * 5.0)
    elif GROUP == 1:
        a, b, c = libdevice.asin(x), libdevice.acos(x), libdevice.atan(x * 10.0)
    else:
        a, b, c = libdevice.asinh(x * 10.0), libdevice.acosh(tl.abs(x) * 9.0 + 1.0), libdevice.atanh(x * 0.99)
    tl.store(out_ptr + offs, a, mask=mask)
    tl.store(out_ptr + n + offs, b, mask=mask)
    tl.store(out_ptr + 2 * n + offs, c, mask=mask)


@pytest.mark.parametrize("dtype", FLOAT_SWEEP)
def test_unary_math_apis_within_tolerance(dtype):
    """Every result agrees with the interpreter within the dtype's tolerance, and the float32 interpreter
    with the float64 function (a tail shorter than a block too)."""
    n = 300
    x = np.linspace(-1.0, 1.0, n).astype(np.float32)
    x[:3] = [0.0, -0.0, 1e-4]
    x = x.astype(dtype.np)

    def check(group):
        want, got = both(unary_kernel[(ascdsl.cdiv(n, 128),)], x, np.zeros(3 * n, dtype.np), n, GROUP=group,
                          BLOCK=128)
        for j, (name, fn) in enumerate(UNARY[3 * group: 3 * group + 3]):
            sim, spec = got[1][j * n:(j + 1) * n], want[1][j * n:(j + 1) * n]
            ascdsl.testing.assert_close(sim, spec, dtype, err_msg=name)
            if dtype == dtypes.float32:  # 16-bit arguments are rounded before the function
                scale, shift = DOMAIN[name]
                arg = (np.abs(x) if shift else x) * np.float32(scale) + np.float32(shift)
                np.testing.assert_allclose(spec, fn(arg.astype(np.float64)), rtol=dtype.rtol, atol=dtype.atol,
                                           err_msg=name)
    prebuilt(check, [(g,) for g in range(3)])
    for group in range(3):
        check(group)


@ascdsl.jit
def binary_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = tl.load(y_ptr + offs, mask=mask, other=1.0)
    tl.store(out_ptr + offs, libdevice.copysign(x, y), mask=mask)
    tl.store(out_ptr + n + offs, libdevice.nextafter(x, y), mask=mask)
    tl.store(out_ptr + 2 * n + offs, libdevice.atan2(x, y), mask=mask)
    tl.store(out_ptr + 3 * n + offs, libdevice.hypot(x, y), mask=mask)


SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45, -1e-45, 1e-38, 3.4028235e38, -3.4028235e38, 1.0, -2.5]


def _pairs(n, dtype):
    """Every pair of special values, then random ones of mixed signs and magnitudes."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(n) * np.exp2(rng.integers(-20, 20, n))).astype(np.float32)
    y = (rng.standard_normal(n) * np.exp2(rng.integers(-20, 20, n))).astype(np.float32)
    k = len(SPECIAL) ** 2
    x[:k], y[:k] = np.repeat(SPECIAL, len(SPECIAL)), np.tile(SPECIAL, len(SPECIAL))
    with np.errstate(over="ignore"):  # the largest float32 is inf in float16
        return x.astype(dtype.np), y.astype(dtype.np)


@pytest.mark.parametrize("dtype", FLOAT_SWEEP)
def test_sign_and_angle_math(dtype):
    """copysign and nextafter are bit-exact (NaNs, signed zeros, subnormals, steps to and from inf); atan2
    and hypot agree within the tolerance, with IEEE's special cases (atan2(+-0, -0) = +-pi, hypot(inf, NaN) =
    inf, no overflow near the largest float)."""
    n = 400
    x, y = _pairs(n, dtype)
    want, got = both(binary_kernel[(ascdsl.cdiv(n, 256),)], x, y, np.zeros(4 * n, dtype.np), n, BLOCK=256)
    spec, sim = want[2].reshape(4, n), got[2].reshape(4, n)
    bits = f"u{dtype.itemsize}"
    np.testing.assert_array_equal(sim[:2].view(bits), spec[:2].view(bits))
    ascdsl.testing.assert_close(sim[2], spec[2], dtype, err_msg="atan2")
    ascdsl.testing.assert_close(sim[3], spec[3], dtype, err_msg="hypot")
    xf, yf = x.astype(np.float32), y.astype(np.float32)
    with np.errstate(all="ignore"):
        want_f32 = [np.copysign(xf, yf), np.nextafter(xf, yf), np.arctan2(xf, yf), np.hypot(xf, yf)]
        for row, ref in zip(spec, want_f32):  # the spec: NumPy's float32 functions, rounded to the dtype
            np.testing.assert_array_equal(row.view(bits), ref.astype(dtype.np).view(bits))
    if dtype == dtypes.float32:
        special = np.isin(xf, [3.4028235e38, -3.4028235e38]) & np.isin(yf, [3.4028235e38, -3.4028235e38])
        assert np.isfinite(sim[3][special]).all()  # m * sqrt(1 + r * r) does not overflow
        assert (sim[1][(xf == 0) & (yf == 1.0)] == np.float32(1e-45)).all()


@ascdsl.jit
def scalar_kernel(x_ptr, out_ptr, s, t, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    u = libdevice.atan2(s, t) + libdevice.hypot(s, t) + libdevice.tan(s) + libdevice.asinh(t)
    tl.store(out_ptr + offs, x * u + libdevice.copysign(libdevice.nextafter(s, 0.0), t), mask=mask)


def test_scalar_math_runs_on_one_element_tiles():
    """The same functions of float scalars (the scalar unit has none of them) agree with the interpreter."""
    x = np.linspace(-3.0, 3.0, 100).astype(np.float32)
    want, got = both(scalar_kernel[(1,)], x, np.zeros_like(x), 0.75, -2.0, 100, BLOCK=128)
    s, t = np.float32(0.75), np.float32(-2.0)
    u = np.arctan2(s, t) + np.hypot(s, t) + np.tan(s) + np.arcsinh(t)
    np.testing.assert_allclose(want[1], x * u - np.nextafter(s, np.float32(0)), rtol=1e-5, atol=1e-6)
    ascdsl.testing.assert_close(got[1], want[1], dtypes.float32)


@CANN
def test_trig_math_type_checks_against_cann(tmp_path):
    """The kernels of this file in float32 and float16, in one kernel file, against the real CANN headers."""
    kernels = []
    for dt in (dtypes.float32, dtypes.float16):
        p = tl.pointer_type(dt)
        kernels += [unary_kernel.specialize(p, p, dtypes.int32, GROUP=g, BLOCK=128).kernels[0] for g in range(3)]
        kernels.append(binary_kernel.specialize(p, p, p, dtypes.int32, BLOCK=256).kernels[0])
    assert_type_checks("trig_kernel", kernels, tmp_path)
