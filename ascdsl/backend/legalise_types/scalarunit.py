"""Tile ops on element types the vector unit computes nothing with (:data:`.limits.WIDE`: int64), as loops on
the core's scalar unit: every element read with ``LocalTensor::GetValue`` and written with ``SetValue``.

A2's ``Add``/``Sub``/``Mul``/``Max``/``Min``/``Compare`` take at most 32-bit elements; the scalar unit computes
in 64 bits, one element at a time. :func:`select` (the first :data:`.select.RULES` rule) lowers the ops of
:data:`.limits.SCALAR_UNIT`:

* elementwise ops (``+ - * // % & | ^ ~ << >>``, negation, ``abs``, ``maximum``/``minimum``) over the
  result's elements (the padding of its rows skipped; a broadcast operand is read at stride 0 along its
  broadcast axes). ``+ - *``, negation and ``<<`` run in ``uint64_t`` and wrap as the interpreter's int64
  does (signed overflow is undefined in C++); a shift by an amount outside ``[0, 64)`` gives NumPy's 0 (or,
  ``>>`` of a negative value, -1), where C++'s is undefined; ``//`` and ``%`` truncate (C's, Triton's) and
  give NumPy's results where C++ traps: 0 for a zero divisor, ``-a`` and 0 for -1;
* comparisons into the bit mask ``Compare`` writes (:mod:`.compute`), eight lanes a byte over the padded
  footprint, so ``tl.where`` and ``& | ^ ~`` read it as any other mask;
* ``sum``/``max``/``min`` along an axis of a tile of any rank (one accumulator per result element, the axis
  walked at its UB stride) or to a scalar (a member, as the vector reductions set), and scans along an axis
  (``tl.cumsum``: the accumulator written at every step).

The loops run over a tile's axes, adjacent axes merged where every operand steps through both evenly (a
tile without padding is one loop). :mod:`.sync` orders the scalar unit's accesses after the vector pipe and
the DMA that wrote or read the same UB (``V_S``, ``MTE2_S``) and the vector pipe after the scalar unit's
writes (``S_V``). :func:`rewrite` keeps these ops as they are through :mod:`.decompose` (which flattens
tiles of rank 3 or more first). The simulator charges every element access (``scalar_ub_access``,
:mod:`ascdsl.sim.cost`): a comparison of two 1024-element int64 tiles holds the scalar unit for about 22,000
cycles, where the vector ``Compare`` of int32 ones takes about 20.
"""
from __future__ import annotations

import dataclasses

from ... import dtypes
from ...ir.core import GroupOp, Instr, Op
from . import limits
from ..kir import Bin, BinOp, Call, CInt, Cond, Conv, Elem, For, Let, Lit, Pipe, Ref, Set, Var, VarKind, add, lit, mul
from ..legalise_shapes.ublayout import strides

I64, U8, U32 = dtypes.int64, dtypes.uint8, dtypes.uint32
WRAPPING = {Op.ADD: BinOp.ADD, Op.SUB: BinOp.SUB, Op.MUL: BinOp.MUL}
"""Ops computed on the ``uint64_t`` views of their operands (wrapping, as the interpreter's)."""
BITWISE = {Op.AND: BinOp.AND, Op.OR: BinOp.OR, Op.XOR: BinOp.XOR}
COMPARE = {Op.LT: BinOp.LT, Op.LE: BinOp.LE, Op.GT: BinOp.GT, Op.GE: BinOp.GE, Op.EQ: BinOp.EQ, Op.NE: BinOp.NE}
FOLD = {Op.SUM: Op.ADD, Op.MAX: Op.MAXIMUM, Op.MIN: Op.MINIMUM}
IDENTITY = {Op.ADD: 0, Op.MUL: 1, Op.MAXIMUM: -(1 << 63), Op.MINIMUM: (1 << 63) - 1}
"""The value an accumulator of each combine op starts from."""
WORD_BITS = 64
"""Bits of an int64: shift amounts at or past it (or negative) shift every bit out."""
MASK_LANES = 8
"""Comparison results written a mask byte at a time."""
LOOP_HINTS = ("i", "j", "l", "m", "n")


def rewrite(r, instr: Instr) -> bool:
    """Scalar-unit ops stay as they are (a :data:`.decompose.REWRITES` rule after :mod:`.rank3`'s): no later
    rule turns them into vector ops (scans, whose combine op :mod:`.scan` extracts first, are not held)."""
    if not limits.on_scalar_unit(instr) or instr.op in GroupOp.COMBINE:
        return False
    r.out.append(instr)
    return True


def select(sel, instr: Instr) -> list | None:
    """The scalar loops of a scalar-unit op (a :data:`.select.RULES` rule), else None."""
    if not limits.on_scalar_unit(instr):
        return None
    if instr.op in COMPARE:
        return _compare(sel, instr)
    if instr.op in FOLD:
        return _reduce(sel, instr)
    if instr.op is Op.SCAN:
        return _along(sel, instr, instr.attr("combine"), instr.result, each=True)
    return _elementwise(sel, instr)


def combined(op: Op, a, b=None):
    """``op`` of the int64 expressions ``a`` and ``b`` (``b`` None: a unary op)."""
    if op in WRAPPING:
        return Conv(I64, Bin(WRAPPING[op], Conv(CInt.UINT64, a), Conv(CInt.UINT64, b)))
    if op in BITWISE:
        return Bin(BITWISE[op], a, b)
    if op is Op.MAXIMUM:
        return Cond(Bin(BinOp.GT, a, b), a, b)
    if op is Op.MINIMUM:
        return Cond(Bin(BinOp.LT, a, b), a, b)
    if op is Op.NOT:
        return Bin(BinOp.XOR, a, Lit(-1, I64))
    if op in (Op.SHL, Op.SHR):
        inside = Bin(BinOp.LT, Conv(CInt.UINT64, b), Lit(WORD_BITS, I64))  # negative amounts are huge unsigned
        if op is Op.SHL:
            return Cond(inside, Conv(I64, Bin(BinOp.SHL, Conv(CInt.UINT64, a), b)), Lit(0, I64))
        return Cond(inside, Bin(BinOp.SHR, a, b), Cond(Bin(BinOp.LT, a, Lit(0, I64)), Lit(-1, I64), Lit(0, I64)))
    negated = Conv(I64, Bin(BinOp.SUB, Conv(CInt.UINT64, Lit(0, I64)), Conv(CInt.UINT64, a)))
    if op is Op.NEG:
        return negated
    if op in (Op.IDIV, Op.MOD):  # C's trapping cases: NumPy's 0 for a zero divisor, its wrap for -1
        quotient = negated if op is Op.IDIV else Lit(0, I64)
        whole = Bin(BinOp.DIV if op is Op.IDIV else BinOp.MOD, a, b)
        return Cond(Bin(BinOp.EQ, b, Lit(0, I64)), Lit(0, I64), Cond(Bin(BinOp.EQ, b, Lit(-1, I64)), quotient, whole))
    return Cond(Bin(BinOp.LT, a, Lit(0, I64)), negated, a)  # abs (abs(INT64_MIN) wraps to itself, as NumPy's)


def _loops(sel, shape, views, body, loc) -> list:
    """Loops over the indices of ``shape`` around ``body(offsets)``, the offset of the element of each of
    ``views`` (the UB strides of a tile along every axis of ``shape``); unit axes are left out and adjacent
    axes merged where every view steps through both evenly (but in the general form, whose structure does not
    depend on extents: :mod:`.lift`)."""
    dims: list = []
    for n, steps in zip(shape, zip(*views)):
        if n == 1 and not sel.general:
            continue
        if dims and not sel.general and all(outer == inner * n for outer, inner in zip(dims[-1][1], steps)):
            dims[-1] = (dims[-1][0] * n, steps)
        else:
            dims.append((n, steps))
    offsets = [lit(0)] * len(views)
    loops = []
    for depth, (n, steps) in enumerate(dims):
        i = sel.fresh(LOOP_HINTS[depth % len(LOOP_HINTS)])
        loops.append((i, n))
        offsets = [add(o, mul(i, lit(s))) for o, s in zip(offsets, steps)]
    out = list(body(offsets))
    for i, n in reversed(loops):
        out = [For(i, lit(0), lit(n), lit(1), tuple(out), True)]
    if out and loc is not None:
        out[0] = dataclasses.replace(out[0], loc=loc)
    return out


def _value(sel, ref: Ref, offset, hint: str) -> tuple[Let, Var]:
    """``const int64_t hint = ref.GetValue(offset);`` and its variable."""
    var = Var(sel.fresh_key(), ref.dtype, hint)
    return Let(var, Elem(ref, offset)), var


def _put(ref: Ref, offset, value) -> Call:
    """``ref.SetValue(offset, value);`` on the scalar unit."""
    return Call("SetValue", ref, (), (offset, value), pipe=Pipe.S, method=True)


def _operand(sel, x, shape) -> tuple[Ref, tuple]:
    """Tile operand ``x`` of an elementwise op of ``shape``: its view and its UB strides along ``shape``'s axes
    (a broadcast the selector fused is its source's, at stride 0 along the axes it broadcasts)."""
    if x.id not in sel.fused:
        return sel.ref(x), strides(shape, sel.align)
    (source,) = sel.defs[x.id].operands
    lead = len(shape) - len(source.type.shape)
    own = (0,) * lead + strides(source.type.shape, sel.align)
    along = (1,) * lead + source.type.shape
    return sel.ref(source), tuple(0 if a == 1 and n > 1 else s for s, a, n in zip(own, along, shape))


def _elementwise(sel, instr: Instr) -> list:
    """An elementwise op: each result element from its operands' elements (or scalars)."""
    v = instr.result
    shape = v.type.shape
    tiles = [(k, *_operand(sel, x, shape)) for k, x in enumerate(instr.operands) if not x.type.is_scalar]
    views = [strides(shape, sel.align)] + [st for _, _, st in tiles]

    def body(offsets) -> list:
        out, args = [], [None] * len(instr.operands)
        for (k, ref, _), offset in zip(tiles, offsets[1:]):
            let, args[k] = _value(sel, ref, offset, ("lhs", "rhs")[k] if len(instr.operands) == 2 else "operand")
            out.append(let)
        for k, x in enumerate(instr.operands):
            if x.type.is_scalar:
                args[k] = sel.scalar_as(x, I64)
        return out + [_put(sel.ref(v), offsets[0], combined(instr.op, *args))]
    return _loops(sel, shape, views, body, instr.loc)


def _compare(sel, instr: Instr) -> list:
    """A comparison into its bit mask: a byte of ``MASK_LANES`` lanes at a time, over the padded footprint of the
    operands (the lanes past the tile's are compared too, as ``Compare`` compares whole repeats; a footprint
    that ends inside a byte leaves that byte's last bits 0 rather than read past it)."""
    v = instr.result
    size = -(-sel.count(v) // MASK_LANES)
    lanes = min([sel.count(x) for x in instr.operands if not x.type.is_scalar] + [size * MASK_LANES])
    refs = [None if x.type.is_scalar else Ref(sel.bufs[x.id], I64, lit(0), lanes) for x in instr.operands]
    byte, k = sel.fresh("byte"), sel.fresh("k")
    tail = lanes - (size - 1) * MASK_LANES  # the last byte's lanes inside the operands (their bits stay 0)
    upper = lit(MASK_LANES) if tail == MASK_LANES else Cond(Bin(BinOp.LT, byte, lit(size - 1)), lit(MASK_LANES),
                                                            lit(tail))
    bits = Var(sel.fresh_key(), U32, "bits")
    lane = Var(sel.fresh_key(), dtypes.int32, "lane")
    inner: list = [Let(lane, add(mul(byte, lit(MASK_LANES)), k))]
    args = []
    for ref, x, hint in zip(refs, instr.operands, ("lhs", "rhs")):
        if ref is None:
            args.append(sel.scalar_as(x, I64))
            continue
        let, var = _value(sel, ref, lane, hint)
        inner.append(let)
        args.append(var)
    inner.append(Set(bits, Bin(BinOp.OR, bits, Bin(BinOp.SHL, Conv(U32, Bin(COMPARE[instr.op], *args)), k))))
    mask = Ref(sel.bufs[v.id], U8, lit(0), size)
    return [For(byte, lit(0), lit(size), lit(1), (
        Let(bits, Lit(0, U32), mutable=True),
        For(k, lit(0), upper, lit(1), tuple(inner), True),
        _put(mask, byte, Conv(U8, bits))), True, loc=instr.loc)]


def _reduce(sel, instr: Instr) -> list:
    """``sum``/``max``/``min`` along an axis (:func:`_along`) or of every element (to a scalar, or a
    one-element tile with ``keep_dims``) into a member."""
    (x,), v = instr.operands, instr.result
    fold = FOLD[instr.op]
    if instr.attr("axis") is not None and not v.type.is_scalar:
        return _along(sel, instr, fold, v, each=False)
    acc = Var(v.id, I64, sel.hint(v, instr.op.value), VarKind.MEMBER)
    sel.members.append(acc)
    if v.type.is_scalar:
        sel.scalars[v.id] = acc
    src = sel.ref(x)

    def body(offsets) -> list:
        let, value = _value(sel, src, offsets[0], "value")
        return [let, Set(acc, combined(fold, acc, value))]
    out = [Set(acc, Lit(IDENTITY[fold], I64), loc=instr.loc)]
    out += _loops(sel, x.type.shape, [strides(x.type.shape, sel.align)], body, None)
    if not v.type.is_scalar:  # keep_dims: the one-element tile of it
        out.append(_put(sel.ref(v), lit(0), acc))
    return out


def _along(sel, instr: Instr, fold: Op, v, each: bool) -> list:
    """A fold by ``fold`` along the instruction's axis, one accumulator per index of the other axes: its
    result at the end (a reduction, ``keep_dims`` or not) or at every step (``each``: a scan, from the end
    when ``reverse``)."""
    (x,) = instr.operands
    shape = x.type.shape
    axis = instr.attr("axis") % len(shape)
    own = strides(shape, sel.align)
    out_shape = v.type.shape
    theirs = strides(out_shape, sel.align)
    if not each and len(out_shape) < len(shape):  # without keep_dims the result has no ``axis``: stride 0
        theirs = theirs[:axis] + (0,) + theirs[axis:]
    outer = shape[:axis] + (1,) + shape[axis + 1:]
    src, dst = sel.ref(x), sel.ref(v)
    length = shape[axis]

    def body(offsets) -> list:
        acc = Var(sel.fresh_key(), I64, "acc")
        k = sel.fresh("k")
        step = Bin(BinOp.SUB, lit(length - 1), k) if instr.attr("reverse") else k
        let, value = _value(sel, src, add(offsets[1], mul(step, lit(own[axis]))), "value")
        inner = [let, Set(acc, combined(fold, acc, value))]
        if each:
            inner.append(_put(dst, add(offsets[0], mul(step, lit(theirs[axis]))), acc))
        out = [Let(acc, Lit(IDENTITY[fold], I64), mutable=True), For(k, lit(0), lit(length), lit(1), tuple(inner))]
        return out if each else out + [_put(dst, offsets[0], acc)]
    return _loops(sel, outer, [theirs, own], body, instr.loc)


__all__ = ["combined", "rewrite", "select"]
