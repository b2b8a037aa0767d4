"""Expressions of the generated host code (the tiling and output-shape functions, :mod:`ascdsl.backend.host`)
that the kernel's expressions lack: named variables and members, host literals (``int64_t``, ``double``,
strings), calls into the ``ascdsl_host`` runtime, logical chains. They combine with :class:`.Bin`,
:class:`.Cond`, :class:`.Conv`, :class:`.Not` and :class:`.Brace`; :mod:`.emit` prints them.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Union

from .expr import Bin, Brace, Cond, Conv, Expr, Not, _tuples


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


@dataclass(frozen=True)
class Neg:
    """``-x``."""

    x: "HostExpr"


@dataclass(frozen=True)
class Invoke:
    """``fn<template>(args...)``."""

    fn: Runtime
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


HostExpr = Union[Ident, Member, Scoped, Value, Invoke, Init, Paren, Neg, Logic, Expr]


def names_read(e) -> set[str]:
    """The C++ names (:class:`Ident`) host expression ``e`` reads: what the generated function must declare,
    and the parameters and variables it uses."""
    if isinstance(e, Ident):
        return {e.name}
    if isinstance(e, (Value, Scoped)):
        return set()
    if isinstance(e, (Member, Init, Paren, Neg, Conv, Not)):
        return names_read(e.x)
    if isinstance(e, (Invoke, Logic, Brace, Bin, Cond)):
        parts = (e.args if isinstance(e, Invoke) else e.items if isinstance(e, (Logic, Brace)) else
                 (e.a, e.b) if isinstance(e, Bin) else (e.c, e.a, e.b))
        return set().union(*(names_read(x) for x in parts))
    raise TypeError(f"not a host expression: {e!r}")
