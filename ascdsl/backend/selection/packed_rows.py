"""Row reductions and row broadcasts of rows packed at a pitch of ``K`` (:mod:`.packed`; issue 24).

Row ``i`` of a packed ``[R, K]`` float32 tile starts at element ``K * i``: block ``K * i / 8``, lane offset
``K * i % 8``. The offset cycles with a period of ``c = 8 / gcd(K, 8)`` rows, and the rows of one residue class
lie ``K * c / 8`` blocks apart, so each class is one bit-mode call whose repeats are its rows, under the mask of
a row's ``K`` lanes shifted by the class's offset, in calls of at most 255 repeats:

* a reduction along axis 1: ``WholeReduce*`` of the class's rows into their places in the ``[R]`` result
  (dstRepStride ``c``);
* ``x op s[:, None]``: the sums' ``Brcb`` blocks (block ``i``: row ``i``'s value, :func:`.reduce.brcb`) read at
  block stride 0 and repeat stride ``c``, the packed operands and the result at ``K * c / 8`` blocks.

The classes are the iterations of one ``independent`` loop (their calls touch disjoint lanes: one barrier before
the loop, none between them), each computing its mask (:attr:`.kir.Struct.BIT_MASK`), first block and row count.
Everything else on a packed tile is count form over its ``R * K`` lanes (:func:`.compute._arith`).
"""
from __future__ import annotations

from math import gcd

from ... import dtypes
from ...ir.core import Instr
from ..kir import Bin, BinOp, Brace, Call, CInt, Conv, For, Let, Lit, Struct, Var, add, lit, minimum
from . import isel, repeat
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


def _per_class(sel: Selector, rows: int, k: int, call) -> list:
    """``call(mask, first element, first row, repeats, repeat stride in blocks, c)`` for every residue class of the
    lane offsets of ``rows`` rows of ``k`` elements, in an independent loop over the classes (and over calls of
    255 rows of a class when a class has more; always in the general form, where ``rows`` is a run-time extent)."""
    per_blk, most = sel.platform.block_bytes // 4, sel.platform.max_repeats
    c = per_blk // gcd(k, per_blk)
    stride = k * c // per_blk
    lanes = Var(sel.fresh_key(), CInt.UINT64, "rowLanes")  # a row's lanes at lane offset 0
    mask = Var(sel.fresh_key(), Struct.BIT_MASK, "mask")
    r = sel.fresh("r")
    at = Bin(BinOp.MUL, lit(k), r)  # the class's first row's first element
    first = Bin(BinOp.MUL, Bin(BinOp.DIV, at, lit(per_blk)), lit(per_blk))  # its block's
    count = Bin(BinOp.DIV, Bin(BinOp.SUB, lit(rows + c - 1), r), lit(c))  # the class's rows
    if not sel.general and -(-rows // c) <= most:
        calls = call(mask, first, r, repeat.u8(count), stride, c)
    else:
        j = sel.fresh("j")
        calls = [For(j, lit(0), count, lit(most), tuple(call(
            mask, add(first, Bin(BinOp.MUL, j, lit(stride * per_blk))), add(r, Bin(BinOp.MUL, j, lit(c))),
            repeat.u8(minimum(Bin(BinOp.SUB, count, j), lit(most))), stride, c)), True)]
    words = Brace((Bin(BinOp.SHL, lanes, Bin(BinOp.MOD, at, lit(per_blk))), Conv(CInt.UINT64, lit(0))))
    return [Let(lanes, Conv(CInt.UINT64, Lit((1 << k) - 1, dtypes.int64))),
            For(r, lit(0), minimum(lit(c), lit(rows)) if sel.general else lit(min(c, rows)), lit(1),
                (Let(mask, words), *calls), True)]


def _reduce(sel: Selector, instr: Instr) -> list:
    (x,) = instr.operands
    rows, k = x.type.shape
    src, dst = sel.ref(x), sel.ref(instr.result)
    return _per_class(sel, rows, k, lambda mask, first, row0, n, stride, c: [Call(
        WHOLE[instr.op], view(dst, row0), (view(src, first),),
        (mask, n, lit(c), lit(1), lit(stride), *ORDER[instr.op]))])


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

    def call(mask, first, row0, n, stride, c):
        srcs = [view(ref, Bin(BinOp.MUL, row0, lit(per_blk)) if blocks else first) for ref, blocks in operands]
        reps = Brace((lit(1), *(lit(0 if blocks else 1) for _, blocks in operands), lit(stride),
                      *(lit(c if blocks else stride) for _, blocks in operands)))
        return [Call(isel.BINARY_API[instr.op], view(sel.ref(v), first), srcs, (mask, n, reps), inplace=donors)]
    return out + _per_class(sel, rows, k, call)
