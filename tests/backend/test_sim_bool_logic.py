"""Bool tiles combined with ``& | ^ ~`` (bit masks through And/Or/Xor/Not) as ``tl.where`` conditions,
on the simulator against the interpreter: bit-exact."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from tests.backend.test_sim import FLOATS, _both, _data


@ascdsl.jit
def bool_logic_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    inside = (x > -1.0) & (x < 1.0)
    tl.store(out_ptr + offs, tl.where(inside | (y > 2.0), x, y), mask=mask)
    tl.store(out_ptr + n + offs, tl.where(~inside, x, 0.0), mask=mask)
    tl.store(out_ptr + 2 * n + offs, tl.where((x > y) ^ (y > 0.0), y, x), mask=mask)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_bool_tile_logic_bit_exact(dtype):
    for n, block in ((33, 32), (1000, 256)):
        x, y = _data(n, dtype), _data(n, dtype)
        want, got = _both(bool_logic_kernel[(ascdsl.cdiv(n, block),)], x, y, np.zeros(3 * n, dtype.np), n, BLOCK=block)
        bits = np.uint16 if dtype.itemsize == 2 else np.uint32
        np.testing.assert_array_equal(got[2].view(bits), want[2].view(bits), err_msg=f"n={n}")
        inside = (x > -1) & (x < 1)
        assert (want[2][n:2 * n] == np.where(~inside, x, 0)).all()
