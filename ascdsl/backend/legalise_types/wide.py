"""Casts of int64 tiles, on a vector unit whose arithmetic takes at most 32-bit elements (:mod:`.limits`).

``int64 -> int32`` keeps each lane's low word, C's conversion modulo ``2**32`` as the interpreter does
(the simulator's ``Cast`` saturates, and CANN documents no wrap): one ``Gather`` of the even words of the
tile's int32 view (:func:`select`, a :data:`.select.RULES` rule; the core is little-endian). :func:`rewrite`
(a :data:`.decompose.REWRITES` rule) routes the other casts through the ones A2 has (int32 <-> int64,
float32 <-> int64: CANN 8.1's ``dav_c220`` ``Cast`` table): int64 to 8- and 16-bit integers through int32
(wrapping twice is wrapping once), 8- and 16-bit integers to int64 through int32 (exact), 16-bit floats to
int64 and int64 to 16-bit floats through float32 (``CAST_TRUNC`` saturating, ``CAST_RINT``, as
:func:`ascdsl.numerics.cast`).

``tl.where`` of int64 tiles selects whole words: the condition as an int32 tile of 0 and -1 (``Select``),
widened by ``Cast`` to int64 (sign extension makes both words of a lane 0 or -1), then ``(a & m) | (b & ~m)``
on the int16 views (a scalar branch is filled first, :func:`.fills.words`).
"""
from __future__ import annotations

from ... import dtypes
from ...ir.core import Instr, Op
from . import fills
from ..kir import Call, Const, Lit, Ref, lit
from ..legalise_shapes.relayout import gather_lanes, lane_index

I16, I32, I64, F32 = dtypes.int16, dtypes.int32, dtypes.int64, dtypes.float32


def rewrite(r, instr: Instr) -> bool:
    """The casts to and from int64 that go through another type (see the module docstring)."""
    if instr.op is not Op.CAST or instr.result.type.is_scalar:
        return False
    (x,), v, loc = instr.operands, instr.result, instr.loc
    src, dst = x.type.dtype, v.type.dtype
    if src == dst or I64 not in (src, dst) or I32 in (src, dst) or F32 in (src, dst):
        return False
    through = F32 if src.is_float or dst.is_float else I32
    r.op(Op.CAST, v.type, (r.op(Op.CAST, x.type.with_dtype(through), (x,), (("dtype", through),), loc),),
         (("dtype", dst),), loc, result=v)
    return True


def select(sel, instr: Instr) -> list | None:
    """``int64 -> int32`` of a tile (the low words, gathered) and ``tl.where`` of int64 tiles (None for any other
    instruction)."""
    if instr.op is Op.WHERE and instr.result.type.dtype == I64:
        return _where(sel, instr)
    if instr.op is not Op.CAST or instr.result.type.is_scalar or \
            (instr.operands[0].type.dtype, instr.result.type.dtype) != (I64, I32):
        return None
    (x,), v = instr.operands, instr.result
    n = sel.count(v)
    offsets, calls = lane_index(sel, "lowWordOffsets", n, 2 * I32.itemsize, instr.loc)
    return calls + gather_lanes(sel, sel.ref(v), sel.ref(x, I32), offsets, n)


def _where(sel, instr: Instr) -> list:
    cond, a, b = instr.operands
    v, loc = instr.result, instr.loc
    n = sel.count(v)
    mask = sel.scratch("laneMask", I32, n, loc)
    words = sel.scratch("wordMask", I64, n, loc)
    out = [Call("Duplicate", mask, (), (Lit(-1, I32), lit(n)), loc=loc),
           Call("Select", Ref(mask.buf, F32, lit(0), n), (sel.ref(cond), Ref(mask.buf, F32, lit(0), n)),
                (Lit(0.0, F32), Const.SEL_TS, lit(n))),
           Call("Cast", words, (mask,), (Const.CAST_NONE, lit(n)))]
    sides = []
    for x, hint in ((a, "whereFirst"), (b, "whereSecond")):
        if x.type.is_scalar:
            side = sel.scratch(hint, I32, 2 * n, loc)
            out += fills.words(sel, side, sel.const_of(x), x, loc)
            sides.append(Ref(side.buf, I16, lit(0), 4 * n))
        else:
            sides.append(sel.ref(x, I16))
    m, dst = Ref(words.buf, I16, lit(0), 4 * n), sel.ref(v, I16)
    rest = sel.scratch("whereRest", I16, 4 * n, loc)
    return out + [Call("And", dst, (sides[0], m), (lit(4 * n),)),
                  Call("Not", m, (m,), (lit(4 * n),), inplace=True),
                  Call("And", rest, (sides[1], m), (lit(4 * n),)),
                  Call("Or", dst, (dst, rest), (lit(4 * n),), inplace=True)]
