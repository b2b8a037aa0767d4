"""Tiles of rank 3 or more: ``[d0, ..., dk, C]`` lies in UB exactly as ``[d0 * ... * dk, C]``
(:mod:`.ublayout`), so most of their ops are the 2-D ops of that flat view.

Tile-IR rewrites (:func:`rewrite`, the first :data:`.decompose.REWRITES` rule) replace every op on
such tiles by the same op on the flat views (``tl.reshape`` between the two is free), so every later
rule and selection sees 2-D tiles:

* elementwise ops (arithmetic, comparisons, ``tl.where``, casts, math) run on the flat view;
* broadcasts of ``[1, .., 1, C]`` and ``[.., 1]`` are the 2-D row and column broadcasts of the flat
  view (read through repeat strides by the arithmetic that uses them); a broadcast of a tile whose last
  axis is 1 along other axes is that broadcast one rank lower; a one-element tile is broadcast to a row
  first;
* ``sum``/``max``/``min``/``argmax``/``argmin`` along the last axis, or to a scalar, reduce the flat
  view (``[.., 1]`` is the flat ``[d0 * ... * dk]`` result, re-pitched by a ``Gather`` when a user needs
  rows that do not fill whole blocks); along another axis of a tile whose last axis is 1, the reduction
  one rank lower; ``argmax``/``argmin`` along another axis are those along the last axis of the tile
  with that axis permuted last; ``expand_dims``, ``reshape`` and ``permute`` s that only move unit axes
  are reshapes of the flat views;
* scans, sorts and flips along the last axis are the same op along the rows of the flat view; along
  another axis, between two ``tl.permute`` that move that axis last and back;
* ``tl.cat`` (along axis 0) is the cat of the flat views; ``tl.join`` of tiles of rank 3 or more and
  ``tl.split`` into them are those of the flat views (``[.., C, 2]`` lies as ``[R, C, 2]``, the
  ``[R * C, 2]`` tile of pairs, which :mod:`.relayout` Gathers), so ``tl.interleave`` of them is too; a
  permute into ``[.., 1]`` is the permute without that unit axis, reshaped;
* a block load or store of a tile whose last axes are 1 is the access without them, reshaped (the 1-D
  access of its elements where they follow each other in GM: one burst).

What stays of rank 3 or more is selected here (:func:`select`): broadcasts along leading axes (the whole
tile repeated when only outer axes broadcast, else each result row copied from the operand's row of its
kept indices), both ``DataCopy`` UB -> UB of whole padded rows, but a broadcast along the axis before the
last, whose result rows come in runs of one operand row: a ``Muls`` by 1 a chunk, the run's rows as repeats;
``sum``/``max``/``min`` along a leading axis, in float32 or int32: per outer index, the first slab (the rows
below that axis) is copied and the others folded onto it with the slabs as one call's repeats (as the rows of
a 2-D tile along axis 0, :mod:`.reduce`), the outer indices independent; a slab over ``max_repeats`` blocks
in order, a count-form ``Add``/``Max``/``Min`` a slab. ``tl.permute``/``tl.trans`` that move non-unit axes are one ``Gather`` (16- and
32-bit elements; :mod:`.intops` moves 8-bit and bool tiles as float16). Block loads and stores of rank 3
and more are :mod:`.memory`'s, strided ones :mod:`.gather`'s (a row of bursts per index of the leading
axes); ``tl.device_print`` is :func:`.compute.device_print`'s. A bool tile is broadcast as its
0/1 values in float16, compared back. Anything else is a located error.
"""
from __future__ import annotations

from ... import dtypes
from ...ir.core import GroupOp, Instr, Op, Type, Value
from ...ir.symbol import equal
from ..selection import isel
from ..legalise_types import boolmask, limits
from ..kir import Bin, BinOp, Brace, Call, Expr, For, Lit, Ref, add, lit
from .relayout import gather_lanes, movable, row_halves
from ..selection.reduce import accumulate_rows
from ..selection import repeat
from ..selection.repeat import located
from ..selection.support import F32, unsupported
from .ublayout import numel, strides

F16, I32 = dtypes.float16, dtypes.int32
ELEMENTWISE = GroupOp.ELEMENTWISE - {Op.PTR_ADD}
AXIS_REDUCE = frozenset({Op.SUM, Op.MAX, Op.MIN})
"""Reductions along a leading axis that :func:`select` lowers."""
LAST_AXIS = frozenset({Op.SCAN, Op.SORT, Op.FLIP})
"""Ops along the last axis: the same op along the rows of the flat view."""
BOOL_MOVES = frozenset({Op.JOIN, Op.SPLIT, Op.CAT, Op.PERMUTE})
_SCALED = frozenset({dtypes.float32, F16, I32})
"""Broadcast rows copied by a repeat-form ``Muls`` by 1 (:func:`_runs`); other types row by row."""
_INT32_EXACT = frozenset({dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.int32})
"""Integer tiles whose values int32 holds exactly (reduced along a leading axis in int32)."""
"""Moves of bool tiles left to :mod:`.intops` (so their masks become values once, not at every reshape)."""


def flat_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The 2-D shape a tile of rank 3 or more lies in UB as."""
    return (numel(shape[:-1]), shape[-1])


def _rank(instr: Instr) -> int:
    return max((len(x.type.shape) for x in (*instr.results, *instr.operands)), default=0)


def _flattens(instr: Instr) -> bool:
    """:func:`rewrite` replaces ``instr`` by ops on flat views."""
    if _rank(instr) < 3 or len(instr.results) != 1:
        return False
    op, v = instr.op, instr.result
    if op in ELEMENTWISE or op is Op.BROADCAST:
        return len(v.type.shape) >= 3
    if op in GroupOp.REDUCE:
        return len(instr.operands[0].type.shape) >= 3
    if op in LAST_AXIS:
        return True
    if op is Op.PERMUTE:
        return _moves_units_only(instr)
    return op in (Op.RESHAPE, Op.EXPAND_DIMS, Op.CAT)


def _moves_units_only(instr: Instr) -> bool:
    shape, order = instr.operands[0].type.shape, instr.attr("order")
    kept = [d for d in order if shape[d] != 1]
    return kept == sorted(kept)


def _joins(instr: Instr) -> bool:
    """``instr`` is a ``tl.join`` of tiles of rank 3 or more or a ``tl.split`` into such tiles (those of
    2-D tiles are selected as they are, :mod:`.relayout`)."""
    return (instr.op is Op.JOIN and len(instr.operands[0].type.shape) >= 3
            or instr.op is Op.SPLIT and len(instr.operands[0].type.shape) >= 4)


def rewrite(r, instr: Instr) -> bool:
    """The rewrites of the module docstring (a :data:`.decompose.REWRITES` rule)."""
    if instr.op in BOOL_MOVES and instr.results[0].type.dtype == dtypes.bool_:
        return False  # moved as its 0/1 values in float16 (:mod:`.intops`), then rewritten here
    if _joins(instr):
        _pairs(r, instr)
        return True
    if instr.op is Op.PERMUTE and len(instr.result.type.shape) >= 3 and equal(instr.result.type.shape[-1], 1) and \
            not _moves_units_only(instr):
        _squeezed(r, instr)
        return True
    if instr.op in (Op.BLOCK_LOAD, Op.BLOCK_STORE) and len(instr.attr("shape")) >= 3 and \
            equal(instr.attr("shape")[-1], 1):
        _unit_last(r, instr)
        return True
    if not _flattens(instr):
        return False
    op = instr.op
    if op is Op.CAT:  # along axis 0: the flat views concatenated
        v = instr.result
        xs = tuple(_flat(r, x, instr.loc) for x in instr.operands)
        _bind(r, v, r.op(op, Type(v.type.dtype, flat_shape(v.type.shape)), xs, (), instr.loc), instr.loc)
    elif op is Op.BROADCAST:
        _broadcast(r, instr)
    elif op in GroupOp.REDUCE:
        _reduce(r, instr)
    elif op in LAST_AXIS:
        _last_axis(r, instr)
    elif op in ELEMENTWISE:
        v = instr.result
        xs = tuple(x if x.type.is_scalar else _flat(r, x, instr.loc) for x in instr.operands)
        _bind(r, v, r.op(op, Type(v.type.dtype, flat_shape(v.type.shape)), xs, instr.attrs, instr.loc), instr.loc)
    else:
        _reshape(r, instr)
    return True


def _unit_last(r, instr: Instr) -> None:
    """A block load or store of ``[.., B, 1, .., 1]`` (a tile whose last axis is 1 lies in UB as its elements
    in order, not as the padded rows a block copy lands): the access of the same GM elements without the unit
    axes after ``B`` and a reshape between the two. Where those elements follow each other in GM (all but
    the first axis whole, each stride the elements after its axis), the 1-D access of them: one burst;
    else that of ``[.., B]`` (the extents of the unit axes, 0 or 1 each, scale that of ``B``), a strided
    one unless ``B``'s stride is 1 (``[A, 1, .., 1]``: the 1-D access of ``A`` elements)."""
    shape, loc = instr.attr("shape"), instr.loc
    rank = len(shape)
    kept = max((d for d in range(rank) if shape[d] > 1), default=0) + 1
    lower = shape[:kept]
    xs = instr.operands
    base, offset, outer, extents = xs[0], xs[1], xs[2:1 + rank], xs[1 + rank:1 + 2 * rank]
    rest = xs[1 + 2 * rank:]
    strided = False
    if kept > 1 and _consecutive(r, lower, outer, extents):
        count = r.const(numel(lower), I32, loc) if r.consts.get(extents[0].id) == lower[0] else \
            r.op(Op.MUL, Type(I32), (extents[0], r.const(numel(lower[1:]), I32, loc)), (), loc)
        lower, operands = (numel(lower),), (base, offset, count)
    else:
        *leading, last = extents[:kept]
        for unit in extents[kept:]:  # a mask on a unit axis: its extent (0 or 1) empties the rows
            if r.consts.get(unit.id) != 1:
                last = r.op(Op.MUL, Type(I32), (last, unit), (), loc)
        strided = lower[-1] > 1 and r.consts.get(outer[kept - 1].id) != 1
        operands = (base, offset, *outer[:kept if strided else kept - 1], *leading, last)
    attrs = tuple((k, lower if k == "shape" else a) for k, a in instr.attrs)
    if instr.op is Op.BLOCK_LOAD:
        v = instr.result
        loaded = r.value(v.type.with_shape(lower))
        r.instr(Instr(Op.STRIDED_LOAD if strided else Op.BLOCK_LOAD, (loaded,), operands + rest, attrs, (), loc))
        r.op(Op.RESHAPE, v.type, (loaded,), (), loc, result=v)
        return
    (value,) = rest
    flat = r.op(Op.RESHAPE, value.type.with_shape(lower), (value,), (), loc)
    r.instr(Instr(Op.STRIDED_STORE if strided else Op.BLOCK_STORE, (), operands + (flat,), attrs, (), loc))


def _consecutive(r, lower: tuple[int, ...], strides, extents) -> bool:
    """The valid elements of a block access of ``lower`` and unit axes after it follow each other in GM."""
    whole = (*lower[1:], *[1] * (len(extents) - len(lower)))
    return (all(r.consts.get(s.id) == numel(lower[d + 1:]) for d, s in enumerate(strides[:len(lower)]))
            and all(r.consts.get(e.id) == n for e, n in zip(extents[1:], whole)))


def _with_axis(instr: Instr, axis: int) -> tuple:
    return tuple((k, axis if k == "axis" else a) for k, a in instr.attrs)


def permuted_last(r, instr: Instr) -> None:
    """``instr`` (a scan, sort or flip along a non-last axis) as the same op along the last axis of its
    operand with that axis permuted last, permuted back."""
    (x,), v, loc = instr.operands, instr.result, instr.loc
    rank, axis = len(v.type.shape), instr.attr("axis") % len(v.type.shape)
    order = tuple(d for d in range(rank) if d != axis) + (axis,)
    moved = r.op(Op.PERMUTE, x.type.with_shape(tuple(x.type.shape[d] for d in order)), (x,), (("order", order),), loc)
    done = r.value(moved.type)
    r.instr(Instr(instr.op, (done,), (moved,), _with_axis(instr, rank - 1), instr.regions, loc))
    back = tuple(order.index(d) for d in range(rank))
    r.op(Op.PERMUTE, v.type, (done,), (("order", back),), loc, result=v)


def _last_axis(r, instr: Instr) -> None:
    """A scan, sort or flip along the last axis is the same op along the rows of the flat view; along
    another axis, that axis is permuted last first and back after."""
    (x,), v, loc = instr.operands, instr.result, instr.loc
    if instr.attr("axis") % len(v.type.shape) != len(v.type.shape) - 1:
        permuted_last(r, instr)
        return
    flat = r.value(Type(v.type.dtype, flat_shape(v.type.shape)))
    r.instr(Instr(instr.op, (flat,), (_flat(r, x, loc),), _with_axis(instr, 1), instr.regions, loc))
    _bind(r, v, flat, loc)


def _flat(r, x: Value, loc) -> Value:
    """The flat view of rank-3 ``x`` (its contiguous twin for a 2-D reduction result, when it has one)."""
    if x.id in r.flat:
        return r.flat[x.id]
    if len(x.type.shape) < 3:
        return x
    return r.emit(Op.RESHAPE, Type(x.type.dtype, flat_shape(x.type.shape)), (x,), (), loc)


def _bind(r, v: Value, f: Value, loc) -> None:
    """``f`` is the flat view of ``v``; ``v`` itself is a reshape of ``f`` (swept by :func:`.decompose.decompose`
    when no op reads it)."""
    if len(v.type.shape) >= 3 and f.type.shape != flat_shape(v.type.shape):  # a 2-D result's 1-D twin
        f = r.emit(Op.RESHAPE, Type(f.type.dtype, flat_shape(v.type.shape)), (f,), (), loc)
    r.flat[v.id] = f
    r.emit(Op.RESHAPE, v.type, (f,), (), loc, result=v)


def _pairs(r, instr: Instr) -> None:
    """``tl.join`` of ``[.., C]`` tiles (``tl.split`` of a ``[.., C, 2]`` one) is that of their flat
    ``[R, C]`` views: ``[.., C, 2]`` lies in UB as ``[R, C, 2]`` does (the ``[R * C, 2]`` tile of pairs)."""
    x, loc = instr.operands[0], instr.loc
    dt = x.type.dtype
    if instr.op is Op.JOIN:
        v = instr.result
        flat = tuple(_flat(r, y, loc) for y in instr.operands)
        pairs = r.op(Op.JOIN, Type(dt, flat[0].type.shape + (2,)), flat, (), loc)
        r.op(Op.RESHAPE, v.type, (pairs,), (), loc, result=v)
        return
    pairs = r.op(Op.RESHAPE, Type(dt, flat_shape(x.type.shape[:-1]) + (2,)), (x,), (), loc)
    halves = tuple(r.value(Type(dt, pairs.type.shape[:-1])) for _ in instr.results)
    r.instr(Instr(Op.SPLIT, halves, (pairs,), (), (), loc))
    for half, v in zip(halves, instr.results):
        r.op(Op.RESHAPE, v.type, (half,), (), loc, result=v)


def _squeezed(r, instr: Instr) -> None:
    """A permute whose result's last axis is 1 (a tile stored as its elements in order) is the permute of
    the operand without that unit axis, reshaped."""
    (x,), v, loc = instr.operands, instr.result, instr.loc
    order, unit = instr.attr("order"), instr.attr("order")[-1]
    lower = r.op(Op.RESHAPE, x.type.with_shape(x.type.shape[:unit] + x.type.shape[unit + 1:]), (x,), (), loc)
    moved = r.op(Op.PERMUTE, v.type.with_shape(v.type.shape[:-1]), (lower,),
                 (("order", tuple(d - (d > unit) for d in order[:-1])),), loc)
    r.op(Op.RESHAPE, v.type, (moved,), (), loc, result=v)


def _reshape(r, instr: Instr) -> None:
    """``reshape``/``expand_dims`` (and a ``permute`` of unit axes) to or from rank 3."""
    (x,), v, loc = instr.operands, instr.result, instr.loc
    src = _flat(r, x, loc)  # the reshapes of flat views are rewritten too (8-bit ones that move elements)
    if len(v.type.shape) >= 3:
        _bind(r, v, r.op(Op.RESHAPE, Type(v.type.dtype, flat_shape(v.type.shape)), (src,), (), loc), loc)
    else:
        r.op(Op.RESHAPE, v.type, (src,), (), loc, result=v)


def _broadcast(r, instr: Instr) -> None:
    (x,), v, loc = instr.operands, instr.result, instr.loc
    dt, shape = v.type.dtype, v.type.shape
    flat = Type(dt, flat_shape(shape))
    if x.type.is_scalar:
        _bind(r, v, r.op(Op.BROADCAST, flat, (x,), (), loc), loc)
        return
    if dt == dtypes.bool_:  # the mask as 0/1 in float16, broadcast, compared back
        spread = r.op(Op.BROADCAST, v.type.with_dtype(F16), (boolmask.as_number(r, x, F16, loc),), (), loc)
        r.op(Op.NE, v.type, (spread, r.const(0.0, F16, loc)), (), loc, result=v)
        return
    if dt.itemsize == 1:  # 8-bit values in float16 (exact), broadcast, cast back: row copies move 16-bit lanes
        wide = r.op(Op.CAST, x.type.with_dtype(F16), (x,), (("dtype", F16),), loc)
        spread = r.op(Op.BROADCAST, v.type.with_dtype(F16), (wide,), (), loc)
        r.op(Op.CAST, v.type, (spread,), (("dtype", dt),), loc, result=v)
        return
    xs = (1,) * (len(shape) - len(x.type.shape)) + x.type.shape
    lead, c_ = shape[:-1], shape[-1]
    src, c = _flat(r, x, loc), xs[-1]
    if numel(xs) == 1:  # one element: a row first
        row = r.emit(Op.RESHAPE, Type(dt, (1,)), (src,), (), loc)
        row = r.op(Op.BROADCAST, Type(dt, (c_,)), (row,), (), loc) if c_ > 1 else row
        src, c = r.emit(Op.RESHAPE, Type(dt, (1, c_)), (row,), (), loc), c_
    if c != c_:  # along the last axis: a 2-D column broadcast
        column = r.emit(Op.RESHAPE, Type(dt, (numel(xs[:-1]), 1)), (src,), (), loc)
        src = _spread_2d(r, column, Type(dt, (numel(xs[:-1]), c_)), v if xs[:-1] == lead else None, loc)
    if xs[:-1] == lead:
        _bind(r, v, src, loc)
    elif numel(xs[:-1]) == 1:  # [1, .., 1, C]: a 2-D row broadcast
        rows = r.emit(Op.RESHAPE, Type(dt, (1, c_)), (src,), (), loc)
        _bind(r, v, _spread_2d(r, rows, flat, v, loc), loc)
    elif c_ == 1:  # [.., 1] to [.., 1]: the broadcast of rank one less, re-laid out
        lower = r.emit(Op.RESHAPE, Type(dt, xs[:-1]), (src,), (), loc)
        if len(lead) == 2:
            spread = _spread_2d(r, lower, Type(dt, lead), None, loc)
        else:
            spread = _flat(r, r.op(Op.BROADCAST, Type(dt, lead), (lower,), (), loc), loc)
        _bind(r, v, r.emit(Op.RESHAPE, flat, (spread,), (), loc), loc)
    else:  # whole rows copied (select)
        full = r.emit(Op.RESHAPE, Type(dt, (*xs[:-1], c_)), (src,), (), loc)
        r.emit(Op.BROADCAST, v.type, (full,), (), loc, result=v)
        r.flat[v.id] = r.emit(Op.RESHAPE, flat, (v,), (), loc)


def _spread_2d(r, x: Value, t: Type, like: Value | None, loc) -> Value:
    """A 2-D broadcast of ``x`` to ``t`` whose users are those of ``like`` (the flat views of them),
    or, without ``like`` or when its users are unknown, a reshape (so :func:`.shapes.rewrite` puts it in
    a buffer)."""
    v = r.value(t)
    known = like is not None and like.id in r.users  # else made by another rewrite: its users are unknown
    r.users[v.id] = r.users[like.id] if known else [Instr(Op.RESHAPE, (), (v,), (), (), loc)]
    return r.op(Op.BROADCAST, t, (x,), (), loc, result=v)


def _reduce(r, instr: Instr) -> None:
    (x,), v, loc = instr.operands, instr.result, instr.loc
    op, axis, keep = instr.op, instr.attr("axis"), instr.attr("keep_dims")
    shape, dt = x.type.shape, v.type.dtype
    src = _flat(r, x, loc)
    if axis is None:
        if keep:
            s = r.op(op, Type(dt), (src,), (("axis", None), ("keep_dims", False)), loc)
            r.op(Op.BROADCAST, v.type, (s,), (), loc, result=v)
        else:
            r.op(op, v.type, (src,), (("axis", None), ("keep_dims", False)), loc, result=v)
        return
    axis %= len(shape)
    if axis == len(shape) - 1:
        f = r.op(op, Type(dt, (numel(shape[:-1]),)), (src,), (("axis", 1), ("keep_dims", False)), loc)
        if keep:
            _bind(r, v, r.emit(Op.RESHAPE, Type(dt, (numel(shape[:-1]), 1)), (f,), (), loc), loc)
        else:
            _bind(r, v, f, loc)  # [A, B] re-laid out from the flat [A * B] only if a user reads it
        return
    if shape[-1] == 1:  # stored as its elements in order: the reduction of the tile without its last axis
        lower = r.op(Op.RESHAPE, Type(x.type.dtype, shape[:-1]), (x,), (), loc)
        folded = r.op(op, Type(dt, v.type.shape[:-1]), (lower,), _with_axis(instr, axis), loc)
        r.op(Op.RESHAPE, v.type, (folded,), (), loc, result=v)
        return
    if op not in AXIS_REDUCE:  # the reduction along the last axis of the tile with that axis moved last
        order = tuple(d for d in range(len(shape)) if d != axis) + (axis,)
        moved = r.op(Op.PERMUTE, x.type.with_shape(tuple(shape[d] for d in order)), (x,), (("order", order),), loc)
        folded = r.value(Type(dt, moved.type.shape[:-1])) if keep else v
        attrs = tuple((k, False if k == "keep_dims" else a) for k, a in _with_axis(instr, len(shape) - 1))
        r.instr(Instr(op, (folded,), (moved,), attrs, instr.regions, loc))
        if keep:
            r.op(Op.RESHAPE, v.type, (folded,), (), loc, result=v)
        return
    work = F32 if x.type.dtype.is_float else I32 if x.type.dtype in _INT32_EXACT else \
        x.type.dtype if x.type.dtype in limits.WIDE else None  # int64: the scalar unit's (:mod:`.scalarunit`)
    if work is None:
        raise unsupported(instr, f"`{op.value}` of {x.type.dtype} tiles of rank {len(shape)} (reduce float, int32 "
                                 "or narrower integer tiles)")
    src = r.op(Op.CAST, src.type.with_dtype(work), (src,), (("dtype", work),), loc) if work != x.type.dtype else src
    full = r.emit(Op.RESHAPE, x.type.with_dtype(work), (src,), (), loc)
    out = Type(work, shape[:axis] + shape[axis + 1:])
    folded = r.emit(op, out, (full,), (("axis", axis), ("keep_dims", False)), loc,
                    result=v if not keep and work == dt else None)
    if len(out.shape) >= 3:
        r.flat[folded.id] = r.emit(Op.RESHAPE, Type(work, flat_shape(out.shape)), (folded,), (), loc)
    if work != dt and dt.is_float:
        folded = r.cast(folded, dt, loc, result=None if keep else v)
    elif work != dt:  # narrow integers: a cast the rewrites lower
        folded = r.op(Op.CAST, folded.type.with_dtype(dt), (folded,), (("dtype", dt),), loc, result=None if keep else v)
    if keep:
        _bind(r, v, _flat(r, folded, loc), loc)


def select(sel, instr: Instr) -> list | None:
    """The calls of the ops the module docstring names (a :data:`.select.RULES` rule), else None."""
    if instr.op is Op.PERMUTE and len(instr.result.type.shape) >= 3:
        return _permute(sel, instr)
    if instr.op is Op.BROADCAST and len(instr.result.type.shape) >= 3 and not instr.operands[0].type.is_scalar:
        return _spread(sel, instr)
    if instr.op in AXIS_REDUCE and len(instr.operands[0].type.shape) >= 3:
        return _fold(sel, instr)
    return None


def _offset(r, lead: tuple[int, ...], weights: tuple[int, ...]) -> Expr:
    """``sum(index_k * weights[k])`` over the indices of row ``r`` of the flat view of leading axes
    ``lead`` (axes of weight 0 left out)."""
    terms, inner = [], 1
    for axis in reversed(range(len(lead))):
        if weights[axis] and lead[axis] > 1:
            index = r if inner == 1 else Bin(BinOp.DIV, r, lit(inner))
            index = index if axis == 0 else Bin(BinOp.MOD, index, lit(lead[axis]))
            terms.append(index if weights[axis] == 1 else Bin(BinOp.MUL, index, lit(weights[axis])))
        inner *= lead[axis]
    at = terms.pop() if terms else lit(0)
    while terms:
        at = Bin(BinOp.ADD, at, terms.pop())
    return at


def _spread(sel, instr: Instr) -> list:
    """A broadcast along leading axes: whole padded rows copied UB -> UB (the whole tile repeated when
    only outer axes broadcast)."""
    (x,), v = instr.operands, instr.result
    shape = v.type.shape
    xs = (1,) * (len(shape) - len(x.type.shape)) + x.type.shape
    p, dt = sel.pitch(v), v.type.dtype
    dst, src = sel.bufs[v.id], sel.bufs[x.id]
    outer = next(k for k, (a, b) in enumerate(zip(xs, shape)) if a != b)
    if all(a == b for a, b in zip(xs[outer + 1:], shape[outer + 1:])) and numel(xs[:outer + 1]) == 1:
        i, tile = sel.fresh("a"), numel(xs[:-1]) * p  # the tile, numel(shape[:outer + 1]) times
        copy = Call("DataCopy", Ref(dst, dt, Bin(BinOp.MUL, i, lit(tile)), numel(shape[:-1]) * p),
                    (Ref(src, dt, lit(0), tile),), (lit(tile),))
        return [For(i, lit(0), lit(numel(shape[:outer + 1])), lit(1), (copy,), True, loc=instr.loc)]
    rows = [numel(xs[k + 1:-1]) for k in range(len(xs) - 1)]
    run = shape[-2]  # result rows in a run of the same operand row, when the axis before the last is broadcast
    if xs[-2] == 1 and dt in _SCALED and not sel.general and max(run, p // (sel.platform.block_bytes // dt.itemsize)) \
            <= sel.platform.max_repeats:
        j = sel.fresh("r")
        source = _offset(j, shape[:-2], tuple(w if a == b else 0 for w, a, b in zip(rows, xs, shape[:-2])))
        return _runs(sel, instr, dst, src, source, j, numel(shape[:-2]), run)
    i = sel.fresh("r")  # row i of the result is the operand's row of its kept indices
    source = _offset(i, shape[:-1], tuple(w if a == b else 0 for w, a, b in zip(rows, xs, shape)))
    copy = Call("DataCopy", Ref(dst, dt, Bin(BinOp.MUL, i, lit(p)), numel(shape[:-1]) * p),
                (Ref(src, dt, Bin(BinOp.MUL, source, lit(p)), numel(xs[:-1]) * p),), (lit(p),))
    return [For(i, lit(0), lit(numel(shape[:-1])), lit(1), (copy,), True, loc=instr.loc)]


def _runs(sel, instr: Instr, dst, src, source: Expr, j, runs: int, run: int) -> list:
    """Runs ``j`` of ``run`` result rows, each the operand's row ``source`` (an expression of ``j``), whole
    padded rows: one ``Muls`` by 1 (exact) a repeat-wide chunk, the run's rows as its repeats reading the row at
    repeat stride 0 (where a ``DataCopy`` a row costs a call each)."""
    v, dt = instr.result, instr.result.type.dtype
    p, per_rep = sel.pitch(v), sel.platform.repeat_bytes // dt.itemsize
    total, whole = numel(v.type.shape[:-1]) * p, numel(instr.operands[0].type.shape[:-1]) * p
    one = Lit(1.0, dt) if dt.is_float else Lit(1, dt)
    chunk = lambda c: [Call(  # noqa: E731 - one chunk of the run's rows
        "Muls", Ref(dst, dt, add(Bin(BinOp.MUL, j, lit(run * p)), c), total),
        (Ref(src, dt, add(Bin(BinOp.MUL, source, lit(p)), c), whole),),
        (one, repeat.mask(p, per_rep, c), repeat.u8(run),
         Brace((lit(1), lit(1), repeat.u8(p // (sel.platform.block_bytes // dt.itemsize)), lit(0)))))]
    body = repeat.over_columns(sel, lit(0), p, per_rep, chunk)
    return [For(j, lit(0), lit(runs), lit(1), tuple(body), True, loc=instr.loc)]


def _permute(sel, instr: Instr) -> list:
    """``tl.permute``/``tl.trans`` of a tile of rank 3 or more: one ``Gather``, lane ``(i, .., k)`` of the
    result reading the operand's element at ``i * s0 + .. + min(k, N - 1) * s_last`` (``s``: the operand's
    UB strides of the axes the result's come from; ``N``: the result's last axis)."""
    movable(instr, "`tl.permute`")
    (x,), v = instr.operands, instr.result
    dt = v.type.dtype
    shape, order = v.type.shape, instr.attr("order")
    s = [strides(x.type.shape, sel.align)[d] for d in order]
    size, p, rows = dt.itemsize, sel.pitch(v), numel(shape[:-1])
    line = sel.scratch("permuteRow", I32, p, instr.loc)
    out = [Call("CreateVecIndex", line, (), (Lit(0, I32), lit(p)), loc=instr.loc),
           Call("Mins", line, (line,), (Lit(shape[-1] - 1, I32), lit(p)), inplace=True),
           Call("Muls", line, (line,), (Lit(s[-1] * size, I32), lit(p)), inplace=True)]
    line, q, pair = row_halves(sel, line, p, dt)
    offsets = sel.scratch("permuteOffsets", I32, rows * q, instr.loc)
    r = sel.fresh("r")
    at = _offset(r, shape[:-1], tuple(w * size for w in s[:-1]))
    out += pair + [For(r, lit(0), lit(rows), lit(1), (Call(
        "Adds", Ref(offsets.buf, I32, Bin(BinOp.MUL, r, lit(q)), offsets.extent), (line,), (at, lit(q))),), True)]
    return out + gather_lanes(sel, sel.ref(v), sel.ref(x), offsets, rows * p, halves=True)


def _fold(sel, instr: Instr) -> list:
    """``sum``/``max``/``min`` along a leading axis: per outer index, its first slab copied, the others
    folded onto it: with the slabs as repeats (dstRepStride 0, :func:`.reduce.accumulate_rows`), the outer
    indices independent, where a slab is at most ``max_repeats`` blocks; else in order, a call a slab."""
    (x,), v = instr.operands, instr.result
    shape, axis = x.type.shape, instr.attr("axis")
    dt = x.type.dtype
    api = isel.BINARY_API[{Op.SUM: Op.ADD, Op.MAX: Op.MAXIMUM, Op.MIN: Op.MINIMUM}[instr.op]]
    p = sel.pitch(x)
    outer, count, slab = numel(shape[:axis]), shape[axis], numel(shape[axis + 1:-1]) * p
    lanes = shape[-1] if axis == len(shape) - 2 else slab
    dst, src = sel.bufs[v.id], sel.bufs[x.id]
    o, k = sel.fresh("o"), sel.fresh("k")
    at = Bin(BinOp.MUL, o, lit(slab)) if outer > 1 else lit(0)
    first = Bin(BinOp.MUL, o, lit(count * slab)) if outer > 1 else lit(0)
    acc = Ref(dst, dt, at, outer * slab)
    copy = Call("DataCopy", acc, (Ref(src, dt, first, numel(shape[:-1]) * p),), (lit(slab),))
    if count > 1 and not sel.general and slab // (sel.platform.block_bytes // 4) <= sel.platform.max_repeats:
        if outer == 1:
            return located([copy, *accumulate_rows(sel, api, acc, Ref(src, dt, lit(0), numel(shape[:-1]) * p), count,
                                                   lanes, slab)], instr.loc)
        o2 = sel.fresh("o")  # the copies, then the folds: the outer indices' calls need no barrier between them
        folds = accumulate_rows(sel, api, Ref(dst, dt, Bin(BinOp.MUL, o2, lit(slab)), outer * slab),
                                Ref(src, dt, Bin(BinOp.MUL, o2, lit(count * slab)), numel(shape[:-1]) * p), count,
                                lanes, slab)
        return [For(o, lit(0), lit(outer), lit(1), (copy,), True, loc=instr.loc),
                For(o2, lit(0), lit(outer), lit(1), tuple(folds), True)]
    body: list = [copy]
    if count > 1:
        row = Ref(src, dt, add(first, Bin(BinOp.MUL, k, lit(slab))), numel(shape[:-1]) * p)
        body.append(For(k, lit(1), lit(count), lit(1), (Call(api, acc, (acc, row), (lit(lanes),), inplace=True),)))
    if outer == 1:
        return located(body, instr.loc)
    return [For(o, lit(0), lit(outer), lit(1), tuple(body), loc=instr.loc)]


__all__ = ["flat_shape", "rewrite", "select"]
