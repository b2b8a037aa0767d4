"""Reductions beyond one axis of a float tile: 2-D tiles to a scalar, ``argmax``/``argmin``, and
``tl.reduce`` with a combine function that is a known op.

Tile-IR rewrites (:func:`rewrite`, a :data:`.decompose.REWRITES` rule):

* ``sum``/``max``/``min`` of a 2-D float tile to a scalar reduce axis 0 in float32 first, then the row
  that is left (16-bit sums round once, at the end, as the interpreter's do);
* ``argmax``/``argmin`` along an axis of a 2-D float or int32 tile: the extreme ``m`` along the axis,
  ``max(x, m)`` (``min``) spreads it over the tile exactly, lanes equal to it keep their index (an
  ``arange`` along the axis) and the others get the axis length; the minimum along the axis is the
  lowest index of an extreme value (Triton's tie rule); of a 1-D int32 tile the same with a scalar
  extreme; of a 2-D tile to a scalar, the first row holding the extreme of the row extremes, times
  the row length, plus that row's own index;
* ``tl.reduce(x, axis, combine)`` whose combine function is one ``maximum`` or ``minimum`` of its two
  arguments, or ``+`` of int32 ones, is ``max``/``min``/``sum``; another combine function, a float ``+``
  included, is a general fold (:mod:`.combine`: the interpreter's log-depth tree, bit-exact).

* ``tl.histogram(x, BINS)``: the values ``x`` (flattened to ``[N]``, in int32) as a row ``[1, N]`` compared
  with the bins ``[BINS, 1]`` (``tl.arange``), the ``[BINS, N]`` matches (and the mask) counted along the rows
  by an int32 ``tl.sum`` (:func:`histogram`). Values outside ``[0, BINS)`` match no bin, as the interpreter
  counts them. Its UB need is ``BINS * N`` int32 elements: a histogram over the planner budget is the
  planner's located error.

``argmax``/``argmin`` of a 1-D tile to a scalar (:func:`select`) is ``ReduceMax``/``ReduceMin`` with
``calIndex`` (the lowest index wins ties), the index read back as the uint32 after the value.
int32 ``sum``/``max``/``min`` (no int32 ``Reduce*`` on A2) fold rows in halves with ``Add``/``Max``/
``Min`` (wrapping, exact); along axis 1 they reduce the transpose along axis 0.
NaN inputs are not ordered as on the interpreter (which returns the first NaN).
"""
from __future__ import annotations

from ... import dtypes
from ...ir.core import Instr, Op, Type
from . import combine
from ..selection import isel
from ..legalise_shapes import shapes
from ..legalise_shapes.ublayout import numel
from ..kir import Bin, BinOp, Call, CInt, Cond, Const, Conv, Elem, Ref, Set, Var, VarKind, lit
from ..selection.support import unsupported

F32, I32 = dtypes.float32, dtypes.int32
FOLD = {Op.SUM: Op.ADD, Op.MAX: Op.MAXIMUM, Op.MIN: Op.MINIMUM}
COMBINE = {fold: reduction for reduction, fold in FOLD.items()}
"""The combine function's op -> the reduction it makes."""
EXTREME = {Op.ARGMAX: (Op.MAX, Op.MAXIMUM), Op.ARGMIN: (Op.MIN, Op.MINIMUM)}


def rewrite(r, instr: Instr) -> bool:
    """The tile-IR rewrites of the module docstring (a :data:`.decompose.REWRITES` rule)."""
    if instr.op is Op.REDUCE:
        return _known_combine(r, instr)
    if instr.op not in GROUP:
        return False
    (x,) = instr.operands
    v, loc = instr.result, instr.loc
    axis = instr.attr("axis")
    if x.type.dtype in NARROW_INTS:
        _in_int32(r, instr)
        return True
    if axis is None and not v.type.is_scalar and len(x.type.shape) > 1:  # keep_dims: the scalar in a [1, 1] tile
        s = r.op(instr.op, Type(v.type.dtype), (x,), (("axis", None), ("keep_dims", False)), loc)
        r.op(Op.BROADCAST, v.type, (s,), (), loc, result=v)
        return True
    if len(x.type.shape) == 1:
        if x.type.dtype.is_float and not v.type.is_scalar:  # keep_dims: the scalar filled into a [1] tile
            s = r.op(instr.op, Type(v.type.dtype), (x,), (("axis", 0), ("keep_dims", False)), loc)
            r.op(Op.BROADCAST, v.type, (s,), (), loc, result=v)
            return True
        if instr.op in EXTREME and x.type.dtype == I32:
            _arg_1d_int(r, instr)
            return True
        return False
    if x.type.dtype == I32 and instr.op in FOLD:
        return _int_2d(r, instr, axis)
    if not (x.type.dtype.is_float or x.type.dtype == I32):
        raise unsupported(instr, f"`{instr.op.value}` of {x.type.dtype} tiles (reduce float or int32 tiles)")
    xf = r.cast(x, F32, loc) if x.type.dtype.is_float else x
    if instr.op in FOLD and axis is None and v.type.is_scalar:
        cols = r.op(instr.op, Type(F32, x.type.shape[1:]), (xf,), (("axis", 0), ("keep_dims", False)), loc)
        r.op(instr.op, v.type, (cols,), (("axis", None), ("keep_dims", False)), loc, result=v)
        return True
    if instr.op in EXTREME:
        if axis is None:
            _arg_flat(r, instr, xf)
        else:
            _arg_along(r, instr, xf, axis)
        return True
    return False


GROUP = frozenset(FOLD) | frozenset(EXTREME)
NARROW_INTS = frozenset({dtypes.int8, dtypes.uint8, dtypes.int16})
"""Integer tiles reduced in int32 (every value exact; a sum kept in the narrow dtype wraps back as C does)."""


def _in_int32(r, instr: Instr) -> None:
    """``sum``/``max``/``min``/``argmax``/``argmin`` of an 8- or 16-bit integer tile as that of its int32 copy."""
    (x,), v, loc = instr.operands, instr.result, instr.loc
    wide = r.op(Op.CAST, x.type.with_dtype(I32), (x,), (("dtype", I32),), loc)
    if v.type.dtype != x.type.dtype:  # argmax/argmin indices, a sum promoted by the frontend
        r.op(instr.op, v.type, (wide,), instr.attrs, loc, result=v)
        return
    folded = r.op(instr.op, v.type.with_dtype(I32), (wide,), instr.attrs, loc)
    r.op(Op.CAST, v.type, (folded,), (("dtype", v.type.dtype),), loc, result=v)


def _int_2d(r, instr: Instr, axis) -> bool:
    """int32 ``[M, N]``: along axis 1 it is the transpose along axis 0; to a scalar, axis 0 then the row."""
    (x,), v, loc = instr.operands, instr.result, instr.loc
    rows, cols = x.type.shape
    down = (("axis", 0), ("keep_dims", False))
    if axis == 1 and rows == 1:  # a row: its elements reduced as a 1-D tile (a transpose would be a column)
        line = r.op(Op.RESHAPE, Type(I32, (cols,)), (x,), (), loc)
        folded = r.op(instr.op, Type(I32, (1,)), (line,), (("axis", 0), ("keep_dims", True)), loc)
        r.op(Op.RESHAPE, v.type, (folded,), (), loc, result=v)
        return True
    if axis == 1:
        t = r.op(Op.PERMUTE, Type(I32, (cols, rows)), (x,), (("order", (1, 0)),), loc)
        if not instr.attr("keep_dims"):
            r.op(instr.op, v.type, (t,), down, loc, result=v)
            return True
        line = r.op(instr.op, Type(I32, (rows,)), (t,), down, loc)
        r.op(Op.EXPAND_DIMS, v.type, (line,), (("axis", 1),), loc, result=v)
        return True
    if axis is None and v.type.is_scalar:
        line = r.op(instr.op, Type(I32, (cols,)), (x,), down, loc)
        r.op(instr.op, v.type, (line,), (("axis", None), ("keep_dims", False)), loc, result=v)
        return True
    return False


def _arg_along(r, instr: Instr, xf, axis: int, result=None):
    """``argmax``/``argmin`` of float32 or int32 ``xf`` along ``axis`` (the module docstring's rewrite)."""
    v, loc = result or instr.result, instr.loc
    reduce_op, spread = EXTREME[instr.op]
    dt, shape, length = xf.type.dtype, xf.type.shape, xf.type.shape[axis]
    kept = tuple(1 if d == axis else s for d, s in enumerate(shape))
    along = (("axis", axis), ("keep_dims", True))
    m = r.op(reduce_op, Type(dt, kept), (xf,), along, loc)
    full = r.op(spread, xf.type, (xf, r.op(Op.BROADCAST, xf.type, (m,), (), loc)), (), loc)
    hit = r.op(Op.EQ, xf.type.with_dtype(dtypes.bool_), (xf, full), (), loc)
    miss = r.op(Op.WHERE, xf.type, (hit, _const(r, 0, dt, loc), _const(r, length, dt, loc)), (), loc)
    line = tuple(length if d == axis else 1 for d in range(2))  # the index runs along the axis
    index = r.op(Op.ARANGE, Type(I32, (length,)), (), (("start", 0), ("end", length)), loc)
    index = r.op(Op.EXPAND_DIMS, Type(I32, line), (index,), (("axis", 1 - axis),), loc)
    index = r.cast(index, dt, loc)
    lanes = r.op(Op.ADD, xf.type, (miss, r.op(Op.BROADCAST, xf.type, (index,), (), loc)), (), loc)
    keep = (("axis", axis), ("keep_dims", instr.attr("keep_dims") and result is None))
    if dt == I32:
        return r.op(Op.MIN, v.type, (lanes,), keep, loc, result=v)
    first = r.op(Op.MIN, v.type.with_dtype(F32), (lanes,), keep, loc)
    return r.op(Op.CAST, v.type, (first,), (("dtype", v.type.dtype),), loc, result=v)


def _const(r, value: int, dt, loc):
    return r.const(float(value) if dt.is_float else value, dt, loc)


def _arg_1d_int(r, instr: Instr) -> None:
    """``argmax``/``argmin`` of a 1-D int32 tile: its extreme, then the least index holding it."""
    (x,), v, loc = instr.operands, instr.result, instr.loc
    reduce_op, _ = EXTREME[instr.op]
    n = x.type.numel
    m = r.op(reduce_op, Type(I32), (x,), (("axis", None), ("keep_dims", False)), loc)
    hit = r.op(Op.EQ, x.type.with_dtype(dtypes.bool_), (x, m), (), loc)
    miss = r.op(Op.WHERE, x.type, (hit, r.const(0, I32, loc), r.const(n, I32, loc)), (), loc)
    lanes = r.op(Op.ADD, x.type, (miss, r.op(Op.ARANGE, x.type, (), (("start", 0), ("end", n)), loc)), (), loc)
    r.op(Op.MIN, v.type, (lanes,), (("axis", None), ("keep_dims", False)), loc, result=v)


def _arg_flat(r, instr: Instr, xf) -> None:
    """``argmax``/``argmin`` of ``[M, N]`` to a scalar (the row-major index): the first row holding the
    extreme of the row extremes, then that row's own argmax/argmin."""
    v, loc = instr.result, instr.loc
    reduce_op, _ = EXTREME[instr.op]
    rows, cols = xf.type.shape
    line = Type(xf.type.dtype, (rows,))
    extremes = r.op(reduce_op, line, (xf,), (("axis", 1), ("keep_dims", False)), loc)
    where_in_row = _arg_along(r, instr, xf, 1, result=r.value(Type(I32, (rows,))))
    row = r.op(instr.op, Type(I32), (extremes,), (("axis", None), ("keep_dims", False)), loc)
    index = r.op(Op.ARANGE, Type(I32, (rows,)), (), (("start", 0), ("end", rows)), loc)
    picked = r.op(Op.WHERE, Type(F32, (rows,)), (r.op(Op.EQ, Type(dtypes.bool_, (rows,)), (index, row), (), loc),
                                                 r.cast(where_in_row, F32, loc), r.const(float(cols), F32, loc)),
                  (), loc)
    col = r.cast(r.op(Op.MIN, Type(F32), (picked,), (("axis", None), ("keep_dims", False)), loc), I32, loc)
    r.op(Op.ADD, v.type, (r.op(Op.MUL, Type(I32), (row, r.const(cols, I32, loc)), (), loc), col), (), loc, result=v)


def histogram(r, instr: Instr) -> bool:
    """``tl.histogram`` (a :data:`.decompose.REWRITES` rule): see the module docstring."""
    if instr.op is not Op.HISTOGRAM:
        return False
    x, *mask = instr.operands
    v, loc, bins = instr.result, instr.loc, instr.attr("bins")
    n = numel(x.type.shape)
    if x.type.dtype != I32:
        x = r.op(Op.CAST, x.type.with_dtype(I32), (x,), (("dtype", I32),), loc)
    grid = Type(I32, (bins, n))
    row = _spread(r, r.op(Op.RESHAPE, Type(I32, (1, n)), (x,), (), loc), grid, loc)
    index = r.op(Op.ARANGE, Type(I32, (bins,)), (), (("start", 0), ("end", bins)), loc)
    column = _spread(r, r.op(Op.EXPAND_DIMS, Type(I32, (bins, 1)), (index,), (("axis", 1),), loc), grid, loc)
    hit = r.op(Op.EQ, grid.with_dtype(dtypes.bool_), (row, column), (), loc)
    count = r.const(1, I32, loc)
    if mask:  # 1 where the mask holds, as a row
        (m,) = mask
        m = r.op(Op.CAST, m.type.with_dtype(I32), (m,), (("dtype", I32),), loc)
        count = _spread(r, r.op(Op.RESHAPE, Type(I32, (1, n)), (m,), (), loc), grid, loc)
    ones = r.op(Op.WHERE, grid, (hit, count, r.const(0, I32, loc)), (), loc)
    r.op(Op.SUM, v.type, (ones,), (("axis", 1), ("keep_dims", False)), loc, result=v)
    return True


def _spread(r, x, grid: Type, loc):
    """``x`` broadcast to ``grid`` in a buffer of its own."""
    v = r.value(grid)
    shapes.spread(r, x, v, loc)
    return v


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
    """``tl.reduce`` whose combine function is one ``maximum``/``minimum`` of its arguments, or an int ``+``;
    any other is a general fold (:mod:`.combine`)."""
    op = combine_op(instr)
    dt = instr.operands[0].type.dtype
    if op in COMBINE and not (op is Op.ADD and dt.is_float) and dt not in combine.WIDE:
        attrs = (("axis", instr.attr("axis")), ("keep_dims", instr.attr("keep_dims")))
        r.instr(Instr(COMBINE[op], instr.results, instr.operands, attrs, (), instr.loc))
        return True
    combine.fold(r, instr)
    return True


def select(sel, instr: Instr) -> list | None:
    """``argmax``/``argmin`` of a 1-D float tile to a scalar and int32 ``sum``/``max``/``min`` (a
    :data:`.select.RULES` rule), else None."""
    if instr.op in FOLD and instr.operands[0].type.dtype == I32:
        return _int_fold(sel, instr)
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


def _int_fold(sel, instr: Instr) -> list:
    """int32 ``sum``/``max``/``min`` of a 1-D tile to a scalar or of ``[M, N]`` along axis 0: the rows (of a
    1-D tile: its 32-byte blocks) folded in halves into a scratch copy (``ceil(log2 M)`` count-form
    Add/Max/Min calls), then the first row copied out, or (of a 1-D tile) its lanes combined on the scalar
    unit, into a ``[1]`` tile with ``keep_dims``."""
    (x,), v = instr.operands, instr.result
    api = isel.BINARY_API[FOLD[instr.op]]
    per_blk = sel.platform.block_bytes // 4
    lanes = []  # the elements combined on the scalar unit: the folded block's, then a 1-D tile's tail
    if len(x.type.shape) == 1:
        rows, pitch = x.type.numel // per_blk, per_blk
        whole = rows * per_blk
        src = Ref(sel.bufs[x.id], I32, lit(0), x.type.numel)
        lanes = [Elem(src, k) for k in range(whole, x.type.numel)]
    elif instr.attr("axis") == 0:
        rows, pitch = x.type.shape[0], sel.pitch(x)
    else:
        raise unsupported(instr, f"`{instr.op.value}` of int32 tiles along axis {instr.attr('axis')}")
    if rows == 0:  # fewer elements than a block: every one on the scalar unit
        return _combine_lanes(sel, instr, lanes)
    t = sel.scratch("fold", I32, rows * pitch, instr.loc)
    out = [Call("DataCopy", t, (Ref(sel.bufs[x.id], I32, lit(0), rows * pitch),), (lit(rows * pitch),),
                loc=instr.loc)]
    while rows > 1:
        half = rows // 2
        n = half * pitch
        out.append(Call(api, Ref(t.buf, I32, lit(0), n), (Ref(t.buf, I32, lit(0), n), t.at(
            lit((rows - half) * pitch), n, (rows - half) * pitch)), (lit(n),), inplace=True))
        rows -= half
    if not v.type.is_scalar and len(x.type.shape) == 2:
        return out + [Call("DataCopy", Ref(sel.bufs[v.id], I32, lit(0), pitch), (Ref(t.buf, I32, lit(0), pitch),),
                           (lit(pitch),))]
    return out + _combine_lanes(sel, instr, [Elem(t, k) for k in range(per_blk)] + lanes)


def _combine_lanes(sel, instr: Instr, lanes: list) -> list:
    """``instr``'s int32 ``sum``/``max``/``min`` of ``lanes`` (UB elements) on the scalar unit, into a
    member (a scalar result) or a ``[1]`` tile (``keep_dims``)."""
    v = instr.result
    acc = Var(v.id, I32, sel.hint(v, instr.op.value), VarKind.MEMBER)
    sel.members.append(acc)
    if v.type.is_scalar:
        sel.scalars[v.id] = acc
    out = [Set(acc, lanes[0])]
    for lane in lanes[1:]:
        if instr.op is Op.SUM:  # wrapping, as the interpreter's int32 sum (unsigned: no C++ overflow)
            e = Conv(I32, Bin(BinOp.ADD, Conv(CInt.UINT32, acc), Conv(CInt.UINT32, lane)))
        else:
            e = Cond(Bin(BinOp.GT if instr.op is Op.MAX else BinOp.LT, lane, acc), lane, acc)
        out.append(Set(acc, e))
    if not v.type.is_scalar:  # keep_dims: the [1] tile of the lanes combined
        out.append(Call("Duplicate", sel.ref(v), (), (acc, lit(1)), loc=instr.loc))
    return out


def _work_elements(n: int, per_blk: int, per_rep: int) -> int:
    """The documented workLocal minimum of ReduceMax/ReduceMin with ``calIndex`` over ``n`` elements:
    two values per repeat at each level of the fold, each level rounded up to a block."""
    first = max(1, n // per_rep)
    total = -(-2 * first // per_blk) * per_blk
    while first > 1:
        first = -(-2 * first // per_rep)
        total += -(-2 * first // per_blk) * per_blk
    return total


__all__ = ["combine_op", "histogram", "rewrite", "select"]
