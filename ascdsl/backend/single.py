"""One element of a type ``Duplicate`` has no form for (int8, uint8, int64), filled from a scalar:
the value of a single-element store (``tl.store(ptr + i, v)``, which stores a one-element tile).

The element is written through a view of its buffer in a type ``Duplicate`` fills: an int8 as the
low byte of an int16 (the store copies only that byte), an int64 as its two int32 words (the high
word into both, then the low word into the first: little-endian, and each ``Duplicate`` starts at the
aligned buffer start).
"""
from __future__ import annotations

from .. import dtypes
from ..ir.core import Instr, Op
from .kir import Bin, BinOp, Call, CInt, Conv, Lit, Ref, lit
from .selector import Selector, cpp_dtype

I16, I32, I64 = dtypes.int16, dtypes.int32, dtypes.int64


def select(sel: Selector, instr: Instr) -> list | None:
    """The ``Duplicate`` s of a one-element broadcast of an int8/uint8/int64 scalar, else None."""
    if instr.op is not Op.BROADCAST or len(instr.results) != 1:
        return None
    v, (x,) = instr.result, instr.operands
    dt = cpp_dtype(v.type.dtype)
    if v.type.shape != (1,) or not x.type.is_scalar or dt not in (dtypes.int8, dtypes.uint8, I64):
        return None
    buf, e = sel.bufs[v.id], sel.scalar_as(x, v.type.dtype)
    if dt == I64:  # both words get the high half, then the first the low half (Duplicate writes aligned)
        high, low = Conv(I32, Bin(BinOp.SHR, e, Lit(32, I64))), Conv(I32, e)
        return [Call("Duplicate", Ref(buf, I32, lit(0), 2), (), (high, lit(2)), loc=instr.loc),
                Call("Duplicate", Ref(buf, I32, lit(0), 1), (), (low, lit(1)))]
    byte = e if dt == dtypes.uint8 else Conv(CInt.UINT8, e)
    return [Call("Duplicate", Ref(buf, I16, lit(0), 1), (), (Conv(I16, byte), lit(1)), loc=instr.loc)]
