"""`tl.where` on comparisons (Compare into a bit mask, then Select) and `tl.sigmoid` on the simulator
(hazard checks on) against the interpreter: bit-exact for where, the dtype's tolerance for sigmoid;
tails of 31/32/33, 1000 and 2056 elements and a 2-D tile in float32/float16/bfloat16; a stored
comparison and `where` on int32 data."""
import numpy as np
import pytest

import ascdsl
from ascdsl import dtypes
from tests.backend import kernels
from tests.backend.helpers import FLOATS, bits, both, data, each, prebuilt

SIZES = [(31, 32), (32, 32), (33, 32), (1000, 256), (2056, 2048)]  # (n, BLOCK)


def _ties(n, dtype):
    """Two inputs with ties between them and with every constant the kernels compare against."""
    x, y = data(n, dtype), data(n, dtype)
    y[::3] = x[::3]
    x[1::5] = np.array([-1.0, 2.0, 0.0, 0.5, -0.0] * n, dtype.np)[: len(x[1::5])]
    return x, y


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_where_bit_exact(dtype):
    def check(n, block):
        x, y = _ties(n, dtype)
        outs = [np.zeros(n, dtype.np) for _ in range(4)]
        want, got = both(kernels.where_kernel[(ascdsl.cdiv(n, block),)], x, y, *outs, n, -1.0, 2.0, BLOCK=block)
        for k, name in enumerate(("relu", "low", "clamp", "sign"), 2):
            np.testing.assert_array_equal(bits(got[k]), bits(want[k]), err_msg=f"{name}, n={n}")
        assert (want[2] == np.maximum(x, 0)).all()  # the interpreter is the spec; check it is the right one
    prebuilt(check, SIZES)
    for case in SIZES:
        check(*case)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_where_2d_bit_exact(dtype):
    def check(m, n, rows, cols):
        x, y = (t.reshape(m, n) for t in _ties(m * n, dtype))
        want, got = both(kernels.where2d_kernel[(ascdsl.cdiv(m, rows),)], x, y, np.zeros((m, n), dtype.np), m, n,
                          ROWS=rows, COLS=cols)
        np.testing.assert_array_equal(bits(got[2]), bits(want[2]), err_msg=f"{m}x{n}")
    cases = [(5, 33, 4, 64), (3, 7, 3, 8)]
    each(check, cases)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_where_on_a_loop_carried_tile_bit_exact(dtype):
    n = 20  # the accumulator's 80 bytes are compared as one whole 256-byte repeat
    x = data(3 * n, dtype)
    x[::4] = dtype.np.type(0.1)
    want, got = both(kernels.where_loop_kernel[(1,)], x, np.zeros(n, np.float32), n, BLOCK=32)
    np.testing.assert_array_equal(bits(got[1]), bits(want[1]))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_sigmoid_within_tolerance(dtype):
    def check(n, block):
        x = data(n, dtype)
        want, got = both(kernels.sigmoid_kernel[(ascdsl.cdiv(n, block),)], x, np.zeros(n, dtype.np), n, BLOCK=block)
        np.testing.assert_allclose(got[1].astype(np.float64), want[1].astype(np.float64), rtol=dtype.rtol,
                                   atol=dtype.atol, err_msg=f"n={n}")
    prebuilt(check, SIZES)
    for case in SIZES:
        check(*case)


@pytest.mark.parametrize("kernel, dtype", [(kernels.stored_compare_kernel, np.float32),
                                           (kernels.int_where_kernel, np.int32)], ids=["stored", "int32"])
def test_bool_tiles_once_rejected_now_lower_bit_exact(kernel, dtype):
    x = np.arange(-32, 32).astype(dtype)
    want, got = both(kernel[(1,)], x, np.zeros_like(x), BLOCK=64)
    np.testing.assert_array_equal(got[1], want[1])
    assert (want[1] == np.where(x > 0, x if dtype == np.int32 else 1, 0)).all()


def test_compare_against_a_scalar_splits_at_whole_mask_blocks():
    from types import SimpleNamespace
    from ascdsl.backend import kir
    from ascdsl.backend.selection import repeat
    from ascdsl.platforms import get_platform
    f32 = dtypes.float32
    x = kir.Ref(kir.Buf(1, kir.Role.TILE, f32, "x"), f32, kir.lit(0), 300 * 64)
    mask = kir.Ref(kir.Buf(2, kir.Role.TILE, dtypes.uint8, "mask"), dtypes.uint8, kir.lit(0), 300 * 8)
    block = kir.Ref(kir.Buf(3, kir.Role.SCRATCH, f32, "scalar"), f32, kir.lit(0), 8)
    sel = SimpleNamespace(platform=get_platform(), scratch=lambda *a: block, general=False)
    dup, *calls = repeat.scalar_block(sel, "Compare", mask, x, kir.Lit(0.0, f32), 300 * 64, False, None,
                                      mode=kir.Const.GT)
    assert dup.api == "Duplicate" and dup.dst == block
    assert [(c.dst.offset, c.srcs[0].offset, c.args[2]) for c in calls] == [
        (kir.lit(0), kir.lit(0), kir.lit(252)), (kir.lit(2016), kir.lit(16128), kir.lit(48))]
    assert all(c.srcs[1] == block and c.args[0] is kir.Const.GT for c in calls)
