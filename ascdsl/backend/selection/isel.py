"""Instruction selection tables: which Ascend C API computes each tile op, and how to round.

Python picks the API from these tables; :mod:`.ascendc` renders the statement. Element types the
vector unit computes natively are float32, float16 and (for + - * max min) int32; bfloat16 math
goes through float32 work buffers (Cast CAST_NONE in, Cast CAST_RINT out), as DESIGN §2 says.
"""
from __future__ import annotations

import math

from ... import dtypes
from ...ir.core import Op

BINARY_API = {Op.ADD: "Add", Op.SUB: "Sub", Op.MUL: "Mul", Op.DIV: "Div", Op.MAXIMUM: "Max",
              Op.MINIMUM: "Min"}
"""Tile-tile ops (count form ``Api(dst, a, b, n)``)."""

SCALAR_API = {Op.ADD: "Adds", Op.MUL: "Muls", Op.MAXIMUM: "Maxs", Op.MINIMUM: "Mins"}
"""Tile-scalar ops with a scalar API (either operand order; they commute)."""

UNARY_API = {Op.EXP: "Exp", Op.LOG: "Ln", Op.SQRT: "Sqrt", Op.ABS: "Abs", Op.RSQRT: "Rsqrt"}

COMPARE_MODE = {Op.LT: "LT", Op.LE: "LE", Op.GT: "GT", Op.GE: "GE", Op.EQ: "EQ", Op.NE: "NE"}
"""Comparisons of float tiles (``Compare`` into a bit mask, only ever a ``where`` condition)."""

MASK_API = {Op.AND: "And", Op.OR: "Or", Op.XOR: "Xor", Op.NOT: "Not"}
"""Logic on bool tiles: their ``Compare`` bit masks viewed as int16 (``Xor`` is the high-level API,
with a 256-byte work buffer)."""

DUPLICATE = frozenset({dtypes.float32, dtypes.float16, dtypes.bfloat16, dtypes.int32, dtypes.int16})
"""Element types ``Duplicate`` fills (A2 has no 1- or 8-byte form)."""
SELECT = frozenset({dtypes.float32, dtypes.float16})
"""Dtypes ``Select`` picks natively; bfloat16 is selected in float32 (exactly) and Cast back."""

CHAINS = {
    Op.SIGMOID: ((Op.NEG, None), (Op.EXP, None), (Op.ADD, 1.0), (Op.DIV, 1.0)),  # 1 / (1 + exp(-x))
    Op.EXP2: ((Op.MUL, math.log(2.0)), (Op.EXP, None)),  # exp(x * ln 2): the vector unit has no Exp2
}
"""Ops computed in float32 as a chain of vector ops on one buffer ``t``, rounded once: ``(op, scalar)``
steps ``t = scalar op t`` (``t = op t`` without a scalar); ``1.0 / t`` divides a Duplicate'd 1.0
(the approximate Reciprocal would not match the interpreter)."""

MATH_API = {Op.TANH: ("Tanh", 2, 1), Op.ERF: ("Erf", 8, 3), Op.SIN: ("Sin", 4, 3), Op.COS: ("Cos", 4, 3),
            Op.LOG2: ("Log2", 1, 0), Op.LOG10: ("Log10", 0, 0), Op.TAN: ("Tan", 10, 4), Op.SINH: ("Sinh", 4, 1),
            Op.COSH: ("Cosh", 6, 2), Op.ASIN: ("Asin", 6, 4), Op.ACOS: ("Acos", 6, 4), Op.ATAN: ("Atan", 6, 5),
            Op.ASINH: ("Asinh", 3, 3), Op.ACOSH: ("Acosh", 2, 1), Op.ATANH: ("Atanh", 4, 1), Op.ERFC: ("Erfc", 12, 5)}
"""High-level math APIs ``Api(dst, src, sharedTmpBuffer, n)`` as ``(api, float16 slices, float32 slices)``:
the sharedTmpBuffer holds that many slices, each at least 256 bytes (CANN 8.1's GetXxxMaxMinTmpSize minimum)
and sized by :func:`.compute._math` to the tile (its maximum); none: no sharedTmpBuffer argument)."""
MATH_TMP_SLICE = 256

POWER_TMP_SLICES = {dtypes.float32: 4, dtypes.float16: 7}
"""``pow`` is the high-level tensor-tensor ``Power(dst, base, exponent, sharedTmpBuffer, n)``; its buffer holds
one 256-byte slice plus this many (CANN 8.1's minimum on A2)."""

ROUNDING_MODE = {Op.FLOOR: "CAST_FLOOR", Op.CEIL: "CAST_CEIL", Op.TRUNC: "CAST_TRUNC", Op.ROUND: "CAST_ROUND",
                 Op.RINT: "CAST_RINT"}
"""Rounding to integral values: ``Cast`` float32 -> float32 in a round mode (exact; ``CAST_ROUND`` rounds
ties away from zero, as Triton's ``round``, ``CAST_RINT`` to even). float16 and bfloat16 round in float32,
where every 16-bit float is exact, so the cast back to 16 bits is exact too."""

REDUCE_API = {Op.SUM: "ReduceSum", Op.MAX: "ReduceMax", Op.MIN: "ReduceMin"}

NATIVE = {
    dtypes.float32: frozenset(BINARY_API) | frozenset(UNARY_API) | frozenset(MATH_API) | frozenset(ROUNDING_MODE)
    | {Op.POW},
    dtypes.float16: frozenset(BINARY_API) | frozenset(UNARY_API) | frozenset(MATH_API) | {Op.POW},
    dtypes.int32: frozenset({Op.ADD, Op.SUB, Op.MUL, Op.MAXIMUM, Op.MINIMUM}),
}
"""Ops the vector unit computes in each dtype; anything else on a float goes through float32."""

CAST_MODE = {
    (dtypes.float16, dtypes.float32): "CAST_NONE",
    (dtypes.bfloat16, dtypes.float32): "CAST_NONE",
    (dtypes.float32, dtypes.float16): "CAST_RINT",
    (dtypes.float32, dtypes.bfloat16): "CAST_RINT",
    (dtypes.int32, dtypes.float32): "CAST_RINT",
    (dtypes.float32, dtypes.int32): "CAST_TRUNC",
    (dtypes.float32, dtypes.int16): "CAST_TRUNC",
    (dtypes.int16, dtypes.float32): "CAST_NONE",
    (dtypes.float16, dtypes.int32): "CAST_TRUNC",
    (dtypes.float16, dtypes.int8): "CAST_TRUNC",
    (dtypes.float16, dtypes.uint8): "CAST_TRUNC",
    (dtypes.int8, dtypes.float16): "CAST_NONE",
    (dtypes.uint8, dtypes.float16): "CAST_NONE",
    (dtypes.int32, dtypes.int64): "CAST_NONE",
    (dtypes.float32, dtypes.int64): "CAST_TRUNC",
    (dtypes.int64, dtypes.float32): "CAST_RINT",
}
"""Direct casts and their round modes (float16 <-> bfloat16 goes through float32)."""
