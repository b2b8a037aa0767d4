"""What the loop rewrites (:mod:`.peel`, :mod:`.reuse`) share: a loop's constant step and fresh copies of a
region's values."""
from __future__ import annotations

from ..ir.builder import Fresh
from ..ir.core import Block, Instr, Op, Value, walk


def constant_step(defs: dict[int, Instr], loop: Instr) -> int | None:
    """The step of ``loop`` where it is a positive integer constant (``defs``: the kernel's definitions by
    result id), else None."""
    d = defs.get(loop.operands[2].id)
    if d is None or d.op is not Op.CONST or type(d.attr("value")) is not int or d.attr("value") <= 0:
        return None
    return d.attr("value")


def fresh_values(emit: Fresh, instrs) -> dict[int, Value]:
    """A fresh value for each value ``instrs`` (and their regions) define, by the id of the value it copies."""
    return {v.id: emit.value(v.type)
            for i in walk(Block((), tuple(instrs))) for v in (*i.results, *(a for r in i.regions for a in r.args))}


__all__ = ["constant_step", "fresh_values"]
