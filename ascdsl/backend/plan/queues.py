"""Fitting the kernel's queues to the hardware's event ids, and binding a store to a load's queue.

Every buffer of a ``TQue`` takes one of the ``platform.queue_events`` event ids of its position
(VECIN, VECOUT), and each queue is double-buffered (:data:`BUFFERS`). A kernel whose queues fit keeps
one queue per tile it loads or stores in a segment. One that does not (a kernel that stores sixteen
results) packs, on that position, the tiles of each segment into one queue buffer, each at its own
32-byte-aligned offset: one ``AllocTensor``/``EnQue`` around the copies (or the compute) that fill
them, one ``DeQue``/``FreeTensor`` around the ones that read them, their ``DataCopy`` s following each
other as before. Every segment frees its queue buffers before the next one starts, so the packed
buffers of all segments share one queue: two event ids per position, with double buffering and no
more UB than before (the queue is as large as the largest segment's tiles). The loads of a segment the
program holds to its end (:attr:`.kir.Kernel.held`, read by later segments) are packed in a queue of their own
(:data:`HELD`), one ``DeQue`` into its member, one ``FreeTensor`` where ``Process`` ends; stores are packed
largest first. The staging buffers of
gathers and scatters, each held from its ``AllocTensor`` to its ``FreeTensor`` within one stage, one
after another, then share a second queue (as large as the largest). What still does not fit is
:func:`.budget.check_budget`'s located error.

After UB planning, :func:`bind_queues` writes the queue operations of each store the plan computes in
a load's queue buffer (``TQueBind<VECIN, VECOUT>``, CANN 8.1's ``EnQue``/``DeQue`` with user positions).
"""
from __future__ import annotations

import dataclasses

from ...dtypes import DType
from ...ir.treemap import tree_map
from ...platforms import Platform
from .. import kir
from ..kir import Buf, QOp, Queue, Role, Segment

BUFFERS = 2
"""Buffers per queue (double buffering: the next tile's copy overlaps this one's compute)."""

_PARTS = {Role.INPUT: ("copy_in", "compute"), Role.OUTPUT: ("compute", "copy_out")}
"""Where a queue buffer of each role is filled (AllocTensor .. EnQue) and read (DeQue .. FreeTensor)."""

SHARED = {Role.INPUT: ("in", "", 1), Role.OUTPUT: ("out", "", 1)}
"""The queue identity the packed buffers of every segment share (a name stem in place of a pointer:
:mod:`.naming` names it ``inQueue``/``outQueue``)."""

STAGING = {Role.INPUT: ("in", "Staging", 1), Role.OUTPUT: ("out", "Staging", 1)}
"""The queue identity the staging buffers held within one stage share (``inQueueStaging``)."""

HELD = "Held"
"""The stem of the queue identity ``("in", HELD, segment)`` that packs the loads a segment makes which the
program holds to its end (:attr:`.kir.Kernel.held`): ``inQueueHeld``, one a segment, none shared (each is
held while the next is made)."""

_HINTS = {Role.INPUT: "loads", Role.OUTPUT: "stores"}


def packed(buf: Buf) -> bool:
    """Whether ``buf`` is in a queue buffer that may pack several tiles (no tile is computed over it:
    it would lie over the others)."""
    return buf.queue in SHARED.values() or buf.queue[1:2] == (HELD,)


def events(k: kir.Kernel, role: Role) -> int:
    """The event ids the queues of ``role`` take: one per buffer of each queue identity."""
    return _events(kir.buffers(k), role)


def _events(bufs: list[Buf], role: Role) -> int:
    return BUFFERS * len({b.queue for b in bufs if b.role is role})


def fit_queues(k: kir.Kernel, platform: Platform) -> kir.Kernel:
    """The queue-fitting pass (see the module docstring)."""
    bufs = kir.buffers(k)  # walked again only after a rewrite (four walks were a sixth of a lift sample's compile)
    for role in (Role.INPUT, Role.OUTPUT):
        if _events(bufs, role) > platform.queue_events:
            k = _pack(k, role, platform.block_bytes, max((b.key for b in bufs), default=0))
            bufs = kir.buffers(k)
        if _events(bufs, role) > platform.queue_events:
            k = _share_staging(k, role)
            bufs = kir.buffers(k)
    return k


def bind_queues(k: kir.Kernel, platform: Platform | None = None) -> kir.Kernel:
    """The queue-binding pass: each store the plan computes in a load's queue buffer
    (:attr:`.ubplan.Plan.bound`) is that buffer: its views view the load's buffer, the load's
    ``FreeTensor`` in Compute becomes ``EnQue<VECOUT, GM>`` in place of the store's, and CopyOut takes
    it with ``DeQue<VECOUT, GM>`` and frees it; every other ``EnQue``/``DeQue`` of a bound queue names
    its hand-over from GM (:class:`.kir.Route`)."""
    if not k.plan.bound:
        return k
    into = dict(k.plan.bound)
    loads = set(into.values())
    bound = {b for b in kir.buffers(k) if k.plan.slot(b).bound}

    def queue(s: Queue) -> tuple:
        if s.buf in into:
            return () if s.op is QOp.ALLOC else (dataclasses.replace(
                s, buf=into[s.buf], route=None if s.op is QOp.FREE else kir.Route.COMPUTED),)
        if s.buf in loads and s.op is QOp.FREE:
            return ()
        if s.buf in bound and s.op in (QOp.ENQUE, QOp.DEQUE):
            return (dataclasses.replace(s, route=kir.Route.LOADED),)
        return (s,)

    def segment(s: Segment) -> Segment:
        return dataclasses.replace(s, **{p: kir.rewrite(getattr(s, p), lambda x: queue(x) if isinstance(x, Queue) else (x,))
                                         for p in ("copy_in", "compute", "copy_out")})

    process = kir.rewrite(k.process, lambda s: (segment(s) if isinstance(s, Segment) else s,))
    return dataclasses.replace(k, process=_rebased(process, {o.key: (i, 0) for o, i in into.items()}))


def _share_staging(k: kir.Kernel, role: Role) -> kir.Kernel:
    """``k`` with the buffers of ``role`` held within one stage part (AllocTensor, EnQue, DeQue
    assigning its local again, FreeTensor: statements of the part, no two held at once) in the
    :data:`STAGING` queue."""
    moves: dict = {}
    for s in kir.walk(k.process):
        if isinstance(s, Segment):
            for part in (s.copy_in, s.compute, s.copy_out):
                held = _held_within(part, role)
                moves.update({b.key: (dataclasses.replace(b, queue=STAGING[role]), 0) for b in held})
    return dataclasses.replace(k, process=_rebased(k.process, moves)) if moves else k


def _held_within(part: tuple, role: Role) -> list[Buf]:
    """The buffers of ``role`` whose four queue operations are statements of ``part``, in order, the
    DeQue assigning the local again; none if two of them are held at once."""
    ops: dict[Buf, list] = {}
    for x in kir.walk(part):
        if isinstance(x, Queue) and x.buf.role is role:
            ops.setdefault(x.buf, []).append(x)
    at = {id(x): i for i, x in enumerate(part)}
    cycle = [QOp.ALLOC, QOp.ENQUE, QOp.DEQUE, QOp.FREE]
    spans = sorted((at[id(q[0])], at[id(q[-1])], b) for b, q in ops.items()
                   if [x.op for x in q] == cycle and all(id(x) in at for x in q) and not q[2].declare)
    if any(a[1] > b[0] for a, b in zip(spans, spans[1:])):
        return []
    return [b for _, _, b in spans]


def _pack(k: kir.Kernel, role: Role, block: int, key: int) -> kir.Kernel:
    """``k`` with each segment's buffers of ``role`` packed into one queue buffer (new ones keyed
    after ``key``, the largest key in use); the loads of a segment the program holds (:attr:`.kir.Kernel.held`)
    into one of their own (:data:`HELD`), DeQued into its member, freed once where ``Process`` ends."""
    extents = _bytes(k.process)
    held: dict[Buf, Buf] = {}  # held load -> the buffer packing it
    kept_moves: dict = {}  # their views, read by later segments too

    def pack(members: list[Buf], queue: tuple, moves: dict) -> Buf:
        nonlocal key
        key += 1
        into = (dataclasses.replace(members[0], queue=queue) if len(members) == 1 else
                Buf(key, role, members[0].dtype, _HINTS[role], queue, members[0].loc))
        base = 0
        for b in members:
            moves[b.key] = (into, base)
            base += -(-extents[b] // block) * block
        return into

    def segment(s: Segment) -> Segment:
        fill, read = _PARTS[role]
        members = held_across(getattr(s, fill), getattr(s, read), role)
        if role is Role.OUTPUT:  # the largest first, the small ones past them: over the loads' bytes where a
            members.sort(key=lambda b: -extents[b])  # row computed chunk by chunk lies over its load's (ubplan._apart)
        kept = _kept_loads(s, k.held) if role is Role.INPUT else []
        if not members and not kept:
            return s
        moves: dict = {}
        into = pack(members, SHARED[role], moves) if members else None
        keep = pack(kept, ("in", HELD, s.index), moves) if kept else None
        held.update({b: keep for b in kept})
        kept_moves.update({b.key: moves[b.key] for b in kept})
        parts = {p: _rebased(getattr(s, p), moves) for p in ("copy_in", "compute", "copy_out")}
        for b, last in ((into, QOp.FREE), (keep, None)):
            if b is not None:
                parts[fill] = _merge_ops(parts[fill], b, QOp.ALLOC, QOp.ENQUE)
                parts[read] = _merge_ops(parts[read], b, QOp.DEQUE, last)
        return dataclasses.replace(s, **parts)

    process = kir.rewrite(k.process, lambda s: (segment(s) if isinstance(s, Segment) else s,))
    if not held:
        return dataclasses.replace(k, process=process)
    keeps = tuple(dict.fromkeys(held.get(b, b) for b in k.held))
    rest = tuple(s for s in process if not (isinstance(s, Queue) and s.op is QOp.FREE and s.buf in held))
    return dataclasses.replace(k, process=_rebased(rest, kept_moves) + tuple(
        Queue(QOp.FREE, b) for b in keeps if b not in k.held), held=keeps)


def _kept_loads(s: Segment, held: tuple) -> list[Buf]:
    """The loads of segment ``s`` the program holds (:attr:`.kir.Kernel.held`), in first-ALLOC order."""
    return [x.buf for x in kir.walk(s.copy_in) if isinstance(x, Queue) and x.op is QOp.ALLOC and x.buf in held]


def _bytes(body) -> dict[Buf, int]:
    """The bytes each buffer's views reach (what the UB planner sizes it by)."""
    out: dict[Buf, int] = {}
    for s in kir.walk(body):
        refs = list(s.refs) if isinstance(s, kir.Call) else []
        refs += [x.ref for e in kir.exprs(s) for x in kir.sub_exprs(e) if isinstance(x, kir.Elem)]
        for r in refs:
            out[r.buf] = max(out.get(r.buf, 0), r.extent * r.dtype.itemsize)
    return out


def held_across(fill: tuple, read: tuple, role: Role) -> list[Buf]:
    """The buffers of ``role`` whose AllocTensor and EnQue are statements of ``fill`` and whose DeQue
    (declaring its local) and FreeTensor are statements of ``read``, each once, in first-ALLOC order."""
    ops: dict[Buf, list] = {}
    for where, body in ((0, fill), (1, read)):
        for s in kir.walk(body):
            if isinstance(s, Queue) and s.buf.role is role:
                top = any(s is x for x in body)
                ops.setdefault(s.buf, []).append((where, s.op, top and s.declare))
    want = [(0, QOp.ALLOC, True), (0, QOp.ENQUE, True), (1, QOp.DEQUE, True), (1, QOp.FREE, True)]
    return [b for b, seen in ops.items() if seen == want]


def _merge_ops(body: tuple, packed: Buf, first: QOp, last: QOp) -> tuple:
    """``body`` with the ``first`` operation of the packed members where the earliest was and their
    ``last`` (None: no such operation) where the latest was, both on ``packed``; the members' other such
    operations dropped."""
    at = [i for i, s in enumerate(body) if isinstance(s, Queue) and s.buf == packed]
    opens = [i for i in at if body[i].op is first]
    closes = [i for i in at if body[i].op is last]
    keep = {opens[0], *closes[-1:]}
    return tuple(s for i, s in enumerate(body) if i in keep or i not in at)


def _rebased(node, moves: dict):
    """``node`` with every view and queue operation of a packed member (or a bound store, base 0) on its
    packed buffer: views ``base`` bytes further (an element offset in the view's type, the extent
    counted from the packed buffer's start)."""
    def move(x):
        if isinstance(x, kir.Ref) and x.buf.key in moves:
            packed, base = moves[x.buf.key]
            n = base // x.dtype.itemsize
            offset = (kir.Lit(x.offset.value + n, x.offset.dtype) if isinstance(x.offset, kir.Lit)
                      else kir.add(kir.lit(n), x.offset) if n else x.offset)
            return kir.Ref(packed, x.dtype, offset, x.extent + n)
        if isinstance(x, Queue) and x.buf.key in moves:
            return dataclasses.replace(x, buf=moves[x.buf.key][0])
        return x if isinstance(x, (DType, Buf)) else None
    return tree_map(node, move)


__all__ = ["BUFFERS", "SHARED", "STAGING", "bind_queues", "events", "fit_queues", "held_across", "packed"]
