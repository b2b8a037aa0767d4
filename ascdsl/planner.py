"""UB-planner queries for host code: the largest block that fits, and a kernel's UB footprint.

>>> ascdsl.planner.largest_block(softmax_row_kernel, "BLOCK", (8192, 4096, 2048),
...                              tl.pointer_type(tl.float32), tl.pointer_type(tl.float32), tl.int32)
"""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

from .errors import CompilationError, Error
from .passes import PIPELINE
from .passes.ubplan import plan
from .platforms import DEFAULT_PLATFORM, get_platform


def _planned(jit_fn, arg_types: tuple, constexprs: dict, platform: str):
    """The kernel's UB plan (passes before planning only), or None if a pass rejects it."""
    kernel = jit_fn.specialize(*arg_types, **constexprs).kernels[0]
    for p in PIPELINE:
        if p.__name__ == "plan_ub":
            break
        kernel = p(kernel, get_platform(platform))
    return plan(kernel)


@lru_cache(maxsize=1024)
def _fits(jit_fn, name: str, value, arg_types: tuple, constexprs: tuple, platform: str) -> bool:
    ub = _planned(jit_fn, arg_types, {**dict(constexprs), name: value}, platform)
    return ub.total_bytes <= get_platform(platform).ub_budget_bytes


def largest_block(jit_fn, name: str, candidates, *arg_types, platform: str | None = None, **constexprs):
    """The largest of ``candidates`` for constexpr ``name`` whose UB plan fits ``platform`` (cached)."""
    platform = platform or DEFAULT_PLATFORM
    for value in sorted(candidates, reverse=True):
        if _fits(jit_fn, name, value, tuple(arg_types), tuple(sorted(constexprs.items())), platform):
            return value
    raise Error(f"no {name} in {sorted(candidates)} fits the UB of {platform}")


def footprint(jit_fn, name: str, *arg_types, platform: str | None = None, samples=(256, 512, 1024),
              **constexprs) -> tuple[Fraction, int]:
    """``(a, b)`` such that the UB plan takes ``a * value + b`` bytes for constexpr ``name``: fit on
    the first two samples and checked on the third (an Error if the plan is not affine there).
    ``a`` is a Fraction (bytes per unit of ``name``; scratch like reduction work is 1/8 byte per
    float), ``b`` an int."""
    platform = platform or DEFAULT_PLATFORM
    totals = [_planned(jit_fn, tuple(arg_types), {**constexprs, name: s}, platform).total_bytes for s in samples]
    (x0, x1, x2), (y0, y1, y2) = samples, totals
    a = Fraction(y1 - y0, x1 - x0)
    b = y0 - a * x0
    if b.denominator != 1 or a * x2 + b != y2:
        raise Error(f"the UB footprint of {jit_fn.__name__} is not affine in {name}: {dict(zip(samples, totals))}")
    return a, int(b)


__all__ = ["CompilationError", "footprint", "largest_block"]
