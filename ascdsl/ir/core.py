"""The tile IR: typed SSA values, instructions as data, structured control flow.

A kernel specialisation is a :class:`Kernel`: its body is a :class:`Block` whose arguments are the
kernel's runtime parameters (pointers and scalars, in DSL order). Every value has a :class:`Type`:
a dtype (or pointer type) and a static shape (``()`` for scalars). Elementwise instructions take
operands that either have the result's shape or are scalars (the frontend inserts explicit
``broadcast``/``expand_dims``), so later passes never re-derive broadcasting.

Operands and attributes of each op (``attrs`` are ``(name, value)`` pairs, values are int, float,
bool, str, DType, None or a tuple of ints):

========================  ======================================  ==================================
op                        operands                                attrs
========================  ======================================  ==================================
const                     -                                       value (splat to the result shape)
program_id, num_programs  -                                       axis (0..2); result i32 scalar
arange                    -                                       start, end; result i32[end-start]
broadcast                 x                                       - (result type gives the shape)
expand_dims               x                                       axis
elementwise (see sets)    1-3 operands as the op needs            cast: dtype
ptr_add                   ptr, offset (int)                       -
sum, max, min,            x                                       axis (int or None = all), keep_dims
argmax, argmin
load                      ptr [, mask [, other]]                  has_mask, has_other
store                     ptr, value [, mask]                     has_mask
for                       lower, upper, step, *inits              region 0: args (iv, *carried);
                                                                  results: final carried values
while                     *inits                                  region 0: args (*carried) yields
                                                                  the i1 condition; region 1: args
                                                                  (*carried) yields the next values;
                                                                  results: final carried values
if                        cond (i1 scalar)                        regions: then, else; results
yield                     values carried out of a region          -
print                     *values                                 prefix
block_load                base, offset, *strides (all dims but    shape, has_other
                          the last), *extents (every dim)
                          [, other]
block_store               base, offset, *strides, *extents,       shape [, atomic: the atomic op
                          value                                   (atomic_add/max/min) it applies]
strided_load              base, offset, *strides (every dim),     shape, has_other
                          *extents [, other]
strided_store             base, offset, *strides (every dim),     shape [, atomic]
                          *extents, value
gather_load               base, offset, index (1-D int32 tile),   shape, has_mask, has_other
                          extent [, lanes (int32 0/1 tile: the
                          lanes copied)] [, other]
scatter_store             base, offset, index, extent [, lanes],  shape, has_mask [, atomic]
                          value
span_load                 base, offset, [row stride,] lo, hi      shape; reads lanes lo[r] <= c <
                          (int32 tiles: one per row; scalars     hi[r] of row r (the others
                          for a 1-D load)                         undefined)
sync_all                  -                                       mode (a grid barrier: every program
                                                                  of the launch waits for all)
========================  ======================================  ==================================

Triton-compatible ops (the interpreter runs them; the Ascend C backend rejects them, located):

========================  ======================================  ==================================
math (``GroupOp.MATH``)   1-3 operands, elementwise               bitcast: dtype
reshape                   x                                       - (result type gives the shape)
permute                   x                                       order (result axis i = x axis order[i])
join / split              a, b / x (last axis 2)                  - ; split has two results
cat                       a, b (concatenated along axis 0)        -
flip                      x                                       axis
slice                     x (rows of axis 0; made by the backend) start, stop, step
reduce                    *xs (one shape)                         axis, keep_dims; region 0: args
                                                                  (*lhs, *rhs) yields the combined
scan                      *xs                                     axis, reverse; region as reduce
sort                      x                                       axis, descending
histogram                 x (int tile) [, mask]                   bins, has_mask; result i32[bins]
dot                       a, b [, acc]                            has_acc
assert                    cond (bool tile)                        message
atomic_add ... _xchg      ptr, value [, mask]                     has_mask; result: the old values
atomic_cas                ptr, cmp, value                         result: the old values
========================  ======================================  ==================================

``block_load``/``block_store`` are what memory-access analysis (:mod:`ascdsl.passes.access`)
turns affine ``load``/``store`` into: the element at block index ``(i0, ..., ik)`` lives at
``base + offset + i0*stride0 + ... + ik`` (the innermost stride is 1) and is accessed only where
``i_d < extent_d`` for every dim (``other``, or poison, elsewhere). ``offset``, strides and
extents are integer scalars; extents are already clamped to ``[0, shape[d]]``. ``strided_load`` and
``strided_store`` are block accesses whose innermost dim has a stride too (``ptr + cols * stride``);
``gather_load`` reads ``base[offset + index[i]]`` for ``i < extent`` (``tl.load(ptr + idx)``),
``scatter_store`` writes there (the last lane wins where indices repeat).

Integer ``idiv`` and ``mod`` truncate toward zero, like C and Triton. Float ops on float16 and
bfloat16 round their result to that dtype (computed in float32, round to nearest even).
"""
from __future__ import annotations

import dataclasses
import enum
import math
from dataclasses import dataclass, field
from typing import Any, Union

from ..dtypes import DType, PointerType
from ..errors import UNKNOWN, Loc

ElemType = Union[DType, PointerType]


class Op(enum.Enum):
    CONST = "const"
    PROGRAM_ID = "program_id"
    NUM_PROGRAMS = "num_programs"
    ARANGE = "arange"
    BROADCAST = "broadcast"
    EXPAND_DIMS = "expand_dims"
    ADD = "add"
    SUB = "sub"
    MUL = "mul"
    DIV = "div"
    IDIV = "idiv"
    MOD = "mod"
    MAXIMUM = "maximum"
    MINIMUM = "minimum"
    LT = "lt"
    LE = "le"
    GT = "gt"
    GE = "ge"
    EQ = "eq"
    NE = "ne"
    AND = "and"
    OR = "or"
    XOR = "xor"
    NEG = "neg"
    NOT = "not"
    EXP = "exp"
    LOG = "log"
    SQRT = "sqrt"
    RSQRT = "rsqrt"
    ABS = "abs"
    SIGMOID = "sigmoid"
    CAST = "cast"
    WHERE = "where"
    PTR_ADD = "ptr_add"
    SUM = "sum"
    MAX = "max"
    MIN = "min"
    ARGMAX = "argmax"
    ARGMIN = "argmin"
    LOAD = "load"
    STORE = "store"
    FOR = "for"
    WHILE = "while"
    IF = "if"
    YIELD = "yield"
    PRINT = "print"
    BLOCK_LOAD = "block_load"
    BLOCK_STORE = "block_store"
    STRIDED_LOAD = "strided_load"
    STRIDED_STORE = "strided_store"
    GATHER_LOAD = "gather_load"
    SCATTER_STORE = "scatter_store"
    SPAN_LOAD = "span_load"
    # float math (unary, elementwise)
    FLOOR = "floor"
    CEIL = "ceil"
    TRUNC = "trunc"
    ROUND = "round"
    RINT = "rint"
    EXP2 = "exp2"
    LOG2 = "log2"
    LOG10 = "log10"
    LOG1P = "log1p"
    EXPM1 = "expm1"
    CBRT = "cbrt"
    SIN = "sin"
    COS = "cos"
    TAN = "tan"
    TANH = "tanh"
    SINH = "sinh"
    COSH = "cosh"
    ASIN = "asin"
    ACOS = "acos"
    ATAN = "atan"
    ERF = "erf"
    ERFC = "erfc"
    ASINH = "asinh"
    ACOSH = "acosh"
    ATANH = "atanh"
    ISNAN = "isnan"
    ISINF = "isinf"
    ISFINITE = "isfinite"
    SIGNBIT = "signbit"
    # binary and ternary elementwise
    POW = "pow"
    ATAN2 = "atan2"
    COPYSIGN = "copysign"
    HYPOT = "hypot"
    NEXTAFTER = "nextafter"
    UMULHI = "umulhi"
    SHL = "shl"
    SHR = "shr"
    FMA = "fma"
    BITCAST = "bitcast"
    # shapes
    RESHAPE = "reshape"
    PERMUTE = "permute"
    JOIN = "join"
    SPLIT = "split"
    CAT = "cat"
    FLIP = "flip"
    SLICE = "slice"
    # whole-tile
    REDUCE = "reduce"
    SCAN = "scan"
    SORT = "sort"
    HISTOGRAM = "histogram"
    DOT = "dot"
    ASSERT = "assert"
    SYNC_ALL = "sync_all"
    ATOMIC_ADD = "atomic_add"
    ATOMIC_MAX = "atomic_max"
    ATOMIC_MIN = "atomic_min"
    ATOMIC_AND = "atomic_and"
    ATOMIC_OR = "atomic_or"
    ATOMIC_XOR = "atomic_xor"
    ATOMIC_XCHG = "atomic_xchg"
    ATOMIC_CAS = "atomic_cas"


class GroupOp:
    """Op families. Passes and backends dispatch on these sets, never on long if-chains."""

    LEAF = frozenset({Op.CONST, Op.PROGRAM_ID, Op.NUM_PROGRAMS, Op.ARANGE})
    SHAPE = frozenset({Op.BROADCAST, Op.EXPAND_DIMS})
    ARITH = frozenset({Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.IDIV, Op.MOD, Op.MAXIMUM, Op.MINIMUM})
    COMPARE = frozenset({Op.LT, Op.LE, Op.GT, Op.GE, Op.EQ, Op.NE})
    LOGICAL = frozenset({Op.AND, Op.OR, Op.XOR})
    BINARY = ARITH | COMPARE | LOGICAL
    TRANSCENDENTAL = frozenset({Op.EXP, Op.EXP2, Op.LOG, Op.RSQRT, Op.SIGMOID, Op.TANH, Op.ERF, Op.SIN, Op.COS,
                                Op.LOG2})
    UNARY = frozenset({Op.NEG, Op.NOT, Op.SQRT, Op.ABS, Op.CAST}) | TRANSCENDENTAL
    ROUNDING = frozenset({Op.FLOOR, Op.CEIL, Op.TRUNC, Op.ROUND, Op.RINT})
    """Round to an integral value of the same float dtype (exact; the identity on ints)."""
    # Triton's further math (tl.math, libdevice)
    BINARY_MATH = frozenset({Op.POW, Op.ATAN2, Op.COPYSIGN, Op.HYPOT, Op.NEXTAFTER})
    FLOAT_MATH = BINARY_MATH | frozenset({Op.LOG10, Op.LOG1P, Op.EXPM1, Op.CBRT, Op.TAN, Op.SINH, Op.COSH, Op.ASIN,
                                          Op.ACOS, Op.ATAN, Op.ERFC, Op.ASINH, Op.ACOSH, Op.ATANH})
    PREDICATE = frozenset({Op.ISNAN, Op.ISINF, Op.ISFINITE, Op.SIGNBIT})
    BITS = frozenset({Op.UMULHI, Op.SHL, Op.SHR})
    MATH = ROUNDING | FLOAT_MATH | PREDICATE | BITS | frozenset({Op.FMA, Op.BITCAST})
    ELEMENTWISE = BINARY | UNARY | MATH | frozenset({Op.WHERE, Op.PTR_ADD})
    RESHAPING = frozenset({Op.RESHAPE, Op.PERMUTE, Op.JOIN, Op.SPLIT, Op.CAT, Op.FLIP, Op.SLICE})
    COMBINE = frozenset({Op.REDUCE, Op.SCAN})
    ATOMIC = frozenset({Op.ATOMIC_ADD, Op.ATOMIC_MAX, Op.ATOMIC_MIN, Op.ATOMIC_AND, Op.ATOMIC_OR, Op.ATOMIC_XOR,
                        Op.ATOMIC_XCHG, Op.ATOMIC_CAS})
    REDUCE = frozenset({Op.SUM, Op.MAX, Op.MIN, Op.ARGMAX, Op.ARGMIN})
    MEMORY = frozenset({Op.LOAD, Op.STORE, Op.BLOCK_LOAD, Op.BLOCK_STORE, Op.STRIDED_LOAD, Op.STRIDED_STORE,
                        Op.GATHER_LOAD, Op.SCATTER_STORE, Op.SPAN_LOAD})
    CONTROL = frozenset({Op.FOR, Op.WHILE, Op.IF, Op.YIELD})
    SIDE_EFFECT = frozenset({Op.STORE, Op.BLOCK_STORE, Op.STRIDED_STORE, Op.SCATTER_STORE, Op.PRINT, Op.YIELD,
                             Op.ASSERT, Op.SYNC_ALL}) | ATOMIC


@dataclass(frozen=True)
class Type:
    """A tile (or, with ``shape == ()``, a scalar) of ``dtype`` elements."""

    dtype: ElemType
    shape: tuple[int, ...] = ()  # an extent may be an ``ir.symbol.Poly`` of run-time tile extents

    @property
    def is_scalar(self) -> bool:
        return self.shape == ()

    @property
    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def with_shape(self, shape: tuple[int, ...]) -> "Type":
        return Type(self.dtype, tuple(shape))

    def with_dtype(self, dtype: ElemType) -> "Type":
        return Type(dtype, self.shape)

    def __str__(self) -> str:
        if not self.shape:
            return self.dtype.short
        return "tile<" + "x".join(str(d) if isinstance(d, int) else f"({d})" for d in self.shape) + "x" + \
            self.dtype.short + ">"


@dataclass(frozen=True)
class Value:
    """An SSA value: a number unique within its kernel, and its type."""

    id: int
    type: Type

    def __str__(self) -> str:
        return f"%{self.id}"


@dataclass(frozen=True)
class Block:
    args: tuple[Value, ...]
    body: tuple["Instr", ...]


@dataclass(frozen=True)
class Instr:
    op: Op
    results: tuple[Value, ...] = ()
    operands: tuple[Value, ...] = ()
    attrs: tuple[tuple[str, Any], ...] = ()
    regions: tuple[Block, ...] = ()
    loc: Loc = field(default=UNKNOWN, compare=False)

    def __post_init__(self) -> None:
        # NaN != NaN, but tuples compare items by identity first: one shared NaN object keeps
        # structural equality (parse(dump(m)) == m) true for NaN constants.
        if any(isinstance(v, float) and math.isnan(v) for _, v in self.attrs):
            attrs = tuple((k, math.nan if isinstance(v, float) and math.isnan(v) else v)
                          for k, v in self.attrs)
            object.__setattr__(self, "attrs", attrs)

    def attr(self, name: str, default: Any = None) -> Any:
        for key, value in self.attrs:
            if key == name:
                return value
        return default

    def map_regions(self, fn) -> "Instr":
        """The same instruction with ``fn`` applied to each of its regions (what passes recurse with)."""
        return dataclasses.replace(self, regions=tuple(fn(r) for r in self.regions))

    @property
    def result(self) -> Value:
        (only,) = self.results
        return only


@dataclass(frozen=True)
class Kernel:
    """One specialisation of a ``@jit`` function.

    ``param_names`` name ``body.args`` (the runtime parameters, in DSL order); ``constexprs`` records
    the compile-time values it was specialised for (in declaration order). ``names`` are the DSL
    variable names values were assigned to (``(value id, name)``, first assignment wins): hints for
    readable generated code, not part of the kernel's identity; its location is: a cache keyed by a
    kernel never hands one kernel's source lines to an identical kernel written elsewhere.
    """

    name: str
    param_names: tuple[str, ...]
    constexprs: tuple[tuple[str, Any], ...]
    body: Block
    loc: Loc = UNKNOWN
    names: tuple[tuple[int, str], ...] = field(default=(), compare=False)
    poison: bool = field(default=False, compare=False)
    """Checking mode (``debug=True``): its masked loads without ``other`` are poisoned, and a store
    of a poisoned float lane is an error (see :mod:`ascdsl.numerics`, masked lanes)."""

    def with_body(self, body: Block) -> "Kernel":
        """The same kernel (name, parameters, constexprs, location) with another body."""
        return dataclasses.replace(self, body=body)

    @property
    def params(self) -> tuple[Value, ...]:
        return self.body.args


@dataclass(frozen=True)
class Module:
    kernels: tuple[Kernel, ...]


def walk(block: Block):
    """Every instruction in ``block`` and its nested regions, in program order (pre-order)."""
    for instr in block.body:
        yield instr
        for region in instr.regions:
            yield from walk(region)
