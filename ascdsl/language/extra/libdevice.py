"""``tl.extra.libdevice`` (and ``triton.language.extra.cann.libdevice``): the libdevice names of
the :mod:`ascdsl.language.math` functions, so kernels written against CUDA's or CANN's libdevice
run unchanged."""
from ..core import abs, exp, log, maximum, minimum, rsqrt, sqrt
from ..math import (acos, acosh, asin, asinh, atan, atan2, atanh, nextafter, ceil, copysign, cos, cosh, div_rn, erf, erfc, exp2, expm1, fdiv, floor,
                    fma, fmod, hypot, isfinite, isinf, isnan, log1p, log2, log10, pow, reciprocal, relu, rint,
                    round, signbit, sin, sinh, sqrt_rn, tan, tanh, trunc)

fabs = abs
fast_expf = exp
fast_logf = log
fast_dividef = fdiv
div_rz = fdiv
isfinited = finitef = isfinite
nearbyint = rint
fmax = maximum
fmin = minimum

__all__ = ["abs", "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "nextafter", "ceil", "copysign", "cos", "cosh", "div_rn", "div_rz", "erf", "erfc",
           "exp", "exp2", "expm1", "fabs", "fast_dividef", "fast_expf", "fast_logf", "fdiv", "finitef", "floor",
           "fma", "fmax", "fmin", "fmod", "hypot", "isfinite", "isfinited", "isinf", "isnan", "log", "log1p",
           "log2", "log10", "nearbyint", "pow", "reciprocal", "relu", "rint", "round", "rsqrt", "signbit",
           "sin", "sinh", "sqrt", "sqrt_rn", "tan", "tanh", "trunc", "maximum", "minimum"]


SPECIAL = ("cyl_bessel_i0", "erfinv", "gamma", "lgamma", "tgamma")
"""Functions of :mod:`.special` (built from other operations), imported on first use: they are @jit
helpers, and the jit module imports the language that imports this one."""


def __getattr__(name: str):
    if name in SPECIAL:
        from . import special
        return getattr(special, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
