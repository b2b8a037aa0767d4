"""int32 tile arithmetic beyond ``+ - * max min``: ``// %`` (truncating, as C and Triton), ``abs``,
bitwise ``& | ^ ~`` and shifts by a scalar.

The vector unit has no int32 ``Div``, so :func:`rewrite` (a :data:`.decompose.REWRITES` rule) builds
``a // b`` from float32 division with an exact integer fix-up:

1. ``q0 = trunc(f32(a) / f32(b))`` is within ``3 * 2**-24 * |a / b| + 1 <= 385`` of ``a / b``
   (three roundings of at most half an ulp each, then the truncation);
2. ``r0 = a - q0 * b`` in wrapping int32 arithmetic is exact, since the true value is below ``2**31``
   in magnitude; ``q1 = q0 + trunc(f32(r0) / f32(b))`` then misses the truncated quotient by at most
   one (``|r0 / b| <= 385``, so the float estimate is within ``2**-13`` and can only truncate to the
   wrong side of an integer);
3. with ``r1 = a - q1 * b`` (exact: ``|r1| <= max(|a|, |b|)``) and ``s = sign(a) * sign(b)``: a
   nonzero ``r1`` on the other side of zero from ``a`` means one step too far (``q1 - s``); a nonzero
   ``r1`` with ``r1 - s * b`` still on ``a``'s side (or zero) means one step short (``q1 + s``;
   ``r1 - s * b`` is exact there, and whenever it is read, since ``0 < |r1|``).

``a % b`` is ``a - (a // b) * b``. Division by zero is undefined (as in C and Triton). ``abs`` is
``max(x, -x)`` (``abs(INT_MIN)`` wraps to ``INT_MIN``, as NumPy's). Bitwise ops run on the int16 view
of the tile (``And``/``Or``/``Not``, the high-level ``Xor``; A2 has them for 16-bit types only); a
scalar operand is ``Duplicate`` d into a tile first. Shifts are ``ShiftLeft``/``ShiftRight``
(arithmetic on int32) by a scalar.
"""
from __future__ import annotations

from .. import dtypes
from ..ir.core import Instr, Op, Type
from . import isel
from .kir import Call, Ref, lit
from .selector import unsupported

F32, I16, I32 = dtypes.float32, dtypes.int16, dtypes.int32
SHIFT_API = {Op.SHL: "ShiftLeft", Op.SHR: "ShiftRight"}
BITWISE = frozenset({Op.AND, Op.OR, Op.XOR, Op.NOT})


def _int_tile(instr: Instr) -> bool:
    return (len(instr.results) == 1 and not instr.result.type.is_scalar and instr.result.type.dtype == I32
            and all(x.type.dtype == I32 for x in instr.operands))


def rewrite(r, instr: Instr) -> bool:
    """The tile-IR rewrites of the module docstring (a :data:`.decompose.REWRITES` rule)."""
    if not _int_tile(instr):
        return False
    v, loc = instr.result, instr.loc
    if instr.op in (Op.IDIV, Op.MOD):
        a, b = instr.operands
        q = _Build(r, v.type, loc).quotient(a, b, result=v if instr.op is Op.IDIV else None)
        if instr.op is Op.MOD:
            _Build(r, v.type, loc).sub(a, _Build(r, v.type, loc).mul(q, b), result=v)
        return True
    if instr.op is Op.ABS:
        (x,) = instr.operands
        r.op(Op.MAXIMUM, v.type, (x, r.op(Op.NEG, v.type, (x,), (), loc)), (), loc, result=v)
        return True
    if instr.op in BITWISE and any(x.type.is_scalar for x in instr.operands):
        xs = [r.op(Op.BROADCAST, v.type, (x,), (), loc) if x.type.is_scalar else x for x in instr.operands]
        r.out.append(Instr(instr.op, (v,), tuple(xs), instr.attrs, (), loc))
        return True
    return False


class _Build:
    """Emits int32/float32 tile instructions of one shape through the rewriter (scalars stay scalars)."""

    def __init__(self, r, t: Type, loc):
        self.r, self.t, self.loc = r, t, loc

    def _type(self, xs, dt):
        return self.t.with_dtype(dt) if any(not x.type.is_scalar for x in xs) else Type(dt)

    def bin(self, op, a, b, dt=I32, result=None):
        return self.r.op(op, self._type((a, b), dt), (a, b), (), self.loc, result=result)

    def sub(self, a, b, result=None):
        return self.bin(Op.SUB, a, b, result=result)

    def mul(self, a, b):
        return self.bin(Op.MUL, a, b)

    def c(self, value, dt=I32):
        return self.r.const(value, dt, self.loc)

    def trunc_div(self, a, b):
        """``trunc(f32(a) / f32(b))`` as int32 (``a``, ``b`` int32)."""
        f = self.bin(Op.DIV, self.r.cast(a, F32, self.loc), self.r.cast(b, F32, self.loc), F32)
        return self.r.cast(f, I32, self.loc)

    def negative(self, x):
        return self.bin(Op.LT, x, self.c(0), dtypes.bool_)

    def same_side(self, x, a):
        """``x`` is zero or has the sign of ``a`` (``(x ^ a) >= 0``)."""
        return self.bin(Op.GE, self.bin(Op.XOR, x, a), self.c(0), dtypes.bool_)

    def where(self, c, a, b, result=None):
        return self.r.op(Op.WHERE, self.t, (c, a, b), (), self.loc, result=result)

    def quotient(self, a, b, result=None):
        """``a // b`` truncated toward zero, exactly (steps 1-3 of the module docstring)."""
        q0 = self.trunc_div(a, b)
        q1 = self.bin(Op.ADD, q0, self.trunc_div(self.sub(a, self.mul(q0, b)), b))
        r1 = self.sub(a, self.mul(q1, b))
        s = self.where(self.negative(self.bin(Op.XOR, a, b)), self.c(-1), self.c(1))
        nonzero = self.bin(Op.NE, r1, self.c(0), dtypes.bool_)
        over = self.bin(Op.AND, nonzero, self.negative(self.bin(Op.XOR, r1, a)), dtypes.bool_)
        r2 = self.sub(r1, self.mul(s, b))
        under = self.bin(Op.AND, nonzero, self.bin(Op.OR, self.bin(Op.EQ, r2, self.c(0), dtypes.bool_),
                                                   self.same_side(r2, a), dtypes.bool_), dtypes.bool_)
        return self.where(over, self.sub(q1, s), self.where(under, self.bin(Op.ADD, q1, s), q1), result=result)


def select(sel, instr: Instr) -> list | None:
    """The calls of ``instr`` if this module lowers it (a :data:`.select.RULES` rule), else None."""
    if not (_int_tile(instr) and instr.op in SHIFT_API.keys() | BITWISE):
        return None
    v, n = instr.result, sel.count(instr.result)
    if instr.op in SHIFT_API:
        x, s = instr.operands
        if not s.type.is_scalar or x.type.is_scalar:
            raise unsupported(instr, "shifting by a tile of amounts (shift by a scalar)")
        return [Call(SHIFT_API[instr.op], sel.ref(v), (sel.ref(x),), (sel.scalar_as(s, I32), lit(n)), inplace=True,
                     loc=instr.loc)]
    dst, *srcs = (Ref(sel.bufs[x.id], I16, lit(0), 2 * n) for x in (v, *instr.operands))
    work = (sel.scratch("xorWork", dtypes.uint8, sel.platform.repeat_bytes, instr.loc),) if instr.op is Op.XOR else ()
    return [Call(isel.MASK_API[instr.op], dst, tuple(srcs), (lit(2 * n),), work=work, inplace=True, loc=instr.loc)]


__all__ = ["rewrite", "select"]
