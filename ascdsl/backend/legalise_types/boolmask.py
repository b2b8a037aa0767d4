"""Bool tiles as values: casts and stores of comparison masks, bool loads, and ``tl.where`` on int32 data.

A bool tile is ``Compare``'s bit mask in UB (one bit per lane); only ``tl.where`` and ``& | ^ ~`` read
it. Everything else a kernel does with one is rewritten on the tile IR (:func:`rewrite`, a
:data:`.decompose.REWRITES` rule) into those:

* ``mask.to(dt)`` is ``tl.where(mask, 1, 0)`` in ``dt``; to int8/uint8 the ``Select`` runs in float16
  and ``Cast`` (exact for 0 and 1) narrows it, since ``Select`` has no 8-bit form; ``x.to(tl.int1)`` of
  numbers is ``x != 0``;
* a bool tile broadcast (``(cols < 3) | m`` with ``cols`` a row) is its 0/1 float16 values broadcast and
  compared ``!= 0``;
* storing a bool tile stores those 0/1 bytes (int8/uint8 in GM, as Triton stores ``int1``); a bool tile
  filled from a scalar (a single-element store of a bool, ``tl.full`` of a bool) is the comparison
  ``!= 0`` of the value filled in float16;
* loading a bool tile loads its bytes, widens them to float16 and compares them ``!= 0``; a constant
  ``other`` is applied to the mask (``& (index < extent)`` for False, ``| ~(index < extent)`` for True),
  since A2 has no 8-bit ``Duplicate`` to fill the masked lanes; a runtime one (a bool scalar)
  fills them in float16 (``tl.where(index < extent, bytes, other)``) before the comparison.

``tl.where`` on int32 tiles (:func:`select_int`) is ``Select`` on the float32 view of the same bits:
``Select`` moves lanes without arithmetic, so every int32 value, NaN patterns included, comes out
unchanged. Scalar branches are ``Duplicate`` d as int32 first (a float literal cannot carry every
int32 bit pattern).
"""
from __future__ import annotations

from ... import dtypes
from ...ir.core import Block, Instr, Op, Type
from ..kir import Call, Const, Ref, lit

F16, F32, I32, U8 = dtypes.float16, dtypes.float32, dtypes.int32, dtypes.uint8
NARROW_INTS = frozenset({dtypes.int8, dtypes.uint8})
"""Integer dtypes a mask is cast to through float16 (``Select`` has no 8-bit form)."""


def _is_bool_tile(v) -> bool:
    return not v.type.is_scalar and v.type.dtype == dtypes.bool_


LANE_LOADS = frozenset({Op.GATHER_LOAD, Op.STRIDED_LOAD, Op.SPAN_LOAD})
"""Loads that copy lanes one by one or in spans (a bool tile's bytes, which this module turns into a mask)."""


def rewrite(r, instr: Instr) -> bool:
    """The tile-IR rewrites of the module docstring (a :data:`.decompose.REWRITES` rule)."""
    if instr.op in (Op.FOR, Op.WHILE, Op.IF) and any(_is_bool_tile(v) for v in instr.results):
        _carried(r, instr)
        return True
    if instr.op is Op.CAST and _is_bool_tile(instr.operands[0]) and instr.result.type.dtype != dtypes.bool_:
        as_number(r, instr.operands[0], instr.result.type.dtype, instr.loc, result=instr.result)
        return True
    if instr.op is Op.CAST and _is_bool_tile(instr.result) and not _is_bool_tile(instr.operands[0]):
        _truth(r, instr)
        return True
    if instr.op in (Op.BROADCAST, Op.CONST) and _is_bool_tile(instr.result) and all(
            x.type.is_scalar for x in instr.operands):
        _filled(r, instr)
        return True
    if instr.op is Op.BROADCAST and _is_bool_tile(instr.result) and not instr.operands[0].type.is_scalar:
        wide = as_number(r, instr.operands[0], F16, instr.loc)
        t = instr.result.type.with_dtype(F16)
        spread = r.emit(Op.BROADCAST, t, (wide,), (), instr.loc)  # read by the Add: fused
        spread = r.emit(Op.ADD, t, (r.emit(Op.CONST, t, (), (("value", 0.0),), instr.loc), spread), (), instr.loc)
        r.op(Op.NE, instr.result.type, (spread, r.const(0.0, F16, instr.loc)), (), instr.loc, result=instr.result)
        return True
    if instr.op is Op.EXPAND_DIMS and _is_bool_tile(instr.result):  # the 0/1 values moved, compared back
        wide = r.op(Op.EXPAND_DIMS, instr.result.type.with_dtype(F16), (as_number(r, instr.operands[0], F16, instr.loc),),
                    instr.attrs, instr.loc)
        r.op(Op.NE, instr.result.type, (wide, r.const(0.0, F16, instr.loc)), (), instr.loc, result=instr.result)
        return True
    if instr.op is Op.PRINT and any(_is_bool_tile(x) for x in instr.operands):
        bools = tuple(i for i, x in enumerate(instr.operands) if _is_bool_tile(x))
        xs = tuple(as_number(r, x, I32, instr.loc) if _is_bool_tile(x) else x for x in instr.operands)
        r.out.append(Instr(Op.PRINT, (), xs, instr.attrs + (("bools", bools),), (), instr.loc))
        return True
    if instr.op is Op.WHERE and _is_bool_tile(instr.result):
        _where_of_masks(r, instr)
        return True
    if instr.op in (Op.BLOCK_STORE, Op.STRIDED_STORE, Op.SCATTER_STORE) and _is_bool_tile(instr.operands[-1]):
        value = as_number(r, instr.operands[-1], U8, instr.loc)
        r.out.append(Instr(instr.op, (), instr.operands[:-1] + (value,), instr.attrs, (), instr.loc))
        return True
    if instr.op in LANE_LOADS and _is_bool_tile(instr.result):  # bytes gathered lane by lane, compared `!= 0`
        v, loc = instr.result, instr.loc
        operands = instr.operands
        if instr.attr("has_other"):
            operands = operands[:-1] + (r.cast(operands[-1], U8, loc),)
        raw = r.value(v.type.with_dtype(U8))
        r.out.append(Instr(instr.op, (raw,), operands, instr.attrs, (), loc))
        wide = r.op(Op.CAST, v.type.with_dtype(F16), (raw,), (("dtype", F16),), loc)
        r.op(Op.NE, v.type, (wide, r.const(0.0, F16, loc)), (), loc, result=v)
        return True
    if instr.op is Op.BLOCK_LOAD and _is_bool_tile(instr.result):
        v, loc = instr.result, instr.loc
        operands, attrs = instr.operands, instr.attrs
        other = runtime = None
        if instr.attr("has_other"):
            other = r.consts.get(operands[-1].id)
            runtime = operands[-1] if other is None else None
            operands = operands[:-1]
            attrs = tuple((k, False if k == "has_other" else a) for k, a in attrs)
        raw = r.value(v.type.with_dtype(U8))
        r.out.append(Instr(Op.BLOCK_LOAD, (raw,), operands, attrs, (), loc))
        wide = r.op(Op.CAST, v.type.with_dtype(F16), (raw,), (("dtype", F16),), loc)
        if runtime is not None:  # the masked lanes take `other` as 0/1 in float16
            fill = r.cast(runtime, F16, loc)  # a scalar (memory-access analysis refuses tiles)
            wide = r.op(Op.WHERE, wide.type, (in_bounds(r, instr, loc), wide, fill), (), loc)
        if other is None:
            r.op(Op.NE, v.type, (wide, r.const(0.0, F16, loc)), (), loc, result=v)
            return True
        loaded = r.op(Op.NE, v.type, (wide, r.const(0.0, F16, loc)), (), loc)
        valid = in_bounds(r, instr, loc)
        if other:
            r.op(Op.OR, v.type, (loaded, r.op(Op.NOT, v.type, (valid,), (), loc)), (), loc, result=v)
        else:
            r.op(Op.AND, v.type, (loaded, valid), (), loc, result=v)
        return True
    return False


LOGIC = {Op.MINIMUM: Op.AND, Op.MAXIMUM: Op.OR}
"""The minimum and maximum of bool values: the logic op of masks."""


def extremes(r, instr: Instr) -> bool:
    """``minimum``/``maximum`` of bool tiles as ``&``/``|`` of masks, and ``min``/``max`` reductions of a
    bool tile (of any rank) as the reduction of its 0/1 float16 values compared ``!= 0`` (a
    :data:`.decompose.REWRITES` rule, tried before the rank-N rewrites, which reduce numbers)."""
    v, loc = instr.results[0] if instr.results else None, instr.loc
    if instr.op in LOGIC and _is_bool_tile(v):
        a, b = (x if not x.type.is_scalar else r.op(Op.BROADCAST, v.type, (x,), (), loc) for x in instr.operands)
        r.op(LOGIC[instr.op], v.type, (a, b), (), loc, result=v)
        return True
    if instr.op in (Op.MIN, Op.MAX) and _is_bool_tile(instr.operands[0]):
        (x,) = instr.operands
        folded = r.op(instr.op, v.type.with_dtype(F16), (as_number(r, x, F16, loc),), instr.attrs, loc)
        zero = r.const(0.0, F16, loc)
        if not v.type.is_scalar:
            zero = r.op(Op.BROADCAST, folded.type, (zero,), (), loc)
        r.op(Op.NE, v.type, (folded, zero), (), loc, result=v)
        return True
    return False


def _where_of_masks(r, instr: Instr) -> None:
    """``tl.where(c, a, b)`` of bool values: ``(c & a) | (~c & b)`` of masks (a scalar branch filled first)."""
    v, loc = instr.result, instr.loc
    c, a, b = (x if not x.type.is_scalar or x is instr.operands[0] else
               r.op(Op.BROADCAST, v.type, (x,), (), loc) for x in instr.operands)
    if c.type.is_scalar:
        c = r.op(Op.BROADCAST, v.type, (r.cast(c, dtypes.bool_, loc),), (), loc)
    picked = r.op(Op.AND, v.type, (c, a), (), loc)
    rest = r.op(Op.AND, v.type, (r.op(Op.NOT, v.type, (c,), (), loc), b), (), loc)
    r.op(Op.OR, v.type, (picked, rest), (), loc, result=v)


def _truth(r, instr: Instr) -> None:
    """``x.to(tl.int1)`` of a number tile: the comparison ``x != 0`` (8-bit integers widened to float16
    first, exactly, since ``Compare`` has no 8-bit form)."""
    (x,), v, loc = instr.operands, instr.result, instr.loc
    if x.type.dtype.itemsize == 1:
        x = r.op(Op.CAST, x.type.with_dtype(F16), (x,), (("dtype", F16),), loc)
    zero = r.const(0.0 if x.type.dtype.is_float else 0, x.type.dtype, loc)
    r.op(Op.NE, v.type, (x, zero), (), loc, result=v)


def _filled(r, instr: Instr) -> None:
    """A bool tile filled from a scalar (``tl.store(p, flag)``, ``tl.full(shape, True, tl.int1)``): the
    comparison ``!= 0`` of the value filled as 0/1 in float16."""
    v, loc = instr.result, instr.loc
    t = v.type.with_dtype(F16)
    if instr.op is Op.CONST:
        wide = r.op(Op.CONST, t, (), (("value", float(bool(instr.attr("value")))),), loc)
    else:
        wide = r.op(Op.BROADCAST, t, (r.cast(instr.operands[0], F16, loc),), (), loc)
    r.op(Op.NE, v.type, (wide, r.const(0.0, F16, loc)), (), loc, result=v)


def in_bounds(r, load: Instr, loc):
    """The bool tile of the lanes a block load reads (``index < extent`` along each axis)."""
    shape = load.attr("shape")
    t = load.result.type.with_dtype(dtypes.bool_)
    extents = load.operands[1 + len(shape):1 + 2 * len(shape)]
    if shape[1:] == (1,):  # an [M, 1] column lies as its M elements: the first rows * (0 or 1) are read
        count = r.op(Op.MUL, Type(I32), extents, (), loc)
        index = r.op(Op.ARANGE, Type(I32, shape[:1]), (), (("start", 0), ("end", shape[0])), loc)
        inside = r.op(Op.LT, t.with_shape(shape[:1]), (index, count), (), loc)
        return r.op(Op.RESHAPE, t, (inside,), (), loc)
    valid = None
    for axis, (size, extent) in enumerate(zip(shape, extents)):
        index = r.op(Op.ARANGE, Type(I32, (size,)), (), (("start", 0), ("end", size)), loc)
        if len(shape) == 2:
            line = (size, 1) if axis == 0 else (1, size)
            index = r.op(Op.EXPAND_DIMS, Type(I32, line), (index,), (("axis", 1 - axis),), loc)
            spread = r.emit(Op.BROADCAST, t.with_dtype(I32), (index,), (), loc)  # read by the Add: fused
            zero = r.emit(Op.CONST, t.with_dtype(I32), (), (("value", 0),), loc)
            index = r.emit(Op.ADD, t.with_dtype(I32), (zero, spread), (), loc)
        elif len(shape) >= 3:  # broadcast on the flat views (:mod:`.rank3`)
            line = tuple(size if d == axis else 1 for d in range(len(shape)))
            index = r.op(Op.RESHAPE, Type(I32, line), (index,), (), loc)
            index = r.op(Op.BROADCAST, t.with_dtype(I32), (index,), (), loc)
        inside = r.op(Op.LT, t, (index, extent), (), loc)
        valid = inside if valid is None else r.op(Op.AND, t, (valid, inside), (), loc)
    return valid


def _carried(r, instr: Instr) -> None:
    """A ``for``/``while``/``if`` that carries bool tiles carries their 0/1 float16 values instead: each is
    ``tl.where(mask, 1, 0)`` where it enters (the initial value, each yield) and compared ``!= 0`` where
    it is read (the region's argument, the result), so every mask is a comparison again."""
    loc, op = instr.loc, instr.op
    carried = [j for j, v in enumerate(instr.results) if _is_bool_tile(v)]
    operands = list(instr.operands)
    first = 3 if op is Op.FOR else 0  # (lower, upper, step) come before a for's initial values
    if op is not Op.IF:
        for j in carried:
            operands[first + j] = as_number(r, operands[first + j], F16, loc)
    results = list(instr.results)
    for j in carried:
        results[j] = r.value(results[j].type.with_dtype(F16))
    regions = []
    for k, block in enumerate(instr.regions):
        saved, r.out = r.out, []
        args = list(block.args)
        if op is not Op.IF:
            skip = 1 if op is Op.FOR else 0  # a for's first argument is its induction variable
            for j in carried:
                bool_arg = args[skip + j]
                args[skip + j] = r.value(bool_arg.type.with_dtype(F16))
                r.op(Op.NE, bool_arg.type, (args[skip + j], r.const(0.0, F16, loc)), (), loc, result=bool_arg)
        for i in block.body[:-1]:
            r.instr(i)
        last = block.body[-1]
        if last.op is Op.YIELD and not (op is Op.WHILE and k == 0):  # a while's first region yields its condition
            ys = list(last.operands)
            for j in carried:
                ys[j] = as_number(r, ys[j], F16, last.loc)
            last = Instr(Op.YIELD, last.results, tuple(ys), last.attrs, last.regions, last.loc)
        r.instr(last)
        body, r.out = tuple(r.out), saved
        regions.append(Block(tuple(args), body))
    r.out.append(Instr(op, tuple(results), tuple(operands), instr.attrs, tuple(regions), loc))
    for j in carried:
        r.op(Op.NE, instr.results[j].type, (results[j], r.const(0.0, F16, loc)), (), loc, result=instr.results[j])


def as_number(r, mask, dt, loc, result=None):
    """``tl.where(mask, 1, 0)`` in ``dt`` (through float16 for 8-bit integers)."""
    via = F16 if dt in NARROW_INTS else dt
    one, zero = (r.const(c if via.is_float else int(c), via, loc) for c in (1.0, 0.0))
    t = mask.type.with_dtype(via)
    if via == dt:
        return r.op(Op.WHERE, t, (mask, one, zero), (), loc, result=result)
    w = r.op(Op.WHERE, t, (mask, one, zero), (), loc)
    return r.op(Op.CAST, mask.type.with_dtype(dt), (w,), (("dtype", dt),), loc, result=result)


def select_int(sel, instr: Instr) -> list:
    """``tl.where`` of int32 tiles: ``Select`` on float32 views of the branches' bits."""
    cond, a, b = instr.operands
    v = instr.result
    n = sel.count(v)
    dst = sel.ref(v, F32)
    out = []
    if a.type.is_scalar:
        out.append(Call("Duplicate", sel.ref(v), (), (sel.scalar_as(a, I32), lit(n)), loc=instr.loc))
        first = dst
    else:
        first = sel.ref(a, F32)
    if b.type.is_scalar:
        other = sel.scratch("otherBranch", I32, n, instr.loc)
        out.append(Call("Duplicate", other, (), (sel.scalar_as(b, I32), lit(n)), loc=None if out else instr.loc))
        second = Ref(other.buf, F32, lit(0), n)
    else:
        second = sel.ref(b, F32)
    out.append(Call("Select", dst, (sel.ref(cond), first, second), (Const.SEL_TT, lit(n)),
                    loc=None if out else instr.loc))
    return out


def select(sel, instr: Instr) -> list | None:
    """The calls of ``instr`` if this module lowers it (a :data:`.select.RULES` rule), else None."""
    if instr.op is Op.WHERE and instr.result.type.dtype == I32:
        return select_int(sel, instr)
    return None


__all__ = ["as_number", "in_bounds", "rewrite", "select"]
