"""8-bit and int64 tiles moved through their 16- and 32-bit word views where the vector unit has no API for
their own type: fills, int64 casts and ``tl.where`` of int64 tiles (one :data:`.select.RULES` rule, :func:`select`).

Tiles filled from a scalar (``tl.full``, ``tl.zeros``, a scalar broadcast into a buffer) in the element
types ``Duplicate`` has no form for (A2's takes 16- and 32-bit elements):

* 8-bit tiles: one ``Duplicate`` of the int16 view with the byte repeated in both halves of each word
  (``(v & 0xFF) * 0x101``, computed on the scalar unit for a runtime scalar);
* int64 tiles: a constant whose two 32-bit halves are equal (0, -1) is one ``Duplicate`` of the int32 view;
  any other value (a runtime scalar included) is written as its words: one block of the low word and one
  of the high word, and ``Gather`` of the int32 view reading them alternately (byte offsets
  ``32 * (lane & 1)``, the core being little-endian); the element of a one-element int64 tile
  (:func:`element`, a broadcast of it) is ``Brcb``'d into those two blocks;
* a one-element tile filled from a scalar (the value of ``tl.store(ptr + i, v)``, which stores a
  one-element tile): an int8 as the low byte of an int16 (the store copies only that byte), an int64 as
  its two int32 words (the high word into both, then the low word into the first: little-endian, and
  each ``Duplicate`` starts at the aligned buffer start).

Casts of int64 tiles, on a vector unit whose arithmetic takes at most 32-bit elements (:mod:`.limits`).

``int64 -> int32`` keeps each lane's low word, C's conversion modulo ``2**32`` as the interpreter does
(the simulator's ``Cast`` saturates, and CANN documents no wrap): one ``Gather`` of the even words of the
tile's int32 view (:func:`_low_words`; the core is little-endian). :func:`rewrite`
(a :data:`.decompose.REWRITES` rule) routes the other casts through the ones A2 has (int32 <-> int64,
float32 <-> int64: CANN 8.1's ``dav_c220`` ``Cast`` table): int64 to 8- and 16-bit integers through int32
(wrapping twice is wrapping once), 8- and 16-bit integers to int64 through int32 (exact), 16-bit floats to
int64 and int64 to 16-bit floats through float32 (``CAST_TRUNC`` saturating, ``CAST_RINT``, as
:func:`ascdsl.numerics.cast`).

``tl.where`` of int64 tiles selects whole words: the condition as an int32 tile of 0 and -1 (``Select``),
widened by ``Cast`` to int64 (sign extension makes both words of a lane 0 or -1), then ``(a & m) | (b & ~m)``
on the int16 views (a scalar branch is filled first, :func:`words`).
"""
from __future__ import annotations

from ... import dtypes
from ...ir.core import Instr, Op
from ...ir.symbol import equal
from ..kir import Bin, BinOp, Brace, Call, CInt, Const, Conv, Lit, Ref, lit
from ..legalise_shapes.relayout import gather_lanes, lane_index
from ..selection.support import cpp_dtype

I16, I32, I64, F32 = dtypes.int16, dtypes.int32, dtypes.int64, dtypes.float32
BYTES = frozenset({dtypes.int8, dtypes.uint8})


def select(sel, instr: Instr) -> list | None:
    """The calls of a fill of an 8-bit or int64 tile, of ``int64 -> int32`` of a tile (its low words, gathered)
    and of ``tl.where`` of int64 tiles; None for any other instruction."""
    if instr.op in (Op.CONST, Op.BROADCAST):
        return _fill(sel, instr)
    if instr.op is Op.WHERE and instr.result.type.dtype == I64:
        return _where(sel, instr)
    if instr.op is Op.CAST and not instr.result.type.is_scalar and \
            (instr.operands[0].type.dtype, instr.result.type.dtype) == (I64, I32):
        return _low_words(sel, instr)
    return None


def _fill(sel, instr: Instr) -> list | None:
    """The fill of an 8-bit or int64 tile (None for fills nobody reads from a buffer: broadcasts read through
    strides, constants that only initialise accumulators)."""
    if instr.result.type.is_scalar or len(instr.results) != 1:
        return None
    v = instr.result
    dt = v.type.dtype
    if instr.op is Op.BROADCAST and len(v.type.shape) == 1 and equal(v.type.shape[0], 1) \
            and instr.operands[0].type.is_scalar \
            and cpp_dtype(dt) in BYTES | {I64}:
        return _one(sel, v, sel.scalar_as(instr.operands[0], dt), instr)
    if dt not in BYTES and dt != I64 or v.id in sel.fused or instr.op is Op.CONST and sel.only_inits(v):
        return None
    if instr.op is Op.BROADCAST and not instr.operands[0].type.is_scalar:
        return None  # a tile broadcast into a buffer: refused by compute.vector
    const = instr.attr("value") if instr.op is Op.CONST else sel.const_of(instr.operands[0])
    if dt in BYTES:
        return [_bytes(sel, v, const, instr)]
    return _words(sel, v, const, instr)


def _bytes(sel, v, const, instr: Instr) -> Call:
    if const is not None:
        byte = int(const) & 0xFF
        word = Lit((byte * 0x101) - (1 << 16) if byte >= 0x80 else byte * 0x101, I16)
    else:
        word = Conv(I16, Bin(BinOp.MUL, Bin(BinOp.AND, sel.scalar_as(instr.operands[0], I32), lit(0xFF)), lit(0x101)))
    n = sel.count(v)
    return Call("Duplicate", sel.ref(v, I16), (), (word, lit(n // 2)), loc=instr.loc)


def _words(sel, v, const, instr: Instr) -> list:
    scalar = None if const is not None else instr.operands[0]
    return words(sel, sel.ref(v, I32), const, scalar, instr.loc)


def words(sel, view: Ref, const, scalar, loc) -> list:
    """Fill ``view``, the int32 view of an int64 tile, with the constant ``const`` or (when it is None) the
    runtime scalar ``scalar``: one ``Duplicate`` when the halves are equal constants, else the words gathered."""
    n = view.extent
    if const is not None:
        low, high = _signed(int(const) & 0xFFFFFFFF), _signed((int(const) >> 32) & 0xFFFFFFFF)
        if low == high:
            return [Call("Duplicate", view, (), (Lit(low, I32), lit(n)), loc=loc)]
        low, high = Lit(low, I32), Lit(high, I32)
    else:
        value = sel.scalar_as(scalar, I64)
        low, high = Conv(I32, value), Conv(I32, Bin(BinOp.SHR, value, Lit(32, I64)))
    per = sel.platform.block_bytes // I32.itemsize
    pair = sel.scratch("int64Words", I32, 2 * per, loc)
    return [Call("Duplicate", Ref(pair.buf, I32, lit(0), per), (), (low, lit(per)), loc=loc),
            Call("Duplicate", pair.at(lit(per), per, per), (), (high, lit(per))),
            *_alternate(sel, view, pair, loc)]


def repeated_byte(view: Ref, const, loc) -> list:
    """Fill ``view``, an 8-bit tile's footprint, with the constant ``const``: one ``Duplicate`` of the byte
    twice over its int16 view (A2 has no 8-bit ``Duplicate``; a footprint of odd length gets one byte more,
    inside its 32-byte padding)."""
    byte = int(const) & 0xFF
    pair = byte | byte << 8
    n = -(-view.extent // 2)
    return [Call("Duplicate", Ref(view.buf, dtypes.int16, view.offset, n), (),
                 (Lit(pair - (1 << 16) if pair >= 1 << 15 else pair, dtypes.int16), lit(n)), loc=loc)]


def element(sel, view: Ref, one: Ref, loc) -> list:
    """Fill ``view``, the int32 view of an int64 tile, with the element of the one-element int64 tile whose
    int32 view is ``one``: ``Brcb`` spreads its low word over one block and its high word over the next
    (it reads a block's eight words, one per block), which are then gathered alternately."""
    per = sel.platform.block_bytes // I32.itemsize
    pair = sel.scratch("int64Words", I32, 8 * per, loc)
    return [Call("Brcb", pair, (Ref(one.buf, I32, one.offset, 8),), (lit(1), Brace((lit(1), lit(8)))), loc=loc),
            *_alternate(sel, view, pair, loc)]


def _alternate(sel, view: Ref, pair: Ref, loc) -> list:
    """``Gather`` into ``view`` of the first word of ``pair``'s first and second blocks, alternately."""
    n = view.extent
    offsets, calls = lane_index(sel, "wordOffsets", n, 1, loc)
    ones = sel.scratch("wordOnes", I32, n, loc)
    return [*calls,
            Call("Duplicate", ones, (), (Lit(1, I32), lit(n))),
            Call("And", Ref(offsets.buf, I16, lit(0), 2 * n), (Ref(offsets.buf, I16, lit(0), 2 * n),
                                                                Ref(ones.buf, I16, lit(0), 2 * n)), (lit(2 * n),),
                 inplace=True),  # lane & 1: the int16 view of 1 is (1, 0)
            Call("Muls", offsets, (offsets,), (Lit(sel.platform.block_bytes, I32), lit(n)), inplace=True),
            *gather_lanes(sel, view, pair, offsets, n)]


def _signed(word: int) -> int:
    return word - (1 << 32) if word >= 1 << 31 else word


def _one(sel, v, e, instr: Instr) -> list:
    """The ``Duplicate`` s of a one-element tile of an int8/uint8/int64 scalar ``e``."""
    buf = sel.bufs[v.id]
    if cpp_dtype(v.type.dtype) == I64:  # both words get the high half, then the first the low half
        high, low = Conv(I32, Bin(BinOp.SHR, e, Lit(32, I64))), Conv(I32, e)
        return [Call("Duplicate", Ref(buf, I32, lit(0), 2), (), (high, lit(2)), loc=instr.loc),
                Call("Duplicate", Ref(buf, I32, lit(0), 1), (), (low, lit(1)))]
    byte = e if cpp_dtype(v.type.dtype) == dtypes.uint8 else Conv(CInt.UINT8, e)
    return [Call("Duplicate", Ref(buf, I16, lit(0), 1), (), (Conv(I16, byte), lit(1)), loc=instr.loc)]


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


def _low_words(sel, instr: Instr) -> list:
    (x,), v = instr.operands, instr.result
    n = sel.count(v)
    offsets, calls = lane_index(sel, "lowWordOffsets", n, 2 * I32.itemsize, instr.loc)
    return calls + gather_lanes(sel, sel.ref(v), sel.ref(x, I32), offsets, n)


def _where(sel, instr: Instr) -> list:
    cond, a, b = instr.operands
    v, loc = instr.result, instr.loc
    n = sel.count(v)
    mask = sel.scratch("laneMask", I32, n, loc)
    word_mask = sel.scratch("wordMask", I64, n, loc)
    out = [Call("Duplicate", mask, (), (Lit(-1, I32), lit(n)), loc=loc),
           Call("Select", Ref(mask.buf, F32, lit(0), n), (sel.ref(cond), Ref(mask.buf, F32, lit(0), n)),
                (Lit(0.0, F32), Const.SEL_TS, lit(n))),
           Call("Cast", word_mask, (mask,), (Const.CAST_NONE, lit(n)))]
    sides = []
    for x, hint in ((a, "whereFirst"), (b, "whereSecond")):
        if x.type.is_scalar:
            side = sel.scratch(hint, I32, 2 * n, loc)
            out += words(sel, side, sel.const_of(x), x, loc)
            sides.append(Ref(side.buf, I16, lit(0), 4 * n))
        else:
            sides.append(sel.ref(x, I16))
    m, dst = Ref(word_mask.buf, I16, lit(0), 4 * n), sel.ref(v, I16)
    rest = sel.scratch("whereRest", I16, 4 * n, loc)
    return out + [Call("And", dst, (sides[0], m), (lit(4 * n),)),
                  Call("Not", m, (m,), (lit(4 * n),), inplace=True),
                  Call("And", rest, (sides[1], m), (lit(4 * n),)),
                  Call("Or", dst, (dst, rest), (lit(4 * n),), inplace=True)]
