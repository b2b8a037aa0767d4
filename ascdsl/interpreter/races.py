"""Races between programs: a load of an element another program stored since the launch began or since the last
grid barrier (``sync_block_all``) is an error at the load.

The interpreter runs a chunk's programs in lockstep, each instruction in all of them before the next, so such a
load reads the stored value; on the device the programs run apart and it may read the element before the store.
A buffer that a load may read after a store to it (:func:`stores_read_after`) has a stamp per element: the
program that last stored it (plus one; 0 for none since the last barrier), set by those stores and checked by
every load of it, through the same strided view of the stamps as the access's of the buffer where it has one (a
tile of each program, a box), else by address (:func:`.memory._plan` declines other plans). Kernels with atomics
are not checked (their programs may order themselves through them).
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
LOOPS = frozenset({Op.FOR, Op.WHILE})


def stores_read_after(kernel: Kernel, roots: dict[int, frozenset[int]]) -> frozenset[int]:
    """The ids of the stores of ``kernel`` that a load of the same buffer may follow in its order (later in the
    kernel, or anywhere in a loop around the store): only they are stamped, only their buffers checked (none in a
    kernel with atomics). A program that loads its tile and stores it back is not checked at all."""
    ops = list(walk(kernel.body))
    if any(i.op in GroupOp.ATOMIC for i in ops):
        return frozenset()
    at = {id(i): k for k, i in enumerate(ops)}
    loops = [(at[id(i)], at[id(i)] + sum(1 for r in i.regions for _ in walk(r))) for i in ops if i.op in LOOPS]
    loads = [(at[id(i)], roots[id(i)]) for i in ops if i.op in LOADS]
    out = set()
    for store in (i for i in ops if i.op in STORES):
        k = at[id(store)]
        after = max([k] + [end for start, end in loops if start < k <= end])  # the end of its outermost loop
        around = min([k] + [start for start, end in loops if start < k <= end])
        if any(roots[id(store)] & r and (j > k or around < j <= after) for j, r in loads):
            out.add(id(store))
    return frozenset(out)


def checked_buffers(kernel: Kernel, roots: dict[int, frozenset[int]], stores: frozenset[int]) -> frozenset[int]:
    """The buffers the ``stores`` (:func:`stores_read_after`) may write."""
    return frozenset().union(*(roots[id(i)] for i in walk(kernel.body) if id(i) in stores))


def _owners(P: Programs, rank: int) -> Array:
    """Each program's linear index plus one, laid to broadcast against accesses of ``rank`` dims."""
    x, y, z = P.pid
    return lift((x + P.grid[0] * (y + P.grid[1] * z)).astype(np.int64) + 1, rank)


def stamp(P: Programs, instr, buffer: int, offsets: Array, lanes: Array | None, scatter) -> None:
    """Note the programs that store at ``offsets`` (where ``lanes``) of ``buffer``, as ``scatter`` writes them."""
    stamps = P.memory.stamps.get(buffer)
    if stamps is not None and id(instr) in P.prepared.stamping:
        P.memory.stamped.add(buffer)
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
    if stamps is not None and buffer in P.memory.stamped:
        seen = stamps[offsets]
        bad = (seen != 0) & (seen != _owners(P, offsets.ndim - 1))
        _raise_at(P, instr, buffer, bad if lanes is None else bad & lanes, seen,
                  lambda lane: int(np.broadcast_to(offsets, bad.shape)[lane]))


def _raise_at(P: Programs, instr, buffer: int, bad: Array, seen: Array, offset) -> None:
    if not bad.any():
        return
    lane = np.unravel_index(int(bad.argmax()), bad.shape)
    writer = int(np.broadcast_to(seen, bad.shape)[lane]) - 1
    x, rest = writer % P.grid[0], writer // P.grid[0]
    raise CompilationError(
        instr.loc, f"program {P.program(int(lane[0]))} loads element {offset(lane)} of {P.memory.names[buffer]}, "
        f"which program {(x, rest % P.grid[1], rest // P.grid[1])} stored with no grid barrier between: on the "
        "device the load may run before the store",
        hint="put al.sync_block_all('all_vector', 0) between the store and the load, where every program "
             "reaches it (import triton.language.extra.cann.extension as al)")


def _twin(P: Programs, buffer: int, view: Array) -> tuple[Array, int, tuple[int, ...]]:
    """The view of ``buffer``'s stamps that ``view`` is of the buffer, with its first element's offset and its
    strides, in elements."""
    flat, stamps = P.memory.flats[buffer], P.memory.stamps[buffer]
    first = (view.__array_interface__["data"][0] - flat.__array_interface__["data"][0]) // flat.itemsize
    strides = tuple(s // flat.itemsize for s in view.strides)
    twin = np.lib.stride_tricks.as_strided(stamps[first:], view.shape, tuple(s * stamps.itemsize for s in strides))
    return twin, first, strides


def _enabled(access, twin: Array) -> Array | bool:
    """The lanes of ``twin`` (a view access's box) the access enables."""
    return True if access.on is None else access.on.reshape(access.on.shape + (1,) * (twin.ndim - access.on.ndim))


def stamp_view(P: Programs, instr, buffer: int, access) -> None:
    """:func:`stamp` for a store through ``access``, one strided view of ``buffer`` (``access.view``)."""
    P.memory.stamped.add(buffer)
    twin, _, _ = _twin(P, buffer, access.view)
    owners = _owners(P, twin.ndim - 1)
    if P.order is not None and owners.shape[0] > 1:
        owners = owners[P.order]
    np.copyto(twin, owners if twin.shape[0] > 1 else owners[-1:], where=_enabled(access, twin))


def check_view(P: Programs, instr, buffer: int, access) -> None:
    """:func:`check` for a load through ``access``, one strided view of ``buffer`` (``access.view``)."""
    if buffer not in P.memory.stamped:  # (a program's loads before its stores: nothing to compare)
        return
    twin, first, strides = _twin(P, buffer, access.view)
    bad = (twin != 0) & (twin != _owners(P, twin.ndim - 1)) & _enabled(access, twin)
    lead = strides[0] if twin.shape[0] > 1 else 0
    _raise_at(P, instr, buffer, bad, twin,
              lambda lane: first + lane[0] * lead + sum(i * s for i, s in zip(lane[1:], strides[1:])))


def clear(P: Programs) -> None:
    """A grid barrier: every store before it is seen by every load after it."""
    for buffer in P.memory.stamped:
        P.memory.stamps[buffer].fill(0)
    P.memory.stamped.clear()
