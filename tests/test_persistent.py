"""Persistent programs (ascdsl/passes/persistent.py): the programs of a launch as a grid-stride loop, the loads
every program makes (rms norm's ``gamma``) once before it. The loop gives the kernel's results bit for bit on the
interpreter, alone and batched; a load of the program's own row, a load a store of the kernel may reach and a
kernel that counts its programs itself are refused; the launch runs the form where the cost model estimates it
faster and it fits UB double-buffered (rows of 8192 float32 only with gamma's load, made once, single-buffered),
and on the simulator it equals the interpreter and is faster."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes, interpreter, sim
from ascdsl.backend import kir, simrun
from ascdsl.backend.batching import batchcost, batchrun
from ascdsl.backend.plan import tiling
from ascdsl.backend.render.ascendc import compile_variant, kernel_source
from ascdsl.bench_kernels import softmax_kernel
from ascdsl.ir import Module, Op, walk
from ascdsl.ir.text import dump, parse
from ascdsl.passes.batching import batch_programs
from ascdsl.passes.persistent import invariant_loads, persistent_programs
from ascdsl.passes.reuse import assume_disjoint
from ascdsl.platforms import get_platform
from ascdsl.testing import assert_close
from tests.backend.helpers import CANN, assert_type_checks

pytestmark = pytest.mark.usefixtures("prebuilt_module")  # the simulator kernels in few g++ runs

PLATFORM = get_platform("Ascend910B3")
ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("persistent_test_rmsnorm", ROOT / "ops" / "rmsnorm.py")
rmsnorm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rmsnorm)


def _rms(m, n):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((m, n)).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    return [x, w, np.zeros((m, n), np.float32), np.int32(n), np.float32(1e-6)]


def _kernel(jit, args, **constexprs):
    return jit.specialize(*args, **constexprs).kernels[0]


def _run(kernel, args, extra, grid):
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    interpreter.run(kernel, got + extra, (grid, 1, 1))
    return got


@pytest.mark.parametrize("m,n", [(37, 100), (13, 64)])
def test_persistent_rms_norm_gives_the_kernels_results_bit_for_bit(m, n):
    """gamma is loaded once before the loop, each row's x in it; on grids of 1 to m programs, and batched P rows
    a trip, the results are the kernel's bit for bit on the interpreter."""
    args = _rms(m, n)
    kernel = assume_disjoint(_kernel(rmsnorm.rms_norm_kernel, args, BLOCK=128))
    looped = persistent_programs(kernel)
    assert looped is not kernel and parse(dump(Module((looped,)))) == Module((looped,))
    *head, loop = looped.body.body
    assert loop.op is Op.FOR and [i.op for i in head].count(Op.LOAD) == 1  # gamma
    assert sum(i.op is Op.LOAD for i in walk(loop.regions[0])) == 1  # the row's x
    want = _run(kernel, args, [], m)
    for grid in (1, 5, m):
        assert all(g.tobytes() == w.tobytes() for g, w in zip(_run(looped, args, [np.int32(m)], grid), want))
    for p in (1, 3):
        grid = -(-m // p) if p == 3 else 4  # a trip of P rows; 4 programs of one row a trip
        got = _run(batch_programs(looped, p), args, [np.int32(m), np.int32(grid * p)], grid)
        assert all(g.tobytes() == w.tobytes() for g, w in zip(got, want))


@ascdsl.jit
def scale_by_first_row_kernel(x_ptr, w_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    """Each row times the first row of x (the same bytes in every program), out written over x's rows."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    w = tl.load(x_ptr + cols, mask=cols < n_cols)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols)
    tl.store(out_ptr + row * n_cols + cols, x * w + tl.load(w_ptr + cols, mask=cols < n_cols), mask=cols < n_cols)


@ascdsl.jit
def row_scale_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    tl.store(out_ptr + row * n_cols + cols, tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols) * 2.0,
             mask=cols < n_cols)


def test_refusals():
    """No invariant load: a load of the program's own row (rows of x), a load a store may reach (the first row of
    x where out may be x: arguments not known disjoint), a kernel that strides over its programs itself."""
    x = np.zeros((4, 64), np.float32)
    own = assume_disjoint(_kernel(row_scale_kernel, [x, x, np.int32(64)], BLOCK=64))
    assert persistent_programs(own) is own and invariant_loads(own)[0] == []
    shared = _kernel(scale_by_first_row_kernel, [x, x[0], x, np.int32(64)], BLOCK=64)
    assert persistent_programs(shared) is shared
    apart = assume_disjoint(shared)  # x and out disjoint: both loads of every program's bytes go before the loop
    assert [i.op for i in invariant_loads(apart)[0]].count(Op.LOAD) == 2
    rms = assume_disjoint(_kernel(rmsnorm.rms_norm_kernel, _rms(4, 64), BLOCK=64))
    assert persistent_programs(rms) is not rms
    strided = assume_disjoint(_kernel(softmax_kernel, [x, x, 64, 64, 4, 64], BLOCK_SIZE=64))
    assert persistent_programs(strided) is strided


def test_a_load_made_once_before_the_loop_gets_one_buffer():
    """Rows of 8192 float32: gamma, loaded once before the persistent form's loop, gets a single-buffered queue (a
    second buffer would overlap nothing), x's queue two; with two for gamma the form was over the UB double-buffered
    (it ran single-buffered, nothing overlapping). The rows kernel, which has no loop, keeps gamma's two: the next
    program's gamma loads while this one computes. The launch may now take the form."""
    m, n = 256, 8192
    kernel = assume_disjoint(_kernel(rmsnorm.rms_norm_kernel, _rms(2, n), BLOCK=n))
    plan = compile_variant(batch_programs(persistent_programs(kernel), 1), PLATFORM).plan
    queues = {s.first.hint: (s.num, s.once) for s in plan.slots if s.position is not kir.Position.VECCALC}
    assert queues == {"gammaIn": (1, True), "x": (2, False)} and not plan.single_buffered
    assert plan.total_bytes == 131_392  # gamma held in its queue buffer (test_a_load_made_once_stays_in_its_queue)
    rows = compile_variant(kernel, PLATFORM).plan
    assert [s.num for s in rows.slots if s.position is not kir.Position.VECCALC] == [2, 2]
    assert batchrun._persistent(kernel, m, PLATFORM, (), 1) is not None


def test_a_load_made_once_stays_in_its_queue_buffer():
    """gamma, loaded once before the persistent form's loop and read in it, stays in its queue buffer to the program's
    end (the class's member, freed last in Process) where it was copied to a TBuf: rows of 8192 float32 need
    131,328 bytes of UB where they needed 164,096 (gamma twice), 131,392 with two 32-byte tiles in slots of their own
    (``ubplan.SPREAD``: one vector barrier fewer a row); the rows kernel, which has no loop, copies nothing (164,928
    bytes, 32 more than before the spread plan)."""
    kernel = assume_disjoint(_kernel(rmsnorm.rms_norm_kernel, _rms(2, 8192), BLOCK=8192))
    looped = compile_variant(batch_programs(persistent_programs(kernel), 1), PLATFORM)
    (gamma,) = looped.held
    assert gamma.role is kir.Role.INPUT and looped.process[-1] == kir.Queue(kir.QOp.FREE, gamma)
    calls = [c for st in looped.stages for c in kir.walk(st.body) if isinstance(c, kir.Call)]
    assert not any(c.api == "DataCopy" and c.srcs[0].buf == gamma for c in calls)
    assert [s.first.hint for s in looped.plan.slots if s.position is kir.Position.VECCALC] == ["tmp", "fold", "tmp",
                                                                                                "scalar"]
    assert looped.plan.total_bytes == 131_392
    rows = compile_variant(kernel, PLATFORM)
    assert rows.held == () and rows.plan.total_bytes == 164_928


def _rms_on_the_simulator(m, n, grid):
    """rms norm of ``m`` rows of ``n`` float32, the persistent form at one row a trip launched unbatched on ``grid``
    programs: its generated source, the simulator's results and the interpreter's."""
    args = _rms(m, n)
    kernel = batch_programs(persistent_programs(assume_disjoint(_kernel(rmsnorm.rms_norm_kernel, args, BLOCK=n))), 1)
    extra = [np.int32(m), np.int32(grid)]
    want = _run(kernel, args, extra, grid)
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    simrun.run(kernel, got + extra, (grid, 1, 1), PLATFORM.name)
    source = kernel_source("rms", tiling.variants([kernel]), tiling.layout("RmsTiling", [kernel]), PLATFORM)
    return source, got[2], want[2]


def test_a_single_buffered_load_on_the_simulator(monkeypatch):
    """The persistent form of rms norm 256x8192 initialises gamma's queue with one buffer; on a grid of the core
    count and of twice it (each core's second program allocates gamma's one buffer again, after its first
    program's loop has freed it) the simulator, hazard checks on, gives the interpreter's results (the row's sum
    in the vector unit's order); on the core count, in the cost model's estimate of the persistent launch."""
    monkeypatch.setenv("ASCDSL_BATCH", "0")
    cores = PLATFORM.vector_core_count
    for grid in (cores, 2 * cores):
        with sim.record() as runs:
            source, got, want = _rms_on_the_simulator(256, 8192, grid)
        assert "InitBuffer(inQueueGamma, 1, 32768)" in source and "InitBuffer(inOutQueueX, 2, 32768)" in source
        assert_close(got, want, dtypes.float32)
        if grid == cores:  # the launch's own form: the model's estimate of it within 1% (11.26 us against 11.28)
            args = _rms(2, 8192)
            kernel = assume_disjoint(_kernel(rmsnorm.rms_norm_kernel, args, BLOCK=8192))
            model = batchrun._persistent(kernel, 256, PLATFORM, batchrun.scalar_fields(kernel, args), 1)
            assert runs[0].stats.est_us == pytest.approx(model.est_us, rel=0.01)


@CANN
def test_a_single_buffered_load_type_checks(tmp_path):
    """The persistent form with gamma's single-buffered queue compiles against the real CANN headers (g++, clang++)."""
    kernel = assume_disjoint(_kernel(rmsnorm.rms_norm_kernel, _rms(2, 8192), BLOCK=8192))
    assert_type_checks("persistent_rms_norm", [batch_programs(persistent_programs(kernel), 1)], tmp_path)


def _persistent_and_planned(monkeypatch, m, n):
    """rms norm of ``m`` rows of ``n`` float32 on disjoint arrays: the launch's choice, and the simulator's estimate of
    it and of the launch planned without the persistent form, each checked against the interpreter."""
    args = _rms(m, n)
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    rmsnorm.rms_norm_kernel[(m,)](*want, BLOCK=5056)
    kernel = batchrun.specialised(_kernel(rmsnorm.rms_norm_kernel, args, BLOCK=5056), args, PLATFORM, m)
    fields = batchrun.scalar_fields(kernel, args)
    c = batchrun.plan(kernel, m, PLATFORM, fields)
    assert c.run.persistent and c.label == f"{c.p} (persistent)" and c.grid == PLATFORM.vector_core_count
    assert batchrun.PERSISTENT_FORM in batchrun.describe(_kernel(rmsnorm.rms_norm_kernel, args, BLOCK=5056), (m, 1, 1),
                                                         PLATFORM, args)
    step = batchrun._step(persistent_programs(kernel), c.p, PLATFORM, fields, rows=True, persistent=True)
    assert isinstance(step, batchcost.Step) and step.once > 0  # gamma's load and copy, once a program
    whole = batchrun._plan(kernel, m, PLATFORM, fields)
    measured = {}
    for name, choice in (("persistent", c), ("planned", whole)):
        got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        monkeypatch.setattr(batchrun, "plan", lambda k, programs, plat, *rest, choice=choice: choice)
        with sim.record() as runs:
            rmsnorm.rms_norm_kernel[(m,)](*got, BLOCK=5056, backend="sim")
        measured[name] = runs[0].stats.est_us
        assert_close(got[2], want[2], dtypes.float32)
    return c, measured


def test_persistent_launch_on_the_simulator(monkeypatch):
    """rms norm of 100 rows of 5000 float32: the launch runs the persistent form (gamma once a core); simulated it
    equals the interpreter and is faster than the launch planned without it by the model's margin."""
    c, measured = _persistent_and_planned(monkeypatch, 100, 5000)
    assert measured["persistent"] < measured["planned"] * (1 - batchrun.MARGIN)


def test_persistent_estimate_agrees_with_the_simulator(monkeypatch):
    """The model's estimate of the persistent launch is within 1% of the simulator's (100x5000: 2.947 us against
    2.959): the cores whose loop skips the last trip leave their HBM share to the rest, and the first trip's load
    follows the invariant loads on MTE2 while V copies them."""
    c, measured = _persistent_and_planned(monkeypatch, 100, 5000)
    assert measured["persistent"] == pytest.approx(c.run.est_us, rel=0.01)


def test_the_model_counts_each_cores_trips():
    """Trip k of every core starts at row k * grid * P: 3000 rows at P = 9 on 40 cores give the first cores 9 full
    trips (81 rows where the mean is 75), at P = 5 each core 15 trips of 5; the launch tries the P that leaves the
    busiest core fewest rows. Each program's trips: row r is in trip r // P // grid of program r // P % grid."""
    assert batchcost.persistent_trips(3000, 9, 40) == [9] * 9
    assert batchcost.persistent_trips(3000, 5, 40) == [5] * 15
    assert batchcost.persistent_trips(300, 1, 40) == [1] * 8
    assert batchcost.persistent_trips(90, 2, 40) == [2, 2]  # trip 1 from row 80: rows 80 and 81 on program 0
    for programs, p, grid in ((100, 1, 40), (90, 2, 40), (3000, 9, 40), (203, 3, 40), (7, 2, 4)):
        trips = [[0] * -(-programs // (grid * p)) for _ in range(grid)]  # row r: batch r // p of the loop's stride
        for r in range(programs):
            trips[r // p % grid][r // p // grid] += 1
        assert [batchcost.persistent_trips(programs, p, grid, q) for q in range(grid)] == [
            [t for t in rows if t] for rows in trips]
    assert batchrun._balanced(3000, 9, 40) == 5 and batchrun._balanced(300, 2, 40) == 2
