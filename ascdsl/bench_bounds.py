"""What the cost model says the alternatives would reach where a seed-op class stays off its target
(``ascdsl bench`` prints it under its table; docs/performance.md quotes it).

* **Few rows** (16 rows of 4096 on 40 cores: 16 busy cores). A row split over the cores, however its
  partial sums were exchanged, can do no better than every core moving one equal piece with no
  exchange at all: the same bytes as ``[cores, n / cores]`` rows, one row per core. That run's
  estimate over the few-rows class's own floor bounds every split from below.
* **The sweep's shapes over the target** (``ascdsl bench --sweep N``): each against the same split, and
  rows that are not whole 32-byte blocks also against the same bytes in rows padded to whole blocks (what a
  relayout in UB could at best match, the relayout itself left out). Where one reaches the target, the
  shape's gap is a kernel form the ops do not have. Where none does, spreading the bytes does not close it
  with the ops' kernels as they are: what is left is a core's one short tile, its read, vector work and
  write in turn (the model has no DMA latency); a form overlapping them inside a row is not measured.
* **UB under the target** (log_softmax_grad's rows of 4096 floats: two rows per tile in two
  double-buffered queues are 69.9% of the budget, and a third does not fit). The same class on the
  same platform with twice the UB (more rows per tile) shows what filling the UB would gain.
"""
from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from . import dtypes
from .op import Operator
from .platforms import PLATFORMS, get_platform

RATIO_TARGET = 1.2  # the estimate over floor
SEED_OPS = ("softmax_grad", "log_softmax_grad")
UB_TARGET = 0.70  # the UB use for large shapes
LARGE = 1 << 20  # elements: a "large shape" for the UB target
Simulate = Callable  # bench.simulate: (op, case, platform name) -> its Kernel figures


@dataclass(frozen=True)
class Bound:
    """One alternative: what it is, the class's estimate over its floor, and the alternative's."""

    what: str
    ratio: float
    alternative: float
    ub_use: float


def split_shape(shape: tuple[int, ...], cores: int, align: int) -> tuple[int, int]:
    """``[cores, piece]``: the class's elements in one equal piece per core, whole 32-byte blocks."""
    piece = -(-int(np.prod(shape)) // cores)
    return cores, -(-piece // align) * align


@contextlib.contextmanager
def wider_ub(platform: str, factor: int) -> Iterator[str]:
    """``platform``'s row with ``factor`` times its UB in :data:`PLATFORMS` while in use (the same
    name: the cost model's constants are the platform's own)."""
    base = get_platform(platform)
    PLATFORMS[base.name] = dataclasses.replace(base, ub_bytes=base.ub_bytes * factor,
                                               ub_budget_bytes=base.ub_budget_bytes * factor)
    try:
        yield base.name
    finally:
        PLATFORMS[base.name] = base


def split_bound(simulate: Simulate, op: Operator, case, platform: str, kernel) -> Bound:
    """The few-rows class ``case`` (measured as ``kernel``) against one equal piece per core."""
    block = 32 // dtypes.lookup(case.dtype).itemsize
    shape = split_shape(case.shape, get_platform(platform).vector_core_count, block)
    return _reshaped(simulate, op, case, platform, kernel, shape,
                     f"split into one {shape[1]}-element piece per core (no exchange)")


def padded_bound(simulate: Simulate, op: Operator, case, platform: str, kernel) -> Bound | None:
    """The rows of ``case`` (measured as ``kernel``) padded to whole 32-byte blocks, the same bytes in fewer
    rows; None where its rows are whole blocks already."""
    *outer, k = case.shape
    block = 32 // dtypes.lookup(case.dtype).itemsize
    if k % block == 0:
        return None
    padded = -(-k // block) * block
    shape = (-(-int(np.prod(outer)) * k // padded), padded)
    return _reshaped(simulate, op, case, platform, kernel, shape, f"as {shape[0]} rows of {padded}")


def sweep_bounds(simulate: Simulate, ops: dict[str, Operator], done: list, platform: str) -> list[tuple]:
    """(case, its alternatives) of every seed-op sweep shape over the target: ``done`` holds (case,
    ``bench.Kernel``); short rows (the class of that name) also padded to whole blocks."""
    found = []
    for case, k in done:
        if case.op in SEED_OPS and k.ratio > RATIO_TARGET and k.floor_us > 0:  # a floor of 0: nothing to compare
            op = ops[case.op]
            padded = padded_bound(simulate, op, case, platform, k) if "short rows" in case.shape_class else None
            found.append((case, (split_bound(simulate, op, case, platform, k), *([padded] if padded else []))))
    return found


def report_sweep(found: list[tuple], out) -> None:
    """Each shape's alternatives, and whether any reaches the target."""
    if not found:
        return
    print(f"\nthe sweep's seed-op shapes over {RATIO_TARGET:g}x and the model's figure for each alternative "
          "(ascdsl/bench_bounds.py):", file=out)
    for case, alternatives in found:
        best = min(b.alternative for b in alternatives)
        verdict = ("an alternative reaches the target: a kernel form the ops lack" if best <= RATIO_TARGET else
                   "over the target however its bytes are spread, with the ops' own kernels")
        shown = "; ".join(f"{b.what.removeprefix(_label(case) + ' ')} {b.alternative:.2f}" for b in alternatives)
        print(f"  {_label(case)} ({case.shape_class}) {alternatives[0].ratio:.2f}: {shown} -> {verdict}", file=out)


def ub_bound(simulate: Simulate, op: Operator, case, platform: str, kernel, factor: int = 2) -> Bound:
    """The class ``case`` (measured as ``kernel``) on ``platform`` with ``factor`` times the UB."""
    with wider_ub(platform, factor) as wide:
        k = simulate(op, case, wide)
    return Bound(f"{_label(case)} with {factor}x the UB", kernel.ratio, k.ratio, k.ub_use)


def bounds(simulate: Simulate, ops: dict[str, Operator], measured: list, platform: str) -> list[Bound]:
    """The alternatives of every measured row (``bench.Row``) off a target for the reasons above;
    ``simulate`` is ``bench.simulate``."""
    out = []
    for row in measured:
        case, k = row.case, row.kernel
        if case.op not in SEED_OPS:
            continue
        if case.shape_class == "few rows" and k.ratio > RATIO_TARGET:
            out.append(split_bound(simulate, ops[case.op], case, platform, k))
        elif np.prod(case.shape) >= LARGE and k.ub_use < UB_TARGET:
            out.append(ub_bound(simulate, ops[case.op], case, platform, k))
    return out


def report(found: list[Bound], out) -> None:
    if not found:
        return
    print("\nwhere a seed-op class is off a target, what the alternative would reach (ascdsl/bench_bounds.py):",
          file=out)
    for b in found:
        print(f"  {b.what}: est/floor {b.ratio:.2f} -> {b.alternative:.2f} (UB {b.ub_use:.0%})", file=out)


def _reshaped(simulate: Simulate, op: Operator, case, platform: str, kernel, shape: tuple[int, ...],
              what: str) -> Bound:
    """``case`` (measured as ``kernel``) run as ``shape``, the alternative ``what``, over the class's floor."""
    alt = simulate(op, dataclasses.replace(case, shape=shape), platform)
    return Bound(f"{_label(case)} {what}", kernel.ratio, alt.est_us / kernel.floor_us, alt.ub_use)


def _label(case) -> str:
    return f"{case.op} {'x'.join(map(str, case.shape))} {case.dtype}"
