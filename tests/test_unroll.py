"""Loops unrolled to the trip count a launch gives them (ascdsl/passes/reuse.py: ``unrolled_loops``,
``launch_trips``): a row of a few blocks that several loops read is loaded once and kept in UB. The unrolled
kernel prints, parses and gives the loops' results bit for bit on the interpreter (each trip adds in the
loop's order), alone and batched; a write to the re-read rows between the loops, loops of different trip
counts and a row whose loads fit UB only single-buffered are refused; on the simulator it equals the
interpreter."""
from __future__ import annotations

import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes, sim
from ascdsl.backend.batching import batchrun
from ascdsl.bench_kernels import layer_norm_kernel
from ascdsl.ir import Module, Op, walk
from ascdsl.ir.text import dump, parse
from ascdsl.passes.batching import batch_programs
from ascdsl.passes.reuse import assume_disjoint, decided_branches, launch_trips, taken_branches, unrolled_loops
from ascdsl.platforms import get_platform
from ascdsl.testing import assert_close
from tests.test_reuse import _layer_norm, _runs_like

pytestmark = pytest.mark.usefixtures("prebuilt_module")  # the simulator kernels in few g++ runs

PLATFORM = get_platform("Ascend910B3")


def _fors(block) -> int:
    return sum(i.op is Op.FOR for i in walk(block))


@pytest.mark.parametrize("n", [200, 256, 300, 100])
def test_unrolled_layer_norm_gives_the_loops_results_bit_for_bit(n):
    """Rows of 200 or 256 run two blocks of 128 (the unrolled branch: each row's two blocks of X loaded once for
    the three loops), 300 three and 100 one (the loops): the versioned kernel, the branch the launch takes alone
    and batched, give the loops' results bit for bit on the interpreter."""
    m = 37
    args = _layer_norm(m, n)
    kernel = assume_disjoint(layer_norm_kernel.specialize(*args, BLOCK_SIZE=128).kernels[0])
    assert launch_trips(kernel, args) == -(-n // 128)
    versioned = unrolled_loops(kernel, 2)
    assert versioned is not kernel and parse(dump(Module((versioned,)))) == Module((versioned,))
    straight = versioned.body.body[-1].regions[0]
    assert _fors(straight) == 0 and sum(i.op is Op.LOAD for i in walk(straight)) == 3 * 2  # X, W, B: 2 blocks each
    decided = decided_branches(versioned, args)
    assert decided == (n in (200, 256),)
    taken = taken_branches(versioned, decided)
    _runs_like(kernel, args, m, (versioned, [], m), (taken, [], m), (batch_programs(taken, 4), [np.int32(m)], 10))


@ascdsl.jit
def rescale_in_place_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """The first loop writes the rows the second reads again."""
    row = tl.program_id(0) * n
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, n, BLOCK):
        x = tl.load(x_ptr + row + off + cols, mask=off + cols < n, other=0.0)
        acc += x
        tl.store(x_ptr + row + off + cols, x * 2.0, mask=off + cols < n)
    total = tl.sum(acc, axis=0)
    for off in range(0, n, BLOCK):
        x = tl.load(x_ptr + row + off + cols, mask=off + cols < n, other=0.0)
        tl.store(out_ptr + row + off + cols, x / total, mask=off + cols < n)


@ascdsl.jit
def two_ranges_kernel(x_ptr, out_ptr, n, m, BLOCK: tl.constexpr):
    """Loops to two bounds: the first sums the blocks of ``x``, the second fills those of ``out`` with the sum."""
    cols = tl.arange(0, BLOCK)
    total = 0.0
    for off in range(0, n, BLOCK):
        total += tl.sum(tl.load(x_ptr + off + cols, mask=off + cols < n, other=0.0), axis=0)
    for off in range(0, m, BLOCK):
        tl.store(out_ptr + off + cols, tl.zeros([BLOCK], dtype=tl.float32) + total, mask=off + cols < m)


def test_a_write_to_the_rows_between_the_loops_refuses_the_unrolling():
    """A store through the pointer the second loop reads may change its bytes: nothing to reuse, the kernel as
    it was, even for a launch whose pointer arguments are disjoint."""
    args = [np.ones((4, 256), np.float32), np.zeros((4, 256), np.float32), np.int32(256)]
    kernel = assume_disjoint(rescale_in_place_kernel.specialize(*args, BLOCK=128).kernels[0])
    assert launch_trips(kernel, args) == 2
    assert unrolled_loops(kernel, 2) is kernel


def test_loops_of_different_trip_counts_give_no_launch_trips():
    x, out = np.ones(512, np.float32), np.zeros(512, np.float32)
    args = [x, out, np.int32(256), np.int32(384)]
    kernel = two_ranges_kernel.specialize(*args, BLOCK=128).kernels[0]
    assert launch_trips(kernel, args) is None
    assert launch_trips(kernel, [x, out, np.int32(256), np.int32(200)]) == 2


@pytest.mark.parametrize("n, block, unrolled", [(256, 128, True), (8192, 1024, True), (10000, 1024, True),
                                                 (12000, 1024, False)])
def test_a_launch_unrolls_where_the_rows_fit_ub_double_buffered(n, block, unrolled):
    """Rows of two blocks of 128 run unrolled (the model estimates it faster); rows of 8192 float32, whose X, W
    and B are 96 KiB a program, fit UB only single-buffered, but their persistent form (``W`` and ``B`` held once
    a core) fits one row a trip double-buffered, which reads ``X`` once: unrolled (1.32x of the floor looping at
    P = 5 at 400x8192, 1.11x so); rows of 10000 fit one row a trip only computing ``x - mean`` again, which the
    launch takes since its tiles are spread over UB slots (``ubplan.SPREAD``: 1.26x at 200x10000, 1.42x looping;
    1.57x before, bound by the vector pipe); rows of 12000 (twelve chunks, 48 KiB of ``X`` and 96 KiB of ``W`` and
    ``B``) fit neither: the loops stay."""
    m = 400
    args = _layer_norm(m, n)
    kernel = layer_norm_kernel.specialize(*args, BLOCK_SIZE=block).kernels[0]
    chosen = batchrun.specialised(kernel, args, PLATFORM, m)
    assert (_fors(chosen.body) == 0) == unrolled


def test_unrolled_layer_norm_on_the_simulator_equals_the_interpreter():
    m, n = 400, 256
    want = _layer_norm(m, n)
    got = [a.copy() for a in want]
    layer_norm_kernel[(m,)](*want[:6], n, n, np.float32(1e-5), BLOCK_SIZE=128)
    with sim.record(), ascdsl.record.launches() as seen:
        layer_norm_kernel[(m,)](*got[:6], n, n, np.float32(1e-5), BLOCK_SIZE=128, backend="sim")
    (launched,) = seen
    assert _fors(batchrun.specialised(launched.kernel, launched.args, PLATFORM, m).body) == 0
    for w, g in zip(want, got):
        assert_close(g, w, dtypes.float32)


@pytest.mark.parametrize("trips, n", [(2, 200), (2, 256), (3, 300), (3, 384)])
def test_the_unrolled_runs_before_the_last_are_unmasked(trips, n):
    """Where every loop runs ``trips`` times, each run before the last has its lanes ``off + tl.arange(0, BLOCK)``
    below ``N`` (the last run's ``off`` is): its loads unmasked (``other`` dropped) and ``tl.where(cols < N, ...)``
    its value; only the last run keeps its masks (one ``where``, one masked load of each of X, W and B). The
    branch the launch takes, alone and batched, gives the loops' results bit for bit on the interpreter."""
    m = 13
    args = _layer_norm(m, n)
    kernel = assume_disjoint(layer_norm_kernel.specialize(*args, BLOCK_SIZE=128).kernels[0])
    versioned = unrolled_loops(kernel, trips)
    straight = versioned.body.body[-1].regions[0]
    loads = [i for i in walk(straight) if i.op is Op.LOAD]
    assert len(loads) == 3 * trips and sum(i.attr("has_mask") for i in loads) == 3
    assert sum(i.op is Op.WHERE for i in walk(straight)) == 1
    taken = taken_branches(versioned, decided_branches(versioned, args))
    assert taken is not versioned
    _runs_like(kernel, args, m, (taken, [], m), (batch_programs(taken, 4), [np.int32(m)], 4))


@pytest.mark.parametrize("recompute", [False, True])
def test_recomputing_the_tile_arithmetic_holds_less(recompute):
    """With ``recompute``, the straight branch still loads each block of X once, but computes its float tile
    arithmetic where each loop did (``x - mean`` in the variance's loop and again in the output's: two ``sub`` a
    block, one where the first is held for the second), which the launch takes where holding it leaves no room for
    two rows a trip; bit for bit the loops' results on the interpreter, alone and batched."""
    m, n, trips = 13, 300, 3
    args = _layer_norm(m, n)
    kernel = assume_disjoint(layer_norm_kernel.specialize(*args, BLOCK_SIZE=128).kernels[0])
    versioned = unrolled_loops(kernel, trips, recompute)
    straight = versioned.body.body[-1].regions[0]
    assert sum(i.op is Op.LOAD for i in walk(straight)) == 3 * trips
    subs = sum(i.op is Op.SUB and not i.result.type.is_scalar for i in walk(straight))
    assert subs == (2 if recompute else 1) * trips
    taken = taken_branches(versioned, decided_branches(versioned, args))
    _runs_like(kernel, args, m, (taken, [], m), (batch_programs(taken, 4), [np.int32(m)], 4))
