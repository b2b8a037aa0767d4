"""Elementwise math (``tl.math``, also re-exported as ``tl.*`` and by ``tl.extra.libdevice``).

Every function computes on float32 (16-bit floats are widened exactly, the result rounded back
to the dtype after the op, see :mod:`ascdsl.numerics`) and broadcasts its operands. Float-only
functions reject int tiles with a located error; the ``is*`` predicates give bool tiles.
"""
from __future__ import annotations

from .builtin import builtin
from .core import cdiv, maximum, minimum  # noqa: F401

__all__ = [
    'exp', 'log', 'sqrt', 'rsqrt', 'abs', 'sigmoid',
    'asinh', 'acosh', 'atanh', 'nextafter', 'logical_and', 'logical_or', 'floor', 'ceil', 'trunc', 'round',
    'rint', 'exp2', 'log2', 'log10', 'log1p', 'expm1', 'sin', 'cos', 'tan', 'tanh', 'sinh', 'cosh', 'asin',
    'acos', 'atan', 'erf', 'erfc', 'isnan', 'isinf', 'isfinite', 'signbit', 'reciprocal', 'relu', 'pow', 'atan2',
    'copysign', 'hypot', 'umulhi', 'div_rn', 'fmod', 'fdiv', 'sqrt_rn', 'fma', 'clamp', 'softmax',
]


@builtin
def exp(x):
    """Elementwise e**x of a float tile."""


@builtin
def log(x):
    """Elementwise natural logarithm of a float tile."""


@builtin
def sqrt(x):
    """Elementwise square root of a float tile."""


@builtin
def rsqrt(x):
    """Elementwise 1 / sqrt(x) of a float tile."""


@builtin
def abs(x):
    """Elementwise absolute value."""


@builtin
def sigmoid(x):
    """Elementwise 1 / (1 + exp(-x)) of a float tile."""


def _unary(name: str, doc: str):
    def fn(x):
        pass
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return builtin(fn)


def _binary(name: str, doc: str):
    def fn(x, y):
        pass
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return builtin(fn)


floor = _unary("floor", "Elementwise largest integer not greater than ``x`` (float tiles).")
ceil = _unary("ceil", "Elementwise smallest integer not less than ``x`` (float tiles).")
trunc = _unary("trunc", "Elementwise ``x`` rounded toward zero (float tiles).")
round = _unary("round", "Elementwise ``x`` rounded to the nearest integer, halves away from zero.")
rint = _unary("rint", "Elementwise ``x`` rounded to the nearest integer, halves to even.")
exp2 = _unary("exp2", "Elementwise ``2 ** x``.")
log2 = _unary("log2", "Elementwise base-2 logarithm.")
log10 = _unary("log10", "Elementwise base-10 logarithm.")
log1p = _unary("log1p", "Elementwise ``log(1 + x)``, accurate for small ``x``.")
expm1 = _unary("expm1", "Elementwise ``exp(x) - 1``, accurate for small ``x``.")
sin = _unary("sin", "Elementwise sine.")
cos = _unary("cos", "Elementwise cosine.")
tan = _unary("tan", "Elementwise tangent.")
tanh = _unary("tanh", "Elementwise hyperbolic tangent.")
sinh = _unary("sinh", "Elementwise hyperbolic sine.")
cosh = _unary("cosh", "Elementwise hyperbolic cosine.")
asin = _unary("asin", "Elementwise arc sine.")
acos = _unary("acos", "Elementwise arc cosine.")
atan = _unary("atan", "Elementwise arc tangent.")
erf = _unary("erf", "Elementwise error function.")
erfc = _unary("erfc", "Elementwise complementary error function ``1 - erf(x)``, accurate where erf is near 1.")
asinh = _unary("asinh", "Elementwise inverse hyperbolic sine.")
acosh = _unary("acosh", "Elementwise inverse hyperbolic cosine.")
atanh = _unary("atanh", "Elementwise inverse hyperbolic tangent.")
isnan = _unary("isnan", "Elementwise ``x != x`` as a bool tile.")
isinf = _unary("isinf", "Elementwise ``x`` is +-infinity, as a bool tile.")
isfinite = _unary("isfinite", "Elementwise ``x`` is neither infinite nor NaN, as a bool tile.")
signbit = _unary("signbit", "Elementwise sign bit of ``x`` (True for -0.0 and negatives), as a bool tile.")
reciprocal = _unary("reciprocal", "Elementwise ``1 / x``.")
relu = _unary("relu", "Elementwise ``maximum(x, 0)``.")
pow = _binary("pow", "Elementwise ``x ** y`` of floats.")
atan2 = _binary("atan2", "Elementwise arc tangent of ``x / y`` in the quadrant of ``(y, x)``.")
copysign = _binary("copysign", "Elementwise magnitude of ``x`` with the sign of ``y``.")
hypot = _binary("hypot", "Elementwise ``sqrt(x * x + y * y)`` without overflow.")
nextafter = _binary("nextafter", "Elementwise the next float after ``x`` in the direction of ``y``.")
logical_and = _binary("logical_and", "Elementwise ``x and y`` as bools (ints are true where non-zero).")
logical_or = _binary("logical_or", "Elementwise ``x or y`` as bools (ints are true where non-zero).")
umulhi = _binary("umulhi", "Elementwise high half of the unsigned product of two int tiles (bits as unsigned).")
div_rn = _binary("div_rn", "Elementwise ``x / y`` rounded to nearest (IEEE division).")
fmod = _binary("fmod", "Elementwise remainder of ``x / y`` truncated toward zero (the sign of ``x``).")


@builtin
def fdiv(x, y, ieee_rounding=False):
    """Elementwise ``x / y`` of floats (always IEEE-rounded here)."""


@builtin
def sqrt_rn(x):
    """Elementwise square root, rounded to nearest (the same as :func:`sqrt`)."""


@builtin
def fma(x, y, z):
    """Elementwise ``x * y + z`` with one rounding."""


@builtin
def clamp(x, min, max, propagate_nan=None):
    """Elementwise ``minimum(maximum(x, min), max)``; NaN in ``x`` propagates."""


@builtin
def softmax(x, dim=None, keep_dims=False, ieee_rounding=False):
    """``exp(x - max(x)) / sum(exp(x - max(x)))`` along ``dim`` (default: the last axis)."""
