"""UB-planner queries for host code: the largest block that fits, and a kernel's UB footprint.

In an ``@ascdsl.host`` function (Python, and the generated C++ tiling function alike)::

    block = ascdsl.planner.largest_block(no_reduce_kernel, "BLOCK", (4096, 2048, 1024), x, x,
                                         platform=platform, OTHER=...)

The arguments after the candidates describe the kernel's runtime parameters in order: a
:class:`~ascdsl.TensorDesc` is a pointer to its dtype (pass an input for an output of the same
dtype), a ``DType`` a scalar; parameters left out are int32 scalars (a scalar's width does not
change where tiles live). The other constexprs are keywords. In the C++ they must be known at build
time, be bools, or be expressions of the tensors' dtypes written in the call (such as
``ALIGN=32 // x.dtype.itemsize``): the build evaluates :func:`footprint` for every dtype combination
of the op and every such bool, and the tiling function picks from that table at run time.
"""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

from . import dtypes
from .backend.render.ascendc import planned
from .backend.lift.lift import CANONICAL, analyse
from .errors import CompilationError, Error, InputValueError, caller_site
from .op import TensorDesc
from .platforms import DEFAULT_PLATFORM, Platform, get_platform


def arg_types(jit_fn, args) -> tuple:
    """Specialisation types for ``jit_fn`` from ``args`` (see the module docstring)."""
    runtime = [p for p in jit_fn.parsed.params if p not in jit_fn.parsed.constexprs]
    if len(args) > len(runtime):
        raise Error(f"{jit_fn.__name__} takes {len(runtime)} runtime arguments, got {len(args)}")
    types = [dtypes.PointerType(a.dtype) if isinstance(a, TensorDesc) else a for a in args]
    return tuple(types + [dtypes.int32] * (len(runtime) - len(types)))


@lru_cache(maxsize=4096)
def plan_total(jit_fn, types: tuple, constexprs: tuple) -> int:
    """UB bytes of the kernel's plan (the backend's one plan of that variant, on the default
    platform: only the budget differs between platforms)."""
    kernel = jit_fn.specialize(*types, **dict(constexprs)).kernels[0]
    return planned(kernel, get_platform(DEFAULT_PLATFORM)).plan.total_bytes


def largest_block(jit_fn, name: str, candidates, *args, platform: Platform | str | None = None, **constexprs):
    """The largest of ``candidates`` for constexpr ``name`` whose UB plan fits ``platform``; an
    :class:`~ascdsl.InputValueError` (a ValueError in host code) if none does."""
    target = platform if isinstance(platform, Platform) else get_platform(platform or DEFAULT_PLATFORM)
    types = arg_types(jit_fn, args)
    for value in sorted(candidates, reverse=True):
        if plan_total(jit_fn, types, tuple(sorted({**constexprs, name: value}.items()))) <= target.ub_budget_bytes:
            return value
    raise InputValueError(no_fit_message(name, candidates) + target.name)


def no_fit_message(name: str, candidates) -> str:
    """The message when no candidate fits, before the platform name (the C++ appends it too)."""
    return f"no {name} in {sorted(candidates)} fits the UB of "


def footprint(jit_fn, name: str, *args, samples=(256, 512, 1024), **constexprs) -> tuple[Fraction, int]:
    """``(a, b)`` such that the UB plan takes ``a * value + b`` bytes for constexpr ``name``: fit on
    the first two samples and checked on every other one (an Error if the plan is not affine there).
    ``a`` is a Fraction (bytes per unit of ``name``; scratch like reduction work is 1/8 byte per
    float), ``b`` an int."""
    types = arg_types(jit_fn, args)
    totals = {s: plan_total(jit_fn, types, tuple(sorted({**constexprs, name: s}.items()))) for s in samples}
    (x0, y0), (x1, y1) = list(totals.items())[:2]
    a = Fraction(y1 - y0, x1 - x0)
    b = y0 - a * x0
    if b.denominator != 1 or any(a * x + b != y for x, y in totals.items()):
        raise Error(f"the UB footprint of {jit_fn.__name__} is not affine in {name}: {totals}")
    return a, int(b)


PLACEHOLDER = 64  # the value runtime tile extents are specialised at to find the kernel's lift


def lifted(jit_fn, args, platform: Platform, constexprs: dict):
    """The :class:`~ascdsl.backend.lift.lift.Lift` of ``jit_fn`` for ``args`` and ``constexprs`` (a constexpr
    given as None is a runtime tile extent), or an Error naming what is not a runtime extent."""
    runtime = [k for k, v in constexprs.items() if v is None]
    # ints given may be extents too; large ones are analysed at a placeholder (the analysis stands
    # small values in for them anyway), small ones at their own (a structural ALIGN=8 is analysed once)
    guess = {k for k, v in constexprs.items() if type(v) is int and v > CANONICAL}
    while True:
        values = {k: PLACEHOLDER if v is None or k in guess else v for k, v in constexprs.items()}
        kernel = jit_fn.specialize(*arg_types(jit_fn, args), **values).kernels[0]
        planned(kernel, platform, general=True)  # a kernel the backend refuses: its error, not a search
        found = analyse(jit_fn, kernel, platform)
        structural = {k for k in guess if found is None or k not in found.names}
        structural |= {e.name for e in (found.extents if found is not None else ()) if e.name in guess
                       and not e.admits(constexprs[e.name])}
        if not structural:
            break
        guess -= structural  # analysed again at their own values
    missing = [k for k in runtime if found is None or k not in found.names]
    if missing:
        raise NotAnExtentError(f"{missing[0]} of {jit_fn.__name__} is not a runtime tile extent (it changes the "
                               "kernel's code, not only its tile sizes)")
    return found


class NotAnExtentError(Error):
    """A constexpr asked for as a runtime tile extent changes the kernel's code (:func:`lifted`)."""

    HINT = ("give it as a compile-time constexpr and pick it with ascdsl.planner.largest_block among fixed "
            "candidates; `ascdsl build --explain` says which line keeps it from being a runtime extent")


def largest_extent(jit_fn, name: str, *args, platform: Platform | str | None = None, **constexprs) -> int:
    """The largest value of the runtime tile extent ``name`` (:mod:`ascdsl.backend.lift.lift`) whose exact UB
    footprint fits ``platform``, the other runtime extents given as keywords (with the other
    constexprs); 0 when even its smallest value does not fit. The value is a multiple of the extent's
    quantum, at least its smallest value, as the built kernel admits. A :class:`~ascdsl.CompilationError` at
    the caller's line if ``name`` (or another constexpr given as None) is no runtime tile extent."""
    target = platform if isinstance(platform, Platform) else get_platform(platform or DEFAULT_PLATFORM)
    key = (jit_fn, name, arg_types(jit_fn, args), target.ub_budget_bytes, tuple(sorted(constexprs.items())))
    try:
        hash(key)
        find = _largest_extent
    except TypeError:  # a constexpr no kernel takes (a list): specialising says so
        find = _largest_extent.__wrapped__
    try:
        return find(*key)
    except NotAnExtentError as e:  # the host code's mistake: at its call
        raise CompilationError(caller_site(), str(e), hint=NotAnExtentError.HINT) from None


@lru_cache(maxsize=4096)
def _largest_extent(jit_fn, name: str, types: tuple, budget: int, constexprs: tuple) -> int:
    """:func:`largest_extent`, once per kernel, types, budget and constexprs (host code asks the same
    question at every launch; the footprint is exact, so the answer never changes)."""
    constexprs = dict(constexprs)
    # the default platform's plan, as plan_total: only the budget differs between platforms
    found = lifted(jit_fn, types, get_platform(DEFAULT_PLATFORM), {**constexprs, name: None})
    values = {n: constexprs[n] for n in found.names if n != name}
    (e,) = [e for e in found.extents if e.name == name]
    return e.largest(lambda v: found.bytes({**values, name: v}) <= budget)


__all__ = ["CompilationError", "footprint", "largest_block", "largest_extent"]
