"""Synchronisation from the per-pipe reads and writes of each UB slot.

Within a stage, a vector call that reads a slot a vector call wrote, or writes a slot one read or
wrote, since the last ``PipeBarrier<PIPE_V>`` gets a barrier before it. Slots of ``TBuf`` s may
hold results of earlier stages, so they count as written at a stage's start (queue buffers are
ordered by their ``EnQue``/``DeQue``). A scalar read of UB (``GetValue``) of a slot written by a
vector call since the last flag gets ``SetFlag``/``WaitFlag<HardEvent::V_S>`` before it (before its
loop, when the loop reads it before writing anything); one of a VECIN slot, whose data ``DataCopy``
wrote on MTE2 (a queue's ``DeQue`` orders MTE2 before the vector pipe only), ``MTE2_S`` first. The
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

from . import kir
from .kir import Barrier, Call, Flag, For, If, Pipe, Position, Stage
from .queues import packed


class _State:
    def __init__(self, written=(), read=(), pending=(), loaded=()):
        self.written, self.read, self.pending, self.loaded = set(written), set(read), set(pending), set(loaded)

    def copy(self) -> "_State":
        return _State(self.written, self.read, self.pending, self.loaded)

    def merge(self, other: "_State") -> None:
        self.written |= other.written
        self.read |= other.read
        self.pending |= other.pending
        self.loaded |= other.loaded


_WHOLE = (0, float("inf"))


def _areas(plan, views) -> set:
    """The UB areas ``views`` touch: ``(slot, start, end)`` in bytes, the whole slot but in a packed
    queue buffer."""
    out = set()
    for r in views:
        span = (r.low * r.dtype.itemsize, r.extent * r.dtype.itemsize) if packed(r.buf) else _WHOLE
        out.add((plan.slot(r.buf).index, *span))
    return out


def _whole(slots) -> set:
    return {(s, *_WHOLE) for s in slots}


def _meet(a: set, b: set) -> bool:
    """Whether two sets of areas overlap."""
    return any(x[0] == y[0] and x[1] < y[2] and y[1] < x[2] for x in a for y in b)


def _touches(plan, body) -> tuple[set, set]:
    w, r = set(), set()
    for s in kir.walk(body):
        if isinstance(s, Call) and s.pipe is Pipe.V and not s.is_identity_cast:
            w |= _areas(plan, s.write_views)
            r |= _areas(plan, s.read_views)
    return w, r


def _elem_areas(plan, s) -> set:
    return _areas(plan, [x.ref for e in kir.exprs(s) for x in kir.sub_exprs(e) if isinstance(x, kir.Elem)])


def _reads_before_writes(plan, body) -> set:
    """Slots a loop body reads with ``GetValue`` before any vector call of it writes (waited for once,
    before the loop, rather than in every iteration)."""
    out: set = set()
    for s in kir.walk(body):
        if isinstance(s, Call) and s.pipe is Pipe.V:
            return out
        out |= _elem_areas(plan, s)
    return out


def _body(plan, body, st: _State) -> tuple:
    out = []
    for s in body:
        if isinstance(s, Call) and s.is_identity_cast:  # no call in the template instance it stands for
            out.append(s)
            continue
        if isinstance(s, Call) and s.pipe is Pipe.V:
            reads, writes = _areas(plan, s.read_views), _areas(plan, s.write_views)
            if _meet(reads, st.written) or _meet(writes, st.written | st.read):
                out.append(Barrier(Pipe.V))
                st.written, st.read = set(), set()
            st.written |= writes
            st.read |= reads
            st.pending |= writes
        else:
            reads = _elem_areas(plan, s) | (_reads_before_writes(plan, s.body) if isinstance(s, For) else set())
            if _meet(reads, st.loaded):
                out.append(Flag(Pipe.MTE2, Pipe.S))
                st.loaded = set()
            if _meet(reads, st.pending):
                out.append(Flag(Pipe.V, Pipe.S))
                st.pending = set()
        if isinstance(s, For):
            w, r = _touches(plan, s.body)
            if not s.independent:
                st.written |= w
                st.read |= r
            elif _meet(r, st.written) or _meet(w, st.written | st.read):  # once, before the loop
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
    tbufs = _whole(s.index for s in plan.slots if s.position is Position.VECCALC)
    loads = _whole(s.index for s in plan.slots if s.position is Position.VECIN)
    stages = {}
    for st in k.stages:
        stages[st] = dataclasses.replace(st, body=_body(plan, st.body, _State(tbufs, loaded=loads)))

    def flagged(s) -> tuple:  # the scalar unit's re-read of stored GM
        return (Flag(Pipe.MTE3, Pipe.S), s) if isinstance(s, Call) and isinstance(s.dst, kir.Gm) else (s,)
    return dataclasses.replace(k, process=kir.restage(kir.rewrite(k.process, flagged), stages),
                               stages=tuple(stages[s] for s in k.stages))

__all__ = ["Stage", "sync"]
