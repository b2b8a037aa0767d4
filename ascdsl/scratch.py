"""GM scratch a launch plan owns (``ascdsl.Launch(scratch=...)``): the checks of its declaration, its poisoned
arrays on the Python entry path and its size in the op project's user workspace (which the generated tiling
function computes alike, :mod:`.backend.host.hostlower`)."""
from __future__ import annotations

import numpy as np

from . import dtypes

ALIGN = 32
"""Bytes each scratch is rounded up to in the user workspace (so the next starts aligned)."""

POISON = 0xAB
"""The bytes of fresh integer scratch (float scratch is NaN)."""


def size(nbytes: int) -> int:
    """The bytes a scratch of ``nbytes`` takes in the user workspace: rounded up to :data:`ALIGN`."""
    return -(-nbytes // ALIGN) * ALIGN


def negative(name: str, count) -> str:
    """The message of a scratch of ``count`` < 0 elements (the generated tiling function's VALUE_ERROR too)."""
    return f"scratch {name!r}: {count} elements, a negative size"


def problem(parsed, scratch: dict, constexprs: dict, scalars: dict) -> str | None:
    """What is wrong in the code of ``scratch`` (name -> (dtype, element count)) for the kernel ``parsed`` (its
    parsed function) launched with ``constexprs`` and ``scalars``, or None (a count may still be negative)."""
    if scratch and parsed is None:
        return "scratch needs an @ascdsl.jit kernel"
    for name, spec in scratch.items():
        what = f"scratch {name!r}"
        taken = "a constexpr" if name in parsed.constexprs or name in constexprs else \
            "a runtime scalar" if name in scalars else None
        if name not in parsed.params or taken:
            return f"{what}: `{parsed.name}` has no pointer parameter {name!r}" + (f" (it is {taken})" if taken else "")
        if not (isinstance(spec, tuple) and len(spec) == 2):
            return f"{what} is a (dtype, element count) pair, got {spec!r}"
        dtype, count = spec
        if not isinstance(dtype, dtypes.DType):
            return f"{what}: {dtype!r} is not a language dtype (tl.float32, ...)"
        if not isinstance(count, (int, np.integer)) or isinstance(count, (bool, np.bool_)):
            return f"{what}: the element count must be an int, got {count!r}"
    return None


def poisoned(dtype: dtypes.DType, count: int) -> np.ndarray:
    """Fresh scratch of ``count`` ``dtype`` elements: NaN, or :data:`POISON` bytes for integers."""
    if dtype.is_float:
        return np.full(count, np.nan, dtype.np)
    return np.full(count * dtype.itemsize, POISON, np.uint8).view(dtype.np)
