"""Random numbers on the simulator against the interpreter: ``umulhi`` of int32 tiles (the 64-bit
product's high word from 16-bit halves), bit-exact on edge values; Philox (``randint``, ``randint4x``,
``rand`` bit-exact, ``randn`` within float32's tolerance) for 32- and 64-bit seeds, on tiles and on
scalars."""
import numpy as np

from ascdsl import dtypes, testing
from tests.backend import mem_kernels as k
from tests.backend.helpers import both

RNG = np.random.default_rng(5)


def test_umulhi_bit_exact():
    block, grid = 64, 3
    a, b = (RNG.integers(-2**31, 2**31, block * grid, dtype=np.int64).astype(np.int32) for _ in range(2))
    a[:6], b[:6] = [-1, 0, 1, 2**31 - 1, -2**31, 65535], [-1, -1, -1, -1, -2**31, 65537]
    s = -123456789
    want, got = both(k.umulhi_kernel[(grid,)], a, b, np.zeros(4 * block * grid, np.int32), s, BLOCK=block)
    ua, ub = (x.view(np.uint32).astype(np.uint64) for x in (a, b))
    n = block * grid
    np.testing.assert_array_equal(want[2][:n].view(np.uint32), (ua * ub >> np.uint64(32)).astype(np.uint32))
    np.testing.assert_array_equal(want[2][2 * n:3 * n].view(np.uint32),
                                  (ua * 0xD2511F53 >> np.uint64(32)).astype(np.uint32))
    assert (want[2][3 * n:] == ((2**32 - 7) * 12345 >> 32) + ((s >> 3) ^ (s << 2))).all()
    np.testing.assert_array_equal(got[2], want[2])


def test_philox_random_numbers_match_the_interpreter():
    n = 300
    for seed in (1234, -5, 2**40 + 17):
        want, got = both(k.random_kernel[(3,)], np.zeros(n, np.int32), np.zeros(n, np.float32),
                          np.zeros(n, np.float32), seed, n, BLOCK=128)
        assert want[0].view(np.uint32).min() < 2**28 and want[0].view(np.uint32).max() > 2**31  # spread bits
        assert 0 <= want[1].min() and want[1].max() < 1
        np.testing.assert_array_equal(got[0], want[0], err_msg=f"seed={seed}")  # integer ops
        np.testing.assert_array_equal(got[1], want[1], err_msg=f"seed={seed}")  # and one exact scaling
        testing.assert_close(got[2], want[2], dtypes.float32, err_msg=f"seed={seed}")  # log, sqrt, cos
        four = both(k.random4x_kernel[(3,)], np.zeros(4 * n, np.int32), seed, n, BLOCK=128)
        np.testing.assert_array_equal(four[1][0], four[0][0], err_msg=f"seed={seed}")


def test_philox_on_scalars_wraps_as_the_interpreter():
    """Scalar ``umulhi`` and the int32 products by Philox's constants, which overflow by design (were
    `umulhi` unsupported, then a signed overflow clang rejects when it folds a constant operand)."""
    n = 40
    for seed in (1234, -5):
        want, got = both(k.scalar_random_kernel[(3,)], np.zeros(n, np.int32), np.zeros(n, np.float32), seed, n,
                         PER_PROGRAM=16)
        assert len(set(want[0].tolist())) == n and 0 <= want[1].min() and want[1].max() < 1
        np.testing.assert_array_equal(got[0], want[0], err_msg=f"seed={seed}")
        np.testing.assert_array_equal(got[1], want[1], err_msg=f"seed={seed}")
