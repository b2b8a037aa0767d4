"""Vector calls reordered so that :mod:`.sync` puts fewer ``PipeBarrier<PIPE_V>`` s between them.

Within a run of consecutive vector calls of a stage (a scalar statement, or a loop or branch of anything else, ends
a run; a loop of nothing but vector calls moves as one), a call may move before an earlier one where neither
touches what the other writes: the UB areas :mod:`.sync` orders by (a slot, or a byte range of a packed queue
buffer). The run is laid out greedily: at
each point, the first call in program order whose earlier dependences are laid out and that needs no barrier
after the calls laid out since the last one; a barrier only where no such call is left. So independent chains
interleave (layer norm's output over the chunks of a row kept in UB: each chunk's ``x_hat * w + b`` one product a
chunk, then one sum a chunk, a barrier between the three groups, not between every two calls). A run keeps its
order unless the new one needs fewer barriers, so code no barrier is saved in stays as selected.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .. import kir
from ..kir import Call, Pipe
from .sync import areas, meet, touches


def _movable(s) -> bool:
    """A vector call :mod:`.sync` orders by its views alone (an identity cast is no call; a call reading a UB
    element as an argument waits on the scalar unit), or a loop of nothing but such calls and loops (a chunk loop
    of one API call; a loop of one trip that rendering folds away)."""
    if isinstance(s, kir.For):
        return all(_movable(x) for x in s.body)
    return (isinstance(s, Call) and s.pipe is Pipe.V and not s.is_identity_cast
            and not any(isinstance(a, kir.Elem) for a in s.args))


@dataclass(frozen=True)
class _Touch:
    """The UB areas a movable statement reads and writes; ``always``: :mod:`.sync` puts a barrier in it whatever
    came before (a loop whose trips depend on each other is entered as if its body had just run)."""

    reads: frozenset
    writes: frozenset
    always: bool

    @staticmethod
    def of(plan, s) -> "_Touch":
        if isinstance(s, kir.For):
            w, r, _ = touches(plan, s.body)
            return _Touch(frozenset(r), frozenset(w), any(isinstance(x, kir.For) and not x.independent
                                                          for x in kir.walk((s,))))
        return _Touch(frozenset(areas(plan, s.read_views)), frozenset(areas(plan, s.write_views)), False)

    def after(self, written, read) -> bool:
        """Whether a barrier stands before it after calls that wrote ``written`` and read ``read``."""
        return self.always or meet(self.reads, written) or meet(self.writes, written | read)


def _barriers(touches: list) -> int:
    """The barriers :mod:`.sync` puts before these statements, in this order, from a barrier."""
    count, written, read = 0, set(), set()
    for t in touches:
        if t.after(written, read):
            count, written, read = count + 1, set(), set()
        written |= t.writes
        read |= t.reads
    return count


def _laid_out(touches: list) -> list[int]:
    """The greedy order of the statements of ``touches`` (see the module docstring), as indices."""
    n = len(touches)
    after = [{i for i in range(j) if meet(touches[j].reads, touches[i].writes)
              or meet(touches[j].writes, touches[i].writes | touches[i].reads)} for j in range(n)]
    order: list[int] = []
    done: set = set()
    written, read = set(), set()
    while len(order) < n:
        ready = [j for j in range(n) if j not in done and after[j] <= done]
        free = [j for j in ready if not touches[j].after(written, read)]
        if not free:
            written, read = set(), set()
        j = (free or ready)[0]
        order.append(j)
        done.add(j)
        written |= touches[j].writes
        read |= touches[j].reads
    return order


def _run(plan, run: list) -> list:
    if len(run) < 3:
        return run
    touches = [_Touch.of(plan, s) for s in run]
    order = _laid_out(touches)
    return [run[j] for j in order] if _barriers([touches[j] for j in order]) < _barriers(touches) else run


def _body(plan, body) -> tuple:
    out: list = []
    run: list = []
    for s in body:
        if _movable(s):
            run.append(s)
            continue
        out += _run(plan, run)
        run = []
        if isinstance(s, (kir.For, kir.If, kir.While)):  # a loop or branch of other statements: its own runs
            s = dataclasses.replace(s, **{f: _body(plan, getattr(s, f)) for f in ("body", "orelse")
                                          if hasattr(s, f)})
        out.append(s)
    return tuple(out + _run(plan, run))


def order(k: kir.Kernel, platform=None) -> kir.Kernel:
    """The ordering pass (see the module docstring): before :func:`.sync.sync`, on the planned, staged kernel."""
    stages = {st: dataclasses.replace(st, body=_body(k.plan, st.body)) for st in k.stages}
    return dataclasses.replace(k, process=kir.restage(k.process, stages), stages=tuple(stages[s] for s in k.stages))


__all__ = ["order"]
