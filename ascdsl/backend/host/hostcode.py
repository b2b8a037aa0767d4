"""The vocabulary of host lowering: value kinds, lowered expressions, parameters and the function model.

A host value has one of a few kinds, the members of :class:`.kir.host.HostType` (``INT``, ``FLOAT``, ``BOOL``,
``STR``, ``SHAPE``, ``DTYPE``, ``KERNEL`` for a reference to an ``@ascdsl.jit`` function, a compile-time symbol,
``TENSOR``, ``PLATFORM``, and ``OBJECT``/``TUPLE`` for build-time Python values); :class:`E` is a
lowered expression (an expression node of :mod:`.kir.host`, its kind, and its value when it is known at build
time), which :func:`cpp` prints.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ... import dtypes
from ...errors import CompilationError, Loc, display_path
from ...op import Operator
from ..kir import Brace
from ..kir.host import Argument, HostType, Invoke, Passing, Runtime, Scoped, Value
from ..names import naming
from ..names.naming import unclash
from ..render import jinja
from ..render.emit import host_arguments, host_expr, host_lines, host_signature

MAX_DIMS = 8
DTYPE_ENUM = {d.name: d.name.upper().rstrip("_") for d in dtypes.ALL}

INT, FLOAT, BOOL, STR, SHAPE, DTYPE, KERNEL = (HostType.INT, HostType.FLOAT, HostType.BOOL, HostType.STR,
                                              HostType.SHAPE, HostType.DTYPE, HostType.KERNEL)
TENSOR, PLATFORM, OBJECT, TUPLE = HostType.TENSOR, HostType.PLATFORM, HostType.OBJECT, HostType.TUPLE
VARIABLE = frozenset({INT, FLOAT, BOOL, STR, SHAPE, DTYPE, KERNEL})
"""The kinds a C++ variable of the generated function can hold."""
ATTR_KIND = {"Int": INT, "Float": FLOAT, "Bool": BOOL, "ListInt": SHAPE, "String": STR}
FORMAT = {INT: Runtime.FORMAT_INT, FLOAT: Runtime.FORMAT_FLOAT, BOOL: Runtime.FORMAT_BOOL, SHAPE: Runtime.FORMAT_SHAPE,
          DTYPE: Runtime.DTYPE_NAME}
CPP_KEYWORDS = naming.CPP_KEYWORDS | jinja.declared_names("host_runtime.h.j2") | frozenset(
    ["tiling", "blockDim", "message", "shapes", "Kernel", "programs", "blocks", "std", "int32_t", "int64_t",
     "uint32_t", "INT64_C"])
"""Names a host variable cannot have in C++ (it gets a ``_`` suffix): keywords, the ``ascdsl_host`` runtime's
(``templates/host_runtime.h.j2``, which the body uses unqualified), and the names the generated body declares
or uses itself."""
NOT_CONST = object()


@dataclass(frozen=True)
class Param:
    """One parameter of a generated host function: its name, what it carries and its kind of value."""

    name: str
    kind: str  # "tensor", "attr" or "platform"
    type: HostType
    attr_type: str = ""  # the OpDef type of an attribute

    def argument(self, used: frozenset[str]) -> Argument:
        """Its declaration (``used``: the parameters the body reads): an int, float or bool by value, the rest
        by const reference."""
        passing = Passing.VALUE if self.type in (INT, FLOAT, BOOL) else Passing.CONST_REF
        return Argument(cpp_name(self.name), self.type, passing, self.name not in used)


PLATFORM_PARAM = Param("platform", "platform", PLATFORM)
MESSAGE = Argument("message", STR, Passing.REF)


class Signed:
    """A generated function's ``signature``: ``inline int32_t name(arguments...)``, as lines."""

    name: str

    @property
    def arguments(self) -> tuple[str, ...]:
        raise NotImplementedError

    @property
    def signature(self) -> tuple[str, ...]:
        return host_signature("inline int32_t", self.name, self.arguments)


@dataclass(frozen=True)
class HostFunction(Signed):
    """One generated function: its signature, and its constants, locals and body as host statements
    (:mod:`.kir.host`), which the ``*_lines`` properties render."""

    name: str
    params: tuple[Param, ...]
    results: tuple[Argument, ...]  # the out-parameters besides the message
    constants: tuple
    locals: tuple
    body: tuple
    used: frozenset[str] = frozenset()  # the parameters the body reads

    @property
    def arguments(self) -> tuple[str, ...]:
        return declare(self.params, self.used, *self.results)

    @property
    def constant_lines(self) -> tuple[str, ...]:
        return host_lines(self.constants)

    @property
    def local_lines(self) -> tuple[str, ...]:
        return host_lines(self.locals)

    @property
    def body_lines(self) -> tuple[str, ...]:
        """The body, under ``using namespace ascdsl_host`` (and inside a ``try``)."""
        return host_lines(self.body, depth=1, qualified=False)


def declare(params: Sequence[Param], used: frozenset[str], *results: Argument) -> tuple[str, ...]:
    """The declarations of a function's ``params`` (``used``: those its body reads), then of its out-parameters
    ``results`` and ``message``."""
    return host_arguments(tuple(p.argument(used) for p in params) + results + (MESSAGE,))


@dataclass(frozen=True)
class E:
    """A lowered expression: its node, its kind, and its value when known at build time (a value of no host
    kind, ``object`` or ``tuple``, has no node)."""

    node: Any
    type: HostType
    const: Any = NOT_CONST

    @property
    def is_const(self) -> bool:
        return self.const is not NOT_CONST


def cpp(value: E) -> str:
    """The C++ text of a lowered expression."""
    return host_expr(value.node)


def dtype_value(name: str) -> Scoped:
    return Scoped(HostType.DTYPE, DTYPE_ENUM[dtypes.lookup(name).name])


def dtype_enum(name: str) -> str:
    return host_expr(dtype_value(name))


def is_kernel(obj) -> bool:
    """An ``@ascdsl.jit`` function (what ``ascdsl.Launch`` takes)."""
    return hasattr(obj, "parsed") and hasattr(obj, "specialize")


def fixed_params(op: Operator, fn: Callable) -> dict[str, Any]:
    """Parameters of ``fn`` that are neither inputs, attributes nor ``platform`` but have a default:
    the generated C++ is specialised for that default (the Python entry may pass other values)."""
    attrs = {a.name for a in op.attrs}
    return {name: p.default for name, p in inspect.signature(fn).parameters.items()
            if name not in op.inputs and name not in attrs and name != "platform"
            and p.default is not inspect.Parameter.empty}


def signature(op: Operator, fn: Callable) -> tuple[Param, ...]:
    """The C++ parameters of ``fn`` (the op's host function or an output-shape function)."""
    attrs = {a.name: a for a in op.attrs}
    fixed = fixed_params(op, fn)
    params = []
    for name in inspect.signature(fn).parameters:
        if name in op.inputs:
            params.append(tensor_param(name))
        elif name in attrs:
            params.append(Param(name, "attr", ATTR_KIND[attrs[name].type], attrs[name].type))
        elif name == "platform":
            params.append(PLATFORM_PARAM)
        elif name not in fixed:
            raise CompilationError(fn_loc(fn), f"parameter {name!r} of {fn.__name__} is not an input, an "
                                   "attribute or `platform`", hint="declare it in Operator(inputs=..., attrs=...), "
                                   "or give it a default (the generated C++ is specialised for it)")
    return tuple(params)


def tensor_param(name: str) -> Param:
    return Param(name, "tensor", TENSOR)


def fn_loc(fn: Callable) -> Loc:
    fn = inspect.unwrap(fn)
    return Loc(display_path(inspect.getsourcefile(fn) or "<unknown>"), fn.__code__.co_firstlineno, 1)


def cpp_name(name: str) -> str:
    """The C++ name of a host variable or parameter ``name`` (:func:`.naming.unclash` of the names above)."""
    return unclash(name, CPP_KEYWORDS)


def literal(value) -> E:
    """The lowered form of a build-time Python value (kind ``object`` or ``tuple`` if it has none)."""
    if isinstance(value, bool):
        return E(Value(value), BOOL, value)
    if isinstance(value, int) and -2**63 <= value < 2**63:  # int64_t: a larger int has no C++ form
        return E(Value(value), INT, value)
    if isinstance(value, (float, str)):
        return E(Value(value), FLOAT if isinstance(value, float) else STR, value)
    if isinstance(value, dtypes.DType):
        return E(dtype_value(value.name), DTYPE, value)
    if isinstance(value, tuple) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return E(Invoke(Runtime.MAKE_SHAPE, (Brace(tuple(Value(v) for v in value)),)), SHAPE, value)
    if isinstance(value, tuple):
        return E(None, TUPLE, value)
    if is_kernel(value):
        return E(Scoped(HostType.KERNEL, value.parsed.name), KERNEL, value)
    return E(None, OBJECT, value)


def camel(name: str) -> str:
    """``snake_case`` as ``CamelCase`` (for generated C++ names)."""
    return "".join(w.capitalize() for w in name.split("_"))
