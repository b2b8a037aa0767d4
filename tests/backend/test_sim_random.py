"""Random numbers on the simulator against the interpreter: ``umulhi`` of int32 tiles (the 64-bit
product's high word from 16-bit halves), bit-exact on edge values; Philox as Triton computes it."""
import numpy as np

from tests.backend import mem_kernels as k
from tests.backend.test_sim import _both

RNG = np.random.default_rng(5)


def test_umulhi_bit_exact():
    block, grid = 64, 3
    a, b = (RNG.integers(-2**31, 2**31, block * grid, dtype=np.int64).astype(np.int32) for _ in range(2))
    a[:6], b[:6] = [-1, 0, 1, 2**31 - 1, -2**31, 65535], [-1, -1, -1, -1, -2**31, 65537]
    s = -123456789
    want, got = _both(k.umulhi_kernel[(grid,)], a, b, np.zeros(4 * block * grid, np.int32), s, BLOCK=block)
    ua, ub = (x.view(np.uint32).astype(np.uint64) for x in (a, b))
    n = block * grid
    np.testing.assert_array_equal(want[2][:n].view(np.uint32), (ua * ub >> np.uint64(32)).astype(np.uint32))
    np.testing.assert_array_equal(want[2][2 * n:3 * n].view(np.uint32),
                                  (ua * 0xD2511F53 >> np.uint64(32)).astype(np.uint32))
    assert (want[2][3 * n:] == ((2**32 - 7) * 12345 >> 32) + ((s >> 3) ^ (s << 2))).all()
    np.testing.assert_array_equal(got[2], want[2])
