"""Synchronisation from the per-pipe reads and writes of each UB slot.

Within a stage, a vector call that reads a slot a vector call wrote, or writes a slot one read or
wrote, since the last ``PipeBarrier<PIPE_V>`` gets a barrier before it. Slots of ``TBuf`` s may
hold results of earlier stages, so they count as written at a stage's start, as do the loads a program holds
(:attr:`.kir.Kernel.held`: their masked lanes filled in an earlier stage; other queue buffers are
ordered by their ``EnQue``/``DeQue``). A scalar read of UB (``GetValue``) of a slot written by a
vector call since the last flag gets ``SetFlag``/``WaitFlag<HardEvent::V_S>`` before it (before its
loop, when the loop reads it before writing anything); one of a VECIN slot, whose data ``DataCopy``
wrote on MTE2 (a queue's ``DeQue`` orders MTE2 before the vector pipe only), ``MTE2_S`` first. A scalar
write of UB (``SetValue``, :mod:`.scalarunit`) waits alike for the vector calls that wrote or read its slot, and
a vector call that touches a slot the scalar unit wrote gets ``SetFlag``/``WaitFlag<HardEvent::S_V>`` before it
(the scalar unit never writes a queue buffer MTE3 reads: :mod:`.selector`). The
``DataCacheCleanAndInvalid`` before a single-element load from a tensor the kernel stores to waits for
MTE3 (``MTE3_S``: every store's DMA before it has written GM). A loop
that is not ``independent`` is entered as if its own body had just run (a dependence between
iterations); an ``independent`` loop that depends on what came before waits once, before it.
Cross-pipe order between the stages is the queues' job. An identity ``Cast`` (a template's float32
form, :mod:`.templated`) is no call: it orders nothing. Dependences are tracked per slot, except in a
queue buffer that packs several tiles (:mod:`.queues`): there per byte range a view spans (from its
offset's static lower bound to its extent), so the tiles packed in it order nothing among themselves.
"""
from __future__ import annotations

import dataclasses

from .. import kir
from ..kir import Barrier, Call, Flag, For, If, Pipe, Position, Stage
from .queues import packed


class _State:
    """Areas written and read by the vector pipe since its last barrier (``written``, ``read``), written and read
    by it since the last V_S flag (``pending``, ``viewed``), loaded by MTE2 since the last MTE2_S flag
    (``loaded``) and written by the scalar unit since the last S_V flag (``scalar``)."""

    FIELDS = ("written", "read", "pending", "viewed", "loaded", "scalar")

    def __init__(self, **areas):
        for f in self.FIELDS:
            setattr(self, f, set(areas.get(f, ())))

    def copy(self) -> "_State":
        return _State(**{f: getattr(self, f) for f in self.FIELDS})

    def merge(self, other: "_State") -> None:
        for f in self.FIELDS:
            getattr(self, f).update(getattr(other, f))


_WHOLE = (0, float("inf"))


def areas(plan, views) -> set:
    """The UB areas ``views`` touch: ``(slot, start, end)`` in bytes, the whole slot but in a packed
    queue buffer."""
    out = set()
    for r in views:
        span = (r.low * r.dtype.itemsize, r.extent * r.dtype.itemsize) if packed(r.buf) else _WHOLE
        out.add((plan.slot(r.buf).index, *span))
    return out


def _whole(slots) -> set:
    return {(s, *_WHOLE) for s in slots}


def meet(a: set, b: set) -> bool:
    """Whether two sets of areas overlap."""
    return any(x[0] == y[0] and x[1] < y[2] and y[1] < x[2] for x in a for y in b)


def touches(plan, body) -> tuple[set, set, set]:
    """The areas the vector calls of ``body`` write and read, and those its ``SetValue`` s write."""
    w, r, sw = set(), set(), set()
    for s in kir.walk(body):
        if isinstance(s, Call) and s.pipe is Pipe.V and not s.is_identity_cast:
            w |= areas(plan, s.write_views)
            r |= areas(plan, s.read_views)
        sw |= _scalar_writes(plan, s)
    return w, r, sw


def _elem_areas(plan, s) -> set:
    return areas(plan, [x.ref for e in kir.exprs(s) for x in kir.sub_exprs(e) if isinstance(x, kir.Elem)])


def _scalar_writes(plan, s) -> set:
    """The areas a ``SetValue`` writes on the scalar unit."""
    return areas(plan, s.write_views) if isinstance(s, Call) and s.pipe is Pipe.S else set()


def _before_writes(plan, body) -> tuple[set, set]:
    """Slots a loop body reads with ``GetValue`` and writes with ``SetValue`` before any vector call of it
    (waited for once, before the loop, rather than in every iteration)."""
    reads: set = set()
    writes: set = set()
    for s in kir.walk(body):
        if isinstance(s, Call) and s.pipe is Pipe.V:
            break
        reads |= _elem_areas(plan, s)
        writes |= _scalar_writes(plan, s)
    return reads, writes


def _body(plan, body, st: _State) -> tuple:
    out = []
    for s in body:
        if isinstance(s, Call) and s.is_identity_cast:  # no call in the template instance it stands for
            out.append(s)
            continue
        if isinstance(s, Call) and s.pipe is Pipe.V:
            reads, writes = areas(plan, s.read_views), areas(plan, s.write_views)
            if meet(reads | writes, st.scalar):
                out.append(Flag(Pipe.S, Pipe.V))
                st.scalar = set()
            if meet(reads, st.written) or meet(writes, st.written | st.read):
                out.append(Barrier(Pipe.V))
                st.written, st.read = set(), set()
            st.written |= writes
            st.read |= reads
            st.pending |= writes
            st.viewed |= reads
        else:
            reads, writes = _elem_areas(plan, s), _scalar_writes(plan, s)
            if isinstance(s, For):
                inner = _before_writes(plan, s.body)
                reads, writes = reads | inner[0], writes | inner[1]
            if meet(reads | writes, st.loaded):
                out.append(Flag(Pipe.MTE2, Pipe.S))
                st.loaded = set()
            if meet(reads | writes, st.pending) or meet(writes, st.viewed):
                out.append(Flag(Pipe.V, Pipe.S))
                st.pending, st.viewed = set(), set()
            st.scalar |= writes
        if isinstance(s, For):
            w, r, sw = touches(plan, s.body)
            if not s.independent:
                st.written |= w
                st.read |= r
                st.scalar |= sw
            elif meet(r, st.written) or meet(w, st.written | st.read):  # once, before the loop
                out.append(Barrier(Pipe.V))
                st.written, st.read = set(), set()
            entry = st.copy()
            s = dataclasses.replace(s, body=_body(plan, s.body, st))
            st.merge(entry)
        elif isinstance(s, If):
            other = st.copy()  # the else branch starts where the then branch does; after: either
            s = dataclasses.replace(s, body=_body(plan, s.body, st), orelse=_body(plan, s.orelse, other))
            st.merge(other)
        out.append(s)
    return tuple(out)


def sync(k: kir.Kernel, platform=None) -> kir.Kernel:
    """The synchronisation pass (see the module docstring)."""
    plan = k.plan
    held = [plan.slot(b).index for b in k.held]
    tbufs = _whole([s.index for s in plan.slots if s.position is Position.VECCALC] + held)
    loads = _whole(s.index for s in plan.slots if s.position is Position.VECIN)
    # with SetValue in the kernel, a stage's TBuf slots may also hold what the scalar unit wrote, or the vector
    # pipe wrote or read, in an earlier stage
    scalar = any(_scalar_writes(plan, s) for st in k.stages for s in kir.walk(st.body))
    start = dict(written=tbufs, loaded=loads, **(dict(pending=tbufs, viewed=tbufs, scalar=tbufs) if scalar else {}))
    stages = {}
    for st in k.stages:
        stages[st] = dataclasses.replace(st, body=_body(plan, st.body, _State(**start)))

    def flagged(s) -> tuple:  # the scalar unit's re-read of stored GM
        return (Flag(Pipe.MTE3, Pipe.S), s) if isinstance(s, Call) and isinstance(s.dst, kir.Gm) else (s,)
    return dataclasses.replace(k, process=kir.restage(kir.rewrite(k.process, flagged), stages),
                               stages=tuple(stages[s] for s in k.stages))

__all__ = ["Stage", "sync"]
