"""Loads with a non-unit innermost stride (``tl.load(ptr + cols * stride)``, any positive stride,
runtime ones included): one ``DataCopyPad`` burst per element, compacted in UB by ``Gather``.

CopyIn copies each valid row as ``blockCount`` bursts of one element (``blockLen`` = its size, the
GM gap ``(stride - 1) * size`` bytes) into a staging buffer of one 32-byte block per element (a
burst lands at the start of its own block). Compute builds the byte offsets ``c * 32`` once
(``CreateVecIndex``, ``Muls``) and ``Gather`` s each row into the tile; with ``other``, the tile is
``Duplicate``'d first and only the valid lanes are gathered. A2's Gather takes 16- and 32-bit types.
"""
from __future__ import annotations

from .. import dtypes
from ..ir.core import Instr
from .kir import (Bin, BinOp, Brace, Call, CInt, Const, Conv, For, Gm, If, Let, Lit, Pipe, QOp, Queue, Ref, Role,
                  SizeOf, Struct, Var, add, lit, mul)
from .selector import Selector, cpp_dtype, unsupported

GATHER = frozenset({dtypes.float32, dtypes.float16, dtypes.bfloat16, dtypes.int32, dtypes.int16})
"""Element types A2's ``Gather`` moves."""
U16, U32 = CInt.UINT16, CInt.UINT32


def parts(instr: Instr):
    """``(base, offset, strides, extents, other or None)`` of a strided load (a stride per dim)."""
    rank = len(instr.attr("shape"))
    xs = instr.operands
    return xs[0], xs[1], xs[2:2 + rank], xs[2 + rank:2 + 2 * rank], xs[-1] if instr.attr("has_other") else None


def _grid(instr: Instr) -> tuple[int, int]:
    shape = instr.attr("shape")
    return (shape[0], shape[1]) if len(shape) == 2 else (1, shape[0])


def _extent(sel: Selector, e, size: int):
    return lit(size) if sel.const_of(e) == size else sel.expr(e)


def _wide(x):
    return x if isinstance(x, Lit) else Conv(dtypes.int64, x)


def _staging(sel: Selector, instr: Instr) -> Ref:
    v = instr.result
    dt = cpp_dtype(v.type.dtype)
    if dt not in GATHER:
        raise unsupported(instr, f"strided loads of {dt} (Gather moves 16- and 32-bit elements)")
    if v.id not in sel.inbuf:
        param = sel.params[instr.operands[0].id][1]
        sel.inbuf[v.id] = sel.new_buf(Role.INPUT, dt, sel.ptr_stem(instr.operands[0]) + "Strided", instr.loc,
                                      ("in", param, f"strided{v.id}"))
    rows, cols = _grid(instr)
    return Ref(sel.inbuf[v.id], dt, lit(0), rows * cols * sel.platform.block_bytes // dt.itemsize)


def copy_in(sel: Selector, instr: Instr) -> list:
    """CopyIn: AllocTensor, one burst per element of each valid row, EnQue."""
    staging = _staging(sel, instr)
    dt = staging.dtype
    base, offset, strides, extents, _ = parts(instr)
    rows, cols = _grid(instr)
    per = sel.platform.block_bytes // dt.itemsize
    n_cols = _extent(sel, extents[-1], cols)
    gap = Conv(U32, mul(Bin(BinOp.SUB, sel.wide_expr(strides[-1]), Lit(1, dtypes.int64)), SizeOf(dt)))
    params = Var(sel.fresh_key(), Struct.COPY_PARAMS, staging.buf.hint + "Params")
    pad = Var(sel.fresh_key(), Struct.PAD_PARAMS, staging.buf.hint + "Pad", template=dt)

    def row(r) -> list:
        """The bursts of row ``r`` (its staging blocks start at ``r * cols``; a row of more than
        ``max_bursts`` elements would not fit UB with 32 bytes per element)."""
        gm = add(sel.wide_expr(offset), mul(_wide(r), sel.wide_expr(strides[0]))) if rows > 1 else sel.wide_expr(offset)
        return [Let(params, Brace((Conv(U16, n_cols), Conv(U32, SizeOf(dt)), gap, lit(0), lit(0)))),
                Call("DataCopyPad", Ref(staging.buf, dt, mul(r, lit(cols * per)), staging.extent),
                     (Gm(sel.params[base.id][1], dt, gm),), (params, pad), pipe=Pipe.MTE2)]
    out = [Queue(QOp.ALLOC, staging.buf, instr.loc),
           Let(pad, Brace((Const.FALSE, lit(0), lit(0), Lit(0, dt))))]
    if rows == 1:
        out += row(lit(0))
    else:
        r = sel.fresh("r")
        out.append(For(r, lit(0), _extent(sel, extents[0], rows), lit(1), tuple(row(r)), True))
    return out + [Queue(QOp.ENQUE, staging.buf)]


def dequeue(sel: Selector, instr: Instr) -> list:
    """Compute: DeQue the staging buffer, fill ``other``, Gather each valid row into the tile."""
    staging = _staging(sel, instr)
    v = instr.result
    dt = staging.dtype
    _, _, _, extents, other = parts(instr)
    rows, cols = _grid(instr)
    dst = sel.ref(v)
    index = sel.scratch("strideOffsets", dtypes.int32, cols, instr.loc)
    offsets = Ref(index.buf, dtypes.uint32, lit(0), cols)
    out = [Queue(QOp.DEQUE, staging.buf),
           Call("CreateVecIndex", index, (), (Lit(0, dtypes.int32), lit(cols))),
           Call("Muls", index, (index,), (Lit(sel.platform.block_bytes, dtypes.int32), lit(cols)), inplace=True)]
    if other is not None:
        out.append(Call("Duplicate", dst, (), (sel.scalar_as(other, dt), lit(sel.count(v)))))
    n_cols = _extent(sel, extents[-1], cols)
    row_bytes = cols * sel.platform.block_bytes

    def gather(r) -> list:
        call = Call("Gather", Ref(dst.buf, dt, mul(r, lit(sel.pitch(v))), dst.extent), (staging, offsets),
                    (Conv(U32, mul(r, lit(row_bytes))), n_cols), loc=instr.loc)
        return [call] if isinstance(n_cols, Lit) else [If(Bin(BinOp.GT, n_cols, lit(0)), (call,))]
    if rows == 1:
        return out + gather(lit(0))
    r = sel.fresh("r")
    return out + [For(r, lit(0), _extent(sel, extents[0], rows), lit(1), tuple(gather(r)), True)]
