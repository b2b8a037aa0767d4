"""The operator protocol: what a file in ``ops/`` declares.

``OP = ascdsl.Operator(name=..., op_type=..., entry=..., host=..., reference=..., cases=[...])``

* ``entry`` — the user-facing function (``backend=``/``platform=`` keywords), wrapped by
  :func:`entry`: NumPy arrays or PyTorch tensors in (any strides, bf16 included), the same kind out;
* ``host`` — an :func:`host` function: validates inputs (described by :class:`TensorDesc`) and
  returns the :class:`Launch` plan, like a CANN op_host TilingFunc;
* ``reference`` — the NumPy golden model, called on float64 copies of the inputs;
* ``cases`` — :class:`Case` rows that ``ascdsl check`` and ``ascdsl.testing.verify`` run.
"""
from __future__ import annotations

import ast
import contextlib
import functools
import importlib.util
import inspect
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from . import dtypes, names, record, scratch, tensors
from .errors import (UNKNOWN, CompilationError, DeclarationError, Error, InputTypeError, InputValueError, Loc,
                     UBOverflowError, caller_site, display_path, raised_in_package, source_file)
from .backend.render.jinja import render_file as render_template  # an op's own templates
from .ir import Module


@dataclass(frozen=True)
class TensorDesc:
    """What host code may know about a tensor: its shape and dtype (never its data)."""

    shape: tuple[int, ...]
    dtype: dtypes.DType

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @staticmethod
    def of(array: np.ndarray) -> "TensorDesc":
        try:
            dtype = dtypes.from_numpy(array.dtype)
        except KeyError:
            raise InputTypeError(f"unsupported dtype {array.dtype}") from None
        return TensorDesc(tuple(int(s) for s in array.shape), dtype)


@dataclass(frozen=True)
class Launch:
    """A launch plan: which kernel, on which grid, with which constexprs and runtime scalars.

    ``scratch`` binds pointer parameters of the kernel to GM scratch the launch owns, by name:
    ``scratch={"partials_ptr": (tl.float32, rows * parts)}`` (a language dtype and an element count).
    Each launch gets fresh scratch whose contents are undefined (the Python entry fills it with NaN, or
    0xAB bytes for integers, so a kernel reading what it never wrote shows it); the op project carves it
    out of the user workspace. Scratch parameters come after the pointers the arrays fill."""

    kernel: Any
    grid: tuple[int, ...]
    constexprs: dict = field(default_factory=dict)
    scalars: dict = field(default_factory=dict)
    variant: str = "default"
    site: Loc = field(default=UNKNOWN, compare=False, repr=False)  # the host line that made it
    scratch: dict = field(default_factory=dict, kw_only=True)

    def __post_init__(self):
        if self.site is UNKNOWN:
            object.__setattr__(self, "site", caller_site(2))  # past the dataclass's __init__
        self._check_scratch()

    def _check_scratch(self) -> None:
        """A :class:`CompilationError` at :attr:`site` for a bad scratch (:func:`.scratch.problem`); a
        :class:`DeclarationError` (an :class:`InputValueError` too, as the tiling function's VALUE_ERROR) for a
        negative count, which depends on the inputs."""
        message = scratch.problem(getattr(self.kernel, "parsed", None), self.scratch, self.constexprs, self.scalars)
        if message is not None:
            raise CompilationError(self.site, message)
        for name, (_, count) in self.scratch.items():
            if count < 0:
                raise DeclarationError(self.site, scratch.negative(name, int(count)))

    def scratch_bytes(self) -> dict[str, int]:
        """The bytes of each scratch in the op project's user workspace, by name (:func:`.scratch.size`), in the
        order the workspace holds them: the kernel's parameter order."""
        order = self.kernel.parsed.params
        return {name: scratch.size(int(count) * dtype.itemsize)
                for name, (dtype, count) in sorted(self.scratch.items(), key=lambda kv: order.index(kv[0]))}

    def check_arrays(self, given: int) -> None:
        """A located error where ``given`` arrays, filling the kernel's first parameters, fill a scratch one too."""
        for name in self.scratch:
            if self.kernel.parsed.params.index(name) < given:
                raise CompilationError(self.site, f"scratch {name!r} is also given as an array (the arrays fill the "
                                       f"kernel's first {given} parameters)",
                                       "scratch parameters come after the pointers the arrays fill")

    def __call__(self, *arrays, backend: str | None = None, platform: str | None = None) -> None:
        """Run the kernel on ``arrays`` (its pointer arguments, in order) and the launch's fresh scratch; no-op
        on an empty grid. A UB overflow of the kernel is located at the host line that made this plan
        (:attr:`site`)."""
        if 0 in self.grid:
            return
        self.check_arrays(len(arrays))
        fresh = {name: scratch.poisoned(dtype, int(count)) for name, (dtype, count) in self.scratch.items()}
        with record.kernels() as launched:
            try:
                self.kernel[self.grid](*arrays, **fresh, **self.scalars, **self.constexprs,
                                       backend=backend, platform=platform)
            except UBOverflowError as e:
                raise self.overflow(e) from None
        for kernel in launched[:1]:
            PLANS.publish((self, kernel))

    def overflow(self, e: UBOverflowError) -> UBOverflowError:
        """``e`` (the kernel's UB overflow) located at this plan's host line, naming its constexprs."""
        if e.loc == self.site:
            return e
        name = getattr(getattr(self.kernel, "parsed", None), "name", getattr(self.kernel, "__name__", "the kernel"))
        return e.at_launch(self.site, name, self.constexprs)


PLANS: record.Channel[tuple[Launch, Any]] = record.Channel()
plans = PLANS.collect  # every launch plan run inside, with the kernel specialisation it launched


@dataclass(frozen=True)
class Case:
    """A verification case: input shapes (one per tensor input), a dtype and entry attributes."""

    shapes: tuple[tuple[int, ...], ...]
    dtype: str = "float32"
    attrs: tuple[tuple[str, Any], ...] = ()
    seed: int = 0

    def __init__(self, *shapes, dtype: str = "float32", seed: int = 0, **attrs):
        object.__setattr__(self, "shapes", tuple(tuple(s) for s in shapes))
        object.__setattr__(self, "dtype", dtype)
        object.__setattr__(self, "attrs", tuple(attrs.items()))
        object.__setattr__(self, "seed", seed)

    @property
    def label(self) -> str:
        shapes = " ".join("x".join(map(str, s)) or "scalar" for s in self.shapes)
        attrs = "".join(f" {k}={v}" for k, v in self.attrs)
        return f"{shapes} {self.dtype}{attrs}"

    def inputs(self) -> tuple[np.ndarray, ...]:
        """Deterministic standard-normal inputs of the case's shapes and dtype."""
        rng = np.random.default_rng(self.seed)
        dt = dtypes.lookup(self.dtype).np
        return tuple(rng.standard_normal(s).astype(np.float32).astype(dt) for s in self.shapes)


ATTR_TYPES = {"Int": int, "Float": float, "Bool": bool, "ListInt": tuple, "String": str}


@dataclass(frozen=True)
class Attr:
    """An operator attribute: ``name``, its OpDef type (``Int``, ``Float``, ``Bool``, ``ListInt`` or
    ``String``) and its default (``None``: the attribute is required)."""

    name: str
    type: str = "Int"
    default: Any = None

    def __post_init__(self) -> None:
        with declared(caller_site(2)):  # the Attr(...) call, past the dataclass's __init__
            names.identifier(self.name, "attribute name")
            if self.type == "String" and self.default is not None:
                names.text(self.default, f"attribute {self.name!r}: the default")
            if self.type not in ATTR_TYPES:
                raise InputValueError(f"attribute {self.name!r}: type must be one of {', '.join(ATTR_TYPES)}, "
                                      f"not {self.type!r}")


@contextlib.contextmanager
def declared(site: Loc):
    """Inside, a bad value of a declaration (an :class:`InputValueError` of :mod:`.names`) is a
    :class:`DeclarationError` at ``site``, the user's line that declared it."""
    try:
        yield
    except DeclarationError:
        raise
    except InputValueError as e:
        raise DeclarationError(site, str(e)) from None


@dataclass(frozen=True)
class Output:
    """An output tensor. ``shape`` is the name of the input whose shape it has (default: the first
    input) or an :func:`host` function of the inputs and attributes that returns the shape tuple;
    ``dtype`` is the name of the input whose dtype it has (default: the first input) or a dtype name."""

    name: str
    shape: str | Callable | None = None
    dtype: str | None = None


@dataclass(frozen=True)
class Operator:
    """An operator. The signature fields are optional: ``inputs`` default to the host function's
    parameters that are neither attributes nor ``platform``; ``outputs`` to one ``Output("out")``;
    ``dtypes`` to float32, float16 and bfloat16. Each entry of ``dtypes`` is one supported dtype
    combination: a dtype name for every tensor alike, or a tuple (inputs, then outputs).
    The kernels take their pointers in the order inputs, then outputs. ``notes`` (Markdown) go into the
    op project's README: say there what only the Python entry offers.

    ``sample`` makes a case's input arrays (``sample(case)``; default :meth:`Case.inputs`, standard
    normal): give one when the op's inputs have a domain, so that verification runs on data like the
    op's real inputs (a log-softmax gradient's ``output`` is a log-softmax).

    ``error_scale`` gives, per output, the magnitude its error is judged against: an output matches
    when ``|got - expected| <= atol + rtol * scale`` with the dtype's tolerances (default ``|expected|``,
    see :func:`ascdsl.testing.close`). It takes the inputs (float64 copies) and attributes as
    ``reference`` does and returns one array per output, or None for ``|expected|``. Give one when an
    output cancels large terms: ``grad - p * sum(grad)`` is only as accurate as ``|grad| + p * sum|grad|``,
    which no float32 sum resolves better.

    ``project_op_type`` is the OpType the CANN op project registers (OpDef class, msopgen JSON,
    ``aclnn<OpType>``, op_kernel entry). It defaults to :func:`project_op_type` of ``op_type``: a
    ``Custom`` suffix, so a custom op never shadows a CANN built-in of the same name (``SoftmaxGrad``
    is registered as ``SoftmaxGradCustom``). Name it explicitly to register another OpType."""

    name: str
    op_type: str
    entry: Callable
    host: Callable
    reference: Callable
    cases: tuple[Case, ...] = ()
    inputs: tuple[str, ...] | None = None
    outputs: tuple[Output | str, ...] = ("out",)
    attrs: tuple[Attr, ...] = ()
    dtypes: tuple[str | tuple[str, ...], ...] = ("float32", "float16", "bfloat16")
    notes: str = ""  # what the op project serves beyond its signature (for the generated README)
    project_op_type: str | None = None
    sample: Callable | None = None
    error_scale: Callable | None = None

    @property
    def tensor_count(self) -> int:
        """The pointers the op passes a kernel: one per input and output."""
        return len(self.inputs) + len(self.outputs)

    def inputs_of(self, case: Case) -> tuple[np.ndarray, ...]:
        """The input arrays of ``case``: :attr:`sample` of it, or its standard-normal inputs."""
        return case.inputs() if self.sample is None else tuple(self.sample(case))

    def __post_init__(self) -> None:
        site = caller_site(2)  # the Operator(...) call, past the dataclass's __init__
        self._check_fields(site)
        with declared(site):
            self._normalise()

    def _normalise(self) -> None:
        """The fields in their normal form, their names and dtype combinations checked (a bad one is an
        :class:`InputValueError`)."""
        names.identifier(self.name, "the operator name")
        names.op_type(self.op_type)
        if self.project_op_type is None:
            object.__setattr__(self, "project_op_type", project_op_type(self.op_type))
        names.op_type(self.project_op_type, "project_op_type")
        object.__setattr__(self, "entry", entry(self.entry))
        object.__setattr__(self, "cases", tuple(self.cases))
        object.__setattr__(self, "attrs", tuple(self.attrs))
        object.__setattr__(self, "outputs", tuple(o if isinstance(o, Output) else Output(o)
                                                  for o in self.outputs))
        if self.inputs is None:
            skip = {a.name for a in self.attrs} | {"platform"}
            params = inspect.signature(self.host).parameters
            object.__setattr__(self, "inputs", tuple(p for p in params if p not in skip))
        object.__setattr__(self, "inputs", tuple(self.inputs))
        tensors = len(self.inputs) + len(self.outputs)
        combos = tuple((d,) * tensors if isinstance(d, str) else tuple(d) for d in self.dtypes)
        for combo in combos:
            if len(combo) != tensors:
                raise InputValueError(f"{self.name}: dtype combination {combo} needs {tensors} entries "
                                      "(inputs, then outputs)")
        object.__setattr__(self, "dtypes", combos)
        for kind, tensors in (("input", self.inputs), ("output", [o.name for o in self.outputs])):
            for name in tensors:
                names.identifier(name, f"{self.name}: {kind} name")
        every = [*self.inputs, *(o.name for o in self.outputs), *(a.name for a in self.attrs)]
        if len(set(every)) != len(every):
            raise InputValueError(f"{self.name}: input, output and attribute names must be distinct")
        for o in self.outputs:
            inputs = ", ".join(self.inputs)
            if isinstance(o.shape, str) and o.shape not in self.inputs:
                raise InputValueError(f"{self.name}: output {o.name!r}: shape={o.shape!r} names no input "
                                      f"(inputs: {inputs})")
            if o.dtype is not None and o.dtype not in self.inputs and o.dtype not in dtypes.BY_NAME:
                raise InputValueError(f"{self.name}: output {o.name!r}: dtype={o.dtype!r} names no input "
                                      f"(inputs: {inputs}) and no dtype")

    def _check_fields(self, site: Loc) -> None:
        """The kinds of the declaration's fields, located at the ``Operator(...)`` call (``site``); the names
        are checked as they enter (:mod:`.names`)."""
        def fail(message: str, hint: str | None = None):
            raise CompilationError(site, f"{self.name}: {message}", hint)
        if not _is_function(self.host):
            fail(f"host must be an @ascdsl.host function, got {self.host!r}")
        for name in ("sample", "error_scale"):
            if not (getattr(self, name) is None or callable(getattr(self, name))):
                fail(f"{name} must be a function, got {getattr(self, name)!r}")
        if isinstance(self.inputs, str) or isinstance(self.outputs, (str, Output)):
            fail("inputs and outputs are tuples of names", 'write inputs=("x",), not inputs="x"')
        if "platform" in (*(self.inputs or ()), *(getattr(a, "name", None) for a in self.attrs)):
            fail("`platform` is the host function's platform parameter: no input or attribute may take the name")
        for a in self.attrs:
            if not isinstance(a, Attr):
                fail(f"attrs are ascdsl.Attr(name, type, default), got {a!r}")
        for o in self.outputs:
            if not isinstance(o, (Output, str)):
                fail(f"outputs are names or ascdsl.Output(name, shape=..., dtype=...), got {o!r}")
            if isinstance(o, Output) and not (o.shape is None or isinstance(o.shape, str) or _is_function(o.shape)):
                fail(f"output {o.name!r}: shape is the name of an input or a function of the inputs and attributes "
                     f"that returns the shape, got {o.shape!r}", "shape=lambda x: (x.shape[0], 1)")
            if isinstance(o, Output) and o.dtype is not None and not isinstance(o.dtype, str):
                fail(f"output {o.name!r}: dtype is the name of an input or of a dtype, got {o.dtype!r}")
        if isinstance(self.dtypes, str):
            fail("dtypes is a tuple of dtype combinations", f"write dtypes=({self.dtypes!r},)")
        for combo in self.dtypes:
            for name in (combo,) if isinstance(combo, str) else combo if isinstance(combo, (tuple, list)) else (combo,):
                if name not in dtypes.BY_NAME:
                    fail(f"dtypes: {name!r} is not a dtype name", f"dtypes: {', '.join(d.name for d in dtypes.ALL)}")

    def opdef_attrs(self, case: Case) -> dict | None:
        """The OpDef attribute values of ``case`` (defaults filled in), or None when the case uses what
        only the Python entry takes: an argument that is no attribute (such as ``format``) or a value of
        another type (such as a list of axes for an ``Int``). Builds collect and verify such cases only."""
        attrs = {a.name: a for a in self.attrs}
        values = {a.name: a.default for a in self.attrs}
        for name, value in case.attrs:
            if name not in attrs or not _is_attr_value(attrs[name].type, value):
                return None
            values[name] = value
        return values

    def output_dtype(self, output: Output, inputs: tuple[TensorDesc, ...]) -> dtypes.DType:
        """The dtype of ``output`` for input descriptions ``inputs``."""
        source = output.dtype or self.inputs[0]
        if source in self.inputs:
            return inputs[self.inputs.index(source)].dtype
        return dtypes.lookup(source)

    def output_shape(self, output: Output, inputs: tuple[TensorDesc, ...], attrs: dict) -> tuple[int, ...]:
        """The shape of ``output`` for input descriptions ``inputs`` and attribute values ``attrs``."""
        if callable(output.shape):
            return tuple(output.shape(**self.arguments(output.shape, inputs, attrs)))
        return inputs[self.inputs.index(output.shape or self.inputs[0])].shape

    def arguments(self, fn: Callable, inputs: tuple[TensorDesc, ...], attrs: dict, platform=None) -> dict:
        """The arguments of host or output-shape function ``fn`` by name: the inputs and attributes it takes
        (it may take a few of them, in any order), and ``platform``; a parameter with a default that is
        none of these keeps its default, as in the generated C++."""
        given = {**dict(zip(self.inputs, inputs)), **attrs, "platform": platform}
        params = inspect.signature(fn).parameters
        for name, param in params.items():
            if name not in given and param.default is inspect.Parameter.empty:
                raise self._unbound(fn, name, len(inputs))
        return {p: given[p] for p in params if p in given}

    def _unbound(self, fn: Callable, name: str, given: int) -> CompilationError:
        """The located error for a parameter of ``fn`` that neither the inputs nor the attributes give."""
        path, tree = host_source(fn)
        where = next((a for a in tree.args.args + tree.args.kwonlyargs if a.arg == name), tree)
        role = (f"takes it for input tensor {self.inputs.index(name) + 1} of ({', '.join(self.inputs)}), and a "
                f"case gives {given} input shape{'s' * (given != 1)}") if name in self.inputs else \
            "has no input or attribute of that name"
        return CompilationError(Loc(path, where.lineno, where.col_offset + 1),
                                f"`{inspect.unwrap(fn).__name__}` takes `{name}`, which the op cannot give it: the op {role}",
                                hint="a host parameter that is no tensor is an attribute: declare it in "
                                     "Operator(attrs=...)")


def _is_function(fn) -> bool:
    """A ``def`` or a lambda (through decorators): what host and output-shape code is translated from."""
    fn = inspect.unwrap(fn) if callable(fn) else None
    return inspect.isfunction(fn) or inspect.ismethod(fn)


def project_op_type(op_type: str) -> str:
    """The default OpType of an op project: ``op_type`` with the suffix ``Custom`` (unless it has it),
    CANN's convention for custom operators (``AddCustom``), which no built-in operator uses."""
    return op_type if op_type.endswith("Custom") else op_type + "Custom"


def _is_attr_value(kind: str, value) -> bool:
    if kind == "ListInt":
        return isinstance(value, (tuple, list)) and all(_is_attr_value("Int", v) for v in value)
    if kind == "Int":
        return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    if kind == "Float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, ATTR_TYPES[kind])


# ----------------------------------------------------------------------------- entry functions

def entry(fn: Callable) -> Callable:
    """Mark ``fn`` as an op's user-facing function (:class:`Operator` applies it to ``entry`` too).

    ``fn`` sees C-contiguous NumPy arrays only: NumPy views of any strides are copied contiguous,
    PyTorch tensors (CPU or not, ``torch.bfloat16`` as ``ml_dtypes.bfloat16``) become NumPy arrays.
    What ``fn`` returns (an array or a tuple of arrays) goes back as NumPy, or as torch tensors on the
    first tensor argument's device when any argument was a torch tensor.
    """
    if getattr(fn, "__ascdsl_entry__", False):
        return fn

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        like = next((a for a in (*args, *kwargs.values()) if tensors.is_torch(a)), None)
        result = fn(*map(tensors.to_numpy, args), **{k: tensors.to_numpy(v) for k, v in kwargs.items()})
        return result if like is None else tensors.to_torch(result, like)

    wrapper.__ascdsl_entry__ = True
    return wrapper


# ----------------------------------------------------------------------------- host functions

_HOST_NODES = (
    ast.FunctionDef, ast.arguments, ast.arg, ast.Return, ast.Assign, ast.AugAssign, ast.If,
    ast.IfExp, ast.Raise, ast.Compare, ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Call, ast.keyword,
    ast.Name, ast.Constant, ast.Attribute, ast.Subscript, ast.Tuple, ast.List, ast.Dict, ast.For,
    ast.Expr, ast.Load, ast.Store, ast.Pass, ast.JoinedStr, ast.FormattedValue, ast.Slice,
    ast.boolop, ast.operator, ast.unaryop, ast.cmpop,
)
_HOST_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.Div, ast.USub, ast.Not,
                   ast.And, ast.Or, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In,
                   ast.NotIn, ast.Is, ast.IsNot)


def host(fn: Callable) -> Callable:
    """Mark ``fn`` as an op's host function (the op_host TilingFunc of the operator).

    The body is restricted to a scalar subset that lowers to C++: integer arithmetic,
    ``min``/``max``/``cdiv``, ``if``/``else`` on shapes, dtypes and attributes, ``for`` over
    ``range``, ``raise ValueError(...)``/``TypeError(...)``, and ``return ascdsl.Launch(...)``; it may call
    other ``@ascdsl.host`` functions as helpers (``x = helper(...)``, ``a, b = helper(...)``; a helper ends in
    its one ``return``), which the C++ inlines.
    ``ValueError``/``TypeError`` raised inside reach callers as :class:`ascdsl.InputValueError` /
    :class:`ascdsl.InputTypeError`.
    """
    _check_host_subset(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (InputValueError, InputTypeError):
            raise
        except (TypeError, ValueError) as e:
            if raised_in_package(e) and not isinstance(e, Error):  # ascdsl's own failure, not the input's
                raise
            raise (InputTypeError if isinstance(e, TypeError) else InputValueError)(str(e)) from None

    wrapper.__ascdsl_host__ = True
    return wrapper


def host_source(fn: Callable) -> tuple[str, ast.FunctionDef | ast.Lambda]:
    """The file of a host or output-shape function ``fn`` (a ``def`` or a ``lambda``) and its syntax tree,
    parsed from the whole file so that node positions are file positions (a lambda may sit inside a call
    that spans lines)."""
    fn = inspect.unwrap(fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        raise CompilationError(caller_site(), f"{fn!r} is not a Python function: host and output-shape "
                               "functions are `def`s or lambdas that ascdsl translates from their source")
    path = source_file(code.co_filename)
    try:
        lines, _ = inspect.findsource(fn)
        tree = ast.parse("".join(lines))
    except (OSError, SyntaxError):
        raise CompilationError(Loc(path, code.co_firstlineno, 1), f"cannot read the source of `{fn.__name__}`: "
                               "ascdsl translates host code from its source, so define it in a .py file") from None
    params = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    found = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.Lambda)) and _defines(n, code)
             and [a.arg for a in n.args.args + n.args.kwonlyargs] == params]
    # lambdas on one line: the one whose body spans the code's instructions
    spans = [(line, col, end, end_col) for line, end, col, end_col in code.co_positions() if end_col]
    found = [n for n in found if isinstance(n, ast.FunctionDef) or all(
        (n.body.lineno, n.body.col_offset) <= (line, col)
        and (end, end_col) <= (n.body.end_lineno, n.body.end_col_offset) for line, col, end, end_col in spans)]
    if not found:
        raise CompilationError(Loc(path, code.co_firstlineno, 1), f"cannot find the source of `{fn.__name__}` in "
                               f"{display_path(path)}: ascdsl translates host code from its source")
    return path, min(found, key=lambda n: (n.end_lineno - n.lineno, n.end_col_offset - n.col_offset))


def _defines(node: ast.FunctionDef | ast.Lambda, code) -> bool:
    """Whether ``node`` is where ``code`` was defined (a decorated ``def``'s code starts at its first decorator)."""
    if isinstance(node, ast.Lambda):
        return code.co_name == "<lambda>" and node.lineno == code.co_firstlineno
    first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
    return node.name == code.co_name and first == code.co_firstlineno


def _check_host_subset(fn: Callable) -> None:
    path, tree = host_source(fn)
    statements = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}  # docstrings: never emitted
    for node, where in _walk_located(tree):
        loc = Loc(path, where.lineno, where.col_offset + 1)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in statements:
            try:
                names.text(node.value, "a string in host code")
            except InputValueError as e:
                raise CompilationError(loc, str(e), hint="host messages become C++ string literals: keep "
                                       "them to printable text on one line") from None
        bad = not isinstance(node, _HOST_NODES) or (
            isinstance(node, (ast.operator, ast.unaryop, ast.cmpop, ast.boolop))
            and not isinstance(node, _HOST_OPERATORS))
        if bad:
            raise CompilationError(
                loc, f"'{type(node).__name__}' is not allowed in an @ascdsl.host function",
                hint="host code is a scalar subset that lowers to C++: use arithmetic, min/max/cdiv, "
                     "if/else, for over range, raise ValueError(...) and return ascdsl.Launch(...)")


# ----------------------------------------------------------------------------- op files

def load_operators(paths) -> list[Operator]:
    """The ``OP`` of every op file in ``paths`` (files, or folders whose ``*.py`` are op files)."""
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files += sorted(f for f in p.glob("*.py") if not f.name.startswith("_"))
        elif p.is_file():
            files.append(p)
        else:
            raise InputValueError(f"{p}: no such file or folder")
    ops = []
    for f in files:
        spec = importlib.util.spec_from_file_location(f"ascdsl_ops.{f.stem}", f)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Error:
            raise
        except Exception as e:  # the op file's own mistake: say where, in one line
            raise Error(_op_file_failure(f, e)) from e
        op = getattr(module, "OP", None)
        if not isinstance(op, Operator):
            raise InputValueError(f"{display_path(str(f))}: an op file must define "
                                  "OP = ascdsl.Operator(...)")
        ops.append(op)
    return ops


def _op_file_failure(path: Path, e: Exception) -> str:
    """``path:LINE: Kind: message`` for an exception raised while running the op file ``path``."""
    line = e.lineno if isinstance(e, SyntaxError) else next(
        (fr.lineno for fr in reversed(traceback.extract_tb(e.__traceback__))
         if Path(fr.filename).resolve() == path.resolve()), None)
    message = (e.msg if isinstance(e, SyntaxError) else str(e)).splitlines()
    where = display_path(str(path)) + (f":{line}" if line else "")
    return f"{where}: {type(e).__name__}: {message[0] if message else ''}"


def _walk_located(node: ast.AST, where: ast.AST | None = None):
    """Every node below ``node`` with the nearest node that has a source position (operators have none)."""
    for child in ast.iter_child_nodes(node):
        here = child if hasattr(child, "lineno") else (where or node)
        yield child, here
        yield from _walk_located(child, here)


def specializations(op: Operator, opdef_only: bool = False, platform: str | None = None) -> Module:
    """Every distinct kernel specialisation that the op's cases launch, in first-launch order
    through the Python entry (``opdef_only``: only the cases the OpDef can express; ``ascdsl build`` compiles
    what the op project's host function launches on those, :func:`ascdsl.build.case_kernels`). With a
    ``platform``, the cases launch for it, and those its host rejects (e.g. bfloat16 where the
    platform has no bfloat16 casts) launch nothing."""
    cases = [c for c in op.cases if op.opdef_attrs(c) is not None] if opdef_only else op.cases
    target = {} if platform is None else {"platform": platform}
    with record.launches() as seen:
        for case in cases:
            try:
                op.entry(*op.inputs_of(case), **dict(case.attrs), backend="interpreter", **target)
            except (InputTypeError, InputValueError):
                if platform is None:
                    raise
    kernels = []
    for launch in seen:
        if launch.kernel not in kernels:
            kernels.append(launch.kernel)
    return Module(tuple(kernels))
