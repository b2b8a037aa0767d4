"""Loop-carried offsets: a pointer or an integer tile that a ``for`` loop advances by scalars is its
value on entry plus a carried scalar.

``x_ptrs += BLOCK_K * stride`` (or ``offs += BLOCK``, ``p += n`` of a scalar pointer) in a loop makes
the value a loop argument, which the memory-access analysis (:mod:`.access`) cannot see through: it
reads an address from its definition. :func:`carried_offsets` carries the sum of the steps instead, a
scalar ``k`` that enters the loop as 0, and defines the value at the top of the body as ``entry + k``
(and the loop's result as ``entry + k`` of the last ``k``): the same values in the same dtype, and an
address the analysis reads as affine. A value whose update is anything else stays a loop argument.
"""
from __future__ import annotations

from .. import dtypes
from ..dtypes import PointerType
from ..ir.builder import Fresh
from ..ir.core import Block, GroupOp, Instr, Kernel, Op, Type, Value, walk
from ..ir.symbol import equal

STEPS = frozenset({Op.PTR_ADD, Op.ADD, Op.SUB})
PURE = (GroupOp.ELEMENTWISE | GroupOp.LEAF) - {Op.PRINT}
"""Ops whose scalar results depend on their operands only (a step made of them is hoisted)."""
OFFSETS = frozenset({dtypes.int32, dtypes.int64})
"""Integer tiles carried as offsets (narrower ones wrap at their own width, which a sum of the steps
in a wider scalar would not)."""


def _carriable(t: Type) -> bool:
    return isinstance(t.dtype, PointerType) or not t.is_scalar and t.dtype in OFFSETS


def _steps(yielded: Value, arg: Value, defs: dict[int, Instr]) -> list[tuple[Op, Value]] | None:
    """The integer scalars the body adds to (``ADD``) or subtracts from (``SUB``) ``arg``, in order, to
    make ``yielded``, or None where ``yielded`` is anything else."""
    steps = []
    while yielded.id != arg.id:
        instr = defs.get(yielded.id)
        if instr is None or instr.op not in STEPS or instr.result.type != arg.type:
            return None
        x, s = instr.operands
        if instr.op is Op.ADD and x.type != arg.type:  # `step + value`
            x, s = s, x
        if x.type != arg.type or not s.type.is_scalar or not s.type.dtype.is_int:
            return None
        steps.append((Op.SUB if instr.op is Op.SUB else Op.ADD, s))
        yielded = x
    return steps[::-1]


def _invariant(steps, defs: dict[int, Instr], args) -> set[int] | None:
    """The ``id`` s of the body's instructions (``defs``: by result id) that compute ``steps`` where each step
    is the same on every iteration (pure scalar arithmetic of values from outside the loop), else None."""
    bound = {a.id for a in args}
    needed: set[int] = set()

    def same(v: Value) -> bool:
        instr = defs.get(v.id)
        if instr is None:
            return v.id not in bound
        if instr.op not in PURE or instr.regions or not instr.result.type.is_scalar:
            return False
        needed.add(id(instr))
        return all(same(x) for x in instr.operands)
    return needed if all(same(s) for _, s in steps) else None


class _Carried:
    """The rewrite of :func:`carried_offsets`."""

    def __init__(self, kernel: Kernel):
        self.fresh = Fresh(kernel)
        self.defs = {v.id: i for i in walk(kernel.body) for v in i.results}
        self.used = {x.id for i in walk(kernel.body) for x in i.operands}

    def block(self, block: Block) -> Block:
        body = []
        for instr in block.body:
            instr = instr.map_regions(self.block) if instr.regions else instr
            body += self.loop(instr) if instr.op is Op.FOR else [instr]
        return Block(block.args, tuple(body))

    def _is(self, v: Value, k: int) -> bool:
        """Whether ``v`` is the constant ``k`` (on the symbols' domains, for a constant of run-time tile extents)."""
        d = self.defs.get(v.id)
        return d is not None and d.op is Op.CONST and equal(d.attr("value"), k)

    def _count(self, out: list, loop: Instr, kt: Type) -> Value:
        """The iterations done before this one, ``(k - lo) // step``, in ``kt``."""
        iv, (lo, _, step) = loop.regions[0].args[0], loop.operands[:3]
        loc = loop.loc
        count = iv
        if not self._is(lo, 0):
            count = self.fresh.instr(out, Op.SUB, iv.type, (count, lo), (), loc)
        if not self._is(step, 1):
            count = self.fresh.instr(out, Op.IDIV, iv.type, (count, step), (), loc)  # exact
        if count.type != kt:
            count = self.fresh.instr(out, Op.CAST, kt, (count,), (("dtype", kt.dtype),), loc)
        return count

    def _sum(self, out: list, k: Value | None, steps, kt: Type, loc) -> Value:
        """``k`` (0 where None) plus the steps, in ``kt``."""
        for op, s in steps:
            if s.type != kt:
                s = self.fresh.instr(out, Op.CAST, kt, (s,), (("dtype", kt.dtype),), loc)
            if k is None:
                k = self.fresh.instr(out, Op.CONST, kt, (), (("value", 0),), loc) if op is Op.SUB else s
                if op is Op.ADD:
                    continue
            k = self.fresh.instr(out, op, kt, (k, s), (), loc)
        return k if k is not None else self.fresh.instr(out, Op.CONST, kt, (), (("value", 0),), loc)

    def loop(self, loop: Instr) -> list[Instr]:
        """``loop`` without the values it advances by scalars: each is its entry value plus the sum of the
        steps so far, ``count * step`` where the steps are the same on every iteration (hoisted to the
        top of the body), else a carried scalar; the value after the loop is its entry value plus a
        carried scalar where it is read."""
        (region,) = loop.regions
        *inner, yld = region.body
        defs = {v.id: i for i in inner for v in i.results}
        before, top, tail, after = [], [], [], []
        hoisted: set[int] = set()  # ids of the body's instructions moved to its top
        keep = list(range(len(region.args) - 1))  # the carried values that stay carried (maybe as offsets)
        args, entries, results = list(region.args[1:]), list(loop.operands[3:]), list(loop.results)
        yields = list(yld.operands)
        for j, arg in enumerate(region.args[1:]):  # after the induction variable
            steps = _steps(yields[j], arg, defs) if _carriable(arg.type) else None
            if steps is None:
                continue
            wide = any(s.type.dtype == dtypes.int64 for _, s in steps)
            kt = Type(arg.type.dtype if arg.type.dtype in OFFSETS else dtypes.int64 if wide else dtypes.int32)
            add = Op.PTR_ADD if isinstance(arg.type.dtype, PointerType) else Op.ADD
            entry, loc = loop.operands[3 + j], yld.loc
            invariant = _invariant(steps, defs, region.args)
            read_after = loop.results[j].id in self.used
            if invariant is not None:
                hoisted |= invariant
                offset = self.fresh.instr(top, Op.MUL, kt, (self._count(top, loop, kt), self._sum(top, None, steps, kt, loc)),
                                          (), loc)
                top.append(Instr(add, (arg,), (entry, offset), (), (), loc))
                if not read_after:
                    keep.remove(j)
                    continue
            entries[j] = self.fresh.instr(before, Op.CONST, kt, (), (("value", 0),), loop.loc)
            k = args[j] = self.fresh.value(kt)
            if invariant is None:
                top.append(Instr(add, (arg,), (entry, k), (), (), loc))
            yields[j] = self._sum(tail, k, steps, kt, loc)
            results[j] = self.fresh.value(kt)
            after.append(Instr(add, (loop.results[j],), (entry, results[j]), (), (), loop.loc))
        if not top:
            return [loop]
        moved = [i for i in inner if id(i) in hoisted]
        inner = [i for i in inner if id(i) not in hoisted]
        yld = Instr(Op.YIELD, yld.results, tuple(yields[j] for j in keep), yld.attrs, yld.regions, yld.loc)
        body = Block((region.args[0], *(args[j] for j in keep)), (*moved, *top, *inner, *tail, yld))
        operands = (*loop.operands[:3], *(entries[j] for j in keep))
        return [*before, Instr(Op.FOR, tuple(results[j] for j in keep), operands, loop.attrs, (body,), loop.loc),
                *after]


def carried_offsets(kernel: Kernel, platform=None) -> Kernel:
    """Each pointer (tile or scalar) or int32/int64 tile a ``for`` loop advances by integer scalars
    (``p += s``, ``p = p + a - b``) as its entry value plus the steps so far (the module docstring)."""
    if not any(i.op is Op.FOR for i in walk(kernel.body)):
        return kernel
    return kernel.with_body(_Carried(kernel).block(kernel.body))
