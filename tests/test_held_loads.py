"""Loads a program makes once and holds (:meth:`ascdsl.backend.selection.selector.Selector.holds`): a block load of
the kernel's body, outside every loop, whose value a later loop reads stays in its queue buffer to the program's end
(a member of the class, freed last in ``Process``) where it was copied to a ``TBuf``; a segment's held loads are
packed into one queue buffer of their own (:data:`ascdsl.backend.plan.queues.HELD`), single-buffered. Layer norm's
form with ``X`` loaded once a row (the launch's unrolled loops) and ``W`` and ``B`` loaded once a core before the
persistent loop: its plan in bytes, and its results on the simulator (hazard checks on) against the interpreter's."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ascdsl import dtypes, interpreter, sim
from ascdsl.backend import kir, simrun
from ascdsl.backend.batching import batchrun
from ascdsl.backend.plan import queues, ubplan
from ascdsl.backend.plan.queues import HELD
from ascdsl.backend.render.ascendc import compile_variant, planned, vector_barriers
from ascdsl.bench_kernels import layer_norm_kernel
from ascdsl.passes import specialise
from ascdsl.passes.batching import batch_programs
from ascdsl.passes.persistent import persistent_programs
from ascdsl.passes.reuse import assume_disjoint, decided_branches, launch_trips, taken_branches, unrolled_loops
from ascdsl.platforms import get_platform
from ascdsl.testing import assert_close
from tests.backend.helpers import CANN, assert_type_checks

PLATFORM = get_platform("Ascend910B3")


def _args(m, n):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((m, n)).astype(np.float32)
    w, b = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    return [x, np.zeros_like(x), w, b, np.zeros(m, np.float32), np.zeros(m, np.float32), np.int32(n), np.int32(n),
            np.float32(1e-5)]


def x_resident_at(m, n, p, recompute=False):
    """Layer norm of ``m`` rows of ``n`` float32 (blocks of 1024) as the launch would run it with ``X`` read once:
    its loops unrolled (``recompute``: ``x - mean`` computed again for the output), the branch the launch takes, the
    persistent form (``W`` and ``B`` before the loop), ``p`` rows a trip; and its arguments."""
    args = _args(m, n)
    kernel = layer_norm_kernel.specialize(*args, BLOCK_SIZE=1024).kernels[0]
    unrolled = specialise(unrolled_loops(assume_disjoint(kernel), launch_trips(kernel, args), recompute), True,
                          PLATFORM)
    looped = persistent_programs(taken_branches(unrolled, decided_branches(unrolled, args)))
    assert looped is not unrolled
    return batch_programs(looped, p), args


def x_resident(m, n):
    """:func:`x_resident_at` one row a trip."""
    return x_resident_at(m, n, 1)


def assert_simulator_agrees(kernel, args, m: int, grid: int) -> None:
    """``kernel`` (an X-resident form of ``m`` rows) on ``grid`` programs: the simulator, hazard checks on, gives
    the interpreter's outputs."""
    extra = [np.int32(m), np.int32(grid)]
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    interpreter.run(kernel, want + extra, (grid, 1, 1))
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    simrun.run(kernel, got + extra, (grid, 1, 1), PLATFORM.name)
    for g, w in zip(got[1:6], want[1:6]):
        assert_close(g, w, dtypes.float32)


def test_held_loads_are_packed_in_a_queue_buffer_of_their_own():
    """At 256x8192 the 16 chunks of ``W`` and ``B`` (eight of each, 4 KiB) are packed in one held queue buffer of
    64 KiB, single-buffered, where the shared queue's two buffers of 64 KiB and the chunks' 16 TBuf copies were
    (315,552 bytes of UB; 250,016 so); ``Y`` is computed over ``X``'s packed chunks, chunk by chunk, and stored from
    them (``Mean`` and ``Rstd`` past them), one bound queue of two buffers of 32,832 bytes where ``X``'s and the
    stores' were two: 184,480 bytes; 186,496 with the chunks' masks over the trip's row made once before the loop
    (``passes.loops.invariant_masks``); 176,256 with the masks of the seven full chunks dropped (``unrolled_loops``:
    only the last chunk's is held); 180,608 with the tiles spread over two more ``TBuf`` slots (4,352 bytes)
    (``ubplan.SPREAD``: 46 vector barriers a program, 58 so), in the budget of 188,416."""
    kernel, _ = x_resident(256, 8192)
    k = planned(kernel, PLATFORM)
    (held,) = k.held
    assert held.queue[1] == HELD and k.process[-1] == kir.Queue(kir.QOp.FREE, held)
    queues = {(s.first.queue, s.bound): (s.num, s.bytes) for s in k.plan.slots if s.position is not kir.Position.VECCALC}
    assert queues == {(held.queue, False): (1, 65536), (("in", "", 1), True): (2, 32832)}
    ((o, i),) = k.plan.bound
    assert i.queue == ("in", "", 1) and o.queue == ("out", "", 1)
    assert k.plan.total_bytes == 180_608 <= PLATFORM.ub_budget_bytes


def test_held_loads_on_the_simulator(monkeypatch):
    """Rows of 3000 float32 (three blocks, the last part-full) in the X-resident form, on grids of one program and
    of a few (each core's loop over its rows, reading the held ``W`` and ``B`` every trip): the simulator, hazard
    checks on, gives the interpreter's results."""
    monkeypatch.setenv("ASCDSL_BATCH", "0")
    m = 7
    kernel, args = x_resident(m, 3000)
    k = compile_variant(kernel, PLATFORM)
    assert len(k.held) == 1 and len(k.plan.bound) == 1 and not k.plan.single_buffered
    for grid in (1, 3):
        assert_simulator_agrees(kernel, args, m, grid)


@CANN
def test_held_loads_type_check(tmp_path):
    """The held queue buffer, a member of the class DeQued in one stage, read in later ones and freed in Process,
    compiles against the real CANN headers (g++, clang++)."""
    kernel, _ = x_resident(7, 3000)
    assert_type_checks("held_layer_norm", [kernel], tmp_path)


def test_a_store_lies_over_a_packed_load_only_where_its_bytes_are_dead():
    """Byte range by byte range (``ubplan._apart``): a store's chunk may be written over a load's chunk the program
    reads no more, or in place over the very view it reads; not over one a later call still reads, nor where a loop
    after the write reads the load again."""
    f32 = dtypes.float32
    i = kir.Buf(1, kir.Role.INPUT, f32, "loads", queues.SHARED[kir.Role.INPUT])
    o = kir.Buf(2, kir.Role.OUTPUT, f32, "stores", queues.SHARED[kir.Role.OUTPUT])
    t = kir.Buf(3, kir.Role.TILE, f32, "tmp")

    def view(b, chunk):
        return kir.Ref(b, f32, kir.lit(1024 * chunk), 1024 * (chunk + 1))

    def add(dst, a, b, inplace=False):
        return kir.Call("Add", dst, (a, b), (kir.lit(1024),), inplace=inplace)

    def apart(body):
        return ubplan._apart(ubplan._Order(tuple(body)), i, o)

    read0, read1 = add(view(t, 0), view(i, 0), view(t, 0)), add(view(t, 0), view(i, 1), view(t, 0))
    write0, write1 = add(view(o, 0), view(t, 0), view(t, 0)), add(view(o, 1), view(t, 0), view(t, 0))
    assert apart([read0, write0, read1, write1])  # chunk by chunk, each over the one read last
    assert not apart([read0, read1, write0, read0])  # chunk 0 of the load read after its bytes were written
    assert apart([add(view(o, 0), view(i, 0), view(i, 0), inplace=True)])  # in place over the view it reads
    assert not apart([add(view(o, 0), view(i, 0), view(t, 0))])  # over a source, not in place
    assert apart([add(view(o, 0), view(i, 1), view(t, 0))])  # over chunk 0, reading chunk 1
    loop = kir.For(kir.Var(-9, dtypes.int32, "k", kir.VarKind.LOOP), kir.lit(0), kir.lit(2), kir.lit(1),
                   (read0, write0, read1))
    assert apart([kir.Queue(kir.QOp.ALLOC, i), read0, write0, read1])
    assert not apart([kir.Queue(kir.QOp.ALLOC, i), loop])  # the next trip reads chunk 0 over the store's chunk 0


@pytest.mark.parametrize("m, n, label", [(2000, 3000, "2 (persistent)"), (512, 6144, "1 (persistent)"),
                                         (256, 8192, "1 (persistent)"), (200, 10000, "1 (persistent)")])
def test_the_launch_takes_the_x_resident_form_where_it_batches(monkeypatch, m, n, label):
    """Layer norm of 2000 rows of 3000 float32: the X-resident form fits three rows a trip double-buffered (``W`` and
    ``B`` held once, not in every batched program's step), which the launch takes (1.53x of the floor looping at
    P = 6, 1.40x so; at two rows a trip since ``W`` and ``B`` are read a row a call, not a column chunk a
    call: 31.09 us, 31.28 at three before), the model's estimate within 2% of the simulator's; the simulator's
    results equal the interpreter's. Rows of 6144 fit two a trip where the rows' ``x - mean`` is computed again for
    the output, not held from the variance (``unrolled_loops(..., recompute=True)``; 217,216 bytes held, 182,656 so),
    and one a trip holding it, which the model takes with the tiles spread over UB slots (``ubplan.SPREAD``): 1.08x
    of the floor, 1.15x at two rows a trip computing again, 1.415x looping at P = 5. At 256x8192 only one row a trip
    fits (1.53x looping at P = 4; 1.20x so, the row's copies one (``plan.coalesce``) and its output's chunks issued
    together (``plan.order``)). At 200x10000 only the form that computes ``x - mean`` again fits one row a trip: 1.26x
    (1.42x looping at P = 5, which the launch ran before its tiles were spread)."""
    monkeypatch.setenv("ASCDSL_BATCH", "1")
    args = _args(m, n)
    kernel = batchrun.specialised(layer_norm_kernel.specialize(*args, BLOCK_SIZE=1024).kernels[0], args, PLATFORM, m)
    c = batchrun.plan(kernel, m, PLATFORM, batchrun.scalar_fields(kernel, args))
    assert c.label == label
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with sim.record() as runs:
        layer_norm_kernel[(m,)](*got, BLOCK_SIZE=1024, backend="sim")
    assert runs[0].stats.est_us == pytest.approx(c.run.est_us, rel=0.02)
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    layer_norm_kernel[(m,)](*want, BLOCK_SIZE=1024, backend="interpreter")
    for g, w in zip(got[1:6], want[1:6]):
        assert_close(g, w, dtypes.float32)


def test_the_loops_batched_outside_the_launch_on_the_simulator(monkeypatch):
    """Layer norm's loops (not unrolled) batched four rows a program by ``batch_programs`` directly, as the
    launch does not at this shape (a helper's path that once met clang's -Wshorten-64-to-32, an int64 row count
    passed to a stage's parameter): the generated code passes the front-end check (clang++ where installed) and
    the simulator gives the interpreter's results, the last program's rows part-full."""
    monkeypatch.setenv("ASCDSL_BATCH", "0")
    m = 9
    args = _args(m, 5000)
    kernel = batch_programs(layer_norm_kernel.specialize(*args, BLOCK_SIZE=1024).kernels[0], 4)
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    interpreter.run(kernel, want + [np.int32(m)], (3, 1, 1))
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    simrun.run(kernel, got + [np.int32(m)], (3, 1, 1), PLATFORM.name)
    for g, w in zip(got[1:6], want[1:6]):
        assert_close(g, w, dtypes.float32)


@pytest.mark.parametrize("recompute", [False, True])
@pytest.mark.parametrize("p", [1, 2])
def test_x_resident_forms_agree_with_the_kernel_on_the_interpreter(recompute, p):
    """The X-resident forms the launch runs (``x - mean`` held or computed again, one or two rows a trip) give the
    kernel's bits on the interpreter: the same operations on each row in the same order, on grids that leave
    some programs a trip more than others and the last trip part-full."""
    m = 7
    kernel, args = x_resident_at(m, 3000, p, recompute)
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    layer_norm_kernel[(m,)](*want, BLOCK_SIZE=1024)
    for grid in (1, 3):
        got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        interpreter.run(kernel, got + [np.int32(m), np.int32(grid * p)], (grid, 1, 1))
        for g, w in zip(got[1:6], want[1:6]):
            assert g.tobytes() == w.tobytes(), grid


def test_temporaries_spread_over_slots_where_ub_allows():
    """Rows of 6000 float32 X-resident at one row a trip: where UB allows, a tile takes no slot a call of the last
    ``ubplan.SPREAD`` statements touched, so each chunk's ``x - mean`` of the variance is not written where the
    previous chunk's square is read and :mod:`ascdsl.backend.plan.order` lays chunks side by side: 41 vector barriers
    a program where the compact plan (two slots fewer, 4,352 bytes less) had 50. Where the spread plan would not fit
    the budget, the compact one is taken."""
    kernel, _ = x_resident_at(300, 6000, 1)
    k = planned(kernel, PLATFORM)
    assert (k.plan.total_bytes, len(k.plan.slots), vector_barriers(k)) == (139_648, 13, 41)
    tight = dataclasses.replace(PLATFORM, ub_budget_bytes=139_648 - 32)
    compact = planned(kernel, tight)
    assert (compact.plan.total_bytes, len(compact.plan.slots), vector_barriers(compact)) == (135_296, 11, 50)
