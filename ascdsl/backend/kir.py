"""The kernel IR: what the Ascend C backend's passes read and write, as frozen data.

Between the tile IR and the C++ text sits one kernel per variant made of:

* **buffers** (:class:`Buf`): one per tile value or API scratch area, with a :class:`Role`, an
  element type and a DSL name hint; the UB planner (:mod:`.ubplan`) maps them to physical slots;
* **tensor views** (:class:`Ref`: buffer, element type, element offset, static extent) and global
  tensors (:class:`Gm`);
* **expressions**, small typed trees (:class:`Var`, :class:`Lit`, :class:`Field`, :class:`Bin`,
  :class:`Cond`, :class:`Conv`, :class:`SizeOf`, :class:`ElemsPer`, :class:`Const`, :class:`Brace`, :class:`Elem`,
  :class:`GmValue`, :class:`Not`, :class:`Text`);
* **statements**: API calls (:class:`Call`), scalar definitions (:class:`Let`, :class:`Set`),
  queue operations (:class:`Queue`), nested :class:`For`/:class:`While`/:class:`If`, synchronisation
  (:class:`Barrier`, :class:`Flag`, inserted by :mod:`.sync`) and stage calls (:class:`Run`);
* **stages** (:class:`Stage`): CopyIn/Compute/CopyOut methods with the scalars they read.

Every node is data: no pass reads C++ text, and only :mod:`.emit` produces any. :func:`verify`
checks the invariants the passes rely on.
"""
from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Union

import numpy as np

from .. import dtypes
from ..dtypes import DType
from ..errors import UNKNOWN, Loc


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
    """A literal of exactly ``dtype`` (float literals of 16-bit types are C++ casts of floats)."""

    value: Union[int, float, bool]
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


def lit(v: int) -> Lit:
    return Lit(v, dtypes.int32)


def int_division(divide: bool, a: "Expr", b: "Expr", dt: dtypes.DType) -> "Expr":
    """``a / b`` (``divide``) or ``a % b`` of C integers of dtype ``dt`` without C's traps (SIGFPE on the host,
    undefined on the device), with the interpreter's results (:mod:`ascdsl.numerics`): 0 for a zero divisor;
    for -1 the wrapped negation and 0."""
    unsigned = CInt.UINT64 if dt.itemsize == 8 else CInt.UINT32  # C++ promotes narrower ints to int
    negated = Conv(dt, Bin(BinOp.SUB, Conv(unsigned, Lit(0, dt)), Conv(unsigned, a)))
    whole = Bin(BinOp.DIV if divide else BinOp.MOD, a, b)
    if isinstance(b, Lit) and b.value not in (0, -1):
        return whole
    if dt.kind == "int":  # a signed minimum over -1 overflows
        whole = Cond(Bin(BinOp.EQ, b, Lit(-1, dt)), negated if divide else Lit(0, dt), whole)
    return Cond(Bin(BinOp.EQ, b, Lit(0, dt)), Lit(0, dt), whole)


def as_expr(v) -> "Expr":
    """An int as its literal; an expression as itself (sizes that are expressions in the general form)."""
    return lit(v) if isinstance(v, int) else v


def add(a: Expr, b: Expr) -> Expr:
    if b == lit(0):
        return a
    if a == lit(0):
        return b
    return Bin(BinOp.ADD, a, b)


def mul(a: Expr, b: Expr) -> Expr:
    if lit(0) in (a, b):
        return lit(0)
    if b == lit(1):
        return a
    if a == lit(1):
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
    planner sizes buffers from the extents of their views."""

    buf: Buf
    dtype: DType
    offset: Expr
    extent: int

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


# ----------------------------------------------------------------------------- statements

@dataclass(frozen=True)
class Call:
    """``api(dst, *srcs, *args)`` (or, a ``method``, ``dst.api(*args)``) on ``pipe``; ``inplace``: ``dst`` may share a source's buffer (True:
    any source's; a tuple: only those of these source indices, when the others are read at repeat
    stride 0, so that a later repeat would read what an earlier one wrote)."""

    api: str
    dst: Operand | None
    srcs: tuple[Operand, ...]
    args: tuple[Expr, ...] = ()
    work: tuple["Ref", ...] = ()  # scratch the API writes and reads (after the sources)
    pipe: Pipe = Pipe.V
    inplace: bool | tuple[int, ...] = False
    template: DType | None = None
    mode: "Const | None" = None  # a second template argument (``DataCacheCleanAndInvalid<T, CacheLine::...>``)
    loc: Loc = field(default=UNKNOWN, compare=False)
    method: bool = False  # a method of ``dst``: ``dst.api(*args)`` (``SetValue`` on the scalar unit)

    def __post_init__(self):
        _tuples(self, "srcs", "args", "work")

    @property
    def read_views(self) -> tuple["Ref", ...]:
        out = [s for s in self.srcs if isinstance(s, Ref)] + list(self.work)
        return tuple(out + [a.ref for a in self.args if isinstance(a, Elem)])

    @property
    def write_views(self) -> tuple["Ref", ...]:
        return ((self.dst,) if isinstance(self.dst, Ref) else ()) + self.work

    @property
    def reads(self) -> tuple[Buf, ...]:
        return tuple(r.buf for r in self.read_views)

    @property
    def writes(self) -> tuple[Buf, ...]:
        return tuple(r.buf for r in self.write_views)

    @property
    def is_identity_cast(self) -> bool:
        """A ``Cast`` to its own element type (``CAST_NONE``): a 16-bit template's cast in the template's
        float32 form (:func:`.templated.float32_form`), computed in place by the planner."""
        return (self.api == "Cast" and isinstance(self.dst, Ref) and self.dst.dtype == self.srcs[0].dtype
                and self.args[0] is Const.CAST_NONE)

    @property
    def refs(self) -> tuple["Ref", ...]:
        return tuple(r for r in (self.dst, *self.srcs, *self.work) if isinstance(r, Ref))


@dataclass(frozen=True)
class Let:
    """``const T var = expr;`` (a :class:`Struct` var is a non-const aggregate; a ``mutable`` one is not
    ``const``: an accumulator that :class:`Set` updates)."""

    var: Var
    expr: Expr
    loc: Loc = field(default=UNKNOWN, compare=False)
    mutable: bool = False


@dataclass(frozen=True)
class Set:
    """``var = expr;`` (a :class:`VarKind.MEMBER` var, or a ``mutable`` :class:`Let`'s local)."""

    var: Var
    expr: Expr
    loc: Loc = field(default=UNKNOWN, compare=False)


class QOp(enum.Enum):
    ALLOC = "AllocTensor"
    ENQUE = "EnQue"
    DEQUE = "DeQue"
    FREE = "FreeTensor"


class Route(enum.Enum):
    """The user positions an ENQUE/DEQUE of a bound queue (``TQueBind<VECIN, VECOUT>``) names: its
    buffer is loaded, computed in place, then stored, and each hand-over is its own event."""

    LOADED = ("GM", "VECIN")  # CopyIn's EnQue, Compute's DeQue: MTE2 -> V
    COMPUTED = ("VECOUT", "GM")  # Compute's EnQue, CopyOut's DeQue: V -> MTE3


@dataclass(frozen=True)
class Queue:
    """A queue operation on the queue buffer that holds ``buf`` (ALLOC and DEQUE declare its local;
    with ``declare`` False, a DEQUE in the method that ALLOCs and ENQUEs it assigns it again);
    ``route``: the hand-over an ENQUE/DEQUE of a bound queue names."""

    op: QOp
    buf: Buf
    loc: Loc = field(default=UNKNOWN, compare=False)
    declare: bool = True
    route: Route | None = None


@dataclass(frozen=True)
class Local:
    """Declares the local tensor of ``buf`` viewed as ``dtype`` (a ``TBuf`` slot's ``Get``; with ``bare``,
    no initialiser: a :class:`Bind` gives it its storage)."""

    buf: Buf
    dtype: DType
    bare: bool = False


@dataclass(frozen=True)
class Bind:
    """``buf``'s local tensor (viewed as ``dtype``) is set to its slot's ``Get``, to the ``Get`` of slot
    index ``slot`` (where a template's float32 instance places it), or, with ``root``, to the local
    tensor of that queue buffer (a template's instance computes it there)."""

    buf: Buf
    dtype: DType
    root: Buf | None = None
    slot: int | None = None


@dataclass(frozen=True)
class For:
    """``for (var = start; var < stop; var += step)`` (``>`` for ``cmp=GT``: a negative constant
    step). ``independent``: iterations touch disjoint parts of every buffer (chunk loops of one API
    call), so no barrier orders one after another."""

    var: Var
    start: Expr
    stop: Expr
    step: Expr
    body: tuple["Stmt", ...]
    independent: bool = False
    loc: Loc = field(default=UNKNOWN, compare=False)
    cmp: BinOp = BinOp.LT

    def __post_init__(self):
        _tuples(self, "body")


@dataclass(frozen=True)
class While:
    """``while (true) { test; if (!cond) break; body }``: ``test`` computes ``cond`` before every
    iteration (``while (cond) { body }`` when ``test`` is empty)."""

    test: tuple["Stmt", ...]
    cond: Expr
    body: tuple["Stmt", ...]
    loc: Loc = field(default=UNKNOWN, compare=False)

    def __post_init__(self):
        _tuples(self, "test", "body")


@dataclass(frozen=True)
class If:
    """``if (cond) { body } else { orelse }`` (no ``else`` when ``orelse`` is empty; ``if constexpr``
    with ``static``)."""

    cond: Expr
    body: tuple["Stmt", ...]
    loc: Loc = field(default=UNKNOWN, compare=False)
    orelse: tuple["Stmt", ...] = ()
    static: bool = False

    def __post_init__(self):
        _tuples(self, "body", "orelse")


@dataclass(frozen=True)
class Barrier:
    pipe: Pipe = Pipe.V


@dataclass(frozen=True)
class Flag:
    """``SetFlag``/``WaitFlag`` of ``HardEvent::<src>_<dst>`` (:mod:`.sync`)."""

    src: Pipe = Pipe.V
    dst: Pipe = Pipe.S


@dataclass(frozen=True)
class Note:
    """A comment line (documentation of the generated code, never parsed)."""

    text: str


class StageKind(enum.Enum):
    COPY_IN = "CopyIn"
    COMPUTE = "Compute"
    COPY_OUT = "CopyOut"


@dataclass(frozen=True)
class Segment:
    """One pipeline step before staging: its loads, compute and stores, in program order."""

    index: int
    copy_in: tuple["Stmt", ...]
    compute: tuple["Stmt", ...]
    copy_out: tuple["Stmt", ...]


@dataclass(frozen=True)
class Stage:
    kind: StageKind
    index: int  # the segment it comes from
    params: tuple[Var, ...]
    body: tuple["Stmt", ...]


@dataclass(frozen=True)
class Run:
    """``Process`` calls ``stage`` with its params (the same variables in ``Process``)."""

    stage: Stage


Stmt = Union[Call, Let, Set, Queue, Local, Bind, For, While, If, Barrier, Flag, Note, Segment, Run]


@dataclass(frozen=True)
class GmParam:
    param: int  # index among the kernel's parameters
    name: str  # the DSL parameter name
    dtype: DType


@dataclass(frozen=True)
class Kernel:
    """One variant. ``process`` is the body of the program loop; after staging its segments are
    :class:`Run` statements of ``stages``. ``plan`` and ``names`` are filled by their passes."""

    name: str
    constexprs: tuple[tuple[str, object], ...]
    gms: tuple[GmParam, ...]
    process: tuple[Stmt, ...]
    members: tuple[Var, ...] = ()
    stages: tuple[Stage, ...] = ()
    plan: object = None  # .ubplan.Plan
    names: object = None  # .naming.Names
    loc: Loc = field(default=UNKNOWN, compare=False)


# ----------------------------------------------------------------------------- traversal

def children(s: Stmt) -> tuple[Stmt, ...]:
    if isinstance(s, For):
        return s.body
    if isinstance(s, If):
        return s.body + s.orelse
    if isinstance(s, While):
        return s.test + s.body
    if isinstance(s, Segment):
        return s.copy_in + s.compute + s.copy_out
    if isinstance(s, Run):
        return s.stage.body
    return ()


def rewrite(body, fn) -> tuple:
    """``body`` with each statement ``s`` replaced by the statements ``fn(s)`` returns, the bodies of
    loops and branches rewritten first."""
    out: list = []
    for s in body:
        if isinstance(s, (For, If, While)):
            s = dataclasses.replace(s, **{f: rewrite(getattr(s, f), fn) for f in ("body", "orelse", "test")
                                          if hasattr(s, f)})
        out += fn(s)
    return tuple(out)


def restage(body, stages: dict) -> tuple:
    """``body`` with each stage call naming ``stages[its stage]`` (a pass that rewrote the stages)."""
    return rewrite(body, lambda s: (Run(stages[s.stage]) if isinstance(s, Run) else s,))


def walk(body) -> "list[Stmt]":
    """Every statement of ``body``, nested ones after their parent, in program order."""
    out: list = []
    _walk(body, out)
    return out


def _walk(body, out: list) -> None:
    for s in body:
        out.append(s)
        if isinstance(s, (For, If, While, Segment, Run)):
            _walk(children(s), out)


def exprs(s: Stmt) -> tuple:
    """The expressions a statement reads directly (not those of nested statements)."""
    if isinstance(s, Call):
        ops = (s.dst, *s.srcs, *s.work)
        return (*s.args, *(o.offset for o in ops if o is not None))
    if isinstance(s, (Let, Set)):
        return (s.expr,)
    if isinstance(s, For):
        return (s.start, s.stop, s.step)
    if isinstance(s, (If, While)):
        return (s.cond,)
    return ()


def sub_exprs(e) -> list:
    """``e`` and every expression inside it."""
    out: list = []
    _sub_exprs(e, out)
    return out


_LEAVES = (Var, Lit, Field, SizeOf, ElemsPer, Const, IsSame, Text)


def _sub_exprs(e, out: list) -> None:
    """:func:`sub_exprs` into one list (the passes walk every expression of every compile: a list made
    at each level and joined cost more than the walk)."""
    out.append(e)
    if isinstance(e, _LEAVES):
        return
    if isinstance(e, Bin):
        _sub_exprs(e.a, out)
        _sub_exprs(e.b, out)
    elif isinstance(e, Cond):
        _sub_exprs(e.c, out)
        _sub_exprs(e.a, out)
        _sub_exprs(e.b, out)
    elif isinstance(e, (Conv, Not)):
        _sub_exprs(e.x, out)
    elif isinstance(e, Brace):
        for x in e.items:
            _sub_exprs(x, out)
    elif isinstance(e, Elem):
        _sub_exprs(e.ref.offset, out)
        if not isinstance(e.index, int):
            _sub_exprs(e.index, out)
    elif isinstance(e, GmValue):
        _sub_exprs(e.gm.offset, out)


def vars_read(body) -> list[Var]:
    """Variables the statements of ``body`` read, first use first (nested statements included)."""
    seen: dict[Var, None] = {}
    for s in walk(body):
        for e in exprs(s):
            for x in sub_exprs(e):
                if isinstance(x, Var):
                    seen.setdefault(x)
    return list(seen)


def buffers(k: Kernel) -> list[Buf]:
    """Every buffer the kernel's statements touch, in first-touch order."""
    seen: dict[Buf, None] = {}
    for s in walk(k.process):
        if isinstance(s, Call):
            for b in (*s.writes, *s.reads):
                seen.setdefault(b)
        elif isinstance(s, Queue):
            seen.setdefault(s.buf)
        for e in exprs(s):
            for x in sub_exprs(e):
                if isinstance(x, Elem):
                    seen.setdefault(x.ref.buf)
    return list(seen)


# ----------------------------------------------------------------------------- verifier

class KirError(AssertionError):
    """A kernel IR invariant is broken (a backend bug, never a user error)."""


def verify(k: Kernel) -> Kernel:
    """Check the kernel IR's invariants; returns ``k``.

    * every variable is defined (Let, For, parameter of its stage, member) before it is read;
    * a view stays within its buffer's element type size, and views of one buffer agree on roles;
    * queue buffers are only touched between their ALLOC/DEQUE and their ENQUE/FREE;
    * synchronisation nodes appear only after the sync pass (``stages`` set), segments only before.
    """
    keys: dict[int, Buf] = {}
    for b in buffers(k):
        if keys.setdefault(b.key, b) != b:
            raise KirError(f"buffer key {b.key} names two buffers: {keys[b.key]} and {b}")
    staged = bool(k.stages)

    def check(body, scope: set, held: set) -> None:
        scope = set(scope)
        for s in body:
            if isinstance(s, While):  # its condition reads what its test defines
                check(s.test + (Let(Var(0, dtypes.bool_, "cond"), s.cond),) + s.body, scope, held)
                continue
            for e in exprs(s):
                for x in sub_exprs(e):
                    if isinstance(x, Var) and x.kind is VarKind.LOCAL and x not in scope:
                        raise KirError(f"{x} is read before it is defined")
                    if isinstance(x, Var) and x.kind is VarKind.MEMBER and x not in k.members:
                        raise KirError(f"{x} is not a member of {k.name}")
            if isinstance(s, Call):
                for r in s.refs:
                    if r.extent <= 0:
                        raise KirError(f"{s.api} touches an empty view of {r.buf.hint}")
                    if r.buf.role in (Role.INPUT, Role.OUTPUT) and staged and r.buf not in held:
                        raise KirError(f"{s.api} touches {r.buf.hint} outside its queue's hold")
            if isinstance(s, Queue):
                if s.op in (QOp.ALLOC, QOp.DEQUE):
                    held.add(s.buf)
                else:
                    held.discard(s.buf)
            if isinstance(s, Segment) and staged:
                raise KirError("a segment is left after staging")
            if isinstance(s, (Barrier, Flag)) and not staged:
                raise KirError("synchronisation before staging")
            if isinstance(s, Let):
                scope.add(s.var)
            if isinstance(s, For):
                check(s.body, scope | {s.var}, held)
            elif isinstance(s, If):
                check(s.body, scope, held)
                check(s.orelse, scope, held)
            elif isinstance(s, Segment):
                check(s.copy_in + s.compute + s.copy_out, scope, set())
            elif isinstance(s, Run):
                missing = [p for p in s.stage.params if p.kind is VarKind.LOCAL and p not in scope]
                if missing:
                    raise KirError(f"{s.stage.kind.value}{s.stage.index} takes {missing[0]} out of scope")
                check(s.stage.body, set(s.stage.params), set())
    check(k.process, set(), set())
    return k
