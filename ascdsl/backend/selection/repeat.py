"""Repeat-form loops over the rows of a padded 2-D tile, and tile-scalar ops through a scalar block.

A row of a ``[M, N]`` tile is ``pitch`` elements; a repeat-form op covers one repeat
(``platform.repeat_bytes``) of up to ``platform.max_repeats`` rows per call, its repeat stride being
the pitch in blocks (8 bits). The helpers here build the kernel-IR loops over column chunks and row
chunks those limits need; every chunk loop is ``independent`` (its iterations touch disjoint lanes).

In the *general* form (``sel.general``, for kernels whose tile extents become tiling fields:
:mod:`.lift`) no decision depends on an extent: chunk loops are always loops (running once, or zero
times, where the static form has a single call), masks and row-per-call counts are expressions, so
the code has one structure for every extent and :mod:`.lift` can turn its extents into fields.
"""
from __future__ import annotations

import dataclasses

from ..kir import BinOp, Bin, Brace, Call, CInt, Cond, Conv, For, If, Lit, Ref, add, as_expr, is_lit, lit, minimum


def u8(e):
    """``e`` (an int or an expression) as the ``uint8_t`` CANN declares for a repeat count and a repeat
    stride. Every caller bounds ``e`` to 0..255 (a minimum with the repeat limit, a stride that is 0 past
    the limit, or the run-time branch around the call), so the cast is explicit and never truncates."""
    return Conv(CInt.UINT8, as_expr(e))


def mask(cols: int, per_rep: int, c, aligned: bool = True, general: bool = False):
    """Lanes of the repeat starting at column ``c`` (an expression) of ``cols`` columns; ``aligned``:
    ``c`` is a multiple of the repeat."""
    if general:
        return minimum(lit(cols) if is_lit(c, 0) else Bin(BinOp.SUB, lit(cols), c), lit(per_rep))
    if aligned and cols % per_rep == 0:
        return lit(per_rep)
    if isinstance(c, Lit):
        return lit(min(cols - c.value, per_rep))
    rest = Bin(BinOp.SUB, lit(cols), c)
    return rest if cols <= per_rep else minimum(rest, lit(per_rep))


def over_columns(sel, start, cols: int, per_rep: int, body, independent: bool = True) -> list:
    """``body(c)`` for each repeat-wide column chunk ``c`` from ``start`` (an expression) to ``cols``."""
    if sel.general:
        c = sel.fresh("c")
        return [For(c, start, lit(cols), lit(per_rep), tuple(body(c)), independent)]
    if start == lit(0) and cols <= per_rep:
        return body(lit(0))
    if cols <= per_rep:  # at most one chunk
        return [If(Bin(BinOp.LT, start, lit(cols)), tuple(body(start)))]
    c = sel.fresh("c")
    return [For(c, start, lit(cols), lit(per_rep), tuple(body(c)), independent)]


def over_rows(sel, rows: int, count, pitch_blocks: int, body) -> list:
    """``body(r, repeats, rep_stride)`` over ``count`` rows (at most ``rows``), one repeat per row,
    in calls of at most ``max_repeats`` repeats; one row per call when the pitch exceeds the 8-bit
    stride."""
    most = sel.platform.max_repeats
    if sel.general:  # rows per call and the repeat stride chosen at run time
        fits = Bin(BinOp.LE, lit(pitch_blocks), lit(most))
        per_call, stride_expr = Cond(fits, lit(most), lit(1)), u8(Cond(fits, lit(pitch_blocks), lit(0)))
        r = sel.fresh("r")
        reps = u8(minimum(Bin(BinOp.SUB, count, r), per_call))
        return [For(r, lit(0), count, per_call, tuple(body(r, reps, stride_expr)), True)]
    per = most if pitch_blocks <= most else 1
    stride = pitch_blocks if per > 1 else 0
    if rows <= per:
        return body(lit(0), count, stride)
    r = sel.fresh("r")
    reps = lit(1) if per == 1 else minimum(Bin(BinOp.SUB, count, r), lit(per))
    return [For(r, lit(0), count, lit(per), tuple(body(r, reps, stride)), True)]


def row(r, pitch: int):
    """The element offset of row ``r`` (an expression) of a tile with row ``pitch``."""
    return lit(0) if is_lit(r, 0) else Bin(BinOp.MUL, r, lit(pitch))


def view(ref: Ref, offset=None) -> Ref:
    """``ref`` moved by ``offset`` (an expression inside a chunk loop), still bounded by the whole
    view's extent."""
    if offset is None or is_lit(offset, 0):
        return ref
    return Ref(ref.buf, ref.dtype, add(ref.offset, offset), ref.extent)


def located(stmts: list, loc) -> list:
    """``stmts`` with ``loc`` on the first one (the ``// file.py:LINE`` comment of a DSL op)."""
    if stmts and isinstance(stmts[0], (Call, For, If)):
        stmts = [dataclasses.replace(stmts[0], loc=loc), *stmts[1:]]
    return stmts


def scalar_block(sel, api: str, dst: Ref, tile: Ref, scalar, n: int, scalar_first: bool, loc,
                 mode=None) -> list:
    """``dst = tile api scalar`` (or ``scalar api tile``): ``scalar`` fills one block that the
    repeat-form op reads with block and repeat stride 0, in calls of at most ``max_repeats``
    repeats. With a ``CMPMODE`` ``mode`` the op is ``Compare`` into the bit mask ``dst`` (``n`` whole
    repeats, a multiple of 4 per call, so every call's mask starts block-aligned)."""
    dt = tile.dtype
    per_rep, per_blk = sel.platform.repeat_bytes // dt.itemsize, sel.platform.block_bytes // dt.itemsize
    blk = sel.scratch("scalar", dt, per_blk, loc)
    out = [Call("Duplicate", blk, (), (scalar, lit(per_blk)), loc=loc)]
    params = Brace(tuple(map(lit, (1, 0, 1, 8, 0, 8) if scalar_first else (1, 1, 0, 8, 8, 0))))
    most = sel.platform.max_repeats // 4 * 4 if mode else sel.platform.max_repeats
    if sel.general:
        return out + _scalar_block_loop(sel, api, dst, tile, blk, params, n, per_rep, most, scalar_first, mode)
    start, full, tail = 0, *divmod(n, per_rep)
    while full > 0 or tail:
        reps, lanes = (min(full, most), per_rep) if full > 0 else (1, tail)
        src = tile.at(lit(start), reps * lanes, start) if start else Ref(tile.buf, dt, tile.offset, reps * lanes)
        a, b = (blk, src) if scalar_first else (src, blk)
        if mode:
            d = dst.at(lit(start // 8), -(-reps * lanes // 8), start // 8) if start else Ref(
                dst.buf, dst.dtype, dst.offset, -(-reps * lanes // 8))
            out.append(Call("Compare", d, (a, b), (mode, lit(lanes), lit(reps), params)))
        else:
            d = dst.at(lit(start), reps * lanes, start) if start else Ref(dst.buf, dst.dtype, dst.offset, reps * lanes)
            out.append(Call(api, d, (a, b), (lit(lanes), lit(reps), params), inplace=True))
        start += reps * lanes
        full, tail = (full - reps, tail) if full > 0 else (0, 0)
    return out


def _scalar_block_loop(sel, api, dst, tile, blk, params, n, per_rep, most, scalar_first, mode) -> list:
    """The general form of :func:`scalar_block`: a loop over chunks of whole repeats, then the tail
    (``Compare`` covers whole repeats only: it has no tail)."""
    full = Bin(BinOp.DIV, lit(n), lit(per_rep))
    s = sel.fresh("s")
    start = Bin(BinOp.MUL, s, lit(per_rep))

    def call(at, lanes, reps) -> Call:
        src = view(tile, at)
        a, b = (blk, src) if scalar_first else (src, blk)
        if mode:
            return Call("Compare", view(dst, Bin(BinOp.DIV, at, lit(8))), (a, b), (mode, lanes, reps, params))
        return Call(api, view(dst, at), (a, b), (lanes, reps, params), inplace=True)
    reps = u8(minimum(Bin(BinOp.SUB, full, s), lit(most)))
    out: list = [For(s, lit(0), full, lit(most), (call(start, lit(per_rep), reps),), True)]
    if not mode:
        tail = Bin(BinOp.MOD, lit(n), lit(per_rep))
        out.append(If(Bin(BinOp.GT, tail, lit(0)), (call(Bin(BinOp.MUL, full, lit(per_rep)), tail, lit(1)),)))
    return out


__all__ = ["located", "mask", "over_columns", "over_rows", "row", "scalar_block", "u8", "view"]
