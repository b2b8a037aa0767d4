"""Every kernel the tests launch on the interpreter, replayed on the simulator.

:func:`interpreter_launches` runs test functions (with their ``parametrize`` cases expanded; ``lib``
given ascdsl's kernels; simulator launches only recorded, never run) and keeps the distinct
interpreter launches the same tests do not launch on the simulator too; :func:`replay` runs each on both backends and sorts it into an
:class:`Outcome`: the same results (bit-exact, or within the dtype's tolerance for kernels with
transcendental ops or reductions), a located error naming a feature the Ascend C backend does not
lower yet, one the A2 vector cores cannot run or a platform limit the kernel exceeds, the
simulator's located error for programs that write the same elements (the interpreter orders them;
a device would race), or a failure (another result, another error).
"""
from __future__ import annotations

import enum
import importlib
import inspect
import io
import itertools
from contextlib import ExitStack, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import ascdsl
from ascdsl import dtypes, interpreter, record, testing
from ascdsl.backend import simrun
from ascdsl.backend.batching.batchrun import batch_launch
from ascdsl.ir.core import GroupOp, Op, walk
from ascdsl.sim.errors import KernelSimError

INEXACT = GroupOp.TRANSCENDENTAL | GroupOp.REDUCE | GroupOp.FLOAT_MATH | GroupOp.COMBINE | frozenset({Op.DOT})
"""Ops whose results agree within the tolerance table rather than bit for bit."""
HARDWARE = "cannot run on the Ascend A2 vector cores"
NOT_YET = ("does not support", "cannot be copied as blocks")
LIMITS = ("hardware event ids", "allows")  # queue buffers over the event ids; UB over the planner budget
PLATFORM = "Ascend910B3"
TESTS = Path(__file__).resolve().parents[1]


class Outcome(enum.Enum):
    SAME = "same results"
    NOT_YET = "located error: not lowered yet"
    HARDWARE = "located error: the vector cores cannot"
    RACE = "located error: programs write the same elements (a race on a device)"
    LIMIT = "located error: over a platform limit (UB budget, queue event ids)"
    FAILED = "failed"


@dataclass(frozen=True)
class Result:
    launch: record.LaunchRecord
    outcome: Outcome
    detail: str = ""


_PARAM = type(pytest.param(None))  # a case written as pytest.param(value, id=..., marks=...)


def _cases(fn) -> list[dict]:
    """The keyword arguments of every ``parametrize`` case of test function ``fn``."""
    axes = []
    for mark in getattr(fn, "pytestmark", []):
        if mark.name != "parametrize":
            continue
        names, values = mark.args[0], mark.args[1]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        values = [v.values if isinstance(v, _PARAM) else v if len(names) > 1 else (v,) for v in values]
        axes.append([dict(zip(names, v)) for v in values])
    return [dict(kv for part in combo for kv in part.items()) for combo in itertools.product(*axes)]


def recorded(module, lib=None, names=None, sim_only=False) -> tuple[list[record.LaunchRecord], list]:
    """Run the test functions of ``module`` (those whose parameters are all parametrized, ``lib``,
    ``capsys`` or ``monkeypatch``, its patches undone after the test; only those named in ``names`` if
    given; with ``sim_only``, only those that :func:`may_launch_on_sim`), simulator launches only
    recorded: every launch, and the ``(kernel, platform)`` of the simulator's."""
    launches, sim = [], []
    for fname, fn in sorted(vars(module).items()):
        if not (fname.startswith("test_") and inspect.isfunction(fn)) or names is not None and fname not in names:
            continue
        params = inspect.signature(fn).parameters
        if sim_only and not may_launch_on_sim(fn, _cases(fn)):
            continue
        for case in _cases(fn):
            if lib is not None and "lib" in params:
                case = {**case, "lib": lib}
            with ExitStack() as stack:
                if "capsys" in params:
                    case = {**case, "capsys": _Capsys(stack)}
                if "monkeypatch" in params:
                    case = {**case, "monkeypatch": stack.enter_context(pytest.MonkeyPatch.context())}
                if set(params) - set(case):
                    continue
                with record.launches() as seen, simrun.recording() as kernels:
                    try:
                        fn(**case)
                    except (Exception, pytest.skip.Exception, pytest.fail.Exception):  # noqa: BLE001 (checks fail
                        pass  # while sim launches only record; skips are for other setups)
            launches += seen
            sim += kernels
    return launches, sim


SIM_LAUNCHERS = frozenset({"bench", "bench_batching", "bench_cube", "verify"})
"""Names of ascdsl's modules that launch kernels on the simulator without their caller naming it."""


def may_launch_on_sim(fn, cases=()) -> bool:
    """Whether test function ``fn`` may launch a kernel on the simulator, read from its code: the
    string ``"sim"`` in it, in its ``parametrize`` ``cases`` or in the tests' own functions and classes it
    names (directly or as attributes of the tests' modules; followed on), or a name of
    :data:`SIM_LAUNCHERS`. A module's recording runs only these tests: one that launches nothing there
    ran twice for nothing (test_kir.py plans whole ops). A test this misses still passes; its kernels are
    built at its own launches."""
    todo = [(fn, {}), *((value, {}) for case in cases for value in case.values())]
    seen: set[int] = set()
    while todo:
        x, names = todo.pop()
        if isinstance(x, str):
            if x == "sim":
                return True
            continue
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, (tuple, list, frozenset)):
            todo += [(v, names) for v in x]
        elif inspect.iscode(x):
            if SIM_LAUNCHERS & set(x.co_names):
                return True
            named = [names[n] for n in x.co_names if n in names]
            named += [getattr(m, n) for m in named if inspect.ismodule(m) and _ours(m) for n in x.co_names
                      if hasattr(m, n)]
            todo += [(v, names) for v in [*x.co_consts, *named]]
        elif inspect.isfunction(x) and _ours(x):
            todo.append((x.__code__, x.__globals__))
        elif inspect.isclass(x) and _ours(x):
            todo += [(v, names) for v in vars(x).values()]
    return False


def _ours(x) -> bool:
    """``x`` is a module, class or function of the test suite (by its file: pytest names test modules
    without their package)."""
    try:
        return Path(inspect.getfile(x)).resolve().is_relative_to(TESTS)
    except TypeError:  # built in
        return False


class _Capsys:
    """``capsys`` of a recorded test, live while ``stack`` is open: what the test prints (device prints of
    simulator kernels, as ``test_sim_debug.py`` checks), read and emptied by ``readouterr``."""

    def __init__(self, stack: ExitStack):
        self._out, self._err = io.StringIO(), io.StringIO()
        stack.enter_context(redirect_stdout(self._out))
        stack.enter_context(redirect_stderr(self._err))

    def readouterr(self) -> SimpleNamespace:
        out, err = self._out.getvalue(), self._err.getvalue()
        for buffer in (self._out, self._err):
            buffer.seek(0)
            buffer.truncate()
        return SimpleNamespace(out=out, err=err)


MODULE_BATCH = 64
"""Variants in a module's kernel file: test_sim_rank3.py's 177 kernels in 3 files instead of 8 of 24 take a
quarter less CPU (51 -> 38 s cold, the whole file)."""


def module_prebuild(module, names=None) -> None:
    """Build the simulator kernels ``module``'s tests (those named in ``names`` if given) launch in few
    g++ runs, but for those a file holds already (another module's, of any process: the kernel index;
    built again, they would be built twice)."""
    kernels = recorded(module, names=names, sim_only=True)[1]
    simrun.prebuild(_compiles([k for k in kernels if not simrun.prebuilt(*k)]), batch=MODULE_BATCH)


def interpreter_launches(modules, lib=None) -> tuple[list[record.LaunchRecord], int]:
    """The distinct interpreter launches of the test functions of ``modules`` that the same module does
    not also launch on the simulator, and how many it does (a test that launches a kernel on both
    backends compares the two itself: replaying it here would only run it again)."""
    seen: dict = {}
    for name in modules:
        launches, _ = recorded(importlib.import_module(name), lib)
        both = {_key(launch) for launch in launches if launch.backend != "interpreter"}
        for launch in launches:
            if launch.backend == "interpreter" and _key(launch) not in seen:
                seen[_key(launch)] = None if _key(launch) in both else launch
    runs = [launch for launch in seen.values() if launch is not None and _runs(launch)]
    return runs, sum(launch is None for launch in seen.values())


def _key(launch: record.LaunchRecord) -> tuple:
    return launch.kernel, launch.grid, _shapes(launch.args)


def _runs(launch) -> bool:
    """The launch runs on the interpreter (error tests launch kernels that do not)."""
    try:
        _run(launch, "interpreter")
        return True
    except ascdsl.Error:
        return False


def prebuild(launches) -> None:
    """One g++ build per batch of the kernels the launches run on the simulator (after
    :func:`~ascdsl.backend.batching.batchrun.batch_launch`, as :func:`ascdsl.backend.simrun.run` does) that
    compile and are not built yet (the others fail in :func:`replay`)."""
    kernels = [_sim_kernel(launch) for launch in launches]
    simrun.prebuild(_compiles([(k, PLATFORM) for k in kernels if not simrun.prebuilt(k, PLATFORM)]))


def _sim_kernel(launch: record.LaunchRecord):
    """The kernel :func:`ascdsl.backend.simrun.run` runs for ``launch`` (the launch's own where that
    fails: :func:`replay` reports why)."""
    try:
        return batch_launch(launch.kernel, launch.args, launch.grid, PLATFORM)[0]
    except Exception:  # noqa: BLE001 (reported when replayed)
        return launch.kernel


def _compiles(kernels) -> list:
    """The distinct ``(kernel, platform)`` pairs the backend lowers (:func:`ascdsl.backend.simrun.lowers`); one that
    raises an internal error is left out too (reported when launched)."""
    out = []
    for launch in dict.fromkeys(kernels):
        try:
            if simrun.lowers(*launch):
                out.append(launch)
        except Exception:  # noqa: BLE001 (reported when launched)
            continue
    return out


def _shapes(args) -> tuple:
    return tuple((a.shape, a.dtype.str) if isinstance(a, np.ndarray) else a for a in args)


def _run(launch, backend: str) -> list:
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in launch.args]
    if backend == "interpreter":
        interpreter.run(launch.kernel, args, launch.grid)
    else:
        simrun.run(launch.kernel, args, launch.grid, PLATFORM)
    return args


def compare(kernel, want: np.ndarray, got: np.ndarray) -> str:
    """Why ``got`` differs from ``want`` (empty if it does not). NaN lanes of the interpreter (poison:
    undefined values) are not compared; inexact kernels are compared as the tests compare reductions
    (the dtype's tolerance, ``atol`` times the longest reduced extent)."""
    if want.dtype.kind == "f" or want.dtype == dtypes.bfloat16.np:
        w, g = want.astype(np.float32), got.astype(np.float32)
        defined = ~np.isnan(w)
        dt = _coarsest(kernel, dtypes.from_numpy(want.dtype))
        if any(i.op in INEXACT for i in walk(kernel.body)):
            bad = defined & ~testing.close(g, w, dtypes.DType(dt.name, dt.short, dt.itemsize, dt.kind, dt.cpp, dt.np,
                                                              dt.rtol, dt.atol * _reduced(kernel)))
        else:
            bad = defined & (w.view(np.uint32) != g.view(np.uint32))
    else:
        bad = want != got
    if not bad.any():
        return ""
    k = int(np.flatnonzero(bad)[0])
    return f"{int(bad.sum())} of {bad.size} elements differ (first at {k}: {want.flat[k]} vs {got.flat[k]})"


def _coarsest(kernel, dt):
    """The float dtype of the kernel's values with the widest tolerance (``dt`` at least): a float32
    result of float16 data is as accurate as float16."""
    floats = [v.type.dtype for i in walk(kernel.body) for v in i.results if getattr(v.type.dtype, "is_float", False)]
    return max([dt, *floats], key=lambda d: d.rtol)


def _reduced(kernel) -> int:
    """The longest extent the kernel reduces (a sum's error, and that of what it cancels against,
    grows with it; 1 without reductions)."""
    out = 1
    for i in walk(kernel.body):
        if i.op in GroupOp.REDUCE | GroupOp.COMBINE:
            shape, axis = i.operands[0].type.shape, i.attr("axis")
            out = max(out, int(np.prod(shape)) if axis is None else shape[axis])
    return out


def replay(launch: record.LaunchRecord) -> Result:
    want = _run(launch, "interpreter")
    try:
        got = _run(launch, "sim")
    except KernelSimError as e:
        outcome = Outcome.RACE if "blocks must write disjoint GM" in str(e) else Outcome.FAILED
        return Result(launch, outcome, str(e).splitlines()[0])
    except ascdsl.CompilationError as e:
        text = str(e)
        located = ".py:" in text.splitlines()[0]
        if located and HARDWARE in text:
            return Result(launch, Outcome.HARDWARE, text.splitlines()[0])
        if located and any(s in text for s in NOT_YET):
            return Result(launch, Outcome.NOT_YET, text.splitlines()[0])
        if located and any(s in text for s in LIMITS):
            return Result(launch, Outcome.LIMIT, text.splitlines()[0])
        return Result(launch, Outcome.FAILED, text.splitlines()[0])
    except Exception as e:  # noqa: BLE001 (every other error is a finding)
        return Result(launch, Outcome.FAILED, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    for k, (w, g) in enumerate(zip(want, got)):
        if isinstance(w, np.ndarray):
            why = compare(launch.kernel, w, g)
            if why:
                return Result(launch, Outcome.FAILED, f"argument {k}: {why}")
    return Result(launch, Outcome.SAME)
