"""Shape ops that move elements between UB layouts: ``tl.trans``/``tl.permute`` of 2-D tiles,
``tl.cat`` along axis 0 and reshapes into padded rows.

* A transpose with a unit axis (``[M, 1] <-> [1, M]``) is free (both are stored as ``[M]``, see
  :meth:`.selector.Selector.free_reshape`). Otherwise ``[M, N] -> [N, M]`` is one ``Gather``: lane
  ``(j, i)`` of the result reads byte ``(i * pitch + j) * size`` of the source. The offsets are built on
  the vector unit: ``CreateVecIndex`` of one result row, scaled by the source pitch (``Muls``, lanes of
  the row padding clamped in bounds by ``Mins``), then one ``Adds`` of ``j * size`` per result row.
* ``tl.cat(a, b)`` along axis 0 copies ``a`` and ``b`` into the result (``DataCopy`` UB -> UB) when
  ``b`` starts on a 32-byte block (always for tiles with rows, whose rows are whole blocks); tiles
  without rows (1-D, ``[M, 1]``) whose ``b`` starts inside a block are one ``Gather`` from both side by
  side;
* a reshape between shapes that lie differently in UB (rows that do not fill whole blocks, such as
  ``[A * B] -> [A, B]`` or ``[4, 6] -> [6, 4]``) is one ``Gather`` of 16- or 32-bit elements, its
  offsets computed on the vector unit (:func:`_repitch`);
* ``tl.split`` of ``[N, 2]`` or ``[M, N, 2]`` Gathers each half (from the operand's padded rows, or
  from the 1-D tile a ``tl.reshape`` to ``[N, 2]`` made the pairs of, which then needs no buffer of its
  own); ``tl.interleave(a, b)`` of ``[N]`` or ``[M, N]`` tiles (``tl.join`` reshaped to ``[.., 2 * N]``)
  copies ``a`` and ``b`` into one scratch tile and Gathers the result from it; a ``tl.join`` of ``[N]`` or ``[M, N]`` tiles kept as a tile of
  pairs (each row padded to a block) Gathers lane ``(i, k)`` from the same scratch tile.

Every op here sees 16-, 32- and 64-bit tiles of rank 1 or 2 (and the ``[M, N, 2]`` pairs of a join or
split): ``Gather`` moves 16- and 32-bit elements, so an int64 lane moves as its two int32 halves
(:func:`gather_lanes`); :mod:`.intops` moves 8-bit and bool tiles as float16, :mod:`.rank3` rewrites
joins, splits and cats of higher rank into these.
"""
from __future__ import annotations

from ... import dtypes
from ...ir.core import Instr, Op
from ..selection.compute import copy_blocks
from ..kir import Bin, BinOp, Call, Const, For, Lit, Ref, lit, mul
from ..selection.repeat import view
from ..selection.support import unsupported
from .ublayout import contiguous, has_rows

F32, I32, U32 = dtypes.float32, dtypes.int32, dtypes.uint32


def select(sel, instr: Instr) -> list | None:
    """The calls of ``instr`` if this module lowers it (a :data:`.select.RULES` rule), else None."""
    if instr.op is Op.PERMUTE:  # of 2-D tiles (:mod:`.rank3` selects the others)
        return [] if sel.free_reshape(instr) else _transpose(sel, instr)
    if instr.op is Op.CAT:
        return _cat(sel, instr)
    if instr.op is Op.SPLIT:
        return _split(sel, instr)
    if instr.op is Op.JOIN:
        if _interleaved(sel, instr.result):
            return []  # computed by its reshapes
        return _join(sel, instr)
    if instr.op is Op.RESHAPE and interleaves(sel, instr):
        return _interleave(sel, instr)
    if instr.op is Op.RESHAPE and all(u.op is Op.SPLIT for u in sel.users.get(instr.result.id, [])) and \
            contiguous(instr.operands[0].type.shape, sel.align):
        return []  # its splits read the operand
    if instr.op is Op.RESHAPE and not sel.free_reshape(instr) and _gathers(instr):
        return _repitch(sel, instr)
    return None


def movable(instr: Instr, what: str) -> None:
    """A located error for ``instr`` when ``Gather`` cannot move its elements (it moves 16- and 32-bit
    ones, int64 ones as int32 pairs; :mod:`.intops` moves 8-bit and bool tiles as float16)."""
    t = instr.results[0].type
    if t.dtype.itemsize not in (2, 4, 8):
        raise unsupported(instr, f"{what} of {t.shape} {t.dtype} tiles (`Gather` moves 16- and 32-bit elements)")


def _gathers(instr: Instr) -> bool:
    """``Gather`` moves the elements of ``instr``'s result (16-, 32- and 64-bit ones)."""
    dt = instr.result.type.dtype
    return dt.itemsize in (2, 4, 8) and dt != dtypes.bool_


def _repitch(sel, instr: Instr) -> list:
    """A reshape between shapes that lie differently in UB: one ``Gather``, lane ``(r, j)`` of the
    result reading element ``k = r * N + min(j, N - 1)`` of the operand (``N``: the result's last
    axis), at its position in the operand's rows (:func:`row_positions`)."""
    (x,), v = instr.operands, instr.result
    offsets, out = element_indices(sel, "repitch", v, instr.loc)
    lanes = sel.count(v)
    out += row_positions(sel, offsets, lanes, x, instr.loc)
    out.append(Call("Muls", offsets, (offsets,), (Lit(v.type.dtype.itemsize, I32), lit(lanes)), inplace=True))
    return out + gather_lanes(sel, sel.ref(v), sel.ref(x), offsets, lanes)


def element_indices(sel, hint: str, v, loc) -> tuple[Ref, list]:
    """A scratch int32 tile holding, in each lane of tile ``v``'s UB layout, the row-major index of its
    element (``r * N + min(j, N - 1)`` in lane ``j`` of row ``r``: a row's padding repeats its last
    element), and its calls: one row, then one ``Adds`` per row when there are more."""
    lanes = sel.count(v)
    offsets = sel.scratch(f"{hint}Offsets", I32, lanes, loc)
    if not has_rows(v.type.shape):
        return offsets, [Call("CreateVecIndex", offsets, (), (Lit(0, I32), lit(lanes)), loc=loc)]
    n, p = v.type.shape[-1], sel.pitch(v)
    if p * 4 % sel.platform.block_bytes:  # int64 rows: rows of p int32 lanes would start inside blocks
        return offsets, _row_major(sel, offsets, lanes, n, p, loc)
    rows = lanes > p or sel.general  # the general form decides nothing by an extent (:mod:`.lift`)
    line = sel.scratch(f"{hint}Row", I32, p, loc) if rows else offsets
    out = [Call("CreateVecIndex", line, (), (Lit(0, I32), lit(p)), loc=loc),
           Call("Mins", line, (line,), (Lit(n - 1, I32), lit(p)), inplace=True)]
    if rows:
        r = sel.fresh("r")
        out.append(For(r, lit(0), lit(lanes // p), lit(1), (Call(
            "Adds", view(offsets, Bin(BinOp.MUL, r, lit(p))), (line,), (Bin(BinOp.MUL, r, lit(n)), lit(p))),), True))
    return offsets, out


def _row_major(sel, offsets: Ref, lanes: int, n: int, p: int, loc) -> list:
    """Calls filling ``offsets`` with ``r * n + min(j, n - 1)`` in lane ``m = r * p + j`` without a loop over
    rows, the row ``r`` computed as ``floor((m + 0.5) * (1 / p))`` in float32 (exact below 2^22 lanes)."""
    row = sel.scratch("laneRow", F32, lanes, loc)
    r, col = (sel.scratch(hint, I32, lanes, loc) for hint in ("rowIndex", "columnIndex"))
    return [Call("CreateVecIndex", offsets, (), (Lit(0, I32), lit(lanes)), loc=loc),
            Call("Cast", row, (offsets,), (Const.CAST_RINT, lit(lanes))),
            Call("Adds", row, (row,), (Lit(0.5, F32), lit(lanes)), inplace=True),
            Call("Muls", row, (row,), (Lit(1.0 / p, F32), lit(lanes)), inplace=True),
            Call("Cast", r, (row,), (Const.CAST_FLOOR, lit(lanes))),
            Call("Muls", col, (r,), (Lit(-p, I32), lit(lanes))),
            Call("Add", col, (col, offsets), (lit(lanes),), inplace=True),  # j = m - r * p
            Call("Mins", col, (col,), (Lit(n - 1, I32), lit(lanes)), inplace=True),
            Call("Muls", r, (r,), (Lit(n, I32), lit(lanes)), inplace=True),
            Call("Add", offsets, (r, col), (lit(lanes),))]


def row_positions(sel, index: Ref, lanes: int, x, loc) -> list:
    """Calls turning the row-major element indices ``k`` in ``index`` into their positions in tile
    ``x``'s UB layout: ``k`` in a tile without row padding, else ``k + (k / M) * (pitch - M)`` (``M``:
    its last axis), the row ``k / M`` computed as ``floor((k + 0.5) * (1 / M))`` in float32, exact for
    every ``k`` below 2^22."""
    if contiguous(x.type.shape, sel.align):
        return []
    m, gap = x.type.shape[-1], sel.pitch(x) - x.type.shape[-1]
    row = sel.scratch("sourceRow", F32, lanes, loc)
    skip = sel.scratch("rowSkip", I32, lanes, loc)
    return [Call("Cast", row, (index,), (Const.CAST_RINT, lit(lanes))),
            Call("Adds", row, (row,), (Lit(0.5, F32), lit(lanes)), inplace=True),
            Call("Muls", row, (row,), (Lit(1.0 / m, F32), lit(lanes)), inplace=True),
            Call("Cast", skip, (row,), (Const.CAST_FLOOR, lit(lanes))),
            Call("Muls", skip, (skip,), (Lit(gap, I32), lit(lanes)), inplace=True),
            Call("Add", index, (index, skip), (lit(lanes),), inplace=True)]


def _joined(sel, v) -> Instr | None:
    """The ``tl.join`` whose tile of pairs ``v`` is (through reshapes that keep its layout), if any."""
    d = sel.defs.get(v.id)
    while d is not None and d.op is Op.RESHAPE and sel.free_reshape(d):
        d = sel.defs.get(d.operands[0].id)
    return d if d is not None and d.op is Op.JOIN else None


def interleaves(sel, instr: Instr) -> bool:
    """``instr`` reshapes ``tl.join(a, b)`` of ``[N]`` or ``[M, N]`` tiles to ``[2 * N]`` or ``[M, 2 * N]``:
    ``tl.interleave(a, b)``."""
    d = _joined(sel, instr.operands[0]) if instr.op is Op.RESHAPE else None
    if d is None:
        return False
    shape = d.operands[0].type.shape
    return len(shape) <= 2 and instr.result.type.shape == shape[:-1] + (2 * shape[-1],)


def _interleaved(sel, v) -> bool:
    """Every use of tile of pairs ``v`` is an interleave (or a reshape keeping its layout that only these use)."""
    return all(interleaves(sel, u) or u.op is Op.RESHAPE and sel.free_reshape(u) and _interleaved(sel, u.result)
               for u in sel.users.get(v.id, []))


def lane_index(sel, hint: str, n: int, scale: int, loc) -> tuple[Ref, list]:
    """A scratch int32 tile ``[0, scale, 2 * scale, ...]`` of ``n`` lanes and its calls."""
    t = sel.scratch(hint, I32, n, loc)
    scaled = [Call("Muls", t, (t,), (Lit(scale, I32), lit(n)), inplace=True)] if scale != 1 else []
    return t, [Call("CreateVecIndex", t, (), (Lit(0, I32), lit(n)), loc=loc)] + scaled


def gather_lanes(sel, dst: Ref, src: Ref, offsets: Ref, total: int, halves: bool = False) -> list:
    """``Gather`` of ``total`` lanes (byte offsets in ``offsets``) in calls of at most 255 repeats. int64
    lanes move as their int32 halves: ``offsets`` are the halves' when ``halves`` (:func:`row_halves`),
    else the lanes' (paired here, :func:`_halves`)."""
    if dst.dtype.itemsize == 8:
        out = []
        if not halves:
            offsets, out = _halves(sel, offsets, total)
        return out + gather_lanes(sel, int32_view(dst), int32_view(src), offsets, 2 * total)
    most = 255 * (sel.platform.repeat_bytes // dst.dtype.itemsize)
    out = []
    for start in range(0, total, most):
        n = min(most, total - start)
        out.append(Call("Gather", dst.at(lit(start), n, start) if start else Ref(dst.buf, dst.dtype, lit(0), n),
                        (src, Ref(offsets.buf, U32, lit(start), start + n)), (lit(0), lit(n))))
    return out


def int32_view(ref: Ref) -> Ref:
    """The int64 elements of ``ref`` as twice as many int32 ones."""
    return Ref(ref.buf, I32, mul(ref.offset, lit(2)), 2 * ref.extent)


def _halves(sel, offsets: Ref, total: int) -> tuple[Ref, list]:
    """The byte offsets of ``total`` int64 lanes as those of their ``2 * total`` int32 halves (``Gather``
    moves 16- and 32-bit elements): int32 lane ``m`` reads offset ``o[m >> 1] + 4 * (m & 1)``, ``o[m >> 1]``
    itself Gathered from ``offsets``."""
    n, loc = 2 * total, offsets.buf.loc
    lane, out = lane_index(sel, "halfLanes", n, 1, loc)
    pick = sel.scratch("halfPick", I32, n, loc)
    pairs = sel.scratch("halfOffsets", I32, n, loc)
    out += [Call("ShiftRight", pick, (lane,), (Lit(1, I32), lit(n))),
            Call("Muls", pick, (pick,), (Lit(4, I32), lit(n)), inplace=True),  # the byte offset of o[m >> 1]
            *gather_lanes(sel, pairs, Ref(offsets.buf, I32, lit(0), offsets.extent), pick, n),
            Call("Muls", pick, (pick,), (Lit(2, I32), lit(n)), inplace=True),
            Call("Muls", lane, (lane,), (Lit(4, I32), lit(n)), inplace=True),
            Call("Sub", lane, (lane, pick), (lit(n),), inplace=True),  # 4 * m - 8 * (m >> 1) = 4 * (m & 1)
            Call("Add", pairs, (pairs, lane), (lit(n),), inplace=True)]
    return pairs, out


def row_halves(sel, line: Ref, p: int, dt) -> tuple[Ref, int, list]:
    """``(offsets, lanes, calls)``: the byte offsets ``line`` of ``p`` lanes of ``dt`` as ``Gather`` moves them:
    for int64 lanes, those of their ``2 * p`` int32 halves (a row of ``p`` int32 offsets would not always
    start on a 32-byte block, ``2 * p`` ones do), else ``line`` itself."""
    if dt.itemsize != 8:
        return line, p, []
    pairs, out = _halves(sel, line, p)
    return pairs, halves(dt) * p, out


def halves(dt) -> int:
    """``Gather`` lanes per lane of ``dt`` (:func:`row_halves`): an int64 lane is two int32 halves."""
    return 2 if dt.itemsize == 8 else 1


def _split(sel, instr: Instr) -> list:
    """``tl.split`` of ``[.., 2]``: each half Gathers every pair's element from the pairs' layout (the
    operand's rows, or the 1-D tile a ``tl.reshape`` made the pairs of), into its own layout (rows
    padded to blocks when it has them, :func:`element_indices`)."""
    movable(instr, "`tl.split`")
    (x,) = instr.operands
    d = sel.defs.get(x.id)
    size = x.type.dtype.itemsize
    if d is not None and d.op is Op.RESHAPE and contiguous(d.operands[0].type.shape, sel.align):
        src, step = sel.ref(d.operands[0]), 2
    else:
        src, step = sel.ref(x), sel.pitch(x)
    n = sel.count(instr.results[0])
    offsets, out = element_indices(sel, "pair", instr.results[0], instr.loc)
    out.append(Call("Muls", offsets, (offsets,), (Lit(step * size, I32), lit(n)), inplace=True))
    for k, half in enumerate(instr.results):
        if k:
            out.append(Call("Adds", offsets, (offsets,), (Lit(size, I32), lit(n)), inplace=True))
        out += gather_lanes(sel, sel.ref(half), src, offsets, n)
    return out


def _side_by_side(sel, a, b, loc) -> tuple[Ref, int, list]:
    """``a`` and ``b`` copied into one scratch tile, ``b`` from the first block after ``a``: (tile, gap, calls)."""
    per_blk = sel.platform.block_bytes // a.type.dtype.itemsize
    gap, rest = (-(-sel.count(x) // per_blk) * per_blk for x in (a, b))
    both = sel.scratch("pairs", a.type.dtype, gap + rest, loc)
    return both, gap, [copy_blocks(sel, Ref(both.buf, both.dtype, lit(0), gap), sel.ref(a), loc),
                       Call("DataCopy", Ref(both.buf, both.dtype, lit(gap), gap + rest),
                            (Ref(sel.bufs[b.id], b.type.dtype, lit(0), rest),), (lit(rest),))]


def _join(sel, instr: Instr) -> list:
    """``tl.join(a, b)`` as a tile of pairs ``[.., 2]`` (``[n, 2]`` in UB, rows padded to ``pitch``): one
    Gather, lane ``(i, k)`` reading element ``i`` of ``a`` for ``k == 0`` and of ``b`` otherwise (the
    padding repeats ``b``'s), at its position in their rows (:func:`row_positions`)."""
    movable(instr, "`tl.join`")
    a, b = instr.operands
    v = instr.result
    both, gap, out = _side_by_side(sel, a, b, instr.loc)
    p, size = sel.pitch(v), v.type.dtype.itemsize
    n = a.type.numel * p
    lane, index = lane_index(sel, "laneIndex", n, 1, instr.loc)
    row = sel.scratch("pairIndex", I32, n, instr.loc)
    side = sel.scratch("pairSide", I32, n, instr.loc)
    out += index + [
        Call("ShiftRight", row, (lane,), (Lit(p.bit_length() - 1, I32), lit(n))),  # i = lane / pitch
        Call("Muls", side, (row,), (Lit(-p, I32), lit(n))),
        Call("Add", side, (side, lane), (lit(n),), inplace=True),  # k = lane - i * pitch
        Call("Mins", side, (side,), (Lit(1, I32), lit(n)), inplace=True),
        Call("Muls", side, (side,), (Lit(gap, I32), lit(n)), inplace=True),
        *row_positions(sel, row, n, a, instr.loc),
        Call("Add", lane, (row, side), (lit(n),), inplace=True),
        Call("Muls", lane, (lane,), (Lit(size, I32), lit(n)), inplace=True)]
    return out + gather_lanes(sel, sel.ref(v), both, lane, n)


def _interleave(sel, instr: Instr) -> list:
    """``tl.interleave(a, b)``: ``a`` and ``b`` side by side in one scratch tile, then one Gather of the
    result's element ``e`` (:func:`element_indices`) from element ``e >> 1`` of ``a`` or ``b`` (offset
    ``position(e >> 1) * size + (e - 2 * (e >> 1)) * gap * size``, :func:`row_positions`)."""
    movable(instr, "`tl.interleave`")
    v = instr.result
    a, b = _joined(sel, instr.operands[0]).operands
    n, size = sel.count(v), v.type.dtype.itemsize
    both, gap, out = _side_by_side(sel, a, b, instr.loc)
    lane, index = element_indices(sel, "interleave", v, instr.loc)
    out += index
    half = sel.scratch("pairIndex", I32, n, instr.loc)
    odd = sel.scratch("oddLane", I32, n, instr.loc)
    out += [Call("ShiftRight", half, (lane,), (Lit(1, I32), lit(n))),
            Call("Muls", odd, (half,), (Lit(-2, I32), lit(n))),
            Call("Add", odd, (odd, lane), (lit(n),), inplace=True),
            Call("Muls", odd, (odd,), (Lit(gap * size, I32), lit(n)), inplace=True),
            *row_positions(sel, half, n, a, instr.loc),
            Call("Muls", half, (half,), (Lit(size, I32), lit(n)), inplace=True),
            Call("Add", lane, (half, odd), (lit(n),), inplace=True)]
    return out + gather_lanes(sel, sel.ref(v), both, lane, n)


def _transpose(sel, instr: Instr) -> list:
    (x,), v = instr.operands, instr.result
    (rows, cols), size = x.type.shape, v.type.dtype.itemsize
    if 1 in (rows, cols):  # one row and one column hold their elements in the same order: a copy
        return [copy_blocks(sel, sel.ref(v), sel.ref(x), instr.loc)]
    movable(instr, "`tl.trans`")
    src_pitch, dst_pitch = sel.pitch(x), sel.pitch(v)
    line = sel.scratch("transposeRow", I32, dst_pitch, instr.loc)
    out = [Call("CreateVecIndex", line, (), (Lit(0, I32), lit(dst_pitch)), loc=instr.loc),
           Call("Muls", line, (line,), (Lit(src_pitch * size, I32), lit(dst_pitch)), inplace=True),
           Call("Mins", line, (line,), (Lit((rows - 1) * src_pitch * size, I32), lit(dst_pitch)), inplace=True)]
    line, q, pair = row_halves(sel, line, dst_pitch, v.type.dtype)
    offsets = sel.scratch("transposeOffsets", I32, cols * q, instr.loc)
    j = sel.fresh("j")
    out += pair + [For(j, lit(0), lit(cols), lit(1), (Call(
        "Adds", view(offsets, Bin(BinOp.MUL, j, lit(q))), (line,), (Bin(BinOp.MUL, j, lit(size)), lit(q))),), True)]
    return out + gather_lanes(sel, sel.ref(v), sel.ref(x), offsets, cols * dst_pitch, halves=True)


def _cat(sel, instr: Instr) -> list:
    a, b = instr.operands
    v = instr.result
    per_blk = sel.platform.block_bytes // v.type.dtype.itemsize
    split = sel.count(a)
    if split % per_blk:  # a tile without rows (8-bit and bool ones are moved as float16, :mod:`.intops`)
        return _cat_gathered(sel, instr)
    dst, dt = sel.ref(v), v.type.dtype
    rest = -(-sel.count(b) // per_blk) * per_blk
    return [copy_blocks(sel, Ref(dst.buf, dt, lit(0), split), sel.ref(a), instr.loc),
            Call("DataCopy", Ref(dst.buf, dt, lit(split), split + rest), (Ref(sel.bufs[b.id], dt, lit(0), rest),),
                 (lit(rest),))]


def _cat_gathered(sel, instr: Instr) -> list:
    """``tl.cat(a, b)`` of tiles without rows (1-D, ``[M, 1]``) whose ``b`` starts inside a block: both
    side by side in a scratch tile (``b`` from the block after ``a``), then one Gather of lane ``j`` from
    ``j`` or, for ``j >= na``, from ``j + gap - na`` (``min(max(j - na + 1, 0), 1)`` selects the shift)."""
    movable(instr, "`tl.cat`")
    a, b = instr.operands
    v = instr.result
    n, na, size = v.type.numel, a.type.numel, v.type.dtype.itemsize
    both, gap, out = _side_by_side(sel, a, b, instr.loc)
    lane, index = lane_index(sel, "catLanes", n, 1, instr.loc)
    shift = sel.scratch("catShift", I32, n, instr.loc)
    out += index + [
        Call("Adds", shift, (lane,), (Lit(1 - na, I32), lit(n))),
        Call("Maxs", shift, (shift,), (Lit(0, I32), lit(n)), inplace=True),
        Call("Mins", shift, (shift,), (Lit(1, I32), lit(n)), inplace=True),
        Call("Muls", shift, (shift,), (Lit(gap - na, I32), lit(n)), inplace=True),
        Call("Add", lane, (lane, shift), (lit(n),), inplace=True),
        Call("Muls", lane, (lane,), (Lit(size, I32), lit(n)), inplace=True)]
    return out + gather_lanes(sel, sel.ref(v), both, lane, n)


__all__ = ["element_indices", "gather_lanes", "int32_view", "lane_index", "movable", "row_halves", "row_positions",
           "select"]
