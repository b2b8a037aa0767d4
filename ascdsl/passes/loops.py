"""What the loop rewrites (:mod:`.peel`, :mod:`.reuse`) share: a loop's constant step and fresh copies of a
region's values; and :func:`invariant_masks`, the masks a loop computes from values defined before it, moved
before it."""
from __future__ import annotations

from dataclasses import replace

from .. import dtypes
from ..ir.builder import Fresh
from ..ir.core import Block, GroupOp, Instr, Kernel, Op, Value, walk


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


def invariant_masks(kernel: Kernel, platform=None) -> Kernel:
    """``kernel`` with each bool tile a ``for`` loop's body computes (elementwise and shape ops) from values
    defined before the loop computed once before it: the persistent form's ``tl.where(cols < N, ...)`` broadcasts
    its invariant ``[BLOCK]`` mask over the trip's ``[P, BLOCK]`` rows (through float16 in the backend) in every
    trip otherwise. Pure ops, so a loop of no trip only computes them for nothing; a mask is a bit a lane."""
    body = _hoisted(kernel.body)
    return kernel if body == kernel.body else replace(kernel, body=body)


_MASK_OPS = GroupOp.ELEMENTWISE | GroupOp.SHAPE


def _hoisted(block: Block) -> Block:
    out: list[Instr] = []
    for instr in block.body:
        if instr.regions:
            instr = replace(instr, regions=tuple(_hoisted(r) for r in instr.regions))
        if instr.op is Op.FOR:
            region = instr.regions[0]
            inside = {v.id for i in walk(region) for v in (*i.results, *(a for r in i.regions for a in r.args))}
            inside |= {a.id for a in region.args}
            moved: list[Instr] = []
            for i in region.body:
                if (i.op in _MASK_OPS and not i.regions and len(i.results) == 1 and not i.result.type.is_scalar
                        and i.result.type.dtype == dtypes.bool_ and all(v.id not in inside for v in i.operands)):
                    moved.append(i)
                    inside.discard(i.result.id)
            if moved:
                kept = tuple(i for i in region.body if not any(i is m for m in moved))
                out += moved
                instr = replace(instr, regions=(replace(region, body=kept), *instr.regions[1:]))
        out.append(instr)
    return replace(block, body=tuple(out))


__all__ = ["constant_step", "fresh_values", "invariant_masks"]
