"""Full blocks (ascdsl/passes/peel.py): a loop masking its blocks by its own bound runs its full blocks
unmasked, then the part-full one. The split kernel prints, parses and gives the loop's results bit for bit on
the interpreter, alone and batched, for rows that are whole blocks, end part-full, or fit less than one; a mask
of another bound is kept; on the simulator it equals the interpreter."""
from __future__ import annotations

import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes, interpreter, sim
from ascdsl.bench_kernels import layer_norm_kernel
from ascdsl.ir import Module, Op, walk
from ascdsl.ir.text import dump, parse
from ascdsl.passes.batching import batch_programs
from ascdsl.passes.peel import full_blocks
from ascdsl.testing import assert_close
from tests.test_reuse import _layer_norm

pytestmark = pytest.mark.usefixtures("prebuilt_module")  # the simulator kernels in few g++ runs


def _masked(kernel) -> int:
    """Masked loads and stores, and selects."""
    return sum(i.op is Op.WHERE or (i.op in (Op.LOAD, Op.STORE) and i.attr("has_mask")) for i in walk(kernel.body))


def _same_results(a, b, args, grid, extra=()):
    want, got = [x.copy() for x in args], [x.copy() for x in args]
    interpreter.run(a, want, (grid, 1, 1))
    interpreter.run(b, got + list(extra), (grid if not extra else -(-grid // 4), 1, 1))
    for g, w in zip(got, want):
        assert g.tobytes() == w.tobytes()


@pytest.mark.parametrize("n", [256, 300, 130, 40, 0])
def test_split_layer_norm_gives_the_loops_results_bit_for_bit(n):
    """Rows of two whole blocks of 128, two and a part, one and two lanes, less than one, none."""
    m = 9
    args = _layer_norm(m, n)
    kernel = layer_norm_kernel.specialize(*args, BLOCK_SIZE=128).kernels[0]
    split = full_blocks(kernel)
    assert split is not kernel and parse(dump(Module((split,)))) == Module((split,))
    assert sum(i.op is Op.FOR for i in walk(split.body)) == 6
    # the loops of the last block keep the masked loads of X, W and B, the store of Y and the variance's
    # select; the main loops have none
    assert _masked(split) == _masked(kernel) == 7
    _same_results(kernel, split, args, m)
    _same_results(kernel, batch_programs(split, 4), args, m, [np.int32(m)])


@ascdsl.jit
def other_bound_kernel(x_ptr, out_ptr, n, m, BLOCK: tl.constexpr):
    """A loop to ``n`` whose blocks are masked by ``m``: a part-full block may come before the last."""
    cols = tl.arange(0, BLOCK)
    for off in range(0, n, BLOCK):
        x = tl.load(x_ptr + off + cols, mask=off + cols < m, other=1.0)
        tl.store(out_ptr + off + cols, x * 2.0, mask=off + cols < n)


def test_a_mask_of_another_bound_is_kept():
    args = [np.arange(256, dtype=np.float32), np.zeros(256, np.float32), np.int32(256), np.int32(100)]
    kernel = other_bound_kernel.specialize(*args, BLOCK=64).kernels[0]
    split = full_blocks(kernel)
    loads = [i for i in walk(split.body) if i.op is Op.LOAD]
    stores = [i for i in walk(split.body) if i.op is Op.STORE]
    assert len(loads) == 2 and all(i.attr("has_mask") for i in loads)
    assert [i.attr("has_mask") for i in stores] == [False, True]
    _same_results(kernel, split, args, 1)


@ascdsl.jit
def shifted_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Blocks masked by the loop's bound, but on lanes ``off + 1 + cols``: not of the form the pass knows."""
    cols = tl.arange(0, BLOCK)
    for off in range(0, n, BLOCK):
        lanes = off + 1 + cols
        tl.store(out_ptr + lanes, tl.load(x_ptr + lanes, mask=lanes < n, other=0.0), mask=lanes < n)


@ascdsl.jit
def backwards_kernel(x_ptr, out_ptr, n, m, BLOCK: tl.constexpr):
    """Blocks from the last down to ``m``, masked by that bound: a negative step."""
    cols = tl.arange(0, BLOCK)
    for off in range(n - 1, m, -BLOCK):
        tl.store(out_ptr + off + cols, tl.load(x_ptr + off + cols, mask=off + cols < m, other=0.0), mask=off + cols < m)


def test_a_loop_without_masks_it_knows_is_kept():
    x, out = np.arange(256, dtype=np.float32), np.zeros(256, np.float32)
    assert full_blocks(k := shifted_kernel.specialize(x, out, np.int32(256), BLOCK=64).kernels[0]) is k
    assert full_blocks(k := backwards_kernel.specialize(x, out, np.int32(256), np.int32(-64), BLOCK=64).kernels[0]) is k


@pytest.mark.parametrize("shape", [(120, 300), (97, 256)])
def test_split_layer_norm_on_the_simulator_equals_the_interpreter(shape):
    m, n = shape
    want = _layer_norm(m, n)
    got = [a.copy() for a in want]
    layer_norm_kernel[(m,)](*want[:6], n, n, np.float32(1e-5), BLOCK_SIZE=64)
    with sim.record():
        layer_norm_kernel[(m,)](*got[:6], n, n, np.float32(1e-5), BLOCK_SIZE=64, backend="sim")
    for w, g in zip(want, got):
        assert_close(g, w, dtypes.float32)
