"""2-D tiles on the simulator against the interpreter: block copies with tails (31/32/33 columns,
rows under 32 bytes, more rows than 255, runtime strides), row and column reductions, broadcasts
along both axes, and the staging cases (a load that outlives its stage, two loads of one pointer)."""
import numpy as np
import pytest

import ascdsl
from ascdsl import dtypes
from tests.backend import kernels
from tests.backend.helpers import FLOATS, both, data, each


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_copy_2d_bit_exact(dtype):
    def check(m, n, rows, cols, pad):
        x = data((m, n + pad), dtype)
        grid = (ascdsl.cdiv(m, rows),)
        out = np.zeros((grid[0] * rows, cols), dtype.np)
        want, got = both(kernels.copy2d_kernel[grid], x, out, m, n, n + pad, cols, ROWS=rows, COLS=cols)
        assert want[1].tobytes() == got[1].tobytes(), (m, n, rows, cols, pad)
    cases = [
        (5, 31, 4, 32, 3),  # tails in both dims, runtime strides wider than the row
        (4, 32, 4, 32, 0),  # full, aligned
        (3, 33, 2, 64, 5),  # more than one 32-byte block of `other` per row
        (300, 3, 300, 8, 1),  # rows under 32 bytes; more rows than 255 repeats
    ]
    each(check, cases)


def test_rows_back_to_back_in_gm_and_ub_are_copied_as_one_burst():
    from ascdsl import sim
    from ascdsl.sim import cost

    def busy(pad):  # 64 rows of 64 floats (256 B bursts) at GM row stride 64 + pad
        x = data((64, 64 + pad), dtypes.float32)
        with sim.record() as runs:
            want, got = both(kernels.copy2d_kernel[(1,)], x, np.zeros((64, 64), np.float32), 64, 64, 64 + pad, 64,
                              ROWS=64, COLS=64)
        assert want[1].tobytes() == got[1].tobytes(), pad
        return runs[-1].stats.pipe_busy
    strided, whole = busy(8), busy(0)
    k = cost.A2
    assert strided["MTE2"] - whole["MTE2"] == pytest.approx(63 * k.burst_cycles.value, abs=1)  # 1 burst, not 64
    one_burst = k.copy_setup.value + cost.l2_burst_cycles(k, write=True) + 64 * 64 * 4 / k.l2_write_bytes_per_cycle.value
    assert whole["MTE3"] == strided["MTE3"] == pytest.approx(one_burst, abs=1)  # the store's rows (into the L2): stride 64


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_row_and_column_reductions_with_broadcasts(dtype):
    def check(m, n, rows, cols):
        x = data((m, n), dtype)
        grid = (ascdsl.cdiv(m, rows),)
        want, got = both(kernels.reduce2d_kernel[grid], x, np.zeros(m, np.float32), np.zeros((m, n), dtype.np),
                          m, n, ROWS=rows, COLS=cols)
        f32 = dtypes.float32
        np.testing.assert_allclose(got[1], want[1], rtol=f32.rtol, atol=f32.atol * n, err_msg=f"{m}x{n}")
        np.testing.assert_allclose(got[2].astype(np.float64), want[2].astype(np.float64), rtol=dtype.rtol,
                                   atol=dtype.atol * max(n, rows), err_msg=f"{m}x{n}")
    cases = [(5, 33, 4, 64), (3, 200, 2, 256), (2, 2056, 2, 4096), (270, 7, 270, 8), (3, 150, 2, 200)]
    each(check, cases)


def test_loads_that_outlive_their_stage_and_share_a_pointer():
    n, block = 20, 32
    x = data(3 * block, dtypes.float32)
    want, got = both(kernels.staged_loads_kernel[(1,)], x, np.zeros(block, np.float32), n, BLOCK=block)
    assert want[1].tobytes() == got[1].tobytes()
