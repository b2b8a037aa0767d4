"""Float math the vector unit has no single instruction for, and ``pow``.

Tile-IR rewrites (:func:`rewrite`, a :data:`.decompose.REWRITES` rule), each exact or within the
dtype's tolerance as noted:

* ``isnan(x)`` is ``x != x``; ``isinf(x)`` is ``|x| == inf``; ``isfinite(x)`` is ``|x| < inf``;
  ``signbit(x)`` is ``bitcast(x as float32, int32) < 0`` (exact, -0.0 and negative NaN included);
* ``fma(a, b, c)`` is ``a * b + c`` in float32, rounded twice (A2 vector cores have no fused
  multiply-add: within the tolerance, not bit-exact);
* ``log1p(x)`` is ``log(u) * (x / (u - 1))`` with ``u = 1 + x`` (Goldberg's correction of the rounding
  of ``1 + x``, a few ulps), ``x`` where ``u == 1`` and ``u`` where ``u`` is infinite;
* ``expm1(x)`` is ``(u - 1) * (x / log(u))`` with ``u = exp(x)`` (Kahan's), ``x`` where ``u == 1``,
  ``-1`` where ``u == 0`` and ``u`` where ``u`` is infinite;
* ``cbrt(x)`` is ``t = exp(log(|x|) / 3)`` refined by one Newton step ``(2t + |x| / t**2) / 3`` (a few
  ulps), given the sign of ``x``; ``x`` where ``x`` is zero or infinite;
* ``copysign(x, y)`` takes the bits ``x & 0x7fffffff | y & 0x80000000`` (exact, NaNs included);
* ``nextafter(x, y)`` steps the bits of ``x`` by one toward ``y`` (``+1`` where that moves away from zero,
  ``-1`` where it moves toward it), the smallest subnormal with the sign of ``y`` where ``x`` is zero, ``y``
  where ``x == y`` and ``x + y`` where either is NaN (exact, as C's ``nextafterf``);
* ``atan2(y, x)`` is ``Atan(min / max)`` of ``|x|`` and ``|y|``, mirrored to ``pi/2 - t`` where ``|y| > |x|``
  and to ``pi - t`` where ``x`` has its sign bit set, then given the sign of ``y`` (0 where both are zero,
  ``pi/4`` where both are infinite, the NaN ``x + y`` where either is NaN, whatever ``Max``/``Min`` make of
  it; within the tolerance);
* ``hypot(x, y)`` is ``m * sqrt(1 + (n / m)**2)`` with ``m = max(|x|, |y|)``, ``n = min(|x|, |y|)``, so
  it does not overflow where the result is finite; 0 where ``m == 0``, ``x + y`` where either is NaN and
  inf where either is infinite (NaN or not, as IEEE's ``hypot``; within the tolerance);
* float ``x % y`` (``fmod``, truncating as C's) is exact for all inputs: on ``r = |x|`` and ``a = |y|``
  (both scaled by 2**-64 where ``a >= 2**64``), whole-tile steps each replace ``r`` by ``fmod(r, a * 2**j)``,
  ``j`` the exponent difference less 23 (a multiple of ``a``, so the result is unchanged, and a quotient
  under 2**24): 11 in float32 and bfloat16, 1 in float16 (the dtype's span of binades over 23), under a
  runtime ``if`` that skips them where no element's exponent difference exceeds 23, then the last with
  ``j = 0``; each is ``r - q * s`` with ``q = trunc(r / s)`` and ``q * s`` kept
  exactly as ``p + err`` (Dekker's product of Veltkamp halves: the A2 vector unit has no fused
  multiply-add), ``s`` added back where ``r / s`` rounded up; then the sign of ``x`` (zeros included),
  ``x`` where ``|x| < |y|`` (``y`` infinite included), the default NaN where ``y`` is 0 or ``x`` infinite
  and ``x + y`` where either is NaN.

``pow(x, y)`` (:func:`select`) is the high-level tensor-tensor ``Power`` (a scalar side is
``Duplicate`` d into a tile) with its sharedTmpBuffer at CANN 8.1's minimum; ``log10`` is ``Log10``
(:data:`.isel.MATH_API`, with ``Tan``, ``Sinh``, ``Cosh``, ``Asin``, ``Acos``, ``Atan``, ``Asinh``,
``Acosh`` and ``Atanh``). ``bitcast`` between dtypes of one size copies the bits into the result's
buffer. 16-bit floats run these in float32 and round once.
"""
from __future__ import annotations

import math

import ml_dtypes

from ... import dtypes
from ...ir.core import Block, Instr, Op, Type
from ..selection import isel
from ..selection.compute import copy_blocks
from ..kir import Call, lit
from ..selection.support import cpp_dtype

F32, I32, BOOL = dtypes.float32, dtypes.int32, dtypes.bool_


def rewrite(r, instr: Instr) -> bool:
    """The tile-IR rewrites of the module docstring (a :data:`.decompose.REWRITES` rule)."""
    if len(instr.results) != 1 or instr.result.type.is_scalar or instr.op not in RULES:
        return False
    if instr.op is Op.MOD and not instr.result.type.dtype.is_float:  # integer `%`: :mod:`.intops`
        return False
    v, loc = instr.result, instr.loc
    xs = [r.cast(x, F32, loc) for x in instr.operands] if v.type.dtype not in (BOOL, F32) else instr.operands
    if instr.op in BINARY:  # a scalar side becomes a tile: the rules take absolute values and bits of both
        xs = [r.op(Op.BROADCAST, v.type.with_dtype(F32), (x,), (), loc) if x.type.is_scalar else x for x in xs]
    if v.type.dtype in (BOOL, F32):
        RULES[instr.op](_Math(r, v, loc), *xs)
    else:  # 16-bit floats: computed in float32, rounded once
        t = r.value(v.type.with_dtype(F32))
        RULES[instr.op](_Math(r, t, loc, v.type.dtype), *xs)
        r.cast(t, v.type.dtype, loc, result=v)
    return True


class _Math:
    """Emits tile instructions through the rewriter; the last one of a rule computes ``v``."""

    def __init__(self, r, v, loc, dt=None):
        self.r, self.v, self.loc = r, v, loc
        self.dt = dt or v.type.dtype  # the dtype the rule's operands had (16-bit floats compute in float32)

    def op(self, op, *xs, dt=None, result=None):
        tile = next(x for x in xs if not x.type.is_scalar)
        t = tile.type.with_dtype(dt or tile.type.dtype)
        return self.r.op(op, t, xs, (), self.loc, result=result)

    def c(self, value, like):
        return self.r.const(value, like.type.dtype, self.loc)

    def where(self, cond, a, b, result=None):
        return self.op(Op.WHERE, cond, a, b, dt=(b if not b.type.is_scalar else a).type.dtype, result=result)


def _isnan(m: _Math, x):
    m.op(Op.NE, x, x, dt=BOOL, result=m.v)


def _isinf(m: _Math, x):
    m.op(Op.EQ, m.op(Op.ABS, x), m.c(math.inf, x), dt=BOOL, result=m.v)


def _isfinite(m: _Math, x):
    m.op(Op.LT, m.op(Op.ABS, x), m.c(math.inf, x), dt=BOOL, result=m.v)


def _signbit(m: _Math, x):
    xf = m.r.cast(x, F32, m.loc)
    bits = m.op(Op.BITCAST, xf, dt=I32)
    m.op(Op.LT, bits, m.r.const(0, I32, m.loc), dt=BOOL, result=m.v)


def _fma(m: _Math, a, b, c):
    m.op(Op.ADD, m.op(Op.MUL, a, b, dt=m.v.type.dtype), c, dt=m.v.type.dtype, result=m.v)


def _log1p(m: _Math, x):
    one = m.c(1.0, x)
    u = m.op(Op.ADD, x, one)
    goldberg = m.op(Op.MUL, m.op(Op.LOG, u), m.op(Op.DIV, x, m.op(Op.SUB, u, one)))
    exact = m.where(m.op(Op.EQ, u, one, dt=BOOL), x, goldberg)
    m.where(m.op(Op.EQ, u, m.c(math.inf, x), dt=BOOL), u, exact, result=m.v)


def _expm1(m: _Math, x):
    u = m.op(Op.EXP, x)
    one = m.c(1.0, x)
    kahan = m.op(Op.MUL, m.op(Op.SUB, u, one), m.op(Op.DIV, x, m.op(Op.LOG, u)))
    t = m.where(m.op(Op.EQ, u, one, dt=BOOL), x, kahan)
    t = m.where(m.op(Op.EQ, u, m.c(0.0, x), dt=BOOL), m.c(-1.0, x), t)
    m.where(m.op(Op.EQ, u, m.c(math.inf, x), dt=BOOL), u, t, result=m.v)


def _cbrt(m: _Math, x):
    ax = m.op(Op.ABS, x)
    third = m.c(1 / 3, x)
    t = m.op(Op.EXP, m.op(Op.MUL, m.op(Op.LOG, ax), third))
    t = m.op(Op.MUL, m.op(Op.ADD, m.op(Op.ADD, t, t), m.op(Op.DIV, ax, m.op(Op.MUL, t, t))), third)
    signed = m.r.value(t.type)
    _copysign(_Math(m.r, signed, m.loc), t, x)
    edge = m.op(Op.OR, m.op(Op.EQ, x, m.c(0.0, x), dt=BOOL), m.op(Op.EQ, ax, m.c(math.inf, x), dt=BOOL))
    m.where(edge, x, signed, result=m.v)


SIGN, MAGNITUDE = -2 ** 31, 2 ** 31 - 1  # the int32 masks of a float32's sign bit and of the rest


def _bits(m: _Math, x):
    return m.op(Op.BITCAST, x, dt=I32)


def _int(m: _Math, value):
    return m.r.const(value, I32, m.loc)


def _with_sign_of(m: _Math, bits, y):
    """``bits`` (int32, sign bit clear) with the sign bit of float32 ``y``."""
    return m.op(Op.OR, bits, m.op(Op.AND, _bits(m, y), _int(m, SIGN)))


def _copysign(m: _Math, x, y):
    magnitude = m.op(Op.AND, _bits(m, x), _int(m, MAGNITUDE))
    m.op(Op.BITCAST, _with_sign_of(m, magnitude, y), dt=F32, result=m.v)


def _nextafter(m: _Math, x, y):
    bx = _bits(m, x)
    away = m.op(Op.XOR, m.op(Op.GT, y, x, dt=BOOL), m.op(Op.LT, bx, _int(m, 0), dt=BOOL))
    stepped = m.op(Op.ADD, bx, m.where(away, _int(m, 1), _int(m, -1)))
    tiny = _with_sign_of(m, _int(m, 1), y)
    bits = m.where(m.op(Op.EQ, x, m.c(0.0, x), dt=BOOL), tiny, stepped)
    bits = m.where(m.op(Op.EQ, x, y, dt=BOOL), _bits(m, y), bits)
    m.where(_either_nan(m, x, y), m.op(Op.ADD, x, y), m.op(Op.BITCAST, bits, dt=F32), result=m.v)


SPLIT = 4097.0  # 2**12 + 1: Veltkamp's constant, a float32 in halves of 12 bits


def _halves(m: _Math, a):
    """``a`` as ``hi + lo``, each of 12 significant bits (Veltkamp's split: products of halves are exact)."""
    c = m.op(Op.MUL, a, m.c(SPLIT, a))
    hi = m.op(Op.SUB, c, m.op(Op.SUB, c, a))
    return hi, m.op(Op.SUB, a, hi)


QUOTIENT_BITS = 24  # a step's quotient ``r / s`` stays under 2**24: ``q * s`` is exact as a Dekker product
SCALE = 2.0 ** 64  # |y| at least this is scaled down with x (no split overflows), below its inverse up (exponents)


def _fmod(m: _Math, x, y):
    ax, ay = m.op(Op.ABS, x), m.op(Op.ABS, y)
    big = m.op(Op.GE, ay, m.c(SCALE, x), dt=BOOL)
    r = m.where(big, m.op(Op.MUL, ax, m.c(1 / SCALE, x)), ax)
    a = m.where(big, m.op(Op.MUL, ay, m.c(1 / SCALE, x)), ay)
    tiny = m.op(Op.LT, a, m.c(1 / SCALE, x), dt=BOOL)  # subnormals: the exponent of a * 2**64, less 64
    e = _exponent(m, m.where(tiny, m.op(Op.MUL, a, m.c(SCALE, x)), a))
    ea = m.op(Op.ADD, m.where(tiny, m.op(Op.SUB, e, _int(m, 64)), e), _int(m, QUOTIENT_BITS - 1))
    info = ml_dtypes.finfo(m.dt.np)
    span = info.maxexp - info.minexp + info.nmant - 1  # binades from the largest finite to the smallest subnormal

    def reduce(r, span=span, halve=info.maxexp > 126):
        while span > QUOTIENT_BITS - 1:  # each step takes 23 binades off the exponent difference
            r = _reduce_step(m, r, a, ea, span - (QUOTIENT_BITS - 1), halve)
            span, halve = span - (QUOTIENT_BITS - 1), False
        return r
    wide = m.op(Op.SUB, _exponent(m, r), ea)  # > 0 where one step does not do
    most = m.r.op(Op.MAX, Type(I32), (wide,), (("axis", None), ("keep_dims", False)), m.loc)
    r = _if(m, m.r.op(Op.GT, Type(BOOL), (most, _int(m, 0)), (), m.loc), reduce, r)
    rem = _remainder(m, r, a)
    rem = m.where(big, m.op(Op.MUL, rem, m.c(SCALE, x)), rem)
    signed = m.r.value(rem.type)
    _copysign(_Math(m.r, signed, m.loc), rem, x)  # a zero takes the sign of x
    rem = m.where(m.op(Op.LT, ax, ay, dt=BOOL), x, signed)  # |y| infinite included
    invalid = m.op(Op.OR, m.op(Op.EQ, ax, m.c(math.inf, x), dt=BOOL), m.op(Op.EQ, ay, m.c(0.0, x), dt=BOOL))
    zero = m.op(Op.SUB, a, a)
    rem = m.where(invalid, m.op(Op.DIV, zero, zero), rem)  # the default NaN, as the host's fmod
    m.where(_either_nan(m, x, y), m.op(Op.ADD, x, y), rem, result=m.v)


def _if(m: _Math, cond, build, x):
    """``build(x)`` where scalar ``cond`` holds, else ``x`` (a runtime ``if`` around the ops it emits)."""
    saved, m.r.out = m.r.out, []
    y = build(x)
    then = Block((), (*m.r.out, Instr(Op.YIELD, (), (y,), (), (), m.loc)))
    m.r.out, v = saved, m.r.value(x.type)
    orelse = Block((), (Instr(Op.YIELD, (), (x,), (), (), m.loc),))
    m.r.out.append(Instr(Op.IF, (v,), (cond,), (), (then, orelse), m.loc))
    return v


def _exponent(m: _Math, a):
    """The biased exponent field of float32 ``a >= 0`` (int32; 0 for subnormals)."""
    return m.op(Op.SHR, _bits(m, a), _int(m, 23))


def _pow2(m: _Math, j):
    """``2**j`` (float32) of int32 ``j`` in [-126, 127]."""
    return m.op(Op.BITCAST, m.op(Op.SHL, m.op(Op.ADD, j, _int(m, 127)), _int(m, 23)), dt=F32)


def _reduce_step(m: _Math, r, a, ea, most: int, halve: bool):
    """``fmod(r, s)`` with ``s = a * 2**j`` (a multiple of ``a``, so ``fmod(r, a)`` is unchanged), ``j`` the
    exponent difference less 23 (at most ``most``): the quotient stays under 2**24. Exact powers of two
    (``s >= a``, two factors where ``j`` may exceed 127); ``halve``: the first step of a float32, where
    ``r >= 2**126`` is halved with ``s`` so ``q * s`` cannot round to infinity."""
    j = m.op(Op.MAXIMUM, m.op(Op.SUB, _exponent(m, r), ea), _int(m, 0))
    if most > 127:
        j1 = m.op(Op.MINIMUM, j, _int(m, 127))
        s = m.op(Op.MUL, m.op(Op.MUL, a, _pow2(m, j1)), _pow2(m, m.op(Op.SUB, j, j1)))
    else:
        s = m.op(Op.MUL, a, _pow2(m, j))
    if not halve:
        return _remainder(m, r, s)
    high = m.op(Op.GE, r, m.c(2.0 ** 126, r), dt=BOOL)
    rem = _remainder(m, m.where(high, m.op(Op.MUL, r, m.c(0.5, r)), r), m.where(high, m.op(Op.MUL, s, m.c(0.5, r)), s))
    return m.where(high, m.op(Op.ADD, rem, rem), rem)


def _remainder(m: _Math, r, s):
    """``fmod(r, s)`` of ``r >= 0`` and ``s > 0`` where ``r / s < 2**24``, exactly: ``r - q * s`` with
    ``q = trunc(r / s)``, ``q * s == p + err`` (Dekker's product of Veltkamp halves: the A2 vector unit has no
    fused multiply-add), ``s`` added back where ``r / s`` rounded up to the next integer."""
    q = m.op(Op.TRUNC, m.op(Op.DIV, r, s))
    p = m.op(Op.MUL, q, s)
    (qh, ql), (sh, sl) = _halves(m, q), _halves(m, s)
    err = m.op(Op.ADD, m.op(Op.ADD, m.op(Op.ADD, m.op(Op.SUB, m.op(Op.MUL, qh, sh), p), m.op(Op.MUL, qh, sl)),
                                     m.op(Op.MUL, ql, sh)), m.op(Op.MUL, ql, sl))
    rem = m.op(Op.SUB, m.op(Op.SUB, r, p), err)
    return m.where(m.op(Op.LT, rem, m.c(0.0, r), dt=BOOL), m.op(Op.ADD, rem, s), rem)


def _either_nan(m: _Math, x, y):
    return m.op(Op.OR, m.op(Op.NE, x, x, dt=BOOL), m.op(Op.NE, y, y, dt=BOOL))


def _atan2(m: _Math, y, x):
    ax, ay = m.op(Op.ABS, x), m.op(Op.ABS, y)
    big, small = m.op(Op.MAXIMUM, ax, ay), m.op(Op.MINIMUM, ax, ay)
    t = m.op(Op.ATAN, m.op(Op.DIV, small, big))
    t = m.where(m.op(Op.GT, ay, ax, dt=BOOL), m.op(Op.SUB, m.c(math.pi / 2, x), t), t)
    t = m.where(m.op(Op.EQ, big, m.c(0.0, x), dt=BOOL), m.c(0.0, x), t)
    t = m.where(m.op(Op.EQ, small, m.c(math.inf, x), dt=BOOL), m.c(math.pi / 4, x), t)
    t = m.where(m.op(Op.SIGNBIT, x, dt=BOOL), m.op(Op.SUB, m.c(math.pi, x), t), t)
    signed = m.r.value(t.type)
    _copysign(_Math(m.r, signed, m.loc), t, y)
    m.where(_either_nan(m, x, y), m.op(Op.ADD, x, y), signed, result=m.v)


def _hypot(m: _Math, x, y):
    ax, ay = m.op(Op.ABS, x), m.op(Op.ABS, y)
    big, small = m.op(Op.MAXIMUM, ax, ay), m.op(Op.MINIMUM, ax, ay)
    ratio = m.op(Op.DIV, small, big)
    h = m.op(Op.MUL, big, m.op(Op.SQRT, m.op(Op.ADD, m.op(Op.MUL, ratio, ratio), m.c(1.0, x))))
    h = m.where(m.op(Op.EQ, big, m.c(0.0, x), dt=BOOL), m.c(0.0, x), h)
    h = m.where(_either_nan(m, x, y), m.op(Op.ADD, x, y), h)
    inf = m.c(math.inf, x)
    either = m.op(Op.OR, m.op(Op.EQ, ax, inf, dt=BOOL), m.op(Op.EQ, ay, inf, dt=BOOL))
    m.where(either, inf, h, result=m.v)


RULES = {Op.ISNAN: _isnan, Op.ISINF: _isinf, Op.ISFINITE: _isfinite, Op.SIGNBIT: _signbit, Op.FMA: _fma,
         Op.LOG1P: _log1p, Op.EXPM1: _expm1, Op.CBRT: _cbrt, Op.COPYSIGN: _copysign, Op.NEXTAFTER: _nextafter,
         Op.ATAN2: _atan2, Op.HYPOT: _hypot, Op.MOD: _fmod}
BINARY = frozenset({Op.COPYSIGN, Op.NEXTAFTER, Op.ATAN2, Op.HYPOT, Op.MOD})


def select(sel, instr: Instr) -> list | None:
    """``pow`` and ``bitcast`` (a :data:`.select.RULES` rule), else None."""
    if instr.op is Op.BITCAST and not instr.result.type.is_scalar:
        (x,) = instr.operands
        dt = cpp_dtype(instr.result.type.dtype)
        src = sel.ref(x, dt)
        return [copy_blocks(sel, sel.ref(instr.result), src, instr.loc)]
    if instr.op is not Op.POW or instr.result.type.is_scalar:
        return None
    v = instr.result
    dt, n = v.type.dtype, sel.count(v)
    out, sides = [], []
    for x in instr.operands:  # a scalar side is Duplicate'd: the call lists tensors before its sharedTmpBuffer
        if x.type.is_scalar:
            side = sel.scratch("powerScalar", dt, n, instr.loc)
            out.append(Call("Duplicate", side, (), (sel.scalar_as(x, dt), lit(n)), loc=None if out else instr.loc))
            sides.append(side)
        else:
            sides.append(sel.ref(x))
    work = sel.scratch("powerTmp", dtypes.uint8, (1 + isel.POWER_TMP_SLICES[dt]) * isel.MATH_TMP_SLICE, instr.loc)
    return out + [Call("Power", sel.ref(v), tuple(sides), (lit(n),), work=(work,), loc=None if out else instr.loc)]


__all__ = ["rewrite", "select"]
