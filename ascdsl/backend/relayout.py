"""Shape ops that move elements between UB layouts: ``tl.trans``/``tl.permute`` of 2-D tiles and
``tl.cat`` along axis 0.

* A transpose with a unit axis (``[M, 1] <-> [1, M]``) is free (both are stored as ``[M]``, see
  :meth:`.selector.Selector.free_reshape`). Otherwise ``[M, N] -> [N, M]`` is one ``Gather``: lane
  ``(j, i)`` of the result reads byte ``(i * pitch + j) * size`` of the source. The offsets are built on
  the vector unit: ``CreateVecIndex`` of one result row, scaled by the source pitch (``Muls``, lanes of
  the row padding clamped in bounds by ``Mins``), then one ``Adds`` of ``j * size`` per result row.
* ``tl.cat(a, b)`` along axis 0 copies ``a`` and ``b`` into the result (``DataCopy`` UB -> UB) when
  ``b`` starts on a 32-byte block (always for 2-D tiles, whose rows are whole blocks); else it is a
  located error.
"""
from __future__ import annotations

from .. import dtypes
from ..ir.core import Instr, Op
from .compute import copy_blocks
from .kir import Bin, BinOp, Call, For, Lit, Ref, lit
from .repeat import view
from .selector import unsupported

I32, U32 = dtypes.int32, dtypes.uint32


def select(sel, instr: Instr) -> list | None:
    """The calls of ``instr`` if this module lowers it (a :data:`.select.RULES` rule), else None."""
    if instr.op is Op.PERMUTE:
        if len(instr.result.type.shape) != 2:
            raise unsupported(instr, "permuting tiles of rank 3 or more")
        return [] if sel.free_reshape(instr) else _transpose(sel, instr)
    if instr.op is Op.CAT:
        return _cat(sel, instr)
    return None


def _transpose(sel, instr: Instr) -> list:
    (x,), v = instr.operands, instr.result
    if v.type.dtype.itemsize not in (2, 4) or v.type.dtype == dtypes.bool_:
        raise unsupported(instr, f"transposing {v.type.dtype} tiles (Gather moves 16- and 32-bit elements)")
    (rows, cols), size = x.type.shape, v.type.dtype.itemsize
    src_pitch, dst_pitch = sel.pitch(x), sel.pitch(v)
    line = sel.scratch("transposeRow", I32, dst_pitch, instr.loc)
    offsets = sel.scratch("transposeOffsets", I32, cols * dst_pitch, instr.loc)
    j = sel.fresh("j")
    out = [Call("CreateVecIndex", line, (), (Lit(0, I32), lit(dst_pitch)), loc=instr.loc),
           Call("Muls", line, (line,), (Lit(src_pitch * size, I32), lit(dst_pitch)), inplace=True),
           Call("Mins", line, (line,), (Lit((rows - 1) * src_pitch * size, I32), lit(dst_pitch)), inplace=True),
           For(j, lit(0), lit(cols), lit(1), (Call(
               "Adds", view(offsets, Bin(BinOp.MUL, j, lit(dst_pitch))), (line,),
               (Bin(BinOp.MUL, j, lit(size)), lit(dst_pitch))),), True)]
    total, most = cols * dst_pitch, 255 * (sel.platform.repeat_bytes // size)
    src, dst = sel.ref(x), sel.ref(v)
    for start in range(0, total, most):
        n = min(most, total - start)
        out.append(Call("Gather", dst.at(lit(start), n, start) if start else Ref(dst.buf, dst.dtype, lit(0), n),
                        (src, Ref(offsets.buf, U32, lit(start), start + n)), (lit(0), lit(n))))
    return out


def _cat(sel, instr: Instr) -> list:
    a, b = instr.operands
    v = instr.result
    per_blk = sel.platform.block_bytes // v.type.dtype.itemsize
    split = sel.count(a)
    if split % per_blk or len(v.type.shape) > 2 or v.type.dtype == dtypes.bool_:
        raise unsupported(instr, f"`tl.cat` of {a.type.shape} and {b.type.shape} {v.type.dtype} tiles (the second "
                                 "must start on a 32-byte block: concatenate tiles whose first one fills whole "
                                 "blocks)")
    dst, dt = sel.ref(v), v.type.dtype
    rest = -(-sel.count(b) // per_blk) * per_blk
    return [copy_blocks(sel, Ref(dst.buf, dt, lit(0), split), sel.ref(a), instr.loc),
            Call("DataCopy", Ref(dst.buf, dt, lit(split), split + rest), (Ref(sel.bufs[b.id], dt, lit(0), rest),),
                 (lit(rest),))]


__all__ = ["select"]
