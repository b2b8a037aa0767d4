"""Clean-ups: reductions over one element, common scalar subexpressions and dead code."""
from __future__ import annotations

from ..ir.builder import Fresh
from ..ir.core import Block, GroupOp, Instr, Kernel, Op, Type, walk
from ..ir.symbol import equal

_PURE_SCALAR = GroupOp.ELEMENTWISE | GroupOp.LEAF


def _used(block: Block) -> set[int]:
    return {v.id for instr in walk(block) for v in instr.operands}


def _sweep(block: Block, used: set[int]) -> Block:
    body = []
    for instr in block.body:
        keep = (instr.op in GroupOp.SIDE_EFFECT or instr.regions
                or any(v.id in used for v in instr.results))
        if keep:
            if instr.op is Op.IF:
                instr = _live_results(instr, used)
            if instr.regions:
                instr = instr.map_regions(lambda r: _sweep(r, used))
            body.append(instr)
    return Block(block.args, tuple(body))


def _live_results(branch: Instr, used: set[int]) -> Instr:
    """``if`` without the results nobody reads (nor their operands in the branches' yields): a value a
    branch merges only because the code after a ``return`` in the other branch reassigned it."""
    live = [k for k, v in enumerate(branch.results) if v.id in used]
    if len(live) == len(branch.results):
        return branch

    def drop(region: Block) -> Block:
        *body, yld = region.body
        yld = Instr(Op.YIELD, yld.results, tuple(yld.operands[k] for k in live), yld.attrs, yld.regions, yld.loc)
        return Block(region.args, (*body, yld))
    return Instr(Op.IF, tuple(branch.results[k] for k in live), branch.operands, branch.attrs,
                 tuple(drop(r) for r in branch.regions), branch.loc)


def dead_code(kernel: Kernel, platform=None) -> Kernel:
    """Remove pure instructions with unused results and the unused results of branches (loops stay)."""
    body = kernel.body
    while True:
        swept = _sweep(body, _used(body))
        if swept == body:
            break
        body = swept
    return kernel.with_body(body)


def _cse(block: Block, seen: dict, subst: dict) -> Block:
    seen = dict(seen)  # values of enclosing blocks dominate this one
    body = []
    for instr in block.body:
        operands = tuple(subst.get(v.id, v) for v in instr.operands)
        regions = tuple(_cse(r, seen, subst) for r in instr.regions)
        instr = Instr(instr.op, instr.results, operands, instr.attrs, regions, instr.loc)
        if (instr.op in _PURE_SCALAR and len(instr.results) == 1 and instr.result.type.is_scalar
                and instr.op is not Op.PRINT):
            key = (instr.op, tuple(v.id for v in operands), instr.attrs, instr.result.type)
            if key in seen:
                subst[instr.result.id] = seen[key]
                continue
            seen[key] = instr.result
        body.append(instr)
    return Block(block.args, tuple(body))


def common_scalars(kernel: Kernel, platform=None) -> Kernel:
    """Compute each scalar expression once: a repeated pure scalar instruction reuses the first."""
    return kernel.with_body(_cse(kernel.body, {}, {}))


def _unit_axis(instr: Instr) -> bool:
    axis = instr.attr("axis")
    return (instr.op in GroupOp.REDUCE | {Op.REDUCE} and axis is not None and not instr.results[0].type.is_scalar
            and equal(instr.operands[0].type.shape[axis], 1))


class _Units:
    """The rewrite of :func:`unit_reductions`."""

    def __init__(self, kernel: Kernel):
        self.fresh = Fresh(kernel).value

    def block(self, block: Block) -> Block:
        body = []
        for instr in block.body:
            if _unit_axis(instr):
                body += self.replacement(instr)
            elif _line(instr):
                body += self.in_a_row(instr)
            else:
                body.append(instr.map_regions(self.block) if instr.regions else instr)
        return Block(block.args, tuple(body))

    def replacement(self, instr: Instr) -> list[Instr]:
        """A reduction's result as its operand's one element along the axis: a reshape (with a cast where
        the result's dtype is wider, as a sum of int8), or index 0 for argmax/argmin."""
        loc, out = instr.loc, []
        if instr.op in (Op.ARGMAX, Op.ARGMIN):
            r = instr.result
            zero = self.fresh(Type(r.type.dtype))
            return [Instr(Op.CONST, (zero,), (), (("value", 0),), (), loc),
                    Instr(Op.BROADCAST, (r,), (zero,), (), (), loc)]
        sources = instr.operands if instr.op is Op.REDUCE else instr.operands[:1]
        for x, r in zip(sources, instr.results):
            if x.type.dtype != r.type.dtype:
                cast = self.fresh(x.type.with_dtype(r.type.dtype))
                out.append(Instr(Op.CAST, (cast,), (x,), (("dtype", r.type.dtype),), (), loc))
                x = cast
            out.append(Instr(Op.RESHAPE, (r,), (x,), (), (), loc))
        return out


    def in_a_row(self, instr: Instr) -> list[Instr]:
        """The reduction of a line's elements as a 1-D tile (kept as a ``[1]`` tile), reshaped to the
        result's shape."""
        (x,), r, loc = instr.operands, instr.result, instr.loc
        flat, folded = self.fresh(x.type.with_shape((x.type.numel,))), self.fresh(r.type.with_shape((1,)))
        return [Instr(Op.RESHAPE, (flat,), (x,), (), (), loc),
                Instr(instr.op, (folded,), (flat,), (("axis", 0), ("keep_dims", True)), (), loc),
                Instr(Op.RESHAPE, (r,), (folded,), (), (), loc)]


def _line(instr: Instr) -> bool:
    """A reduction of a ``[N, 1]`` column along axis 0, to a tile. (Not a ``[1, N]`` row along axis 1:
    that is a ``[ROWS, N]`` kernel at ``ROWS = 1``, which the runtime-extent lift samples and must find
    lowered as at every other ``ROWS``.)"""
    if instr.op not in GroupOp.REDUCE or instr.attr("axis") not in (0, -2) or instr.results[0].type.is_scalar:
        return False
    shape = instr.operands[0].type.shape
    return len(shape) == 2 and equal(shape[1], 1) and shape[0] > 1


def unit_reductions(kernel: Kernel, platform=None) -> Kernel:
    """A reduction of a tile along an axis of one element is that element: ``tl.max(x, 2)`` of an
    ``[A, B, 1]`` tile is a reshape of ``x`` (the backend's reductions of tiles to tiles assume two or
    more elements per row; a ``[1]`` tile to a scalar stays a reduction). A reduction of an ``[N, 1]``
    column along axis 0 is the reduction of its elements in a row (the backend folded a column's rows in
    halves at unaligned offsets)."""
    if not any(_unit_axis(i) or _line(i) for i in walk(kernel.body)):
        return kernel
    return kernel.with_body(_Units(kernel).block(kernel.body))
