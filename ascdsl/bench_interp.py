"""The interpreter's rows of ``ascdsl bench``: Triton-style kernels (:mod:`ascdsl.bench_kernels`) on
the interpreter against the NumPy formula of what they compute, and the same kernel source on
upstream Triton's interpreter (``TRITON_INTERPRET=1``) where ``triton`` and ``torch`` are installed.

Times are CPU seconds of this process, medians of interleaved runs (:func:`interleaved_medians`);
upstream Triton, which is two orders of magnitude slower, is timed once per kernel.
"""
from __future__ import annotations

import importlib
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Callable

import numpy as np

import ascdsl
import ascdsl.language as tl

from .language.core import next_power_of_2

SOURCE = Path(__file__).with_name("bench_kernels.py")
SHAPES = ((4096, 1024), (1024, 4096), (16384, 128))
QUICK_SHAPES = ((37, 100),)  # odd sizes: masked tails everywhere
KERNEL_BOUND = 1.5
"""The issue's target: Triton-style kernels within 1.5x of the NumPy formula, whatever their block sizes."""


def interleaved_medians(fs: list[Callable[[], object]], repeats: int) -> list[float]:
    """Median CPU seconds of each of ``fs``, run in turn ``repeats`` times after one warm-up each."""
    for f in fs:
        f()
    times: list[list[float]] = [[] for _ in fs]
    for _ in range(repeats):
        for f, ts in zip(fs, times):
            start = time.process_time()
            f()
            ts.append(time.process_time() - start)
    return [statistics.median(ts) for ts in times]


def triton_kernels(triton, tl) -> SimpleNamespace:
    """The kernels of :mod:`ascdsl.bench_kernels` compiled by ``triton`` (ascdsl or upstream Triton)."""
    namespace = {"__name__": f"ascdsl_bench_kernels_{triton.__name__}", "__file__": str(SOURCE),
                 "triton": triton, "tl": tl}
    exec(compile(SOURCE.read_text(), str(SOURCE), "exec"), namespace)
    return SimpleNamespace(**{k: v for k, v in namespace.items() if k.endswith("_kernel")})


def softmax_formula(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def log_softmax_backward_formula(dy, y):
    return dy - np.exp(y) * dy.sum(axis=-1, keepdims=True)


def layer_norm_formula(x, w, b, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    return centred / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + eps) * w + b


@dataclass(frozen=True)
class KernelCase:
    """One kernel with one way of launching it: ``launch(kernels, arrays)`` on the arrays that
    ``inputs(m, n)`` makes (``out`` receives the result), against ``formula`` of the named inputs."""

    name: str
    launch: Callable
    formula: Callable
    args: tuple[str, ...]

    def inputs(self, m: int, n: int) -> dict[str, np.ndarray]:
        rng = np.random.default_rng(0)
        full = lambda: rng.standard_normal((m, n)).astype(np.float32)  # noqa: E731
        row = lambda: rng.standard_normal(n).astype(np.float32)  # noqa: E731
        arrays = {"x": full(), "y": full(), "w": row(), "b": row(), "out": np.empty((m, n), np.float32)}
        arrays.update(mean=np.empty(m, np.float32), rstd=np.empty(m, np.float32))
        return arrays


def _softmax(programs: int | None):
    def launch(k, a):
        m, n = a["x"].shape
        k.softmax_kernel[(programs or m,)](a["out"], a["x"], n, n, m, n, BLOCK_SIZE=next_power_of_2(n))
    return launch


def _log_softmax_backward(rows: int):
    def launch(k, a):
        m, n = a["x"].shape
        k.log_softmax_backward_kernel[(-(-m // rows),)](a["x"], a["y"], a["out"], m, n, n, ROWS=rows,
                                                        BLOCK=next_power_of_2(n))
    return launch


def _layer_norm(chunks: int):
    def launch(k, a):
        m, n = a["x"].shape
        k.layer_norm_kernel[(m,)](a["x"], a["out"], a["w"], a["b"], a["mean"], a["rstd"], n, n, 1e-5,
                                  BLOCK_SIZE=min(next_power_of_2(n), max(128, next_power_of_2(n) // chunks)))
    return launch


KERNEL_CASES = (
    KernelCase("fused softmax, 1 row per program", _softmax(None), softmax_formula, ("x",)),
    KernelCase("fused softmax, 64 programs looping", _softmax(64), softmax_formula, ("x",)),
    KernelCase("log-softmax backward, 1 row per program", _log_softmax_backward(1), log_softmax_backward_formula,
               ("x", "y")),
    KernelCase("log-softmax backward, 8 rows per program", _log_softmax_backward(8),
               log_softmax_backward_formula, ("x", "y")),
    KernelCase("layer norm, a row per block", _layer_norm(1), layer_norm_formula, ("x", "w", "b")),
    KernelCase("layer norm, a row in 4 blocks of 128 or more", _layer_norm(4), layer_norm_formula, ("x", "w", "b")),
)


def kernel_ratio(kernels, case: KernelCase, m: int, n: int, repeats: int) -> tuple[float, float]:
    """(kernel on the interpreter, NumPy formula) medians in seconds, interleaved."""

    a = case.inputs(m, n)
    operands = [a[name] for name in case.args]
    return tuple(interleaved_medians([lambda: case.launch(kernels, a), lambda: case.formula(*operands)], repeats))


def upstream_triton():
    """``(triton, triton.language, torch)`` of upstream Triton in interpreter mode, or None: not
    installed, or imported before without ``TRITON_INTERPRET=1`` (which it reads when imported)."""
    if "triton" not in sys.modules:
        os.environ["TRITON_INTERPRET"] = "1"
    try:
        triton = importlib.import_module("triton")
        torch = importlib.import_module("torch")
    except ImportError:
        return None
    if triton.__name__ != "triton" or not hasattr(triton, "__version__") or os.environ.get("TRITON_INTERPRET") != "1":
        return None  # ascdsl.triton_alias in its place, or a Triton set up for a GPU
    return triton, importlib.import_module("triton.language"), torch


def upstream_seconds(upstream, case: KernelCase, m: int, n: int) -> float:
    """CPU seconds of one launch of ``case`` on upstream Triton's interpreter (torch CPU tensors)."""
    triton, tl, torch = upstream
    kernels = triton_kernels(triton, tl)
    a = {k: torch.from_numpy(v) for k, v in case.inputs(m, n).items()}
    case.launch(kernels, a)  # compiles
    start = time.process_time()
    case.launch(kernels, a)
    return time.process_time() - start


def report(repeats: int, out, shapes=SHAPES, upstream: bool = True) -> list[tuple[KernelCase, tuple[int, int], float, float]]:
    """Print every kernel case at every shape, then (``upstream``) the speed-up over upstream Triton's
    interpreter at the first shape; return ``(case, shape, interpreter s, numpy s)`` rows."""
    kernels = triton_kernels(ascdsl, tl)
    rows = []
    print(f"\nTriton-style kernels on the interpreter / NumPy formula, fp32 (target <= {KERNEL_BOUND:g}x):", file=out)
    for case in KERNEL_CASES:
        for m, n in shapes:
            a, b = kernel_ratio(kernels, case, m, n, repeats)
            rows.append((case, (m, n), a, b))
            print(f"  {case.name} {m}x{n}: {a / b:.2f}x ({a * 1e3:.1f} ms / {b * 1e3:.1f} ms)", file=out, flush=True)
    if not upstream:
        return rows
    found, (m, n) = upstream_triton(), shapes[0]
    if found is None:
        print("\nupstream Triton's interpreter: not measured (triton and torch are not importable)", file=out)
        return rows
    print(f"\nupstream Triton {found[0].__version__} interpreter (TRITON_INTERPRET=1, one run) on the same "
          f"source, {m}x{n}:", file=out)
    for case, shape, ours, _ in rows:
        if shape == (m, n):
            theirs = upstream_seconds(found, case, m, n)
            print(f"  {case.name}: {theirs / ours:.0f}x faster here ({theirs * 1e3:.0f} ms / {ours * 1e3:.1f} ms)",
                  file=out, flush=True)
    return rows
