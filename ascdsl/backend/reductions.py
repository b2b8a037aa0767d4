"""Reductions beyond one axis of a float tile: 2-D tiles to a scalar, ``argmax``/``argmin``, and
``tl.reduce`` with a combine function that is a known op.

Tile-IR rewrites (:func:`rewrite`, a :data:`.decompose.REWRITES` rule):

* ``sum``/``max``/``min`` of a 2-D float tile to a scalar reduce axis 0 in float32 first, then the row
  that is left (16-bit sums round once, at the end, as the interpreter's do);
* ``argmax``/``argmin`` along an axis of a 2-D float tile: the extreme ``m`` along the axis,
  ``max(x, m)`` (``min``) spreads it over the tile exactly, lanes equal to it keep their index (an
  ``arange`` along the axis) and the others get the axis length; the minimum along the axis is the
  lowest index of an extreme value (Triton's tie rule);
* ``tl.reduce(x, axis, combine)`` whose combine function is one ``+``, ``maximum`` or ``minimum`` of its
  two arguments is ``sum``/``max``/``min`` (the order of a float sum differs from the interpreter's
  log-depth tree, within the dtype's tolerance); another combine function is a located error.

``argmax``/``argmin`` of a 1-D tile to a scalar (:func:`select`) is ``ReduceMax``/``ReduceMin`` with
``calIndex`` (the lowest index wins ties), the index read back as the uint32 after the value.
NaN inputs are not ordered as on the interpreter (which returns the first NaN).
"""
from __future__ import annotations

from .. import dtypes
from ..ir.core import Instr, Op, Type
from . import isel
from .kir import Call, Const, Elem, Ref, Set, Var, VarKind, lit
from .selector import unsupported

F32, I32 = dtypes.float32, dtypes.int32
FOLD = {Op.SUM: Op.ADD, Op.MAX: Op.MAXIMUM, Op.MIN: Op.MINIMUM}
COMBINE = {fold: reduction for reduction, fold in FOLD.items()}
"""The combine function's op -> the reduction it makes."""
EXTREME = {Op.ARGMAX: (Op.MAX, Op.MAXIMUM), Op.ARGMIN: (Op.MIN, Op.MINIMUM)}


def rewrite(r, instr: Instr) -> bool:
    """The tile-IR rewrites of the module docstring (a :data:`.decompose.REWRITES` rule)."""
    if instr.op is Op.REDUCE:
        return _known_combine(r, instr)
    if instr.op not in GROUP or len(instr.operands[0].type.shape) != 2:
        return False
    (x,) = instr.operands
    v, loc = instr.result, instr.loc
    if not x.type.dtype.is_float:
        raise unsupported(instr, f"`{instr.op.value}` of {x.type.dtype} tiles (reduce float tiles)")
    xf = r.cast(x, F32, loc)
    axis = instr.attr("axis")
    if instr.op in FOLD and axis is None and v.type.is_scalar:
        cols = r.op(instr.op, Type(F32, x.type.shape[1:]), (xf,), (("axis", 0), ("keep_dims", False)), loc)
        r.op(instr.op, v.type, (cols,), (("axis", None), ("keep_dims", False)), loc, result=v)
        return True
    if instr.op in EXTREME:
        if axis is None:
            raise unsupported(instr, f"`{instr.op.value}` of a 2-D tile to a scalar (reduce along one axis)")
        _arg_along(r, instr, xf, axis)
        return True
    return False


GROUP = frozenset(FOLD) | frozenset(EXTREME)


def _arg_along(r, instr: Instr, xf, axis: int) -> None:
    """``argmax``/``argmin`` of float32 ``xf`` along ``axis`` (the module docstring's rewrite)."""
    v, loc = instr.result, instr.loc
    reduce_op, spread = EXTREME[instr.op]
    shape, length = xf.type.shape, xf.type.shape[axis]
    kept = tuple(1 if d == axis else s for d, s in enumerate(shape))
    along = (("axis", axis), ("keep_dims", True))
    m = r.op(reduce_op, Type(F32, kept), (xf,), along, loc)
    full = r.op(spread, xf.type, (xf, r.op(Op.BROADCAST, xf.type, (m,), (), loc)), (), loc)
    hit = r.op(Op.EQ, xf.type.with_dtype(dtypes.bool_), (xf, full), (), loc)
    miss = r.op(Op.WHERE, xf.type, (hit, r.const(0.0, F32, loc), r.const(float(length), F32, loc)), (), loc)
    line = tuple(length if d == axis else 1 for d in range(2))  # the index runs along the axis
    index = r.op(Op.ARANGE, Type(I32, (length,)), (), (("start", 0), ("end", length)), loc)
    index = r.op(Op.EXPAND_DIMS, Type(I32, line), (index,), (("axis", 1 - axis),), loc)
    index = r.op(Op.CAST, Type(F32, line), (index,), (("dtype", F32),), loc)
    lanes = r.op(Op.ADD, xf.type, (miss, r.op(Op.BROADCAST, xf.type, (index,), (), loc)), (), loc)
    first = r.op(Op.MIN, v.type.with_dtype(F32), (lanes,), (("axis", axis), ("keep_dims", instr.attr("keep_dims"))),
                 loc)
    r.op(Op.CAST, v.type, (first,), (("dtype", v.type.dtype),), loc, result=v)


def combine_op(instr: Instr) -> Op | None:
    """The op of a one-operand ``reduce``/``scan`` whose combine function is that one op of its two
    arguments (``a + b``, ``tl.maximum(b, a)``, ...), else None."""
    (region,) = instr.regions
    body = region.body
    if len(instr.operands) != 1 or len(body) != 2 or body[1].op is not Op.YIELD:
        return None
    fold, yld = body
    args = {a.id for a in region.args}
    if len(fold.operands) == 2 and {x.id for x in fold.operands} == args and yld.operands == fold.results:
        return fold.op
    return None


def _known_combine(r, instr: Instr) -> bool:
    """``tl.reduce`` whose combine function is one ``+``/``maximum``/``minimum`` of its arguments."""
    op = combine_op(instr)
    if op in COMBINE:
        attrs = (("axis", instr.attr("axis")), ("keep_dims", instr.attr("keep_dims")))
        r.instr(Instr(COMBINE[op], instr.results, instr.operands, attrs, (), instr.loc))
        return True
    raise unsupported(instr, "`tl.reduce` with this combine function (one `+`, `tl.maximum` or `tl.minimum` of "
                             "its two arguments lowers, as tl.sum/tl.max/tl.min)")


def select(sel, instr: Instr) -> list | None:
    """``argmax``/``argmin`` of a 1-D float tile to a scalar (a :data:`.select.RULES` rule), else None."""
    if instr.op not in EXTREME or not instr.result.type.is_scalar:
        return None
    (x,) = instr.operands
    v = instr.result
    if len(x.type.shape) != 1 or x.type.dtype != F32:  # 16-bit floats are widened by decompose
        raise unsupported(instr, f"`{instr.op.value}` of {x.type.dtype} tiles (reduce float tiles)")
    n = x.type.numel
    per_blk, per_rep = sel.platform.block_bytes // 4, sel.platform.repeat_bytes // 4
    block = sel.scratch("extreme", F32, per_blk, instr.loc)
    work = sel.scratch("work", F32, _work_elements(n, per_blk, per_rep), instr.loc)
    member = Var(v.id, I32, sel.hint(v, instr.op.value), VarKind.MEMBER)
    sel.members.append(member)
    sel.scalars[v.id] = member
    return [Call(isel.REDUCE_API[EXTREME[instr.op][0]], Ref(block.buf, F32, lit(0), 2), (sel.ref(x),),
                 (lit(n), Const.TRUE), work=(work,), loc=instr.loc),
            Set(member, Elem(Ref(block.buf, I32, lit(0), per_blk), 1))]


def _work_elements(n: int, per_blk: int, per_rep: int) -> int:
    """The documented workLocal minimum of ReduceMax/ReduceMin with ``calIndex`` over ``n`` elements:
    two values per repeat at each level of the fold, each level rounded up to a block."""
    first = max(1, n // per_rep)
    total = -(-2 * first // per_blk) * per_blk
    while first > 1:
        first = -(-2 * first // per_rep)
        total += -(-2 * first // per_blk) * per_blk
    return total


__all__ = ["combine_op", "rewrite", "select"]
