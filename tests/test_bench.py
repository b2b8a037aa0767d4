"""``ascdsl bench``: the quick run prints every column from one run, and estimates never beat the floor."""
from __future__ import annotations

import io
import itertools
import sys
from pathlib import Path

import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import bench, bench_batching, bench_bounds, bench_cube, bench_interp, cli
from ascdsl.backend import simrun
from ascdsl.op import load_operators
from ascdsl.platforms import DEFAULT_PLATFORM
from tests.backend import coverage
from tests.backend.helpers import op_case_files

OPS = Path(__file__).parents[1] / "ops"
pytestmark = pytest.mark.usefixtures("_prebuilt_bench_kernels")


@pytest.fixture(scope="module")
def _prebuilt_bench_kernels(request):
    """The simulator kernels of the quick bench's ops' own cases built as the files
    ``tests/ops/test_sim_sweeps.py`` builds (:func:`~tests.backend.helpers.op_case_files`: the quick shapes and
    the sweep's small ones launch kernels of those), then the other kernels the module's selected tests launch
    in few g++ runs (a kernel a file of any process holds is left out: the kernel index)."""
    names = {case.op for case in bench.QUICK}
    for op in load_operators([OPS]):
        if op.name in names:
            op_case_files(op)
    selected = {item.originalname for item in request.session.items if getattr(item, "module", None) is request.module}
    simrun.prebuild(coverage.recorded(request.module, names=selected, sim_only=True)[1], batch=coverage.MODULE_BATCH)


def test_quick_bench_prints_every_column_and_no_estimate_below_its_floor(capsys):
    assert cli.main(["bench", str(OPS), "--quick", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("| op |"))
    assert lines[header] == "| " + " | ".join(bench.HEADER) + " |"
    rows = [line.strip("| ").split(" | ") for line in itertools.takewhile(lambda x: x.startswith("| "), lines[header + 2:])]
    assert len(rows) == len(bench.QUICK)
    col = {name: i for i, name in enumerate(bench.HEADER)}
    for row, case in zip(rows, bench.QUICK):
        assert (row[col["op"]], row[col["shape class"]], row[col["dtype"]]) == (case.op, case.shape_class, case.dtype)
        est, floor = float(row[col["est us"]]), float(row[col["floor us"]])
        assert est >= floor > 0 and float(row[col["est/floor"]]) >= 1.0
        assert row[col["pipe"]] in ("MTE2", "V", "MTE3", "S")
        assert float(row[col["GM/min"]]) >= 1.0 and float(row[col["B/copy"]]) > 0
        assert 0 < float(row[col["UB"]].rstrip("%")) <= 100
        assert float(row[col["interp ms"]]) > 0 and float(row[col["numpy ms"]]) > 0
        assert row[col["kernel"]].endswith("kernel")
    cube = lines.index("| " + " | ".join(bench_cube.HEADER) + " |")
    cube_rows = [x.strip("| ").split(" | ") for x in itertools.takewhile(lambda x: x.startswith("| "), lines[cube + 2:])]
    assert len(cube_rows) == len(bench_cube.QUICK)
    col = {name: i for i, name in enumerate(bench_cube.HEADER)}
    for row, case in zip(cube_rows, bench_cube.QUICK):
        assert (row[col["M x N x K"]], row[col["dtype"]]) == (case.label, case.dtype)
        est, floor = float(row[col["est us"]]), float(row[col["floor us"]])
        assert est >= floor > 0 and float(row[col["est/floor"]]) >= 1.0
        assert row[col["pipe"]] in ("MTE2", "MTE3", "S", "M", "MTE1")
        assert 0 < float(row[col["M busy"]].rstrip("%")) <= 100 and 0 <= float(row[col["L2 reads"]].rstrip("%")) < 100
        most, mean = map(float, row[col["HBM MiB max / mean core"]].split(" / "))
        assert most >= mean > 0


def test_cube_bench_counts_each_cores_first_reads_from_hbm():
    """200x300x150 in 64x128 blocks, groups of 8: 4 x 3 programs, one a core, all starting together, so the
    programs that read a panel share its read from HBM. Program p reads A's rows of panel p % 4 (64 rows, the last
    8), read by 3 programs, and B's columns of panel p // 4 (128 columns, the last 44), read by 4."""
    case = bench_cube.QUICK[0]
    assert (case.m, case.n, case.k, case.block, case.group) == (200, 300, 150, (64, 128, 64), 8)
    row = bench_cube.measure(case)
    a = [rows * case.k * 2 for rows in (64, 64, 64, 8)]  # A's panels, float16
    b = [case.k * cols * 2 for cols in (128, 128, 44)]  # B's
    assert row.hbm == tuple(a[p % 4] / 3 + b[p // 4] / 4 for p in range(12))
    assert sum(row.hbm) == (case.m * case.k + case.k * case.n) * 2  # each byte of A and B read from HBM once


def test_numpy_formulas_match_the_references():
    ops = {op.name: op for op in load_operators([OPS])}
    for case in bench.QUICK:
        op = ops[case.op]
        inputs = case.case(len(op.inputs)).inputs()
        got = bench.NUMPY[case.op](*inputs, **case.attrs).astype("float64")
        want = op.reference(*[a.astype("float64") for a in inputs], **case.attrs)
        assert got.shape == want.shape
        assert abs(got - want).max() <= 0.05 * max(1.0, abs(want).max()), case


# Issue 11's targets are ENTRY_BOUND (2x) and KERNEL_BOUND (1.5x); measured on a 2-CPU VM shared
# with other jobs: entry points 1.6-2.3x (2.3-3.2x before the strided pieces, 4.1-5.7x before the
# symbolic tiles), the Triton-style kernels 1.0-1.8x (the ratios move by 0.1-0.3 with the load). These guard the speed reached against regressions, with room for a
# loaded CI machine; `ascdsl bench` prints the ratios.
ENTRY_REGRESSION_BOUND = 4.5
KERNEL_REGRESSION_BOUND = 3.0


@pytest.mark.slow
@pytest.mark.parametrize("case", bench.ENTRY_TARGETS, ids=lambda c: f"{c.op}-{'x'.join(map(str, c.shape))}")
def test_entry_points_keep_their_speed_against_the_numpy_formula(case):
    op = {op.name: op for op in load_operators([OPS])}[case.op]
    entry, formula = bench.entry_ratio(op, case, repeats=5)
    assert entry / formula <= ENTRY_REGRESSION_BOUND


@pytest.mark.slow
@pytest.mark.parametrize("shape", bench_interp.SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("case", bench_interp.KERNEL_CASES, ids=lambda c: c.name.replace(" ", "_"))
def test_triton_style_kernels_keep_their_speed_against_the_numpy_formula(case, shape):
    kernels = bench_interp.triton_kernels(ascdsl, tl)
    interpreted, formula = bench_interp.kernel_ratio(kernels, case, *shape, repeats=5)
    assert interpreted / formula <= KERNEL_REGRESSION_BOUND


@pytest.mark.parametrize("shape", [(37, 100), (5, 1024), (130, 17)], ids=lambda s: "x".join(map(str, s)))
def test_triton_style_kernels_compute_their_formulas(shape):
    kernels = bench_interp.triton_kernels(ascdsl, tl)
    for case in bench_interp.KERNEL_CASES:
        arrays = case.inputs(*shape)
        case.launch(kernels, arrays)
        want = case.formula(*[arrays[name] for name in case.args])
        np.testing.assert_allclose(arrays["out"], want, rtol=1e-5, atol=1e-5, err_msg=case.name)


def test_quick_bench_prints_every_triton_style_kernel(capsys):
    bench_interp.report(1, sys.stdout, bench_interp.QUICK_SHAPES, upstream=False)
    lines = capsys.readouterr().out.splitlines()
    for case in bench_interp.KERNEL_CASES:
        (line,) = [x for x in lines if x.startswith(f"  {case.name} 37x100: ")]
        assert float(line.split(": ")[1].split("x ")[0]) > 0


def test_bench_prints_the_interpreter_rows_alone(capsys):
    assert cli.main(["bench", str(OPS), "--quick", "--interpreter"]) == 0
    out = capsys.readouterr().out
    assert "| op | shape class |" not in out
    assert f"  {bench_interp.KERNEL_CASES[0].name} 37x100: " in out


def test_the_sweep_runs_one_class_alone(capsys):
    args = ["bench", str(OPS), "--quick", "--interpreter", "--sweep", "2", "--sweep-class", "reduce-middle"]
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    table = out.split("untuned shapes, worst first")[1].split("over 1.2x")[0]
    rows = [line for line in table.splitlines() if line.startswith("| log_softmax_grad")]
    assert len(rows) == 2 and all(" | reduce-middle odd inner | " in r for r in rows)
    assert "seed ops on 2 untuned shapes" in out
    over = [r for r in rows if float(r.split(" | ")[7]) > bench.SWEEP_BOUND and float(r.split(" | ")[6]) > 0]
    alternatives = out.split("the model's figure for each alternative")[1].split("\n\n")[0].splitlines()[1:]
    assert over and len(alternatives) == len(over)
    assert all("(reduce-middle odd inner)" in a and "-element piece per core (no exchange)" in a for a in alternatives)


def test_the_sweep_sets_each_shape_over_the_target_against_its_alternatives():
    """A stand-in for the simulator (est us by shape; floor 1 us): a shape over the target is run split over the
    cores and, for short rows not whole 32-byte blocks, padded to whole blocks; the verdict follows the best."""
    est = {(300, 19): 2.0, (40, 144): 1.5, (179, 32): 1.1, (64, 30000): 1.5, (40, 48000): 1.3, (50, 64): 1.1}

    def simulate(op, case, platform):
        return bench.Kernel("k", est[case.shape], 1.0, "MTE2", 1.0, 1.0, 0.5, 40)
    done = [(c, simulate(None, c, "")) for c in (bench._sg("16-bit short rows", (300, 19), "float16"),
                                                  bench._lsm("few long rows", (64, 30000)),
                                                  bench._sg("random rows", (50, 64)),
                                                  bench._sm("few long rows", (64, 30000)))]
    ops = {"softmax_grad": None, "log_softmax_grad": None}
    found = bench_bounds.sweep_bounds(simulate, ops, done, "Ascend910B3")
    assert [(c.shape, [b.alternative for b in bs]) for c, bs in found] == [((300, 19), [1.5, 1.1]),
                                                                         ((64, 30000), [1.3])]
    out = io.StringIO()
    bench_bounds.report_sweep(found, out)
    short, long = out.getvalue().splitlines()[2:]
    assert "as 179 rows of 32 1.10" in short and short.endswith("a kernel form the ops lack")
    assert "one 48000-element piece per core" in long and long.endswith("with the ops' own kernels")


def test_the_kernel_source_runs_on_upstream_triton_too():
    upstream = bench_interp.upstream_triton()
    if upstream is None:
        pytest.skip("upstream triton and torch are not installed")
    triton, triton_tl, torch = upstream
    kernels = bench_interp.triton_kernels(triton, triton_tl)
    for case in bench_interp.KERNEL_CASES:
        arrays = case.inputs(9, 40)
        case.launch(kernels, {k: torch.from_numpy(v) for k, v in arrays.items()})
        want = case.formula(*[arrays[name] for name in case.args])
        np.testing.assert_allclose(arrays["out"], want, rtol=1e-5, atol=1e-5, err_msg=case.name)
    assert bench_interp.upstream_seconds(upstream, bench_interp.KERNEL_CASES[0], 9, 40) > 0


def test_bench_reports_bad_input_without_a_traceback(capsys):
    assert cli.main(["bench", str(OPS), "--platform", "Ascend999"]) == 1
    assert "unknown platform 'Ascend999'" in capsys.readouterr().err
    assert cli.main(["bench", str(OPS / "scale_add.py"), "--quick"]) == 1
    err = capsys.readouterr()
    assert "none of the benchmarked ops" in err.err and err.out == ""


# Issue 11's kernel targets, per seed-op shape class: the estimate within RATIO_TARGET of its floor, GM
# traffic within 1.05x of the minimum where a row fits UB (4/3 + 2% for log_softmax_grad and 5/3 + 2%
# for softmax_grad where it does not), UB use of at least 70% of the budget for large shapes. Where a
# class has not reached a target, REACHED holds the bound it reached (measured by `ascdsl bench` on a
# 2-CPU VM; the cost model is deterministic, so these are exact up to the model's rounding) and the
# README's bench table shows the gap.
RATIO_TARGET = bench_bounds.RATIO_TARGET
UB_TARGET = bench_bounds.UB_TARGET
RECOMPUTE_GM = {"log_softmax_grad": 4 / 3 + 0.02, "softmax_grad": 5 / 3 + 0.02}
REACHED = {  # (op, shape, dtype) -> (est/floor, UB use) where a target is not reached, and why
    # two 16 KiB rows per tile in two double-buffered queues (the result is stored from its input's
    # buffer) are 69.9% of the budget, and a third row does not fit (twice the UB would gain under 10%:
    # test_what_filling_the_ub_would_gain)
    ("log_softmax_grad", (1024, 4096), "float32"): (RATIO_TARGET, 0.69),
    # 16 rows on 16 of the 40 cores: a core's GM link cannot reach the floor's share of HBM, and a row
    # split over cores would need its partial sums exchanged between cores (or be read twice); even a
    # free exchange stays over the target (test_no_split_of_few_rows_reaches_the_target)
    ("log_softmax_grad", (16, 4096), "float32"): (2.63, UB_TARGET),
    ("softmax_grad", (16, 4096), "float32"): (2.59, UB_TARGET),
    # a row over the UB is read twice (or three times), the later reads from the L2; the floor counts its
    # bytes once. Against a floor that counted every read these were 1.10-1.18; one read would need the row
    # split over cores with its partial sums exchanged (issue 24)
    ("log_softmax_grad", (64, 65536), "float32"): (1.21, UB_TARGET),
    ("log_softmax_grad", (64, 65536), "float16"): (1.29, UB_TARGET),
    ("log_softmax_grad", (64, 512, 256), "float16"): (1.29, UB_TARGET),
    ("softmax_grad", (64, 65536), "float32"): (1.30, UB_TARGET),
}
SEED_CASES = [c for c in bench.CASES if c.op in RECOMPUTE_GM]


@pytest.mark.parametrize("module", [bench_batching, bench_cube])
def test_the_python_m_benches_take_options_and_refuse_bad_ones(module, capsys):
    with pytest.raises(SystemExit) as info:
        module.main(["--help"])
    assert info.value.code == 0 and "--platform" in capsys.readouterr().out
    with pytest.raises(SystemExit) as info:
        module.main(["--bogus"])
    assert info.value.code == 2 and "unrecognized arguments: --bogus" in capsys.readouterr().err


def test_the_batching_bench_runs_one_kernel_at_given_shapes(capsys):
    """``python -m ascdsl.bench_batching --kernel NAME --shape MxN``: the rows of the kernels whose name starts
    with NAME, at the shapes given (each checked against the interpreter)."""
    bench_batching.main(["--kernel", "log-softmax", "--shape", "203x100", "--shape", "9x64"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| log-softmax")]
    assert [r.split(" | ")[1] for r in rows] == ["203x100 fp32", "9x64 fp32"]


@pytest.mark.slow
@pytest.mark.parametrize("case", SEED_CASES, ids=lambda c: f"{c.op}-{'x'.join(map(str, c.shape))}-{c.dtype}")
def test_seed_kernels_at_the_memory_bound_limit(case):
    op = {op.name: op for op in load_operators([OPS])}[case.op]
    k = bench.simulate(op, case, "Ascend910B3")
    ratio, ub = REACHED.get((case.op, case.shape, case.dtype), (RATIO_TARGET, UB_TARGET))
    assert 1.0 <= k.ratio <= ratio, k
    fits = "over UB" not in case.shape_class and "recompute" not in k.kernels and "two_pass" not in k.kernels
    assert k.gm_over_min <= (1.05 if fits else RECOMPUTE_GM[case.op]), k
    if np.prod(case.shape) >= 1 << 20:  # large shapes
        assert k.ub_use >= ub, k


@pytest.mark.slow
@pytest.mark.parametrize("op_name", sorted(RECOMPUTE_GM))
def test_no_split_of_few_rows_reaches_the_target(op_name):
    """The few-rows class split into one equal piece per core with no exchange at all (what any split
    can at best do) is still over the target: the fixed costs of a 0.5 us kernel dominate."""
    ops = {op.name: op for op in load_operators([OPS])}
    (case,) = [c for c in SEED_CASES if c.op == op_name and c.shape_class == "few rows"]
    k = bench.simulate(ops[op_name], case, "Ascend910B3")
    row = bench.Row(case, k, 1.0, 1.0)
    (b,) = bench_bounds.bounds(bench.simulate, ops, [row], "Ascend910B3")
    assert "one 1640-element piece per core" in b.what and b.ratio == k.ratio
    assert RATIO_TARGET < b.alternative < k.ratio


@pytest.mark.slow
@pytest.mark.parametrize("op_name", sorted(RECOMPUTE_GM))
def test_a_few_rows_a_core_overlap_their_loads(op_name):
    """541 rows of 613 floats (an untuned shape, 14 rows a core) in tiles of 4 rows: 1.31-1.34x of the
    floor in one tile a core, 1.21 in four."""
    op = {op.name: op for op in load_operators([OPS])}[op_name]
    attrs = {"dim": -1} if op_name == "log_softmax_grad" else {}
    k = bench.simulate(op, bench.BenchCase(op_name, "random rows", (541, 613), attrs=attrs), "Ascend910B3")
    assert 1.0 <= k.ratio <= 1.22, k


@pytest.mark.slow
@pytest.mark.parametrize("shape,bound", [((8, 2023, 15), 1.71), ((130, 1959, 15), 1.2), ((280, 98, 15), 1.15),
                                         ((37, 268, 15), 1.35), ((26, 2308, 5), 1.36), ((251, 158, 3), 2.52),
                                         ((116, 201, 9), 1.34), ((82, 747, 7), 1.16), ((122, 1394, 13), 1.06)])
def test_reduce_middle_small_odd_inner_sizes_read_lines_of_whole_rows(shape, bound):
    """The sweep's reduce-middle class with 15-float columns: 10.38, 2.65 and 2.02x of the floor in
    60-byte column bursts (8 slabs on 8 cores for the first), 2.56, 1.30 and 1.56 in lines of 8 rows on
    every core (issue 24); since, with the L2 write-back model, 1.82, 1.16 and 1.56, and a core's few lines in
    several tiles: 1.70 (a tile at most a part), 1.36 and 1.35 (37 and 26 slabs, 1.45 and 1.53 in one tile a
    pass). The fold's Gather offsets built on a core's first slab only (backend/plan/hoist.py): 280x98x15 1.56 ->
    1.195, 37x268x15 1.357 -> 1.342, and 251x158x3 5.21 -> 3.16, 116x201x9 1.53 -> 1.335. Tiles of whole slabs
    where a core has 4 or more (reduce_middle_slabs, read once): 251x158x3 3.16 -> 2.80 (2.51 with no barrier between
    the slabs' folds), 280x98x15 1.195 -> 1.142. The slabs past the last whole round of the cores in parts over
    them, beside every core's whole slabs: 82x747x7 1.417 -> 1.158, 122x1394x13 1.250 -> 1.050."""
    op = {op.name: op for op in load_operators([OPS])}["log_softmax_grad"]
    k = bench.simulate(op, bench._lsm("reduce-middle odd inner", shape, dim=1), "Ascend910B3")
    slabs = shape[0] >= 4 * 40
    assert k.kernels == f"reduce_middle_{'slabs' if slabs else 'lines'}_kernel", k
    assert k.cores == min(40, shape[0] * max(1, 40 // shape[0])) and (k.gm_over_min == 1.0) == slabs
    assert 1.0 <= k.ratio <= bound, k


@pytest.mark.slow
@pytest.mark.parametrize("op,shape,kernel,bound", [
    ("softmax_grad", (82, 6587), "two_pass_kernel", 1.18), ("log_softmax_grad", (82, 6587), "reduce_tail_recompute_kernel", 1.10),
    ("softmax_grad", (44, 33072), "two_pass_kernel", 1.10), ("log_softmax_grad", (44, 33072), "reduce_tail_recompute_kernel", 1.11),
    ("softmax_grad", (42, 20000), "two_pass_kernel", 1.15),
    ("log_softmax_grad", (125, 3334), "reduce_tail_recompute_kernel", 1.13)])
def test_the_rows_past_the_last_round_of_the_cores_go_in_parts(op, shape, kernel, bound):
    """Issue 24's sweep: whole rows on 40 cores left 82x6587 at 1.346x of the floor (3 rows on the busiest core, a
    mean of 2.05), 44x33072 at 1.652 / 1.615 (softmax_grad / log_softmax_grad; 4 cores take a second row read
    twice) and 125x3334 at 1.222. The rows past the last whole round in column parts over the cores, each part
    summing its whole row: 82x6587 1.179 / 1.097, 44x33072 1.190 / 1.103, 125x3334 1.122 (log_softmax_grad).
    softmax_grad's parts exchanging their partial sums where that saves a re-read of EXCHANGE_ELEMENTS or more:
    44x33072 1.190 -> 1.098, 42x20000 1.253 -> 1.148; 82x6587 (a shorter re-read) as before."""
    ops = {op.name: op for op in load_operators([OPS])}
    case = bench._sg("random rows", shape) if op == "softmax_grad" else bench._lsm("random rows", shape)
    k = bench.simulate(ops[op], case, "Ascend910B3")
    assert k.kernels == kernel and k.cores == 40, k
    assert 1.0 <= k.ratio <= bound, k


@pytest.mark.slow
def test_what_filling_the_ub_would_gain():
    """log_softmax_grad 1024x4096 float32 (two rows per tile, 69.9% of the UB) with twice the UB: the
    tiles take more rows and the UB fills, and the estimate gains nothing: with writes through the L2 the
    launch is at HBM's floor already (1.0074 of it, either way)."""
    ops = {op.name: op for op in load_operators([OPS])}
    (case,) = [c for c in SEED_CASES if c.op == "log_softmax_grad" and c.shape == (1024, 4096) and c.dtype == "float32"]
    k = bench.simulate(ops[case.op], case, "Ascend910B3")
    (b,) = bench_bounds.bounds(bench.simulate, ops, [bench.Row(case, k, 1.0, 1.0)], "Ascend910B3")
    assert k.ub_use < UB_TARGET <= b.ub_use and "2x the UB" in b.what
    assert 1.0 < b.alternative <= k.ratio < 1.01
    assert ascdsl.platforms.get_platform("Ascend910B3").ub_budget_bytes == 184 * 1024  # restored


def test_split_shape_is_one_equal_piece_per_core_in_whole_blocks():
    assert bench_bounds.split_shape((16, 4096), 40, 8) == (40, 1640)
    assert bench_bounds.split_shape((3, 5), 40, 16) == (40, 16)


def test_sweep_shapes_are_untuned_bounded_and_drawn_from_the_seed():
    cases = bench.sweep_cases(3, seed=5)
    assert cases == bench.sweep_cases(3, seed=5) and cases != bench.sweep_cases(3, seed=6)
    tuned = {(c.op, c.shape, c.dtype) for c in bench.CASES}
    assert not tuned & {(c.op, c.shape, c.dtype) for c in cases}
    assert all(int(np.prod(c.shape)) <= bench.SWEEP_ELEMENTS for c in cases)
    by_class = {}
    for c in cases:
        by_class.setdefault(c.shape_class, []).append(c)
    assert len(by_class["reduce-middle odd inner"]) == 3
    assert all(c.shape[2] % 2 == 1 and c.attrs == {"dim": 1} for c in by_class["reduce-middle odd inner"])
    assert all(0 < c.shape[1] % 64 < 8 for c in by_class["rows past a repeat"])
    assert all(c.dtype == "float16" and c.shape[1] < 200 and c.shape[0] * c.shape[1] >= bench.SWEEP_ELEMENTS // 4 - 200
               for c in by_class["16-bit short rows"])
    assert all(c.shape[0] < 60 and c.shape[1] >= 20000 for c in by_class["few long rows"])
    assert {c.op for c in by_class["random rows"]} == {"log_softmax_grad", "softmax_grad", "softmax"}


def test_sweep_prints_its_cases_worst_first_and_names_those_over_the_bound(capsys):
    ops = {op.name: op for op in load_operators([OPS])}
    cases = [bench._sg("odd", (3, 130)), bench._lsm("odd", (5, 1, 7), dim=1), bench._sm("odd", (2, 65), "float16")]
    done = bench.sweep(ops, cases, DEFAULT_PLATFORM, sys.stdout)
    out = capsys.readouterr().out
    ratios = [k.ratio for _, k in done]
    assert sorted(ratios, reverse=True) == ratios and len(done) == 3 and min(ratios) >= 1.0
    rows = [line.strip("| ").split(" | ") for line in out.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert [float(r[7]) for r in rows] == [round(x, 2) for x in ratios]
    over = [f"{c.op} odd {c.dtype}" for c, k in done if k.ratio > bench.SWEEP_BOUND]
    assert "\nover 1.2x: " + ("; ".join(sorted(over)) if over else "none") + "\n" in out
    # then each seed-op shape over the bound with a floor against its alternatives (the 5x1x7 launch's floor is 0)
    compared = [f"  {c.op} {'x'.join(map(str, c.shape))} {c.dtype} (odd)" for c, k in done
                if c.op in bench_bounds.SEED_OPS and k.ratio > bench.SWEEP_BOUND and k.floor_us > 0]
    assert compared == ["  softmax_grad 3x130 float32 (odd)"]
    listed = out.split("the model's figure for each alternative")[1].splitlines()[1:]
    assert [line.split(")")[0] + ")" for line in listed if line.startswith("  ")] == compared
