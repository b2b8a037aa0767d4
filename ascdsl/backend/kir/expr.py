"""The kernel IR's buffers, tensor views and expressions: small typed trees of frozen data (see
:mod:`ascdsl.backend.kir`)."""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Union

import numpy as np

from ... import dtypes
from ...dtypes import DType
from ...errors import UNKNOWN, Loc
from ...ir.symbol import Poly, equal


class Role(enum.Enum):
    """What a buffer holds; the planner decides its UB position from it."""

    INPUT = "input"  # a block load's destination: a buffer of a VECIN queue
    OUTPUT = "output"  # a block store's source: a buffer of a VECOUT queue
    TILE = "tile"  # a tile value (temporaries, kept loads, accumulators, masks)
    SCRATCH = "scratch"  # an API's work area (reduction folds, scalar blocks, Brcb blocks)


class Position(enum.Enum):
    VECIN = "VECIN"
    VECOUT = "VECOUT"
    VECCALC = "VECCALC"


class Pipe(enum.Enum):
    V = "PIPE_V"
    S = "PIPE_S"
    MTE2 = "PIPE_MTE2"
    MTE3 = "PIPE_MTE3"


class Struct(enum.Enum):
    """C++ aggregate types a :class:`Let` may define."""

    COPY_PARAMS = "DataCopyExtParams"
    PAD_PARAMS = "DataCopyPadExtParams"  # templated on the element type
    BIT_MASK = "uint64_t"  # ``uint64_t mask[2] = {low, high};``: a bit-mode call's lanes (bit ``i % 64`` of word ``i / 64``)


class CInt(enum.Enum):
    """Unsigned C integer types of API parameters (not tile element types)."""

    UINT8 = "uint8_t"
    UINT16 = "uint16_t"
    UINT32 = "uint32_t"
    UINT64 = "uint64_t"


CINT_BYTES = {CInt.UINT8: 1, CInt.UINT16: 2, CInt.UINT32: 4, CInt.UINT64: 8}

CType = Union[DType, Struct, CInt]


@dataclass(frozen=True)
class Buf:
    """A logical UB buffer: a tile value or a scratch area. ``key`` is unique in its kernel."""

    key: int
    role: Role
    dtype: DType
    hint: str
    queue: tuple = ()  # INPUT/OUTPUT: the queue identity (pointer, occurrence in its segment)
    loc: Loc = field(default=UNKNOWN, compare=False)


# ----------------------------------------------------------------------------- expressions

class VarKind(enum.Enum):
    LOCAL = "local"  # a const scalar of a method
    MEMBER = "member"  # a class member (a scalar read from UB, used by later stages)
    PID = "pid"  # the program id Process walks
    LOOP = "loop"  # a loop variable


@dataclass(frozen=True)
class Var:
    key: int
    ctype: CType
    hint: str
    kind: VarKind = VarKind.LOCAL
    template: DType | None = None  # the element type of a templated aggregate


@dataclass(frozen=True)
class Lit:
    """A literal of exactly ``dtype`` (float literals of 16-bit types are C++ casts of floats; an integer
    may be a symbolic :class:`~ascdsl.ir.symbol.Poly`, see :func:`lit`)."""

    value: Union[int, float, bool, Poly]
    dtype: DType


@dataclass(frozen=True)
class Field:
    """``tiling_.<name>``: a field of the tiling struct."""

    name: str
    dtype: DType


class BinOp(enum.Enum):
    ADD = "+"
    SUB = "-"
    MUL = "*"
    DIV = "/"
    MOD = "%"
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="
    EQ = "=="
    NE = "!="
    AND = "&"
    OR = "|"
    XOR = "^"
    SHL = "<<"
    SHR = ">>"


@dataclass(frozen=True)
class Bin:
    op: BinOp
    a: "Expr"
    b: "Expr"


@dataclass(frozen=True)
class Cond:
    """``c ? a : b``."""

    c: "Expr"
    a: "Expr"
    b: "Expr"


@dataclass(frozen=True)
class Conv:
    """``static_cast<dtype>(x)``."""

    dtype: Union[DType, CInt]
    x: "Expr"


@dataclass(frozen=True)
class SizeOf:
    dtype: DType


@dataclass(frozen=True)
class ElemsPer:
    """The elements of ``dtype`` (a template's ``T``) in ``bytes`` bytes, an ``int32_t``: a class constant
    the generated code names (``ELEMS_PER_BLOCK = 32 / sizeof(T)``)."""

    bytes: int
    dtype: DType


class Const(enum.Enum):
    """Named API constants."""

    CAST_NONE = "RoundMode::CAST_NONE"
    CAST_RINT = "RoundMode::CAST_RINT"
    CAST_TRUNC = "RoundMode::CAST_TRUNC"
    CAST_FLOOR = "RoundMode::CAST_FLOOR"
    CAST_CEIL = "RoundMode::CAST_CEIL"
    CAST_ROUND = "RoundMode::CAST_ROUND"
    LT = "CMPMODE::LT"
    LE = "CMPMODE::LE"
    GT = "CMPMODE::GT"
    GE = "CMPMODE::GE"
    EQ = "CMPMODE::EQ"
    NE = "CMPMODE::NE"
    SEL_TT = "SELMODE::VSEL_TENSOR_TENSOR_MODE"
    SEL_TS = "SELMODE::VSEL_TENSOR_SCALAR_MODE"
    ORDER_VALUE = "ReduceOrder::ORDER_ONLY_VALUE"
    SINGLE_CACHE_LINE = "CacheLine::SINGLE_CACHE_LINE"
    TRUE = "true"
    FALSE = "false"


@dataclass(frozen=True)
class Brace:
    """An aggregate ``{a, b, ...}`` (repeat parameters)."""

    items: tuple["Expr", ...]

    def __post_init__(self):
        _tuples(self, "items")


@dataclass(frozen=True)
class Elem:
    """``ref.GetValue(index)``: a UB element read on the scalar unit (after a V_S flag)."""

    ref: "Ref"
    index: Union[int, "Expr"]


@dataclass(frozen=True)
class Not:
    """``!x``."""

    x: "Expr"


@dataclass(frozen=True)
class GmValue:
    """``gm.GetValue(offset)``: one GM element read on the scalar unit (a single-element load)."""

    gm: "Gm"


TYPE_PARAMETER = DType("T", "T", 2, "float", "T", np.dtype("V2"))
"""A template class's element type parameter as :class:`IsSame` names it (its size is no concern there)."""


@dataclass(frozen=True)
class IsSame:
    """``IsSameType<a, b>::value``: a compile-time test of a template parameter (``if constexpr``)."""

    a: DType
    b: DType


FLOAT_INSTANCE = IsSame(TYPE_PARAMETER, dtypes.float32)
"""The test of a template's float32 instance: ``IsSameType<T, float>::value``."""


@dataclass(frozen=True)
class Text:
    """A C string literal (``printf`` formats)."""

    value: str


Expr = Union[Var, Lit, Field, Bin, Cond, Conv, SizeOf, ElemsPer, Const, Brace, Elem, GmValue, Not, IsSame, Text]


def _tuples(obj, *names) -> None:
    """Freeze sequence fields of a frozen node given as lists."""
    for n in names:
        object.__setattr__(obj, n, tuple(getattr(obj, n)))


def lit(v: int | Poly) -> Lit:
    """An int32 literal; of a :class:`~ascdsl.ir.symbol.Poly`, the symbolic integer (a kernel compiled for
    symbols, issue 25: substituting values for them gives the literal the kernel compiled for those values has)."""
    return Lit(v, dtypes.int32)


def is_lit(e: Expr, v: int) -> bool:
    """Whether ``e`` is ``lit(v)`` (a symbolic literal: at every point of its symbols' domains, False at none,
    :class:`~ascdsl.ir.symbol.Undecided` at some only)."""
    return isinstance(e, Lit) and e.dtype == dtypes.int32 and equal(e.value, v)


def int_division(divide: bool, a: "Expr", b: "Expr", dt: dtypes.DType) -> "Expr":
    """``a / b`` (``divide``) or ``a % b`` of C integers of dtype ``dt`` without C's traps (SIGFPE on the host,
    undefined on the device), with the interpreter's results (:mod:`ascdsl.numerics`): 0 for a zero divisor;
    for -1 the wrapped negation and 0."""
    unsigned = CInt.UINT64 if dt.itemsize == 8 else CInt.UINT32  # C++ promotes narrower ints to int
    negated = Conv(dt, Bin(BinOp.SUB, Conv(unsigned, Lit(0, dt)), Conv(unsigned, a)))
    whole = Bin(BinOp.DIV if divide else BinOp.MOD, a, b)
    if isinstance(b, Lit) and not any(equal(b.value, c) for c in (0, -1)):
        return whole
    if dt.kind == "int":  # a signed minimum over -1 overflows
        whole = Cond(Bin(BinOp.EQ, b, Lit(-1, dt)), negated if divide else Lit(0, dt), whole)
    return Cond(Bin(BinOp.EQ, b, Lit(0, dt)), Lit(0, dt), whole)


def as_expr(v) -> "Expr":
    """An int as its literal; an expression as itself (sizes that are expressions in the general form)."""
    return lit(v) if isinstance(v, (int, Poly)) else v


def add(a: Expr, b: Expr) -> Expr:
    if is_lit(b, 0):
        return a
    if is_lit(a, 0):
        return b
    return Bin(BinOp.ADD, a, b)


def mul(a: Expr, b: Expr) -> Expr:
    if is_lit(a, 0) or is_lit(b, 0):
        return lit(0)
    if is_lit(b, 1):
        return a
    if is_lit(a, 1):
        return b
    return Bin(BinOp.MUL, a, b)


def minimum(a: Expr, b: Expr) -> Expr:
    return Cond(Bin(BinOp.LT, a, b), a, b)


def ceil_to(x: Expr, n: int) -> Expr:
    """``(x + n - 1) / n * n``."""
    return x if n == 1 else Bin(BinOp.MUL, Bin(BinOp.DIV, add(x, lit(n - 1)), lit(n)), lit(n))


def int_bytes(e) -> tuple[int, bool] | None:
    """The C integer type of expression ``e`` as (bytes, signed), after C++'s usual arithmetic conversions
    (narrower operands promote to ``int``); None for a non-integer or an untyped expression."""
    if isinstance(e, (Var, Lit, Field, Conv)):
        t = e.ctype if isinstance(e, Var) else e.dtype
        if isinstance(t, CInt):
            return CINT_BYTES[t], False
        return (max(t.itemsize, 4), True) if isinstance(t, DType) and t.is_int else None
    if isinstance(e, SizeOf):
        return 8, False
    if isinstance(e, ElemsPer):
        return 4, True
    if isinstance(e, Bin) and e.op not in _COMPARISONS or isinstance(e, Cond):
        ts = [int_bytes(x) for x in ((e.a, e.b) if isinstance(e, Bin) and e.op not in (BinOp.SHL, BinOp.SHR)
                                     else (e.a,) if isinstance(e, Bin) else (e.a, e.b))]
        if None in ts:
            return None
        size = max(max(t[0] for t in ts), 4)
        return size, all(t[1] for t in ts if t[0] == size)
    return None


def is_float(e) -> bool:
    """Whether expression ``e`` has a floating-point C type (after the usual arithmetic conversions)."""
    if isinstance(e, (Var, Lit, Field, Conv)):
        t = e.ctype if isinstance(e, Var) else e.dtype
        return isinstance(t, DType) and t.is_float
    if isinstance(e, Elem):
        return e.ref.dtype.is_float
    if isinstance(e, Bin):
        return e.op not in _COMPARISONS and (is_float(e.a) or is_float(e.b))
    if isinstance(e, Cond):
        return is_float(e.a) or is_float(e.b)
    return False


_COMPARISONS = frozenset({BinOp.LT, BinOp.LE, BinOp.GT, BinOp.GE, BinOp.EQ, BinOp.NE})


# ----------------------------------------------------------------------------- tensors

@dataclass(frozen=True)
class Ref:
    """Elements of ``buf`` viewed as ``dtype`` from ``offset``; ``extent`` bounds (statically) the
    elements any call reading or writing this view touches, counted from the buffer's start: the
    planner sizes buffers from the extents of their views. Selection of a kernel compiled for symbols
    (issue 25) writes the extent as a :class:`~ascdsl.ir.symbol.Poly` of them; the UB planner does not
    take such a kernel yet (its bound is the polynomial at the symbols' ``high``)."""

    buf: Buf
    dtype: DType
    offset: Expr
    extent: int | Poly

    def at(self, offset: Expr, span: int, static_offset: int) -> "Ref":
        """A view ``offset`` elements further that touches ``span`` elements from its start
        (``static_offset`` bounds ``offset``)."""
        return Ref(self.buf, self.dtype, add(self.offset, offset), self.base + static_offset + span)

    @property
    def base(self) -> int:
        """The static offset of this view, when it is a literal (else 0)."""
        return self.offset.value if isinstance(self.offset, Lit) else 0

    @property
    def low(self) -> int:
        """A static lower bound of the offset (offsets are never negative): the literal, or the literal
        first term of a sum."""
        e = self.offset
        while isinstance(e, Bin) and e.op is BinOp.ADD:
            e = e.a
        return e.value if isinstance(e, Lit) else 0


@dataclass(frozen=True)
class Gm:
    """``<pointer>Gm[offset]``; ``param`` is the kernel parameter's index."""

    param: int
    dtype: DType
    offset: Expr


Operand = Union[Ref, Gm]
