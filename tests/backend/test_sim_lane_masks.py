"""Accesses masked by any bool tile on the simulator against the interpreter: no masked-off lane reaches
memory (the simulator's bounds and race checks fail on a GM access past a tensor or two programs
writing one element), whatever the mask: one true only on a prefix or suffix of a block at the end or
the start of a tensor, masks computed from loaded values, 2-D masks, masks of strided accesses, of
atomics, of gathers and scatters through 2-D tiles of indices, of 8-bit and bool elements, and stores
where programs share the region (overlapping windows, in loops, two stores to one tensor)."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from tests.backend.helpers import CANN, assert_type_checks, both, each


@ascdsl.jit
def window_kernel(x_ptr, out_ptr, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs - SHIFT, mask=offs >= SHIFT, other=-1.0)  # true on a suffix: lanes before x
    tl.store(out_ptr + offs, x)


@ascdsl.jit
def flagged_kernel(f_ptr, x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    on = tl.load(f_ptr + offs) != 0  # a mask loaded from memory, true on a prefix of the last block
    x = tl.load(x_ptr + offs, mask=on, other=-1.0)
    tl.store(out_ptr + offs, x + 1.0, mask=on)


def test_masks_true_on_a_prefix_or_suffix_read_nothing_past_the_tensor():
    def check(shift, block):
        x = np.arange(block - shift, dtype=np.float32)
        want, got = both(window_kernel[(1,)], x, np.zeros(block, np.float32), SHIFT=shift, BLOCK=block)
        assert (want[1][:shift] == -1.0).all() and (want[1][shift:] == x).all()
        np.testing.assert_array_equal(want[1], got[1])
    each(check, [(5, 32), (1, 64), (31, 32)])
    n, block = 100, 64
    flags = (np.arange(2 * block) < n).astype(np.int32)
    want, got = both(flagged_kernel[(2,)], flags, np.arange(n, dtype=np.float32), np.zeros(n, np.float32),
                     BLOCK=block)
    np.testing.assert_array_equal(want[2], np.arange(n, dtype=np.float32) + 1.0)
    np.testing.assert_array_equal(want[2], got[2])


@ascdsl.jit
def triangle_kernel(x_ptr, out_ptr, N: tl.constexpr, M: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    lower = cols <= rows  # row r reads r + 1 elements: the block's last row lies past x
    x = tl.load(x_ptr + rows * N + cols - (N - 1), mask=lower & (rows > 0), other=0)
    tl.store(out_ptr + rows * N + cols, x * 3, mask=(x % 2 == 1) | (cols == rows))


def test_2d_masks_read_and_write_only_their_lanes():
    def check(n, m):
        x = np.arange((m - 2) * n + m + 1, dtype=np.int32) * 7 % 11  # ends at the last true lane
        want, got = both(triangle_kernel[(1,)], x, np.full(m * n, -4, np.int32), N=n, M=m)
        assert (want[1] == -4).any() and (want[1] % 3 == 0).any()
        np.testing.assert_array_equal(want[1], got[1])
    each(check, [(16, 8), (8, 5)])


@ascdsl.jit
def halo_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * (BLOCK // 2) + tl.arange(0, BLOCK)  # overlapping windows: each writes its parity
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, x * 2.0, mask=(offs % 2 == pid % 2) & (offs < n))


@ascdsl.jit
def looped_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        tl.store(out_ptr + offs, x, mask=(x > 0.0) & (offs < n))  # in a loop
        tl.store(out_ptr + offs, -x, mask=x < -1.0)  # a second store to the tensor


def test_stores_masked_by_bool_tiles_where_programs_share_the_region():
    def check(n, block):
        x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
        want, got = both(halo_kernel[(2 * ascdsl.cdiv(n, block),)], x, np.full(n, 5.0, np.float32), n, BLOCK=block)
        assert (want[1] == 5.0).any() and (want[1] == x * 2.0).sum() > n // 2
        np.testing.assert_array_equal(want[1], got[1])
        want, got = both(looped_kernel[(1,)], x, np.full(n, 5.0, np.float32), n, BLOCK=block)
        assert (want[1] == 5.0).any() and (want[1] > 1.0).any()
        np.testing.assert_array_equal(want[1], got[1])
    each(check, [(100, 32), (37, 16)])


@ascdsl.jit
def strided_kernel(x_ptr, out_ptr, acc_ptr, n, STRIDE: tl.constexpr, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + cols * STRIDE, mask=(cols % 3 != 0) & (cols < n), other=-1.0)  # strided, masked by a bool tile
    tl.store(out_ptr + cols * 2, v, mask=(v > 0.0) & (cols < n))
    tl.atomic_add(acc_ptr + tl.arange(0, BLOCK), v, mask=(v > 2.0) & (cols < n))  # every program adds here


def test_strided_and_atomic_accesses_masked_by_bool_tiles():
    def check(n, stride, block):
        x = np.random.default_rng(n).integers(-4, 8, n * stride).astype(np.float32)  # exact sums in any order
        x[stride * (n - 1) + 1:] = np.nan  # past the last lane read
        want, got = both(strided_kernel[(ascdsl.cdiv(n, block),)], x, np.zeros(2 * n, np.float32),
                         np.zeros(block, np.float32), n, STRIDE=stride, BLOCK=block)
        assert want[2].any() and (want[1] > 0).any()
        np.testing.assert_array_equal(want[1], got[1])
        np.testing.assert_array_equal(want[2], got[2])
    each(check, [(40, 3, 16), (64, 2, 32)])


@ascdsl.jit
def gather_2d_kernel(x_ptr, idx_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rows, cols = tl.arange(0, M)[:, None], tl.arange(0, N)[None, :]
    idx = tl.load(idx_ptr + rows * N + cols)
    v = tl.load(x_ptr + idx, mask=(cols < 3) | (idx % 4 == 1), other=7.0)  # a masked 2-D gather
    tl.store(out_ptr + rows * N + cols, v)
    tl.store(out_ptr + M * N + idx, v + 1.0, mask=idx >= M * N // 2)  # a masked 2-D scatter


def test_masked_gathers_and_scatters_through_2d_index_tiles():
    def check(m, n):
        idx = np.random.default_rng(m).permutation(m * n).astype(np.int32)
        idx[n + 4:n + 6] = -5  # not read: the mask is false there
        x = np.random.default_rng(n).standard_normal(m * n).astype(np.float32)
        want, got = both(gather_2d_kernel[(1,)], x, idx, np.zeros(2 * m * n, np.float32), M=m, N=n)
        assert (want[2][:m * n] == 7.0).any()
        np.testing.assert_array_equal(got[2], want[2])
    each(check, [(4, 16), (3, 8)])


@ascdsl.jit
def gather_by_mod_kernel(x_ptr, idx_ptr, out_ptr, N: tl.constexpr):
    idx = tl.load(idx_ptr + tl.arange(0, N))
    tl.store(out_ptr + tl.arange(0, N), tl.load(x_ptr + idx, mask=idx % 4 == 1, other=7.0))


def test_a_gather_reads_its_indices_after_the_mask_computed_from_them():
    """The index tile's last use is the gather's `GetValue`s, after `idx % 4`: the buffer planner must
    not write that remainder over the indices (it did: a silent wrong answer)."""
    idx = np.random.default_rng(2).permutation(64).astype(np.int32)
    x = np.random.default_rng(3).standard_normal(64).astype(np.float32)
    want, got = both(gather_by_mod_kernel[(1,)], x, idx, np.zeros(64, np.float32), N=64)
    assert np.array_equal(want[2], np.where(idx % 4 == 1, x[idx], 7.0).astype(np.float32))
    np.testing.assert_array_equal(got[2], want[2])


@ascdsl.jit
def bytes_kernel(x_ptr, idx_ptr, out_ptr, n, STRIDE: tl.constexpr, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = cols < n
    x = tl.load(x_ptr + cols * STRIDE, mask=inside & (cols % 3 != 0), other=5)  # strided, masked by a bool tile
    idx = tl.load(idx_ptr + cols, mask=inside, other=0)
    g = tl.load(x_ptr + idx, mask=inside & (idx % 2 == 0), other=3)  # a masked gather
    tl.store(out_ptr + cols, x, mask=inside & (idx % 3 != 1))  # a store masked by a bool tile: a scatter
    tl.store(out_ptr + n + cols * 2, g, mask=inside)  # a strided store


@ascdsl.jit
def unfilled_kernel(x_ptr, idx_ptr, out_ptr, n, STRIDE: tl.constexpr, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    read = (cols < n) & (cols % 3 != 0)
    x = tl.load(x_ptr + cols * STRIDE, mask=read)
    idx = tl.load(idx_ptr + cols, mask=cols < n, other=0)
    g = tl.load(x_ptr + idx, mask=cols < n)
    tl.store(out_ptr + cols, x, mask=read & (idx % 3 != 1))
    tl.store(out_ptr + n + cols * 2, g, mask=cols < n)


@pytest.mark.parametrize("kernel, dtype", [(bytes_kernel, np.int8), (bytes_kernel, np.uint8), (unfilled_kernel, np.bool_),
                                           (unfilled_kernel, np.int64)], ids=["int8", "uint8", "bool", "int64"])
def test_lane_by_lane_accesses_of_8_and_64_bit_elements(kernel, dtype):
    """Strided loads, gathers, stores masked by bool tiles and strided stores of 8-bit elements (one-byte
    bursts, moved by `Gather` as the low bytes of 16-bit words) and of int64 ones (as int32 pairs; their
    masked loads take no `other`: filling lanes is int64 arithmetic). The tensors end at the last lane
    read or written (the simulator checks GM bounds); masked-off stores leave the output's marks."""
    def check(n, stride, block):
        rng = np.random.default_rng(n)
        lo, hi = (0, 2) if dtype == np.bool_ else (np.iinfo(dtype).min, np.iinfo(dtype).max + 1)
        x = rng.integers(lo, hi, (n - 1) * stride + 1).astype(dtype)
        idx = rng.integers(0, len(x), n).astype(np.int32)
        out = np.full(3 * n, 1 if dtype == np.bool_ else 7, dtype)
        want, got = both(kernel[(ascdsl.cdiv(n, block),)], x, idx, out, n, STRIDE=stride, BLOCK=block)
        assert np.array_equal(want[2][n::2], x[idx] if kernel is unfilled_kernel else np.where(idx % 2 == 0, x[idx], 3))
        np.testing.assert_array_equal(got[2], want[2], err_msg=f"n={n}")
    each(check, [(37, 3, 16), (64, 2, 32)])


@ascdsl.jit
def byte_atomic_kernel(x_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + cols, mask=cols < n, other=0)
    tl.atomic_add(acc_ptr + cols, v, mask=(v > 2) & (cols < n))
    tl.atomic_add(acc_ptr + n + tl.arange(0, BLOCK), v, mask=(v < 0) & (cols < n))  # every program adds here


def test_int8_atomics_masked_by_bool_tiles():
    """One-byte bursts under `SetAtomicAdd<int8_t>` (int8 sums wrap, in any order); A2 has no uint8 atomics."""
    x = np.random.default_rng(5).integers(-128, 128, 37).astype(np.int8)
    want, got = both(byte_atomic_kernel[(3,)], x, np.zeros(37 + 16, np.int8), 37, BLOCK=16)
    assert want[1][37:].any()
    np.testing.assert_array_equal(got[1], want[1])
    with pytest.raises(ascdsl.CompilationError, match="cannot run on the Ascend A2 vector cores") as err:
        byte_atomic_kernel[(3,)](x.view(np.uint8), np.zeros(37 + 16, np.uint8), 37, BLOCK=16, backend="sim")
    assert "test_sim_lane_masks.py:" in str(err.value)


@CANN
def test_lane_masked_accesses_type_check_against_cann(tmp_path):
    """Span loads, lane-masked gathers and scatters (strided, atomic, 2-D) in one kernel file, against the
    real CANN headers."""
    f32, i32 = (tl.pointer_type(d) for d in (dtypes.float32, dtypes.int32))
    kernels = [k.kernels[0] for k in (
        window_kernel.specialize(f32, f32, SHIFT=5, BLOCK=32),
        flagged_kernel.specialize(i32, f32, f32, BLOCK=64),
        triangle_kernel.specialize(i32, i32, N=16, M=8),
        looped_kernel.specialize(f32, f32, dtypes.int32, BLOCK=32),
        strided_kernel.specialize(f32, f32, f32, dtypes.int32, STRIDE=3, BLOCK=16),
        gather_2d_kernel.specialize(f32, i32, f32, M=4, N=16))]
    assert_type_checks("lane_masks", kernels, tmp_path)
