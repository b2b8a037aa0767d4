"""Selection of data movement: block loads and stores as ``DataCopy``/``DataCopyPad``, ``other`` fills.

A 1-D block is one burst. A 2-D ``[M, N]`` block is ``DataCopyPad`` with one burst per valid row
(``blockCount`` at most ``platform.max_bursts`` per call), ``blockLen`` the valid columns in bytes,
the GM gap ``(row stride - valid columns) * itemsize`` bytes and the UB gap in blocks up to the
tile's row pitch; rows back to back on both sides (GM row stride = valid columns = the UB row pitch,
known or tested at run time) go as one burst, the MTE's cost being per burst. ``DataCopyPad`` pads
each burst to a block; where the kernel gave ``other``, the rest of a partial tile (masked rows,
columns past the padded burst) is filled with ``Duplicate(other)`` after the load; without ``other``
those lanes are undefined, as on the interpreter.

Atomics (``tl.atomic_add``/``max``/``min`` whose old values nobody reads) are block stores with an
``atomic`` attribute: their CopyOut is the store's ``DataCopy``/``DataCopyPad`` between
``SetAtomicAdd<T>()`` (``Max``, ``Min``) and ``SetAtomicNone()`` (:func:`atomic_around`): the DMA engine
combines each element with GM as it writes it (A2 supports half, float, bfloat16_t, int8_t, int16_t and
int32_t), so programs on different cores may hit the same addresses. What A2 cannot do with atomics is a
located error in :mod:`.limits`.
"""
from __future__ import annotations

from ... import dtypes
from ...ir.core import Instr, Op, Value
from ...ir.symbol import all_of, equal, multiple, same
from . import repeat
from .compute import copy_blocks
from ..kir import (BinOp, Bin, Brace, Call, CInt, Cond, Const, Conv, Elem, For, Gm, If, Let, Lit, Note, Pipe, QOp,
                   Queue, Ref, Role, SizeOf, Struct, Var, add, as_expr, ceil_to, is_lit, lit, minimum, mul)
from .repeat import row, view
from .selector import Selector
from ..legalise_shapes.ublayout import numel

U8, U16, U32, U64 = CInt.UINT8, CInt.UINT16, CInt.UINT32, CInt.UINT64


SET_ATOMIC = {Op.ATOMIC_ADD.value: "SetAtomicAdd", Op.ATOMIC_MAX.value: "SetAtomicMax",
              Op.ATOMIC_MIN.value: "SetAtomicMin"}
"""The ``atomic`` attribute of a block store -> the API that turns its copies into read-modify-writes."""


def atomic_around(instr: Instr, dtype, copies: list) -> list:
    """``copies`` (the CopyOut of block store ``instr``), made atomic when the store is an atomic."""
    atomic = instr.attr("atomic")
    if atomic is None:
        return copies
    return [Call(SET_ATOMIC[atomic], None, (), template=dtype, pipe=Pipe.MTE3, loc=instr.loc), *copies,
            Call("SetAtomicNone", None, (), pipe=Pipe.MTE3)]


def parts(instr: Instr):
    """``(base, offset, outer strides, extents, other or None)`` of a block access."""
    rank = len(instr.attr("shape"))
    xs = instr.operands
    other = xs[-1] if instr.attr("has_other") else None
    return xs[0], xs[1], xs[2:1 + rank], xs[1 + rank: 1 + 2 * rank], other


def fill_operands(instr: Instr) -> list[Value]:
    """Scalars the compute stage reads to fill a load's masked lanes."""
    _, _, _, extents, other = parts(instr)
    return [*extents, other] if other is not None else list(extents)


def _extent(sel: Selector, e: Value, size: int):
    """A block extent as an expression (the literal ``size`` when it is the whole block)."""
    return lit(size) if same(sel.const_of(e), size) else sel.expr(e)


def _column(sel: Selector, instr: Instr):
    """The valid elements of a block access of an ``[M, 1]`` column, None for any other block. A column lies
    in UB as its ``M`` elements in order (:mod:`.ublayout`), not as padded rows, and a block access of one
    reads consecutive elements of GM (the access pass makes a column of any other row stride a strided
    access, :mod:`.gather`), so it is the 1-D block of those ``M`` elements: one burst, its length the
    product of the two extents (that of the unit axis 0 or 1)."""
    shape = instr.attr("shape")
    if len(shape) != 2 or not equal(shape[1], 1):
        return None
    _, _, _, (rows, cols), _ = parts(instr)
    return mul(_extent(sel, rows, shape[0]), _extent(sel, cols, 1))


def _columns(sel: Selector, instr: Instr):
    """The valid elements of each row of a block access (of a column, all of its valid elements)."""
    column = _column(sel, instr)
    shape, extents = instr.attr("shape"), parts(instr)[3]
    return _extent(sel, extents[-1], shape[-1]) if column is None else column


def _gm(sel: Selector, base: Value, dtype, offset) -> Gm:
    return Gm(sel.params[base.id][1], dtype, offset)


def _params(sel: Selector, shape: tuple, stride: Value | None, rows, cols, pitch: int, dt, to_ub: bool) -> tuple:
    """The DataCopyExtParams fields after the burst count of a 2-D (or partial 1-D) access of ``rows``
    rows of ``cols`` elements (expressions) at GM row ``stride``."""
    per = sel.platform.block_bytes // dt.itemsize
    if len(shape) == 1 or not sel.general and shape[0] == 1:
        gm_gap = ub_gap = lit(0)
    else:
        full = same(sel.const_of(stride), shape[1]) and is_lit(cols, shape[1])
        gm_gap = lit(0) if full else mul(Bin(BinOp.SUB, sel.wide_expr(stride), cols), SizeOf(dt))
        if isinstance(cols, Lit):
            ub_gap = lit(pitch // per - -(-cols.value // per))
        else:
            ub_gap = Bin(BinOp.SUB, lit(pitch // per), Bin(BinOp.DIV, add(cols, lit(per - 1)), lit(per)))
    src_gap, dst_gap = (gm_gap, ub_gap) if to_ub else (ub_gap, gm_gap)
    return (Conv(U32, mul(cols, SizeOf(dt))), Conv(U32, src_gap), Conv(U32, dst_gap), lit(0))


def _planes(sel: Selector, instr: Instr, pitch: int):
    """The 2-D transfers of a block access: ``(plane loops, 2-D shape, GM offset, row stride, rows, UB
    offset)``; of a column (:func:`_column`), the 1-D block of its elements. An ``[A, ..., B, C]`` access
    of rank 3 or more is one 2-D access of ``A * ... * B`` rows when its planes follow each other in GM
    (each outer stride the next axis's size times its stride, all indices of the axes after the first
    valid), else loops over the valid indices of its axes before ``B`` (a ``(variable, count)`` each,
    outermost first), each a 2-D access of ``B`` rows."""
    shape = instr.attr("shape")
    _, offset, strides, extents, _ = parts(instr)
    gm = sel.wide_expr(offset)
    if _column(sel, instr) is not None:
        return (), shape[:1], gm, None, lit(1), lit(0)
    if len(shape) < 3:
        rows = lit(1) if len(shape) == 1 else _extent(sel, extents[0], shape[0])
        return (), shape, gm, strides[0] if strides else None, rows, lit(0)
    *outer, b, c = shape
    planes = _extent(sel, extents[0], outer[0])
    if not sel.general and _planes_follow(sel, shape, strides, extents):
        rows = numel(shape[:-1])
        valid = lit(rows) if planes == lit(outer[0]) else mul(planes, lit(rows // outer[0]))
        return (), (rows, c), gm, strides[-1], valid, lit(0)
    loops, at, ub = [], gm, lit(0)
    for i, d in enumerate(outer):
        k = sel.fresh("plane")
        loops.append((k, planes if i == 0 else _extent(sel, extents[i], d)))
        at = add(at, Bin(BinOp.MUL, Conv(dtypes.int64, k), sel.wide_expr(strides[i])))
        ub = add(ub, Bin(BinOp.MUL, k, lit(numel(outer[i + 1:]) * b * pitch)))
    return tuple(loops), (b, c), at, strides[-1], _extent(sel, extents[-2], b), ub


def _planes_follow(sel: Selector, shape: tuple, strides, extents) -> bool:
    """The planes of a block access of rank 3 or more follow each other in GM (see :func:`_planes`)."""
    step = sel.const_of(strides[-1])
    if step is None or any(sel.const_of(e) != d for e, d in zip(extents[1:-1], shape[1:-1])):
        return False
    for i in range(len(shape) - 3, -1, -1):
        step *= shape[i + 1]
        if sel.const_of(strides[i]) != step:
            return False
    return True


def _back_to_back(sel: Selector, shape: tuple, stride: Value | None, cols, pitch: int):
    """When the rows of a 2-D access follow each other both in GM (row stride = valid columns) and in
    UB (valid columns = the row pitch, whole blocks), the condition that makes its bursts one (as
    CANN's kernels copy a contiguous tile in one burst: the MTE's cost is per burst); None where it
    never holds, ``Const.TRUE`` where it always does."""
    if len(shape) == 1 or not sel.general and shape[0] == 1:
        return None
    n = sel.const_of(stride)
    if isinstance(cols, Lit) and not (equal(cols.value, pitch) and (n is None or equal(n, pitch))):
        return None
    if isinstance(cols, Lit) and n is not None:
        return Const.TRUE
    same_gm = Bin(BinOp.EQ, sel.wide_expr(stride), Conv(dtypes.int64, cols))
    return same_gm if isinstance(cols, Lit) else Bin(BinOp.AND, same_gm, Bin(BinOp.EQ, cols, lit(pitch)))


def _transfer(sel: Selector, instr: Instr, local: Ref, pitch: int, pad, to_ub: bool) -> list:
    """The ``DataCopyExtParams`` and ``DataCopyPad`` call(s) of a block access, in chunks of at
    most ``max_bursts`` bursts (and loops over the planes of an access of rank 3 or more, see :func:`_planes`)."""
    base, dt = parts(instr)[0], local.dtype
    loops, shape, offset, stride, rows, at = _planes(sel, instr, pitch)
    cols = _columns(sel, instr)
    fields = _params(sel, shape, stride, rows, cols, pitch, dt, to_ub)
    pipe = Pipe.MTE2 if to_ub else Pipe.MTE3
    gm = _gm(sel, base, dt, offset)
    local = view(local, at)
    params = Var(sel.fresh_key(), Struct.COPY_PARAMS, local.buf.hint + "Params")
    most = sel.platform.max_bursts

    merged = _back_to_back(sel, shape, stride, cols, pitch)
    whole = Var(sel.fresh_key(), dtypes.bool_, local.buf.hint + "Whole")
    first = [] if merged in (None, Const.TRUE) else [Let(whole, merged)]

    def transfer(ub: Ref, g: Gm, count) -> list:
        dst, src = (ub, g) if to_ub else (g, ub)
        head = (Conv(U16, count), *fields)
        if merged is Const.TRUE:  # rows back to back on both sides: one burst of them all
            head = (Conv(U16, lit(1)), Conv(U32, mul(mul(count, cols), SizeOf(dt))), *fields[1:])
        elif merged is not None:
            head = (Conv(U16, Cond(whole, lit(1), count)),
                    Conv(U32, mul(Cond(whole, mul(count, cols), cols), SizeOf(dt))), *fields[1:])
        return [Let(params, Brace(head)),
                Call("DataCopyPad", dst, (src,), (params, pad) if to_ub else (params,), pipe=pipe)]
    if len(shape) == 1 or shape[0] <= most and not sel.general:
        out = transfer(local, gm, rows)
    else:
        r = sel.fresh("r")
        g = Gm(gm.param, dt, add(gm.offset, Bin(BinOp.MUL, Conv(dtypes.int64, r), sel.wide_expr(stride))))
        out = [For(r, lit(0), rows, lit(most), tuple(transfer(view(local, row(r, pitch)), g,
                                                              minimum(Bin(BinOp.SUB, rows, r), lit(most)))), True)]
    for k, planes in reversed(loops):
        out = [For(k, lit(0), planes, lit(1), tuple(out), True)]
    return first + out


def _whole_blocks(sel: Selector, instr: Instr, local: Ref, to_ub: bool) -> Call | None:
    """A plain ``DataCopy`` for a whole 1-D block of whole 32-byte blocks (None otherwise)."""
    base, offset, _, extents, _ = parts(instr)
    shape = instr.attr("shape")
    per = sel.platform.block_bytes // local.dtype.itemsize
    if len(shape) != 1 or not all_of(lambda: multiple(shape[0], per), lambda: same(sel.const_of(extents[0]), shape[0])):
        return None
    gm = _gm(sel, base, local.dtype, sel.wide_expr(offset))
    dst, src = (local, gm) if to_ub else (gm, local)
    return Call("DataCopy", dst, (src,), (lit(shape[0]),), pipe=Pipe.MTE2 if to_ub else Pipe.MTE3)


def copy_in(sel: Selector, instr: Instr) -> list:
    """CopyIn of a block load: AllocTensor, DataCopy(Pad), EnQue."""
    v = instr.result
    buf = sel.inbuf.get(v.id) or sel.bufs[v.id]
    dt = buf.dtype
    local = Ref(buf, dt, lit(0), sel.count(v))
    other = parts(instr)[4]
    out: list = [Queue(QOp.ALLOC, buf, instr.loc)]
    whole = _whole_blocks(sel, instr, local, True)
    if whole is not None:
        return out + [whole, Queue(QOp.ENQUE, buf)]
    per = sel.platform.block_bytes // dt.itemsize
    cols = _columns(sel, instr)
    aligned = isinstance(cols, Lit) and multiple(cols.value, per)
    pad = lit(0) if aligned or other is None else Conv(U8, Bin(BinOp.SUB, ceil_to(cols, per), cols))
    pad_var = Var(sel.fresh_key(), Struct.PAD_PARAMS, buf.hint + "Pad", template=dt)
    value = sel.scalar_as(other, dt) if other is not None else Lit(0, dt)
    out.append(Let(pad_var, Brace((Const.TRUE if other is not None else Const.FALSE, lit(0), pad, value))))
    out += _transfer(sel, instr, local, sel.pitch(v), pad_var, True)
    return out + [Queue(QOp.ENQUE, buf)]


def copy_out(sel: Selector, instr: Instr) -> list:
    """CopyOut of a block store: DeQue, DataCopy(Pad), FreeTensor."""
    value = instr.operands[-1]
    buf = sel.outbuf[id(instr)]
    local = Ref(buf, buf.dtype, lit(0), sel.count(value))
    whole = _whole_blocks(sel, instr, local, False)
    copies = [whole] if whole is not None else _transfer(sel, instr, local, sel.pitch(value), None, False)
    return [Queue(QOp.DEQUE, buf, instr.loc), *atomic_around(instr, buf.dtype, copies), Queue(QOp.FREE, buf)]


def dequeue(sel: Selector, instr: Instr) -> list:
    """DeQue a load (into its class member where the program holds it, :meth:`.Selector.holds`); fill its masked
    lanes with ``other``; copy it to its TILE buffer if a later stage reads it."""
    v = instr.result
    buf = sel.inbuf.get(v.id) or sel.bufs[v.id]
    out: list = [Queue(QOp.DEQUE, buf, declare=v.id not in sel.held)]
    _, _, _, extents, other = parts(instr)
    local = Ref(buf, buf.dtype, lit(0), sel.count(v))
    if other is not None:
        out += _fill(sel, instr, local, other)
    if v.id in sel.inbuf:
        out.append(copy_blocks(sel, sel.ref(v), local))
    return out


def _fill(sel: Selector, instr: Instr, local: Ref, other: Value) -> list:
    """Duplicate(other) over the lanes a masked load leaves (see :func:`_fill_planes`; of a column, those
    past its valid elements). ``Duplicate`` has no 64-bit form: an int64 ``other`` (a constant whose two
    32-bit words are equal, 0 or -1: any other fills the tile's words first, :func:`.gather.fill_block`)
    fills the int32 view of the block, each lane two words wide."""
    _, _, _, extents, _ = parts(instr)
    shape, p = instr.attr("shape"), sel.pitch(instr.result)
    scale = 2 if local.dtype.itemsize == 8 else 1
    if scale == 2:
        low = int(sel.const_of(other)) & 0xFFFFFFFF
        local = Ref(local.buf, dtypes.int32, Bin(BinOp.MUL, local.offset, lit(2)), local.extent * 2)
        value = Lit(low - (1 << 32) if low >= 1 << 31 else low, dtypes.int32)
    else:
        value = sel.scalar_as(other, local.dtype)
    column = _column(sel, instr)
    if column is None:
        return _fill_planes(sel, local, shape[:-1] + (scale * shape[-1],), extents, scale * p, value, scale)
    per = sel.platform.block_bytes // local.dtype.itemsize
    if isinstance(column, Lit) and _covered(column.value * scale, scale * shape[0], per):
        return []
    return _fill_tail(sel, local, mul(column, lit(scale)), scale * shape[0], value)


def _covered(c: int | None, size: int, per: int) -> bool:
    """A burst of ``c`` valid lanes (None: known only at run time), padded to whole blocks of ``per``,
    leaves none of the block's ``size`` lanes to fill."""
    return same(c, size) or c is not None and -(-c // per) * per >= size


def _fill_tail(sel: Selector, local: Ref, n, size: int, other) -> list:
    """Duplicate(other) over the lanes of a 1-D block of ``size`` lanes past its first ``n`` (an expression)
    rounded up to a block (the burst's padding filled the rest of its last block)."""
    per = sel.platform.block_bytes // local.dtype.itemsize
    valid = Var(sel.fresh_key(), dtypes.int32, local.buf.hint + "Valid")
    return [Let(valid, ceil_to(n, per)), If(Bin(BinOp.LT, valid, lit(size)), (
        Note("fill the tail with `other`"),
        Call("Duplicate", view(local, valid), (), (other, Bin(BinOp.SUB, lit(size), valid)))))]


def _fill_planes(sel: Selector, local: Ref, shape: tuple, extents, p: int, other, scale: int = 1) -> list:
    """The masked lanes of a block of ``shape`` (``p``: its row pitch): of rank 3 or more, per valid
    index of its first axis those of that plane, then the masked planes; else its masked rows and
    columns. ``scale``: lanes of ``local`` per element of the last axis's extent."""
    if len(shape) < 3:
        return _fill_rows(sel, local, shape, extents, p, other, scale)
    a, size = shape[0], numel(shape[1:-1]) * p
    planes = _extent(sel, extents[0], a)
    k = sel.fresh("plane")
    slab = _fill_planes(sel, view(local, Bin(BinOp.MUL, k, lit(size))), shape[1:], extents[1:], p, other, scale)
    out: list = [For(k, lit(0), planes, lit(1), tuple(slab), True)] if slab else []
    if planes != lit(a):
        out.append(If(Bin(BinOp.LT, planes, lit(a)), (
            Note("fill the masked planes with `other`"),
            Call("Duplicate", view(local, Bin(BinOp.MUL, planes, lit(size))), (),
                 (other, Bin(BinOp.MUL, Bin(BinOp.SUB, lit(a), planes), lit(size)))))))
    return out


def _fill_rows(sel: Selector, local: Ref, shape: tuple, extents, p: int, other, scale: int = 1) -> list:
    """The masked columns and rows of a 1-D or 2-D block (``p``: its row pitch; ``scale``: lanes of
    ``local`` per element of the column extent)."""
    dt = local.dtype
    per = sel.platform.block_bytes // dt.itemsize
    per_rep = sel.platform.repeat_bytes // dt.itemsize
    cols, size = extents[-1], shape[-1]
    out: list = []
    c = sel.const_of(cols)
    n = sel.expr(cols) if scale == 1 else Bin(BinOp.MUL, sel.expr(cols), lit(scale))
    masked = not _covered(None if c is None else c * scale, size, per)
    if masked and (len(shape) == 1 or not sel.general and shape[0] == 1):
        out += _fill_tail(sel, local, n, size, other)
    elif masked:
        valid = Var(sel.fresh_key(), dtypes.int32, local.buf.hint + "Valid")
        rows = _extent(sel, extents[0], shape[0])
        pb = p // per
        out += [Let(valid, ceil_to(n, per)), Note("fill the masked columns with `other`")]
        out += repeat.over_columns(sel, valid, size, per_rep, lambda col: repeat.over_rows(
            sel, shape[0], rows, pb, lambda r, n, s: [Call(
                "Duplicate", view(local, add(row(r, p), col)), (),
                (other, Conv(U64, repeat.mask(size, per_rep, col, aligned=False, general=sel.general)), Conv(U8, n),
                 lit(1), as_expr(s)))]))
    if len(shape) == 2 and (shape[0] > 1 or sel.general) and sel.const_of(extents[0]) != shape[0]:
        e0 = sel.expr(extents[0])
        out.append(If(Bin(BinOp.LT, e0, lit(shape[0])), (
            Note("fill the masked rows with `other`"),
            Call("Duplicate", view(local, Bin(BinOp.MUL, e0, lit(p))), (),
                 (other, Bin(BinOp.MUL, Bin(BinOp.SUB, lit(shape[0]), e0), lit(p)))))))
    return out


def span_load(sel: Selector, instr: Instr) -> list:
    """Compute of a ``span_load``: per row ``r`` whose span is not empty, one ``DataCopyPad`` burst of its
    lanes ``lo[r] <= c < hi[r]`` (int32 scalars for a 1-D load; read on the scalar unit after the vector
    unit computed them: a V_S flag) from GM into a VECIN staging buffer laid out as the tile, landing at
    the 32-byte block of lane ``lo[r]`` with ``lo[r] % per`` elements of left padding (a burst starts at
    a block); then EnQue, DeQue and a copy into the tile. No burst reaches before the row's first true
    lane or after its last one."""
    v = instr.result
    shape = instr.attr("shape")
    base, offset, *row_stride, lo, hi = instr.operands
    if v.id not in sel.inbuf:
        param = sel.params[base.id][1]
        sel.inbuf[v.id] = sel.new_buf(Role.INPUT, sel.bufs[v.id].dtype, sel.ptr_stem(base) + "Spans", instr.loc,
                                      ("in", param, f"Spans{v.id}"))
    staging = sel.inbuf[v.id]
    dt = staging.dtype
    per, p = sel.platform.block_bytes // dt.itemsize, sel.pitch(v)
    local = Ref(staging, dt, lit(0), sel.count(v))
    params = Var(sel.fresh_key(), Struct.COPY_PARAMS, staging.hint + "Params")
    pad = Var(sel.fresh_key(), Struct.PAD_PARAMS, staging.hint + "Pad", template=dt)
    first, end = (Var(sel.fresh_key(), dtypes.int32, staging.hint + name) for name in ("First", "End"))
    r = sel.fresh("r")
    edge = [sel.expr(x) if x.type.is_scalar else Elem(Ref(sel.bufs[x.id], dtypes.int32, lit(0), sel.count(x)), r)
            for x in (lo, hi)]
    gm = add(sel.wide_expr(offset), Conv(dtypes.int64, first))
    if row_stride:
        gm = add(gm, Bin(BinOp.MUL, Conv(dtypes.int64, r), sel.wide_expr(row_stride[0])))
    burst = (Let(params, Brace((lit(1), Conv(U32, mul(Bin(BinOp.SUB, end, first), SizeOf(dt))), lit(0), lit(0),
                                lit(0)))),
             Let(pad, Brace((Const.FALSE, Conv(U8, Bin(BinOp.MOD, first, lit(per))), lit(0), Lit(0, dt)))),
             Call("DataCopyPad", view(local, add(mul(r, lit(p)), mul(Bin(BinOp.DIV, first, lit(per)), lit(per)))),
                  (_gm(sel, base, dt, gm),), (params, pad), pipe=Pipe.MTE2))
    body = (Let(first, edge[0]), Let(end, edge[1]), If(Bin(BinOp.LT, first, end), burst))
    return [Queue(QOp.ALLOC, staging, instr.loc),
            For(r, lit(0), lit(shape[0] if len(shape) == 2 else 1), lit(1), body, True),
            Queue(QOp.ENQUE, staging), Queue(QOp.DEQUE, staging, declare=False),
            copy_blocks(sel, sel.ref(v), local), Queue(QOp.FREE, staging)]


__all__ = ["copy_in", "copy_out", "dequeue", "fill_operands", "span_load"]
