"""Single elements and bools on the simulator (hazard and data-cache checks on) against the interpreter,
bit-exact: single-element loads from a tensor the kernel also stores to read what the stores before
them wrote (a wait for MTE3 and ``DataCacheCleanAndInvalid`` of the line first; straight-line, in a
loop, masked), and bool single-element stores and bool tiles filled from a scalar (masked bool loads with a runtime
``other``: test_sim_bool_tiles.py); gathers and scatters through 2-D tiles of indices (unmasked)."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from tests.backend.helpers import both, prebuilt


@ascdsl.jit
def reread_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    before = tl.load(x_ptr + 3)  # before the store: the old value
    tl.store(x_ptr + offs, x * 2.0, mask=offs < n)
    after = tl.load(x_ptr + 3)  # after it: the doubled one
    tl.store(x_ptr + n + offs, x + after - before, mask=offs < n)


@ascdsl.jit
def reread_loop_kernel(acc_ptr, out_ptr, steps, BLOCK: tl.constexpr):
    """Each iteration stores the running tile and reads one element of it back: a chain through GM."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(acc_ptr + offs)
    for i in range(steps):
        tl.store(acc_ptr + offs, x + i)
        last = tl.load(acc_ptr + (i % BLOCK), mask=i >= 0, other=-1.0)
        x = x + last
    tl.store(out_ptr + offs, x)


def test_single_loads_after_stores_read_what_they_wrote():
    n = 40
    x = np.arange(2 * n, dtype=np.float32)
    want, got = both(reread_kernel[(1,)], x, n, BLOCK=64)
    np.testing.assert_array_equal(got[0], want[0])
    assert (want[0][n:] == x[:n] + 3.0).all()  # after - before = 6 - 3
    acc = np.linspace(0, 1, 32).astype(np.float32)
    want, got = both(reread_loop_kernel[(1,)], acc, np.zeros(32, np.float32), 5, BLOCK=32)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


@ascdsl.jit
def bool_store_kernel(x_ptr, out_ptr, flags_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr, tl.sum(x) > 0)
    tl.store(out_ptr + 1, tl.max(x) > 100.0)
    tl.store(out_ptr + 2, tl.program_id(0) == 0)
    tl.store(flags_ptr + offs, tl.full((BLOCK,), True, tl.int1) & (x > 0.5))


def test_bool_single_element_stores_and_filled_bool_tiles():
    rng = np.random.default_rng(41)

    def check(scale):
        x = (rng.standard_normal(64) * scale).astype(np.float32)
        want, got = both(bool_store_kernel[(1,)], x, np.zeros(4, np.bool_), np.zeros(64, np.bool_), BLOCK=64)
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(got[2], want[2])
        assert list(want[1][:3]) == [x.sum() > 0, x.max() > 100, True] and not want[1][3]
    prebuilt(check, [(1.0,)])
    for scale in (1.0, -1000.0, 1000.0):
        check(scale)


@ascdsl.jit
def reread_reduced_offset_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, x + 1.0)
    v = tl.load(x_ptr + tl.max(offs))  # the offset comes from a reduction on the vector unit
    tl.store(x_ptr + BLOCK + offs, x + v)


def test_reread_at_a_reduced_offset_follows_the_stores():
    """The offset is a reduction's result (a member set in the compute stage); the load runs in ``Process``
    after that segment's CopyOut, an MTE3 wait and the cache line's invalidation."""
    x = np.arange(64, dtype=np.float32)
    want, got = both(reread_reduced_offset_kernel[(1,)], x, BLOCK=32)
    np.testing.assert_array_equal(want[0][32:], x[:32] + (x[31] + 1))  # v is the stored x[31] + 1
    np.testing.assert_array_equal(got[0], want[0])


@ascdsl.jit
def gather_2d_kernel(x_ptr, idx_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rows, cols = tl.arange(0, M)[:, None], tl.arange(0, N)[None, :]
    idx = tl.load(idx_ptr + rows * N + cols)
    v = tl.load(x_ptr + idx)  # a 2-D tile of indices: gathered as its rows in a row
    tl.store(out_ptr + rows * N + cols, v * 2.0)
    tl.store(out_ptr + M * N + idx, v + 1.0)  # and scattered back


def test_gathers_and_scatters_through_2d_index_tiles():
    rng = np.random.default_rng(43)
    for m, n in ((4, 16), (3, 8)):
        idx = rng.permutation(m * n).astype(np.int32)
        idx[:2] = idx[2]  # repeated indices: the scatter's last lane wins, as on the interpreter
        x = rng.standard_normal(m * n).astype(np.float32)
        want, got = both(gather_2d_kernel[(1,)], x, idx, np.zeros(2 * m * n, np.float32), M=m, N=n)
        np.testing.assert_array_equal(got[2], want[2], err_msg=f"{m}x{n}")
        assert (want[2][:m * n] == x[idx] * 2).all()




@ascdsl.jit
def reread_in_a_loop_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = 0.0
    for r in range(3):
        v = tl.load(x_ptr + r * n + offs, mask=offs < n, other=0.0)
        tl.store(out_ptr + r * n + offs, v + 1.0, mask=offs < n)
        low, high = tl.argmin(v, 0), tl.argmax(v, 0)
        acc += tl.load(out_ptr + r * n + low) * tl.load(out_ptr + tl.where(high > low, high - low, low - high))
    tl.store(out_ptr + 3 * n, acc)


def test_rereads_at_offsets_from_reductions_in_a_loop():
    n = 50
    x = np.random.default_rng(12).standard_normal(3 * n).astype(np.float32)
    want, got = both(reread_in_a_loop_kernel[(1,)], x, np.zeros(3 * n + 1, np.float32), n, BLOCK=64)
    np.testing.assert_array_equal(got[1], want[1])
