"""Row reductions and row broadcasts of rows packed at a pitch of ``K`` (:mod:`.packed`; issue 24).

Row ``i`` of a packed ``[R, K]`` float32 tile starts at element ``K * i``: block ``K * i / 8``, lane offset
``K * i % 8``. The offset cycles with a period of ``c = 8 / gcd(K, 8)`` rows, and the rows of one residue class
lie ``K * c / 8`` blocks apart, so each class is one bit-mode call whose repeats are its rows, under the mask of
a row's ``K`` lanes at the class's offset (:func:`.kir.lane_mask`), in calls of at most 255 repeats:

* a reduction along axis 1: ``WholeReduce*`` of the class's rows into their places in the ``[R]`` result
  (dstRepStride ``c``);
* ``x op s[:, None]``: the sums' ``Brcb`` blocks (block ``i``: row ``i``'s value, :func:`.reduce.brcb`) read at
  block stride 0 and repeat stride ``c``, the packed operands and the result at ``K * c / 8`` blocks.

Everything else on a packed tile is count form over its ``R * K`` lanes (:func:`.compute._arith`).
"""
from __future__ import annotations

from math import gcd

from ...ir.core import Instr
from ..kir import Brace, Call, Let, Struct, Var, lane_mask, lit
from . import isel
from .reduce import ORDER, WHOLE, brcb
from .repeat import located, view
from .selector import Selector


def select(sel: Selector, instr: Instr) -> list | None:
    """The calls of a reduction along axis 1 of a packed tile, or of arithmetic with a fused ``[R, 1]`` operand
    whose result is packed (a :data:`.select.RULES` rule), else None."""
    if instr.op in WHOLE and instr.operands[0].id in sel.packed:
        return located(_reduce(sel, instr), instr.loc)
    if len(instr.results) == 1 and instr.result.id in sel.packed and any(x.id in sel.fused for x in instr.operands):
        return located(_broadcast(sel, instr), instr.loc)
    return None


def _classes(sel: Selector, rows: int, k: int) -> list:
    """The calls of each residue class ``r`` of the lane offsets: ``(mask definition or None, mask, first block,
    first row, rows, repeat stride in blocks, c)``, 255 rows of the class a call (the mask defined by the first)."""
    per_blk, most = sel.platform.block_bytes // 4, sel.platform.max_repeats
    c = per_blk // gcd(k, per_blk)
    stride = k * c // per_blk
    out = []
    for r in range(min(c, rows)):
        mask = Var(sel.fresh_key(), Struct.BIT_MASK, "mask")
        count = -(-(rows - r) // c)
        for j in range(0, count, most):
            define = Let(mask, lane_mask(k * r % per_blk, k)) if j == 0 else None
            out.append((define, mask, k * r // per_blk + j * stride, r + j * c, min(count - j, most), stride, c))
    return out


def _reduce(sel: Selector, instr: Instr) -> list:
    (x,) = instr.operands
    rows, k = x.type.shape
    src, dst, per_blk = sel.ref(x), sel.ref(instr.result), sel.platform.block_bytes // 4
    out: list = []
    for let, mask, first, row0, n, stride, c in _classes(sel, rows, k):
        out += [let] if let is not None else []
        out.append(Call(WHOLE[instr.op], view(dst, lit(row0)), (view(src, lit(first * per_blk)),),
                        (mask, lit(n), lit(c), lit(1), lit(stride), *ORDER[instr.op])))
    return out


def _broadcast(sel: Selector, instr: Instr) -> list:
    v = instr.result
    rows, k = v.type.shape
    per_blk = sel.platform.block_bytes // 4
    out: list = []
    operands = []  # (ref, is the broadcast's blocks)
    for x in instr.operands:
        if x.id in sel.fused:
            blocks, calls = (sel.brcbs[x.id], []) if x.id in sel.brcbs else brcb(sel, sel.defs[x.id])
            out += calls
            operands.append((blocks, True))
        else:
            operands.append((sel.ref(x), False))
    donors = tuple(i for i, (_, blocks) in enumerate(operands) if not blocks)
    dst = sel.ref(v)
    for let, mask, first, row0, n, stride, c in _classes(sel, rows, k):
        out += [let] if let is not None else []
        srcs = [view(ref, lit((row0 if blocks else first) * per_blk)) for ref, blocks in operands]
        reps = Brace((lit(1), *(lit(0 if blocks else 1) for _, blocks in operands), lit(stride),
                      *(lit(c if blocks else stride) for _, blocks in operands)))
        out.append(Call(isel.BINARY_API[instr.op], view(dst, lit(first * per_blk)), srcs, (mask, lit(n), reps),
                        inplace=donors))
    return out

