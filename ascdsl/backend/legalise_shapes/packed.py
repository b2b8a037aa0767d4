"""Rows packed at a pitch of ``K`` (issue 24): float32 ``[R, K]`` tiles that stay as a flat read left them.

A float32 ``[R, K]`` tile reshaped from a flat ``[R * K]`` one whose ``K`` is not a whole number of blocks would
be padded to rows of whole blocks by a ``Gather`` (:mod:`.relayout`). It is *packed* instead, row ``i`` at element
``K * i`` (block ``K * i / 8``, lane offset ``K * i % 8``), when every use of it and of the tiles computed from it
is one the packed layout serves:

* an elementwise op of two such tiles, or of one and a fused ``[R, 1]`` broadcast (:attr:`.Selector.fused`), or a
  unary op of one: count form over ``R * K`` lanes, the broadcast per residue class of the lane offsets
  (:mod:`.selection.packed_rows`);
* a ``sum``/``max``/``min`` along axis 1: per residue class, one bit-masked ``WholeReduce*``
  (:mod:`.selection.packed_rows`);
* a reshape back to ``[R * K]``: free.

Anything else (a store of the 2-D tile, a slice, a transpose, a column reduction, a loop-carried tile) keeps the
padded layout for the whole component. A row may span several repeats (each its own masked call); the rows of a
residue class lie ``K * c / 8`` blocks apart, at most 255 (the 8-bit repeat stride): ``K < 256``. ``K`` is
a constexpr, ``R`` may be a run-time extent (the general form, :attr:`.Selector.general`: the class counts are
expressions of it). ``tests/sim/kernels/packed_rows.cpp`` is the form written by hand.
"""
from __future__ import annotations

from math import gcd

from ... import dtypes
from ...ir.core import Instr, Op, Value, walk
from ...ir.symbol import equal
from ..selection import isel

REDUCTIONS = frozenset({Op.SUM, Op.MAX, Op.MIN})


def packs(instr: Instr, per_blk: int, most: int) -> bool:
    """``instr`` reshapes a flat float32 tile into rows that are not whole blocks and whose residue classes lie
    at most ``most`` blocks apart (``K * c / 8``, the 8-bit repeat stride: ``K < 256``)."""
    if instr.op is not Op.RESHAPE or instr.result.type.dtype != dtypes.float32:
        return False
    shape = instr.result.type.shape
    return (len(instr.operands[0].type.shape) == 1 and len(shape) == 2 and isinstance(shape[1], int)
            and shape[1] > 1 and shape[1] % per_blk != 0 and shape[1] // gcd(shape[1], per_blk) <= most)


def packed_values(facts) -> frozenset[int]:
    """The ids of the tile values of ``facts``' kernel (a :class:`.facts.KernelFacts`) that are packed."""
    per_blk, most = facts.platform.block_bytes // 4, facts.platform.max_repeats
    out: dict[int, Value] = {}
    for instr in walk(facts.kernel.body):  # program order: operands before their users
        if packs(instr, per_blk, most) or _computes(facts, instr, out):
            out[instr.result.id] = instr.result
    changed = True
    while changed:  # drop what has another use, and what is computed from a dropped tile
        changed = False
        for vid, v in list(out.items()):
            d = facts.defs[vid]
            if not all(_serves(facts, u, v, out) for u in facts.users.get(vid, [])) or (
                    d.op is not Op.RESHAPE and not _computes(facts, d, out)):
                del out[vid]
                changed = True
    return frozenset(out)


def _computes(facts, instr: Instr, packed: dict) -> bool:
    """``instr`` is elementwise arithmetic of packed tiles (and at most fused ``[R, 1]`` broadcasts)."""
    if instr.op not in isel.BINARY_API and instr.op not in isel.UNARY_API or len(instr.results) != 1:
        return False
    v, xs = instr.result, instr.operands
    if any(x.type.is_scalar for x in xs) or v.type.dtype != dtypes.float32:
        return False
    ours = [x for x in xs if x.id in packed and x.type == v.type]
    rest = [x for x in xs if x not in ours]
    return bool(ours) and all(x.id in facts.fused and equal(facts.defs[x.id].operands[0].type.shape[0], v.type.shape[0])
                              and equal(facts.defs[x.id].operands[0].type.shape[-1], 1) for x in rest)


def _serves(facts, user: Instr, v: Value, packed: dict) -> bool:
    """``user`` of packed ``v`` is one the packed layout serves."""
    if user.op is Op.RESHAPE:
        return len(user.result.type.shape) == 1
    if user.op in REDUCTIONS:
        return user.attr("axis") == 1 and not user.result.type.is_scalar
    return user.result.id in packed if len(user.results) == 1 else False
