"""The handlers of control flow (``for`` loops, batched or not, ``while``, ``if``), of grid barriers and of
``tl.device_print``."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import numerics
from ..errors import CompilationError, Error
from ..ir.core import Block, Instr
from . import races, state
from .state import Batch, Programs
from .values import Array, repeat, select


def for_(P: Programs, instr: Instr, lower: Array, upper: Array, step: Array, *carried: Array) -> list[Array]:
    body = instr.regions[0]
    iv_dtype = numerics.np_dtype(body.args[0].type.dtype)
    uniform = lower.shape[0] == upper.shape[0] == step.shape[0] == 1
    batch = P.prepared.batches.get(id(instr))
    # the same bounds in every program: the programs iterate together (iterations run as copies only
    # of a single program: of more, they would repeat each program's values for the induction variable)
    if uniform and (P.n > 1 or batch is None):
        return _for_uniform(P, instr, iv_dtype, int(lower[0]), int(upper[0]), int(step[0]), carried)
    lower, upper, step = (x.astype(np.int64) for x in (lower, upper, step))
    zero = step == 0 if P.active is None else (step == 0) & P.active
    if zero.any():
        raise _zero_step(instr)
    trips = np.maximum(-((lower - upper) // step), 0)
    if P.active is not None:
        trips = np.where(P.active, trips, 0)
    if batch is not None and P.order is None and trips.max() > 1 \
            and P.n * batch.largest * 2 <= state.BATCH_CHUNKS * state.CHUNK_ELEMENTS \
            and P.memory.independent(batch):
        try:
            _for_batched(P, body, batch, lower, step, trips, iv_dtype)
            return []
        except Error:  # run again in order, so that the error is the one the order gives
            pass
    if uniform:
        return _for_uniform(P, instr, iv_dtype, int(lower[0]), int(upper[0]), int(step[0]), carried)
    carried = list(carried)
    for k in range(int(trips.max())):
        live = trips > k
        live = None if live.all() else live
        new = P.run_masked(live, body, [(lower + k * step).astype(iv_dtype), *carried])
        carried = new if live is None else [select(live, n, c) for n, c in zip(new, carried)]
    return carried


def _for_uniform(P: Programs, instr: Instr, iv_dtype: np.dtype, lower: int, upper: int, step: int,
                 carried: Sequence[Array]) -> list[Array]:
    """A loop whose bounds are the same in every program: its iterations one after another, for all."""
    carried, body = list(carried), instr.regions[0]
    if step == 0:
        if P.active is None or P.active.any():
            raise _zero_step(instr)
        return carried
    for i in range(lower, upper, step):
        carried = P.run_block(body, [np.array([i], dtype=iv_dtype), *carried])
    return carried


def _zero_step(instr: Instr) -> CompilationError:
    return CompilationError(instr.loc, "range() step must not be zero",
                            hint="make the step a nonzero value in every program")


def while_(P: Programs, instr: Instr, *carried: Array) -> list[Array]:
    """Each active program iterates while its condition holds; the others keep their values."""
    test, body = instr.regions
    carried, live = list(carried), P.active
    while True:
        (cond,) = P.run_masked(live, test, carried)
        go = cond if live is None else cond & live
        if not go.any():
            return carried
        live = None if live is None and go.all() else go
        new = P.run_masked(live, body, carried)
        carried = new if live is None else [select(live, n, c) for n, c in zip(new, carried)]


def _for_batched(P: Programs, body: Block, batch: Batch, lower: Array, step: Array, trips: Array,
                 iv_dtype: np.dtype) -> None:
    """The iterations of a loop run together, as many at once as fit :data:`.state.BATCH_CHUNKS` chunks: each
    program's next iterations as copies of it, side by side (a program's tiles are often adjacent in memory), or
    interleaved when that is how the induction variable increases (a grid-stride loop's programs take
    adjacent rows). Stores whose lanes overlap land in the loop's order (:attr:`.state.Programs.order`)."""
    total, n = int(trips.max()), P.n
    budget = state.BATCH_CHUNKS * state.CHUNK_ELEMENTS
    fit = max(1.0, budget / (n * batch.largest))  # iterations a group holds, as even as can be
    group = -(-total // max(1, round(total / fit)))
    trips, lower, step = (np.broadcast_to(x, (n,)) for x in (trips, lower, step))
    env = {i: P.env[i] for i in batch.free}
    for k0 in range(0, total, group):
        copies = min(group, total - k0)
        interleaved, k, iv = _layout(lower, step, np.arange(k0, k0 + copies), n)
        live = repeat(trips, copies, interleaved) > k
        sub = P.copies(copies, env, None if live.all() else live, interleaved)
        sub.run_block(body, [iv.astype(iv_dtype)])


def _layout(lower: Array, step: Array, ks: Array, n: int) -> tuple[bool, Array, Array]:
    """``(interleaved, k, iv)``: how :func:`_for_batched` lays out iterations ``ks`` of ``n`` programs as
    copies (:meth:`.state.Programs.copies`), each copy's iteration number and induction variable. Each
    program's copies in a row unless only interleaving them makes the induction variable increase."""
    for interleaved in (False, True):
        k = repeat(ks, n, not interleaved)
        iv = repeat(lower, ks.size, interleaved) + k * repeat(step, ks.size, interleaved)
        if (iv[1:] >= iv[:-1]).all():
            return interleaved, k, iv
    k = repeat(ks, n, True)
    return False, k, repeat(lower, ks.size) + k * repeat(step, ks.size)


def if_(P: Programs, instr: Instr, cond: Array) -> list[Array]:
    then, orelse = instr.regions
    if cond.shape[0] == 1:
        return P.run_block(then if cond[0] else orelse, [])
    yes = cond if P.active is None else cond & P.active
    no = ~cond if P.active is None else ~cond & P.active
    if not no.any():
        return P.run_block(then, [])
    if not yes.any():
        return P.run_block(orelse, [])
    a, b = P.run_masked(yes, then, []), P.run_masked(no, orelse, [])
    return [select(cond, x, y) for x, y in zip(a, b)]


def sync_all(P: Programs, instr: Instr) -> tuple[()]:
    """A grid barrier (``sync_block_all``). Every program of the launch runs in one chunk (:func:`.runner.run`),
    in lockstep: each instruction before the barrier, stores included, ran in all of them before it, and nothing
    after it (no batched loop, no deferred store, no lazy load of a buffer the kernel writes) ran earlier. What is
    left to check is that they all reach it: a program that does not, as control flow on loaded values may leave
    it, would make the others wait for ever on the device."""
    if P.active is not None and not P.active.all():
        idle, busy = int((~P.active).argmax()), int(P.active.argmax())
        raise CompilationError(instr.loc, f"program {P.program(busy)} reaches this grid barrier and program "
                               f"{P.program(idle)} does not: on the device the programs would wait for ever",
                               hint="every program must reach the barrier the same number of times: make the "
                                    "branches and loop bounds around it the same in every program")
    races.clear(P)
    return ()


def print_(P: Programs, instr: Instr, *values: Array) -> tuple[()]:
    prefix = instr.attr("prefix", "")
    for p in range(len(P.pid[0])):  # printing is per program by nature
        if P.active is None or P.active[p]:
            text = " ".join(str(v[p if v.shape[0] > 1 else 0]) for v in values)
            print(" ".join(s for s in (f"pid {P.program(p)}", prefix, text) if s))
    return ()
