"""High-level math APIs against ascdsl.numerics (the interpreter's numerics), within the dtype table's tolerance."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ascdsl import dtypes, numerics, sim

SRC = Path(__file__).parent / "kernels" / "math.cpp"
ELEMENTWISE = Path(__file__).parent / "kernels" / "elementwise.cpp"


def run(name, *args, src=SRC, **kw):
    return sim.run_kernel(src, name, list(args), 1, **kw)


@pytest.mark.parametrize("dtype,name,tmp", [(dtypes.float32, "math_f32", 3 * 256), (dtypes.float16, "math_f16", 8 * 256)])
def test_math_apis_match_numerics(rng, dtype, name, tmp):
    n = 128
    x = rng.uniform(0.05, 3.0, n).astype(dtype.np)
    x[:4] = [0.5, 1.0, 2.0, 0.125]
    out = np.zeros(7 * n, dtype.np)
    res = run(name, x, out, np.uint32(n), np.uint32(tmp))
    got = out.reshape(7, n).astype(np.float64)
    refs = [numerics.tanh(x), numerics.erf(x), numerics.sin(x), numerics.cos(x), numerics.log2(x),
            np.log(x.astype(np.float64)), np.log10(x.astype(np.float64))]
    for row, ref in zip(got, refs):
        np.testing.assert_allclose(row, ref.astype(dtype.np).astype(np.float64), rtol=dtype.rtol, atol=dtype.atol)
    np.testing.assert_array_equal(got[4][:4], [-1, 0, 1, -3])  # exact powers of two
    assert res.stats.vector_calls["Tanh"] == 1 and res.stats.vector_elements["Erf"] == n


def test_math_apis_run_one_round_per_temporary_buffer_full(rng):
    """CANN 8.1's math APIs cover ``tmpBytes / sizeof(T) / live / 32 * 32`` lanes a round: Erf (3 float
    slices) at its 768-byte minimum runs 2048 lanes in 32 rounds of 64, and the cost model charges each
    round's passes; a buffer of the maximum (3 x 2048 floats) runs one round."""
    n = 2048
    x = rng.uniform(0.05, 3.0, n).astype(np.float32)
    out = np.zeros(7 * n, np.float32)
    least = run("math_f32", x, out, np.uint32(n), np.uint32(3 * 256)).stats
    most = run("math_f32", x, out, np.uint32(n), np.uint32(3 * 4 * n)).stats
    assert least.vector_rounds["Erf"] == 32 and least.vector_rounds["Tanh"] == 2048 // 192 + 1
    assert most.vector_rounds["Erf"] == most.vector_rounds["Tanh"] == 1
    assert least.vector_rounds["Log"] == least.vector_calls["Log"] == 1  # no sharedTmpBuffer to split
    assert least.pipe_busy["V"] > most.pipe_busy["V"]


def test_math_without_tmp_uses_free_ub(rng):
    n = 64
    x = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(2 * n, np.float32)
    run("math_no_tmp", x, out, np.uint32(n))
    np.testing.assert_allclose(out[:n], numerics.tanh(x), rtol=dtypes.float32.rtol, atol=dtypes.float32.atol)
    np.testing.assert_allclose(out[n:], numerics.sin(x), rtol=dtypes.float32.rtol, atol=dtypes.float32.atol)


def test_power_tensor_and_scalar_sides(rng):
    n = 64
    x = rng.uniform(0.1, 3.0, n).astype(np.float32)
    y = rng.uniform(-2.0, 2.0, n).astype(np.float32)
    out = np.zeros(3 * n, np.float32)
    run("power_f32", x, y, out, np.uint32(n), np.uint32(256 + 5 * 256))
    tol = dict(rtol=dtypes.float32.rtol, atol=dtypes.float32.atol)
    np.testing.assert_allclose(out[:n], numerics.power(x, y), **tol)
    np.testing.assert_allclose(out[n:2 * n], numerics.power(x, np.float32(3)), **tol)
    np.testing.assert_allclose(out[2 * n:], numerics.power(np.float32(2), y), **tol)
    with pytest.raises(sim.SimError, match="Power: block 0: temporary buffer of 1280 B is below the minimum 1536 B"):
        run("power_f32", x, y, out, np.uint32(n), np.uint32(256 + 4 * 256))


@pytest.mark.parametrize("dtype,name", [(np.float32, "cumsum_f32"), (np.float16, "cumsum_f16")])
def test_cumsum_both_axes(rng, dtype, name):
    m, k = 5, 32
    x = rng.standard_normal((m, k)).astype(dtype)
    out = np.zeros(3 * m * k + k, dtype)
    run(name, x, out, np.uint32(m), np.uint32(k))
    rows = np.cumsum(x.astype(np.float32), axis=1).astype(dtype)
    cols = np.cumsum(x.astype(np.float32), axis=0).astype(dtype)
    np.testing.assert_array_equal(out[: m * k].reshape(m, k), rows)  # in order in float: bit-exact
    np.testing.assert_array_equal(out[m * k: m * k + k], rows[-1])
    np.testing.assert_array_equal(out[m * k + k: 2 * m * k + k].reshape(m, k), cols)


MODES = {"CAST_RINT": 1, "CAST_FLOOR": 2, "CAST_CEIL": 3, "CAST_ROUND": 4, "CAST_TRUNC": 5}
VALUES = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 1.2, -1.7, 3.0, -0.0, 1000.5, -123.75, 0.49999997, 7.5, -7.5, 100.25])


@pytest.mark.parametrize("mode,ref", [("CAST_FLOOR", numerics.floor), ("CAST_CEIL", numerics.ceil),
                                      ("CAST_TRUNC", numerics.trunc), ("CAST_RINT", np.rint)])
def test_float_rounding_through_cast(mode, ref):
    x = np.tile(VALUES, 2).astype(np.float32)
    out = np.zeros(x.size, np.float32)
    run("cast_f32_f32", x, out, np.uint32(x.size), np.int32(MODES[mode]), src=ELEMENTWISE)
    np.testing.assert_array_equal(out, ref(x))
    h = x.astype(np.float16)
    hout = np.zeros(h.size, np.float16)
    run("round_f16", h, hout, np.uint32(h.size), np.int32(MODES[mode]))
    np.testing.assert_array_equal(hout, ref(h).astype(np.float16))


def test_cast_round_is_half_away_from_zero():
    x = np.tile(VALUES, 2).astype(np.float32)
    out = np.zeros(x.size, np.float32)
    run("cast_f32_f32", x, out, np.uint32(x.size), np.int32(MODES["CAST_ROUND"]), src=ELEMENTWISE)
    x64 = x.astype(np.float64)
    t = np.trunc(x64)
    np.testing.assert_array_equal(out, np.where(np.abs(x64 - t) >= 0.5, t + np.sign(x64), t))
