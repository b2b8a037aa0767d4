"""``tl.extra.libdevice`` (and ``triton.language.extra.cann.libdevice``): the libdevice names of
the :mod:`ascdsl.language.math` functions and the special functions of :mod:`.special`, so kernels
written against CUDA's or CANN's libdevice run unchanged."""
from ... import numerics
from .. import math
from ..math import div_rn, fdiv, fmod, maximum, minimum, reciprocal, relu, sqrt_rn
from .special import cyl_bessel_i0, erfinv, gamma, lgamma, tgamma

_FROM_TABLE = [row.op.value for row in numerics.MATH if row.libdevice]
globals().update({name: getattr(math, name) for name in _FROM_TABLE})

fabs = math.abs
fast_expf = math.exp
fast_logf = math.log
fast_dividef = fdiv
div_rz = fdiv
isfinited = finitef = math.isfinite
nearbyint = math.rint
fmax = maximum
fmin = minimum

__all__ = [*_FROM_TABLE, "div_rn", "div_rz", "fabs", "fast_dividef", "fast_expf", "fast_logf", "fdiv", "finitef",
           "fmax", "fmin", "fmod", "isfinited", "maximum", "minimum", "nearbyint", "reciprocal", "relu", "sqrt_rn",
           "cyl_bessel_i0", "erfinv", "gamma", "lgamma", "tgamma"]
