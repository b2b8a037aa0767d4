"""Selection of reductions and of broadcasts between tile shapes (inputs are float32 after
:mod:`.decompose`, except a 16-bit tile reduced straight to a scalar, which is rounded here).

* A 1-D reduction is one count-form ``ReduceSum``/``ReduceMax``/``ReduceMin`` into a scalar block,
  read back on the scalar unit (the sync pass puts a V_S flag before the read) into a member.
* Along axis 1 of ``[M, N]``: ``WholeReduce*`` per row (one repeat per row); rows longer than one
  repeat are first folded onto their first repeat with repeat-form ``Add``/``Max``/``Min``.
* Along axis 0: the rows are accumulated in order with count-form ``Add``/``Max``/``Min``.
* ``[M, 1] -> [M, N]`` read by arithmetic: ``Brcb`` puts each row's value in a block that the
  repeat-form op reads at block stride 0; ``[1, N] -> [M, N]``: repeat stride 0.
Every scratch area is a buffer of its own, sized by the views of the calls that use it.
"""
from __future__ import annotations

from ..ir.core import Instr, Op
from . import isel, repeat
from .kir import Brace, Call, Const, Elem, For, Lit, Ref, Set, Var, VarKind, add, lit
from .repeat import located, row, view
from .selector import F32, Selector, unsupported

WHOLE = {Op.SUM: "WholeReduceSum", Op.MAX: "WholeReduceMax", Op.MIN: "WholeReduceMin"}
FOLD = {Op.SUM: "Add", Op.MAX: "Max", Op.MIN: "Min"}
ORDER = {Op.SUM: (), Op.MAX: (Const.ORDER_VALUE,), Op.MIN: (Const.ORDER_VALUE,)}


def reduce(sel: Selector, instr: Instr) -> list:
    (x,) = instr.operands
    if instr.op not in isel.REDUCE_API or not x.type.dtype.is_float:
        raise unsupported(instr, f"`{instr.op.value}` of {x.type.dtype} tiles")
    if len(x.type.shape) == 2 and not instr.result.type.is_scalar:
        return _rows(sel, instr) if instr.attr("axis") == 1 else _columns(sel, instr)
    if len(x.type.shape) == 2:
        raise unsupported(instr, "reducing a 2-D tile to a scalar (reduce along one axis)")
    return _to_scalar(sel, instr)


def _rows(sel: Selector, instr: Instr) -> list:
    """Per-row reduction of ``[M, N]`` to ``[M]`` (or ``[M, 1]``)."""
    (x,) = instr.operands
    v, (rows, cols) = instr.result, x.type.shape
    per_rep = sel.platform.repeat_bytes // 4
    per_blk = sel.platform.block_bytes // 4
    p = sel.pitch(x)
    src, pb = sel.ref(x), p // per_blk
    out = []
    if cols > per_rep:  # copy each row's first repeat, fold the others onto it
        fold = sel.scratch("fold", F32, rows * per_rep, instr.loc)
        out += repeat.over_rows(sel, rows, lit(rows), pb, lambda r, n, s: [Call(
            "Muls", view(fold, row(r, per_rep)), (view(src, row(r, p)),),
            (Lit(1.0, F32), lit(per_rep), n, Brace(tuple(map(lit, (1, 1, 8, s))))))])
        out += repeat.over_columns(sel, lit(per_rep), cols, per_rep, lambda c: repeat.over_rows(
            sel, rows, lit(rows), pb, lambda r, n, s: [Call(
                FOLD[instr.op], view(fold, row(r, per_rep)),
                (view(fold, row(r, per_rep)), view(src, add(row(r, p), c))),
                (repeat.mask(cols, per_rep, c), n, Brace(tuple(map(lit, (1, 1, 1, 8, 8, s))))))]),
            independent=False)
        src, lanes, pb = fold, per_rep, 8
    else:
        lanes = cols
    out += repeat.over_rows(sel, rows, lit(rows), pb, lambda r, n, s: [Call(
        WHOLE[instr.op], view(sel.ref(v), r), (view(src, row(r, pb * per_blk)),),
        (lit(lanes), n, lit(1), lit(1), lit(s), *ORDER[instr.op]))])
    return located(out, instr.loc)


def _columns(sel: Selector, instr: Instr) -> list:
    """Reduction of ``[M, N]`` along axis 0 to ``[N]`` (or ``[1, N]``), row by row in order."""
    (x,) = instr.operands
    v, (rows, cols) = instr.result, x.type.shape
    per_blk = sel.platform.block_bytes // 4
    src, p = sel.ref(x), sel.pitch(x)
    acc = sel.ref(v)
    n = -(-cols // per_blk) * per_blk
    out = [Call("DataCopy", Ref(acc.buf, F32, lit(0), n), (Ref(src.buf, F32, lit(0), n),), (lit(n),), loc=instr.loc)]
    if rows > 1:
        r = sel.fresh("r")
        out.append(For(r, lit(1), lit(rows), lit(1), (Call(
            FOLD[instr.op], acc, (acc, view(src, row(r, p))), (lit(cols),)),)))
    return out


def _to_scalar(sel: Selector, instr: Instr) -> list:
    """A 1-D tile reduced to a scalar member (count-form Reduce*, then a read after a V_S flag)."""
    op, v = instr.op, instr.result
    (x,) = instr.operands
    n = x.type.numel
    per_rep = sel.platform.repeat_bytes // 4
    per_blk = sel.platform.block_bytes // 4
    repeats = -(-n // per_rep)
    block = sel.scratch("scalar", F32, 2 * per_blk, instr.loc)  # the sum, then its 16-bit rounding a block on
    work = sel.scratch("work", F32, 2 * repeats, instr.loc)
    out = [Call(isel.REDUCE_API[op], Ref(block.buf, F32, lit(0), 1), (sel.ref(x),), (lit(n),), work=(work,),
                loc=instr.loc)]
    member = Var(v.id, v.type.dtype, sel.hint(v, instr.op.value), VarKind.MEMBER)
    sel.members.append(member)
    sel.scalars[v.id] = member
    if v.type.dtype != F32:
        per16 = sel.platform.block_bytes // v.type.dtype.itemsize
        rounded = Ref(block.buf, v.type.dtype, lit(per16), 2 * per16)  # extents count from the start
        out.append(Call("Cast", rounded, (Ref(block.buf, F32, lit(0), 1),), (Const.CAST_RINT, lit(1))))
        out.append(Set(member, Elem(Ref(block.buf, v.type.dtype, lit(0), 2 * per16), per16)))
    else:
        out.append(Set(member, Elem(Ref(block.buf, F32, lit(0), 1), 0)))
    return out


def broadcast_binary(sel: Selector, instr: Instr) -> list:
    """``dst[M, N] = a op b`` where an operand is a fused broadcast of ``[M, 1]`` or ``[1, N]``:
    one repeat per row, column chunk by column chunk."""
    op, v = instr.op, instr.result
    dt, (rows, cols) = v.type.dtype, v.type.shape
    if op not in isel.BINARY_API or dt not in isel.NATIVE or any(x.type.dtype != dt for x in instr.operands):
        raise unsupported(instr, f"`{op.value}` of a broadcast {dt} tile (compute it in float32)")
    per_blk, per_rep = sel.platform.block_bytes // dt.itemsize, sel.platform.repeat_bytes // dt.itemsize
    p = sel.pitch(v)
    pb = p // per_blk
    out: list = []
    operands = []  # (ref, row offset fn(r, c), block stride, repeat stride or None)
    for x in instr.operands:
        if x.id not in sel.fused:
            operands.append((sel.ref(x), lambda r, c: add(row(r, p), c), 1, None))
            continue
        src = sel.defs[x.id].operands[0]
        if src.type.shape[-1] != 1:  # [1, N]: every row reads the same row
            operands.append((sel.ref(src), lambda r, c: c, 1, 0))
            continue
        blocks = -(-src.type.shape[0] // 8)
        brcb = sel.scratch("brcb", dt, blocks * 8 * per_blk, instr.loc)
        out.append(Call("Brcb", brcb, (Ref(sel.bufs[src.id], dt, lit(0), blocks * 8),),
                        (lit(blocks), Brace((lit(1), lit(8)))), loc=instr.loc))
        operands.append((brcb, lambda r, c: row(r, per_blk), 0, 1))

    def call(r, n, s, c):
        refs = [view(ref, at(r, c)) for ref, at, _, _ in operands]
        blk = [lit(b) for _, _, b, _ in operands]
        rep = [lit(s if q is None else q) for _, _, _, q in operands]
        return [Call(isel.BINARY_API[op], view(sel.ref(v), add(row(r, p), c)), refs,
                     (repeat.mask(cols, per_rep, c), n, Brace((lit(1), *blk, lit(s), *rep))), inplace=True)]
    body = repeat.over_columns(sel, lit(0), cols, per_rep, lambda c: repeat.over_rows(
        sel, rows, lit(rows), pb, lambda r, n, s: call(r, n, s, c)))
    return located(out + body, instr.loc)
