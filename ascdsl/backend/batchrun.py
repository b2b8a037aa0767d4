"""Program batching at launch (:mod:`ascdsl.passes.batching`): P chosen from the grid and the UB budget.

A launch of G programs on a platform of C vector cores runs batched where the pass applies and
``G // C >= 2``: P is the largest value up to ``G // C`` whose batched kernel compiles and fits the UB
budget and keeps every block copy a block copy (a binary search over the backend's plans, each compiled
once), capped to leave each core :data:`MIN_ROUNDS` batched programs where that keeps P >= 2; the
batched grid N is then a whole number of rounds of the cores (``rounds * C`` programs of
``G // N`` or one more original programs each, so every core runs the same number of rows within one
per batched program) and P becomes ``cdiv(G, N)``. A kernel the backend cannot compile batched keeps
its form. ``ASCDSL_BATCH=0`` turns batching off. P is a compile-time extent of the batched kernel,
chosen per launch (not a runtime tile extent yet).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..errors import CompilationError
from ..ir import Kernel, Op, walk
from ..passes import run_passes
from ..passes.batching import NotBatchable, batch_programs, form, refusal
from ..platforms import Platform, get_platform
from .ascendc import compile_variant


@dataclass(frozen=True)
class Batched:
    """A launch after batching: the kernel, its grid and P (1: unbatched)."""

    kernel: Kernel
    grid: tuple[int, int, int]
    p: int


def enabled() -> bool:
    """Whether launches batch programs (``ASCDSL_BATCH`` unset or not ``0``)."""
    return os.environ.get("ASCDSL_BATCH", "1") not in ("0", "")


_LANE_COPIES = frozenset({Op.GATHER_LOAD, Op.SCATTER_STORE, Op.STRIDED_LOAD, Op.STRIDED_STORE, Op.SPAN_LOAD})


def _copies(kernel: Kernel, platform: Platform) -> frozenset:
    return frozenset(i.op for i in walk(run_passes(kernel, platform).body) if i.op in _LANE_COPIES)


def keeps_block_copies(kernel: Kernel, batched: Kernel, platform: Platform) -> bool:
    """Whether ``batched`` copies by blocks wherever ``kernel`` does (batching must not turn a block
    copy into one of lanes or spans: a mask over two dims of ``[P, ROWS]`` rows is not a block bound)."""
    return _copies(batched, platform) <= _copies(kernel, platform)


def _fits(kernel: Kernel, p: int, platform: Platform) -> bool:
    try:
        batched = batch_programs(kernel, p)
        compile_variant(batched, platform)
    except (CompilationError, NotBatchable):
        return False
    return keeps_block_copies(kernel, batched, platform)


MIN_ROUNDS = 8
"""Batched programs per core P is capped to leave, where that keeps P >= 2: a core's first load and
last store overlap nothing, so a few large tiles per core cost more than eight smaller ones (cost
model: softmax 16384x128 1.16x of the floor at 3 rounds of P = 137, 1.12x at 8 rounds of P = 46).
Fewer programs (256 rows of 8192) keep the largest P that fits: layer norm 1.34x at P = 4, 1.63x at 2."""


def schedule(kernel: Kernel, programs: int, platform: Platform) -> tuple[int, int]:
    """``(P, N)``: programs per batched program and the batched grid (``(1, programs)`` where batching
    does not apply or pay). N is a whole number of rounds of the vector cores, each batched program
    ``G // N`` or one more of the original programs."""
    largest = choose(kernel, programs, platform)
    if largest < 2:
        return 1, programs
    cores = platform.vector_core_count
    if programs // (cores * MIN_ROUNDS) >= 2:
        largest = min(largest, programs // (cores * MIN_ROUNDS))
    n = -(-(-(-programs // largest)) // cores) * cores
    return -(-programs // n), n


@lru_cache(maxsize=512)
def choose(kernel: Kernel, programs: int, platform: Platform) -> int:
    """The largest P for a launch of ``programs`` programs of ``kernel`` (1 where batching does not apply)."""
    cap = programs // platform.vector_core_count
    if cap < 2 or form(kernel) is None or not _fits(kernel, 2, platform):
        return 1
    lo, hi = 2, cap  # lo fits; find the largest that does
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _fits(kernel, mid, platform):
            lo = mid
        else:
            hi = mid - 1
    return lo


def explain(kernel: Kernel, programs: int, platform: Platform) -> str:
    """Why a launch of ``programs`` programs of ``kernel`` runs unbatched ("" if it is batched): the
    pass's refusal at its kernel line, too few programs, or no P of 2 or more that fits."""
    why = refusal(kernel)
    if why is not None:
        return str(why)
    if programs // platform.vector_core_count < 2:
        return (f"{programs} program{'s' * (programs != 1)} on {platform.vector_core_count} vector cores: "
                "fewer than 2 per core")
    if choose(kernel, programs, platform) < 2:
        return (f"{kernel.loc}: no P >= 2 whose batched kernel fits the UB budget of {platform.name} and "
                "copies by blocks where the kernel does")
    return ""


def describe(kernel: Kernel, grid: tuple[int, int, int], platform: Platform) -> str:
    """What a simulator launch of ``kernel`` on ``grid`` runs: the batched form, P and the batched grid,
    or why it keeps its form (what ``ascdsl check --explain`` prints per launch)."""
    if not enabled():
        return "not batched: ASCDSL_BATCH=0 turns batching off"
    if grid[1] * grid[2] != 1:
        return f"not batched: grid {grid} has program ids along axis 1 or 2 (only 1-D grids batch)"
    p, n = schedule(kernel, grid[0], platform)
    if p < 2:
        return "not batched: " + explain(kernel, grid[0], platform)
    return f"batched ({form(kernel)} form): P = {p} programs per batched program, grid {n} ({n // platform.vector_core_count} per core)"


def batch_launch(kernel: Kernel, args: list, grid: tuple[int, int, int], platform: str) -> tuple[Kernel, list, tuple]:
    """``(kernel, args, grid)`` of the launch to run: batched where it applies (the original program
    count appended to the arguments), else as given."""
    if not enabled() or grid[1] * grid[2] != 1:
        return kernel, args, grid
    p, n = schedule(kernel, grid[0], get_platform(platform))
    if p < 2:
        return kernel, args, grid
    return batch_programs(kernel, p), [*args, np.int32(grid[0])], (n, 1, 1)
