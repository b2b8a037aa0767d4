"""Selection of reductions and of broadcasts between tile shapes (inputs are float32 after
:mod:`.decompose`, except a 16-bit tile reduced straight to a scalar, which is rounded here).

* A 1-D reduction is one count-form ``ReduceSum``/``ReduceMax``/``ReduceMin`` into a scalar block,
  read back on the scalar unit (the sync pass puts a V_S flag before the read) into a member.
* Along axis 1 of ``[M, N]``: ``WholeReduce*`` per row (one repeat per row); rows longer than one
  repeat are first folded onto their first repeat with repeat-form ``Add``/``Max``/``Min``: one
  accumulating call per row for few long rows, column chunks with the rows as repeats for many short
  ones (:func:`_fold_rows`).
* Along axis 0: the rows are accumulated onto the first with the rows as repeats (dstRepStride 0).
* ``[M, 1] -> [M, N]`` read by arithmetic: ``Brcb`` puts each row's value in a block that the
  repeat-form op reads at block stride 0; ``[1, N] -> [M, N]``: repeat stride 0.
Every scratch area is a buffer of its own, sized by the views of the calls that use it.
"""
from __future__ import annotations

from ...ir.core import Instr, Op
from ...ir.symbol import ceil_div, equal
from . import isel, repeat
from ..legalise_shapes.ublayout import held_pitch
from ..kir import BinOp, Bin, Brace, Call, Const, Elem, For, If, Lit, Ref, Set, Var, VarKind, add, as_expr, lit, minimum
from .repeat import located, row, view
from .selector import Selector
from .support import F32, unsupported

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
    """Per-row reduction of ``[M, N]`` to ``[M]`` (or ``[M, 1]``): each row's first repeat is copied
    into a fold area, the row's other repeats are folded onto it (:func:`_fold_rows`), and
    ``WholeReduce*`` reduces the fold, one repeat per row."""
    (x,) = instr.operands
    v, (rows, cols) = instr.result, x.type.shape
    per_rep = sel.platform.repeat_bytes // 4
    per_blk = sel.platform.block_bytes // 4
    p = held_pitch(x, sel.align)  # the general form holds it: row(r, p)
    src, pb = sel.ref(x), p // per_blk
    out = []
    general = sel.general
    if general or cols > per_rep:  # (general form: the folds run zero times when a row fits one repeat)
        first = minimum(lit(cols), lit(per_rep)) if general else lit(per_rep)
        fold = sel.scratch("fold", F32, rows * per_rep, instr.loc)
        out += repeat.over_rows(sel, rows, lit(rows), pb, lambda r, n, s: [Call(
            "Muls", view(fold, row(r, per_rep)), (view(src, row(r, p)),),
            (Lit(1.0, F32), first, n, Brace((lit(1), lit(1), lit(8), as_expr(s)))))])
        out += _fold_rows(sel, instr.op, fold, src, rows, cols, p)
        src, lanes, pb = fold, first, 8
    else:
        lanes = lit(cols)
    out += repeat.over_rows(sel, rows, lit(rows), pb, lambda r, n, s: [Call(
        WHOLE[instr.op], view(sel.ref(v), r), (view(src, row(r, pb * per_blk)),),
        (lanes, n, lit(1), lit(1), as_expr(s), *ORDER[instr.op]))])
    return located(out, instr.loc)


def _fold_rows(sel: Selector, op: Op, fold: Ref, src: Ref, rows: int, cols: int, p: int) -> list:
    """Repeats ``1 ..`` of every row of ``src`` (pitch ``p``) folded onto the row's first, in ``fold``.

    Two schedules, picked by the cost of their instructions (at run time in the general form): few long
    rows *accumulate*, one call per row whose repeats walk the row onto one repeat of ``fold``
    (dstRepStride 0, the accumulation of CANN's ``BigBlockReduceSum``): ``rows`` independent calls of
    ``cols / 64 - 1`` repeats; many short rows *chain* column chunks with the rows as repeats:
    ``cols / 64 - 1`` dependent calls (a barrier each) of ``rows`` repeats. Accumulating wins when the
    chain's barriers cost more than the accumulation's extra issues: ``rows < 8 * (cols / 64 - 1)`` (a
    barrier drains in about 8 issues), or when the pitch exceeds the 8-bit repeat stride (the chain
    then issues one call per row and chunk)."""
    per_rep = sel.platform.repeat_bytes // 4
    pb = p // (sel.platform.block_bytes // 4)
    most = sel.platform.max_repeats
    general = sel.general
    full = Bin(BinOp.DIV, lit(cols), lit(per_rep)) if general else lit(cols // per_rep)
    mine = lambda r: view(fold, row(r, per_rep))  # noqa: E731 - the fold repeat of row r

    r, k = sel.fresh("r"), sel.fresh("k")
    whole = [For(k, lit(1), full, lit(most), (For(r, lit(0), lit(rows), lit(1), (Call(
        FOLD[op], mine(r), (view(src, add(row(r, p), Bin(BinOp.MUL, k, lit(per_rep)))), mine(r)),
        (lit(per_rep), repeat.u8(minimum(Bin(BinOp.SUB, full, k), lit(most))),
         Brace((lit(1), lit(1), lit(1), lit(0), lit(8), lit(0))))),), True),))]
    tail_at = Bin(BinOp.MUL, full, lit(per_rep)) if general else lit(cols // per_rep * per_rep)
    lanes = Bin(BinOp.SUB, lit(cols), tail_at) if general else lit(cols % per_rep)
    tail = repeat.over_rows(sel, rows, lit(rows), pb, lambda r, n, s: [Call(
        FOLD[op], mine(r), (view(src, add(row(r, p), tail_at)), mine(r)),
        (lanes, n, Brace((lit(1), lit(1), lit(1), lit(8), as_expr(s), lit(8)))))])
    chain = repeat.over_columns(sel, lit(per_rep), cols, per_rep, lambda c: repeat.over_rows(
        sel, rows, lit(rows), pb, lambda r, n, s: [Call(
            FOLD[op], mine(r), (mine(r), view(src, add(row(r, p), c))),
            (repeat.mask(cols, per_rep, c, general=general), n,
             Brace((lit(1), lit(1), lit(1), lit(8), lit(8), as_expr(s)))))]),
        independent=False)
    if not general:
        if rows >= 8 * (cols // per_rep - 1) and pb <= most:
            return chain
        return whole + (tail if cols % per_rep else [])
    accumulate = Bin(BinOp.OR, Bin(BinOp.LT, lit(rows), Bin(BinOp.MUL, Bin(BinOp.SUB, full, lit(1)), lit(8))),
                     Bin(BinOp.GT, lit(pb), lit(most)))
    has_tail = Bin(BinOp.AND, Bin(BinOp.GT, lit(cols), lit(per_rep)), Bin(BinOp.GT, Bin(BinOp.MOD, lit(cols), lit(per_rep)), lit(0)))
    return [If(accumulate, (*whole, If(has_tail, tuple(tail))), orelse=tuple(chain))]


def _columns(sel: Selector, instr: Instr) -> list:
    """Reduction of ``[M, N]`` along axis 0 to ``[N]`` (or ``[1, N]``): row 0 copied into the result,
    then the other rows accumulated onto it with the rows as repeats (dstRepStride 0: each repeat adds
    the next row), one call per repeat-wide column chunk and up to ``max_repeats`` rows; a pitch beyond
    the 8-bit repeat stride adds the rows one count-form call each, in order."""
    (x,) = instr.operands
    v, (rows, cols) = instr.result, x.type.shape
    per_blk = sel.platform.block_bytes // 4
    most = sel.platform.max_repeats
    p = held_pitch(x, sel.align)  # the general form holds it: row(r, p)
    src, pb = sel.ref(x), p // per_blk
    acc = sel.ref(v)
    n = -(-cols // per_blk) * per_blk
    out = [Call("DataCopy", Ref(acc.buf, F32, lit(0), n), (Ref(src.buf, F32, lit(0), n),), (lit(n),), loc=instr.loc)]
    if not sel.general and rows == 1:
        return out
    r = sel.fresh("r")
    chain = [For(r, lit(1), lit(rows), lit(1), (Call(FOLD[instr.op], acc, (acc, view(src, row(r, p))), (lit(cols),)),))]
    accumulate = accumulate_rows(sel, FOLD[instr.op], acc, src, rows, cols, p)
    if not sel.general:
        return out + (accumulate if pb <= most else chain)
    return out + [If(Bin(BinOp.LE, lit(pb), lit(most)), tuple(accumulate), orelse=tuple(chain))]


def accumulate_rows(sel: Selector, api: str, acc: Ref, src: Ref, rows: int, cols: int, p: int) -> list:
    """Rows ``1 .. rows - 1`` of ``src`` (32-bit, pitch ``p``, at most ``max_repeats`` blocks) folded with
    ``api`` onto ``acc`` (which holds row 0), the rows as repeats (dstRepStride 0: each repeat adds the next
    row): one call per repeat-wide column chunk and up to ``max_repeats`` rows, no barrier between rows."""
    per_rep, most = sel.platform.repeat_bytes // 4, sel.platform.max_repeats
    k = sel.fresh("k")
    once = not sel.general and rows - 1 <= most  # one call a chunk: no loop over rows (whose trips the sync orders)
    at = lit(1) if once else k
    repeats = repeat.over_columns(sel, lit(0), cols, per_rep, lambda c: [Call(
        api, view(acc, c), (view(src, add(Bin(BinOp.MUL, at, lit(p)), c)), view(acc, c)),
        (repeat.mask(cols, per_rep, c, general=sel.general), repeat.u8(minimum(Bin(BinOp.SUB, lit(rows), at), lit(most))),
         Brace((lit(1), lit(1), lit(1), lit(0), repeat.u8(p // (sel.platform.block_bytes // 4)), lit(0)))))])
    return repeats if once else [For(k, lit(1), lit(rows), lit(most), tuple(repeats))]


def _to_scalar(sel: Selector, instr: Instr) -> list:
    """A 1-D tile reduced to a scalar member (count-form Reduce*, then a read after a V_S flag)."""
    op, v = instr.op, instr.result
    (x,) = instr.operands
    n = x.type.numel
    per_rep = sel.platform.repeat_bytes // 4
    per_blk = sel.platform.block_bytes // 4
    repeats = ceil_div(n, per_rep)  # a symbol of multiples of less than a repeat: the work differs (Differs)
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


def shared_column(sel: Selector, instr: Instr) -> bool:
    """``instr`` is a fused broadcast of an ``[M, 1]`` tile that several calls of its own stage read: its ``Brcb``
    blocks are made once, where it is defined (:attr:`.Selector.brcbs`), not by each user (a vector unit's type:
    :func:`broadcast_binary` lowers them)."""
    v = instr.result
    return (v.id in sel.fused and v.type.dtype in isel.NATIVE and equal(instr.operands[0].type.shape[-1], 1)
            and len(sel.users.get(v.id, [])) > 1 and sel.stage_users(v) == {sel.segment_of[id(instr)]})


def brcb(sel: Selector, instr: Instr) -> tuple[Ref, list]:
    """The blocks and the ``Brcb`` call of fused broadcast ``instr`` of an ``[M, 1]`` tile: each row's value in a
    block of its own, which the users read at block stride 0."""
    (src,) = instr.operands
    dt, m = src.type.dtype, src.type.shape[0]
    # the general form sizes Brcb's blocks by an exact linear bound of the rows and divides its repeats at run
    # time: no rounding of a symbolic row count (``ROWS // 8`` is no polynomial on multiples of 1)
    count = (m + 7) if sel.general else -(-m // 8) * 8
    out = sel.scratch("brcb", dt, count * (sel.platform.block_bytes // dt.itemsize), instr.loc)
    values = Ref(sel.bufs[src.id], dt, lit(0), count)
    if sel.general:
        return out, [Call("Brcb", out, (values,), (Bin(BinOp.DIV, lit(m + 7), lit(8)), Brace((lit(1), lit(8)))),
                          loc=instr.loc)]
    most, per_blk = sel.platform.max_repeats, sel.platform.block_bytes // dt.itemsize
    return out, [Call("Brcb", view(out, lit(i * 8 * per_blk)), (view(values, lit(i * 8)),),
                      (lit(min(count // 8 - i, most)), Brace((lit(1), lit(8)))), loc=instr.loc)
                 for i in range(0, count // 8, most)]  # 8 values a repeat, 255 repeats a call


def broadcast_binary(sel: Selector, instr: Instr) -> list:
    """``dst[M, N] = a op b`` where an operand is a fused broadcast of ``[M, 1]``, ``[1, N]`` or ``[1, 1]``:
    one repeat per row, column chunk by column chunk; where that issues fewer calls (few long rows, or
    rows beyond the 8-bit repeat stride), one call per row whose repeats walk the row's whole repeats
    (an ``[M, 1]`` operand's broadcast block read at block and repeat stride 0, a ``[1, N]`` operand's
    row as the row's own), then the rows' last partial repeat as one column chunk (chosen at run time
    in the general form)."""
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
        if not equal(src.type.shape[-1], 1):  # [1, N]: every row reads the same row
            operands.append((sel.ref(src), lambda r, c: c, 1, 0))
            continue
        blocks, calls = (sel.brcbs[x.id], []) if x.id in sel.brcbs else brcb(sel, sel.defs[x.id])
        out += calls
        if src.type.shape[0] == 1 != rows:  # [1, 1] over rows: every row reads the one block (a symbol is no 1)
            operands.append((blocks, lambda r, c: lit(0), 0, 0))
            continue
        operands.append((blocks, lambda r, c: row(r, per_blk), 0, 1))

    donors = tuple(i for i, (_, _, _, q) in enumerate(operands) if q is None)  # not a row every repeat reads

    def call(r, n, s, c):
        refs = [view(ref, at(r, c)) for ref, at, _, _ in operands]
        blk = [lit(b) for _, _, b, _ in operands]
        rep = [as_expr(s if q is None else q) for _, _, _, q in operands]
        return [Call(isel.BINARY_API[op], view(sel.ref(v), add(row(r, p), c)), refs,
                     (repeat.mask(cols, per_rep, c, general=sel.general), n, Brace((lit(1), *blk, as_expr(s), *rep))),
                     inplace=donors)]

    def along(r, k, n):  # repeats walking row r: the broadcast block read at strides 0, the others at 8
        c = Bin(BinOp.MUL, k, lit(per_rep))
        refs = [view(ref, at(r, c)) for ref, at, _, _ in operands]
        blk = [lit(b) for _, _, b, _ in operands]
        rep = [lit(8 * b) for _, _, b, _ in operands]
        return Call(isel.BINARY_API[op], view(sel.ref(v), add(row(r, p), c)), refs,
                    (lit(per_rep), n, Brace((lit(1), *blk, lit(8), *rep))), inplace=donors)
    columns = repeat.over_columns(sel, lit(0), cols, per_rep, lambda c: repeat.over_rows(
        sel, rows, lit(rows), pb, lambda r, n, s: call(r, n, s, c)))
    # one call per row whose repeats walk the row's whole repeats (an [M, 1] operand's block read at stride 0, a
    # [1, N] operand's row at the row's own strides), then the last partial repeat of every row as one column
    # chunk, where that issues fewer calls than column chunks with the rows as repeats (few long rows; rows
    # beyond the 8-bit repeat stride; one call writes each result over its source: the UB plan's in-place)
    most = sel.platform.max_repeats
    full = Bin(BinOp.DIV, lit(cols), lit(per_rep)) if sel.general else lit(cols // per_rep)
    r, k = sel.fresh("r"), sel.fresh("k")
    tail = repeat.over_columns(sel, Bin(BinOp.MUL, full, lit(per_rep)), cols, per_rep, lambda c: repeat.over_rows(
        sel, rows, lit(rows), pb, lambda r, n, s: call(r, n, s, c)))
    rows_first = [For(r, lit(0), lit(rows), lit(1), (For(k, lit(0), full, lit(most), (
        along(r, k, minimum(Bin(BinOp.SUB, full, k), lit(most))),), True),), True)]
    if not sel.general:
        per_chunk = -(-rows // most) if pb <= most else rows  # calls of one column chunk
        walked = rows * -(-(cols // per_rep) // most) + (per_chunk if cols % per_rep else 0)
        if cols < per_rep or walked >= -(-cols // per_rep) * per_chunk:
            return located(out + columns, instr.loc)
        return located(out + rows_first + (tail if cols % per_rep else []), instr.loc)
    walk = Bin(BinOp.OR, Bin(BinOp.LT, lit(rows), full), Bin(BinOp.GT, lit(pb), lit(most)))
    return located(out + [If(walk, tuple(rows_first + tail), orelse=tuple(columns))], instr.loc)
