"""The ``ascdsl`` command: ``ir``, ``check`` and ``build`` over op files."""
from __future__ import annotations

import argparse
import sys

from . import record
from .errors import Error, InputTypeError, InputValueError
from .ir import Module, dump
from .jit import BACKENDS
from .op import Operator, load_operators
from .testing import CaseResult, format_table, verify


def specializations(op: Operator, opdef_only: bool = False, platform: str | None = None) -> Module:
    """Every distinct kernel specialisation that the op's cases launch, in first-launch order
    (``opdef_only``: only the cases the OpDef can express, what ``ascdsl build`` compiles). With a
    ``platform``, the cases launch for it, and those its host rejects (e.g. bfloat16 where the
    platform has no bfloat16 casts) launch nothing."""
    cases = [c for c in op.cases if op.opdef_attrs(c) is not None] if opdef_only else op.cases
    target = {} if platform is None else {"platform": platform}
    with record.launches() as seen:
        for case in cases:
            try:
                op.entry(*case.inputs(), **dict(case.attrs), backend="interpreter", **target)
            except (InputTypeError, InputValueError):
                if platform is None:
                    raise
    kernels = []
    for launch in seen:
        if launch.kernel not in kernels:
            kernels.append(launch.kernel)
    return Module(tuple(kernels))


def _backends(choice: str) -> tuple[str, ...]:
    return tuple(sorted(BACKENDS)) if choice == "all" else (choice,)


def cmd_ir(args) -> int:
    for op in load_operators(args.paths):
        print(dump(specializations(op)), end="")
    return 0


def cmd_check(args) -> int:
    results = [r for op in load_operators(args.paths)
               for r in verify(op, _backends(args.backend), args.platform)]
    print(format_table(results))
    return 0 if all(r.ok for r in results) else 1


def cmd_build(args) -> int:
    """Build every op, then (unless ``--no-verify``) verify every build; one table at the end."""
    import time

    from . import build, sim
    from .platforms import DEFAULT_PLATFORM, get_platform
    from .verify import verify_build
    platform = get_platform(args.platform or DEFAULT_PLATFORM)
    start, results = time.perf_counter(), []
    for op in load_operators(args.paths):
        try:
            b = build.plan(op, platform)
            folder = build.write(b, args.output)
        except Error as e:
            print(f"ascdsl: cannot build {op.name}:\n{e}", file=sys.stderr)
            results.append(CaseResult(op.name, "(build)", "build", False, message=str(e).splitlines()[0]))
            continue
        print(f"built {folder}" + (f" ({len(b.failed)} variant(s) not emitted)" if b.failed else ""))
        for v, e in b.failed:
            print(f"ascdsl: {b.name}: variant {v.key} ({v.kernel.name} {dict(v.kernel.constexprs)}) "
                  f"could not be emitted:\n{e}", file=sys.stderr)
        if args.verify:
            results += verify_build(b, folder)
        else:
            results += [CaseResult(op.name, f"variant {v.key} {v.kernel.name}", "emit", False,
                                   message=str(e).splitlines()[0]) for v, e in b.failed]
    if results:
        print(format_table(results))
    stats = sim.build_stats()
    print(f"{time.perf_counter() - start:.1f}s; g++: {stats.builds} builds ({stats.seconds:.1f}s), "
          f"{stats.cache_hits} cached")
    return 0 if all(r.ok for r in results) else 1


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
            p.add_argument("--no-verify", dest="verify", action="store_false",
                           help="write the files only (default: verify on the interpreter and the simulator)")
        p.set_defaults(run=run)
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except Error as e:
        print(f"ascdsl: {e}", file=sys.stderr)
        return 1
