"""Typed IR emission: literals, casts, broadcasts and operations, following :mod:`ascdsl.semantics`.

Operands are IR values or Python literals (weakly typed). Elementwise operands are cast to the
operand dtype and broadcast to the result shape; scalars (shape ``()``) stay scalars. A tile of
lower rank first gets leading unit axes (``expand_dims``), so ``broadcast`` only stretches unit
axes or splats a scalar.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from .. import dtypes, semantics
from ..dtypes import DType, PointerType
from ..errors import UNKNOWN
from ..ir import Builder, GroupOp, Op, Type, Value
from ..ir.symbol import Poly
from ..semantics import Literal, SemanticError, fits


def _wide_literal(em: "Emitter", op: Op, x, partner):
    """A Python int that does not fit the int dtype of the value it meets: in ``& | ^`` a bit pattern of
    that dtype's width (``x ^ 0xFFFFFFFF`` on int32) is those bits in the dtype (-1), as Triton casts
    its unsigned constant; anywhere else the literal keeps its own dtype (int64 for ``2**40``, int32 for
    ``300`` next to uint8), so the operation widens and computes the exact value."""
    if not (isinstance(x, int) and not isinstance(x, bool) and isinstance(partner, Value)):
        return x
    dt = partner.type.dtype
    if not isinstance(dt, DType) or not dt.is_int or semantics.fits(x, dt):
        return x
    if op in GroupOp.LOGICAL and 0 <= x < 2 ** dt.bits:
        return x - 2 ** dt.bits if dt.kind == "int" and x >= 2 ** (dt.bits - 1) else x
    wide = semantics.literal_dtype(x)
    if not semantics.fits(x, wide):
        raise SemanticError(f"the literal {x} does not fit in 64 bits", "kernel integers are at most 64 bits wide")
    return em.const(x, wide)


def is_constexpr(x: Any) -> bool:
    """Whether ``x`` is known at compile time (no part of it is an IR value)."""
    if isinstance(x, tuple):
        return all(map(is_constexpr, x))
    return not isinstance(x, Value)


def describe(x: Any) -> str:
    """How a frontend value reads in a message: ``tile<128xf32>``, ``i32 scalar``, ``3``, ``tl.float32``,
    ``(i32 scalar, 4)`` (never the repr of an IR object)."""
    if isinstance(x, Value):
        return f"{x.type} scalar" if x.type.is_scalar else str(x.type)
    if isinstance(x, DType):
        return f"tl.{x.name}"
    if isinstance(x, PointerType):
        return str(x)
    if type(x) in (tuple, list):
        items = ", ".join(map(describe, x))
        return f"[{items}]" if isinstance(x, list) else f"({items},)" if len(x) == 1 else f"({items})"
    return repr(x)


def _dtype(x):
    if isinstance(x, Value):
        return x.type.dtype
    if isinstance(x, Literal):
        return x
    raise SemanticError(f"expected a tile, a scalar or a number, got {describe(x)}",
                        "operators work on tiles, scalars and numbers")


def _shape(x) -> tuple[int, ...]:
    return x.type.shape if isinstance(x, Value) else ()


MAX_TILE_ELEMENTS = 1 << 24
"""The largest tile (elements) a kernel may build: a bound that keeps a typo from allocating gigabytes."""


def _constant(value, dtype: DType):
    """``value`` as the Python number (or, for an integer ``dtype``, the :class:`Poly` of run-time tile
    extents) a ``const`` of ``dtype`` holds; an error if it has none."""
    if isinstance(value, Poly) and dtype.is_int and fits(value, dtype):
        return value
    if not isinstance(value, (bool, int, float, np.number, np.bool_)):
        raise SemanticError(f"expected a number for a {dtype} constant, got {describe(value)}",
                            "pass an int, a float or a bool")
    if dtype.is_float:
        return float(value)
    if dtype.kind == "bool":
        return bool(value)
    if isinstance(value, (float, np.floating)) and not math.isfinite(value):
        raise SemanticError(f"{value} has no {dtype} value", "integer constants must be finite")
    info = np.iinfo(dtype.np)
    if not info.min <= int(value) <= info.max:
        raise SemanticError(f"{value} does not fit {dtype} (range [{info.min}, {info.max}])",
                            "use a wider integer dtype, or a smaller constant")
    return int(value)


class Emitter:
    """Appends typed instructions to a :class:`Builder`; ``loc`` is stamped on each of them.

    ``debug`` turns ``tl.device_assert`` into checks; ``call(func, args, kwargs)`` is set by the code
    generator, for builtins that call kernel functions (``tl.reduce``'s ``combine_fn``)."""

    def __init__(self, builder: Builder, debug: bool = False):
        self.b = builder
        self.loc = UNKNOWN
        self.debug = debug
        self.call: Callable | None = None

    def op(self, op: Op, type: Type, operands: Sequence[Value] = (), attrs=()) -> Value:
        if type.numel > MAX_TILE_ELEMENTS:
            raise SemanticError(f"a tile of shape {type.shape} has {type.numel} elements, more than the "
                                f"{MAX_TILE_ELEMENTS} a tile may have", "split the work into smaller blocks")
        return self.b.one(op, type, operands, attrs, self.loc)

    def const(self, value, dtype: DType, shape: tuple[int, ...] = ()) -> Value:
        return self.op(Op.CONST, Type(dtype, tuple(shape)), attrs=[("value", _constant(value, dtype))])

    def value(self, x, dtype) -> Value:
        """``x`` (a value or a literal) as a value of ``dtype``."""
        return self.cast(x, dtype) if isinstance(x, Value) else self.const(x, dtype)

    def cast(self, v: Value, dtype) -> Value:
        if v.type.dtype == dtype:
            return v
        if isinstance(dtype, PointerType) or isinstance(v.type.dtype, PointerType):
            raise SemanticError(f"cannot cast {describe(v)} to {dtype}",
                                "pointers change only through pointer arithmetic")
        return self.op(Op.CAST, v.type.with_dtype(dtype), [v], [("dtype", dtype)])

    def expand_dims(self, v: Value, axis: int) -> Value:
        shape = v.type.shape[:axis] + (1,) + v.type.shape[axis:]
        if v.type.is_scalar:  # pid[None, None]: the scalar as a tile of one element
            return self.op(Op.BROADCAST, v.type.with_shape(shape), [v])
        return self.op(Op.EXPAND_DIMS, v.type.with_shape(shape), [v], [("axis", axis)])

    def broadcast(self, v: Value, shape: tuple[int, ...]) -> Value:
        if not v.type.is_scalar:
            while len(v.type.shape) < len(shape):
                v = self.expand_dims(v, 0)
        if v.type.shape == shape:
            return v
        return self.op(Op.BROADCAST, v.type.with_shape(shape), [v])

    def elementwise(self, op: Op, operands: Sequence[tuple[Any, Any]], result) -> Value:
        """Emit ``op`` on ``(operand, dtype)`` pairs: cast each operand, broadcast tiles."""
        shape = semantics.broadcast_shapes(*(_shape(x) for x, _ in operands))
        values = [self.value(x, dtype) for x, dtype in operands]
        values = [v if v.type.is_scalar else self.broadcast(v, shape) for v in values]
        return self.op(op, Type(result, shape), values)

    def binary(self, op: Op, a, b) -> Value:
        if isinstance(a, Literal) and isinstance(b, Literal):  # tl.maximum(0, BLOCK): a scalar of a's type
            a = self.const(a, semantics.literal_dtype(a))
        a, b = _wide_literal(self, op, a, b), _wide_literal(self, op, b, a)
        da, db = _dtype(a), _dtype(b)
        if op in (Op.ADD, Op.SUB) and isinstance(da, PointerType) and not isinstance(db, PointerType):
            return self.ptr_add(a, b if op == Op.ADD else self.unary(Op.NEG, b))
        if op == Op.ADD and isinstance(db, PointerType):
            return self.ptr_add(b, a)
        try:
            operand, result = semantics.binary_types(op, da, db)
        except SemanticError:
            alternative = self._alternative(op, a, b, da, db)
            if alternative is None:
                raise
            return alternative
        return self.elementwise(op, [(a, operand), (b, operand)], result)

    def _alternative(self, op: Op, a, b, da, db) -> Value | None:
        """What Triton gives where the plain rule refuses: ``%`` of floats is C's fmod (``tl.fmod``, as
        Triton's ``frem``), ``//`` of floats is ``floor(a / b)`` (Python's rule); ``+`` and ``*`` of
        bools are ``|`` and ``&`` (NumPy's and PyTorch's rule). None for anything else."""
        if isinstance(da, PointerType) or isinstance(db, PointerType):
            return None
        da = semantics.weak_dtype(a, db) if isinstance(a, Literal) else da
        db = semantics.weak_dtype(b, da) if isinstance(b, Literal) else db
        common = semantics.promote(da, db)
        if op is Op.MOD and common.is_float:
            return self.elementwise(Op.MOD, [(a, common), (b, common)], common)
        if op is Op.IDIV and common.is_float:
            return self.unary(Op.FLOOR, self.binary(Op.DIV, a, b))
        if op in (Op.ADD, Op.MUL) and common.kind == "bool":
            return self.binary(Op.OR if op is Op.ADD else Op.AND, a, b)
        return None

    def ptr_add(self, ptr: Value, offset) -> Value:
        offset_dtype = semantics.pointer_offset_type(ptr.type.dtype, _dtype(offset))
        return self.elementwise(Op.PTR_ADD, [(ptr, ptr.type.dtype), (offset, offset_dtype)],
                                ptr.type.dtype)

    def unary(self, op: Op, x) -> Value:
        if isinstance(x, Literal):
            if op == Op.NEG:
                return -x
            x = self.const(x, semantics.literal_dtype(x))
        x = self.value(x, _dtype(x))
        return self.op(op, x.type.with_dtype(semantics.unary_type(op, x.type.dtype)), [x])

    def where(self, condition, a, b) -> Value:
        if _dtype(condition) != dtypes.bool_:
            raise SemanticError(f"the condition of tl.where must be bool, got {describe(condition)}",
                                "compare first, e.g. tl.where(x > 0, x, 0.0)")
        dtype = semantics.select_type(_dtype(a), _dtype(b))
        return self.elementwise(Op.WHERE, [(condition, dtypes.bool_), (a, dtype), (b, dtype)], dtype)

    def reduce(self, op: Op, x, axis, keep_dims: bool, dtype: DType | None = None) -> Value:
        if not isinstance(x, Value) or x.type.is_scalar:
            raise SemanticError(f"tl.{op.value} needs a tile, got {describe(x)}",
                                "reductions work on tiles, not scalars")
        rank = len(x.type.shape)
        axis = None if axis is None else semantics.normalize_axis(axis, rank)
        first, result = semantics.reduce_types(op, x.type.dtype, dtype)
        shape = semantics.reduce_shape(x.type.shape, axis, keep_dims)
        return self.op(op, Type(result, shape), [self.cast(x, first)],
                       [("axis", axis), ("keep_dims", keep_dims)])

    def to_bool(self, x: Value) -> Value:
        """A runtime scalar or tile as bool (``x != 0`` unless it is bool already): what ``not``,
        ``and`` and ``or`` apply to, elementwise on tiles as in Triton."""
        return x if x.type.dtype == dtypes.bool_ else self.binary(Op.NE, x, 0)
