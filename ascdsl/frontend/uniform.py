"""Grid barriers (``sync_block_all``) under control flow every program takes alike: a program that reaches a
barrier fewer times than the others leaves them waiting on the device for ever. A barrier under a branch or in a
loop whose condition or bounds derive from the program id (an early ``return`` is a branch around the rest) is
refused at compile time; control flow on loaded values, which may or may not be the same in every program, is
checked where the interpreter runs it (:func:`ascdsl.interpreter.control.sync_all`).
"""
from __future__ import annotations

from ..errors import CompilationError
from ..ir.core import Block, Instr, Kernel, Op, walk
from ..passes.batching import varying

_WHAT = {Op.IF: "a branch", Op.FOR: "a loop", Op.WHILE: "a while loop"}


def check_barriers(kernel: Kernel) -> None:
    """A located error at the first grid barrier of ``kernel`` under program-dependent control flow."""
    if any(i.op is Op.SYNC_ALL for i in walk(kernel.body)):
        _check(kernel.body, varying(kernel, (0, 1, 2)), None)


def _divergent(instr: Instr, var: frozenset[int]) -> bool:
    if instr.op is Op.IF:
        return instr.operands[0].id in var
    if instr.op is Op.FOR:
        return any(v.id in var for v in instr.operands[:3])
    return instr.op is Op.WHILE and instr.regions[0].body[-1].operands[0].id in var


def _check(block: Block, var: frozenset[int], around: Instr | None) -> None:
    for instr in block.body:
        if instr.op is Op.SYNC_ALL and around is not None:
            raise CompilationError(
                instr.loc, f"a grid barrier (sync_block_all) in {_WHAT[around.op]} whose "
                f"{'bounds depend' if around.op is Op.FOR else 'condition depends'} on the program id (line "
                f"{around.loc.line}): the programs would not all reach it, and the device would wait for ever",
                hint="put the barrier where every program reaches it: mask the loads and stores of the programs "
                     "that have no work instead of branching (or returning) around it")
        inner = instr if around is None and _divergent(instr, var) else around
        for region in instr.regions:
            _check(region, var, inner)
