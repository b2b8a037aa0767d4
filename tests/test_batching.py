"""Program batching (ascdsl/passes/batching.py): the batched kernel gives the unbatched one's results
on the interpreter, bit for bit, for every test kernel the pass applies to; the kernels it must refuse
keep their form with the reason at the kernel line; batched launches on the simulator give the
interpreter's results."""
from __future__ import annotations

import importlib.util
import io
from pathlib import Path

import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes, interpreter, sim
from ascdsl.backend import batchrun
from ascdsl.bench_kernels import (add_kernel, gelu_kernel, layer_norm_kernel, log_softmax_backward_kernel,
                                  log_softmax_backward_row_kernel)
from ascdsl.ir import Module, Op, walk
from ascdsl.ir.text import dump, parse
from ascdsl.passes import run_passes
from ascdsl.passes.batching import (PROGRAMS, batch_programs, batched_grid, form, refusal)
from ascdsl.testing import assert_close
from ascdsl.bench_kernels import softmax_kernel as persistent_softmax_kernel
from tests.triton.test_tutorials import layer_norm_bwd_dwdb_kernel, layer_norm_bwd_dx_kernel

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
@pytest.mark.parametrize("p", [2, 3, 8])
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
    with sim.record() as runs, ascdsl.record.launches() as seen:
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
    assert shape == "203x100" and p >= 2 and 1.0 <= after < before


def test_explain_says_why_a_launch_runs_unbatched():
    platform = ascdsl.platforms.get_platform("Ascend910B3")
    x = np.zeros(4, np.float32)
    refused = branch_on_loaded_kernel.specialize(x, x, BLOCK=16).kernels[0]
    assert "a branch on a program-dependent value" in batchrun.explain(refused, 4000, platform)
    k = softmax_ops.softmax_row_kernel.specialize(x, x, 8, BLOCK=128).kernels[0]
    assert "fewer than 2 per core" in batchrun.explain(k, 79, platform)
    assert batchrun.explain(k, 80, platform) == ""
    big = softmax_ops.softmax_row_kernel.specialize(x, x, 8, BLOCK=16384).kernels[0]  # one row fits, two do not
    assert "no P >= 2" in batchrun.explain(big, 4000, platform)


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
