"""``tl.extra.libdevice`` (and ``triton.language.extra.cann.libdevice``): the libdevice names of
the :mod:`ascdsl.language.math` functions and the special functions of :mod:`.special`, so kernels
written against CUDA's or CANN's libdevice run unchanged."""
from ..math import (abs, acos, acosh, asin, asinh, atan, atan2, atanh, ceil, copysign, cos, cosh, div_rn, erf, erfc,
                    exp, exp2, expm1, fdiv, floor, fma, fmod, hypot, isfinite, isinf, isnan, log, log10, log1p, log2,
                    maximum, minimum, nextafter, pow, reciprocal, relu, rint, round, rsqrt, signbit, sin, sinh, sqrt,
                    sqrt_rn, tan, tanh, trunc)
from .special import cyl_bessel_i0, erfinv, gamma, lgamma, tgamma

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
           "sin", "sinh", "sqrt", "sqrt_rn", "tan", "tanh", "trunc", "maximum", "minimum",
           "cyl_bessel_i0", "erfinv", "gamma", "lgamma", "tgamma"]

