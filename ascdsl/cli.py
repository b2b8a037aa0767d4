"""The ``ascdsl`` command: ``ir``, ``check`` and ``build`` over op files."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import record
from .errors import Error
from .jit import BACKENDS
from .ir import Module, dump
from .op import Operator, load_operators
from .testing import CaseResult, verify


def specializations(op: Operator) -> Module:
    """Every distinct kernel specialisation that the op's cases launch, in first-launch order."""
    with record.launches() as seen:
        for case in op.cases:
            op.entry(*case.inputs(), **dict(case.attrs), backend="interpreter")
    kernels = []
    for launch in seen:
        if launch.kernel not in kernels:
            kernels.append(launch.kernel)
    return Module(tuple(kernels))


def _table(results: list[CaseResult]) -> str:
    rows = [("op", "case", "backend", "result", "max |err|")]
    rows += [(r.op, r.case, r.backend, "ok" if r.ok else "FAIL", f"{r.max_abs_err:.3g}")
             for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    lines += [f"FAIL {r.op} [{r.case}] on {r.backend}: {r.message}" for r in results if not r.ok]
    failed = sum(not r.ok for r in results)
    lines.append(f"{len(results) - failed} passed, {failed} failed")
    return "\n".join(lines)


def _backends(choice: str) -> tuple[str, ...]:
    return tuple(sorted(BACKENDS)) if choice == "all" else (choice,)


def cmd_ir(args) -> int:
    for op in load_operators(args.paths):
        print(dump(specializations(op)), end="")
    return 0


def cmd_check(args) -> int:
    results = [r for op in load_operators(args.paths)
               for r in verify(op, _backends(args.backend), args.platform)]
    print(_table(results))
    return 0 if all(r.ok for r in results) else 1


def cmd_build(args) -> int:
    from . import build
    from .platforms import DEFAULT_PLATFORM, get_platform
    platform = get_platform(args.platform or DEFAULT_PLATFORM)
    failed = 0
    for op in load_operators(args.paths):
        try:
            folder, = build.build([op], args.output, platform)
        except Error as e:
            print(f"ascdsl: cannot build {op.name}:\n{e}", file=sys.stderr)
            failed += 1
            continue
        print(f"built {folder}")
        if getattr(args, "verify", False):  # compile and run kernel/main.cpp for every variant on ascdsl.sim
            checks = build.verify_main(build.plan(op, platform), folder, folder / "verify")
            for c in checks:
                print(f"  variant {c.key} [{c.case}]: {'ok' if c.ok else 'FAIL ' + c.message}")
            failed += sum(not c.ok for c in checks)
    return 0 if failed == 0 else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ascdsl", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("ir", help="print the IR of every kernel specialisation an op file's cases launch")
    p.add_argument("paths", nargs="+")
    p.set_defaults(run=cmd_ir)
    for name, run, help in (("check", cmd_check, "verify op files against their references"),
                            ("build", cmd_build, "build op files into a folder and verify them")):
        p = sub.add_parser(name, help=help)
        p.add_argument("paths", nargs="+")
        p.add_argument("--backend", choices=sorted(BACKENDS) + ["all"], default="all")
        p.add_argument("--platform", default=None)
        if name == "build":
            p.add_argument("-o", "--output", default="build")
        p.set_defaults(run=run)
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except Error as e:
        print(f"ascdsl: {e}", file=sys.stderr)
        return 1
