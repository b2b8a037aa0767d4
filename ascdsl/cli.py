"""The ``ascdsl`` command: ``check``, ``build``, ``ir``, ``platforms`` and ``bench`` over op files.

A build writes one folder per operator, named after the op's ``OP.name`` (``ops/rmsnorm.py``
declaring ``name="rms_norm"`` builds into ``DIR/rms_norm/``). Errors are one line (a kernel or host
code mistake is a located error with its source line); ``--debug`` shows Python's traceback.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from contextlib import contextmanager, nullcontext
from importlib.metadata import PackageNotFoundError, version

from tqdm import tqdm

from . import bench, build, record, report, sim
from .backend.batching.batchrun import describe, scalar_fields
from .backend.lift import lift
from .backend.render import ascendc
from .errors import Error
from .ir import dump
from .jit import BACKENDS
from .op import Operator, load_operators, specializations
from .opbuild import jit_functions
from .platforms import DEFAULT_PLATFORM, PLATFORMS, Platform, get_platform
from .build import check_host, error_heading
from .testing import CaseResult, format_table, run_case
from .verify import verify_build

BUILD_HELP = """Write DIR/<OP.name>/ for every op file (kernel/, op_project/, ir/, manifest.json,
report.txt, report.html; the folder is named after the op's OP.name, not its file) and verify it:
every case on the interpreter and on the simulator, the op-project kernel and kernel/main.cpp of
every variant. Exit status 1 if anything fails."""


def _backends(choice: str) -> tuple[str, ...]:
    return tuple(sorted(BACKENDS)) if choice == "all" else (choice,)


@contextmanager
def progress(total: int, unit: str):
    """A progress bar on stderr; silent when stderr is not a terminal (CI logs, pipes)."""
    with tqdm(total=total, unit=unit, file=sys.stderr, disable=None, leave=False, dynamic_ncols=True) as bar:
        yield bar


def _platform(name: str | None) -> Platform:
    return get_platform(name or os.environ.get("ASCDSL_PLATFORM") or DEFAULT_PLATFORM)


def _host_row(op: Operator, platform: Platform) -> CaseResult:
    """Whether the op's host code lowers to C++ as ``build`` lowers it (full error on stderr)."""
    try:
        check_host(op, platform)
        return CaseResult(op.name, "(host code -> C++)", "build", True)
    except Error as e:  # also a case that fails on the interpreter (its own row says so too)
        heading = error_heading(op, e)
        print(f"ascdsl: {op.name}: {heading}:\n{e}", file=sys.stderr)
        row = "(kernels -> Ascend C)" if heading.startswith("kernel") else "(host code -> C++)"
        return CaseResult(op.name, row, "build", False, message=str(e).splitlines()[0])


def cmd_ir(args) -> int:
    for op in load_operators(args.paths):
        print(dump(specializations(op)), end="")
    return 0


def cmd_platforms(args) -> int:
    rows = [("platform", "vector cores", "AI cores", "UB", "planner budget", "bf16", "")]
    rows += [(p.name, str(p.vector_core_count), str(p.ai_core_count), f"{p.ub_bytes // 1024} KiB",
              f"{p.ub_budget_bytes // 1024} KiB", "yes" if p.has_bf16 else "no",
              "(default)" if p.name == DEFAULT_PLATFORM else "") for p in PLATFORMS.values()]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    return 0


def explained(launches, platform: Platform) -> list[str]:
    """``--explain``: a line per distinct launch (kernel specialisation, grid and scalar arguments: the plan
    depends on all three) of ``launches``, what the simulator runs for it: its programs batched (the form, P,
    the batched grid) or why not, at the kernel line that prevents it."""
    lines, seen = [], set()
    for launch in launches:
        key = (launch.kernel, launch.grid, scalar_fields(launch.kernel, list(launch.args)))
        if key not in seen:
            seen.add(key)
            k = launch.kernel
            signature = ", ".join([str(p.type.dtype) for p in k.params] + [f"{c}={v}" for c, v in k.constexprs])
            lines.append(f"{k.name}({signature}) on grid {launch.grid}: "
                         + describe(launch.kernel, launch.grid, platform, list(launch.args)))
    return lines


def not_lifted(b) -> list[str]:
    """``ascdsl build --explain``: why the constexprs of the variants of build ``b`` that no variant lifts stay
    specialisations (:func:`.lift.declines`), a located line each; a kernel that a variant lifts is not asked
    again where a value lies outside its lifted domain."""
    fns, lines = jit_functions(b.op), []
    lifted = {(v.kernel.name, tuple(p.type for p in v.kernel.params)) for v in b.variants if v.lift is not None}
    for v in b.variants:
        if v.lift is None and (v.kernel.name, tuple(p.type for p in v.kernel.params)) in lifted:
            continue
        lines += lift.declines(fns[v.kernel.name], v.kernel, v.lift, b.platform)
    return list(dict.fromkeys(lines))


def _print_explained(launches, platform: Platform) -> None:
    print("\nProgram batching of each launch on the simulator (--explain):")
    for line in explained(launches, platform) or ["(no launches)"]:
        print("  " + line)


def cmd_check(args) -> int:
    platform = _platform(args.platform)
    ops, backends = load_operators(args.paths), _backends(args.backend)
    results = []
    with progress(sum(1 + len(op.cases) * len(backends) for op in ops), "case") as bar, \
            (record.launches() if args.explain else nullcontext(())) as launches:
        for op in ops:
            bar.set_description(op.name)
            results.append(_host_row(op, platform))
            bar.update()
            for case in op.cases:
                for backend in backends:
                    results.append(run_case(op, case, backend, platform.name))
                    bar.update()
    print(format_table(results))
    if args.explain:
        _print_explained(launches, platform)
    return 0 if all(r.ok for r in results) else 1


def cmd_build(args) -> int:
    """Build every op, then (unless ``--no-verify``) verify every build; one table at the end."""
    platform = _platform(args.platform)
    ops = load_operators(args.paths)
    start, results, before, sampled, declined = time.perf_counter(), [], ascendc.work(), lift.samples(), []
    with progress(sum(1 + (len(op.cases) + 1 if args.verify else 0) for op in ops), "step") as bar, \
            (record.launches() if args.explain else nullcontext(())) as launches:
        for op in ops:
            bar.set_description(op.name)
            try:
                b = build.plan(op, platform)
                folder = build.write(b, args.output)
            except Error as e:
                bar.update(1 + (len(op.cases) + 1 if args.verify else 0))
                heading = error_heading(op, e)
                print(f"ascdsl: cannot build {op.name}" + (f": {heading}" if heading.startswith("kernel") else "")
                      + f":\n{e}", file=sys.stderr)
                results.append(CaseResult(op.name, "(build)", "build", False, message=str(e).splitlines()[0]))
                continue
            bar.update()
            declined += not_lifted(b) if args.explain else []
            bar.write(f"built {folder}" + (f" ({len(b.failed)} variant(s) not emitted)" if b.failed else ""),
                      file=sys.stdout)
            for v, e in b.failed:
                print(f"ascdsl: {b.name}: variant {v.key} ({v.kernel.name} {dict(v.kernel.constexprs)}) "
                      f"could not be emitted:\n{e}", file=sys.stderr)
            samples = {}
            if args.verify:
                rows, samples = verify_build(b, folder, tick=bar.update)
                results += rows
            else:
                results += [CaseResult(op.name, f"variant {v.key} {v.kernel.name}", "emit", False,
                                       message=str(e).splitlines()[0]) for v, e in b.failed]
            report.write(b, folder, samples)
    if results:
        print(format_table(results))
    if args.explain:
        print("\nConstexprs that stay specialisations (--explain):")
        for line in declined or ["(none)"]:
            print("  " + line)
        _print_explained(launches, platform)
    stats, work = sim.build_stats(), ascendc.work() - before
    print(f"{time.perf_counter() - start:.1f}s; g++: {stats.builds} builds ({stats.seconds:.1f}s), "
          f"{stats.cache_hits} cached; lift: {sum((lift.samples() - sampled).values())} sample compiles; "
          f"backend: {sum(n for k, n in work.items() if k[0] == 'plan')} kernel plans, "
          f"{sum(n for k, n in work.items() if k[0] == 'render')} class renders")
    return 0 if all(r.ok for r in results) else 1


def _version() -> str:
    try:
        return version("ascdsl")
    except PackageNotFoundError:  # a source checkout that was never installed
        return "unknown (not installed)"


def parser() -> argparse.ArgumentParser:
    debug = argparse.ArgumentParser(add_help=False)
    debug.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show Python's traceback for an error instead of one line")
    top = argparse.ArgumentParser(prog="ascdsl", description="Check op files (ascdsl kernels, host code, "
                                  "references, cases) and build them into Ascend C kernels and CANN op projects.",
                                  parents=[debug],
                                  epilog="`ascdsl COMMAND --help` describes each command.")
    top.add_argument("--version", action="version", version=f"ascdsl {_version()}")
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name, run, help, description=None):
        p = sub.add_parser(name, help=help, description=description or help, parents=[debug])
        p.set_defaults(run=run)
        return p

    def paths(p):
        p.add_argument("paths", nargs="+", metavar="PATH",
                       help="op files (Python files defining OP = ascdsl.Operator(...)) or folders of them")

    def platform(p):
        p.add_argument("--platform", default=None, metavar="SOC",
                       help=f"target SoC (default: $ASCDSL_PLATFORM or {DEFAULT_PLATFORM}; `ascdsl platforms` lists them)")

    def explain(p):
        p.add_argument("--explain", action="store_true",
                       help="after the table, say for every launch of the cases whether the simulator batches "
                            "its programs (P consecutive programs as one), and if not, why, at the kernel line")

    p = command("check", cmd_check, "run every case of op files on the backends against their references",
                "Run every case of the op files on the backends and compare with their NumPy references; "
                "also check that the host code lowers to C++ as `ascdsl build` needs. Exit status 1 on "
                "any failure.")
    paths(p)
    p.add_argument("--backend", choices=sorted(BACKENDS) + ["all"], default="all",
                   help="where the cases run: the NumPy interpreter, the simulator, or both (default)")
    platform(p)
    explain(p)
    p = command("build", cmd_build, "build op files into DIR/<OP.name>/ and verify them", BUILD_HELP)
    paths(p)
    platform(p)
    explain(p)
    p.add_argument("-o", "--output", default="build", metavar="DIR",
                   help="where the op folders go (default: build)")
    p.add_argument("--no-verify", dest="verify", action="store_false",
                   help="write the files only (default: verify on the interpreter and the simulator)")
    p = command("ir", cmd_ir, "print the IR of every kernel specialisation an op file's cases launch")
    paths(p)
    command("platforms", cmd_platforms, "list the platforms (SoCs) and their vector cores, UB and bf16")
    bench.add_arguments(command("bench", bench.main,
                                "estimated kernel time against its floor, and the interpreter against NumPy"))
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except KeyboardInterrupt:
        print("ascdsl: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - the one place every error becomes a message
        if getattr(args, "debug", False):
            traceback.print_exc()
        elif isinstance(e, Error):
            print(f"ascdsl: {e}", file=sys.stderr)
        else:
            print(f"ascdsl: internal error: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''} "
                  "(rerun with --debug for the traceback)", file=sys.stderr)
        return 1
