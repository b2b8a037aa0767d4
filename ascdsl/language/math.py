"""Elementwise math (``tl.math``, also re-exported as ``tl.*`` and by ``tl.extra.libdevice``).

Every function computes on float32 (16-bit floats are widened exactly, the result rounded back
to the dtype after the op, see :mod:`ascdsl.numerics`) and broadcasts its operands. Float-only
functions reject int tiles with a located error; the ``is*`` predicates give bool tiles.

The functions of one op each are made from the table :data:`ascdsl.numerics.MATH`; the rest, which the
frontend builds from other ops, are written out below.
"""
from __future__ import annotations

import inspect

from ..numerics import MATH, Builtin
from .builtin import builtin
from .core import cdiv, maximum, minimum  # noqa: F401


def _stub(row: Builtin):
    """The marker of ``row``, with the signature of ``row.params`` (calls are bound against it)."""
    def fn(*args):
        pass
    fn.__name__ = fn.__qualname__ = row.op.value
    fn.__doc__ = row.doc
    fn.__signature__ = inspect.Signature([inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                                          for p in row.params])
    return builtin(fn)


globals().update({row.op.value: _stub(row) for row in MATH})


@builtin
def logical_and(x, y):
    """Elementwise ``x and y`` as bools (ints are true where non-zero)."""


@builtin
def logical_or(x, y):
    """Elementwise ``x or y`` as bools (ints are true where non-zero)."""


@builtin
def reciprocal(x):
    """Elementwise ``1 / x``."""


@builtin
def relu(x):
    """Elementwise ``maximum(x, 0)``."""


@builtin
def div_rn(x, y):
    """Elementwise ``x / y`` rounded to nearest (IEEE division)."""


@builtin
def fmod(x, y):
    """Elementwise remainder of ``x / y`` truncated toward zero (the sign of ``x``)."""


@builtin
def fdiv(x, y, ieee_rounding=False):
    """Elementwise ``x / y`` of floats (always IEEE-rounded here)."""


@builtin
def sqrt_rn(x):
    """Elementwise square root, rounded to nearest (the same as :func:`sqrt`)."""


@builtin
def clamp(x, min, max, propagate_nan=None):
    """Elementwise ``minimum(maximum(x, min), max)``; NaN in ``x`` propagates."""


@builtin
def softmax(x, dim=None, keep_dims=False, ieee_rounding=False):
    """``exp(x - max(x)) / sum(exp(x - max(x)))`` along ``dim`` (default: the last axis)."""


__all__ = [*(row.op.value for row in MATH), "logical_and", "logical_or", "reciprocal", "relu", "div_rn", "fmod",
           "fdiv", "sqrt_rn", "clamp", "softmax"]
