"""Triton math builtins on the Ascend C backend: the simulator agrees with the interpreter (the spec)."""
import math

import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from tests.backend.helpers import CANN, assert_type_checks, bits

DTYPES = ["float32", "float16", "bfloat16"]


@ascdsl.jit
def math_kernel(x_ptr, out_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    if OP == "floor":
        y = tl.floor(x)
    elif OP == "ceil":
        y = tl.ceil(x)
    elif OP == "trunc":
        y = tl.trunc(x)
    elif OP == "round":
        y = tl.round(x)
    elif OP == "rint":
        y = tl.rint(x)
    elif OP == "tanh":
        y = tl.tanh(x)
    elif OP == "erf":
        y = tl.erf(x)
    elif OP == "erfc":
        y = tl.math.erfc(x)
    elif OP == "sin":
        y = tl.sin(x)
    elif OP == "cos":
        y = tl.cos(x)
    else:
        y = tl.log2(x)
    tl.store(out_ptr + offs, y, mask=mask)


def _round_half_away(x):
    return np.where(np.abs(x) % 1 == 0.5, np.sign(x) * np.ceil(np.abs(x)), np.rint(x))


ROUNDING_REFERENCE = {"floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "round": _round_half_away,
                      "rint": np.rint}


@pytest.mark.parametrize("op", sorted(ROUNDING_REFERENCE))
@pytest.mark.parametrize("dtype", DTYPES)
def test_rounding_on_the_interpreter_and_the_simulator(dtype, op):
    """floor/ceil/trunc/round/rint are bit-exact (signed zeros included): ``round`` takes ties away
    from zero (Triton's round, CAST_ROUND), ``rint`` to even (CAST_RINT)."""
    dt = dtypes.lookup(dtype)
    x = np.concatenate([np.arange(-6.0, 6.0, 0.25), [-0.0, 2.5, -2.5, 0.49, -0.51, 300.5, -1000.75]]).astype(dt.np)
    n = len(x)
    got = {}
    for backend in ("interpreter", "sim"):
        got[backend] = np.full_like(x, 7)
        math_kernel[(ascdsl.cdiv(n, 64),)](x, got[backend], n, OP=op, BLOCK=64, backend=backend)
    np.testing.assert_array_equal(bits(got["sim"]), bits(got["interpreter"]))
    want = ROUNDING_REFERENCE[op](x.astype(np.float64))
    np.testing.assert_array_equal(got["interpreter"].astype(np.float64), want)


MATH_REFERENCE = {"tanh": (np.tanh, -5.0, 5.0), "erf": (np.vectorize(math.erf), -4.0, 4.0),
                  "erfc": (np.vectorize(math.erfc), -3.0, 9.0),
                  "sin": (np.sin, -10.0, 10.0), "cos": (np.cos, -10.0, 10.0), "log2": (np.log2, 1e-3, 1e3)}
"""Each op's float64 reference and the range of its inputs."""


@pytest.mark.parametrize("op", sorted(MATH_REFERENCE))
@pytest.mark.parametrize("dtype", DTYPES)
def test_math_on_the_interpreter_and_the_simulator(dtype, op):
    """tanh/erf/erfc/sin/cos/log2 (the high-level APIs with their sharedTmpBuffer) agree within the dtype's
    tolerance with the interpreter and with the float64 function; a tail shorter than a block too."""
    dt = dtypes.lookup(dtype)
    fn, lo, hi = MATH_REFERENCE[op]
    n = 300
    x = np.linspace(lo, hi, n).astype(dt.np)
    got = {}
    for backend in ("interpreter", "sim"):
        got[backend] = np.zeros_like(x)
        math_kernel[(ascdsl.cdiv(n, 128),)](x, got[backend], n, OP=op, BLOCK=128, backend=backend)
    want = fn(x.astype(np.float64))
    for backend, out in got.items():
        np.testing.assert_allclose(out.astype(np.float64), want, rtol=dt.rtol, atol=dt.atol, err_msg=backend)
    ascdsl.testing.assert_close(got["sim"], got["interpreter"], dt)


def test_generated_math_sizes_its_temporary_buffer_for_one_round():
    """The generated kernel gives a math API its sharedTmpBuffer at the maximum for the tile: on a tile
    of 5856 lanes (one whole row), Erf runs one round, not 92 of 64 lanes."""
    n = 5856
    x = np.linspace(-4.0, 4.0, n).astype(np.float32)
    out = np.zeros_like(x)
    with ascdsl.sim.record() as runs:
        math_kernel[(1,)](x, out, n, OP="erf", BLOCK=n, backend="sim")
    stats = runs[0].stats
    assert stats.vector_calls["Erf"] == stats.vector_rounds["Erf"] == 1
    np.testing.assert_allclose(out, np.vectorize(math.erf)(x.astype(np.float64)), rtol=dtypes.float32.rtol,
                               atol=dtypes.float32.atol)


@ascdsl.jit
def scalar_math_kernel(x_ptr, out_ptr, s, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, x * tl.floor(s) + tl.tanh(s), mask=mask)


def test_scalar_rounding_and_math_run_on_a_one_element_tile():
    """A float scalar's floor and tanh (the scalar unit has neither) agree with the interpreter."""
    x = np.linspace(-3.0, 3.0, 100).astype(np.float32)
    got = {}
    for backend in ("interpreter", "sim"):
        got[backend] = np.zeros_like(x)
        scalar_math_kernel[(1,)](x, got[backend], -1.75, 100, BLOCK=128, backend=backend)
    np.testing.assert_allclose(got["interpreter"], x * -2.0 + np.tanh(-1.75), rtol=1e-6, atol=1e-6)
    ascdsl.testing.assert_close(got["sim"], got["interpreter"], dtypes.float32)


@CANN
def test_lowered_math_type_checks_against_cann(tmp_path):
    """Every op of this file in every float dtype, in one kernel file, against the real CANN headers."""
    ptr = [tl.pointer_type(dtypes.lookup(d)) for d in DTYPES]
    kernels = [math_kernel.specialize(p, p, dtypes.int32, OP=op, BLOCK=128).kernels[0]
               for op in (*ROUNDING_REFERENCE, *MATH_REFERENCE) for p in ptr]
    assert_type_checks("math_kernel", kernels, tmp_path)
