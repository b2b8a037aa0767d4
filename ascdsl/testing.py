"""Verification: run an operator's cases on each backend and compare with its NumPy reference.

Also ``triton.testing``'s helpers for Triton test files: :func:`assert_close` (which takes
Triton's ``atol``/``rtol``/``err_msg`` and torch tensors too) and :func:`do_bench`.
"""
from __future__ import annotations

import inspect
import os
import re
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import dtypes
from .backend.render import ascendc
from .backend.plan.budget import check_budget
from .errors import CompilationError, Error, UBOverflowError
from .jit import Backend, backend_name
from .op import Operator, plans
from .platforms import DEFAULT_PLATFORM, get_platform


@dataclass(frozen=True)
class CaseResult:
    op: str
    case: str
    backend: str
    ok: bool
    max_abs_err: float = 0.0
    message: str = ""
    skipped: str = ""  # why the case does not apply (ok stays True): e.g. a dtype the platform lacks
    judged: tuple[float, float] = ()  # (|err|, its tolerance) of the element nearest its tolerance

    @property
    def error_cell(self) -> str:
        """The table's error column: the element nearest its tolerance, as ``|err| <= tolerance``."""
        if self.skipped or not self.ok:
            return ""
        if not self.judged:  # nothing compared: a build step, or empty outputs
            return ""
        err, tol = self.judged
        return f"{err:.3g} <= {tol:.3g}"


def close(actual: np.ndarray, expected: np.ndarray, dtype: dtypes.DType,
          scale: np.ndarray | None = None) -> np.ndarray:
    """Elementwise ``|actual - expected| <= atol + rtol * scale`` with the dtype's tolerances
    (exact for integer dtypes); NaNs must match NaNs and infinities must match exactly.

    ``scale`` defaults to ``|expected|``. A result that cancels large terms (``a - b * c`` with
    ``a ~ b * c``) is only as accurate as those terms: pass their magnitude (``|a| + |b * c|``)."""
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    scale = np.abs(e) if scale is None else np.asarray(scale, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        ok = np.abs(a - e) <= dtype.atol + dtype.rtol * scale
    return ok | (np.isnan(a) & np.isnan(e)) | (np.isinf(e) & (a == e))


def nearest_tolerance(actual: np.ndarray, expected: np.ndarray, dtype: dtypes.DType,
                      scale: np.ndarray | None = None) -> tuple[float, float]:
    """``(|err|, atol + rtol * scale)`` of the element whose error is the largest fraction of its
    tolerance (what :func:`close` judged it by; ``scale`` defaults to ``|expected|``); NaNs matching
    NaNs and exact infinities count as 0."""
    a = np.asarray(actual, dtype=np.float64).ravel()
    e = np.asarray(expected, dtype=np.float64).ravel()
    s = np.abs(e) if scale is None else np.broadcast_to(np.asarray(scale, dtype=np.float64), np.shape(expected)).ravel()
    if not a.size:
        return 0.0, dtype.atol
    with np.errstate(invalid="ignore"):
        err = np.abs(a - e)
        err = np.where((np.isnan(a) & np.isnan(e)) | (np.isinf(e) & (a == e)), 0.0, err)
        tol = dtype.atol + dtype.rtol * s
        ratio = np.where(tol > 0, err / np.where(tol > 0, tol, 1.0), np.where(err > 0, np.inf, 0.0))
    i = int(np.nanargmax(ratio)) if not np.isnan(ratio).all() else 0
    return float(err[i]), float(tol[i])


def _numpy(x) -> np.ndarray:
    """A torch tensor (any device, bfloat16 included) or array-like as a NumPy array."""
    if type(x).__module__.split(".")[0] == "torch":
        torch = sys.modules["torch"]
        x = x.detach().cpu()
        return x.float().numpy() if x.dtype == torch.bfloat16 else x.numpy()
    return np.asarray(x)


def assert_close(actual, expected, dtype: dtypes.DType | float | None = None, scale: np.ndarray | None = None,
                 *, atol: float | None = None, rtol: float | None = None, err_msg: str = "") -> None:
    """Raise AssertionError naming the first bad element unless ``actual`` matches ``expected``
    (see :func:`close` for ``scale``), with the dtype's tolerances, or ``atol``/``rtol`` when given.

    Triton's call ``triton.testing.assert_close(x, y, atol, rtol)`` works too: a number in the
    ``dtype`` position is ``atol`` (and one in ``scale``, ``rtol``). Arrays and torch tensors."""
    if isinstance(dtype, (int, float)) and not isinstance(dtype, bool):
        atol, dtype = dtype, None
        if isinstance(scale, (int, float)):
            rtol, scale = scale, None
    actual, expected = _numpy(actual), _numpy(expected)
    dtype = dtype or dtypes.from_numpy(actual.dtype)
    if atol is not None or rtol is not None:
        dtype = dtypes.DType(dtype.name, dtype.short, dtype.itemsize, dtype.kind, dtype.cpp, dtype.np,
                             dtype.rtol if rtol is None else rtol, dtype.atol if atol is None else atol)
    if np.shape(actual) != np.shape(expected):
        expected = np.broadcast_to(expected, np.shape(actual)) if np.ndim(expected) == 0 else expected
    if np.shape(actual) != np.shape(expected):
        raise AssertionError(f"{err_msg + ': ' if err_msg else ''}shape {np.shape(actual)} != expected "
                             f"{np.shape(expected)}")
    ok = close(actual, expected, dtype, scale)
    if not ok.all():
        bad = np.argwhere(~ok)
        first = tuple(int(i) for i in bad[0]) if np.ndim(ok) else ()
        raise AssertionError(
            f"{err_msg + ': ' if err_msg else ''}{len(bad)} of {ok.size} elements differ beyond {dtype.name} tolerance "
            f"(rtol={dtype.rtol}, atol={dtype.atol}); first at {first}: "
            f"got {np.asarray(actual)[first]!r}, expected {np.asarray(expected)[first]!r}")


def _outputs(value) -> tuple[np.ndarray, ...]:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def expected_outputs(op: Operator, inputs, attrs: dict) -> tuple[np.ndarray, ...]:
    """The reference on float64 copies of ``inputs``; a reference with a ``dtype`` parameter also gets
    the inputs' dtype (what float64 copies cannot tell it, e.g. the 32-byte block of ``is_front``)."""
    return _outputs(_on_float64(op.reference, inputs, attrs))


def error_scales(op: Operator, inputs, attrs: dict) -> tuple[np.ndarray | None, ...]:
    """Per output, the magnitude :func:`close` judges its error against: the op's
    :attr:`~ascdsl.Operator.error_scale` called as the reference is, or Nones (``|expected|``)."""
    if op.error_scale is None:
        return (None,) * len(op.outputs)
    scales = _outputs(_on_float64(op.error_scale, inputs, attrs))
    if len(scales) != len(op.outputs):
        raise Error(f"{op.name}: error_scale returned {len(scales)} arrays for {len(op.outputs)} outputs")
    return scales


def _on_float64(fn: Callable, inputs, attrs: dict):
    """``fn`` (the op's reference or error scale) of float64 copies of ``inputs`` and ``attrs``, plus
    the inputs' ``dtype`` when ``fn`` takes one."""
    kwargs = dict(attrs)
    if "dtype" in inspect.signature(fn).parameters and inputs:
        kwargs["dtype"] = dtypes.from_numpy(np.asarray(inputs[0]).dtype)
    return fn(*(np.array(x, dtype=np.float64) for x in inputs), **kwargs)


def run_case(op: Operator, case, backend: str | Backend, platform: str | None = None,
             entry: Callable | None = None) -> CaseResult:
    """Run one case of ``op`` on ``backend`` (a name or a :class:`ascdsl.jit.Backend`) through ``entry``
    (default: the op's Python entry; called as it is) and compare every output with the reference. A case
    with bfloat16 tensors on a platform without bfloat16 is skipped (its OpDef registers none)."""
    runner, backend = backend, backend_name(backend)
    inputs = op.inputs_of(case)
    attrs = dict(case.attrs)
    if not get_platform(platform or DEFAULT_PLATFORM).has_bf16 and any(
            getattr(x, "dtype", None) == dtypes.bfloat16.np for x in inputs):
        return CaseResult(op.name, case.label, backend, True, skipped=f"{platform} has no bfloat16")
    try:
        expected = expected_outputs(op, inputs, attrs)
        with plans() as launched:
            actual = _outputs((entry or op.entry)(*inputs, **attrs, backend=runner, platform=platform))
        if backend == "interpreter":
            check_ub(launched, platform or os.environ.get("ASCDSL_PLATFORM") or DEFAULT_PLATFORM)
        worst, judged = 0.0, (0.0, 0.0)
        for a, e, scale in zip(actual, expected, error_scales(op, inputs, attrs), strict=True):
            dtype = dtypes.from_numpy(a.dtype)
            assert_close(a, e, dtype, scale)
            if a.size:
                worst = max(worst, float(np.nanmax(np.abs(a.astype(np.float64) - e))))
                err, tol = nearest_tolerance(a, e, dtype, scale)
                if not judged[1] or err * judged[1] > judged[0] * tol:
                    judged = (err, tol)
        return CaseResult(op.name, case.label, backend, True, worst, judged=judged if judged[1] else ())
    except (AssertionError, Error) as e:
        return CaseResult(op.name, case.label, backend, False, message=str(e).splitlines()[0])


def check_ub(launched, platform: str) -> None:
    """The Ascend C backend's UB plan of every kernel ``launched`` (``(Launch, kernel)`` pairs, from
    :func:`ascdsl.op.plans`) against ``platform``'s budget, without g++: a :class:`UBOverflowError` at
    the host line of the first launch that does not fit. Kernels the backend cannot lower are left to
    the simulator, which reports why."""
    target = get_platform(platform)
    for launch, kernel in dict(((id(k), (l, k)) for l, k in launched)).values():
        try:
            planned = ascendc.planned(kernel, target)
        except CompilationError:
            continue
        try:
            check_budget(planned, target)
        except UBOverflowError as e:
            raise launch.overflow(e) from None


LOCATED = re.compile(r"^(\S+:\d+:\d+): error: ")
"""The ``path:LINE:COL`` a located error's message starts with."""


def failures(results: list[CaseResult]) -> list[str]:
    """One line per distinct failure of an op: ``FAIL op [case] on backend: message``, or, when the
    same failure fails several rows, once with the cases and rows it affects. Located errors at one
    ``path:LINE:COL`` are one failure (one mistake, its sizes differing by specialisation): the first
    message, and how many others that line gave."""
    groups: dict[tuple[str, str], list[CaseResult]] = {}
    for r in results:
        if not r.ok:
            located = LOCATED.match(r.message)
            groups.setdefault((r.op, located.group(1) if located else r.message), []).append(r)
    lines = []
    for (op, _), rows in groups.items():
        message = rows[0].message
        others = len(dict.fromkeys(r.message for r in rows)) - 1
        if others:
            message += f" (and {others} other message{'s' if others > 1 else ''} at this line)"
        if len(rows) == 1:
            lines.append(f"FAIL {op} [{rows[0].case}] on {rows[0].backend}: {message}")
            continue
        cases = list(dict.fromkeys(r.case for r in rows if not r.case.startswith("(")))
        backends = list(dict.fromkeys(r.backend for r in rows if not r.case.startswith("(")))
        parts = [f"{len(cases)} case{'s' if len(cases) != 1 else ''} ({_listed(cases)}) on {' and '.join(backends)}"
                 ] if cases else []
        parts += [f"{r.case} on {r.backend}" for r in rows if r.case.startswith("(")]
        lines.append(f"FAIL {op}, {'; '.join(parts)}: {message}")
    return lines


def _listed(labels: list[str], most: int = 3) -> str:
    return ", ".join(labels[:most]) + (f" and {len(labels) - most} more" if len(labels) > most else "")


def format_table(results: list[CaseResult]) -> str:
    """One aligned table of ``results``, each failure's message after it, and a passed/failed count."""
    rows = [("op", "case", "backend", "result", "|err| <= tolerance")]
    rows += [(r.op, r.case, r.backend, "skip" if r.skipped else "ok" if r.ok else "FAIL", r.error_cell)
             for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    lines += failures(results)
    lines += [f"skip {r.op} [{r.case}] on {r.backend}: {r.skipped}" for r in results if r.skipped]
    failed, skipped = sum(not r.ok for r in results), sum(bool(r.skipped) for r in results)
    lines.append(f"{len(results) - failed - skipped} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    return "\n".join(lines)



def verify(op: Operator, backends=("interpreter",), platform: str | None = None) -> list[CaseResult]:
    """Run every case of ``op`` on every backend; one :class:`CaseResult` per (case, backend)."""
    return [run_case(op, case, b, platform) for case in op.cases for b in backends]


def do_bench(fn, warmup: float = 25, rep: float = 100, grad_to_none=None, quantiles=None, fast_flush=True,
             return_mode: str = "mean"):
    """Milliseconds per call of ``fn`` (Triton's ``do_bench``), timed on the CPU where the chosen
    backend (``ASCDSL_BACKEND``: the interpreter or the simulator) runs the kernels ``fn`` launches.

    ``warmup`` and ``rep`` are time budgets in ms (at least one call each); ``quantiles`` gives those
    quantiles of the per-call times instead, ``return_mode`` is "mean", "median", "min", "max" or
    "all". ``grad_to_none`` and ``fast_flush`` are accepted (no caches to flush here)."""
    start = time.perf_counter()
    fn()
    estimate = max((time.perf_counter() - start) * 1e3, 1e-3)
    for _ in range(int(warmup / estimate)):
        fn()
    times = []
    for _ in range(max(1, int(rep / estimate))):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    if quantiles is not None:
        result = [float(q) for q in np.quantile(times, quantiles)]
        return result[0] if len(result) == 1 else result
    modes = {"mean": statistics.fmean, "median": statistics.median, "min": min, "max": max, "all": list}
    if return_mode not in modes:
        raise ValueError(f"return_mode must be one of {', '.join(modes)}, got {return_mode!r}")
    return modes[return_mode](times)
