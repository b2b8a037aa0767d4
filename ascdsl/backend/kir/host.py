"""The generated host code (the tiling and output-shape functions, :mod:`ascdsl.backend.host`) as data.

Expressions the kernel's lack: named variables and members, host literals (``int64_t``, ``double``,
strings), calls into the ``ascdsl_host`` runtime, logical chains; they combine with :class:`.Bin`,
:class:`.Cond`, :class:`.Conv`, :class:`.Not` and :class:`.Brace`. Statements: declarations, assignments,
``if``/``else if`` chains, ``throw`` and ``return``, beside the kernel's :class:`.For` and :class:`.Note`; and
the function's constants (an ``enum class``, a table). :mod:`.emit` prints them all.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Union

from .expr import Bin, Brace, CInt, Cond, Conv, Expr, Not, _tuples
from .stmt import For, Note


class HostType(enum.Enum):
    """The kinds of host values, each the C++ type that holds it (``OBJECT`` and ``TUPLE``: build-time Python
    values, which have none)."""

    INT = "int64_t"
    FLOAT = "double"
    BOOL = "bool"
    STR = "std::string"
    SHAPE = "ascdsl_host::Shape"
    DTYPE = "ascdsl_host::DType"
    KERNEL = "Kernel"  # the function's ``enum class`` of the kernels it names
    TENSOR = "ascdsl_host::TensorDesc"
    PLATFORM = "ascdsl_host::Platform"
    STATUS = "int32_t"  # a status another generated function returns
    OBJECT = "object"
    TUPLE = "tuple"

    @property
    def word(self) -> str:
        """The kind as messages name it: ``int``, ``tensor``..."""
        return self.name.lower()


@dataclass(frozen=True)
class Scoped:
    """``Type::name``: a member of an enumeration (a dtype, a kernel)."""

    scope: HostType
    name: str


class Runtime(enum.Enum):
    """Functions host code calls: the ``ascdsl_host`` runtime (``templates/host_runtime.h.j2``) and the
    standard library."""

    MAKE_SHAPE = "ascdsl_host::MakeShape"
    DIM = "ascdsl_host::Dim"
    SLICE = "ascdsl_host::Slice"
    CONCAT = "ascdsl_host::Concat"
    NUMEL = "ascdsl_host::Numel"
    SHAPE_EQ = "ascdsl_host::ShapeEq"
    DTYPE_SIZE = "ascdsl_host::DTypeSize"
    DTYPE_NAME = "ascdsl_host::DTypeName"
    FLOOR_DIV = "ascdsl_host::FloorDiv"
    FLOOR_MOD = "ascdsl_host::FloorMod"
    TRUE_DIV = "ascdsl_host::TrueDiv"
    CEIL_DIV = "ascdsl_host::CeilDiv"
    NEXT_POWER_OF_2 = "ascdsl_host::NextPowerOf2"
    ROUND_UP = "ascdsl_host::RoundUp"
    FITS_INT32 = "ascdsl_host::FitsInt32"
    FORMAT_INT = "ascdsl_host::FormatInt"
    FORMAT_FLOAT = "ascdsl_host::FormatFloat"
    FORMAT_BOOL = "ascdsl_host::FormatBool"
    FORMAT_SHAPE = "ascdsl_host::FormatShape"
    STRING = "std::string"
    MIN = "std::min"
    MAX = "std::max"
    ABS = "std::abs"
    LARGEST_BLOCK = "ascdsl_host::LargestBlock"
    LARGEST_FITTING = "ascdsl_host::LargestFitting"


@dataclass(frozen=True)
class Neg:
    """``-x``."""

    x: "HostExpr"


@dataclass(frozen=True)
class Invoke:
    """``fn<template>(args...)`` (``fn`` a string: a function the generated code defines)."""

    fn: "Runtime | str"
    args: tuple["HostExpr", ...]
    template: HostType | None = None

    def __post_init__(self):
        _tuples(self, "args")


@dataclass(frozen=True)
class Ident:
    """A C++ name: a host variable, parameter or constant, or a runtime constant."""

    name: str


@dataclass(frozen=True)
class Init:
    """``type{x}``: a conversion that may not narrow."""

    type: HostType
    x: "HostExpr"


@dataclass(frozen=True)
class Logic:
    """``a && b && ...`` (``every``) or ``a || b || ...``."""

    every: bool
    items: tuple["HostExpr", ...]

    def __post_init__(self):
        _tuples(self, "items")


@dataclass(frozen=True)
class Value:
    """A host literal: an ``int64_t``, a ``double``, a ``bool`` or a string."""

    value: Union[int, float, bool, str]


@dataclass(frozen=True)
class Member:
    """``x.name``."""

    x: "HostExpr"
    name: str


@dataclass(frozen=True)
class Paren:
    """``(x)``: the grouping host lowering writes around every compound expression it makes."""

    x: "HostExpr"


@dataclass(frozen=True)
class Index:
    """``x[i]``."""

    x: "HostExpr"
    i: "HostExpr"


@dataclass(frozen=True)
class Lambda:
    """``[&](int64_t param) { return result; }``: an argument of :attr:`Runtime.LARGEST_FITTING`."""

    param: Ident
    result: "HostExpr"


@dataclass(frozen=True)
class Bound:
    """``const type name = value`` as the condition of an ``if`` (the name lives in its branch)."""

    type: HostType
    name: Ident
    value: "HostExpr"


HostExpr = Union[Ident, Member, Scoped, Value, Invoke, Init, Paren, Neg, Logic, Index, Lambda, Bound, Expr]


class Passing(enum.Enum):
    """How a generated host function takes a parameter."""

    VALUE = "value"
    CONST_REF = "const reference"
    REF = "reference"  # an out-parameter
    POINTER = "pointer"  # to the first of an array the function fills


@dataclass(frozen=True)
class Argument:
    """A parameter in a generated host function's signature (``unused``: ``[[maybe_unused]]``; ``type`` a string:
    a struct the build names, the tiling struct)."""

    name: str
    type: "HostType | CInt | str"
    passing: Passing
    unused: bool = False


# ----------------------------------------------------------------------------- statements

class Status(enum.Enum):
    """What a generated host function returns: ``ascdsl_host::Status``'s members by name, with their codes
    (``templates/host_runtime.h.j2``)."""

    OK = 0
    VALUE_ERROR = 1
    TYPE_ERROR = 2
    HOST_ERROR = 3
    VARIANT_NOT_COMPILED = 4


class Storage(enum.Enum):
    """How a :class:`Declare` holds its value."""

    VARIABLE = ""  # assigned later
    CONST = "const "
    CONSTEXPR = "constexpr "


@dataclass(frozen=True)
class Declare:
    """``[storage] type name = value;`` (``name{}`` with no value; ``unused``: ``[[maybe_unused]]``), with an
    end-of-line comment ``note``."""

    type: HostType
    name: Ident
    value: "HostExpr | None" = None
    storage: Storage = Storage.CONST
    note: str = ""
    unused: bool = False


@dataclass(frozen=True)
class Assign:
    """``target = value;`` (with an end-of-line comment ``note``); ``target`` None: ``static_cast<void>(value);``,
    a value the function reads only to use it."""

    target: "HostExpr | None"
    value: "HostExpr"
    note: str = ""


@dataclass(frozen=True)
class Throw:
    """``throw HostError{status, message};``: the function returns ``status`` and ``message``."""

    status: Status
    message: "HostExpr"


@dataclass(frozen=True)
class Return:
    """``return value;`` (a :class:`Status`, or a status another function returned)."""

    value: "Status | HostExpr"


@dataclass(frozen=True)
class Branch:
    """``if (c0) { ... } else if (c1) { ... } else { orelse }`` over ``arms`` (``orelse`` None: no ``else``; no
    arms: the block ``{ orelse }``), with an end-of-line comment ``note`` on its first line."""

    arms: tuple[tuple["HostExpr", tuple], ...]
    orelse: tuple | None = None
    note: str = ""

    def __post_init__(self):
        object.__setattr__(self, "arms", tuple((c, tuple(b)) for c, b in self.arms))
        if self.orelse is not None:
            _tuples(self, "orelse")


@dataclass(frozen=True)
class Enum:
    """``enum class name { members };``."""

    name: str
    members: tuple[str, ...]

    def __post_init__(self):
        _tuples(self, "members")


@dataclass(frozen=True)
class Table:
    """``constexpr type name[] = { row,  // label ... };`` under the comment ``note``."""

    type: str
    name: Ident
    rows: tuple[tuple["HostExpr", str], ...]
    note: str = ""

    def __post_init__(self):
        _tuples(self, "rows")


def names_read(e) -> set[str]:
    """The C++ names (:class:`Ident`) host expression ``e`` reads: what the generated function must declare,
    and the parameters and variables it uses."""
    if isinstance(e, Ident):
        return {e.name}
    if isinstance(e, (Value, Scoped)):
        return set()
    if isinstance(e, (Member, Init, Paren, Neg, Conv, Not)):
        return names_read(e.x)
    if isinstance(e, Index):
        return names_read(e.x) | names_read(e.i)
    if isinstance(e, (Lambda, Bound)):
        return names_read(e.result if isinstance(e, Lambda) else e.value)
    if isinstance(e, (Invoke, Logic, Brace, Bin, Cond)):
        parts = (e.args if isinstance(e, Invoke) else e.items if isinstance(e, (Logic, Brace)) else
                 (e.a, e.b) if isinstance(e, Bin) else (e.c, e.a, e.b))
        return set().union(*(names_read(x) for x in parts))
    raise TypeError(f"not a host expression: {e!r}")


_READ = {Declare: lambda s: () if s.value is None else (s.value,),
         Assign: lambda s: (s.value,),  # its target is written (a variable, a tiling field)
         Throw: lambda s: (s.message,), Return: lambda s: () if isinstance(s.value, Status) else (s.value,),
         Branch: lambda s: tuple(c for c, _ in s.arms), Table: lambda s: tuple(r for r, _ in s.rows),
         For: lambda s: (s.start, s.stop, s.step), Note: lambda s: (), Enum: lambda s: ()}
"""The expressions each kind of host statement reads itself (not in the statements it nests)."""


def stmt_reads(s) -> set[str]:
    """The C++ names host statement ``s`` reads, in the statements it nests too."""
    nested = ([st for _, body in s.arms for st in body] + list(s.orelse or ()) if isinstance(s, Branch) else
              list(s.body) if isinstance(s, For) else [])
    return set().union(*(names_read(e) for e in _READ[type(s)](s)), *(stmt_reads(st) for st in nested))
