"""A launch: the kernel prepared once (its schedule, batchable loops, lazy loads, accumulators and stores
computed in place), then run chunk by chunk of programs."""
from __future__ import annotations

import gc
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import numerics
from ..dtypes import PointerType, float32
from ..errors import InputValueError
from ..ir.core import Block, GroupOp, Instr, Kernel, Op, walk
from ..ir.provenance import STORES, access_roots
from . import races, state
from .compute import UNIFORM_LEAVES
from .dispatch import COMPACT, HANDLERS, LOOPS, NOT_BATCHED
from .memory import defer
from .state import Step, Batch, Memory, Prepared, Programs
from .values import Array


def run(kernel: Kernel, args: Sequence[Any], grid: Sequence[int]) -> None:
    """Run ``kernel`` over ``grid`` (1 to 3 extents) on ``args``, given in ``kernel.param_names`` order.

    Pointer parameters take NumPy arrays (or strided views) of the pointee dtype (bfloat16 as
    ``ml_dtypes.bfloat16``), written in place; scalar parameters take Python or NumPy scalars.
    Raises :class:`ascdsl.OutOfBoundsError` for an unmasked access outside its array, and
    :class:`ascdsl.CompilationError` for a loop whose step is zero.
    """
    if not 1 <= len(grid) <= 3 or any(int(g) < 0 for g in grid):
        raise InputValueError(f"the grid must be 1 to 3 non-negative extents, got {tuple(grid)}")
    grid = tuple(int(g) for g in grid) + (1,) * (3 - len(grid))
    if len(args) != len(kernel.params):
        raise InputValueError(f"kernel {kernel.name} takes {len(kernel.params)} arguments "
                              f"({', '.join(kernel.param_names)}), got {len(args)}")
    memory = Memory()
    values = [memory.bind(name, p.type.dtype, a) if isinstance(p.type.dtype, PointerType)
              else np.array([a]).astype(numerics.np_dtype(p.type.dtype))
              for name, p, a in zip(kernel.param_names, kernel.params, args)]
    programs = grid[0] * grid[1] * grid[2]
    prepared = _prepare(kernel)
    memory.roots = prepared.roots
    memory.share(prepared.written)
    if programs > 1:
        memory.stamps = {k: np.zeros(memory.flats[k].size, np.int32) for k in prepared.shared}
    chunk = max(1, programs if prepared.barrier else state.CHUNK_ELEMENTS // prepared.largest)
    collecting = gc.isenabled()
    gc.disable()  # a launch makes many short-lived, acyclic objects: reference counts free them
    try:
        with np.errstate(all="ignore"):
            for start in range(0, programs, chunk):
                chunk_programs = Programs(memory, grid, prepared, start, min(start + chunk, programs))
                chunk_programs.run_block(kernel.body, values)
    finally:
        if collecting:
            gc.enable()


_prepared: dict[int, tuple[Kernel, Prepared]] = {}


def _prepare(kernel: Kernel) -> Prepared:
    hit = _prepared.get(id(kernel))
    if hit is not None and hit[0] is kernel:
        return hit[1]
    leaves = {i.result.id: UNIFORM_LEAVES[i.op](i) for i in walk(kernel.body) if i.op in UNIFORM_LEAVES}
    for leaf in leaves.values():
        if isinstance(leaf, Array):
            leaf.flags.writeable = False  # shared by every launch
    roots, ops = access_roots(kernel), {id(i): i.op for i in walk(kernel.body)}
    atomics = any(op in GroupOp.ATOMIC for op in ops.values())
    written = None if atomics else frozenset().union(*(r for i, r in roots.items() if ops[i] in STORES))
    batches = {id(i): b for i in walk(kernel.body) if i.op is Op.FOR and (b := _batch(i, roots)) is not None}
    stamping = races.stores_read_after(kernel, roots)
    prepared = Prepared(_largest(kernel.body), _schedule(kernel.body, {}), leaves,
                         {i: next(iter(r)) for i, r in roots.items() if len(r) == 1}, written, batches,
                         _lazy_loads(kernel.body), _accumulators(kernel.body), kernel.poison,
                         Op.SYNC_ALL in ops.values(), races.checked_buffers(kernel, roots, stamping), stamping)
    if len(_prepared) >= 256:
        _prepared.clear()
    _prepared[id(kernel)] = (kernel, prepared)
    return prepared


def _largest(block: Block) -> int:
    """Elements of the largest tile ``block`` (or a block nested in it) defines or uses."""
    return max([1] + [v.type.numel for i in walk(block) for v in (*i.results, *i.operands)])


LAZY_USERS = GroupOp.ELEMENTWISE | frozenset({Op.SUM, Op.MAX, Op.MIN, Op.STORE})
"""Ops whose handlers take a :class:`ascdsl.affine.Loaded` tile (the others would need its elements)."""


def _lazy_loads(block: Block, into: set[int] | None = None) -> frozenset[int]:
    """The ids of the loads (in ``block`` and the blocks nested in it) whose result only instructions
    of its own block use, all of them :data:`LAZY_USERS` (as the value a store writes, for stores)."""
    into = set() if into is None else into
    users: dict[int, list[tuple[Instr, int]]] = {}
    for instr in block.body:
        for k, v in enumerate(instr.operands):
            users.setdefault(v.id, []).append((instr, k))
        for region in instr.regions:
            _lazy_loads(region, into)
            for inner in walk(region):
                for v in inner.operands:
                    users.setdefault(v.id, []).append((inner, -1))  # used in a nested block
    for instr in block.body:
        if instr.op in (Op.LOAD, Op.BLOCK_LOAD) and all(
                user.op in LAZY_USERS and k >= 0 and (user.op is not Op.STORE or k == 1)
                for user, k in users.get(instr.result.id, ())):
            into.add(id(instr))
    return frozenset(into)


def _accumulators(body: Block) -> tuple[frozenset[int], frozenset[int]]:
    """The float32 sums that a ``for`` loop accumulates from +0.0 and only ``tl.sum`` reads
    (``acc = tl.zeros(...)``, ``acc += x`` in the loop, ``tl.sum(acc)`` after it): the ids of those
    ``acc + x`` and of the sums.

    While ``acc`` is +0.0 in every lane, ``acc + x`` may be ``x`` itself (no pass over the tile): the
    two differ only where ``x`` is -0.0 (``+0.0 + -0.0`` is +0.0), and adding more terms keeps them
    apart only where every term is -0.0. The spec's lanes, +0.0 plus terms, are never -0.0, so neither
    is their sum; the sum of these lanes is the same, or -0.0 where the spec's is +0.0, whatever the
    order of the additions (adding a zero to a nonzero or a NaN changes nothing, and two zeros give
    -0.0 only when both are -0.0, rounding to nearest): the sums add +0.0 to their result (whether
    NumPy's sum starts from +0.0 or from the first term)."""
    uses: dict[int, list[Instr]] = {}
    made: dict[int, Instr] = {}
    for instr in walk(body):
        for v in instr.operands:
            uses.setdefault(v.id, []).append(instr)
        made.update((v.id, instr) for v in instr.results)
    only = lambda value, instr: [id(i) for i in uses.get(value.id, ())] == [id(instr)]  # noqa: E731
    adds, sums = set(), set()
    for loop in walk(body):
        inner = loop.regions[0] if loop.op is Op.FOR else None
        if inner is None or not inner.body or inner.body[-1].op is not Op.YIELD:
            continue
        for init, arg, step, result in zip(loop.operands[3:], inner.args[1:], inner.body[-1].operands, loop.results):
            zero, readers = made.get(init.id), uses.get(result.id, [])
            add = next((i for i in inner.body if i.op is Op.ADD and i.results == (step,)), None)
            if zero is not None and zero.op is Op.CONST and zero.attr("value") == 0 \
                    and math.copysign(1.0, zero.attr("value")) > 0 and result.type.dtype == float32 \
                    and add is not None and arg in add.operands and only(arg, add) and only(step, inner.body[-1]) \
                    and readers and all(r.op is Op.SUM and r.result.type.dtype == float32 for r in readers):
                adds.add(id(add))
                sums.update(id(r) for r in readers)
    return frozenset(adds), frozenset(sums)


def _batch(loop: Instr, roots: dict[int, frozenset[int]]) -> Batch | None:
    """What running the iterations of ``loop`` at once needs, or None when its body forbids it."""
    body = loop.regions[0]
    inner = list(walk(body))
    if len(loop.operands) > 3 or any(i.op in NOT_BATCHED or i.op in GroupOp.ATOMIC for i in inner):
        return None
    if any(i.op in STORES for loop_ in inner if loop_.op in LOOPS for region in loop_.regions for i in walk(region)):
        return None  # batched, an inner loop's stores would land in another order
    stores = tuple(roots[id(i)] for i in inner if i.op in STORES)
    if any(a & b for k, a in enumerate(stores) for b in stores[k + 1:]):
        return None
    defined = {v.id for i in inner for v in i.results} | {v.id for i in (loop, *inner) for r in i.regions
                                                          for v in r.args}
    free = tuple(dict.fromkeys(v.id for i in inner for v in i.operands if v.id not in defined))
    loads = frozenset().union(*(roots[id(i)] for i in inner if i.op in (Op.LOAD, Op.BLOCK_LOAD)))
    return Batch(free, loads, stores, _largest(body))


def _schedule(block: Block, into: dict[int, list[Step]]) -> dict[int, list[Step]]:
    """For ``block`` and every nested block (keyed by ``id``): per instruction, its handler, operand
    ids, result ids, the ids of the block's own values (arguments and results) that are not used
    after it, the operand shapes for handlers that want whole tiles, and the positions of the operands
    an elementwise op may compute its result into (:func:`.state._donated`). A use inside a region counts as
    a use by the instruction that owns the region."""
    last = {v.id: 0 for v in block.args}
    for i, instr in enumerate(block.body):
        for region in instr.regions:
            _schedule(region, into)
        for user in (instr, *(inner for region in instr.regions for inner in walk(region))):
            last.update((v.id, i) for v in user.operands if v.id in last)
        last.update((v.id, i) for v in instr.results)
    dead: list[list[int]] = [[] for _ in block.body]
    for value_id, i in last.items():
        if block.body:
            dead[i].append(value_id)
    fused = _stored_directly(block)
    into[id(block)] = [(defer if i in fused else HANDLERS[instr.op], instr, [v.id for v in instr.operands],
                        [v.id for v in instr.results], dead[i],
                        None if instr.op in COMPACT else tuple(v.type.shape for v in instr.operands),
                        () if i in fused or instr.op not in GroupOp.ELEMENTWISE else
                        tuple(k for k, v in enumerate(instr.operands) if v.id in dead[i]))
                       for i, instr in enumerate(block.body)]
    return into


FUSED = frozenset({Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.MAXIMUM, Op.MINIMUM})
"""Ops whose result a store may compute in place (NumPy gives their exact IEEE result whatever the
layout of the output)."""
PURE = GroupOp.ELEMENTWISE | GroupOp.LEAF | GroupOp.SHAPE


def _stored_directly(block: Block) -> set[int]:
    """The indices of instructions of ``block`` whose one use is a store later in the block with
    only arithmetic between them: their result can be computed into the stored memory."""
    uses: dict[int, int] = {}
    for instr in walk(block):
        for v in instr.operands:
            uses[v.id] = uses.get(v.id, 0) + 1
    made = {instr.result.id: i for i, instr in enumerate(block.body) if len(instr.results) == 1}
    fused = set()
    for j, store in enumerate(block.body):
        if store.op is not Op.STORE:
            continue
        value = store.operands[1].id
        while value is not None:  # and down a chain of such ops, each the one use of the next
            i = made.get(value)
            if i is None or block.body[i].op not in FUSED or uses[value] != 1 or not all(
                    between.op in PURE for between in block.body[i + 1:j]):
                break
            fused.add(i)
            value = next((v.id for v in block.body[i].operands if v.id in made), None)
    return fused
