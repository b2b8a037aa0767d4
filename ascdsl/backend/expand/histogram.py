"""``tl.histogram`` as whole-tile ops (a :data:`.decompose.REWRITES` rule): the values ``x`` (flattened
to ``[N]``, in int32) as a row ``[1, N]`` compared with the bins ``[BINS, 1]`` (``tl.arange``), the
``[BINS, N]`` matches (and the mask) counted along the rows by an int32 ``tl.sum``. Values outside
``[0, BINS)`` match no bin, as the interpreter counts them. Its UB need is ``BINS * N`` int32 elements: a
histogram over the planner budget is the planner's located error.
"""
from __future__ import annotations

from ... import dtypes
from ...ir.core import Instr, Op, Type
from ..legalise_shapes import shapes
from ..legalise_shapes.ublayout import numel

I32 = dtypes.int32


def rewrite(r, instr: Instr) -> bool:
    if instr.op is not Op.HISTOGRAM:
        return False
    x, *mask = instr.operands
    v, loc, bins = instr.result, instr.loc, instr.attr("bins")
    n = numel(x.type.shape)
    if x.type.dtype != I32:
        x = r.op(Op.CAST, x.type.with_dtype(I32), (x,), (("dtype", I32),), loc)
    grid = Type(I32, (bins, n))
    row = _spread(r, r.op(Op.RESHAPE, Type(I32, (1, n)), (x,), (), loc), grid, loc)
    index = r.op(Op.ARANGE, Type(I32, (bins,)), (), (("start", 0), ("end", bins)), loc)
    column = _spread(r, r.op(Op.EXPAND_DIMS, Type(I32, (bins, 1)), (index,), (("axis", 1),), loc), grid, loc)
    hit = r.op(Op.EQ, grid.with_dtype(dtypes.bool_), (row, column), (), loc)
    count = r.const(1, I32, loc)
    if mask:  # 1 where the mask holds, as a row
        (m,) = mask
        m = r.op(Op.CAST, m.type.with_dtype(I32), (m,), (("dtype", I32),), loc)
        count = _spread(r, r.op(Op.RESHAPE, Type(I32, (1, n)), (m,), (), loc), grid, loc)
    ones = r.op(Op.WHERE, grid, (hit, count, r.const(0, I32, loc)), (), loc)
    r.op(Op.SUM, v.type, (ones,), (("axis", 1), ("keep_dims", False)), loc, result=v)
    return True


def _spread(r, x, grid: Type, loc):
    """``x`` broadcast to ``grid`` in a buffer of its own."""
    v = r.value(grid)
    shapes.spread(r, x, v, loc)
    return v


__all__ = ["rewrite"]
