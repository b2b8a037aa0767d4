"""Full blocks: a loop over a row in blocks runs its full blocks without their masks, then the part-full one.

Triton's tutorial layer norm masks every block of its loops ``for off in range(0, N, BLOCK_SIZE)`` by
``cols < N`` (``cols = off + tl.arange(0, BLOCK_SIZE)``), and its variance selects ``tl.where(cols < N, x - mean,
0.0)``: on the vector unit that mask is built and broadcast over the block every trip, though only the last
block can be part-full. :func:`full_blocks` splits such a loop ``for iv in range(lower, upper, step)``, whose
body masks lanes by ``iv + tl.arange(s, e) < upper`` (``s >= 0``; a constant positive ``step``), in two:

- ``for iv in range(lower, main, step)`` with ``main = upper - (e - 1)`` (``upper`` clamped first so that the
  difference does not wrap), in which every such mask is true (``iv + e - 1 < upper``): a load or store under
  it unmasked (a load's ``other`` dropped), ``tl.where(mask, a, b)`` is ``a`` and ``mask & m`` is ``m``;
- ``for iv in range(first, upper, step)``, the loop as it was on the values the first yields, ``first`` the
  first ``lower + k * step`` not below ``main`` (the block past the main loop's last; computed in the bounds'
  dtype: a range wider than the dtype's largest value wraps, as the loop's own counter may).

Every trip runs the body it ran, in order, on the lanes it computed: the results are the loop's bit for bit.
A mask of another bound (``cols < M`` in a loop to ``N``) is kept.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ir.builder import Fresh
from ..ir.core import Block, Instr, Kernel, Op, Value, walk
from ..ir.treemap import tree_map
from .loops import constant_step, fresh_values


class Peel:
    """The rewrite of :func:`full_blocks` over one kernel; ``count`` the masked uses it dropped (its
    :meth:`masks` and :meth:`unmasked` also drop the masks of the runs of an unrolled loop that are full:
    :func:`ascdsl.passes.reuse.unrolled_loops`)."""

    def __init__(self, kernel: Kernel):
        self.emit = Fresh(kernel)
        self.defs = {r.id: i for i in walk(kernel.body) for r in i.results}
        self.count = 0

    def lanes(self, v: Value, index: Value) -> int | None:
        """``e`` where ``v`` is ``index + tl.arange(s, e)`` (``s >= 0``, either order), else None."""
        d = self.defs.get(v.id)
        if d is None or d.op is not Op.ADD or v.type.is_scalar:
            return None
        for a, r in (d.operands, d.operands[::-1]):
            ar = self.defs.get(r.id)
            if a.id == index.id and ar is not None and ar.op is Op.ARANGE and ar.attr("start") >= 0:
                return ar.attr("end")
        return None

    def masks(self, loop: Instr) -> dict[int, int]:
        """The body's masks ``index + tl.arange(s, e) < upper`` of ``loop``, a loop of a constant positive step:
        their ids -> ``e``."""
        index, upper = loop.regions[0].args[0], loop.operands[1]
        if constant_step(self.defs, loop) is None:
            return {}
        out = {}
        for i in walk(loop.regions[0]):
            if i.op is Op.LT and i.operands[1].id == upper.id:
                e = self.lanes(i.operands[0], index)
                if e is not None:
                    out[i.result.id] = e
        return out

    def unmasked(self, block: Block, true: set[int], subst: dict[int, Value]) -> Block:
        """``block`` with the masks ``true`` (ids) known true: the uses the module docstring lists dropped."""
        out = []
        for instr in block.body:
            instr = replace(instr, operands=tuple(subst.get(v.id, v) for v in instr.operands),
                            regions=tuple(self.unmasked(r, true, subst) for r in instr.regions))
            ops = instr.operands
            if instr.op is Op.LOAD and instr.attr("has_mask") and ops[1].id in true:
                instr = replace(instr, operands=ops[:1], attrs=_unmasked(instr.attrs))
            elif instr.op is Op.STORE and instr.attr("has_mask") and ops[2].id in true:
                instr = replace(instr, operands=ops[:2], attrs=_unmasked(instr.attrs))
            elif instr.op is Op.WHERE and ops[0].id in true and ops[1].type == instr.result.type:
                subst[instr.result.id] = ops[1]
            elif instr.op is Op.AND and any(v.id in true for v in ops) and any(
                    v.id not in true and v.type == instr.result.type for v in ops):
                subst[instr.result.id] = next(v for v in ops if v.id not in true)
            else:
                out.append(instr)
                continue
            self.count += 1
            if instr.op in (Op.LOAD, Op.STORE):
                out.append(instr)
        return Block(block.args, tuple(out))

    def split(self, loop: Instr, masks: dict[int, int], out: list) -> Instr | None:
        """The main loop of ``loop`` (its values renamed, appended to ``out`` after the bounds it needs) and the
        loop of the last block, which keeps ``loop``'s results; None (``out`` as it was) where the body drops no
        use of ``masks``."""
        before = self.count
        body = self.unmasked(loop.regions[0], set(masks), {})
        if self.count == before:
            return None
        lower, upper, step = loop.operands[:3]
        t, loc = upper.type, loop.loc
        reach = max(masks.values()) - 1  # the main loop's trips have every lane below upper
        dtype = t.dtype.np

        def const(value):
            return self.emit.instr(out, Op.CONST, t, (), (("value", int(value)),), loc)

        def op(code, *operands):
            return self.emit.instr(out, code, t, operands, (), loc)

        main = op(Op.SUB, op(Op.MAXIMUM, upper, const(np.iinfo(dtype).min + reach)), const(reach))
        span = op(Op.ADD, op(Op.SUB, main, lower), op(Op.SUB, step, const(1)))
        trips = op(Op.MAXIMUM, const(0), op(Op.IDIV, span, step))
        first = op(Op.ADD, lower, op(Op.MUL, trips, step))
        fresh = fresh_values(self.emit, (loop,))
        head = tree_map(replace(loop, regions=(body,)), before=lambda x: fresh.get(x.id) if isinstance(x, Value) else None)
        out.append(replace(head, operands=(lower, main, step, *loop.operands[3:])))
        return replace(loop, operands=(first, upper, step, *head.results))

    def block(self, block: Block) -> Block:
        out: list[Instr] = []
        for instr in block.body:
            instr = replace(instr, regions=tuple(self.block(r) for r in instr.regions))
            masks = self.masks(instr) if instr.op is Op.FOR else {}
            last = self.split(instr, masks, out) if masks else None
            out.append(instr if last is None else last)
        return Block(block.args, tuple(out))


def _unmasked(attrs) -> tuple:
    return tuple((k, False) if k in ("has_mask", "has_other") else (k, v) for k, v in attrs)


def full_blocks(kernel: Kernel, platform=None) -> Kernel:
    """Each loop whose body masks lanes by the loop's own bound split into its full blocks, unmasked, and the
    part-full one (the module docstring); ``kernel`` where no loop has such a mask to drop."""
    p = Peel(kernel)
    body = p.block(kernel.body)
    return kernel.with_body(body) if p.count else kernel


__all__ = ["Peel", "full_blocks"]
