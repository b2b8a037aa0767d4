"""`tl.histogram` on the simulator (hazard checks on) against the interpreter, bit-exact: int32 and
int8 values with some outside the bins (counted nowhere), masked, one histogram per program."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from tests.backend.helpers import both, each


@ascdsl.jit
def histogram_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, BINS: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + pid * n + offs, mask=offs < n, other=0)
    tl.store(out_ptr + pid * 2 * BINS + tl.arange(0, BINS), tl.histogram(x, BINS))
    tl.store(out_ptr + pid * 2 * BINS + BINS + tl.arange(0, BINS), tl.histogram(x, BINS, mask=offs < n))


@pytest.mark.parametrize("dtype", [np.int32, np.int8], ids=["int32", "int8"])
def test_histograms_bit_exact(dtype):
    rng = np.random.default_rng(41)

    def check(programs, n, block, bins):
        x = rng.integers(-3, bins + 3, (programs, n)).astype(dtype)
        want, got = both(histogram_kernel[(programs,)], x, np.zeros(programs * 2 * bins, np.int32), n, BLOCK=block,
                         BINS=bins)
        np.testing.assert_array_equal(got[1], want[1], err_msg=f"{programs}x{n} {bins} bins")
        counts = want[1].reshape(programs, 2, bins)
        for p in range(programs):
            expect = np.bincount(x[p][(x[p] >= 0) & (x[p] < bins)], minlength=bins)
            assert (counts[p, 1] == expect).all()
            assert (counts[p, 0] - counts[p, 1] == (block - n) * (np.arange(bins) == 0)).all()  # other=0
    each(check, [(3, 100, 128, 16), (1, 64, 64, 8), (2, 5, 8, 40)])
