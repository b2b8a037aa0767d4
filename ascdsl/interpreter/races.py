"""Races between programs: a load of an element another program stored since the launch began or since the last
grid barrier (``sync_block_all``) is an error at the load.

The interpreter runs a chunk's programs in lockstep, each instruction in all of them before the next, so such a
load reads the stored value; on the device the programs run apart and it may read the element before the store.
Each buffer the kernel both stores to and loads from has a stamp per element: the program that last stored it
(plus one; 0 for none since the last barrier), set by every store and checked by every load of it, which take the
addressed path for it (:func:`.memory._plan` declines). Kernels with atomics are not checked (their programs may
order themselves through them).
"""
from __future__ import annotations

import numpy as np

from ..affine import lift
from ..errors import CompilationError
from ..ir.core import GroupOp, Kernel, Op, walk
from ..ir.provenance import STORES
from .state import Programs
from .values import Array

LOADS = frozenset({Op.LOAD, Op.BLOCK_LOAD, Op.STRIDED_LOAD, Op.GATHER_LOAD, Op.SPAN_LOAD})


def shared(kernel: Kernel, roots: dict[int, frozenset[int]]) -> frozenset[int]:
    """The buffers (pointer parameter indices) ``kernel`` may both store to and load from (none with atomics)."""
    ops = list(walk(kernel.body))
    if any(i.op in GroupOp.ATOMIC for i in ops):
        return frozenset()
    of = lambda kinds: frozenset().union(*(roots[id(i)] for i in ops if i.op in kinds))  # noqa: E731
    return of(STORES) & of(LOADS)


def _owners(P: Programs, rank: int) -> Array:
    """Each program's linear index plus one, laid to broadcast against accesses of ``rank`` dims."""
    x, y, z = P.pid
    return lift((x + P.grid[0] * (y + P.grid[1] * z)).astype(np.int64) + 1, rank)


def stamp(P: Programs, buffer: int, offsets: Array, lanes: Array | None, scatter) -> None:
    """Note the programs that store at ``offsets`` (where ``lanes``) of ``buffer``, as ``scatter`` writes them."""
    stamps = P.memory.stamps.get(buffer)
    if stamps is not None:
        owners = _owners(P, offsets.ndim - 1)
        if P.order is not None and owners.shape[0] > 1:  # (the store's lanes in the order they run)
            owners = owners[P.order]
        owners = np.broadcast_to(owners if offsets.shape[0] > 1 else owners[-1:], offsets.shape)  # the last wins
        selected = (offsets, owners) if lanes is None else (offsets[lanes], owners[lanes])
        scatter(stamps, *(a.reshape(-1) for a in selected))


def check(P: Programs, instr, buffer: int, offsets: Array, lanes: Array | None) -> None:
    """A located error where a program loads at ``offsets`` (where ``lanes``) of ``buffer`` an element another
    program stored since the last barrier."""
    stamps = P.memory.stamps.get(buffer)
    if stamps is None:
        return
    owners = _owners(P, offsets.ndim - 1)
    seen = stamps[offsets]
    bad = (seen != 0) & (seen != owners)
    if lanes is not None:
        bad = bad & lanes
    if bad.any():
        lane = np.unravel_index(int(bad.argmax()), bad.shape)
        writer = int(np.broadcast_to(seen, bad.shape)[lane]) - 1
        x, rest = writer % P.grid[0], writer // P.grid[0]
        raise CompilationError(
            instr.loc, f"program {P.program(int(lane[0]))} loads element "
            f"{int(np.broadcast_to(offsets, bad.shape)[lane])} of {P.memory.names[buffer]}, which program "
            f"{(x, rest % P.grid[1], rest // P.grid[1])} stored with no grid barrier between: on the device the "
            "load may run before the store",
            hint="put al.sync_block_all('all_vector', 0) between the store and the load, where every program "
                 "reaches it (import triton.language.extra.cann.extension as al)")


def clear(P: Programs) -> None:
    """A grid barrier: every store before it is seen by every load after it."""
    for stamps in P.memory.stamps.values():
        stamps.fill(0)
