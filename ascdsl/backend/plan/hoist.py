"""Loop-invariant index tiles on the loop's first trip only: a pass over the kernel IR between selection and
UB planning.

Selection lowers each tile op where the DSL computes it, so the offsets a ``Gather`` reads (a reshape
between UB layouts, a transpose, a permute, a join or split: :mod:`.relayout`, :mod:`.rank3`) are rebuilt
on the vector unit at every trip of the loops around them, some twenty dependent calls with a barrier
each, though they never change. :func:`hoist` puts such calls, in every ``for`` of ``Process``, under a
test of the loop's first trip (``if (var == start)``, an :class:`~.kir.If` marked ``first``, where the
first of them was in its segment's compute): later trips read what the first computed, and the UB
planner keeps those buffers for the whole loop. The candidates are the calls that write a ``Gather``'s
offsets in the loop, or a buffer such a call reads (the chain that builds them); a call moves with every
other call that writes its buffers, and a set of calls moves when

* each is a vector call (or a chunk loop of them: a ``For`` inside a segment's compute) whose views are
  all of ``TILE`` or ``SCRATCH`` buffers (not queue buffers, which hold one trip's loads and stores);
* no expression it reads names a scalar the loop defines (its variable, a ``Let`` or ``Set`` inside it),
  a chunk loop's own variable aside;
* every buffer it reads is written, inside the loop, only by calls of the set (or not at all: it was
  computed before the loop);
* every call of the kernel that writes one of its buffers is in the set, and no other statement of the
  loop reads that buffer before the set's last write of it (a read between two writes, such as a
  ``Gather`` between the offsets' ``Muls`` and their ``Adds`` (:func:`.relayout._split`), sees the first).

The first trip computes what it did, where it did, so a loop of one trip runs as before. Computed before
the loop instead, the calls' dispatch on the scalar unit (some 30 of them) delayed every core's first load
(8x2023x15 ``log_softmax_grad``, one slab a core: 1.70 -> 1.73x of the floor). Other invariant work
(constant tiles, scalar broadcasts) stays where it is: a buffer live across a loop changes which slots the
loop's own buffers share, and with it, at some tile extents, the structure :mod:`.lift` compares
(``reduce_tail_recompute_kernel``'s ``Brcb`` of its row sum, so kept, made ``BLOCK_R`` no runtime extent).
Loops inside a compute stage (chunk loops), ``while`` loops and the program loop itself are not
considered.
"""
from __future__ import annotations

import dataclasses

from .. import kir
from ..kir import Bin, BinOp, Call, For, Pipe, Role, Segment

_UB = (Role.TILE, Role.SCRATCH)


def hoist(k: kir.Kernel, platform=None) -> kir.Kernel:
    """The pass of the module docstring."""
    writers: dict = {}
    for s in kir.walk(k.process):
        if isinstance(s, Call):
            for b in s.writes:
                writers.setdefault(b, set()).add(id(s))
    process = _body(k.process, writers)
    return k if process == k.process else dataclasses.replace(k, process=process)


def _body(body, writers: dict) -> tuple:
    """``body`` with the invariant work of each of its loops (and theirs) on the loop's first trip only."""
    out: list = []
    for s in body:
        if isinstance(s, For):
            s = dataclasses.replace(s, body=_body(_lift(s, s.body, writers), writers))
        elif isinstance(s, kir.If):
            s = dataclasses.replace(s, body=_body(s.body, writers), orelse=_body(s.orelse, writers))
        out.append(s)
    return tuple(out)


def _calls(s) -> list[Call]:
    return [x for x in kir.walk((s,)) if isinstance(x, Call)]


def _own_vars(s) -> set:
    return {x.var for x in kir.walk((s,)) if isinstance(x, For)}


def _local(s, variant: set) -> bool:
    """Statement ``s`` of a segment's compute may move on its own: vector calls on UB tiles and scratch,
    reading no scalar in ``variant``."""
    if isinstance(s, For):
        if not s.body or not all(isinstance(x, Call) for x in s.body):
            return False
    elif not isinstance(s, Call):
        return False
    calls = _calls(s)
    if any(c.pipe is not Pipe.V or not isinstance(c.dst, kir.Ref) or any(not isinstance(o, kir.Ref) for o in c.srcs)
           for c in calls):
        return False
    if any(r.buf.role not in _UB for c in calls for r in (*c.refs, *c.read_views)):
        return False
    return not (set(kir.vars_read((s,))) - _own_vars(s)) & variant


def _lift(loop: For, body: tuple, writers: dict) -> tuple:
    """``body`` (of ``loop``) with the set of the module docstring, taken from the compute of the segments
    directly in it, under a test of the loop's first trip where the first of each segment was."""
    variant = {loop.var}
    for s in kir.walk(body):
        if isinstance(s, (kir.Let, kir.Set)):
            variant.add(s.var)
        elif isinstance(s, For):
            variant.add(s.var)
    if set(kir.vars_read((kir.Let(loop.var, loop.start),))) & variant - {loop.var}:
        return body  # a start the loop changes (a member it sets): no test of the first trip
    steps = [s for s in kir.walk(body) if not isinstance(s, (For, kir.If, kir.While, Segment, kir.Run))]
    position = {id(s): n for n, s in enumerate(steps)}
    inside: dict = {}
    for c in steps:
        for b in c.writes if isinstance(c, Call) else ():
            inside.setdefault(b, []).append(id(c))
    local = [s for seg in body if isinstance(seg, Segment) for s in seg.compute if _local(s, variant)]
    index = _index_tiles(steps, local)
    chosen = {id(s): s for s in local if all(b in index for c in _calls(s) for b in c.writes)}
    while True:
        calls = {id(c): c for s in chosen.values() for c in _calls(s)}
        keep = {}
        for key, s in chosen.items():
            mine = _calls(s)
            written = {b for c in mine for b in c.writes}
            read = {b for c in mine for b in c.reads}
            if any(not writers[b] <= calls.keys() for b in written):
                continue
            if any(c not in calls for b in read for c in inside.get(b, ())):
                continue
            if any(_read_early(b, steps, position, calls) for b in written):
                continue
            keep[key] = s
        if keep.keys() == chosen.keys():
            break
        chosen = keep
    if not chosen:
        return body
    first = Bin(BinOp.EQ, loop.var, loop.start)
    return tuple(dataclasses.replace(s, compute=_guarded(s.compute, chosen, first, loop.loc))
                 if isinstance(s, Segment) else s for s in body)


def _guarded(compute: tuple, chosen: dict, first, loc) -> tuple:
    """``compute`` with its statements in ``chosen`` in one first-trip ``If`` where the first of them was."""
    moved = tuple(s for s in compute if id(s) in chosen)
    if not moved:
        return compute
    at = next(n for n, s in enumerate(compute) if id(s) in chosen)
    rest = [s for s in compute if id(s) not in chosen]
    return tuple(rest[:at]) + (kir.If(first, moved, loc, first=True),) + tuple(rest[at:])


def _index_tiles(steps: list, local: list) -> set:
    """The buffers of the loop's ``Gather`` offsets and those the calls in ``local`` that write them read."""
    out = {c.srcs[1].buf for c in steps if isinstance(c, Call) and c.api == "Gather"}
    grown = True
    while grown:
        more = {b for s in local for c in _calls(s) if set(c.writes) & out for b in c.reads}
        grown = not more <= out
        out |= more
    return out


def _read_early(b, steps: list, position: dict, calls: dict) -> bool:
    """A statement of the loop that is not among ``calls`` reads buffer ``b`` before the last of them writes it."""
    last = max(position[key] for key, c in calls.items() if b in c.writes)
    return any(position[id(s)] < last and id(s) not in calls and _reads(s, b) for s in steps)


def _reads(s, b) -> bool:
    if isinstance(s, Call):
        return b in s.reads
    return any(isinstance(x, kir.Elem) and x.ref.buf == b for e in kir.exprs(s) for x in kir.sub_exprs(e))


__all__ = ["hoist"]
