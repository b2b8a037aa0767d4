"""Float `fmod` (`libdevice.fmod`, the tile op `mod` of floats) on the simulator against the
interpreter: bit-exact where `|x / y| < 2**24` (signed zeros, infinities, NaN and zero divisors
included), tile by tile and tile by scalar, float32 and float16."""
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


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.float16], ids=str)
def test_fmod_bit_exact_within_the_quotient_range(dtype):
    rng = np.random.default_rng(5)

    def check(n):
        x = (rng.standard_normal(n) * 10.0 ** rng.integers(-2, 4, n)).astype(dtype.np)
        y = (rng.standard_normal(n) * 10.0 ** rng.integers(-1, 2, n)).astype(dtype.np)
        x[:len(SPECIAL)], y[:len(SPECIAL)] = zip(*SPECIAL)
        with np.errstate(all="ignore"):
            keep = ~(np.abs(x.astype(np.float32) / y.astype(np.float32)) >= 2 ** 24)
        y = np.where(keep, y, 1).astype(dtype.np)
        want, got = both(fmod_kernel[(1,)], x, y, np.zeros(n, dtype.np), np.zeros(n, dtype.np), N=n)
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(bits(want[2]), bits(np.fmod(x, y)))  # the interpreter is C's fmod
        for a, b in zip(want[2:], got[2:]):
            np.testing.assert_array_equal(bits(a), bits(b), err_msg=f"n={n}")
    each(check, [(512,), (40,)])
