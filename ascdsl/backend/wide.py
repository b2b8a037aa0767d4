"""Casts of int64 tiles, on a vector unit whose arithmetic takes at most 32-bit elements (:mod:`.limits`).

``int64 -> int32`` keeps each lane's low word, C's conversion modulo ``2**32`` as the interpreter does
(A2's ``Cast`` saturates): one ``Gather`` of the even words of the tile's int32 view (:func:`select`, a
:data:`.select.RULES` rule; the core is little-endian). :func:`rewrite` (a :data:`.decompose.REWRITES`
rule) routes the other casts through the ones A2 has: int64 to 8- and 16-bit integers through int32 (wrapping
twice is wrapping once), 8- and 16-bit integers to int64 through int32 (exact), 16-bit floats to int64 through
float32 (``Cast`` float32 -> int64 in ``CAST_TRUNC``, saturating as :func:`ascdsl.numerics.cast`). int64 to a
float is refused: A2 has no such ``Cast`` and the int32 low word would change values past ``2**31``.
"""
from __future__ import annotations

from .. import dtypes
from ..ir.core import Instr, Op
from .relayout import gather_lanes, lane_index
from .selector import unsupported

I32, I64, F32 = dtypes.int32, dtypes.int64, dtypes.float32


def rewrite(r, instr: Instr) -> bool:
    """The casts to and from int64 that go through another type (see the module docstring)."""
    if instr.op is not Op.CAST or instr.result.type.is_scalar:
        return False
    (x,), v, loc = instr.operands, instr.result, instr.loc
    src, dst = x.type.dtype, v.type.dtype
    if src == dst or I64 not in (src, dst) or I32 in (src, dst) or (src, dst) == (F32, I64):
        return False
    if src == I64 and dst.is_float:
        raise unsupported(instr, f"casting int64 tiles to {dst} (A2 has no int64 -> float `Cast`)")
    through = F32 if src.is_float else I32
    r.op(Op.CAST, v.type, (r.op(Op.CAST, x.type.with_dtype(through), (x,), (("dtype", through),), loc),),
         (("dtype", dst),), loc, result=v)
    return True


def select(sel, instr: Instr) -> list | None:
    """``int64 -> int32`` of a tile: the low words, gathered (None for any other instruction)."""
    if instr.op is not Op.CAST or instr.result.type.is_scalar or \
            (instr.operands[0].type.dtype, instr.result.type.dtype) != (I64, I32):
        return None
    (x,), v = instr.operands, instr.result
    n = sel.count(v)
    offsets, calls = lane_index(sel, "lowWordOffsets", n, 2 * I32.itemsize, instr.loc)
    return calls + gather_lanes(sel, sel.ref(v), sel.ref(x, I32), offsets, n)
