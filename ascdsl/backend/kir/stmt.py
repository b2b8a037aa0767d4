"""The kernel IR's statements, stages and the :class:`Kernel` (see :mod:`ascdsl.backend.kir`)."""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Union

from ...dtypes import DType
from ...errors import UNKNOWN, Loc
from .expr import BinOp, Buf, Const, Elem, Expr, Operand, Pipe, Ref, Var, _tuples


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
    step; ``var`` a :class:`.host.Ident` in host code, an ``int64_t``). ``independent``: iterations touch disjoint parts of every buffer (chunk loops of one API
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
    with ``static``). ``first``: the test of a loop's first trip around loop-invariant work
    (:mod:`.hoist`), whose results every later trip reads (the UB planner keeps them for the loop)."""

    cond: Expr
    body: tuple["Stmt", ...]
    loc: Loc = field(default=UNKNOWN, compare=False)
    orelse: tuple["Stmt", ...] = ()
    static: bool = False
    first: bool = False

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
    loc: Loc = UNKNOWN
    held: tuple[Buf, ...] = ()  # loads held in their queue buffer from their DeQue to the program's end (class
    # members; ``Process`` frees them last: :meth:`.selection.selector.Selector.holds`)
