"""int32 tile arithmetic beyond ``+ - * max min``: ``// %`` (truncating, as C and Triton), ``abs``, ``umulhi``,
bitwise ``& | ^ ~``, shifts by a scalar or by a tile of amounts, and 8-bit and int16 integers: casts,
masked 8-bit loads and math (in int32, wrapped back), flips, sorts, permutes, re-pitching reshapes, joins,
splits and unaligned ``tl.cat`` of 8-bit tiles (in float16), and those moves of bool tiles (their 0/1 values in
float16, compared back).

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
(arithmetic on int32) by a scalar; a shift by a tile of amounts selects, bit by bit of the amount, between
the tile and its shift by that bit's weight (five shifts by a scalar, see :data:`SHIFT_BITS`).

``tl.umulhi`` of int32 tiles (the high 32 bits of the unsigned product, what Philox needs, :func:`umulhi`): the
vector unit multiplies 32-bit integers modulo 2**32 only, so the product is assembled from
16-bit halves ``a = ah * 2**16 + al`` (likewise ``b``), whose four products fit 32 bits exactly:

    hi = ah*bh + (ah*bl >> 16) + (al*bh >> 16) + ((al*bl >> 16) + lo16(ah*bl) + lo16(al*bh)) >> 16

(``>>`` logical: ``ShiftRight`` on the uint32 view; ``lo16(x) = x << 16 >> 16``; sums wrap as uint32
does). ``Mul``/``Muls`` and ``Add`` run on int32, whose bits are the same. A scalar operand (Philox's
round constants) is split in Python (constants) or in C++ (``uint32_t`` division by 65536).
"""
from __future__ import annotations

from ... import dtypes
from ...ir.core import Instr, Op, Type, Value
from . import boolmask
from ..selection import isel
from ..kir import Bin, BinOp, Call, CInt, Conv, Lit, Ref, lit
from ..legalise_shapes.ublayout import has_rows, same_layout
from ..selection.selector import Selector
from ..selection.support import unsupported

F16, F32, I16, I32, U32 = dtypes.float16, dtypes.float32, dtypes.int16, dtypes.int32, dtypes.uint32
SHIFT_API = {Op.SHL: "ShiftLeft", Op.SHR: "ShiftRight"}
BITWISE = frozenset({Op.AND, Op.OR, Op.XOR, Op.NOT})


def _int_tile(instr: Instr) -> bool:
    return (len(instr.results) == 1 and not instr.result.type.is_scalar and instr.result.type.dtype == I32
            and all(x.type.dtype == I32 for x in instr.operands))


def rewrite(r, instr: Instr) -> bool:
    """The tile-IR rewrites of the module docstring (a :data:`.decompose.REWRITES` rule)."""
    if instr.op is Op.CAST and not instr.result.type.is_scalar:
        return _narrow_cast(r, instr)
    if instr.op is Op.BLOCK_LOAD and instr.result.type.dtype in BYTES and instr.attr("has_other"):
        _byte_load(r, instr)
        return True
    if instr.op is Op.UMULHI and instr.result.type.dtype in NARROW and not instr.result.type.is_scalar:
        _narrow_umulhi(r, instr)
        return True
    if _narrow_math(instr):
        _in_int32(r, instr)
        return True
    if _moves_bytes(instr, r.platform.block_bytes):
        _moved_as_half(r, instr)
        return True
    if not _int_tile(instr):
        return False
    v, loc = instr.result, instr.loc
    if instr.op in SHIFT_API and not instr.operands[1].type.is_scalar:
        _shift_by_tile(r, instr)
        return True
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


BYTES = frozenset({dtypes.int8, dtypes.uint8})


MOVES = frozenset({Op.FLIP, Op.PERMUTE, Op.RESHAPE, Op.CAT, Op.JOIN, Op.SPLIT, Op.SORT})


def _moves_bytes(instr: Instr, block: int) -> bool:
    """``instr`` moves 8-bit elements across lanes: a flip, a sort, a permute (not one of a unit axis,
    which is free), a reshape between shapes that lie differently in UB (rows of 8-bit tiles are padded to
    ``block`` elements), a ``tl.join``/``tl.split`` or a ``tl.cat`` of tiles without rows whose second
    starts inside a block; or any of these ops on bool tiles (bit masks, which nothing moves)."""
    dt = instr.results[0].type.dtype if instr.op in MOVES else None
    if dt == dtypes.bool_:
        return True
    if dt not in BYTES:
        return False
    shape = instr.results[0].type.shape
    if instr.op is Op.RESHAPE:
        return not same_layout(instr.operands[0].type.shape, shape, block)
    if instr.op is Op.CAT:
        return not has_rows(shape) and instr.operands[0].type.numel % block != 0
    return instr.op is not Op.PERMUTE or not (len(shape) == 2 and 1 in shape)


def _moved_as_half(r, instr: Instr) -> None:
    """An op that moves 8-bit elements (``Gather`` moves 16- and 32-bit ones) is that op on the tiles
    cast to float16 (exact for every 8-bit integer), cast back; on bool tiles, that op on their 0/1
    values in float16, compared ``!= 0``."""
    loc = instr.loc
    wide = [boolmask.as_number(r, x, F16, loc) if x.type.dtype == dtypes.bool_ else
            r.op(Op.CAST, x.type.with_dtype(F16), (x,), (("dtype", F16),), loc) for x in instr.operands]
    moved = tuple(r.value(v.type.with_dtype(F16)) for v in instr.results)
    r.instr(Instr(instr.op, moved, tuple(wide), instr.attrs, instr.regions, loc))
    for m, v in zip(moved, instr.results):
        if v.type.dtype == dtypes.bool_:
            r.op(Op.NE, v.type, (m, r.const(0.0, F16, loc)), (), loc, result=v)
        else:
            r.op(Op.CAST, v.type, (m,), (("dtype", v.type.dtype),), loc, result=v)


NARROW = BYTES | {I16}
"""Integer tiles computed in int32 (A2's ``Cast`` takes 8-bit integers only to and from float16, int16 only
to and from float types; int16 arithmetic wraps as int32 arithmetic wrapped back does)."""
WRAP = {dtypes.int8: (Op.SHR, 24), dtypes.uint8: (Op.AND, 0xFF), I16: (Op.SHR, 16)}
"""int32 -> narrower wraps as NumPy does: ``(x << 24) >> 24`` for int8, ``x & 0xFF`` for uint8, ``(x << 16) >>
16`` for int16."""


def _narrow_cast(r, instr: Instr) -> bool:
    """Casts between 8-bit or 16-bit integers and other types, through the casts A2 has (float16 <-> 8 bits,
    float32 <-> int16): widening is exact through float16 (8 bits) or float32 (int16); int32 -> narrower wraps
    first (and so do narrow -> narrow integer casts, through int32); floats -> 8 bits truncate and saturate
    through int32 (NaN -> 0), floats -> int16 in one float32 ``Cast`` (``CAST_TRUNC`` saturates), as
    :func:`ascdsl.numerics.cast` does."""
    (x,), v, loc = instr.operands, instr.result, instr.loc
    src, dst = x.type.dtype, v.type.dtype
    if (src, dst) in isel.CAST_MODE or src == dst or not (src in NARROW or dst in NARROW):
        return False
    if src in NARROW:  # every 8-bit value is a float16, every int16 a float32; to a narrow int through int32
        x = r.cast(x, dtypes.float16 if src in BYTES else F32, loc)
        if dst in NARROW:
            x = r.op(Op.CAST, x.type.with_dtype(I32), (x,), (("dtype", I32),), loc)
        r.op(Op.CAST, v.type, (x,), (("dtype", dst),), loc, result=v)
        return True
    t = x.type.with_dtype(I32)
    if src == I32:
        op, bits = WRAP[dst]
        if op is Op.SHR:
            x = r.op(Op.SHR, t, (r.op(Op.SHL, t, (x, r.const(bits, I32, loc)), (), loc), r.const(bits, I32, loc)), (),
                     loc)
        else:
            x = r.op(Op.AND, t, (x, r.const(bits, I32, loc)), (), loc)
    elif src.is_float and dst == I16:
        r.op(Op.CAST, v.type, (r.cast(x, F32, loc),), (("dtype", dst),), loc, result=v)
        return True
    elif src.is_float:
        lo, hi = (-128, 127) if dst == dtypes.int8 else (0, 255)
        x = r.op(Op.CAST, t, (r.cast(x, F32, loc),), (("dtype", I32),), loc)
        x = r.op(Op.MINIMUM, t, (r.op(Op.MAXIMUM, t, (x, r.const(lo, I32, loc)), (), loc), r.const(hi, I32, loc)), (),
                 loc)
    else:
        return False
    hold = dtypes.float16 if dst in BYTES else F32
    held = r.op(Op.CAST, x.type.with_dtype(hold), (r.cast(x, F32, loc),), (("dtype", hold),), loc)
    r.op(Op.CAST, v.type, (held,), (("dtype", dst),), loc, result=v)
    return True


def _narrow_umulhi(r, instr: Instr) -> None:
    """``umulhi`` of 8- or 16-bit tiles: the operands' unsigned values in int32 (``x & 0xFF``/``0xFFFF``),
    their product (below ``2**32``: exact as bits), its high half (``(p >> bits) & mask``), wrapped back."""
    v, loc = instr.result, instr.loc
    bits = v.type.dtype.itemsize * 8
    t = v.type.with_dtype(I32)
    mask = r.const((1 << bits) - 1, I32, loc)
    xs = [r.op(Op.AND, t, (_as_int32_tile(r, x, t, loc), mask), (), loc) for x in instr.operands]
    product = r.op(Op.MUL, t, tuple(xs), (), loc)
    high = r.op(Op.AND, t, (r.op(Op.SHR, t, (product, r.const(bits, I32, loc)), (), loc), mask), (), loc)
    r.op(Op.CAST, v.type, (high,), (("dtype", v.type.dtype),), loc, result=v)


def _as_int32_tile(r, x, t: Type, loc):
    """``x`` (a narrow tile or scalar) as an int32 tile of ``t``'s shape (sign-extended: the caller masks)."""
    if x.type.is_scalar:
        return r.op(Op.BROADCAST, t, (r.cast(x, I32, loc),), (), loc)
    return r.op(Op.CAST, t, (x,), (("dtype", I32),), loc)


def _byte_load(r, instr: Instr) -> None:
    """A masked 8-bit load with ``other``: A2 has no 8-bit ``Duplicate`` to fill the masked lanes, so the
    tile is loaded without it and ``tl.where(index < extent, x, other)`` runs in float16 (exact)."""
    v, loc = instr.result, instr.loc
    attrs = tuple((k, False if k == "has_other" else a) for k, a in instr.attrs)
    raw = r.value(v.type)
    r.out.append(Instr(Op.BLOCK_LOAD, (raw,), instr.operands[:-1], attrs, (), loc))
    half = v.type.with_dtype(dtypes.float16)
    filled = r.op(Op.WHERE, half, (boolmask.in_bounds(r, instr, loc), r.cast(raw, dtypes.float16, loc),
                                   r.cast(instr.operands[-1], dtypes.float16, loc)), (), loc)
    r.op(Op.CAST, v.type, (filled,), (("dtype", v.type.dtype),), loc, result=v)


NARROW_MATH = frozenset({Op.ADD, Op.SUB, Op.MUL, Op.IDIV, Op.MOD, Op.MAXIMUM, Op.MINIMUM, Op.NEG, Op.ABS, Op.AND,
                         Op.OR, Op.XOR, Op.NOT, Op.SHL, Op.SHR, Op.WHERE}) | frozenset(isel.COMPARE_MODE)


def _narrow_math(instr: Instr) -> bool:
    """``instr`` is elementwise math on 8-bit or int16 tiles (computed in int32, wrapped back)."""
    return (len(instr.results) == 1 and not instr.result.type.is_scalar and instr.op in NARROW_MATH
            and any(x.type.dtype in NARROW for x in instr.operands) and all(
                x.type.dtype in NARROW | {dtypes.bool_, I32} or x.type.is_scalar for x in instr.operands))


def _in_int32(r, instr: Instr) -> None:
    """Narrow integer math in int32 (exact: NumPy's 8- and 16-bit ops are the int32 ones wrapped back; a shift
    amount is first wrapped to the shifted dtype, as the interpreter casts it)."""
    v, loc = instr.result, instr.loc
    operands = list(instr.operands)
    if instr.op in SHIFT_API and operands[1].type.dtype != operands[0].type.dtype:
        operands[1] = r.cast(operands[1], operands[0].type.dtype, loc) if operands[1].type.is_scalar else r.op(
            Op.CAST, operands[1].type.with_dtype(operands[0].type.dtype), (operands[1],),
            (("dtype", operands[0].type.dtype),), loc)
    xs = [x if x.type.dtype in (dtypes.bool_, I32) else r.cast(x, I32, loc) if x.type.is_scalar
          else r.op(Op.CAST, x.type.with_dtype(I32), (x,), (("dtype", I32),), loc) for x in operands]
    if v.type.dtype == dtypes.bool_:
        r.op(instr.op, v.type, xs, instr.attrs, loc, result=v)
        return
    t = r.op(instr.op, v.type.with_dtype(I32), xs, instr.attrs, loc)
    r.op(Op.CAST, v.type, (t,), (("dtype", v.type.dtype),), loc, result=v)


SHIFT_BITS = 5
"""A shift by a tile of amounts is ``SHIFT_BITS`` shifts by a scalar (by 1, 2, 4, 8, 16 where that bit of the
amount is set); amounts outside [0, 31] give what NumPy gives (0 for ``<<``, the sign for ``>>``)."""


def _shift_by_tile(r, instr: Instr) -> None:
    x, y = instr.operands
    v, loc = instr.result, instr.loc
    b = _Build(r, v.type, loc)
    if x.type.is_scalar:
        x = r.op(Op.BROADCAST, v.type, (x,), (), loc)
    shifted = x
    for k in range(SHIFT_BITS):
        bit = b.bin(Op.NE, b.bin(Op.AND, y, b.c(1 << k)), b.c(0), dtypes.bool_)
        shifted = b.where(bit, b.bin(instr.op, shifted, b.c(1 << k)), shifted)
    outside = b.bin(Op.NE, b.bin(Op.AND, y, b.c(-(1 << SHIFT_BITS))), b.c(0), dtypes.bool_)
    b.where(outside, b.c(0) if instr.op is Op.SHL else b.bin(Op.SHR, x, b.c(31)), shifted, result=v)


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
    if instr.op is Op.UMULHI:
        return umulhi(sel, instr)
    if not (_int_tile(instr) and instr.op in SHIFT_API.keys() | BITWISE):
        return None
    v, n = instr.result, sel.count(instr.result)
    if instr.op in SHIFT_API:
        x, s = instr.operands
        return [Call(SHIFT_API[instr.op], sel.ref(v), (sel.ref(x),), (sel.scalar_as(s, I32), lit(n)), inplace=True,
                     loc=instr.loc)]
    dst, *srcs = (Ref(sel.bufs[x.id], I16, lit(0), 2 * n) for x in (v, *instr.operands))
    work = (sel.scratch("xorWork", dtypes.uint8, sel.platform.repeat_bytes, instr.loc),) if instr.op is Op.XOR else ()
    return [Call(isel.MASK_API[instr.op], dst, tuple(srcs), (lit(2 * n),), work=work, inplace=True, loc=instr.loc)]


__all__ = ["rewrite", "select"]


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
