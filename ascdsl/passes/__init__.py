"""Passes over the tile IR: named pure functions ``(kernel, platform) -> kernel`` in one list.

Each pass's output prints, parses and runs on the interpreter with the same results as its input.
"""
from __future__ import annotations

from ..ir.core import Kernel
from ..platforms import Platform, get_platform
from .access import block_accesses
from .batching import batch_programs, refusal
from .cleanup import common_scalars, dead_code, unit_reductions
from .induction import carried_offsets
from .loops import invariant_masks
from .peel import full_blocks
from .persistent import persistent_programs
from .products import accumulated_products
from .reuse import assume_disjoint, reused_loads, single_trip_loops

PIPELINE = (
    unit_reductions,  # a reduction along an axis of one element is a reshape
    accumulated_products,  # acc += tl.dot(a, b) is tl.dot(a, b, acc)
    carried_offsets,  # a pointer or offset tile a loop advances by scalars: entry + a carried scalar
    block_accesses,  # affine load/store -> block_load/block_store (located error otherwise)
    common_scalars,  # offsets and extents repeated per access are computed once
    dead_code,  # the address and mask arithmetic the block accesses replaced
    invariant_masks,  # a loop's masks of values defined before it, computed before it
)
"""The tile-IR passes; the Ascend C backend's own passes follow (:data:`ascdsl.backend.render.ascendc.PIPELINE`)."""

REUSE = (
    single_trip_loops,  # versioned on every top-level loop of run-time trips running once, where that reuses loads
    full_blocks,  # a loop masking lanes by its own bound: its full blocks unmasked, then the part-full one
    reused_loads,  # a load of what a dominating load read, no write that may reach its bytes between, is its value
)
"""Passes over the kernel a launch specialised for its arguments (:func:`specialise`)."""

AT_LAUNCH = (
    *REUSE,
    persistent_programs,  # the programs as a grid-stride loop, the loads every program makes once before it
    batch_programs,  # P consecutive programs as one (flat 1-D or rows form; `refusal` says why not)
)
"""Tile-IR passes that need the launch: the ``sim`` backend runs them before :data:`PIPELINE`, :data:`REUSE`
``(kernel, platform) -> kernel`` on the kernel specialised for its arguments, then, where the cost model
estimates it faster, ``persistent_programs`` ``(kernel) -> kernel``, then ``batch_programs``
``(kernel, P) -> kernel`` with P from the grid, the UB budget and the cost model
(:mod:`ascdsl.backend.batching.batchrun`)."""


def run_passes(kernel: Kernel, platform: Platform | str = "Ascend910B3") -> Kernel:
    """``kernel`` after every pass of :data:`PIPELINE`."""
    platform = get_platform(platform) if isinstance(platform, str) else platform
    for p in PIPELINE:
        kernel = p(kernel, platform)
    return kernel


def specialise(kernel: Kernel, disjoint: bool, platform: Platform) -> Kernel:
    """``kernel`` after :data:`REUSE` for a launch whose pointer arguments stored through overlap no other one
    (``disjoint``: the kernel is specialised for that, :data:`ascdsl.passes.reuse.DISJOINT`) or may; ``kernel``
    itself where the passes change nothing."""
    marked = assume_disjoint(kernel) if disjoint else kernel
    out = marked
    for p in REUSE:
        out = p(out, platform)
    return kernel if out.body == marked.body else out


__all__ = ["AT_LAUNCH", "PIPELINE", "REUSE", "refusal", "run_passes", "specialise"]
