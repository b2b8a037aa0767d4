"""The typing rules of the language, as pure functions of shapes and dtypes.

* Broadcasting follows NumPy: shapes align on the right; each pair of sizes must be equal or 1.
* Promotion follows Triton: float wins over int; the wider float wins; float16 with bfloat16 gives
  float32; among ints the wider wins (same width: unsigned wins). Python literals are *weak*: next
  to a tile they take its dtype when they fit (``x_f16 * 2.0`` stays float16).
* ``/`` of two ints gives float32; ``//`` and ``%`` are for ints only; comparisons give bool;
  ``& | ^ ~`` are for bool and int tiles.
* Reductions: ``sum`` keeps a float dtype and sums ints in at least int32; ``max``/``min`` of
  float16/bfloat16 give float32; ``argmax``/``argmin`` give int32.

Rule violations raise :class:`SemanticError`; the frontend locates it at the offending node.
"""
from __future__ import annotations

from . import dtypes
from .dtypes import DType, PointerType
from .ir.core import GroupOp, Op
from .ir.symbol import Poly, Undecided

Literal = (bool, int, float, Poly)  # a Poly: an int of run-time tile extents (a symbolic constexpr)


class SemanticError(Exception):
    """A rule violation, not yet located (the frontend adds the source location)."""

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message, self.hint = message, hint


def show_shape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The NumPy broadcast of ``shapes``."""
    result: tuple[int, ...] = ()
    for shape in shapes:
        rank = len(result) if len(result) > len(shape) else len(shape)
        a, b = (1,) * (rank - len(result)) + result, (1,) * (rank - len(shape)) + shape
        if any(x != y and 1 not in (x, y) for x, y in zip(a, b)):
            raise SemanticError(
                f"cannot broadcast shapes {show_shape(result)} and {show_shape(shape)}",
                "make the tiles the same size, or add a unit axis with x[:, None] / x[None, :]")
        result = tuple(y if x == 1 else x for x, y in zip(a, b))
    return result


def literal_dtype(value) -> DType:
    """The dtype of a Python literal on its own: bool, int32 (int64 if it does not fit), float32."""
    if isinstance(value, bool):
        return dtypes.bool_
    if isinstance(value, (int, Poly)):
        return dtypes.int32 if fits(value, dtypes.int32) else dtypes.int64
    return dtypes.float32


def fits(value: int | Poly, dtype: DType) -> bool:
    """Whether ``dtype`` holds ``value`` (a Poly: at every point of its symbols' domains, False at none of
    them, :class:`Undecided` where their bounds do not decide it)."""
    bits = dtype.bits
    lo, hi = (0, 2**bits - 1) if dtype.kind == "uint" else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    if isinstance(value, Poly):
        low, high = value.bounds()
        inside = lo <= low and high <= hi
        if inside or high < lo or low > hi:
            return inside
        raise Undecided(f"the symbols' domains do not decide whether {dtype} holds {value}")
    return lo <= value <= hi


def weak_dtype(value, partner: DType) -> DType:
    """The dtype a Python literal takes next to a tile of ``partner``."""
    if partner.is_float or (partner.is_int and not isinstance(value, float)):
        if partner.is_int and not fits(value, partner):
            raise SemanticError(f"the literal {value} does not fit in {partner}",
                                "cast the tile first, e.g. x.to(tl.int32)")
        return partner
    if partner.kind == "bool" and isinstance(value, bool):
        return partner
    return literal_dtype(value)


def promote(a: DType, b: DType) -> DType:
    """The common dtype of two operands (Triton's rules)."""
    if a == b:
        return a
    if a.is_float and b.is_float:
        if {a, b} == {dtypes.float16, dtypes.bfloat16}:
            return dtypes.float32
        return a if a.itemsize > b.itemsize else b
    if a.is_float or b.is_float:
        return a if a.is_float else b
    if a.kind == "bool" or b.kind == "bool":
        return b if a.kind == "bool" else a
    if a.kind != b.kind:
        unsigned, signed = (a, b) if a.kind == "uint" else (b, a)
        return unsigned if unsigned.bits >= signed.bits else signed
    return a if a.bits > b.bits else b


def _no_pointer(*types) -> None:
    for t in types:
        if isinstance(t, PointerType):
            raise SemanticError(f"this operation is not defined on pointers ({t})",
                                "only `ptr + int offsets` and `ptr - int offsets` are allowed")


def binary_types(op: Op, a, b) -> tuple[DType, DType]:
    """(operand dtype, result dtype) of ``a op b``; ``a``/``b`` are DTypes or Python literals
    (at most one literal)."""
    _no_pointer(a, b)
    a = weak_dtype(a, b) if isinstance(a, Literal) else a
    b = weak_dtype(b, a) if isinstance(b, Literal) else b
    common = promote(a, b)
    symbol = OP_SYMBOLS.get(op, op.value)
    if op in GroupOp.COMPARE:
        return common, dtypes.bool_
    if op in GroupOp.LOGICAL:
        if common.is_float:
            raise SemanticError(f"`{symbol}` needs bool or int operands, got {a} and {b}",
                                "compare first (x > 0) or cast with .to(tl.int32)")
        return common, common
    if common.kind == "bool" and op not in (Op.MAXIMUM, Op.MINIMUM):  # max/min of bools: or/and
        raise SemanticError(f"`{symbol}` is not defined on bool tiles",
                            "cast with .to(tl.int32), or use & | ^ for logic")
    if (op == Op.DIV or op in GroupOp.FLOAT_MATH) and not common.is_float:
        return dtypes.float32, dtypes.float32
    if op in GroupOp.BITS and not common.is_int:
        raise SemanticError(f"`{symbol}` needs int operands, got {a} and {b}", "cast with .to(tl.int32)")
    if op in (Op.IDIV, Op.MOD) and common.is_float:
        raise SemanticError(f"`{symbol}` needs int operands, got {a} and {b}",
                            "use / for float division, or cast to an int dtype with .to()")
    return common, common


OP_SYMBOLS = {Op.SHL: "<<", Op.SHR: ">>", Op.ADD: "+", Op.SUB: "-", Op.MUL: "*", Op.DIV: "/", Op.IDIV: "//", Op.MOD: "%",
              Op.LT: "<", Op.LE: "<=", Op.GT: ">", Op.GE: ">=", Op.EQ: "==", Op.NE: "!=",
              Op.AND: "&", Op.OR: "|", Op.XOR: "^", Op.NEG: "-", Op.NOT: "~"}

_FLOAT_ONLY = GroupOp.TRANSCENDENTAL | GroupOp.ROUNDING | GroupOp.FLOAT_MATH | GroupOp.PREDICATE | {Op.SQRT}


def unary_type(op: Op, dtype) -> DType:
    """The result dtype of a unary op on ``dtype`` (the same dtype: there is no implicit cast)."""
    _no_pointer(dtype)
    name = OP_SYMBOLS.get(op, f"tl.{op.value}")
    if op in _FLOAT_ONLY and not dtype.is_float:
        raise SemanticError(f"{name} needs a float tile, got {dtype}",
                            "cast first, e.g. tl.exp(x.to(tl.float32))")
    if op == Op.NOT and dtype.is_float:
        raise SemanticError(f"`~` needs a bool or int tile, got {dtype}", "use x == 0 for floats")
    if op in (Op.NEG, Op.ABS) and dtype.kind == "bool":
        raise SemanticError(f"{name} is not defined on bool tiles", "use ~ to negate a mask")
    return dtypes.bool_ if op in GroupOp.PREDICATE else dtype


def select_type(a, b) -> DType:
    """The dtype of ``where(c, a, b)``: the promotion of ``a`` and ``b`` (literals are weak)."""
    if isinstance(a, Literal) and isinstance(b, Literal):
        return promote(literal_dtype(a), literal_dtype(b))
    return binary_types(Op.EQ, a, b)[0]


def pointer_offset_type(ptr: PointerType, offset) -> DType:
    """The dtype of the offset in ``ptr + offset`` (an int tile or int literal)."""
    if isinstance(offset, (bool, float)) or isinstance(offset, PointerType) or \
            (isinstance(offset, DType) and not offset.is_int):
        kind = offset if isinstance(offset, (DType, PointerType)) else type(offset).__name__
        raise SemanticError(f"pointer offsets must be integers, got {kind} added to {ptr}",
                            "compute offsets from tl.arange and int scalars, or cast with .to(tl.int32)")
    return literal_dtype(offset) if isinstance(offset, (int, Poly)) else offset


def reduce_types(op: Op, dtype: DType, sum_dtype: DType | None = None) -> tuple[DType, DType]:
    """(dtype the input is cast to first, result dtype) of a reduction."""
    _no_pointer(dtype)
    if op == Op.SUM:
        if sum_dtype is not None:
            return sum_dtype, sum_dtype
        if not dtype.is_float and dtype.bits < 32:
            return dtypes.int32, dtypes.int32
        return dtype, dtype
    if op in (Op.MAX, Op.MIN) and dtype in (dtypes.float16, dtypes.bfloat16):
        return dtypes.float32, dtypes.float32
    if op in (Op.ARGMAX, Op.ARGMIN):
        return dtype, dtypes.int32
    return dtype, dtype


def normalize_axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise SemanticError(f"axis {axis} is out of range for a tile of rank {rank}",
                            f"use an axis in [{-rank}, {rank - 1}]")
    return axis % rank


def reduce_shape(shape: tuple[int, ...], axis: int | None, keep_dims: bool) -> tuple[int, ...]:
    """The shape after reducing ``axis`` (None: every axis) of ``shape``."""
    axes = range(len(shape)) if axis is None else (axis,)
    if keep_dims:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)
