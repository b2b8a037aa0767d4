"""``tl.umulhi`` of int32 tiles (the high 32 bits of the unsigned product), what Philox needs.

The vector unit multiplies 32-bit integers modulo 2**32 only, so the product is assembled from
16-bit halves ``a = ah * 2**16 + al`` (likewise ``b``), whose four products fit 32 bits exactly:

    hi = ah*bh + (ah*bl >> 16) + (al*bh >> 16) + ((al*bl >> 16) + lo16(ah*bl) + lo16(al*bh)) >> 16

(``>>`` logical: ``ShiftRight`` on the uint32 view; ``lo16(x) = x << 16 >> 16``; sums wrap as uint32
does). ``Mul``/``Muls`` and ``Add`` run on int32, whose bits are the same. A scalar operand (Philox's
round constants) is split in Python (constants) or in C++ (``uint32_t`` division by 65536).
"""
from __future__ import annotations

from ... import dtypes
from ...ir.core import Instr, Op, Value
from ..kir import Bin, BinOp, Call, CInt, Conv, Lit, Ref, lit
from ..selection.selector import Selector, unsupported

I32, U32 = dtypes.int32, dtypes.uint32


def select(sel: Selector, instr: Instr) -> list | None:
    """The rule of this module (:data:`.select.RULES`): the calls of ``umulhi``, None for other ops."""
    return umulhi(sel, instr) if instr.op is Op.UMULHI else None


def umulhi(sel: Selector, instr: Instr) -> list:
    """The calls computing ``umulhi(a, b)`` of int32 operands (one of them may be a scalar)."""
    v = instr.result
    if v.type.dtype != I32:
        raise unsupported(instr, f"`umulhi` of {v.type.dtype} tiles (int32 only)")
    n = sel.count(v)
    calls: list = []

    def call(api, dst, srcs, *args):
        calls.append(Call(api, dst, srcs, (*args, lit(n)), inplace=True, loc=None if calls else instr.loc))

    def u32(r: Ref) -> Ref:
        return Ref(r.buf, U32, r.offset, r.extent)

    def shr16(dst: Ref, src: Ref):
        """``dst = src >> 16``, logical (``src`` a scratch buffer: its uint32 view is declared)."""
        call("ShiftRight", u32(dst), (u32(src),), Conv(U32, lit(16)))

    def lo16(dst: Ref, src: Ref):
        call("ShiftLeft", dst, (src,), Lit(16, I32))
        shr16(dst, dst)

    def halves(x: Value, lo: Ref, hi: Ref):
        """``x``'s halves: scalar expressions, or tiles ``lo`` and ``hi`` (``hi`` as ``lo16`` of the
        arithmetic shift: queue buffers have no uint32 view)."""
        c = sel.const_of(x)
        if c is not None:
            bits = int(c) & 0xFFFFFFFF
            return Lit(bits & 0xFFFF, I32), Lit(bits >> 16, I32)
        if x.type.is_scalar:
            bits = Conv(CInt.UINT32, sel.expr(x))
            return (Conv(I32, Bin(BinOp.MOD, bits, Lit(65536, I32))), Conv(I32, Bin(BinOp.DIV, bits, Lit(65536, I32))))
        lo16(lo, sel.ref(x))
        call("ShiftRight", hi, (sel.ref(x),), Lit(16, I32))
        lo16(hi, hi)
        return lo, hi

    def mul(dst: Ref, p, q):
        tiles = tuple(t for t in (p, q) if isinstance(t, Ref))
        scalars = [s for s in (p, q) if not isinstance(s, Ref)]
        call("Muls", dst, tiles, scalars[0]) if scalars else call("Mul", dst, tiles)

    def scratch(name: str) -> Ref:
        return sel.scratch(name, I32, n, instr.loc)

    a, b = instr.operands
    if a.type.is_scalar or sel.const_of(a) is not None:
        a, b = b, a
    ca, cb = sel.const_of(a), sel.const_of(b)
    if ca is not None and cb is not None:  # Philox's first round: a constant times zeros
        hi = (int(ca) & 0xFFFFFFFF) * (int(cb) & 0xFFFFFFFF) >> 32
        return [Call("Duplicate", sel.ref(v), (), (Lit(hi - (1 << 32) if hi >= 1 << 31 else hi, I32), lit(n)),
                     loc=instr.loc)]
    al, ah = halves(a, scratch("aLo"), scratch("aHi"))
    bl, bh = halves(b, scratch("bLo"), scratch("bHi")) if not b.type.is_scalar else halves(b, None, None)
    ll, lh, hl, hh, t = (scratch(name) for name in ("mulhiLL", "mulhiLH", "mulhiHL", "mulhiHH", "mulhiT"))
    mul(ll, al, bl)
    mul(lh, al, bh)
    mul(hl, ah, bl)
    mul(hh, ah, bh)
    shr16(t, lh)  # hh + (lh >> 16) + (hl >> 16)
    call("Add", hh, (hh, t))
    shr16(t, hl)
    call("Add", hh, (hh, t))
    shr16(ll, ll)  # + ((ll >> 16) + lo16(lh) + lo16(hl)) >> 16
    lo16(lh, lh)
    call("Add", ll, (ll, lh))
    lo16(hl, hl)
    call("Add", ll, (ll, hl))
    shr16(ll, ll)
    call("Add", sel.ref(v), (hh, ll))
    return calls
