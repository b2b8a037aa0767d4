"""Special functions of ``libdevice`` built from the language's own operations (``log``, ``exp``,
``sqrt``, ``sin``, ``where``, polynomials), so they run on the interpreter and lower to Ascend C alike:
``erfinv`` (Giles' single-precision approximation), ``lgamma`` and ``gamma``/``tgamma`` (the Lanczos
series of Numerical Recipes' ``gammln``, reflected below 0.5), ``cyl_bessel_i0`` (Abramowitz & Stegun
9.8.1-9.8.2). Each computes in float32 and rounds once to the argument's dtype.

They are :class:`~ascdsl.language.helper.Helper` functions, inlined where a kernel calls them; they reach the
language through its modules (``core.where``, ``math.log``), not the package that imports this one."""
from __future__ import annotations

from .. import core, math
from ..helper import helper


@helper
def erfinv(x):
    xf = x.to(core.float32)
    w = -math.log((1.0 - xf) * (1.0 + xf))
    c = w - 2.5
    p = 2.81022636e-08
    p = 3.43273939e-07 + p * c
    p = -3.5233877e-06 + p * c
    p = -4.39150654e-06 + p * c
    p = 0.00021858087 + p * c
    p = -0.00125372503 + p * c
    p = -0.00417768164 + p * c
    p = 0.246640727 + p * c
    p = 1.50140941 + p * c
    t = math.sqrt(math.maximum(w, 5.0)) - 3.0
    q = -0.000200214257
    q = 0.000100950558 + q * t
    q = 0.00134934322 + q * t
    q = -0.00367342844 + q * t
    q = 0.00573950773 + q * t
    q = -0.0076224613 + q * t
    q = 0.00943887047 + q * t
    q = 1.00167406 + q * t
    q = 2.83297682 + q * t
    y = core.where(w < 5.0, p, q) * xf
    y = core.where(math.abs(xf) == 1.0, xf * float("inf"), y)
    y = core.where(math.abs(xf) > 1.0, float("nan"), y)  # outside the domain (whatever log gives there)
    return y.to(x.dtype)


@helper
def _lgamma_positive(x):
    """log(gamma(x)) for x > 0 (float32)."""
    tmp = x + 5.5
    tmp = tmp - (x + 0.5) * math.log(tmp)
    ser = 1.000000000190015 + 76.18009172947146 / (x + 1.0)
    ser = ser - 86.50532032941677 / (x + 2.0)
    ser = ser + 24.01409824083091 / (x + 3.0)
    ser = ser - 1.231739572450155 / (x + 4.0)
    ser = ser + 0.1208650973866179e-2 / (x + 5.0)
    ser = ser - 0.5395239384953e-5 / (x + 6.0)
    return math.log(2.5066282746310005 * ser / x) - tmp


@helper
def lgamma(x):
    xf = x.to(core.float32)
    reflect = xf < 0.5
    z = core.where(reflect, 1.0 - xf, xf)
    lg = _lgamma_positive(z)
    s = math.abs(math.sin(3.141592653589793 * (xf - math.floor(xf + 0.5))))  # |sin(pi x)|, x reduced to [-0.5, 0.5]
    y = core.where(reflect, math.log(3.141592653589793 / s) - lg, lg)
    return y.to(x.dtype)


@helper
def gamma(x):
    xf = x.to(core.float32)
    g = math.exp(lgamma(xf))
    negative = (xf < 0.0) & ((math.floor(xf) - 2.0 * math.floor(xf * 0.5)) != 0.0)  # (-1, 0), (-3, -2)...: floor odd
    return core.where(negative, -g, g).to(x.dtype)


@helper
def cyl_bessel_i0(x):
    xf = x.to(core.float32)
    ax = math.abs(xf)
    t = xf / 3.75
    t2 = t * t
    small = 1.0 + t2 * (3.5156229 + t2 * (3.0899424 + t2 * (1.2067492 + t2 * (0.2659732 + t2 * (
        0.0360768 + t2 * 0.0045813)))))
    u = 3.75 / math.maximum(ax, 3.75)
    large = math.exp(ax) / math.sqrt(math.maximum(ax, 3.75)) * (0.39894228 + u * (0.01328592 + u * (0.00225319 + u * (
        -0.00157565 + u * (0.00916281 + u * (-0.02057706 + u * (0.02635537 + u * (-0.01647633 + u * 0.00392377))))))))
    return core.where(ax < 3.75, small, large).to(x.dtype)


tgamma = gamma


@helper
def swizzle2d(i, j, size_i, size_j, size_g):
    """Triton's ``tl.swizzle2d``: row-major ``(i, j)`` of a ``size_i x size_j`` grid renumbered in
    column-major groups of ``size_g`` rows."""
    ij = i * size_j + j
    size_gj = size_g * size_j
    group_id = ij // size_gj
    off_i = group_id * size_g
    size_g = math.minimum(size_i - off_i, size_g)
    ij = ij % size_gj
    return off_i + ij % size_g, ij // size_g

__all__ = ["cyl_bessel_i0", "erfinv", "gamma", "lgamma", "swizzle2d", "tgamma"]
