"""Block pointers whose offsets reach before the tensor's start: ``boundary_check`` masks the lanes
at indices below 0 as well as those at or past ``shape[d]``, as upstream Triton does (a lagged
difference reading the block ``LAG`` elements back, a tile stored at a negative offset); a block
pointer's ``.type`` is a pointer to its block type, whose ``element_ty`` a value casts to. Both
backends run the same kernels: the interpreter against NumPy, the simulator against the interpreter."""
from __future__ import annotations

import numpy as np
import pytest

import ascdsl as triton
import ascdsl.language as tl
from ascdsl.ir import Op, walk
from tests.backend.helpers import both

pytestmark = pytest.mark.usefixtures("prebuilt_module")  # the simulator kernels in few g++ runs


@triton.jit
def lagged_diff_kernel(x_ptr, out_ptr, n, LAG: tl.constexpr, BLOCK: tl.constexpr):
    start = tl.program_id(0) * BLOCK
    here = tl.make_block_ptr(x_ptr, shape=(n,), strides=(1,), offsets=(start,), block_shape=(BLOCK,), order=(0,))
    back = tl.make_block_ptr(x_ptr, shape=(n,), strides=(1,), offsets=(start - LAG,), block_shape=(BLOCK,),
                             order=(0,))
    x = tl.load(here, boundary_check=(0,), padding_option="zero")
    earlier = tl.load(back, boundary_check=(0,), padding_option="zero")  # lanes before x[0] read as 0
    out = tl.make_block_ptr(out_ptr, shape=(n,), strides=(1,), offsets=(start,), block_shape=(BLOCK,), order=(0,))
    tl.store(out, x - earlier, boundary_check=(0,))


@triton.jit
def crop_store_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, R: tl.constexpr, C: tl.constexpr):
    src = tl.make_block_ptr(x_ptr, shape=(M, N), strides=(N, 1), offsets=(0, 0), block_shape=(M, N), order=(1, 0))
    dst = tl.make_block_ptr(out_ptr, shape=(M, N), strides=(N, 1), offsets=(-R, -C), block_shape=(M, N),
                            order=(1, 0))
    tl.store(dst, tl.load(src), boundary_check=(0, 1))  # rows before R and columns before C are dropped


def lagged_diff_reference(x: np.ndarray, lag: int) -> np.ndarray:
    earlier = np.concatenate([np.zeros(lag, x.dtype), x[:-lag]])
    return x - earlier


@pytest.mark.parametrize("n, lag, block", [(37, 3, 16), (64, 16, 16), (20, 21, 8)])
def test_a_block_pointer_reaching_before_the_start_reads_zeros_there(n, lag, block):
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    grid = (triton.cdiv(n, block),)
    (_, interp, _), (_, sim, _) = both(
        lambda a, o, n, backend: lagged_diff_kernel[grid](a, o, n, LAG=lag, BLOCK=block, backend=backend),
        x, np.full(n, -7, np.float32), n)
    np.testing.assert_array_equal(interp, lagged_diff_reference(x, lag) if lag < n else x)
    np.testing.assert_array_equal(sim, interp)


def test_a_store_at_a_negative_offset_writes_only_the_lanes_inside():
    m, n, r, c = 8, 16, 3, 5
    x = np.arange(m * n, dtype=np.float32).reshape(m, n)
    (_, interp), (_, sim) = both(
        lambda a, o, backend: crop_store_kernel[(1,)](a, o, M=m, N=n, R=r, C=c, backend=backend),
        x, np.full((m, n), -7, np.float32))
    expected = np.full((m, n), -7, np.float32)
    expected[:m - r, :n - c] = x[r:, c:]
    np.testing.assert_array_equal(interp, expected)
    np.testing.assert_array_equal(sim, interp)


def test_constant_non_negative_offsets_keep_the_upper_bound_mask_only():
    f32 = np.zeros((8, 16), np.float32)
    (kernel,) = crop_store_kernel.specialize(f32, f32, M=8, N=16, R=0, C=0).kernels
    ops = [i.op for i in walk(kernel.body)]
    assert Op.LT in ops and Op.GE not in ops
    (kernel,) = crop_store_kernel.specialize(f32, f32, M=8, N=16, R=1, C=0).kernels
    assert [i.op for i in walk(kernel.body)].count(Op.GE) == 1


@triton.jit
def half_rows_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    src = tl.make_block_ptr(x_ptr, shape=(M, N), strides=(N, 1), offsets=(0, 0), block_shape=(M, N), order=(1, 0))
    dst = tl.make_block_ptr(out_ptr, shape=(M, N), strides=(N, 1), offsets=(0, 0), block_shape=(M, N), order=(1, 0))
    x = tl.load(src).to(tl.float32) * 0.5
    tl.static_assert(dst.type.element_ty.shape == (M, N))
    tl.store(dst, x.to(dst.type.element_ty))  # a block pointer's type points at its block type


def test_a_value_cast_to_a_block_pointers_element_type_takes_its_dtype():
    x = np.random.default_rng(5).standard_normal((4, 8)).astype(np.float16)
    (_, interp), (_, sim) = both(lambda a, o, backend: half_rows_kernel[(1,)](a, o, M=4, N=8, backend=backend),
                                 x, np.zeros((4, 8), np.float16))
    np.testing.assert_array_equal(interp, (x.astype(np.float32) * 0.5).astype(np.float16))
    np.testing.assert_array_equal(sim, interp)
