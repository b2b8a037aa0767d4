"""Ops that move elements across lanes of a tile: ``tl.flip``, scans along a 1-D tile other than a float
sum, and ``tl.sort``, all over whole tiles with ``Gather`` (byte offsets computed on the vector unit from
``CreateVecIndex``), never a loop over elements.

* ``flip`` of a 1-D tile (or along the last axis of a 2-D one, row by row) is one ``Gather``: lane ``j``
  reads element ``N - 1 - j`` (the padding lanes read element 0); along axis 0 of a 2-D tile it copies
  whole rows (``DataCopy``, rows are whole blocks). 16-, 32- and 64-bit elements (int64 ones as int32
  pairs, :func:`.relayout.gather_lanes`).
* a scan of ``+ * max min`` along a 1-D tile or the rows of a 2-D one (int32 sums, products, running
  extremes; the float sum keeps ``CumSum``) is Hillis-Steele: ``ceil(log2 N)`` steps, step ``d`` Gathers
  every lane's element ``d`` to the left (lanes in columns ``< d`` read the op's identity from a block in
  front of the tile) and combines it in place, all rows in the same calls.
  A reversed one is the forward scan between two flips (:mod:`.scan`).
* ``sort`` of a 1-D tile is a bitonic network over ``P = next_power_of_2(N)`` lanes (the lanes past ``N``
  hold the largest value): ``log2 P * (log2 P + 1) / 2`` compare-exchange steps, each one ``Gather`` of
  every lane's partner ``i ^ j``, ``Min``, ``Max`` and a ``Select`` of the two by the lane's direction
  (``bit j of i`` xor ``bit k of i``). Floats are sorted as int32 keys (the bits, the magnitude bits flipped
  where the sign is set: the keys order as the floats do, ``-0.0`` just below ``0.0``), NaNs as the largest
  key (last, as NumPy's sort puts them, as the float32 NaN ``0x7fffffff``); 16-bit floats in float32.
  ``descending=True`` is the ascending sort flipped (one more ``Gather``), as the interpreter computes it.
  Along axis 0 of a 2-D tile (:func:`rewrite`), the sort of the rows of its transpose, transposed back;
  int16 tiles sort in int32, 8-bit and bool ones in float16 (:mod:`.intops`).
"""
from __future__ import annotations

from ... import dtypes
from ...ir.core import Instr, Op
from ..kir import Bin, BinOp, Call, Const, For, Lit, Ref, lit
from ..legalise_shapes.rank3 import permuted_last
from ..legalise_shapes.relayout import gather_lanes, lane_index, movable, row_halves
from ..selection.repeat import located, view
from ..selection.support import unsupported
from ..legalise_shapes.ublayout import rows as rows_of

F32, I16, I32 = dtypes.float32, dtypes.int16, dtypes.int32
SCANS = {Op.ADD: "Add", Op.MUL: "Mul", Op.MAXIMUM: "Max", Op.MINIMUM: "Min"}
SORTED = frozenset({F32, I32, dtypes.float16, dtypes.bfloat16})
"""Element types ``tl.sort`` orders (16-bit floats in float32)."""


def identity(op: Op, dt):
    """The value ``x op identity == x`` for every ``x`` of ``dt``."""
    if op is Op.ADD:
        return 0
    if op is Op.MUL:
        return 1
    big = float("inf") if dt.is_float else 2 ** 31 - 1
    return -big if op is Op.MAXIMUM else big


def rewrite(r, instr: Instr) -> bool:
    """``tl.sort`` along axis 0 of a 2-D tile: the sort along the rows of its transpose, transposed back;
    of an int16 tile: the sort of its values in int32 (a :data:`.decompose.REWRITES` rule)."""
    if instr.op is not Op.SORT:
        return False
    t = instr.result.type
    if t.dtype == I16:
        (x,), loc = instr.operands, instr.loc
        wide = r.op(Op.CAST, t.with_dtype(I32), (x,), (("dtype", I32),), loc)
        done = r.op(Op.SORT, wide.type, (wide,), instr.attrs, loc)
        r.op(Op.CAST, t, (done,), (("dtype", I16),), loc, result=instr.result)
        return True
    if len(t.shape) != 2 or instr.attr("axis") % 2 != 0 or t.dtype not in SORTED:
        return False
    permuted_last(r, instr)
    return True


def select(sel, instr: Instr) -> list | None:
    """The calls of ``instr`` if this module lowers it (a :data:`.select.RULES` rule), else None."""
    if instr.op is Op.FLIP:
        return _flip(sel, instr)
    if instr.op is Op.SORT:
        return _sort(sel, instr)
    return None


def _flip(sel, instr: Instr) -> list:
    (x,), v = instr.operands, instr.result
    movable(instr, "`tl.flip`")
    shape, axis, size = x.type.shape, instr.attr("axis"), v.type.dtype.itemsize
    if len(shape) == 2 and axis == 0:  # whole rows
        p, rows = sel.pitch(x), shape[0]
        r = sel.fresh("row")
        dst, src = sel.ref(v), sel.ref(x)
        return [For(r, lit(0), lit(rows), lit(1), (Call(
            "DataCopy", view(Ref(dst.buf, dst.dtype, lit(0), p), Bin(BinOp.MUL, r, lit(p))),
            (view(Ref(src.buf, src.dtype, lit(0), p), Bin(BinOp.MUL, Bin(BinOp.SUB, lit(rows - 1), r), lit(p))),),
            (lit(p),)),), True, loc=instr.loc)]
    cols = shape[-1]
    p = sel.pitch(x) if len(shape) == 2 else sel.count(x)
    line, out = lane_index(sel, "flipOffsets" if len(shape) == 1 else "flipRow", p, -size, instr.loc)
    out += [Call("Adds", line, (line,), (Lit((cols - 1) * size, I32), lit(p)), inplace=True),
            Call("Maxs", line, (line,), (Lit(0, I32), lit(p)), inplace=True)]
    if len(shape) == 1:
        return out + gather_lanes(sel, sel.ref(v), sel.ref(x), line, p)
    rows = shape[0]
    line, q, pair = row_halves(sel, line, p, v.type.dtype)
    offsets = sel.scratch("flipOffsets", I32, rows * q, instr.loc)
    r = sel.fresh("row")
    out += pair + [For(r, lit(0), lit(rows), lit(1), (Call(
        "Adds", view(Ref(offsets.buf, I32, lit(0), q), Bin(BinOp.MUL, r, lit(q))), (line,),
        (Bin(BinOp.MUL, r, lit(p * size)), lit(q))),), True)]
    return out + gather_lanes(sel, sel.ref(v), sel.ref(x), offsets, rows * p, halves=True)


def scan_lanes(sel, instr: Instr) -> list:
    """A forward scan by ``+ * max min`` along a 1-D tile or along every row of a 2-D one at once
    (Hillis-Steele steps through ``Gather``; in rows, lanes left of column ``d`` read the identity)."""
    (x,), v = instr.operands, instr.result
    op, dt = instr.attr("combine"), x.type.dtype
    if dt not in (F32, I32, dtypes.float16):
        raise unsupported(instr, f"a running `{op.value}` of {dt} tiles (float and int32 tiles scan)")
    n, count, size = x.type.shape[-1], sel.count(x), dt.itemsize
    rows, p = rows_of(x.type.shape), sel.pitch(x)
    front = sel.platform.block_bytes // size
    blocks = -(-count // front) * front
    ext = sel.scratch("scanState", dt, front + blocks, instr.loc)
    state = Ref(ext.buf, dt, lit(front), front + blocks)
    k = _Lanes(sel, count, instr.loc)
    lanes, k.out = lane_index(sel, "scanLanes", count, size, instr.loc)
    offsets = k.tile("scanOffsets")
    shifted = sel.scratch("scanShifted", dt, count, instr.loc)
    step_dt = instr.attr("round")
    rounded = sel.scratch("scanRounded", step_dt, count, instr.loc) if step_dt is not None else None
    columns, left = (_columns(sel, k, p, rows), k.tile("scanLeft")) if rows > 1 else (None, None)
    k.out += [Call("Duplicate", Ref(ext.buf, dt, lit(0), front), (), (Lit(identity(op, dt), dt), lit(front))),
              Call("DataCopy", state, (Ref(sel.bufs[x.id], dt, lit(0), blocks),), (lit(blocks),))]
    d = 1
    while d < n:  # lane i reads lane i - d of the state, or the identity block in front of it
        k.scalar("Adds", offsets, lanes, (front - d) * size)
        if columns is None:
            k.scalar("Maxs", offsets, offsets, 0)
        else:  # columns < d of every row: offset 0 (the identity); ``(c - d) >> 31`` is all ones there
            k.bits("Not", left, k.scalar("ShiftRight", left, k.scalar("Adds", left, columns, -d), 31))
            k.bits("And", offsets, offsets, left)
        k.out += gather_lanes(sel, shifted, ext, offsets, count)
        k.out.append(Call(SCANS[op], state, (state, shifted), (lit(count),), inplace=True))
        if rounded is not None:  # bfloat16 in float32: every step rounds to bfloat16, as the interpreter does
            k.out += [Call("Cast", rounded, (state,), (Const.CAST_RINT, lit(count))),
                      Call("Cast", state, (rounded,), (Const.CAST_NONE, lit(count)))]
        d *= 2
    k.out.append(Call("DataCopy", Ref(sel.bufs[v.id], dt, lit(0), blocks), (state,), (lit(blocks),)))
    return located(k.out, instr.loc)


def _columns(sel, k: "_Lanes", p: int, rows: int) -> Ref:
    """An int32 tile of ``rows`` rows of ``p`` lanes holding each lane's column ``0 .. p - 1``."""
    line, calls = lane_index(sel, "scanColumn", p, 1, k.loc)
    columns = k.tile("scanColumns")
    k.out += calls + _copy_rows(sel, columns, line, rows, p, 0, p)
    return columns


class _Lanes:
    """Count-form int32 calls over ``n`` lanes of scratch tiles (bitwise ones on their int16 views)."""

    def __init__(self, sel, n: int, loc):
        self.sel, self.n, self.loc, self.out = sel, n, loc, []

    def tile(self, hint: str) -> Ref:
        return self.sel.scratch(hint, I32, self.n, self.loc)

    def call(self, api: str, dst: Ref, srcs, *scalars) -> Ref:
        self.out.append(Call(api, dst, tuple(srcs), (*scalars, lit(self.n)), inplace=True))
        return dst

    def scalar(self, api: str, dst: Ref, src: Ref, value) -> Ref:
        return self.call(api, dst, (src,), value if not isinstance(value, int) else Lit(value, I32))

    def fill(self, hint: str, value: int) -> Ref:
        t = self.tile(hint)
        self.out.append(Call("Duplicate", t, (), (Lit(value, I32), lit(self.n))))
        return t

    def bits(self, api: str, dst: Ref, *srcs: Ref) -> Ref:
        def half(r):
            return Ref(r.buf, I16, lit(0), 2 * self.n)
        work = (self.sel.scratch("xorWork", dtypes.uint8, self.sel.platform.repeat_bytes, self.loc),) if api == "Xor" \
            else ()
        self.out.append(Call(api, half(dst), tuple(half(x) for x in srcs), (lit(2 * self.n),), work=work,
                             inplace=True))
        return dst

    def bit(self, dst: Ref, lanes: Ref, which, one: Ref) -> Ref:
        """``(lanes >> which) & 1``."""
        return self.bits("And", self.scalar("ShiftRight", dst, lanes, which), dst, one)


def _keys(k: _Lanes, w: Ref, magnitude: Ref, t: Ref) -> None:
    """Float32 bits in ``w`` <-> int32 keys that order as the floats (the involution ``w ^ ((w >> 31) &
    0x7fffffff)``)."""
    k.bits("And", k.scalar("ShiftRight", t, w, 31), t, magnitude)
    k.bits("Xor", w, w, t)


def _sort(sel, instr: Instr) -> list:
    """The bitonic network of the module docstring."""
    (x,), v = instr.operands, instr.result
    if x.type.dtype not in (F32, I32) or instr.attr("axis") % len(x.type.shape) != len(x.type.shape) - 1:
        raise unsupported(instr, f"`tl.sort` of {x.type.shape} {x.type.dtype} tiles along axis {instr.attr('axis')} "
                                 "(float and int32 tiles sort along their last axis)")
    n, count, rows, p = x.type.shape[-1], sel.count(x), rows_of(x.type.shape), sel.pitch(x)
    size, front = 4, sel.platform.block_bytes // 4
    blocks = -(-count // front) * front
    lanes_p = 1 << ((p if rows > 1 else n) - 1).bit_length()  # a row's lanes in the network
    k = _Lanes(sel, max(lanes_p, blocks) if rows == 1 else rows * lanes_p, instr.loc)
    whole = rows == 1 or lanes_p == p  # the network's rows lie as the tile's
    # the operand behind one block of the largest key, gathered: lane i < n of a row reads element i, the others
    # that block
    ext = sel.scratch("sortSource", I32, front + k.n, instr.loc)
    k.out.append(Call("Duplicate", Ref(ext.buf, I32, lit(0), front), (), (Lit(LARGEST, I32), lit(front))))
    k.out += _copy_rows(sel, Ref(ext.buf, I32, lit(front), front + k.n), Ref(sel.bufs[x.id], I32, lit(0), blocks),
                        *((1, blocks, 0, 0) if whole else (rows, p, p, lanes_p)))
    lanes = k.tile("sortLanes")
    k.out.append(Call("CreateVecIndex", lanes, (), (Lit(0, I32), lit(k.n))))
    one, t, u, w = k.fill("sortOne", 1), k.tile("sortT"), k.tile("sortU"), k.tile("sortKeys")
    columns = lanes if rows == 1 else k.bits("And", k.tile("sortColumns"), lanes, k.fill("sortRowMask", lanes_p - 1))
    k.scalar("Adds", t, k.scalar("Muls", t, columns, -1), n - 1)  # >= 0 exactly for columns < n
    k.bits("Not", t, k.scalar("ShiftRight", t, t, 31))
    k.scalar("Muls", u, k.bits("And", u, k.scalar("Adds", u, lanes, front), t), size)
    k.out += gather_lanes(sel, w, ext, u, k.n)
    magnitude = None
    if x.type.dtype.is_float:  # NaN (bits & 0x7fffffff above 0x7f800000) becomes the largest key
        magnitude = k.fill("sortMagnitude", LARGEST)
        nan = k.bits("And", u, w, magnitude)
        k.scalar("ShiftRight", nan, k.scalar("Adds", nan, k.scalar("Muls", nan, nan, -1), 0x7F800000), 31)
        _keys(k, w, magnitude, t)
        k.bits("And", t, nan, magnitude)
        k.bits("And", w, w, k.bits("Not", nan, nan))
        k.bits("Or", w, w, t)
    partner, low, high = k.tile("sortPartner"), k.tile("sortLow"), k.tile("sortHigh")
    kb, jb = sel.fresh("stage"), sel.fresh("step")
    step = _Lanes(sel, k.n, instr.loc)
    j = Bin(BinOp.SHL, lit(1), jb)
    step.bit(t, lanes, jb, one)  # the partner of lane i is i ^ j = i + j - 2 * j * bit_j(i)
    step.scalar("Muls", partner, t, Bin(BinOp.MUL, j, lit(-2)))
    step.call("Add", partner, (partner, lanes))
    step.scalar("Muls", partner, step.scalar("Adds", partner, partner, j), size)
    step.out += gather_lanes(sel, u, w, partner, lanes_p if rows == 1 else k.n)
    step.call("Min", low, (w, u))
    step.call("Max", high, (w, u))
    step.bit(u, columns, kb, one)
    step.call("Mul", t, (step.call("Sub", t, (t, u)), t))  # bit_j(i) xor bit_k(i): this lane keeps the larger
    step.call("Sub", u, (high, low))
    step.call("Add", w, (low, step.call("Mul", u, (u, t))))  # exact in wrapping int32 arithmetic
    stages = lanes_p.bit_length() - 1
    k.out.append(For(kb, lit(1), lit(stages + 1), lit(1), (
        For(jb, Bin(BinOp.SUB, kb, lit(1)), lit(-1), lit(-1), tuple(step.out), cmp=BinOp.GT),), loc=instr.loc))
    if magnitude is not None:
        _keys(k, w, magnitude, t)
    dst, res = Ref(sel.bufs[v.id], I32, lit(0), blocks), w
    if instr.attr("descending"):  # lane i of a row reads its column n - 1 - c: i - 2c + n - 1 (or 0)
        k.scalar("Muls", partner, columns, -2)
        k.call("Add", partner, (partner, lanes))
        k.scalar("Maxs", partner, k.scalar("Muls", partner, k.scalar("Adds", partner, partner, n - 1), size), 0)
        if whole:
            return located(k.out + gather_lanes(sel, dst, w, partner, count), instr.loc)
        k.out += gather_lanes(sel, u, w, partner, k.n)
        res = u
    k.out += _copy_rows(sel, dst, Ref(res.buf, I32, lit(0), k.n), *((1, blocks, 0, 0) if whole else
                                                                   (rows, p, lanes_p, p)))
    return located(k.out, instr.loc)


def _copy_rows(sel, dst: Ref, src: Ref, rows: int, n: int, src_pitch: int, dst_pitch: int) -> list:
    """``DataCopy`` of ``rows`` rows of ``n`` elements from rows ``src_pitch`` apart (0: one row, copied to
    every row) to rows ``dst_pitch`` apart (one call for one row)."""
    if rows == 1:
        return [Call("DataCopy", dst, (src,), (lit(n),))]
    r = sel.fresh("row")
    at = Bin(BinOp.MUL, r, lit(src_pitch)) if src_pitch else None
    return [For(r, lit(0), lit(rows), lit(1), (Call(
        "DataCopy", view(dst, Bin(BinOp.MUL, r, lit(dst_pitch))), (view(src, at),), (lit(n),)),), True)]


LARGEST = 2 ** 31 - 1


__all__ = ["identity", "rewrite", "scan_lanes", "select"]
