"""Float `fmod` (`libdevice.fmod`, the tile op `mod` of floats) on the simulator against the
interpreter: bit-exact for all inputs (signed zeros, infinities, NaN and zero divisors, quotients up
to 2**276, subnormals, divisors an ulp from the dividend), tile by tile and tile by scalar, float32,
float16 and bfloat16."""
import ml_dtypes
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from ascdsl.language.extra import libdevice
from tests.backend.helpers import bits, both, each


@ascdsl.jit
def fmod_kernel(x_ptr, y_ptr, out_ptr, by_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, libdevice.fmod(x, tl.load(y_ptr + offs)))
    tl.store(by_ptr + offs, libdevice.fmod(x, -1.5))


SPECIAL = [(np.inf, 1.0), (-np.inf, 2.0), (np.nan, 1.0), (1.0, np.nan), (0.0, 3.0), (-0.0, 3.0), (-4.0, 2.0),
           (4.0, -np.inf), (-7.0, np.inf), (7.0, 0.0), (2.999999, 1.0), (-6.0, 2.0000002), (5e3, 1e-3)]


def adversarial(dt, n, rng):
    """``n`` pairs: any bit patterns; divisors a few ulps from the dividend; dividends a power-of-two
    multiple of the divisor, an ulp off; the largest values by the smallest subnormals; the specials."""
    info, ub = ml_dtypes.finfo(dt), f"u{np.dtype(dt).itemsize}"
    x, y = (rng.integers(0, 2 ** (8 * np.dtype(dt).itemsize), n).astype(ub).view(dt) for _ in "xy")
    q = n // 4
    y[:q] = (x[:q].view(ub) + rng.integers(-3, 4, q).astype(ub)).view(dt)
    with np.errstate(all="ignore"):
        x[q:2 * q] = (y[q:2 * q].astype(np.float64) * 2.0 ** rng.integers(0, 60, q)).astype(dt)
    x[q:2 * q] = (x[q:2 * q].view(ub) + rng.integers(-1, 2, q).astype(ub)).view(dt)
    tiny, least, most = info.tiny, info.smallest_subnormal, info.max
    x[2 * q:2 * q + 8] = [most, -most, most, tiny, -tiny, least, 3 * least, most]
    y[2 * q:2 * q + 8] = [least, 3 * least, -tiny, least, 7 * least, least, 2 * least, np.nextafter(most, 0)]
    x[-len(SPECIAL):], y[-len(SPECIAL):] = zip(*SPECIAL)
    if dt != np.float32:  # the simulator's 16-bit casts keep a NaN's sign, not its payload
        x, y = (np.where(np.isnan(v), np.copysign(np.float32(np.nan), v.astype(np.float32)), v).astype(dt)
                for v in (x, y))
    return x, y


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.float16, dtypes.bfloat16], ids=str)
def test_fmod_bit_exact_for_all_inputs(dtype):
    rng = np.random.default_rng(5)

    def check(n):
        with np.errstate(all="ignore"):
            x, y = adversarial(dtype.np, n, rng)
            beyond = np.abs(x.astype(np.float64) / y.astype(np.float64)) >= 2.0 ** (ml_dtypes.finfo(dtype.np).nmant + 1)
        assert beyond.sum() > n // 8  # quotients no single product of the significand covers
        want, got = both(fmod_kernel[(1,)], x, y, np.zeros(n, dtype.np), np.zeros(n, dtype.np), N=n)
        with np.errstate(all="ignore"):
            exact = np.fmod(x.astype(np.float32), y.astype(np.float32)).astype(dtype.np)
            np.testing.assert_array_equal(bits(want[2]), bits(exact))  # the interpreter is C's fmod
        for a, b in zip(want[2:], got[2:]):
            np.testing.assert_array_equal(bits(a), bits(b), err_msg=f"n={n}")
    each(check, [(512,), (40,)])


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.bfloat16], ids=str)
def test_fmod_of_quotients_under_2_to_the_23_bit_exact(dtype):
    """Tiles whose quotients one step reduces (the steps before it are skipped at run time)."""
    rng = np.random.default_rng(9)
    x = (rng.standard_normal(64) * 10.0 ** rng.integers(-2, 4, 64)).astype(dtype.np)
    y = (rng.standard_normal(64) * 10.0 ** rng.integers(-1, 2, 64) + 3).astype(dtype.np)
    finite = [s for s in SPECIAL if np.isfinite(s).all() and s[1] != 0]
    x[:len(finite)], y[:len(finite)] = zip(*finite)
    with np.errstate(all="ignore"):
        assert (np.abs(x.astype(np.float64) / y.astype(np.float64)) < 2 ** 23).all()
        want, got = both(fmod_kernel[(1,)], x, y, np.zeros(64, dtype.np), np.zeros(64, dtype.np), N=64)
        exact = np.fmod(x.astype(np.float32), y.astype(np.float32)).astype(dtype.np)
        np.testing.assert_array_equal(bits(want[2]), bits(exact))
    for a, b in zip(want[2:], got[2:]):
        np.testing.assert_array_equal(bits(a), bits(b))
