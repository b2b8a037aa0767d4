"""Load and store masks beyond ``index < bound`` terms on the simulator against the interpreter:
scalar conditions joined to the bounds with ``&`` (a false one makes the whole access empty) and bool
tiles (a load takes `other` where they are false, a store leaves those lanes unchanged; more in
``test_sim_lane_masks.py``)."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from tests.backend.helpers import CANN, assert_type_checks, both, each


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


@ascdsl.jit
def tile_mask_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=(offs % 3 != 0) & (offs < n), other=-1.0)
    tl.store(out_ptr + offs, x * 2.0, mask=(x > 0.5) & (offs < n))


@ascdsl.jit
def tile_mask_2d_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.program_id(0) * M + tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols, mask=rows != cols, other=0)
    tl.store(out_ptr + rows * N + cols, x + 1, mask=(x % 2 == 0) & (cols < N - 1))


def test_bool_tile_masks_select_lanes_and_keep_what_stores_skip():
    def check(n, block):
        x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
        out = np.full(n, 9.0, np.float32)
        want, got = both(tile_mask_kernel[(ascdsl.cdiv(n, block),)], x, out, n, BLOCK=block)
        assert (want[1] == 9.0).any() and (want[1] > 1.0).any()
        np.testing.assert_array_equal(want[1], got[1])
    each(check, [(1000, 64), (40, 32)])


def test_bool_tile_masks_of_2d_int_blocks():
    x = np.arange(4 * 8 * 16, dtype=np.int32).reshape(32, 16) % 7
    want, got = both(tile_mask_2d_kernel[(4,)], x, np.full((32, 16), -3, np.int32), M=8, N=16)
    assert (want[1] == -3).any() and (want[1] == 1).any()
    np.testing.assert_array_equal(want[1], got[1])


@CANN
def test_combines_fmod_and_masks_type_check_against_cann(tmp_path):
    """General combine folds and scans, float fmod and bool-tile masks, in one kernel file, against the
    real CANN headers."""
    from tests.backend import test_sim_combine as comb, test_sim_fmod as fm
    f32, f16, i32 = (tl.pointer_type(d) for d in (dtypes.float32, dtypes.float16, dtypes.int32))
    kernels = [k.kernels[0] for k in (
        comb.argmax_rows_kernel.specialize(f16, f16, i32, f16, M=5, N=37, AXIS=1),
        comb.compose_kernel.specialize(i32, i32, i32, i32, i32, N=13, REVERSE=True),
        comb.compose_2d_kernel.specialize(i32, i32, i32, i32, i32, M=5, N=16, AXIS=1, REVERSE=False),
        fm.fmod_kernel.specialize(f32, f32, f32, f32, N=40),
        tile_mask_kernel.specialize(f32, f32, dtypes.int32, BLOCK=64),
        tile_mask_2d_kernel.specialize(i32, i32, M=8, N=16),
        scalar_terms_kernel.specialize(f32, f32, dtypes.int32, dtypes.int32, BLOCK=64))]
    assert_type_checks("combines_and_masks", kernels, tmp_path)
