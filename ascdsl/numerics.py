"""The numerics rules of the tile IR: how every elementwise op, cast and reduction computes and rounds.

The interpreter applies these functions to NumPy arrays; the Ascend C backend emits the same
roundings (the ``Cast``s it inserts around 16-bit float math follow the same rules), so both give
the same bits except where the dtype table grants a tolerance (transcendental functions, and the
summation order of float reductions).

* **Floats.** Every float op is computed in float32 and its result rounded to the result dtype (round
  to nearest even) after every op: float16/bfloat16 operands are widened to float32 (exactly) first.
  For ``+ - * /`` and ``sqrt`` this is the correctly rounded IEEE result of the 16-bit type, because
  float32 carries more than twice their precision; so bf16 ``2.5 + 2.0 == 4.5``.
  ``rsqrt(x) = 1 / sqrt(x)`` and ``sigmoid(x) = 1 / (1 + exp(-x))`` are evaluated in float32 and
  rounded once. ``maximum``/``minimum`` propagate NaN. ``tanh``, ``erf``, ``sin``, ``cos``, ``log2``,
  ``cbrt`` and ``power`` are evaluated in float64 and rounded once to float32; ``floor``/``ceil``/``trunc`` are exact.
* **Integers** wrap around in their dtype (two's complement). ``idiv`` and ``mod`` truncate toward zero
  like C (``a == idiv(a, b) * b + mod(a, b)``; the same rule on floats); integer division by zero is
  undefined behaviour and gives 0 here. ``and``/``or``/``xor``/``not`` are bitwise on integers and
  logical on bool. Comparisons give bool.
* **Casts.** float -> int truncates toward zero, saturating at the integer range (NaN -> 0).
  Casts to float16/bfloat16 go through float32, i.e. the value is first rounded to float32 and then
  to the 16-bit type (round to nearest even both times, as the hardware's two ``Cast``s do; only
  integers above 2**24 in magnitude can round differently from a single rounding). Any -> bool is
  ``x != 0``.
* **Reductions.** ``sum`` accumulates floats in float32 (integers in the result dtype, wrapping) and
  rounds once to the result dtype. ``max``/``min`` are exact (NaN propagates); ``argmax``/``argmin``
  return the lowest index among equal values (int32).
* **Math** (``floor`` ... ``erf``, ``pow``, ``atan2``...) is NumPy's float32 function of the widened
  operands, rounded to the dtype; ``round`` rounds halves away from zero, ``rint`` to even; ``fma``
  is computed in float64 and rounded once to float32 (then to the dtype). ``erf`` is a rational
  approximation within 2 float32 ulps. ``umulhi`` is the high half of the product of the operands'
  bit patterns as unsigned integers; ``shr`` is arithmetic on signed and logical on unsigned dtypes.
  ``bitcast`` reinterprets the bits in a dtype of the same size.
* **Combine functions** (``tl.reduce``, ``tl.associative_scan``) are applied to neighbours in log
  depth, in order; one that is a single ``+ * max min & | ^`` of its arguments (``cumsum``, ``xor_sum``)
  folds left to right instead (the same result up to the float summation order, within the tolerance;
  16-bit floats always take the log-depth path, rounding every step).
* **Masked lanes.** A masked load gives ``other`` in its masked lanes; without ``other`` it gives 0
  (False for bool), on both backends, as Triton's backends do (the frontend writes ``other=0`` into the
  IR). Checking mode (``debug=True`` on ``@jit`` or at launch) leaves those lanes undefined instead: the
  load carries no ``other`` and the interpreter reads :func:`poison` (the all-ones bit pattern: a NaN for
  floats that float arithmetic carries on and that no float operation makes of ordinary operands, -1
  for signed integers, True for bool), and a store of a float lane holding it is an
  :class:`ascdsl.PoisonError` at the store's line. In the IR a load without ``other`` has undefined
  masked lanes (the interpreter poisons them; the generated code leaves what UB held).
* **Python literals** next to a tile take the tile's dtype when they fit it; an int that does not fit
  keeps its own dtype (int32, or int64 past int32), so the operation widens (``x_i32 < 2**40`` compares
  in int64, ``x_u8 + 300`` adds in int32), except in ``& | ^``, where a bit pattern of the tile's width
  (``x_i32 ^ 0xFFFFFFFF``) is those bits in the tile's dtype, as Triton casts its unsigned constant.
* **Floats in ``%`` and ``//``**: ``%`` is ``fmod`` (as ``tl.fmod``: the sign of the dividend, Triton's
  ``frem``), ``//`` is ``floor(a / b)`` with the quotient rounded first. ``+`` and ``*`` of bools are
  ``|`` and ``&`` (NumPy's and PyTorch's rule).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .dtypes import PointerType, bfloat16, float16, float32
from .ir.core import ElemType, Op

POINTER = np.dtype(np.int64)  # pointer values are int64 addresses (see ascdsl.interpreter)
F32 = float32.np
NARROW = frozenset({float16.np, bfloat16.np})  # computed in float32, rounded back after every op


def np_dtype(t: ElemType) -> np.dtype:
    """The NumPy dtype that holds values of IR element type ``t``."""
    return POINTER if isinstance(t, PointerType) else t.np


def widen(x: np.ndarray) -> np.ndarray:
    """``x`` in its compute dtype: float16/bfloat16 become float32 (exactly), others are unchanged."""
    return x.astype(F32) if x.dtype in NARROW else x


def cast(x: np.ndarray, to: np.dtype) -> np.ndarray:
    """Convert ``x`` to dtype ``to`` following the cast rules above."""
    x = widen(x)
    if to.kind in "iu" and x.dtype.kind == "f":
        info = np.iinfo(to)
        inside = np.nan_to_num(np.maximum(x, info.min), nan=0.0, posinf=0.0).astype(to)
        return np.where(x >= info.max, to.type(info.max), inside)
    if to in NARROW:
        x = x.astype(F32)
    return x.astype(to, copy=False)


def poison(dt: np.dtype) -> np.ndarray:
    """The value a masked load without ``other`` yields: all bits set, as a 0-d array of ``dt``."""
    if dt.kind == "b":
        return np.array(True)
    return np.array(-1, dtype=f"i{dt.itemsize}").view(dt)


def _idiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    q = np.floor_divide(a, b)
    return q + ((np.fmod(a, b) != 0) & ((a < 0) != (b < 0))).astype(q.dtype)


def _round_half_away(x: np.ndarray) -> np.ndarray:
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


_ERFC_COEFFS = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807, -1.13520398,
                1.48851587, -0.82215223, 0.17087277)


def _erf(x: np.ndarray) -> np.ndarray:
    """``erf`` in float64: the Maclaurin series below 0.5, the Chebyshev-fitted ``erfc`` of Numerical
    Recipes (relative error < 1.2e-7) above; rounded by the caller."""
    z = np.abs(x.astype(np.float64))
    small = np.zeros_like(z)
    term = z.copy()
    for n in range(1, 16):  # x - x^3/3 + x^5/10 - ...: 15 terms reach 1e-17 below 0.5
        small += term / (2 * n - 1)
        term = -term * z * z / n
    t = 1 / (1 + 0.5 * z)
    poly = np.zeros_like(z)
    for c in reversed(_ERFC_COEFFS[1:]):
        poly = (poly + c) * t
    large = 1 - t * np.exp(-z * z + _ERFC_COEFFS[0] + poly)
    return np.copysign(np.where(z < 0.5, small * (2 / np.sqrt(np.pi)), large), x)


def _erfc(x: np.ndarray) -> np.ndarray:
    """``erfc`` in float64: ``1 - erf`` below 0.5 (no cancellation there), the Chebyshev fit of
    :func:`_erf` itself above (relative error < 1.2e-7 even where erfc underflows erf's precision),
    ``2 - erfc(-x)`` for negative ``x``."""
    z = np.abs(x.astype(np.float64))
    t = 1 / (1 + 0.5 * z)
    poly = np.zeros_like(z)
    for c in reversed(_ERFC_COEFFS[1:]):
        poly = (poly + c) * t
    tail = np.where(z < 0.5, 1 - _erf(z), t * np.exp(-z * z + _ERFC_COEFFS[0] + poly))
    return np.where(np.signbit(x), 2 - tail, tail)


def _umulhi(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    bits = a.dtype.itemsize * 8
    unsigned = np.dtype(f"u{a.dtype.itemsize}")
    a, b = a.view(unsigned) if a.dtype != unsigned else a, b.view(unsigned) if b.dtype != unsigned else b
    if bits <= 32:
        product = a.astype(np.uint64) * b.astype(np.uint64)
        return (product >> np.uint64(bits)).astype(unsigned)
    mask, half = np.uint64(0xFFFFFFFF), np.uint64(32)  # 64 x 64 bits from four 32 x 32-bit products
    a_lo, a_hi, b_lo, b_hi = a & mask, a >> half, b & mask, b >> half
    cross = (a_lo * b_lo >> half) + (a_hi * b_lo & mask) + (a_lo * b_hi & mask)
    return a_hi * b_hi + (a_hi * b_lo >> half) + (a_lo * b_hi >> half) + (cross >> half)


def _fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    if a.dtype.kind != "f":
        return a * b + c
    return (a.astype(np.float64) * b + c).astype(F32)


def _shift(op):
    def shift(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return op(a, b.astype(a.dtype))
    return shift


@dataclass(frozen=True)
class Builtin:
    """One math builtin ``tl.<op.value>`` (also ``tl.math.<op.value>``): the language's stub takes ``params``
    and reads ``doc``; the interpreter computes ``numpy`` on the operands in their compute dtype and rounds
    the result to the dtype; ``libdevice`` also names it. The backend lowers ``op`` by
    :data:`.backend.selection.isel` or expands it in :mod:`.backend.expand.mathops`; which family ``op`` is in
    (:class:`.ir.core.GroupOp`) decides the frontend's handler and the dtypes it takes."""

    op: Op
    numpy: Callable[..., np.ndarray]
    doc: str
    params: tuple[str, ...] = ("x",)
    libdevice: bool = True


_XY, _XYZ = ("x", "y"), ("x", "y", "z")

MATH: tuple[Builtin, ...] = (
    Builtin(Op.EXP, np.exp, "Elementwise e**x of a float tile."),
    Builtin(Op.LOG, np.log, "Elementwise natural logarithm of a float tile."),
    Builtin(Op.SQRT, np.sqrt, "Elementwise square root of a float tile."),
    Builtin(Op.RSQRT, lambda x: 1 / np.sqrt(x), "Elementwise 1 / sqrt(x) of a float tile."),
    Builtin(Op.ABS, np.abs, "Elementwise absolute value."),
    Builtin(Op.SIGMOID, lambda x: 1 / (1 + np.exp(-x)), "Elementwise 1 / (1 + exp(-x)) of a float tile.",
            libdevice=False),
    Builtin(Op.FLOOR, np.floor, "Elementwise largest integer not greater than ``x`` (float tiles)."),
    Builtin(Op.CEIL, np.ceil, "Elementwise smallest integer not less than ``x`` (float tiles)."),
    Builtin(Op.TRUNC, np.trunc, "Elementwise ``x`` rounded toward zero (float tiles)."),
    Builtin(Op.ROUND, _round_half_away, "Elementwise ``x`` rounded to the nearest integer, halves away from zero."),
    Builtin(Op.RINT, np.rint, "Elementwise ``x`` rounded to the nearest integer, halves to even."),
    Builtin(Op.EXP2, np.exp2, "Elementwise ``2 ** x``."),
    Builtin(Op.LOG2, np.log2, "Elementwise base-2 logarithm."),
    Builtin(Op.LOG10, np.log10, "Elementwise base-10 logarithm."),
    Builtin(Op.LOG1P, np.log1p, "Elementwise ``log(1 + x)``, accurate for small ``x``."),
    Builtin(Op.EXPM1, np.expm1, "Elementwise ``exp(x) - 1``, accurate for small ``x``."),
    Builtin(Op.SIN, np.sin, "Elementwise sine."),
    Builtin(Op.COS, np.cos, "Elementwise cosine."),
    Builtin(Op.TAN, np.tan, "Elementwise tangent."),
    Builtin(Op.TANH, np.tanh, "Elementwise hyperbolic tangent."),
    Builtin(Op.SINH, np.sinh, "Elementwise hyperbolic sine."),
    Builtin(Op.COSH, np.cosh, "Elementwise hyperbolic cosine."),
    Builtin(Op.ASIN, np.arcsin, "Elementwise arc sine."),
    Builtin(Op.ACOS, np.arccos, "Elementwise arc cosine."),
    Builtin(Op.ATAN, np.arctan, "Elementwise arc tangent."),
    Builtin(Op.ERF, _erf, "Elementwise error function."),
    Builtin(Op.ERFC, _erfc,
            "Elementwise complementary error function ``1 - erf(x)``, accurate where erf is near 1."),
    Builtin(Op.CBRT, lambda x: _in_float64(np.cbrt, x), "Elementwise real cube root (the sign of ``x``)."),
    Builtin(Op.ASINH, np.arcsinh, "Elementwise inverse hyperbolic sine."),
    Builtin(Op.ACOSH, np.arccosh, "Elementwise inverse hyperbolic cosine."),
    Builtin(Op.ATANH, np.arctanh, "Elementwise inverse hyperbolic tangent."),
    Builtin(Op.ISNAN, np.isnan, "Elementwise ``x != x`` as a bool tile."),
    Builtin(Op.ISINF, np.isinf, "Elementwise ``x`` is +-infinity, as a bool tile."),
    Builtin(Op.ISFINITE, np.isfinite, "Elementwise ``x`` is neither infinite nor NaN, as a bool tile."),
    Builtin(Op.SIGNBIT, np.signbit, "Elementwise sign bit of ``x`` (True for -0.0 and negatives), as a bool tile."),
    Builtin(Op.POW, np.power, "Elementwise ``x ** y`` of floats.", params=_XY),
    Builtin(Op.ATAN2, np.arctan2, "Elementwise arc tangent of ``x / y`` in the quadrant of ``(y, x)``.",
            params=_XY),
    Builtin(Op.COPYSIGN, np.copysign, "Elementwise magnitude of ``x`` with the sign of ``y``.", params=_XY),
    Builtin(Op.HYPOT, np.hypot, "Elementwise ``sqrt(x * x + y * y)`` without overflow.", params=_XY),
    Builtin(Op.NEXTAFTER, np.nextafter, "Elementwise the next float after ``x`` in the direction of ``y``.",
            params=_XY),
    Builtin(Op.UMULHI, _umulhi, "Elementwise high half of the unsigned product of two int tiles (bits as unsigned).",
            params=_XY, libdevice=False),
    Builtin(Op.FMA, _fma, "Elementwise ``x * y + z`` with one rounding.", params=_XYZ),
)
"""The math builtins: adding a row (with its ``Op`` and, where the vector unit has no instruction for it, an
expansion) adds the builtin to the language, the interpreter, ``libdevice`` and ``docs/language.md``."""

NP_FOR_OP: dict[Op, Callable[..., np.ndarray]] = {
    Op.ADD: np.add,
    Op.SUB: np.subtract,
    Op.MUL: np.multiply,
    Op.DIV: np.true_divide,
    Op.IDIV: _idiv,
    Op.MOD: np.fmod,
    Op.MAXIMUM: np.maximum,
    Op.MINIMUM: np.minimum,
    Op.LT: np.less,
    Op.LE: np.less_equal,
    Op.GT: np.greater,
    Op.GE: np.greater_equal,
    Op.EQ: np.equal,
    Op.NE: np.not_equal,
    Op.AND: np.bitwise_and,
    Op.OR: np.bitwise_or,
    Op.XOR: np.bitwise_xor,
    Op.NEG: np.negative,
    Op.NOT: np.invert,
    Op.WHERE: np.where,
    Op.PTR_ADD: np.add,
    Op.SHL: _shift(np.left_shift),
    Op.SHR: _shift(np.right_shift),
    **{b.op: b.numpy for b in MATH},
}
"""NumPy implementation of each elementwise op (``cast`` has its own rules: :func:`cast`)."""


def _in_float64(fn: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    """``fn`` evaluated in float64 on ``x`` widened to float32, rounded once to float32 (as the simulator's
    high-level math APIs compute: the double-precision C function rounded to float)."""
    return np.asarray(fn(widen(np.asarray(x)).astype(F32).astype(np.float64)), dtype=np.float64).astype(F32)


_erf = np.frompyfunc(math.erf, 1, 1)


def tanh(x: np.ndarray) -> np.ndarray:
    """Hyperbolic tangent in float32 (Ascend C ``Tanh``)."""
    return _in_float64(np.tanh, x)


def erf(x: np.ndarray) -> np.ndarray:
    """Error function in float32 (Ascend C ``Erf``)."""
    return _in_float64(lambda v: _erf(v).astype(np.float64), x)


def sin(x: np.ndarray) -> np.ndarray:
    """Sine in float32 (Ascend C ``Sin``)."""
    return _in_float64(np.sin, x)


def cos(x: np.ndarray) -> np.ndarray:
    """Cosine in float32 (Ascend C ``Cos``)."""
    return _in_float64(np.cos, x)


def log2(x: np.ndarray) -> np.ndarray:
    """Base-2 logarithm in float32 (Ascend C ``Log2``)."""
    return _in_float64(np.log2, x)


def power(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x ** y in float32 (Ascend C ``Power``)."""
    return _in_float64(lambda v: np.power(v, widen(np.asarray(y)).astype(F32).astype(np.float64)), x)


def floor(x: np.ndarray) -> np.ndarray:
    """Round toward -inf, exact in float32 (Ascend C ``Cast`` float -> float with ``CAST_FLOOR``)."""
    return np.floor(widen(np.asarray(x)).astype(F32))


def ceil(x: np.ndarray) -> np.ndarray:
    """Round toward +inf, exact in float32 (``Cast`` float -> float with ``CAST_CEIL``)."""
    return np.ceil(widen(np.asarray(x)).astype(F32))


def trunc(x: np.ndarray) -> np.ndarray:
    """Round toward zero, exact in float32 (``Cast`` float -> float with ``CAST_TRUNC``)."""
    return np.trunc(widen(np.asarray(x)).astype(F32))


def elementwise(op: Op, operands: Sequence[np.ndarray], to: np.dtype) -> np.ndarray:
    """Apply elementwise ``op`` in the compute dtype and round the result to ``to``."""
    if op is Op.CAST:
        return cast(operands[0], to)
    if op is Op.BITCAST:
        return operands[0].view(to)
    return NP_FOR_OP[op](*map(widen, operands)).astype(to, copy=False)


def _sum(x: np.ndarray, axes: tuple[int, ...], to: np.dtype) -> np.ndarray:
    return np.sum(x, axis=axes, dtype=F32 if to.kind == "f" or to in NARROW else to)  # bf16's kind is "V"


def _arg(find: Callable[..., np.ndarray]):
    def reduce(x: np.ndarray, axes: tuple[int, ...], to: np.dtype) -> np.ndarray:
        x = np.moveaxis(widen(x), axes, tuple(range(-len(axes), 0)))
        return find(x.reshape(x.shape[: x.ndim - len(axes)] + (-1,)), axis=-1)
    return reduce


REDUCE_FOR_OP: dict[Op, Callable[[np.ndarray, tuple[int, ...], np.dtype], np.ndarray]] = {
    Op.SUM: _sum,
    Op.MAX: lambda x, axes, to: np.max(widen(x), axis=axes),
    Op.MIN: lambda x, axes, to: np.min(widen(x), axis=axes),
    Op.ARGMAX: _arg(np.argmax),
    Op.ARGMIN: _arg(np.argmin),
}


def reduce(op: Op, x: np.ndarray, axes: tuple[int, ...], to: np.dtype) -> np.ndarray:
    """Reduce ``x`` over ``axes`` with ``op`` and round the result once to ``to``."""
    return REDUCE_FOR_OP[op](x, axes, to).astype(to, copy=False)


__all__ = ["MATH", "NP_FOR_OP", "REDUCE_FOR_OP", "Builtin", "cast", "elementwise", "np_dtype", "poison", "reduce",
           "widen"]
