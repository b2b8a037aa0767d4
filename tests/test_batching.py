"""Program batching (ascdsl/passes/batching.py): the batched kernel gives the unbatched one's results
on the interpreter, bit for bit, for every test kernel the pass applies to; the kernels it must refuse
keep their form with the reason at the kernel line; batched launches on the simulator give the
interpreter's results."""
from __future__ import annotations

import importlib.util
import io
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes, interpreter, record, sim
from ascdsl.backend.render.ascendc import compile_variant, planned
from ascdsl.backend.batching import batchcost, batchrun
from ascdsl.cli import explained
from ascdsl.bench_kernels import (add_kernel, gelu_kernel, layer_norm_kernel, log_softmax_backward_kernel,
                                  log_softmax_backward_row_kernel)
from ascdsl.ir import Module, Op, walk
from ascdsl.ir.text import dump, parse
from ascdsl.passes import run_passes
from ascdsl.passes.batching import (PROGRAMS, NotBatchable, batch_programs, batched_grid, form, refusal,
                                    split_programs)
from ascdsl.testing import assert_close
from ascdsl.bench_kernels import softmax_kernel as persistent_softmax_kernel
from tests.triton.test_tutorials import layer_norm_bwd_dwdb_kernel, layer_norm_bwd_dx_kernel

pytestmark = pytest.mark.usefixtures("prebuilt_module")
ROOT = Path(__file__).resolve().parents[1]


def _op_module(name):
    spec = importlib.util.spec_from_file_location(f"batching_test_{name}", ROOT / "ops" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


softmax_ops = _op_module("softmax")
rmsnorm_ops = _op_module("rmsnorm")
rng = np.random.default_rng(7)


def _f(shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def _launches():
    """(name, jit kernel, grid, arrays, scalars, constexprs, form): every test kernel the pass applies to,
    at shapes whose program count P does not divide."""
    m, n = 37, 100
    x, y, out = _f((m, n)), _f((m, n)), np.zeros((m, n), np.float32)
    w, b = _f(n), _f(n)
    flat = 5000
    xv, yv, ov = _f(flat), _f(flat), np.zeros(flat, np.float32)
    import ml_dtypes
    xh = _f((m, n)).astype(ml_dtypes.bfloat16)
    return [
        ("softmax row", softmax_ops.softmax_row_kernel, (m,), [x, out], [n], {"BLOCK": 128}, "rows"),
        ("softmax row bf16", softmax_ops.softmax_row_kernel, (m,), [xh, xh.copy()], [n], {"BLOCK": 128}, "rows"),
        ("softmax looped", softmax_ops.softmax_looped_kernel, (m,), [x, out], [n], {"BLOCK": 64}, "rows"),
        ("rms norm", rmsnorm_ops.rms_norm_kernel, (m,), [x, w, out], [n, np.float32(1e-6)], {"BLOCK": 128}, "rows"),
        ("layer norm forward", layer_norm_kernel, (m,),
         [x, out, w, b, np.zeros(m, np.float32), np.zeros(m, np.float32)], [n, n, np.float32(1e-5)],
         {"BLOCK_SIZE": 32}, "rows"),
        ("log-softmax backward row", log_softmax_backward_row_kernel, (m,), [x, y, out], [n, n], {"BLOCK": 128},
         "rows"),
        ("log-softmax backward rows", log_softmax_backward_kernel, (10,), [x, y, out], [m, n, n],
         {"ROWS": 4, "BLOCK": 128}, "rows"),
        ("layer norm backward dw/db", layer_norm_bwd_dwdb_kernel, (ascdsl.cdiv(n, 16),),
         [x, y, np.zeros(n, np.float32), np.zeros(n, np.float32)], [m, n], {"BLOCK_M": 8, "BLOCK_N": 16}, "rows"),
        ("persistent softmax, a row per program", persistent_softmax_kernel, (m,), [out, x], [n, n, m, n],
         {"BLOCK_SIZE": 128}, "rows"),
        ("persistent softmax, 12 programs", persistent_softmax_kernel, (12,), [out, x], [n, n, m, n],
         {"BLOCK_SIZE": 128}, "rows"),
        ("layer norm backward dx, 12 groups", layer_norm_bwd_dx_kernel, (12,),
         [out, y, np.zeros((12, n), np.float32), np.zeros((12, n), np.float32), x, w, _f(m), np.abs(_f(m))],
         [m, n, n], {"BLOCK_N": 128}, "rows"),
        ("vector add", add_kernel, (ascdsl.cdiv(flat, 256),), [xv, yv, ov], [flat], {"BLOCK_SIZE": 256}, "flat"),
        ("gelu", gelu_kernel, (ascdsl.cdiv(flat, 256),), [xv, ov], [flat], {"BLOCK_SIZE": 256}, "flat"),
    ]


LAUNCHES = _launches()
LANE_COPIES_WHEN_BATCHED = {"log-softmax backward rows", "layer norm backward dw/db"}


def _scalar(v):
    return np.int32(v) if isinstance(v, int) else v


@pytest.mark.parametrize("case", LAUNCHES, ids=[c[0] for c in LAUNCHES])
@pytest.mark.parametrize("p", [1, 2, 3, 8])
def test_batched_agrees_with_unbatched_on_the_interpreter(case, p):
    _, kernel, grid, arrays, scalars, constexprs, expected_form = case
    k = kernel.specialize(*arrays, *scalars, **constexprs).kernels[0]
    assert refusal(k) is None and form(k) == expected_form
    want = [a.copy() for a in arrays]
    kernel[grid](*want, *scalars, **constexprs)
    batched = batch_programs(k, p)
    assert batched.param_names[-1] == PROGRAMS and dict(batched.constexprs)["BATCH_PROGRAMS"] == p
    fewest = batched_grid((*grid, 1, 1), p)[0]
    for n in (fewest, fewest + 1, fewest + 2):  # any grid of at most p programs per batched program
        if -(-grid[0] // n) > p or n > grid[0]:
            continue
        got = [a.copy() for a in arrays]
        interpreter.run(batched, [*got, *map(_scalar, scalars), np.int32(grid[0])], (n, 1, 1))
        for g, w in zip(got, want):  # no reduction changes order: bit for bit
            assert g.tobytes() == w.tobytes(), n


@pytest.mark.parametrize("case", LAUNCHES, ids=[c[0] for c in LAUNCHES])
def test_batched_ir_round_trips_and_becomes_block_copies(case):
    _, kernel, grid, arrays, scalars, constexprs, _ = case
    batched = batch_programs(kernel.specialize(*arrays, *scalars, **constexprs).kernels[0], 4)
    module = Module((batched,))
    assert parse(dump(module)) == module
    ops = {i.op for i in walk(run_passes(batched).body)}
    assert not ops & {Op.LOAD, Op.STORE}
    k = kernel.specialize(*arrays, *scalars, **constexprs).kernels[0]
    platform = ascdsl.platforms.get_platform("Ascend910B3")
    # a kernel of ROWS rows (or BLOCK_N columns) per program masks [P, ROWS] rows over two dims: no
    # block bound, so the launch keeps it unbatched
    assert batchrun.keeps_block_copies(k, batched, platform) == (case[0] not in LANE_COPIES_WHEN_BATCHED)


def test_flat_form_is_one_block_of_p_times_block_lanes():
    x = np.zeros(10, np.float32)
    batched = batch_programs(add_kernel.specialize(x, x, x, 10, BLOCK_SIZE=256).kernels[0], 8)
    shapes = {r.type.shape for i in walk(batched.body) for r in i.results if not r.type.is_scalar}
    assert shapes == {(2048,)}


# ----------------------------------------------------------------------------- refusals

@ascdsl.jit
def branch_on_loaded_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    first = tl.load(x_ptr + row * BLOCK)
    if first > 0:  # REFUSED
        tl.store(out_ptr + row * BLOCK + cols, tl.load(x_ptr + row * BLOCK + cols))


@ascdsl.jit
def branch_on_pid_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    if pid == 0:  # REFUSED
        tl.store(out_ptr + cols, tl.load(x_ptr + cols))


@ascdsl.jit
def trip_count_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in range(0, row):  # REFUSED
        acc += tl.load(x_ptr + i * BLOCK + cols)
    tl.store(out_ptr + row * BLOCK + cols, acc)


@ascdsl.jit
def stride_kernel(x_ptr, out_ptr, n_rows, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    for row in tl.range(tl.program_id(0), n_rows, 2):  # REFUSED
        tl.store(out_ptr + row * BLOCK + cols, tl.load(x_ptr + row * BLOCK + cols))


@ascdsl.jit
def atomic_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    tl.atomic_add(out_ptr + cols, tl.load(x_ptr + row * BLOCK + cols))  # REFUSED


@ascdsl.jit
def while_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    i = row
    while i > 0:  # REFUSED
        i = i // 2
    tl.store(out_ptr + row, i.to(tl.float32))


@ascdsl.jit
def same_address_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    tl.store(out_ptr + cols, tl.load(x_ptr + row * BLOCK + cols))  # REFUSED


@ascdsl.jit
def no_pid_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    tl.store(out_ptr + cols, tl.load(x_ptr + cols))


REFUSED = [
    (branch_on_loaded_kernel, "a branch on a program-dependent value"),
    (branch_on_pid_kernel, "a branch on a program-dependent value"),
    (trip_count_kernel, "a loop whose bounds or step differ per program"),
    (stride_kernel, "a loop whose bounds or step differ per program"),
    (atomic_kernel, "atomics stay one program at a time"),
    (while_kernel, "a while loop over program-dependent values"),
    (same_address_kernel, "programs store different values at one address"),
]


@pytest.mark.parametrize("kernel,reason", REFUSED, ids=[k.__name__ for k, _ in REFUSED])
def test_refusal_names_the_blocking_line(kernel, reason):
    x = np.zeros(64, np.float32)
    args = (x, x) + ((4,) if kernel is stride_kernel else ())
    k = kernel.specialize(*args, BLOCK=16).kernels[0]
    why = refusal(k)
    assert why is not None and form(k) is None
    assert reason in why.reason
    assert why.line is not None and why.line.rstrip().endswith("# REFUSED")
    assert str(why).startswith(f"{why.loc}: program batching does not apply: {why.reason}")
    with pytest.raises(Exception, match="program|loop|atomic|branch|while"):
        batch_programs(k, 2)


def test_refused_kernel_launches_unbatched():
    k = trip_count_kernel.specialize(np.zeros(4, np.float32), np.zeros(4, np.float32), BLOCK=16).kernels[0]
    args, grid = [np.zeros(16 * 200, np.float32), np.zeros(16 * 200, np.float32)], (200, 1, 1)
    assert batchrun.batch_launch(k, args, grid, "Ascend910B3") == (k, args, grid)


def test_kernel_without_program_id_is_refused():
    k = no_pid_kernel.specialize(np.zeros(4, np.float32), np.zeros(4, np.float32), BLOCK=16).kernels[0]
    assert "does not use tl.program_id(0)" in refusal(k).reason


# ----------------------------------------------------------------------------- the simulator

SIM = [
    ("softmax row", lambda a, b: softmax_ops.softmax_row_kernel[(a["x"].shape[0],)](
        a["x"], a["out"], a["x"].shape[1], BLOCK=128, backend=b), (203, 100)),
    ("rms norm", lambda a, b: rmsnorm_ops.rms_norm_kernel[(a["x"].shape[0],)](
        a["x"], a["w"], a["out"], a["x"].shape[1], np.float32(1e-6), BLOCK=128, backend=b), (203, 100)),
    ("log-softmax backward row", lambda a, b: log_softmax_backward_row_kernel[(a["x"].shape[0],)](
        a["x"], a["y"], a["out"], a["x"].shape[1], a["x"].shape[1], BLOCK=128, backend=b), (203, 100)),
    ("persistent softmax", lambda a, b: persistent_softmax_kernel[(a["x"].shape[0],)](
        a["out"], a["x"], a["x"].shape[1], a["x"].shape[1], a["x"].shape[0], a["x"].shape[1], BLOCK_SIZE=128,
        backend=b), (203, 100)),
    ("vector add", lambda a, b: add_kernel[(ascdsl.cdiv(a["x"].size, 64),)](
        a["x"].reshape(-1), a["y"].reshape(-1), a["out"].reshape(-1), a["x"].size, BLOCK_SIZE=64, backend=b),
     (101, 100)),
]


@pytest.mark.parametrize("name,launch,shape", SIM, ids=[s[0] for s in SIM])
def test_batched_on_the_simulator_equals_the_interpreter(name, launch, shape):
    def arrays():
        r = np.random.default_rng(3)
        return {"x": r.standard_normal(shape).astype(np.float32), "y": r.standard_normal(shape).astype(np.float32),
                "w": r.standard_normal(shape[1]).astype(np.float32), "out": np.zeros(shape, np.float32)}
    want, got = arrays(), arrays()
    launch(want, "interpreter")
    with ascdsl.record.launches() as seen:
        launch(got, "sim")
    (launched,) = seen
    p, n = batchrun.schedule(launched.kernel, launched.grid[0], ascdsl.platforms.get_platform("Ascend910B3"))
    assert p >= 2 and n % 40 == 0 and -(-launched.grid[0] // n) == p
    if name == "vector add":
        assert got["out"].tobytes() == want["out"].tobytes()
    else:
        scale = (np.abs(want["x"]) + np.exp(want["y"]) * np.abs(want["x"]).sum(-1, keepdims=True)
                 if name.startswith("log-softmax") else None)
        assert_close(got["out"], want["out"], dtypes.float32, scale)


def test_bench_rows_check_the_batched_results(monkeypatch):
    """``ascdsl bench``'s batching rows (ascdsl/bench_batching.py) at a small shape: before and after
    figures, the batched results checked against the interpreter's."""
    from ascdsl import bench_batching
    chosen = [(f, ((203, 100),)) for f, _ in bench_batching.forms(ROOT / "ops") if f.name.startswith("log-softmax")]
    monkeypatch.setattr(bench_batching, "forms", lambda ops_dir: chosen)
    (row,) = bench_batching.run(out=io.StringIO())
    name, shape, p, before, after, est, floor = row
    assert shape == "203x100" and int(p.split()[0]) >= 2 and 1.0 <= after < before


def test_explain_says_why_a_launch_runs_unbatched():
    platform = ascdsl.platforms.get_platform("Ascend910B3")
    x = np.zeros(4, np.float32)
    refused = branch_on_loaded_kernel.specialize(x, x, BLOCK=16).kernels[0]
    assert "a branch on a program-dependent value" in batchrun.explain(refused, 4000, platform)
    k = softmax_ops.softmax_row_kernel.specialize(x, x, 8, BLOCK=128).kernels[0]
    assert "fewer than 2 per core" in batchrun.explain(k, 79, platform)
    assert batchrun.explain(k, 80, platform) == ""
    big = row_scale_kernel.specialize(x, x, 16384, BLOCK=16384).kernels[0]  # one row fits, two do not
    assert "no P >= 2" in batchrun.explain(big, 4000, platform)


@ascdsl.jit
def row_scale_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    """Twice each row: a row per program with no reduction (the scalar unit never waits for the vector pipe)."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    tl.store(out_ptr + row * n_cols + cols, tl.load(x_ptr + row * n_cols + cols, mask=mask) * 2.0, mask=mask)


def _est_us(runs: dict) -> dict:
    """The simulated time of each launch of ``runs`` (one ``sim.record()`` a key), read after all ran: the
    module's recording runs nothing on the simulator and must reach every launch to build its kernel."""
    return {key: r[0].stats.est_us for key, r in runs.items()}


def test_rows_form_at_one_program_where_no_p_fits(monkeypatch):
    """rms norm of 256 rows of 8192 float32: no P >= 2 fits the UB; the rows form at P = 1 keeps the row's
    sum on the vector unit, so a core's next row loads while this one computes. Simulated, it is faster than
    the unbatched launch by the model's margin, close to the model's estimate, and gives the interpreter's
    results."""
    platform = ascdsl.platforms.get_platform(PLATFORM)
    m, n = 256, 8192
    x, w = _f((m, n)), _f(n)
    k = rmsnorm_ops.rms_norm_kernel.specialize(x, w, x, n, np.float32(1e-6), BLOCK=n).kernels[0]
    c = batchrun.plan(k, m, platform)
    assert c.largest == 1 and c.p == 1 and c.run.rows and c.run.batched and c.label == "1 (rows)"
    assert c.run.est_us < c.rule.est_us * (1 - batchrun.MARGIN)
    line = batchrun.describe(k, (m, 1, 1), platform, [x, w, np.zeros((m, n), np.float32), n, np.float32(1e-6)])
    assert line.startswith("batched (rows form): P = 1") and batchrun.ONE in line
    assert batchrun.explain(k, m, platform) == ""
    want = np.zeros((m, n), np.float32)
    rmsnorm_ops.rms_norm_kernel[(m,)](x, w, want, n, np.float32(1e-6), BLOCK=n)
    runs = {}
    for name, choice in (("rows", c), ("unbatched", batchrun.Choice(batchrun.Launch(1, m), 1))):
        got = np.zeros((m, n), np.float32)
        monkeypatch.setattr(batchrun, "plan", lambda kernel, programs, plat, *fields, choice=choice: choice)
        with sim.record() as runs[name]:
            rmsnorm_ops.rms_norm_kernel[(m,)](x, w, got, n, np.float32(1e-6), BLOCK=n, backend="sim")
        assert_close(got, want, dtypes.float32)
    measured = _est_us(runs)
    assert measured["rows"] == pytest.approx(c.run.est_us, rel=0.05)
    assert measured["rows"] < measured["unbatched"] * (1 - batchrun.MARGIN)


def test_rows_form_at_one_program_only_where_it_pays():
    """The rows form at P = 1 is refused where a core runs fewer than 2 programs, where the kernel is of the
    flat form, and where the model estimates it no faster (no reduction: nothing waits for the vector pipe)."""
    platform = ascdsl.platforms.get_platform(PLATFORM)
    x = np.zeros(4, np.float32)
    rms = rmsnorm_ops.rms_norm_kernel.specialize(x, x, x, 8192, np.float32(1e-6), BLOCK=8192).kernels[0]
    assert not batchrun.plan(rms, 79, platform).run.batched
    assert "fewer than 2 per core" in batchrun.explain(rms, 79, platform)
    scale = row_scale_kernel.specialize(x, x, 16384, BLOCK=16384).kernels[0]
    c = batchrun.plan(scale, 4000, platform)
    assert c.largest == 1 and not c.run.batched and c.run.est_us is not None
    assert f"{batchrun.ONE} is not estimated" in batchrun.explain(scale, 4000, platform)
    wide = log_softmax_backward_row_kernel.specialize(x, x, x, 12000, 12000, BLOCK=16384).kernels[0]
    assert not batchrun.plan(wide, 100, platform).run.batched  # fits single-buffered only: nothing would overlap
    assert batchrun.explain(wide, 100, platform).endswith(f"; nor does {batchrun.ONE}")
    flat = add_kernel.specialize(x, x, x, 64, BLOCK_SIZE=65536).kernels[0]
    assert form(flat) == "flat" and not batchrun.plan(flat, 4000, platform).run.batched


@ascdsl.jit
def add64_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


@ascdsl.jit
def lanes_reused_kernel(x_ptr, w_ptr, out_ptr, n, BLOCK: tl.constexpr):
    lanes = tl.arange(0, BLOCK)
    offs = tl.program_id(0) * BLOCK + lanes
    w = tl.load(w_ptr + lanes)  # the same BLOCK weights in every program: not the flat form
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * w, mask=offs < n)


@pytest.mark.parametrize("kernel,expected", [(add64_kernel, "flat"), (lanes_reused_kernel, "rows")],
                         ids=["int64 offsets", "lanes reused"])
def test_flat_form_only_where_every_lane_is_pid_times_block_plus_lane(kernel, expected):
    n, block = 1000, 64
    x, w = _f(n), _f(block)
    args = [x, np.zeros(n, np.float32)] if kernel is add64_kernel else [x, w, np.zeros(n, np.float32)]
    k = kernel.specialize(*args, n, BLOCK=block).kernels[0]
    assert form(k) == expected
    want = [a.copy() for a in args]
    grid = (ascdsl.cdiv(n, block), 1, 1)
    kernel[grid](*want, n, BLOCK=block)
    got = [a.copy() for a in args]
    interpreter.run(batch_programs(k, 3), [*got, np.int32(n), np.int32(grid[0])], batched_grid(grid, 3))
    assert all(g.tobytes() == v.tobytes() for g, v in zip(got, want))


def test_int64_offsets_batch_on_the_simulator():
    n = 64 * 300 + 5
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    want, got = np.zeros(n, np.float32), np.zeros(n, np.float32)
    grid = (ascdsl.cdiv(n, 64),)
    add64_kernel[grid](x, want, n, BLOCK=64)
    with ascdsl.record.launches() as seen:
        add64_kernel[grid](x, got, n, BLOCK=64, backend="sim")
    assert batchrun.schedule(seen[0].kernel, grid[0], ascdsl.platforms.get_platform("Ascend910B3"))[0] >= 2
    assert got.tobytes() == want.tobytes()


# ----------------------------------------------------------------------------- P from the cost model

PLATFORM = "Ascend910B3"


def _gelu():
    x = np.zeros(16, np.float32)
    return gelu_kernel.specialize(x, x, 16, BLOCK_SIZE=1024).kernels[0]


def _gelu_args(blocks):
    """The arguments of a launch of gelu on ``blocks`` blocks of 1024 (the scalars the launch plans with)."""
    return [np.zeros(blocks * 1024, np.float32), np.zeros(blocks * 1024, np.float32), blocks * 1024]


def _exact(kernel, programs, launch, platform):
    """The model's estimate (us) of ``launch`` = (P, N), its step priced from its own compiled kernel."""
    p, n = launch
    step = batchrun._step(kernel, p, platform)
    if p == 1:
        n = -(-programs // platform.vector_core_count) * platform.vector_core_count
    return batchcost.estimate(step, programs, n, p, platform) / batchcost.clock_mhz(platform)


def test_cost_model_chooses_its_fastest_candidate_not_the_largest():
    """gelu of 2277 blocks of 1024 float32: neither the largest P that fits (15) nor the UB rule's (capped to 7)
    but P = 10, six batched programs a core; the chosen launch is the model's best of every candidate, each
    priced from its own compiled kernel."""
    platform = ascdsl.platforms.get_platform(PLATFORM)
    k = _gelu()
    c = batchrun.plan(k, 2277, platform)
    assert c.best is not None
    assert (c.p, c.grid) == (10, 240) and c.largest > c.p and c.run == c.best
    cores = platform.vector_core_count
    candidates = {batchrun._launch(2277, batchrun._grid(2277, q, cores)) for q in range(2, c.largest + 1)} | {(1, 2277)}
    estimates = {cand: _exact(k, 2277, cand, platform) for cand in candidates}
    assert min(estimates, key=estimates.get) == (c.p, c.grid)
    assert c.run.est_us == pytest.approx(estimates[(c.p, c.grid)])
    assert c.rule.est_us >= c.run.est_us * (1 + batchrun.MARGIN)


def test_chosen_p_is_faster_on_the_simulator(monkeypatch):
    """The model's P for gelu of 2277 blocks against the UB rule's (the largest that fits, capped), both
    simulated: the model's is faster, and its estimates are close to the simulator's."""
    platform = ascdsl.platforms.get_platform(PLATFORM)
    n = 2277 * 1024
    x = np.random.default_rng(5).standard_normal(n).astype(np.float32)
    c = batchrun.plan(_gelu(), 2277, platform)
    assert c.run != c.rule
    want = np.zeros(n, np.float32)
    gelu_kernel[(2277,)](x, want, n, BLOCK_SIZE=1024)
    runs = {}
    for launch in (c.run, c.rule):
        out = np.zeros(n, np.float32)
        monkeypatch.setattr(batchrun, "plan", lambda kernel, programs, plat, *fields, launch=launch: batchrun.Choice(launch, 0))
        with sim.record() as runs[launch]:
            gelu_kernel[(2277,)](x, out, n, BLOCK_SIZE=1024, backend="sim")
        assert_close(out, want, dtypes.float32)
    measured = _est_us(runs)
    for launch in (c.run, c.rule):
        assert measured[launch] == pytest.approx(launch.est_us, rel=0.02)
    assert measured[c.run] < measured[c.rule]


def test_describe_and_explain_name_how_p_was_chosen():
    platform = ascdsl.platforms.get_platform(PLATFORM)
    line = batchrun.describe(_gelu(), (2277, 1, 1), platform, _gelu_args(2277))
    assert line.startswith("batched (flat form): P = 10 programs per batched program, grid 240 (6 per core)")
    assert "P by the cost model" in line and "the UB rule's P = 7" in line
    x = np.zeros(4, np.float32)
    rows = softmax_ops.softmax_row_kernel.specialize(x, x, 8, BLOCK=64).kernels[0]
    c = batchrun.plan(rows, 65536, platform)  # the model's best is within its margin of the UB rule's
    line = batchrun.describe(rows, (65536, 1, 1), platform, [np.zeros((65536, 8), np.float32),
                                                             np.zeros((65536, 8), np.float32), 8])
    assert c.run == c.rule and f"P = {c.rule.p} " in line
    assert ("the UB rule" in line) and ("alike" in line or f"is not {batchrun.MARGIN:.0%} faster" in line)
    # three loops of 64 trips over a row (too many to unroll): steps the model does not price
    ln = layer_norm_kernel.specialize(x, x, x, x, x, x, 8192, 8192, np.float32(1e-5), BLOCK_SIZE=128).kernels[0]
    line = batchrun.describe(ln, (256, 1, 1), platform, _layer_norm_args(256, 8192))
    assert "P of the UB rule" in line and "compute steps per program" in line
    assert batchrun.explain(_gelu(), 2277, platform) == ""
    (text,) = explained([SimpleNamespace(kernel=_gelu(), grid=(2277, 1, 1), args=tuple(_gelu_args(2277)))], platform)
    assert "P by the cost model" in text


def _layer_norm_args(m, n):
    """The arguments of a launch of layer norm on ``m`` rows of ``n`` float32."""
    own = np.random.default_rng(3)
    x, w, b = (own.standard_normal(shape, np.float32) for shape in ((m, n), n, n))
    return [x, np.zeros((m, n), np.float32), w, b, np.zeros(m, np.float32), np.zeros(m, np.float32), n, n,
            np.float32(1e-5)]


@pytest.mark.parametrize("jit, grid, args", [
    (layer_norm_kernel, (200, 1, 1), lambda: _layer_norm_args(200, 10000)),  # looped over a row, one row a trip
    (layer_norm_kernel, (3000, 1, 1), lambda: _layer_norm_args(3000, 777)),  # P rows a trip
    (gelu_kernel, (2277, 1, 1), lambda: _gelu_args(2277))])  # batched, P from the cost model
def test_explain_gives_the_estimate_of_the_launch(jit, grid, args):
    """``--explain``'s line for a recorded launch gives the estimate of the plan the launch runs: its kernel
    specialised to its arguments (a loop unrolled, a branch taken), planned at its scalars."""
    platform = ascdsl.platforms.get_platform(PLATFORM)
    with record.launches() as seen:
        jit[grid](*args(), BLOCK_SIZE=1024, backend="interpreter")
    (launch,) = seen
    kernel = batchrun.specialised(launch.kernel, list(launch.args), platform, grid[0])
    c = batchrun.plan(kernel, grid[0], platform, batchrun.scalar_fields(kernel, launch.args))
    (text,) = explained(seen, platform)
    assert c.run.batched and re.search(r"est ([0-9.]+) us", text).group(1) == f"{c.run.est_us:.3g}", text
    assert f"P = {c.p} program{'s' * (c.p != 1)} per batched program, grid {c.grid} " in text


def test_explain_describes_launches_of_other_scalars_apart():
    """Two launches of one kernel specialisation on one grid but of other scalars (rows of 10000 and of 777) run
    other plans (looped over a row; whole rows a trip): ``--explain`` gives a line for each, with its own plan."""
    platform = ascdsl.platforms.get_platform(PLATFORM)
    with record.launches() as seen:
        for n in (10000, 777):
            layer_norm_kernel[(200, 1, 1)](*_layer_norm_args(200, n), BLOCK_SIZE=1024, backend="interpreter")
    assert len({(launch.kernel, launch.grid) for launch in seen}) == 1
    lines = explained(seen, platform)
    plans = [batchrun.launch_plan(launch.kernel, list(launch.args), launch.grid, platform)[1] for launch in seen]
    assert len(lines) == 2 and lines[0] != lines[1]
    for line, c in zip(lines, plans):
        assert re.search(r"est ([0-9.]+) us", line).group(1) == f"{c.run.est_us:.3g}", line


def test_step_pricing_follows_the_simulators_rules():
    """A step of batched gelu: the copy is ``copy_setup + burst_cycles`` and its bytes at the core's
    share of HBM; the compute grows by the same repeats per program (16 vector calls and 15 barriers
    per step, whatever P)."""
    platform = ascdsl.platforms.get_platform(PLATFORM)
    k = batchcost.cost.constants(platform)
    share = batchcost.cost.core_share(platform, platform.vector_core_count)
    steps = {p: batchrun._step(_gelu(), p, platform) for p in (2, 3, 4)}
    for p, s in steps.items():
        assert s.bound and not s.serial
        assert s.load_setup == s.store_setup == k.copy_setup.value + k.burst_cycles.value
        assert s.load_move == pytest.approx(p * 4096 / share) and s.store_move == pytest.approx(p * 4096 / share)
    assert steps[4].compute - steps[3].compute == steps[3].compute - steps[2].compute > 0


def _step(load, compute, store, bound=True, serial=False):
    return batchcost.Step(64.0, load - 64.0, compute, 64.0, store - 64.0, bound, serial)


def test_timeline_of_each_regime():
    """The busiest core's steps on the simulator's timeline: ten steps of one program each."""
    platform = ascdsl.platforms.get_platform(PLATFORM)
    flag = batchcost.cost.constants(platform).flag_latency.value
    est = lambda s: batchcost.estimate(s, 400, 400, 1, platform)  # noqa: E731
    # compute covers the load and store: the first load, ten computes, the last store
    assert est(_step(800, 2000, 800)) == 800 + 10 * 2000 + 800 + 2 * flag
    # the link paces the core: its bytes back to back (a copy's set-up on its pipe overlaps the other
    # side's bytes), the compute hidden but the last
    link = est(_step(800, 500, 800))
    assert 10 * (1600 - 2 * 64) < link < 10 * 1600
    # a store out of the load's buffer holds it: step i + 2's load waits for step i's store (a short one: the
    # store lands in the L2 at its write rate, and the compute covers a step's bytes to and from HBM)
    assert est(_step(990, 1100, 200)) > est(_step(990, 1100, 200, bound=False)) >= 990 + 10 * 1100 + 200
    # a UB value read on the scalar unit: nothing overlaps
    assert est(_step(990, 1850, 990, serial=True)) == 10 * (990 + 1850 + 990)


@pytest.mark.parametrize("programs,grid", [(4096, 1040), (2277, 600), (256, 80), (3000, 520), (203, 80), (80, 40)])
def test_busiest_core_is_the_partitions(programs, grid):
    """batchcost.core_rows against the partition the batched kernel runs (batching._span: batched program
    q runs programs q * (G // N) + min(q, G % N) up to the next one's), on core q % cores: each core's, core 0's
    the most."""
    cores = 40
    base, rem = divmod(programs, grid)
    per_core = [[] for _ in range(cores)]
    for q in range(grid):
        per_core[q % cores].append(base + (q < rem))
    assert batchcost.core_rows(programs, grid, cores) == max(per_core, key=sum)
    assert [batchcost.core_rows(programs, grid, cores, c) for c in range(cores)] == per_core


def test_largest_p_fits_with_double_buffered_queues():
    """A P whose batched kernel fits the UB only single-buffered (the budget pass's fallback) is no
    candidate: batching is for overlapping copies with compute."""
    platform = ascdsl.platforms.get_platform(PLATFORM)
    k = _gelu()
    largest = batchrun.choose(k, 40 * 4096, platform)
    fits = planned(batchrun.batch_programs(k, largest), platform).plan.total_bytes
    over = planned(batchrun.batch_programs(k, largest + 1), platform).plan.total_bytes
    assert fits <= platform.ub_budget_bytes < over
    assert compile_variant(batchrun.batch_programs(k, largest + 1), platform).plan.single_buffered


# ----------------------------------------------------------------------------- splitting programs

@ascdsl.jit
def start_as_data_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    start = tl.program_id(0) * BLOCK
    offs = start + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + start, mask=offs < n)


def test_a_block_start_used_as_data_is_not_the_flat_form():
    """``x + pid * BLOCK`` differs between the programs of one flat block: the kernel batches in the rows
    form (each program its own start), with the unbatched results."""
    n, block = 1000, 64
    x = _f(n)
    k = start_as_data_kernel.specialize(x, x, n, BLOCK=block).kernels[0]
    assert form(k) == "rows"
    with pytest.raises(NotBatchable, match="used as data"):
        split_programs(k, 2)
    grid = (ascdsl.cdiv(n, block), 1, 1)
    want, got = np.zeros(n, np.float32), np.zeros(n, np.float32)
    start_as_data_kernel[grid](x, want, n, BLOCK=block)
    interpreter.run(batch_programs(k, 3), [x, got, np.int32(n), np.int32(grid[0])], batched_grid(grid, 3))
    assert got.tobytes() == want.tobytes()


@ascdsl.jit
def num_programs_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    covered = tl.num_programs(0) * BLOCK  # the launch's lanes: the original count in a split kernel too
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0 + covered, mask=offs < n)


FLAT = [c for c in LAUNCHES if c[-1] == "flat"] + [
    ("num_programs", num_programs_kernel, (ascdsl.cdiv(5000, 256),), [_f(5000), np.zeros(5000, np.float32)], [5000],
     {"BLOCK": 256}, "flat")]


@pytest.mark.parametrize("case", FLAT, ids=[c[0] for c in FLAT])
@pytest.mark.parametrize("s", [2, 4, 8])
def test_split_programs_agree_with_whole_ones_on_the_interpreter(case, s):
    """A flat-form kernel split into ``s`` programs of BLOCK / s lanes, on ``s`` times the grid, alone and
    then batched: bit for bit the kernel's results."""
    _, kernel, grid, arrays, scalars, constexprs, _ = case
    k = kernel.specialize(*arrays, *scalars, **constexprs).kernels[0]
    want = [a.copy() for a in arrays]
    kernel[grid](*want, *scalars, **constexprs)
    split = split_programs(k, s)
    block = next(iter(constexprs.values()))
    assert {r.type.shape for i in walk(split.body) for r in i.results if not r.type.is_scalar} == {(block // s,)}
    assert dict(split.constexprs)["SPLIT_PROGRAMS"] == s
    got = [a.copy() for a in arrays]
    interpreter.run(split, [*got, *map(_scalar, scalars)], (grid[0] * s, 1, 1))
    assert all(g.tobytes() == w.tobytes() for g, w in zip(got, want))
    got = [a.copy() for a in arrays]
    batched = batch_programs(split, 3)
    interpreter.run(batched, [*got, *map(_scalar, scalars), np.int32(grid[0] * s)], batched_grid((grid[0] * s, 1, 1), 3))
    assert all(g.tobytes() == w.tobytes() for g, w in zip(got, want))


def test_split_programs_refuses_what_it_cannot_split():
    x = _f(64)
    flat = add_kernel.specialize(x, x, x, 64, BLOCK_SIZE=256).kernels[0]
    with pytest.raises(NotBatchable, match="does not split into 3"):
        split_programs(flat, 3)
    rows = softmax_ops.softmax_row_kernel.specialize(x, x, 8, BLOCK=128).kernels[0]
    with pytest.raises(NotBatchable):
        split_programs(rows, 2)


def test_few_blocks_a_core_run_split_and_faster_on_the_simulator(monkeypatch):
    """Vector add of 64 blocks of 1024 (fewer than 2 a core: whole blocks run unbatched): the launch splits
    each block and batches the pieces. Simulated, the split launch is faster than the whole one by the
    model's margin at least, each close to the model's estimate, both bit for bit the interpreter's."""
    platform = ascdsl.platforms.get_platform(PLATFORM)
    blocks, n = 64, 64 * 1024
    x, y = _f(n), _f(n)
    k = add_kernel.specialize(x, y, x, n, BLOCK_SIZE=1024).kernels[0]
    c = batchrun.plan(k, blocks, platform)
    assert c.split > 1 and c.p >= 2
    line = batchrun.describe(k, (blocks, 1, 1), platform, [x, y, np.zeros(n, np.float32), n])
    assert f"each program split into {c.split} of {1024 // c.split} lanes" in line
    assert batchrun.explain(k, blocks, platform) == ""
    # one block a core: pieces of one block in several steps cost more in fixed costs than they overlap
    assert batchrun.plan(k, 40, platform).p == 1
    assert batchrun.explain(k, 40, platform).endswith("no split of its programs into pieces is estimated faster")
    want = np.zeros(n, np.float32)
    add_kernel[(blocks,)](x, y, want, n, BLOCK_SIZE=1024)
    whole = batchrun._plan(k, blocks, platform)
    runs = {}
    for name, choice in (("split", c), ("whole", whole)):
        got = np.zeros(n, np.float32)
        monkeypatch.setattr(batchrun, "plan", lambda kernel, programs, plat, *fields, choice=choice: choice)
        with sim.record() as runs[name]:
            add_kernel[(blocks,)](x, y, got, n, BLOCK_SIZE=1024, backend="sim")
        assert got.tobytes() == want.tobytes()
    measured = _est_us(runs)
    assert measured["split"] == pytest.approx(c.run.est_us, rel=0.02)
    assert measured["whole"] == pytest.approx(batchrun._est_us(whole, k, blocks, platform), rel=0.02)
    assert measured["split"] < measured["whole"] * (1 - batchrun.MARGIN)


@pytest.mark.parametrize("p", [1, 4])
def test_the_model_prices_copies_at_the_launchs_columns(p):
    """Rows of 1500 float32 in blocks of 2048: the model prices each copy at the 1500 columns the launch's
    scalars give (not the block's 2048), and a batched program's program-dependent count of rows at P."""
    platform = ascdsl.platforms.get_platform(PLATFORM)
    x = np.zeros(4, np.float32)
    k = log_softmax_backward_row_kernel.specialize(x, x, x, 1500, 1500, BLOCK=2048).kernels[0]
    step = batchcost.price(compile_variant(batch_programs(k, p), platform), platform, 40,
                           {"n_cols": 1500, "stride": 1500})
    share = batchcost.cost.core_share(platform, 40)
    assert step.load_move == pytest.approx(2 * p * 1500 * 4 / share)
    assert step.store_move == pytest.approx(p * 1500 * 4 / share)
