"""``ascdsl bench`` (also ``python -m ascdsl bench``): for each op and shape class, the cost model's
estimate of the generated kernel against its floor, and the interpreter against plain NumPy.

Every figure comes from one run of this command: the simulator's counters and cost model
(:mod:`ascdsl.sim.cost`) for the estimated time, the floor, GM traffic, bytes per copy and UB use;
medians of interleaved runs for the interpreter (through the op's entry point) and the
hand-written NumPy formula of the same op on the same inputs, in CPU time of this process (so that
other work on a shared machine does not skew the ratio; NumPy runs these formulas on one thread).

Columns: ``est us`` the estimated kernel time (the slowest core); ``floor us`` the larger of the GM
bytes HBM must move (each byte read once) at its bandwidth and all vector work at peak; ``est/floor``;
``pipe`` the busiest pipe of the slowest core; ``GM/min`` GM bytes moved over the inputs read once plus the
output written once; ``B/copy`` GM bytes per DataCopy; ``UB`` the kernel's UB use over the planner's
budget; ``interp`` and ``numpy`` medians in ms and their ratio. Under the table, where a seed-op class is off a target,
what the model says the alternative would reach (:mod:`ascdsl.bench_bounds`); then the program-batching rows
(:mod:`ascdsl.bench_batching`) and the cube rows (:mod:`ascdsl.bench_cube`).
"""
from __future__ import annotations

import argparse
import contextlib
import os
import platform as host
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from . import bench_batching, bench_bounds, bench_cube, bench_interp, record, sim
from .bench_interp import interleaved_medians
from .sim import cost
from .errors import InputValueError
from .op import Case, Operator, load_operators
from .platforms import DEFAULT_PLATFORM, get_platform

F32 = np.float32


def _f32(*arrays):
    return [a.astype(F32, copy=False) for a in arrays]


def log_softmax_grad_numpy(grad_output, output, dim):
    g, o = _f32(grad_output, output)
    return (g - np.exp(o) * g.sum(axis=dim, keepdims=True)).astype(grad_output.dtype, copy=False)


def softmax_grad_numpy(grad, src):
    g, s = _f32(grad, src)
    return ((g - (g * s).sum(axis=-1, keepdims=True)) * s).astype(grad.dtype, copy=False)


def softmax_numpy(x):
    (v,) = _f32(x)
    e = np.exp(v - v.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(x.dtype, copy=False)


NUMPY: dict[str, Callable] = {
    "log_softmax_grad": log_softmax_grad_numpy,
    "softmax_grad": softmax_grad_numpy,
    "softmax": softmax_numpy,
}
"""The hand-written NumPy formula of each benchmarked op (16-bit inputs computed in float32)."""


@dataclass(frozen=True)
class BenchCase:
    op: str
    shape_class: str
    shape: tuple[int, ...]
    dtype: str = "float32"
    attrs: dict = field(default_factory=dict)

    def case(self, n_inputs: int) -> Case:
        return Case(*[self.shape] * n_inputs, dtype=self.dtype, **self.attrs)


def _lsm(cls, shape, dtype="float32", dim=-1):
    return BenchCase("log_softmax_grad", cls, shape, dtype, {"dim": dim})


def _sg(cls, shape, dtype="float32"):
    return BenchCase("softmax_grad", cls, shape, dtype)


def _sm(cls, shape, dtype="float32"):
    return BenchCase("softmax", cls, shape, dtype)


CASES = (
    _lsm("rows fit", (4096, 1024)), _lsm("rows fit", (4096, 1024), "float16"), _lsm("rows fit", (4096, 1024), "bfloat16"),
    _lsm("rows fit", (1024, 4096)), _lsm("many short rows", (16384, 128)), _lsm("many short rows", (16384, 128), "float16"),
    _lsm("few rows", (16, 4096)), _lsm("rows over UB", (64, 65536)), _lsm("rows over UB", (64, 65536), "float16"),
    _lsm("reduce-middle", (64, 512, 256), dim=1), _lsm("reduce-middle", (64, 512, 256), "float16", dim=1),
    _lsm("no reduce", (4096, 1, 1024), dim=1),
    _sg("rows fit", (4096, 1024)), _sg("rows fit", (1024, 4096)), _sg("rows fit", (1024, 4096), "float16"),
    _sg("rows fit", (1024, 4096), "bfloat16"), _sg("many short rows", (16384, 128)), _sg("few rows", (16, 4096)),
    _sg("rows over UB", (64, 65536)),
    _sm("rows fit", (4096, 1024)), _sm("rows fit", (1024, 4096)), _sm("many short rows", (16384, 128)),
    _sm("rows over UB", (64, 30000)),
)

QUICK = (  # the shapes of the ops' own verification cases, whose simulator builds the test suite caches
    _lsm("rows fit", (4, 33)), _lsm("reduce-middle", (2, 700, 130), "float16", dim=1),
    _sg("rows fit", (5, 33), "bfloat16"), _sg("rows over UB", (2, 9000), "float16"), _sm("rows fit", (64, 1000)),
)

ENTRY_TARGETS = (_lsm("rows fit", (4096, 1024)), _lsm("rows fit", (1024, 4096)), _lsm("many short rows", (16384, 128)),
                 _sg("rows fit", (4096, 1024)), _sg("rows fit", (1024, 4096)), _sg("many short rows", (16384, 128)))
"""The issue's interpreter target: op entry points within ENTRY_BOUND of the NumPy formula (fp32)."""
ENTRY_BOUND = 2.0


SWEEP_BOUND = bench_bounds.RATIO_TARGET
"""The issue's target for every seed-op class on shapes the bench does not list."""
SWEEP_ELEMENTS = 1 << 22
"""The largest tensor a sweep draws (elements): simulator runs of minutes, not hours."""


def sweep_cases(n: int, seed: int = 0, elements: int = SWEEP_ELEMENTS) -> list[BenchCase]:
    """``n`` shapes per seed op, dtype and class, drawn (``seed``) from classes :data:`CASES` holds
    only at tuned sizes: rows of any length, rows just past a whole repeat, many short 16-bit rows,
    few long rows, and (log_softmax_grad) a reduced middle axis with a small odd inner size."""
    rng = np.random.default_rng(seed)
    cases = []

    def shape(cols: int, low: int, high: int) -> tuple[int, int]:  # (rows, cols) of at most `elements`
        cols = min(cols, max(1, elements // low))
        return int(rng.integers(low, max(low + 1, min(high, elements // cols)))), cols
    for _ in range(n):
        draws = [("random rows", shape(int(rng.integers(33, 12000)), 41, 6000), "float32"),
                 ("rows past a repeat", shape(64 * int(rng.integers(2, 64)) + int(rng.integers(1, 8)), 41, 6000), "float32"),
                 ("16-bit short rows", shape(short := int(rng.integers(17, 200)), max(4000, elements // 4 // short),
                                             1 << 30), "float16"),
                 ("few long rows", shape(int(rng.integers(20000, 70000)), 41, 60), "float32")]
        for cls, (rows, cols), dtype in draws:
            cases += [_lsm(cls, (rows, cols), dtype), _sg(cls, (rows, cols), dtype), _sm(cls, (rows, cols), dtype)]
        inner = 2 * int(rng.integers(0, 9)) + 1
        rows, middle = shape(int(rng.integers(33, 3000)) * inner, 8, 512)
        cases.append(_lsm("reduce-middle odd inner", (rows, max(1, middle // inner), inner), "float32", dim=1))
    return cases


def sweep(ops: dict, cases: list[BenchCase], platform: str, out) -> list[tuple[BenchCase, "Kernel"]]:
    """Simulate ``cases`` and print them worst first, with the classes over :data:`SWEEP_BOUND`."""
    done = [(case, simulate(ops[case.op], case, platform)) for case in cases if case.op in ops]
    done.sort(key=lambda ck: -ck[1].ratio)
    header = ("op", "shape class", "shape", "dtype", "kernel", "est us", "floor us", "est/floor", "pipe", "GM/min", "UB",
              "cores")
    rows = [(c.op, c.shape_class, "x".join(map(str, c.shape)), c.dtype, k.kernels, f"{k.est_us:.4g}",
             f"{k.floor_us:.4g}", f"{k.ratio:.2f}", k.critical_pipe, f"{k.gm_over_min:.3f}", f"{k.ub_use:.1%}",
             str(k.cores)) for c, k in done]
    print(f"\nseed ops on {len(done)} untuned shapes, worst first (target <= {SWEEP_BOUND:g}x):", file=out)
    print(format_table(rows, header), file=out)
    over = sorted({(c.op, c.shape_class, c.dtype) for c, k in done if k.ratio > SWEEP_BOUND})
    print(f"over {SWEEP_BOUND:g}x: " + ("; ".join(" ".join(o) for o in over) if over else "none"), file=out)
    bench_bounds.report_sweep(bench_bounds.sweep_bounds(simulate, ops, done, platform), out)
    return done


@dataclass(frozen=True)
class Kernel:
    """The simulator's figures of one case (every launch of the op's entry, summed)."""

    kernels: str
    est_us: float
    floor_us: float
    critical_pipe: str
    gm_over_min: float
    bytes_per_copy: float
    ub_use: float
    cores: int  # the most blocks of one launch

    @property
    def ratio(self) -> float:
        return self.est_us / self.floor_us if self.floor_us else float("inf")


@dataclass(frozen=True)
class Row:
    case: BenchCase
    kernel: Kernel
    interp_ms: float
    numpy_ms: float

    @property
    def interp_ratio(self) -> float:
        return self.interp_ms / self.numpy_ms


def entry_ratio(op: Operator, case: BenchCase, repeats: int) -> tuple[float, float]:
    """(entry point, NumPy formula) medians in seconds on the interpreter, interleaved."""
    inputs = op.inputs_of(case.case(len(op.inputs)))
    attrs = case.attrs
    return tuple(interleaved_medians([lambda: op.entry(*inputs, **attrs, backend="interpreter"),
                                      lambda: NUMPY[op.name](*inputs, **attrs)], repeats))


def simulate(op: Operator, case: BenchCase, platform: str) -> Kernel:
    """The op's entry on the simulator: every launch it makes, summed."""
    plat = get_platform(platform)
    inputs = op.inputs_of(case.case(len(op.inputs)))
    with sim.record() as runs, record.launches() as seen:
        out = op.entry(*inputs, **case.attrs, backend="sim", platform=platform)
    stats = [r.stats for r in runs]
    est = sum(s.est_us for s in stats)
    floor = sum(s.floor_cycles for s in stats) / cost.constants(plat).clock_mhz.value
    gm = sum(s.gm_read_bytes + s.gm_write_bytes for s in stats)
    minimum = sum(a.nbytes for a in inputs) + np.asarray(out).nbytes
    copies = sum(s.gm_copies for s in stats)
    busiest = max(stats, key=lambda s: s.est_cycles)
    return Kernel(",".join(dict.fromkeys(r.kernel.name for r in seen)), est, floor, busiest.critical_pipe,
                  gm / minimum if minimum else float("nan"), gm / copies if copies else 0.0,
                  max(s.ub_peak_bytes for s in stats) / plat.ub_budget_bytes, max(len(s.per_block) for s in stats))


def measure(op: Operator, case: BenchCase, platform: str, repeats: int) -> Row:
    """One row: the op's entry on the simulator, then the interpreter against the NumPy formula."""
    kernel = simulate(op, case, platform)
    interp, numpy_time = entry_ratio(op, case, repeats)
    return Row(case, kernel, interp * 1e3, numpy_time * 1e3)


HEADER = ("op", "shape class", "shape", "dtype", "kernel", "est us", "floor us", "est/floor", "pipe", "GM/min",
          "B/copy", "UB", "interp ms", "numpy ms", "interp/numpy")


def cells(row: Row) -> tuple[str, ...]:
    c, k = row.case, row.kernel
    return (c.op, c.shape_class, "x".join(map(str, c.shape)) + "".join(f" {k}={v}" for k, v in c.attrs.items()),
            c.dtype, k.kernels, f"{k.est_us:.4g}", f"{k.floor_us:.4g}", f"{k.ratio:.2f}", k.critical_pipe,
            f"{k.gm_over_min:.3f}", f"{k.bytes_per_copy:.0f}", f"{k.ub_use:.1%}", f"{row.interp_ms:.2f}",
            f"{row.numpy_ms:.2f}", f"{row.interp_ratio:.2f}")


def format_table(rows: list[tuple[str, ...]], header: tuple[str, ...] = HEADER) -> str:
    """A Markdown table (what docs/performance.md shows)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def machine() -> str:
    """The CPU (its model name where Linux tells it), core count, Python and NumPy versions."""
    cpu = host.processor() or host.machine()
    with contextlib.suppress(OSError):
        names = [line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                 if line.startswith("model name")]
        cpu = names[0] if names else cpu
    return f"{cpu}, {os.cpu_count()} CPUs, Python {host.python_version()}, NumPy {np.__version__}"


def run(ops_dir: str | Path = "ops", *, quick: bool = False, platform: str = DEFAULT_PLATFORM,
        repeats: int | None = None, out=None, interpreter: bool = False, sweep_shapes: int = 0,
        seed: int = 0, sweep_class: str = "") -> list[Row]:
    """Measure every case whose op is in ``ops_dir`` (``quick``: small shapes, for a smoke test) and
    print the table to ``out`` (default: standard output); ``interpreter``: only the interpreter's
    rows (no simulator table); ``sweep_shapes``: then that many untuned shapes per seed-op class
    (:func:`sweep_cases`, drawn with ``seed``; only the classes whose name contains ``sweep_class``),
    worst first."""
    out = out or sys.stdout
    k = cost.constants(get_platform(platform))
    ops = {op.name: op for op in load_operators([ops_dir])}
    cases = [c for c in (QUICK if quick else CASES) if c.op in ops]
    if not cases:
        raise InputValueError(f"{ops_dir}: none of the benchmarked ops ({', '.join(NUMPY)}) is there")
    repeats = repeats or (3 if quick else 7)
    print(f"ascdsl bench on {machine()}; platform {platform}; CPU-time medians of {repeats} interleaved runs",
          file=out)
    print(f"cost model: {k.clock_mhz.value:.0f} MHz, HBM {k.hbm_gb_per_s.value / 1e3:.1f} TB/s shared "
          f"(ascdsl/sim/cost.py)", file=out)
    rows = []
    for case in () if interpreter else cases:
        rows.append(measure(ops[case.op], case, platform, repeats))
        if not quick:  # progress: the full run takes minutes
            print(" | ".join(cells(rows[-1])), file=sys.stderr, flush=True)
    if not interpreter:
        print(format_table([cells(r) for r in rows]), file=out)
    if sweep_shapes:
        drawn = sweep_cases(sweep_shapes, seed, 1 << 14 if quick else SWEEP_ELEMENTS)
        sweep(ops, [c for c in drawn if sweep_class in c.shape_class], platform, out)
    if not (quick or interpreter):
        bench_bounds.report(bench_bounds.bounds(simulate, ops, rows, platform), out)
        bench_batching.report(platform, out, ops_dir=ops_dir)
    if not interpreter:
        bench_cube.report(platform, out, quick)
    if not quick:
        print(f"\nentry point / NumPy formula on the interpreter (target <= {ENTRY_BOUND:g}x):", file=out)
        for case in (c for c in ENTRY_TARGETS if c.op in ops):
            a, b = entry_ratio(ops[case.op], case, repeats)
            print(f"  {case.op} {'x'.join(map(str, case.shape))} {case.dtype}: {a / b:.2f}x "
                  f"({a * 1e3:.1f} ms / {b * 1e3:.1f} ms)", file=out, flush=True)
    bench_interp.report(repeats, out, *((bench_interp.QUICK_SHAPES, False) if quick else ()))
    return rows


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("ops_dir", nargs="?", default="ops", help="folder of op files (default: ops)")
    p.add_argument("--quick", action="store_true", help="small shapes only (a smoke test)")
    p.add_argument("--platform", default=DEFAULT_PLATFORM, help=f"target SoC (default: {DEFAULT_PLATFORM})")
    p.add_argument("--repeats", type=int, default=None, help="interleaved timing runs (default 7; 3 with --quick)")
    p.add_argument("--interpreter", action="store_true", help="only the interpreter's rows (no simulator table)")
    p.add_argument("--sweep", type=int, default=0, metavar="N",
                   help="then N random shapes per seed-op class the bench does not list, worst first "
                        "(with --quick: tensors of at most 16384 elements)")
    p.add_argument("--seed", type=int, default=0, help="the sweep's random seed (default 0)")
    p.add_argument("--sweep-class", default="", metavar="TEXT",
                   help="sweep only the shape classes whose name contains TEXT (such as reduce-middle)")


def main(args: argparse.Namespace) -> int:
    run(args.ops_dir, quick=args.quick, platform=args.platform, repeats=args.repeats, interpreter=args.interpreter,
        sweep_shapes=args.sweep, seed=args.seed, sweep_class=args.sweep_class)
    return 0
