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
  rounded once. ``maximum``/``minimum`` propagate NaN. ``tanh``, ``erf``, ``sin``, ``cos``, ``log2`` and
  ``power`` are evaluated in float64 and rounded once to float32; ``floor``/``ceil``/``trunc`` are exact.
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
* **Poison.** A masked load without ``other`` reads the all-ones bit pattern (NaN for floats, -1 for
  signed integers, True for bool), as the simulator poisons undefined memory.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

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
    Op.EXP: np.exp,
    Op.LOG: np.log,
    Op.SQRT: np.sqrt,
    Op.RSQRT: lambda x: 1 / np.sqrt(x),
    Op.ABS: np.abs,
    Op.SIGMOID: lambda x: 1 / (1 + np.exp(-x)),
    Op.WHERE: np.where,
    Op.PTR_ADD: np.add,
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


__all__ = ["NP_FOR_OP", "REDUCE_FOR_OP", "cast", "elementwise", "np_dtype", "poison", "reduce", "widen"]
