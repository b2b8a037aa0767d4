"""Load and store masks beyond ``index < bound`` terms on the simulator against the interpreter:
scalar conditions joined to the bounds with ``&`` (a false one makes the whole access empty)."""
import numpy as np

import ascdsl
import ascdsl.language as tl
from tests.backend.helpers import both, each


@ascdsl.jit
def scalar_terms_kernel(x_ptr, out_ptr, n, rows, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    on = (pid % 3 != 1) & (pid * 2 <= rows)  # whole programs masked off
    x = tl.load(x_ptr + pid * BLOCK + cols, mask=(cols < n) & on, other=-1.0)
    tl.store(out_ptr + pid * BLOCK + cols, x * 2.0, mask=on & (cols <= n))


@ascdsl.jit
def scalar_terms_2d_kernel(x_ptr, out_ptr, n, M: tl.constexpr, N: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * M + tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    keep = pid != 1
    x = tl.load(x_ptr + rows * N + cols, mask=keep & (cols < n), other=3.0)
    tl.store(out_ptr + rows * N + cols, x + 1.0, mask=(rows < 2 * M + 1) & (pid > 0))


def test_scalar_mask_terms_empty_whole_accesses():
    def check(n, block):
        x = np.arange(7 * block, dtype=np.float32)
        want, got = both(scalar_terms_kernel[(7,)], x, np.full(7 * block, -5.0, np.float32), n, 9, BLOCK=block)
        assert (want[1] == -5.0).any() and (want[1] == -2.0).any()  # masked-off programs and lanes
        np.testing.assert_array_equal(want[1], got[1])
    each(check, [(50, 64), (20, 32)])


def test_scalar_mask_terms_of_2d_blocks():
    x = np.arange(4 * 8 * 32, dtype=np.float32).reshape(32, 32)
    want, got = both(scalar_terms_2d_kernel[(4,)], x, np.zeros((32, 32), np.float32), 20, M=8, N=32)
    assert (want[1][8:16] == 4.0).any() and not want[1][:8].any()
    np.testing.assert_array_equal(want[1], got[1])
