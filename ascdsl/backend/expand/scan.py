"""Scans: ``tl.cumsum``, ``tl.cumprod`` and ``tl.associative_scan`` whose combine function is one
``+``, ``*``, ``maximum`` or ``minimum`` of its arguments, over whole tiles.

:func:`rewrite` (a :data:`.decompose.REWRITES` rule) keeps the scan as a ``scan`` instruction without
its region, the combine op in a ``combine`` attribute, float tiles in float32 (16-bit results rounded
once). :func:`select` lowers it:

* along the last axis (a 1-D tile, or the rows of a 2-D one), a running sum is the high-level
  ``CumSum`` (its default configuration: last axis, last row out) over rows padded to whole blocks,
  its sharedTmpBuffer at CANN 8.1's minimum (``16 * inner * 8`` bytes for float32);
* along axis 0 of a 2-D tile, any of the four ops is a log-depth (Hillis-Steele) scan: ``ceil(log2 M)``
  count-form calls, each combining every row with the row ``d`` above it (``d = 1, 2, 4, ...``), between
  two buffers (row offsets are whole blocks, so every operand is aligned);
* reversed: down the rows the same steps combine each row with the row ``d`` below; along the last
  axis a running sum from the end is ``sum(x) - cumsum(x) + x``;
* along the last axis (a 1-D tile, or every row of a 2-D one at once), the other sums (int32) and any
  ``*``, ``max`` or ``min`` scan are Hillis-Steele steps through ``Gather`` (:func:`.reorder.scan_lanes`),
  float16 in float16 and bfloat16 in float32 rounded to bfloat16 after every step (the interpreter's
  log-depth scan, bit for bit); reversed, the forward scan between two ``tl.flip``;
* other scans (tuples of tiles, other combine functions) are general scans (:mod:`.combine`).

Float sums and products run in another order than the interpreter's: within the dtype's tolerance.
"""
from __future__ import annotations

from ... import dtypes
from ...ir.core import Instr, Op
from . import combine, reorder
from ..selection import isel
from ..legalise_types import limits
from ..selection.compute import copy_blocks
from ..kir import Brace, Call, Ref, lit
from .reductions import combine_op
from ..selection.support import unsupported

F32 = dtypes.float32
COMBINE = frozenset({Op.ADD, Op.MUL, Op.MAXIMUM, Op.MINIMUM})


def rewrite(r, instr: Instr) -> bool:
    """A scan with a known combine op keeps only that op (a :data:`.decompose.REWRITES` rule)."""
    if instr.op is not Op.SCAN:
        return False
    op = combine_op(instr)
    if op not in COMBINE or instr.operands[0].type.dtype in combine.WIDE:
        combine.scan(r, instr)
        return True
    (x,), v, loc = instr.operands, instr.result, instr.loc
    axis, reverse = instr.attr("axis"), instr.attr("reverse")
    if reverse and axis == len(x.type.shape) - 1 and x.type.dtype not in limits.WIDE:  # int64: scalarunit's
        if op is Op.ADD:
            _reversed_sum(r, instr)
        else:
            _between_flips(r, instr)
        return True
    attrs = (("axis", axis), ("combine", op), ("reverse", reverse))
    lanes = axis == len(x.type.shape) - 1 and op is not Op.ADD  # reorder.scan_lanes: 16-bit floats round every step
    if not x.type.dtype.is_float or x.type.dtype == F32 or lanes and x.type.dtype == dtypes.float16:
        r.out.append(Instr(Op.SCAN, (v,), (x,), attrs, (), loc))
        return True
    if lanes:
        attrs += (("round", x.type.dtype),)
    t = r.emit(Op.SCAN, v.type.with_dtype(F32), (r.cast(x, F32, loc),), attrs, loc)
    r.cast(t, v.type.dtype, loc, result=v)
    return True


def _reversed_sum(r, instr: Instr) -> None:
    """A running sum from the end along the last axis: ``sum(x) - cumsum(x) + x``."""
    (x,), v, loc = instr.operands, instr.result, instr.loc
    axis = len(x.type.shape) - 1
    forward = Instr(Op.SCAN, (r.value(x.type),), (x,), (("axis", axis), ("reverse", False)), instr.regions, loc)
    r.instr(forward)
    total = r.op(Op.SUM, x.type.with_shape(x.type.shape[:-1] + (1,)) if axis else x.type.with_shape(()),
                 (x,), (("axis", axis), ("keep_dims", bool(axis))), loc)
    if axis:
        total = r.op(Op.BROADCAST, x.type, (total,), (), loc)
    r.op(Op.ADD, v.type, (r.op(Op.SUB, x.type, (total, forward.result), (), loc), x), (), loc, result=v)


def _between_flips(r, instr: Instr) -> None:
    """A reversed scan along the last axis: the forward scan of the flipped tile, flipped back."""
    (x,), v, loc = instr.operands, instr.result, instr.loc
    axis = len(x.type.shape) - 1
    flip = (("axis", axis),)
    flipped = r.op(Op.FLIP, x.type, (x,), flip, loc)
    forward = Instr(Op.SCAN, (r.value(v.type),), (flipped,), (("axis", axis), ("reverse", False)), instr.regions,
                    loc)
    r.instr(forward)
    r.op(Op.FLIP, v.type, (forward.result,), flip, loc, result=v)


def select(sel, instr: Instr) -> list | None:
    """The calls of a rewritten scan (a :data:`.select.RULES` rule), else None."""
    if instr.op is not Op.SCAN:
        return None
    (x,) = instr.operands
    op, axis, shape = instr.attr("combine"), instr.attr("axis"), x.type.shape
    dt = x.type.dtype
    if axis == len(shape) - 1:
        if op is Op.ADD and dt == F32:
            return _cumsum(sel, instr)
        return reorder.scan_lanes(sel, instr)
    if op not in isel.BINARY_API or op not in isel.NATIVE.get(dt, ()):
        raise unsupported(instr, f"a running `{op.value}` of {dt} tiles")
    return _down_rows(sel, instr)


def _cumsum(sel, instr: Instr) -> list:
    (x,), v = instr.operands, instr.result
    per_blk = sel.platform.block_bytes // 4
    rows, inner = (1, x.type.shape[0]) if len(x.type.shape) == 1 else (x.type.shape[0], sel.pitch(x))
    inner = -(-inner // per_blk) * per_blk
    n = rows * inner
    last = sel.scratch("lastRow", F32, inner, instr.loc)
    tmp = sel.scratch("cumSumTmp", dtypes.uint8, 16 * inner * 4 * 2, instr.loc)
    dst, src = (Ref(sel.bufs[y.id], F32, lit(0), n) for y in (v, x))
    return [Call("CumSum", dst, (last, src), (Brace((lit(rows), lit(inner))),), work=(tmp,), loc=instr.loc)]


def _down_rows(sel, instr: Instr) -> list:
    """Hillis-Steele along axis 0: step ``d`` combines row ``r`` with row ``r - d`` for ``r >= d`` (with
    row ``r + d`` for ``r < M - d`` when reversed); the other rows are copied."""
    (x,), v = instr.operands, instr.result
    reverse = instr.attr("reverse")
    api = isel.BINARY_API[instr.attr("combine")]
    rows, p = x.type.shape[0], sel.pitch(x)
    n = sel.count(x)
    if rows == 1:
        return [copy_blocks(sel, sel.ref(v), sel.ref(x), instr.loc)]
    steps = (rows - 1).bit_length()
    bufs = [sel.ref(v), sel.scratch("scanRows", x.type.dtype, n, instr.loc)]
    out, src, d = [], sel.ref(x), 1
    for i in range(steps):
        dst = bufs[(steps - 1 - i) % 2]  # the last step writes the result
        k = d * p
        if reverse:  # rows M - d .. M - 1 stay; the others take the row d below
            out.append(Call("DataCopy", dst.at(lit(n - k), k, n - k), (src.at(lit(n - k), k, n - k),), (lit(k),)))
            out.append(Call(api, Ref(dst.buf, dst.dtype, lit(0), n - k), (src, src.at(lit(k), n - k, k)),
                            (lit(n - k),)))
        else:
            out.append(copy_blocks(sel, Ref(dst.buf, dst.dtype, lit(0), k), Ref(src.buf, src.dtype, lit(0), k)))
            out.append(Call(api, dst.at(lit(k), n - k, k), (src.at(lit(k), n - k, k), src), (lit(n - k),)))
        src, d = dst, 2 * d
    out[0] = Call(out[0].api, out[0].dst, out[0].srcs, out[0].args, loc=instr.loc)
    return out


__all__ = ["rewrite", "select"]
