"""Accesses with a non-unit innermost stride (``ptr + cols * stride``, any positive stride, runtime
ones included): one ``DataCopyPad`` burst per element, each in its own 32-byte block of UB, moved
to and from the tile by ``Gather``.

CopyIn copies each valid row as ``blockCount`` bursts of one element (``blockLen`` = its size, the
GM gap ``(stride - 1) * size`` bytes) into a staging buffer of one 32-byte block per element (a
burst lands at the start of its own block); the rows of a tile of rank 3 or more are those of its flat
view (:mod:`.rank3`), one per index of its leading axes, visited by loops nested in axis order over
the valid indices of each (masked-off planes and rows skipped). Compute builds the byte offsets ``c * 32`` once
(``CreateVecIndex``, ``Muls``) and ``Gather`` s each row into the tile; with ``other``, the tile is
``Duplicate``'d first and only the valid lanes are gathered. A store runs the other way: Gather
spreads element ``c`` of each row over block ``c`` of a VECOUT staging buffer, and CopyOut writes
the first element of each block as a burst (GM gap ``(stride - 1) * size``; under ``SetAtomicAdd``
for atomics). A2's Gather takes 16- and 32-bit types: 8-bit elements move as the low bytes of 16-bit
words (little-endian), each burst still one byte (a store writes nothing past its element):
:func:`_narrowed` sign-extends the gathered words and narrows them through float16, :func:`_widened`
widens a stored tile to int16 the same way before it is spread; int64 elements move as int32 pairs
(:func:`.relayout.row_halves`).
"""
from __future__ import annotations

from ... import dtypes
from ...ir.core import Instr, Op
from ..kir import (Bin, BinOp, Brace, Call, CInt, Const, Conv, Elem, For, Gm, If, Let, Lit, Pipe, QOp, Queue, Ref, Role,
                   SizeOf, Struct, Var, add, lit, mul)
from ..legalise_types import wordviews
from ..selection.memory import atomic_around
from .relayout import halves, int32_view, lane_index, row_halves
from ..selection.selector import Selector
from ..selection.support import cpp_dtype, unsupported
from .ublayout import numel

BYTES = frozenset({dtypes.int8, dtypes.uint8})
"""Element types moved as the low bytes of 16-bit words."""
WIDE = frozenset({dtypes.int64})
"""Element types moved as int32 pairs (:func:`.relayout.row_halves`)."""
U16, U32 = CInt.UINT16, CInt.UINT32
I8, I16, F16 = dtypes.int8, dtypes.int16, dtypes.float16


def parts(sel: Selector, instr: Instr):
    """``(base, offset, rows, (column stride, column extent), other or None)`` of a strided load (of a
    strided store, the stored value last): ``rows`` the ``(size, stride, extent)`` of each leading axis of
    :func:`_grid` (none for one row)."""
    rank = len(instr.attr("shape"))
    xs = instr.operands
    last = xs[-1] if instr.op is Op.STRIDED_STORE or instr.attr("has_other") else None
    strides, extents = xs[2:2 + rank], xs[2 + rank:2 + 2 * rank]
    lead, _ = _grid(instr)
    if not lead and rank == 2:  # an [M, 1] column
        if sel.const_of(extents[1]) != 1:
            raise unsupported(instr, "masking the size-1 dim of a strided column")
        return xs[0], xs[1], (), (strides[0], extents[0]), last
    return xs[0], xs[1], tuple(zip(lead, strides, extents)), (strides[-1], extents[-1]), last


def _grid(instr: Instr) -> tuple[tuple[int, ...], int]:
    """``(leading axes, columns)``: a row of the tile per index of its leading axes (its UB rows); a
    1-D or ``[M, 1]`` access is one row of its elements."""
    shape = instr.attr("shape")
    return (shape[:-1], shape[-1]) if shape[-1] > 1 else ((), shape[0])


def _valid_rows(sel: Selector, rows, body) -> list:
    """``body(r, at)`` for each valid row (``r``: its number, ``at``: its GM offset from the access's,
    in elements): a loop over the valid indices of each leading axis, nested in axis order (an unmasked
    axis of size 1 needs none)."""
    def nest(k: int, r, at) -> list:
        if k == len(rows):
            return body(r, at)
        size, stride, extent = rows[k]
        if size == 1 and sel.const_of(extent) == 1:
            return nest(k + 1, r, at)
        i = sel.fresh("r")
        inner = nest(k + 1, add(mul(r, lit(size)), i), add(at, mul(_wide(i), sel.wide_expr(stride))))
        return [For(i, lit(0), _extent(sel, extent, size), lit(1), tuple(inner), True)]
    return nest(0, lit(0), lit(0))


def _extent(sel: Selector, e, size: int):
    return lit(size) if sel.const_of(e) == size else sel.expr(e)


def _wide(x):
    return x if isinstance(x, Lit) else Conv(dtypes.int64, x)


def _gap(sel: Selector, stride, dt):
    """The GM gap between one-element bursts: ``(stride - 1) * size`` bytes."""
    c = sel.const_of(stride)
    if c is not None:
        return Conv(U32, lit((c - 1) * dt.itemsize))
    return Conv(U32, mul(Bin(BinOp.SUB, sel.wide_expr(stride), Lit(1, dtypes.int64)), SizeOf(dt)))


def _staging(sel: Selector, instr: Instr) -> Ref:
    """The queue buffer of one 32-byte block per element: a load's own VECIN buffer, a store's
    VECOUT buffer."""
    if instr.op in (Op.STRIDED_STORE, Op.SCATTER_STORE):
        buf = sel.outbuf[id(instr)]
    else:
        v = instr.result
        if v.id not in sel.inbuf:
            param = sel.params[instr.operands[0].id][1]
            kind = "Strided" if instr.op is Op.STRIDED_LOAD else "Gathered"
            sel.inbuf[v.id] = sel.new_buf(Role.INPUT, cpp_dtype(v.type.dtype), sel.ptr_stem(instr.operands[0]) + kind,
                                          instr.loc, ("in", param, f"{kind}{v.id}"))
        buf = sel.inbuf[v.id]
    lead, cols = _grid(instr)
    return Ref(buf, buf.dtype, lit(0), numel(lead) * cols * sel.platform.block_bytes // buf.dtype.itemsize)


def _words(ref: Ref) -> Ref:
    """``ref`` as ``Gather`` moves it: 8-bit elements as 16-bit words, int64 ones as int32 pairs."""
    if ref.dtype in WIDE:
        return int32_view(ref)
    return Ref(ref.buf, I16, lit(0), ref.extent // 2) if ref.dtype in BYTES else ref


def _narrowed(sel: Selector, v, loc) -> tuple[Ref, list]:
    """``(where Gather writes tile v's lanes, the calls that then fill v)``: ``v`` itself; for 8-bit tiles an
    int16 tile whose words hold the elements in their low bytes, sign-extended (``<< 8``, arithmetic ``>> 8``)
    and narrowed through float16 (exact) into ``v`` viewed as int8 (a uint8 element has the same bits)."""
    dst = sel.ref(v)
    if dst.dtype not in BYTES:
        return dst, []
    n = dst.extent
    words, half = sel.scratch("byteWords", I16, n, loc), sel.scratch("byteHalves", F16, n, loc)
    return words, [Call("ShiftLeft", words, (words,), (Lit(8, I16), lit(n)), inplace=True),
                   Call("ShiftRight", words, (words,), (Lit(8, I16), lit(n)), inplace=True),
                   Call("Cast", half, (words,), (Const.CAST_NONE, lit(n))),
                   Call("Cast", sel.ref(v, I8), (half,), (Const.CAST_TRUNC, lit(n)))]


def _fill(sel: Selector, dst: Ref, other, loc) -> list:
    """``dst`` (the tile as Gather moves it) filled with ``other`` before the valid lanes are gathered: int64
    tiles through their int32 words (:func:`.wordviews.words`; ``Duplicate`` has no 64-bit form)."""
    if dst.dtype not in WIDE:
        return [Call("Duplicate", dst, (), (sel.scalar_as(other, dst.dtype), lit(dst.extent)))]
    return wordviews.words(sel, int32_view(dst), sel.const_of(other), other, loc)


def _widened(sel: Selector, v, loc) -> tuple[Ref, list]:
    """``(tile v as Gather moves it, its calls)``: ``v`` itself; an 8-bit tile viewed as int8 and widened to
    int16 through float16 (exact; the low byte of each word is the element's)."""
    src = sel.ref(v)
    if src.dtype not in BYTES:
        return src, []
    n = src.extent
    half, words = sel.scratch("byteHalves", F16, n, loc), sel.scratch("byteWords", I16, n, loc)
    return words, [Call("Cast", half, (sel.ref(v, I8),), (Const.CAST_NONE, lit(n)), loc=loc),
                   Call("Cast", words, (half,), (Const.CAST_RINT, lit(n)))]


def _bursts(sel: Selector, instr: Instr, staging: Ref, to_ub: bool, pad: Var | None = None) -> list:
    """One ``DataCopyPad`` per valid row: a burst per element between GM (gap ``(stride - 1) * size``
    bytes) and the row's staging blocks (from block ``r * cols``), rows of masked-off indices skipped
    (:func:`_valid_rows`). A row of more than ``max_bursts`` elements would not fit UB at 32 bytes per
    element."""
    dt = staging.dtype
    base, offset, rows, (stride, extent), _ = parts(sel, instr)
    _, cols = _grid(instr)
    per = sel.platform.block_bytes // dt.itemsize
    gap = _gap(sel, stride, dt)
    params = Var(sel.fresh_key(), Struct.COPY_PARAMS, staging.buf.hint + "Params")
    n_cols = _extent(sel, extent, cols)

    def row(r, at) -> list:
        ub = Ref(staging.buf, dt, mul(r, lit(cols * per)), staging.extent)
        g = Gm(sel.params[base.id][1], dt, add(sel.wide_expr(offset), at))
        gaps = (gap, lit(0)) if to_ub else (lit(0), gap)
        return [Let(params, Brace((Conv(U16, n_cols), Conv(U32, SizeOf(dt)), *gaps, lit(0)))),
                Call("DataCopyPad", ub, (g,), (params, pad), pipe=Pipe.MTE2) if to_ub else
                Call("DataCopyPad", g, (ub,), (params,), pipe=Pipe.MTE3)]
    return _valid_rows(sel, rows, row)


def copy_in(sel: Selector, instr: Instr) -> list:
    """CopyIn: AllocTensor, one burst per element of each valid row, EnQue."""
    staging = _staging(sel, instr)
    pad = Var(sel.fresh_key(), Struct.PAD_PARAMS, staging.buf.hint + "Pad", template=staging.dtype)
    return [Queue(QOp.ALLOC, staging.buf, instr.loc),
            Let(pad, Brace((Const.FALSE, lit(0), lit(0), Lit(0, staging.dtype)))),
            *_bursts(sel, instr, staging, True, pad), Queue(QOp.ENQUE, staging.buf)]


def dequeue(sel: Selector, instr: Instr) -> list:
    """Compute: DeQue the staging buffer, fill ``other``, Gather each valid row into the tile."""
    staging = _words(_staging(sel, instr))
    v = instr.result
    _, _, rows, (_, extent), other = parts(sel, instr)
    _, cols = _grid(instr)
    dst, narrow = _narrowed(sel, v, instr.loc)
    index = sel.scratch("strideOffsets", dtypes.int32, cols, instr.loc)
    out = [Queue(QOp.DEQUE, staging.buf),
           Call("CreateVecIndex", index, (), (Lit(0, dtypes.int32), lit(cols))),
           Call("Muls", index, (index,), (Lit(sel.platform.block_bytes, dtypes.int32), lit(cols)), inplace=True)]
    index, lanes, pairs = row_halves(sel, index, cols, dst.dtype)
    out += pairs
    offsets, k = Ref(index.buf, dtypes.uint32, lit(0), lanes), halves(dst.dtype)
    if other is not None:
        out += _fill(sel, dst, other, instr.loc)
    dst = _words(dst)
    n_cols = _extent(sel, extent, cols)
    row_bytes = cols * sel.platform.block_bytes

    def gather(r, _) -> list:
        call = Call("Gather", Ref(dst.buf, dst.dtype, mul(r, lit(k * sel.pitch(v))), dst.extent), (staging, offsets),
                    (Conv(U32, mul(r, lit(row_bytes))), mul(lit(k), n_cols)), loc=instr.loc)
        return [call] if isinstance(n_cols, Lit) else [If(Bin(BinOp.GT, n_cols, lit(0)), (call,))]
    return out + _valid_rows(sel, rows, gather) + narrow


def fill_block(sel: Selector, instr: Instr) -> list:
    """Compute of a masked int64 block load whose ``other`` is not one 32-bit word twice (:meth:`.Selector.
    words_filled`; :mod:`.memory` fills the others with ``Duplicate``): DeQue, the tile filled with
    ``other``'s words as a gathered load's is (:func:`_fill`), then the valid lanes of each valid row
    ``Gather`` ed over it from the loaded block (byte offsets ``4 * j`` of the row's words)."""
    v = instr.result
    rank = len(instr.attr("shape"))
    strides, extents = instr.operands[2:1 + rank], instr.operands[1 + rank:1 + 2 * rank]
    lead, cols = _grid(instr)
    if lead:
        rows, n_cols = tuple(zip(lead, strides, extents)), _extent(sel, extents[-1], cols)
    else:  # one row: 1-D, or an [M, 1] column (masked on its unit axis: all of its valid rows or none)
        rows, n_cols = (), _extent(sel, extents[0], cols)
        if rank == 2 and sel.const_of(extents[1]) != 1:
            n_cols = mul(n_cols, sel.expr(extents[1]))
    loaded = Ref(sel.inbuf[v.id], dtypes.int32, lit(0), 2 * sel.count(v))
    dst = int32_view(sel.ref(v))
    offsets, calls = lane_index(sel, "wordOffsets", 2 * cols, dtypes.int32.itemsize, instr.loc)
    pitch = 2 * sel.pitch(v)

    def gather(r, _) -> list:
        call = Call("Gather", Ref(dst.buf, dst.dtype, mul(r, lit(pitch)), dst.extent),
                    (loaded, Ref(offsets.buf, dtypes.uint32, lit(0), 2 * cols)),
                    (Conv(U32, mul(r, lit(pitch * dtypes.int32.itemsize))), mul(lit(2), n_cols)), loc=instr.loc)
        return [call] if isinstance(n_cols, Lit) else [If(Bin(BinOp.GT, n_cols, lit(0)), (call,))]
    return ([Queue(QOp.DEQUE, loaded.buf), *calls] + _fill(sel, sel.ref(v), instr.operands[-1], instr.loc)
            + _valid_rows(sel, rows, gather))


def spread(sel: Selector, instr: Instr) -> list:
    """Compute of a strided store: ``Gather`` each row of the value into the staging buffer, element
    ``c`` into the whole of block ``c`` (byte offsets ``(j / per) * size`` for lane ``j``)."""
    staging = _staging(sel, instr)
    value = instr.operands[-1]
    lead, cols = _grid(instr)
    rows = numel(lead)
    src, out = _widened(sel, value, instr.loc)
    dt = src.dtype
    per = sel.platform.block_bytes // dt.itemsize
    lanes = cols * per
    index = sel.scratch("spreadOffsets", dtypes.int32, lanes, instr.loc)
    out += [Call("CreateVecIndex", index, (), (Lit(0, dtypes.int32), lit(lanes)), loc=instr.loc),
            Call("ShiftRight", index, (index,), (Lit(per.bit_length() - 1, dtypes.int32), lit(lanes)), inplace=True),
            Call("Muls", index, (index,), (Lit(dt.itemsize, dtypes.int32), lit(lanes)), inplace=True)]
    index, lanes, pairs = row_halves(sel, index, lanes, dt)
    out += pairs
    staging, src = _words(staging), _words(src)

    def gather(r) -> Call:
        return Call("Gather", Ref(staging.buf, staging.dtype, mul(r, lit(lanes)), staging.extent),
                    (src, Ref(index.buf, dtypes.uint32, lit(0), lanes)),
                    (Conv(U32, mul(r, lit(sel.pitch(value) * dt.itemsize))), lit(lanes)))
    if rows == 1:
        return out + [gather(lit(0))]
    r = sel.fresh("r")
    return out + [For(r, lit(0), lit(rows), lit(1), (gather(r),), True)]


def copy_out(sel: Selector, instr: Instr) -> list:
    """CopyOut of a strided store: DeQue, one burst per element of each valid row, FreeTensor."""
    staging = _staging(sel, instr)
    copies = _bursts(sel, instr, staging, False)
    return [Queue(QOp.DEQUE, staging.buf, instr.loc), *atomic_around(instr, staging.dtype, copies),
            Queue(QOp.FREE, staging.buf)]


def gather_load(sel: Selector, instr: Instr) -> list:
    """Compute of ``tl.load(ptr + idx)``: each valid lane's element (of the first ``extent`` lanes, where
    a lane mask is nonzero) copied by its own one-element
    ``DataCopyPad`` from ``ptr[idx[i]]`` (the index read on the scalar unit) into its block of a VECIN
    staging buffer, then compacted by ``Gather`` as a strided load is. The copies wait for
    ``idx`` (V_S flag) and the Gather for the copies (the staging queue's EnQue/DeQue)."""
    v = instr.result
    base, offset, index, extent = instr.operands[:4]
    other = instr.operands[-1] if instr.attr("has_other") else None
    staging = _staging(sel, instr)
    dt = staging.dtype
    size = instr.attr("shape")[0]
    per = sel.platform.block_bytes // dt.itemsize
    count = _extent(sel, extent, size)
    params = Var(sel.fresh_key(), Struct.COPY_PARAMS, staging.buf.hint + "Params")
    pad = Var(sel.fresh_key(), Struct.PAD_PARAMS, staging.buf.hint + "Pad", template=dt)
    i = sel.fresh("i")
    lane = Elem(Ref(sel.bufs[index.id], index.type.dtype, lit(0), sel.count(index)), i)
    gm = Gm(sel.params[base.id][1], dt, add(sel.wide_expr(offset), Conv(dtypes.int64, lane)))
    out = [Queue(QOp.ALLOC, staging.buf, instr.loc),
           Let(params, Brace((lit(1), Conv(U32, SizeOf(dt)), lit(0), lit(0), lit(0)))),
           Let(pad, Brace((Const.FALSE, lit(0), lit(0), Lit(0, dt)))),
           For(i, lit(0), count, lit(1), _if_lane(sel, instr, i, Call(
               "DataCopyPad", Ref(staging.buf, dt, mul(i, lit(per)), staging.extent), (gm,), (params, pad),
               pipe=Pipe.MTE2)), True),
           Queue(QOp.ENQUE, staging.buf), Queue(QOp.DEQUE, staging.buf, declare=False)]
    dst, narrow = _narrowed(sel, v, instr.loc)
    offsets = sel.scratch("gatherOffsets", dtypes.int32, size, instr.loc)
    out += [Call("CreateVecIndex", offsets, (), (Lit(0, dtypes.int32), lit(size))),
            Call("Muls", offsets, (offsets,), (Lit(sel.platform.block_bytes, dtypes.int32), lit(size)), inplace=True)]
    offsets, lanes, pairs = row_halves(sel, offsets, size, dst.dtype)
    out += pairs
    if other is not None:
        out += _fill(sel, dst, other, instr.loc)
    call = Call("Gather", _words(dst), (_words(staging), Ref(offsets.buf, dtypes.uint32, lit(0), lanes)),
                (lit(0), mul(lit(lanes // size), count)))
    out.append(call if isinstance(count, Lit) else If(Bin(BinOp.GT, count, lit(0)), (call,)))
    return out + narrow + [Queue(QOp.FREE, staging.buf)]


def _if_lane(sel: Selector, instr: Instr, i: Var, copy: Call) -> tuple:
    """The one-element copy of lane ``i`` of a gather or scatter, under ``if (lanes[i] != 0)`` when a
    lane mask selects the lanes copied (read on the scalar unit, as the indices are)."""
    if not instr.attr("has_mask"):
        return (copy,)
    lanes = instr.operands[4]
    on = Elem(Ref(sel.bufs[lanes.id], dtypes.int32, lit(0), sel.count(lanes)), i)
    return (If(Bin(BinOp.NE, on, lit(0)), (copy,)),)


def scatter_store(sel: Selector, instr: Instr) -> list:
    """Compute of ``tl.store(ptr + idx, v)`` (and of unread atomics through ``idx``): ``v`` spread over
    one block per element of a VECOUT staging buffer (as a strided store), then each valid lane's
    element written by its own one-element ``DataCopyPad`` to ``ptr[idx[i]]``, in lane order (the last
    lane wins where indices repeat, as on the interpreter; atomics combine)."""
    base, offset, index, extent = instr.operands[:4]
    staging = _staging(sel, instr)
    dt = staging.dtype
    per = sel.platform.block_bytes // dt.itemsize
    params = Var(sel.fresh_key(), Struct.COPY_PARAMS, staging.buf.hint + "Params")
    i = sel.fresh("i")
    lane = Elem(Ref(sel.bufs[index.id], index.type.dtype, lit(0), sel.count(index)), i)
    gm = Gm(sel.params[base.id][1], dt, add(sel.wide_expr(offset), Conv(dtypes.int64, lane)))
    copies = [Let(params, Brace((lit(1), Conv(U32, SizeOf(dt)), lit(0), lit(0), lit(0)))),
              For(i, lit(0), _extent(sel, extent, instr.attr("shape")[0]), lit(1), _if_lane(sel, instr, i, Call(
                  "DataCopyPad", gm, (Ref(staging.buf, dt, mul(i, lit(per)), staging.extent),), (params,),
                  pipe=Pipe.MTE3)))]
    return [Queue(QOp.ALLOC, staging.buf, instr.loc), *spread(sel, instr), Queue(QOp.ENQUE, staging.buf),
            Queue(QOp.DEQUE, staging.buf, declare=False), *atomic_around(instr, dt, copies),
            Queue(QOp.FREE, staging.buf)]
