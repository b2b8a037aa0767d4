"""Selection of the compute stage's own calls: elementwise tile ops as count-form calls over a tile's whole UB
footprint, and ``tl.device_print``.

After :mod:`.decompose` every elementwise op here runs natively in its dtype. Tile-scalar ops
without a scalar API read the scalar from one block at stride 0 (:func:`.repeat.scalar_block`).
``tl.where`` is ``Compare`` into a bit mask (covering whole repeats, so it reads the padding lanes
of its operands: their views say so and the planner sizes them for it), then ``Select``.

``tl.device_print`` (:func:`device_print`) is ``printf`` in the compute stage, as the interpreter prints: one
line per program, ``pid (x, y, z) prefix v1 v2 ...``, a scalar as itself and a tile as ``[a b c]`` (a 2-D tile
row by row, ``[[a b]`` then `` [c d]]``), numbers in ``%g`` (the interpreter prints NumPy's text of the same
values). Tile elements are read on the scalar unit (``GetValue`` after the V_S flag the sync pass adds) in a
loop over the tile. CANN's CPU-debug build and the simulator print to
stdout; on the NPU ``printf`` goes to the device log.
"""
from __future__ import annotations

from ... import dtypes
from ...ir.core import GroupOp, Instr, Op, Value
from . import isel, reduce, repeat
from ..kir import Bin, BinOp, Call, Cond, Const, Conv, Elem, For, If, Lit, Pipe, Ref, Text, add, lit
from .selector import Selector
from .support import F32, program_id, unsupported
from ..legalise_shapes.ublayout import has_rows, held_count, numel

COMPARE = {Op.LT: Const.LT, Op.LE: Const.LE, Op.GT: Const.GT, Op.GE: Const.GE, Op.EQ: Const.EQ, Op.NE: Const.NE}


def vector(sel: Selector, instr: Instr) -> list:
    """The calls computing tile instruction ``instr``."""
    op, v = instr.op, instr.results[0]  # ops with several results (split, tuple reduce) are refused below
    loc = instr.loc
    if op is Op.CONST and sel.only_inits(v):
        return []  # filled into the accumulators it initialises
    if op in (Op.CONST, Op.BROADCAST) and v.type.dtype not in isel.DUPLICATE and v.id not in sel.fused:
        raise unsupported(instr, f"filling {v.type.dtype} tiles from a scalar (`Duplicate` has no {v.type.dtype} form)")
    if op is Op.CONST:
        lanes = held_count(v, sel.align)  # the call's count
        return [Call("Duplicate", sel.ref(v), (), (Lit(instr.attr("value"), v.type.dtype), lit(lanes)), loc=loc)]
    if op is Op.BROADCAST:
        (x,) = instr.operands
        if reduce.shared_column(sel, instr):
            sel.brcbs[v.id], calls = reduce.brcb(sel, instr)
            return calls
        if v.id in sel.fused:
            return []  # read through strides by its users
        if not x.type.is_scalar:
            raise unsupported(instr, "broadcasting a tile into a buffer (only arithmetic can read a broadcast)")
        return [Call("Duplicate", sel.ref(v), (), (sel.scalar_as(x, v.type.dtype), lit(sel.count(v))), loc=loc)]
    if op is Op.EXPAND_DIMS:
        return []  # the same buffer as its operand
    if op in GroupOp.REDUCE:
        return reduce.reduce(sel, instr)
    if op is Op.CAST:
        return _cast(sel, instr)
    if op in COMPARE:
        return _compare(sel, instr)
    if op is Op.WHERE:
        return _select(sel, instr)
    if op in isel.MASK_API and v.type.dtype == dtypes.bool_:
        return _mask_logic(sel, instr)
    if op in isel.ROUNDING_MODE:
        return _rounding(sel, instr)
    if op in isel.MATH_API:
        return _math(sel, instr)
    if op in isel.BINARY_API or op in isel.UNARY_API or op is Op.NEG:
        if any(x.id in sel.fused for x in instr.operands):
            return reduce.broadcast_binary(sel, instr)
        return _arith(sel, instr)
    raise unsupported(instr, f"the tile op `{op.value}`")


def copy(sel: Selector, dst: Ref, value: Value, loc=None) -> Call:
    """UB -> UB copy of tile ``value`` into ``dst``."""
    return copy_blocks(sel, dst, sel.ref(value), loc)


def copy_blocks(sel: Selector, dst: Ref, src: Ref, loc=None) -> Call:
    """UB -> UB copy of the view ``src`` (its extent rounded up to whole blocks)."""
    per = sel.platform.block_bytes // src.dtype.itemsize
    n = -(-src.extent // per) * per
    return Call("DataCopy", Ref(dst.buf, dst.dtype, dst.offset, n), (Ref(src.buf, src.dtype, src.offset, n),),
                (lit(n),), loc=loc)


def _arith(sel: Selector, instr: Instr) -> list:
    op, v = instr.op, instr.result
    dt, xs = v.type.dtype, instr.operands
    if not (op in isel.NATIVE.get(dt, ()) or (op is Op.NEG and dt in isel.NATIVE)) or any(
            x.type.dtype != dt for x in xs):
        raise unsupported(instr, f"`{op.value}` on {dt}")
    # every form below holds it (a call's lanes; the general scalar_block's bounds); packed rows: R * K lanes
    n = sel.count(v) if v.id in sel.packed else held_count(v, sel.align)
    tiles = [sel.ref(x) for x in xs if not x.type.is_scalar]
    scalars = [x for x in xs if x.type.is_scalar]
    dst = sel.ref(v)
    if op is Op.NEG:
        return [Call("Muls", dst, tiles, (Lit(-1.0 if dt.is_float else -1, dt), lit(n)), inplace=True, loc=instr.loc)]
    if op in isel.UNARY_API:
        return [Call(isel.UNARY_API[op], dst, tiles, (lit(n),), inplace=True, loc=instr.loc)]
    if not scalars:
        return [Call(isel.BINARY_API[op], dst, tiles, (lit(n),), inplace=True, loc=instr.loc)]
    scalar = sel.scalar_as(scalars[0], dt)
    if op in isel.SCALAR_API:
        return [Call(isel.SCALAR_API[op], dst, tiles, (scalar, lit(n)), inplace=True, loc=instr.loc)]
    return repeat.scalar_block(sel, isel.BINARY_API[op], dst, tiles[0], scalar, n, xs[0] is scalars[0], instr.loc)


def _cast(sel: Selector, instr: Instr) -> list:
    (x,) = instr.operands
    v = instr.result
    src, dst = x.type.dtype, v.type.dtype
    if src == dst and not instr.attr("kept"):
        return [copy(sel, sel.ref(v), x, instr.loc)]
    if src != dst and (src, dst) not in isel.CAST_MODE:
        raise unsupported(instr, f"casting {src} to {dst}")
    # a kept cast: a template's cast in its float32 form, which the planner aliases
    mode = Const.CAST_NONE if src == dst else Const[isel.CAST_MODE[(src, dst)]]
    n = held_count(v, sel.align)  # the Cast's lanes
    return [Call("Cast", sel.ref(v), (sel.ref(x),), (mode, lit(n)), inplace=src == dst, loc=instr.loc)]


def _rounding(sel: Selector, instr: Instr) -> list:
    """``floor``/``ceil``/``trunc``/``round``/``rint`` of a float32 tile: ``Cast`` to float32 in its round mode."""
    (x,) = instr.operands
    return [Call("Cast", sel.ref(instr.result), (sel.ref(x),),
                 (Const[isel.ROUNDING_MODE[instr.op]], lit(sel.count(x))), loc=instr.loc)]


def _math(sel: Selector, instr: Instr) -> list:
    """A high-level math API (``Tanh``, ``Sin``, ...) with its sharedTmpBuffer at the API's maximum for the
    tile (GetXxxMaxMinTmpSize's ``maxValue``): ``slices`` parts of the tile's lanes rounded up to 32, so the
    API runs one round over the tile (at its minimum, 256 bytes a slice, it would run one round per 32 or 64
    lanes). The buffer is part of the kernel's UB footprint, so the host's tile extents account for it."""
    (x,) = instr.operands
    api, half_slices, float_slices = isel.MATH_API[instr.op]
    slices = float_slices if x.type.dtype == F32 else half_slices
    tile = -(-sel.count(x) // 32) * 32 * x.type.dtype.itemsize
    part = tile if tile >= isel.MATH_TMP_SLICE else isel.MATH_TMP_SLICE  # max(), deciding a tie of symbols too
    work = (sel.scratch(api[:1].lower() + api[1:] + "Tmp", dtypes.uint8, slices * part, instr.loc),
            ) if slices else ()
    return [Call(api, sel.ref(instr.result), (sel.ref(x),), (lit(sel.count(x)),), work=work, loc=instr.loc)]


def compare_count(sel: Selector, x: Value) -> int:
    """Lanes ``Compare`` covers for tile ``x``: its padded footprint in whole repeats."""
    per_rep = sel.platform.repeat_bytes // x.type.dtype.itemsize
    return -(-sel.count(x) // per_rep) * per_rep


def _compare(sel: Selector, instr: Instr) -> list:
    """``Compare`` of two tiles, or of a tile and a scalar, into the condition's bit mask."""
    tile = next(x for x in instr.operands if not x.type.is_scalar)
    dt, n = tile.type.dtype, compare_count(sel, tile)
    mask = sel.ref(instr.result)
    mask = Ref(mask.buf, mask.dtype, mask.offset, n // 8)
    srcs = [None if x.type.is_scalar else Ref(sel.bufs[x.id], dt, lit(0), n) for x in instr.operands]
    if None not in srcs:
        return [Call("Compare", mask, srcs, (COMPARE[instr.op], lit(n)), loc=instr.loc)]
    first = srcs[0] is None
    scalar = sel.scalar_as(instr.operands[0 if first else 1], dt)
    return repeat.scalar_block(sel, "Compare", mask, srcs[1 if first else 0], scalar, n, first, instr.loc,
                               mode=COMPARE[instr.op])


def _mask_logic(sel: Selector, instr: Instr) -> list:
    """``& | ^ ~`` of bool tiles: the bits of their masks, 16 lanes per int16 element."""
    n = -(-sel.count(instr.result) // 16)
    dst, *srcs = (Ref(sel.bufs[x.id], dtypes.int16, lit(0), n) for x in (instr.result, *instr.operands))
    work = (sel.scratch("xorWork", dtypes.uint8, sel.platform.repeat_bytes, instr.loc),) if instr.op is Op.XOR else ()
    return [Call(isel.MASK_API[instr.op], dst, tuple(srcs), (lit(n),), work=work, inplace=True, loc=instr.loc)]


def _select(sel: Selector, instr: Instr) -> list:
    """``Select`` of the branches by the condition's bit mask (a scalar first branch is Duplicate'd
    into the result first: ``Select`` reads its first branch from a tensor)."""
    cond, a, b = instr.operands
    v = instr.result
    dt, n = v.type.dtype, sel.count(v)
    dst = sel.ref(v)
    out = []
    first = sel.ref(a) if not a.type.is_scalar else dst
    if a.type.is_scalar:
        out.append(Call("Duplicate", dst, (), (sel.scalar_as(a, dt), lit(n)), loc=instr.loc))
    mode = Const.SEL_TS if b.type.is_scalar else Const.SEL_TT
    srcs = (sel.ref(cond), first) + (() if b.type.is_scalar else (sel.ref(b),))
    args = ((sel.scalar_as(b, dt),) if b.type.is_scalar else ()) + (mode, lit(n))
    out.append(Call("Select", dst, srcs, args, loc=None if out else instr.loc))
    return out


__all__ = ["F32", "copy", "copy_blocks", "vector"]


def _format(dtype) -> str:
    if dtype.is_float:
        return "%g"
    return "%lld" if dtype.itemsize == 8 else "%u" if dtype == dtypes.uint8 else "%d"


def _word(e, is_bool: bool) -> tuple[str, object]:
    """``(format, argument)`` printing value ``e``: a bool as NumPy's ``True``/``False``."""
    return ("%s", Cond(Bin(BinOp.NE, e, lit(0)), Text("True"), Text("False"))) if is_bool else (None, e)


def _printf(fmt: str, *args, loc=None) -> Call:
    return Call("printf", None, (), (Text(fmt), *args), pipe=Pipe.S, loc=loc)


def device_print(sel: Selector, instr: Instr) -> list:
    """The ``printf`` calls of one ``tl.device_print``."""
    prefix = instr.attr("prefix", "").replace("%", "%%")
    head = "pid (%d, %d, %d)" + (" " + prefix if prefix else "")
    out = [_printf(head, *(Conv(dtypes.int32, program_id(a)) for a in range(3)), loc=instr.loc)]
    bools = instr.attr("bools", ())  # operands that were bool tiles, printed as their 0/1 values (boolmask)
    for i, v in enumerate(instr.operands):
        is_bool = v.type.dtype == dtypes.bool_ or i in bools
        if v.type.is_scalar:
            fmt, arg = _word(sel.expr(v), is_bool)
            out.append(_printf(" " + (fmt or _format(v.type.dtype)), arg))
        else:
            out += _tile(sel, v, is_bool)
    return out + [_printf("\n")]


def _tile(sel: Selector, v: Value, is_bool: bool = False) -> list:
    """`` [a b c]`` (or `` [[a b]\n [c d]]``; a tile of rank 3 or more nested as NumPy prints it, one
    more blank line per level a block closes) of tile ``v``, element by element, UB row by UB row."""
    fmt = "%s" if is_bool else _format(v.type.dtype)
    ref = sel.ref(v)
    shape = v.type.shape if has_rows(v.type.shape) else (v.type.numel,)
    rank, cols, rows = len(shape), shape[-1], numel(shape[:-1])
    c = sel.fresh("c")

    def row(first: str, start) -> list:
        return [_printf(first + fmt, _word(Elem(ref, start), is_bool)[1]),
                For(c, lit(1), lit(cols), lit(1), (_printf(" " + fmt, _word(Elem(ref, add(start, c)), is_bool)[1]),)),
                _printf("]")]
    if rows == 1 and rank <= 2:
        return row(" [", lit(0))
    blocks = [numel(shape[j:-1]) for j in range(1, rank - 1)]  # rows per block of each inner level, outermost first
    r = sel.fresh("r")

    def levels(at, text) -> tuple:
        """``text(z)`` printed for the number ``z`` of levels whose blocks start at row ``at``."""
        out: tuple = (_printf(text(0)),) if text(0) else ()
        for z, size in enumerate(reversed(blocks), 1):
            out = (If(Bin(BinOp.EQ, Bin(BinOp.MOD, at, lit(size)), lit(0)), (_printf(text(z)),), orelse=out),)
        return out
    opening = levels(r, lambda z: "\n" * (z + 1) + " " * (rank - 1 - z) + "[" * z)
    closing = levels(add(r, lit(1)), lambda z: "]" * z)
    body = (If(Bin(BinOp.GT, r, lit(0)), opening), *row("[", Bin(BinOp.MUL, r, lit(sel.pitch(v)))), *closing)
    return [_printf(" " + "[" * (rank - 1)), For(r, lit(0), lit(rows), lit(1), body), _printf("]")]
