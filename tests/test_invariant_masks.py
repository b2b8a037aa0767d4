"""``passes.loops.invariant_masks``: a loop's bool tiles computed from values defined before it are computed once
before it. Layer norm's X-resident form at three rows a trip broadcasts its part-full last chunk's ``cols < N`` (the
full ones have none) over the trip's rows in its loop; after the pass no mask of the loop is computed from values
outside it alone, the kernel prints, parses and gives the interpreter's results bit for bit, and a mask that
depends on the loop stays in it."""
from __future__ import annotations

import numpy as np

from ascdsl import dtypes, interpreter
from ascdsl.ir import Module, Op, walk
from ascdsl.ir.text import dump, parse
from ascdsl.passes.loops import invariant_masks
from tests.test_held_loads import x_resident_at


def _masks_of_outside(kernel):
    """The bool tiles the kernel's top-level loop computes from values defined outside it alone."""
    (loop,) = [i for i in kernel.body.body if i.op is Op.FOR]
    inside = {v.id for i in walk(loop.regions[0]) for v in i.results} | {a.id for a in loop.regions[0].args}
    return [i for i in loop.regions[0].body if i.results and not i.result.type.is_scalar
            and i.result.type.dtype == dtypes.bool_ and all(v.id not in inside for v in i.operands)]


def test_a_loops_invariant_masks_are_computed_before_it():
    m = 7
    kernel, args = x_resident_at(m, 3000, 3)
    # the last of three chunks' `cols < N` (the two full ones have none: `unrolled_loops`), expanded for the load
    # and the where
    assert len(_masks_of_outside(kernel)) == 2
    hoisted = invariant_masks(kernel)
    assert _masks_of_outside(hoisted) == [] and parse(dump(Module((hoisted,)))) == Module((hoisted,))
    (before,), (loop,) = ([i for i in k.body.body if i.op is Op.FOR] for k in (kernel, hoisted))
    assert len(before.regions[0].body) - len(loop.regions[0].body) == 4  # and each broadcast over the rows
    assert any(i.result.type.dtype == dtypes.bool_ for i in loop.regions[0].body if i.results)  # the rows' masks
    extra = [np.int32(m), np.int32(3 * 3)]
    runs = []
    for k in (kernel, hoisted):
        got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        interpreter.run(k, got + extra, (3, 1, 1))
        runs.append(got)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(*runs) if isinstance(a, np.ndarray))
    assert invariant_masks(hoisted) is hoisted
