"""Mutated kernels for the fuzz test: seeded AST mutations of the ``@ascdsl.jit`` kernels in ``ops/``
and ``tests/``, each written as a module of its own, and the rule every outcome must follow.

A mutant is an op file or a kernel file with one node of one kernel changed (a constant, an
operator, a keyword argument, a dtype, a builtin, a name, an index). It is launched the way its
source is: an op file through its entry on its first cases, a kernel file with arguments made from
the parameter names. Run as ``python -m tests.reliability.fuzz SECONDS MUTANT.py:INDEX ...`` it launches
those mutants on the simulator, their kernels built in one g++ run, and prints each outcome as it
comes (the test runs simulator mutants in a subprocess, so that a hang is a timeout, not a stuck suite).
"""
from __future__ import annotations

import ast
import importlib.util
import json
import math
import os
import random
import signal
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import ascdsl
from ascdsl import record
from ascdsl.backend import simrun
from ascdsl.errors import raised_in_package
from ascdsl.sim import SimCompileError

REPO = Path(__file__).parents[2]
OP_FILES = sorted((REPO / "ops").glob("*.py"))
KERNEL_FILES = [REPO / "tests" / "kernels" / "basic.py", REPO / "tests" / "backend" / "kernels.py"]

INTS = (0, -1, 1, 3, 2**31, 2**40, 2**63, -(2**31) - 1)
FLOATS = (math.nan, math.inf, -math.inf, 1e39, 0.0, -2.5)
BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.BitAnd, ast.BitOr, ast.LShift, ast.Pow)
CMPOPS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
DTYPES = ("float32", "float16", "bfloat16", "int32", "int8", "int64", "int1", "uint8")
BUILTINS = ("exp", "log", "sqrt", "abs", "sum", "max", "argmax", "arange", "zeros", "load", "where", "program_id",
            "cdiv", "maximum", "sigmoid")
KEYWORD_VALUES = ("'s'", "None", "5", "-3", "0", "tl.float32", "(1, 2)", "float('nan')", "True")


@dataclass(frozen=True)
class Mutant:
    index: int
    source: Path  # the op or kernel file it came from
    kernel: str  # the mutated @ascdsl.jit function
    what: str  # the mutation, for messages
    text: str  # the mutated module


def jit_functions(tree: ast.Module) -> list[ast.FunctionDef]:
    def is_jit(d: ast.expr) -> bool:
        return isinstance(d, ast.Attribute) and d.attr == "jit" or isinstance(d, ast.Name) and d.id == "jit"
    return [n for n in tree.body if isinstance(n, ast.FunctionDef) and any(map(is_jit, n.decorator_list))]


def _mutations(fn: ast.FunctionDef, rng: random.Random) -> list[tuple[ast.AST, str, object]]:
    """``(node, description, replacement)`` candidates in ``fn``'s body."""
    out = []
    names = sorted({n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} | {a.arg for a in fn.args.args})
    for node in (n for stmt in fn.body for n in ast.walk(stmt)):
        if isinstance(node, ast.Constant) and type(node.value) is int:
            v = rng.choice(INTS)
            out.append((node, f"int {node.value} -> {v}", ast.Constant(v)))
        elif isinstance(node, ast.Constant) and type(node.value) is float:
            v = rng.choice(FLOATS)
            out.append((node, f"float {node.value} -> {v}", ast.parse(f"float('{v}')", mode="eval").body))
        elif isinstance(node, ast.BinOp):
            op = rng.choice(BINOPS)
            out.append((node, f"operator {type(node.op).__name__} -> {op.__name__}",
                        ast.BinOp(node.left, op(), node.right)))
        elif isinstance(node, ast.Compare):
            op = rng.choice(CMPOPS)
            out.append((node, f"comparison -> {op.__name__}", ast.Compare(node.left, [op()], node.comparators[:1])))
        elif isinstance(node, ast.keyword) and node.arg:
            v = rng.choice(KEYWORD_VALUES)
            out.append((node, f"{node.arg}= -> {v}", ast.keyword(node.arg, ast.parse(v, mode="eval").body)))
        elif isinstance(node, ast.Attribute) and node.attr in DTYPES:
            d = rng.choice(DTYPES)
            out.append((node, f"dtype {node.attr} -> {d}", ast.Attribute(node.value, d, ast.Load())))
        elif isinstance(node, ast.Attribute) and node.attr in BUILTINS:
            b = rng.choice(BUILTINS)
            out.append((node, f"builtin {node.attr} -> {b}", ast.Attribute(node.value, b, ast.Load())))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in ("tl", "ascdsl"):
            n = rng.choice(names)
            out.append((node, f"name {node.id} -> {n}", ast.Name(n, ast.Load())))
        elif isinstance(node, ast.Subscript):
            index = rng.choice(["None, :", ":, None", "0", "None", "::2"])
            out.append((node, f"index -> [{index}]", ast.Subscript(node.value, ast.parse(f"x[{index}]", mode="eval")
                                                                    .body.slice, ast.Load())))
    return out


def _no_op(target: ast.AST, replacement: ast.AST) -> bool:
    """Whether the mutation leaves the kernel as it was: the same tree (`Mult -> Mult`), or a float constant
    replaced by ``float('...')`` of its own value (`0.0 -> float('0.0')`)."""
    if ast.dump(replacement) == ast.dump(target):
        return True
    return isinstance(target, ast.Constant) and type(target.value) is float and isinstance(replacement, ast.Call) \
        and float(replacement.args[0].value) == target.value


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, replacement: ast.AST):
        self.target, self.replacement = target, replacement

    def visit(self, node):
        if node is self.target:
            return self.replacement
        return super().visit(node)


def mutants(count: int, seed: int = 0, shard: tuple[int, int] = (0, 1)) -> list[Mutant]:
    """``count`` mutants, the same ones for the same seed; with ``shard`` ``(i, n)``, only those whose
    index is ``i`` modulo ``n`` (the others are drawn, not written out: that costs most of the time)."""
    rng = random.Random(seed)
    files = OP_FILES + KERNEL_FILES
    out: list = []
    drawn = 0
    unchanged: dict[Path, ast.Module] = {}  # parsed trees no mutation has been written into
    while drawn < count:
        source = rng.choice(files)
        if source not in unchanged:
            unchanged[source] = ast.parse(source.read_text())
        tree = unchanged[source]
        fn = rng.choice(jit_functions(tree))
        if source in KERNEL_FILES and fn.name not in launchable(source):
            continue
        candidates = _mutations(fn, rng)
        if not candidates:
            continue
        target, what, replacement = rng.choice(candidates)
        if _no_op(target, replacement):  # the source itself, and a twin of another
            continue
        index, drawn = drawn, drawn + 1
        if index % shard[1] != shard[0]:
            continue
        del unchanged[source]  # replaced in place below
        tree = ast.fix_missing_locations(_Replace(target, replacement).visit(tree))
        text = f"# kernel: {fn.name}; {what}\n" + ast.unparse(tree) + "\n"
        out.append(Mutant(index, source, fn.name, what, text))
    return out


# ----------------------------------------------------------------------------- launching

def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def generic_args(fn) -> tuple[tuple, dict]:
    """Arguments for a kernel of ``tests/`` made from its parameter names: ``*_ptr`` a float32 array
    (``idx*`` an int32 one), constexprs 16, other scalars 64."""
    rng = np.random.default_rng(0)
    args, constexprs = [], {}
    for p in fn.parsed.params:
        if p in fn.parsed.constexprs:
            constexprs[p] = 16
        elif p.endswith("_ptr"):
            args.append(np.zeros(4096, np.int32) if p.startswith("idx") else
                        rng.standard_normal(4096).astype(np.float32))
        else:
            args.append(64)
    return tuple(args), constexprs


_LAUNCHABLE: dict[Path, frozenset[str]] = {}


def launchable(path: Path) -> frozenset[str]:
    """The kernels of a ``tests/`` file that run unmutated with :func:`generic_args`."""
    if path not in _LAUNCHABLE:
        module = load(path, f"fuzz_base_{path.stem}")
        ok = set()
        for fn in jit_functions(ast.parse(path.read_text())):
            try:
                launch(module, fn.name, "interpreter")
                ok.add(fn.name)
            except Exception:
                pass
        _LAUNCHABLE[path] = frozenset(ok)
    return _LAUNCHABLE[path]


def launch(module, kernel: str, backend: str) -> bool:
    """Run ``module`` the way its source runs; returns whether the mutated ``kernel`` was launched.
    An op file runs its entry: on the interpreter every case, on the simulator the first case whose
    interpreter run launches ``kernel``. A kernel file runs ``kernel`` with :func:`generic_args`."""
    op = getattr(module, "OP", None)
    if op is None:
        fn = getattr(module, kernel)
        args, constexprs = generic_args(fn)
        fn[(2,)](*args, **constexprs, backend=backend)
        return True
    launched = False
    for case in op.cases:
        with record.launches() as seen:
            op.entry(*case.inputs(), **dict(case.attrs), backend="interpreter")
        if any(r.kernel.name == kernel for r in seen):
            launched = True
            if backend != "interpreter":
                op.entry(*case.inputs(), **dict(case.attrs), backend=backend)
                return True
    return launched


# ----------------------------------------------------------------------------- outcomes

class Hang(Exception):
    pass


def _alarm_once():
    """A signal handler raising :class:`Hang` at the first of the two timers only: disarmed, both, before it
    raises (else the other, due while the first ``Hang`` is handled, raises a second one from the handler)."""
    fired = []

    def alarm(signum, frame):
        if not fired:
            fired.append(signum)
            for timer in (signal.ITIMER_PROF, signal.ITIMER_REAL):
                signal.setitimer(timer, 0)
            raise Hang()
    return alarm


RAN, IDLE, REFUSED, INTERNAL = "ran", "idle", "refused", "internal"
"""Outcomes: the mutated kernel ran; it was never launched; it was refused as a user's mistake
should be; something else happened (the finding)."""


WALL = 5  # a run stuck off the CPU is stopped after this many times its CPU budget, in wall time


def outcome(path: Path, run, seconds: float) -> tuple[str, str]:
    """``(kind, detail)`` of ``run()`` (which returns whether the mutated kernel was launched), with
    ``seconds`` of CPU time to finish (so a loaded machine does not make a slow run a hang). A refusal
    is an ``ascdsl.Error``, ``ValueError`` or ``TypeError``, located in ``path`` when it is a located
    error; an unlocated ``ValueError``/``TypeError`` must come from ``path``'s own code (its traceback
    passes through ``path`` and it was not raised in ascdsl's files: an op's entry calls ascdsl from there)."""
    alarm = _alarm_once()
    old = {s: signal.signal(s, alarm) for s in (signal.SIGPROF, signal.SIGALRM)}
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, WALL * seconds)
    try:
        return (RAN if run() else IDLE), ""
    except Hang:
        return INTERNAL, f"no outcome within {seconds} s of CPU time"
    except ascdsl.CompilationError as e:
        if "internal compiler error" in e.message:
            return INTERNAL, e.message
        if os.path.abspath(e.loc.file) != str(path):
            return INTERNAL, f"located in {e.loc.file}, not in the mutant: {e.message}"
        return REFUSED, e.message
    except SimCompileError as e:
        return INTERNAL, f"g++ rejected the generated code: {str(e).splitlines()[0]}"
    except (ascdsl.Error, ValueError, TypeError) as e:
        if isinstance(e, ascdsl.Error) or (str(path) in {f.filename for f in traceback.extract_tb(e.__traceback__)}
                                           and not raised_in_package(e)):
            return REFUSED, str(e).splitlines()[0] if str(e) else type(e).__name__
        return INTERNAL, f"{type(e).__name__} from ascdsl: {e}"
    except Exception as e:  # noqa: BLE001 - an internal error is the finding
        where = traceback.extract_tb(e.__traceback__)[-1]
        return INTERNAL, f"{type(e).__name__}: {e} (at {where.filename}:{where.lineno})"
    finally:
        for timer in (signal.ITIMER_PROF, signal.ITIMER_REAL):
            signal.setitimer(timer, 0)
        for s, handler in old.items():
            signal.signal(s, handler)


def write(mutant: Mutant, folder: Path) -> Path:
    path = folder / f"mutant_{mutant.index:03d}_{mutant.source.stem}.py"
    path.write_text(mutant.text)
    return path.resolve()


def run_mutant(path: Path, index: int, backend: str, seconds: float) -> tuple[str, str]:
    """The outcome of importing mutant ``path`` and launching its kernel on ``backend``."""
    kernel = path.read_text().split("# kernel: ", 1)[1].split(";", 1)[0]
    name = f"fuzz_mutant_{index}_{backend}"
    return outcome(path, lambda: launch(load(path, name), kernel, backend), seconds)


OUTCOME = "fuzz-outcome"  # starts the lines of run_on_simulator's outcomes (a kernel's device_print writes others)


def run_on_simulator(mutants: list[tuple[Path, int]], seconds: float) -> None:
    """Print the simulator outcome of each ``(path, index)`` mutant, a line each as it comes. Their
    kernels are first recorded (run on the interpreter, outcomes dropped) and rendered into shared files,
    so g++ runs once for all of them, not once a mutant; a file g++ rejects is rebuilt kernel by kernel
    (:func:`ascdsl.backend.simrun.run`), so a rejected kernel is still its own mutant's finding."""
    with simrun.recording() as kernels:
        for path, index in mutants:
            run_mutant(path, index, "sim", seconds)
    simrun.prebuild(kernels)
    for path, index in mutants:
        print(OUTCOME, json.dumps(run_mutant(path, index, "sim", seconds)), flush=True)


if __name__ == "__main__":  # python -m tests.reliability.fuzz SECONDS MUTANT.py:INDEX ...
    run_on_simulator([(Path(p), int(i)) for p, _, i in (a.rpartition(":") for a in sys.argv[2:])], float(sys.argv[1]))
