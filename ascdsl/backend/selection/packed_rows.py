"""Row reductions and row broadcasts of rows packed at a pitch of ``K`` (:mod:`.packed`; issue 24).

Row ``i`` of a packed ``[R, K]`` float32 tile starts at element ``K * i``: block ``K * i / 8``, lane offset
``o = K * i % 8``. The offset cycles with a period of ``c = 8 / gcd(K, 8)`` rows, and the rows of one residue
class lie ``K * c / 8`` blocks apart, so each class is one bit-mode call whose repeats are its rows, under the mask of
a row's ``K`` lanes shifted by the class's offset, in calls of at most 255 repeats:

* a reduction along axis 1: ``WholeReduce*`` of the class's rows into their places in the ``[R]`` result
  (dstRepStride ``c``);
* ``x op s[:, None]``: the sums' ``Brcb`` blocks (block ``i``: row ``i``'s value, :func:`.reduce.brcb`) read at
  block stride 0 and repeat stride ``c``, the packed operands and the result at ``K * c / 8`` blocks.

A row past one repeat (``o + K > 64``) spans ``ceil((o + K) / 64)`` repeats from its first block: repeat ``q`` of
the class's rows is one more such call, 8 blocks further, under the mask of the row's lanes there (from ``o`` in
the first, to the row's end in the last, all 64 between). A reduction writes repeat ``q``'s partial results into a
``[R]`` area of their own, which ``Add`` (``Max``, ``Min``) folds into the result after the class loop; a class
whose rows span fewer repeats than another's skips the call (an ``if`` on its offset) and leaves the reduction's
identity, which ``Duplicate`` wrote there first. Rows may span up to ``K * c / 8 <= 255`` blocks (the 8-bit
repeat stride).

The classes are the iterations of an ``independent`` loop a repeat (their calls touch disjoint lanes: one barrier
before the loop, none between them), each computing its mask (:attr:`.kir.Struct.BIT_MASK`), first block and row count.
Everything else on a packed tile is count form over its ``R * K`` lanes (:func:`.compute._arith`).
"""
from __future__ import annotations

from math import gcd

from ... import dtypes
from ...ir.core import Instr, Op
from ..kir import Bin, BinOp, Brace, Call, CInt, Cond, Conv, For, If, Let, Lit, Struct, Var, add, lit, minimum
from . import isel, repeat
from .reduce import FOLD, ORDER, WHOLE, brcb
from .repeat import located, view
from .selector import Selector
from .support import F32

IDENTITY = {Op.SUM: 0.0, Op.MAX: float("-inf"), Op.MIN: float("inf")}
"""What a repeat's partial result is where a class's rows do not reach the repeat."""


def select(sel: Selector, instr: Instr) -> list | None:
    """The calls of a reduction along axis 1 of a packed tile, or of arithmetic with a fused ``[R, 1]`` operand
    whose result is packed (a :data:`.select.RULES` rule), else None."""
    if instr.op in WHOLE and instr.operands[0].id in sel.packed:
        return located(_reduce(sel, instr), instr.loc)
    if len(instr.results) == 1 and instr.result.id in sel.packed and any(x.id in sel.fused for x in instr.operands):
        return located(_broadcast(sel, instr), instr.loc)
    return None


def spans(k: int, per_blk: int, per_rep: int) -> tuple[int, int]:
    """The fewest and the most repeats a row of ``k`` float32 spans from its first block over the lane offsets
    its rows take (multiples of ``gcd(k, per_blk)``)."""
    return -(-k // per_rep), -(-(k + per_blk - gcd(k, per_blk)) // per_rep)


def _per_class(sel: Selector, rows: int, k: int, call) -> list:
    """``call(q, mask, first, first row, repeats, repeat stride in blocks, c)`` for every residue class of the lane
    offsets of ``rows`` rows of ``k`` elements, in an independent loop over the classes for each repeat ``q`` a row
    spans (and over calls of 255 rows of a class when a class has more; always in the general form, where ``rows``
    is a run-time extent); ``first`` is the element of the class's first row's block of repeat ``q``. A loop per
    repeat: the calls of one repeat touch disjoint lanes, those of the next the same buffers (one barrier a loop)."""
    per_blk, per_rep, most = sel.platform.block_bytes // 4, sel.platform.repeat_bytes // 4, sel.platform.max_repeats
    c = per_blk // gcd(k, per_blk)
    stride = k * c // per_blk
    fewest, spanned = spans(k, per_blk, per_rep)
    lanes = Var(sel.fresh_key(), CInt.UINT64, "rowLanes")  # a row's lanes at lane offset 0 (its first repeat's)
    out: list = [Let(lanes, Conv(CInt.UINT64, Lit((1 << min(k, per_rep)) - 1, dtypes.int64)))]
    for q in range(spanned):
        mask = Var(sel.fresh_key(), Struct.BIT_MASK, "mask")
        r = sel.fresh("r")
        at = Bin(BinOp.MUL, lit(k), r)  # the class's first row's first element
        offset = Bin(BinOp.MOD, at, lit(per_blk))
        first = add(Bin(BinOp.MUL, Bin(BinOp.DIV, at, lit(per_blk)), lit(per_blk)), lit(q * per_rep))
        count = Bin(BinOp.DIV, Bin(BinOp.SUB, lit(rows + c - 1), r), lit(c))  # the class's rows
        if not sel.general and -(-rows // c) <= most:
            calls = call(q, mask, first, r, repeat.u8(count), stride, c)
        else:
            j = sel.fresh("j")
            calls = [For(j, lit(0), count, lit(most), tuple(call(
                q, mask, add(first, Bin(BinOp.MUL, j, lit(stride * per_blk))), add(r, Bin(BinOp.MUL, j, lit(c))),
                repeat.u8(minimum(Bin(BinOp.SUB, count, j), lit(most))), stride, c)), True)]
        word = Bin(BinOp.SHL, lanes, offset) if q == 0 else _tail(q, k, per_rep, offset, per_blk)
        body = (Let(mask, Brace((word, Conv(CInt.UINT64, lit(0))))), *calls)
        # the classes whose rows reach repeat q (every class's when the offset-0 row does)
        out.append(For(r, lit(0), minimum(lit(c), lit(rows)) if sel.general else lit(min(c, rows)), lit(1),
                       body if q < fewest else (If(Bin(BinOp.GT, offset, lit(q * per_rep - k)), body),), True))
    return out


def _tail(q: int, k: int, per_rep: int, offset, per_blk: int):
    """The mask of a row's lanes in its repeat ``q >= 1`` from lane offset ``offset``: the low
    ``min(offset + k - q * per_rep, per_rep)`` lanes (at least one where the caller asks)."""
    full = Conv(CInt.UINT64, Lit((1 << per_rep) - 1, dtypes.int64))
    short = (q + 1) * per_rep - k  # the lanes past the row's end at offset 0
    if short <= 0:
        return full
    shift = Bin(BinOp.SUB, lit(short), offset)
    return Bin(BinOp.SHR, full, shift if short >= per_blk else Cond(Bin(BinOp.LT, offset, lit(short)), shift, lit(0)))


def _reduce(sel: Selector, instr: Instr) -> list:
    (x,) = instr.operands
    rows, k = x.type.shape
    per_blk, per_rep = sel.platform.block_bytes // 4, sel.platform.repeat_bytes // 4
    fewest, spanned = spans(k, per_blk, per_rep)
    src, dst = sel.ref(x), sel.ref(instr.result)
    parts = [dst] + [sel.scratch("part", F32, rows, instr.loc) for _ in range(1, spanned)]
    fill = [Call("Duplicate", part, (), (Lit(IDENTITY[instr.op], F32), lit(rows))) for part in parts[fewest:]]
    fold = [Call(FOLD[instr.op], dst, (dst, part), (lit(rows),), inplace=True) for part in parts[1:]]
    return fill + _per_class(sel, rows, k, lambda q, mask, first, row0, n, stride, c: [Call(
        WHOLE[instr.op], view(parts[q], row0), (view(src, first),),
        (mask, n, lit(c), lit(1), lit(stride), *ORDER[instr.op]))]) + fold


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

    def call(q, mask, first, row0, n, stride, c):
        srcs = [view(ref, Bin(BinOp.MUL, row0, lit(per_blk)) if blocks else first) for ref, blocks in operands]
        reps = Brace((lit(1), *(lit(0 if blocks else 1) for _, blocks in operands), lit(stride),
                      *(lit(c if blocks else stride) for _, blocks in operands)))
        return [Call(isel.BINARY_API[instr.op], view(sel.ref(v), first), srcs, (mask, n, reps), inplace=donors)]
    return out + _per_class(sel, rows, k, call)
