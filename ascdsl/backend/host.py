"""Lower an op's ``@ascdsl.host`` function to a plain C++ tiling function.

The generated function has the host function's parameters (tensors as ``ascdsl_host::TensorDesc``,
attributes as C++ values, ``platform`` as ``ascdsl_host::Platform``) and fills the tiling struct,
``blockDim`` and a message. It returns an ``ascdsl_host::Status`` (``templates/host_runtime.h.j2``):
``raise ValueError``/``TypeError`` become ``VALUE_ERROR``/``TYPE_ERROR`` with the same message, Python
errors such as an index out of range become ``HOST_ERROR``, and a launch plan that selects a kernel
specialisation this build does not contain becomes ``VARIANT_NOT_COMPILED``.

Semantics follow Python where they differ from C++: ``//`` and ``%`` floor, ``shape[-1]`` counts from
the end, ``range`` bounds are evaluated once. Ints are ``int64_t``, floats ``double``.

``return ascdsl.Launch(kernel, grid=..., constexprs=..., scalars=...)`` writes the grid and scalars
into their tiling fields, sets ``blockDim = min(grid product, platform.vectorCoreNum)`` and picks the
tiling key by matching (kernel, constexprs, tensor dtypes, scalar widths) against the build's variant
table: the same specialisation the Python launch would compile.

Planner queries (``ascdsl.planner.largest_block(...)``, not in the language yet) are meant to be
evaluated at build time for every dtype combination of the op and emitted as a constant table the
function indexes by dtype; until the planner exists a call is a located "not supported" error.
"""
from __future__ import annotations

import ast
import builtins
import inspect
import operator
import textwrap
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from .. import dtypes, language
from ..errors import CompilationError, Loc, display_path
from ..op import Launch, Operator, Output
from .render import render
from .tiling import TilingLayout, Variant, cann_name

MAX_DIMS = 8
DTYPE_ENUM = {d.name: d.name.upper().rstrip("_") for d in dtypes.ALL}

INT, FLOAT, BOOL, STR, SHAPE, DTYPE = "int", "float", "bool", "str", "shape", "dtype"
CPP_TYPE = {INT: "int64_t", FLOAT: "double", BOOL: "bool", STR: "std::string", SHAPE: "ascdsl_host::Shape",
            DTYPE: "ascdsl_host::DType"}
ATTR_KIND = {"Int": INT, "Float": FLOAT, "Bool": BOOL, "ListInt": SHAPE, "String": STR}
FORMAT = {INT: "ascdsl_host::FormatInt", FLOAT: "ascdsl_host::FormatFloat", BOOL: "ascdsl_host::FormatBool",
          SHAPE: "ascdsl_host::FormatShape", DTYPE: "ascdsl_host::DTypeName"}
BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*"}
FOLD = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
        ast.Mod: operator.mod, ast.Div: operator.truediv}
COMPARE = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
CPP_KEYWORDS = frozenset("""auto bool break case catch char class const continue default delete do double
    else enum explicit extern float for goto if inline int long namespace new operator private protected
    public register return short signed sizeof static struct switch template this throw try typedef union
    unsigned using virtual void volatile while tiling blockDim message shapes""".split())
_NOT_CONST = object()


@dataclass(frozen=True)
class Param:
    """One parameter of a generated host function: C++ declaration, and what it carries."""

    name: str
    kind: str  # "tensor", "attr" or "platform"
    cpp: str  # the declaration, e.g. "const ascdsl_host::TensorDesc& x"
    attr_type: str = ""  # the OpDef type of an attribute


@dataclass(frozen=True)
class HostFunction:
    """The render model of one generated function: its signature and body lines (already C++)."""

    name: str
    params: tuple[Param, ...]
    results: tuple[str, ...]  # the out-parameters besides the message
    constants: tuple[str, ...]
    locals: tuple[str, ...]
    body: tuple[str, ...]
    used: frozenset[str] = frozenset()  # the parameters the body reads

    @property
    def arguments(self) -> tuple[str, ...]:
        return _declare(self.params, self.used) + self.results + ("std::string& message",)


def _declare(params: Sequence[Param], used: frozenset[str]) -> tuple[str, ...]:
    return tuple(p.cpp if p.name in used else "[[maybe_unused]] " + p.cpp for p in params)


@dataclass(frozen=True)
class E:
    """A lowered expression: C++ text, its type, and its value when known at build time."""

    code: str
    type: str
    const: Any = _NOT_CONST

    @property
    def is_const(self) -> bool:
        return self.const is not _NOT_CONST


def dtype_enum(name: str) -> str:
    return f"ascdsl_host::DType::{DTYPE_ENUM[dtypes.lookup(name).name]}"


def signature(op: Operator, fn: Callable) -> tuple[Param, ...]:
    """The C++ parameters of ``fn`` (the op's host function or an output-shape function)."""
    attrs = {a.name: a for a in op.attrs}
    params = []
    for name in inspect.signature(fn).parameters:
        if name in op.inputs:
            params.append(Param(name, "tensor", f"const ascdsl_host::TensorDesc& {_cpp_name(name)}"))
        elif name in attrs:
            kind = ATTR_KIND[attrs[name].type]
            cpp = f"const {CPP_TYPE[kind]}&" if kind in (SHAPE, STR) else CPP_TYPE[kind]
            params.append(Param(name, "attr", f"{cpp} {_cpp_name(name)}", attrs[name].type))
        elif name == "platform":
            params.append(Param(name, "platform", "const ascdsl_host::Platform& platform"))
        else:
            raise CompilationError(_fn_loc(fn), f"parameter {name!r} of {fn.__name__} is not an input, an "
                                   "attribute or `platform`", hint="declare it in Operator(inputs=..., attrs=...)")
    return tuple(params)


def lower_tiling(op: Operator, layout: TilingLayout, variants: Sequence[Variant], name: str) -> HostFunction:
    """The tiling function for ``op``'s host function: ``Status name(params..., Struct& tiling,
    uint32_t& blockDim, std::string& message)``."""
    return _Lowering(op, op.host, layout, variants).function(name)


def lower_output_shape(op: Operator, output: Output, name: str) -> HostFunction:
    """``Status name(params..., ascdsl_host::Shape& shape, std::string& message)`` for an output whose
    shape is an ``@ascdsl.host`` function of the inputs and attributes."""
    return _Lowering(op, output.shape, None, ()).function(name)


def _fn_loc(fn: Callable) -> Loc:
    fn = inspect.unwrap(fn)
    return Loc(display_path(inspect.getsourcefile(fn) or "<unknown>"), fn.__code__.co_firstlineno, 1)


def _cpp_name(name: str) -> str:
    return name + "_" if name in CPP_KEYWORDS else name


def _literal(value) -> E:
    if isinstance(value, bool):
        return E("true" if value else "false", BOOL, value)
    if isinstance(value, int):
        return E(str(value) if -2**31 <= value < 2**31 else f"INT64_C({value})", INT, value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), -float("inf")):
            inf = "std::numeric_limits<double>::infinity()"
            return E("std::numeric_limits<double>::quiet_NaN()" if value != value
                     else inf if value > 0 else "-" + inf, FLOAT, value)
        return E(repr(value), FLOAT, value)
    if isinstance(value, str):
        return E(_quote(value), STR, value)
    if isinstance(value, dtypes.DType):
        return E(dtype_enum(value.name), DTYPE, value)
    if isinstance(value, tuple) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return E(f"ascdsl_host::MakeShape({{{', '.join(map(str, value))}}})", SHAPE, value)
    if isinstance(value, tuple):
        return E("", "tuple", value)
    return E("", "object", value)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


class _Lowering:
    """One pass over the function's AST, emitting C++ lines; every unsupported node is a located error."""

    def __init__(self, op: Operator, fn: Callable, layout: TilingLayout | None, variants: Sequence[Variant]):
        self.op, self.layout, self.variants = op, layout, tuple(variants)
        self.fn = inspect.unwrap(fn)
        lines, first = inspect.getsourcelines(self.fn)
        self.path, self.first = display_path(inspect.getsourcefile(self.fn) or "<unknown>"), first
        self.indent = len(lines[0]) - len(lines[0].lstrip())
        self.tree = ast.parse(textwrap.dedent("".join(lines))).body[0]
        self.params = signature(op, fn)
        if layout is not None and all(p.kind != "platform" for p in self.params):
            self.params += (Param("platform", "platform", "const ascdsl_host::Platform& platform"),)
        self.scope: dict[str, str] = {p.name: ("tensor" if p.kind == "tensor" else "platform" if
                                               p.kind == "platform" else ATTR_KIND[p.attr_type])
                                      for p in self.params}
        self.locals: dict[str, str] = {}
        self.constants: dict[str, str] = {}
        self.lines: list[str] = []
        self.used: set[str] = set()
        self.dicts: dict[str, dict[str, E]] = {}
        self.depth = 1
        self.temps = 0

    # ------------------------------------------------------------------ driver

    def function(self, name: str) -> HostFunction:
        for stmt in self.tree.body:
            self.stmt(stmt)
        if not isinstance(self.tree.body[-1], ast.Return):
            end = ("the host function returned no launch plan" if self.layout is not None
                   else "the output-shape function returned no shape")
            self.emit(f"throw HostError{{HOST_ERROR, {_quote(end)}}};")
        decls = tuple(f"{CPP_TYPE[t]} {_cpp_name(n)}{{}};" for n, t in self.locals.items())
        results = (f"{self.layout.struct_name}& tiling", "uint32_t& blockDim") if self.layout is not None \
            else ("ascdsl_host::Shape& shape",)
        used = frozenset(self.used) | ({"platform"} if self.layout is not None else set())
        return HostFunction(name, self.params, results, tuple(self.constants.values()), decls, tuple(self.lines),
                            used)

    def error(self, node: ast.AST, message: str, hint: str | None = None) -> CompilationError:
        loc = Loc(self.path, self.first + node.lineno - 1, node.col_offset + self.indent + 1)
        return CompilationError(loc, message, hint=hint or "host code lowers to C++: use ints, floats, shapes, "
                                "dtypes and attributes, min/max/cdiv/next_power_of_2, if/else, for over range")

    def emit(self, line: str) -> None:
        # the body runs under `using namespace ascdsl_host`: drop the qualifier for readability
        self.lines.append("    " * self.depth + line.replace("ascdsl_host::", ""))

    def temp(self, base: str) -> str:
        self.temps += 1
        return f"{base}{self.temps}"

    # ------------------------------------------------------------------ statements

    def stmt(self, node: ast.stmt) -> None:
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is None:
            raise self.error(node, f"'{type(node).__name__}' statements cannot be lowered to C++")
        method(node)

    def stmt_Pass(self, node: ast.Pass) -> None:
        pass

    def stmt_Expr(self, node: ast.Expr) -> None:
        if not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            raise self.error(node, "an expression statement has no effect in host code")

    def stmt_Assign(self, node: ast.Assign) -> None:
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            raise self.error(node, "assign to one name at a time in host code")
        if isinstance(node.value, ast.Dict):  # a dict of launch arguments: one variable per key
            self.dicts[node.targets[0].id] = {
                key: self.assign(ast.copy_location(ast.Name(f"{node.targets[0].id}_{key}", ast.Store()), value),
                                 self.expr(value))
                for key, value in self.mapping(node.value).items()}
            return
        self.assign(node.targets[0], self.expr(node.value))

    def stmt_AugAssign(self, node: ast.AugAssign) -> None:
        if not isinstance(node.target, ast.Name):
            raise self.error(node, "assign to one name at a time in host code")
        load = ast.copy_location(ast.Name(node.target.id, ast.Load()), node)
        value = self.binop(ast.copy_location(ast.BinOp(load, node.op, node.value), node))
        self.assign(node.target, value)

    def assign(self, target: ast.Name, value: E) -> E:
        name = target.id
        if name in self.scope and name not in self.locals:
            raise self.error(target, f"host code may not assign to the parameter {name!r}")
        if value.type not in CPP_TYPE or value.type == STR:
            raise self.error(target, f"a host variable cannot hold a {value.type}")
        if self.locals.setdefault(name, value.type) != value.type:
            raise self.error(target, f"{name!r} is a {self.locals[name]} here and a {value.type} elsewhere",
                             hint="C++ variables have one type: use another name")
        self.scope[name] = value.type
        self.emit(f"{_cpp_name(name)} = {value.code};")
        return E(_cpp_name(name), value.type)

    def stmt_If(self, node: ast.If, prefix: str = "") -> None:
        cond = self.truth(node.test)
        self.emit(f"{prefix}if ({cond.code}) {{")
        self.block(node.body)
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            self.stmt_If(node.orelse[0], prefix="} else ")
            return
        if node.orelse:
            self.emit("} else {")
            self.block(node.orelse)
        self.emit("}")

    def block(self, body: list[ast.stmt]) -> None:
        self.depth += 1
        for stmt in body:
            self.stmt(stmt)
        self.depth -= 1

    def stmt_For(self, node: ast.For) -> None:
        it = node.iter
        if not (isinstance(node.target, ast.Name) and isinstance(it, ast.Call) and self.resolve(it.func) is range
                and 1 <= len(it.args) <= 3 and not it.keywords and not node.orelse):
            raise self.error(node, "host loops must be `for name in range(...)`")
        args = [self.int_expr(a) for a in it.args]
        start, stop, step = (_literal(0), args[0], _literal(1)) if len(args) == 1 else (
            args[0], args[1], args[2] if len(args) == 3 else _literal(1))
        if not step.is_const or step.const == 0:
            raise self.error(it, "the step of a host loop must be a non-zero constant")
        counter, end = self.temp("it"), self.temp("stop")
        self.emit(f"const int64_t {end} = {stop.code};")
        self.emit(f"for (int64_t {counter} = {start.code}; {counter} {'<' if step.const > 0 else '>'} {end}; "
                  f"{counter} += {step.code}) {{")
        self.depth += 1
        self.assign(node.target, E(counter, INT))
        self.depth -= 1
        self.block(node.body)
        self.emit("}")

    def stmt_Raise(self, node: ast.Raise) -> None:
        exc = node.exc
        kind = self.resolve(exc.func) if isinstance(exc, ast.Call) else None
        status = {ValueError: "VALUE_ERROR", TypeError: "TYPE_ERROR"}.get(kind)
        if status is None or exc.keywords or len(exc.args) > 1 or node.cause is not None:
            raise self.error(node, "host code raises only ValueError(message) or TypeError(message)")
        message = self.message(exc.args[0]) if exc.args else '""'
        self.emit(f"throw ascdsl_host::HostError{{ascdsl_host::{status}, {message}}};")

    def stmt_Return(self, node: ast.Return) -> None:
        if self.layout is None:
            shape = self.expr(node.value) if node.value is not None else None
            if shape is None or shape.type != SHAPE:
                raise self.error(node, "an output-shape function returns a tuple of ints")
            self.emit(f"shape = {shape.code};")
            self.emit("return ascdsl_host::OK;")
            return
        call = node.value
        if not (isinstance(call, ast.Call) and self.resolve(call.func) is Launch):
            raise self.error(node, "a host function returns ascdsl.Launch(...)")
        self.launch(call)

    # ------------------------------------------------------------------ the launch plan

    def launch(self, call: ast.Call) -> None:
        spec = inspect.signature(Launch).bind(*call.args, **{k.arg: k.value for k in call.keywords})
        kernel = self.resolve(spec.arguments["kernel"])
        if not hasattr(kernel, "parsed"):
            raise self.error(call, "the kernel of a Launch must be an @ascdsl.jit function named at module level")
        grid = spec.arguments.get("grid")
        if not isinstance(grid, (ast.Tuple, ast.List)) or not 1 <= len(grid.elts) <= 3:
            raise self.error(call, "the grid must be a tuple of 1 to 3 ints")
        constexprs = self.mapping(spec.arguments.get("constexprs"))
        scalars = self.mapping(spec.arguments.get("scalars"))
        name = kernel.parsed.name
        fields = {f.name: f for f in self.layout.fields}
        self.emit(f"// {name}" + (f" ({ast.literal_eval(spec.arguments['variant'])})"
                                  if "variant" in spec.arguments else ""))
        dims = [self.int_expr(g).code for g in grid.elts] + ["1"] * (3 - len(grid.elts))
        for i, dim in enumerate(dims):
            self.emit(f"tiling.grid{i} = {dim if dim.isdigit() else f'static_cast<int32_t>({dim})'};")
        values = {}
        for key, node in scalars.items():
            if key not in fields:
                raise self.error(call, f"{name} has no runtime scalar parameter {key!r}")
            value = node if isinstance(node, E) else self.expr(node)
            if value.type not in (INT, FLOAT, BOOL):
                raise self.error(call, f"scalar {key!r} must be an int, float or bool")
            values[key] = E(self.temp(key + "_"), value.type)
            self.emit(f"const {CPP_TYPE[value.type]} {values[key].code} = {value.code};")
            self.emit(f"tiling.{key} = static_cast<{fields[key].dtype.cpp}>({values[key].code});")
        consts = {}
        for key, node in constexprs.items():
            value = node if isinstance(node, E) else self.expr(node)
            if value.type not in (INT, FLOAT, BOOL, DTYPE):
                raise self.error(call, f"constexpr {key!r} must be an int, float, bool or dtype in host code")
            consts[key] = E(self.temp(key + "_"), value.type)
            self.emit(f"const {CPP_TYPE[value.type]} {consts[key].code} = {value.code};")
        self.emit("const int64_t programs = int64_t{tiling.grid0} * tiling.grid1 * tiling.grid2;")
        self.emit("tiling.tilingKey = 0;  // an empty grid launches nothing")
        self.emit("if (programs > 0) {")
        self.depth += 1
        rows = [(v.key, self.variant_condition(v, consts, values)) for v in self.variants if v.kernel.name == name]
        rows = [(key, cond) for key, cond in rows if cond is not None]
        for i, (key, cond) in enumerate(rows):
            self.emit(f"{'} else ' if i else ''}if ({cond}) {{")
            self.emit(f"    tiling.tilingKey = {key};")
        self.emit("} else {" if rows else "{")
        self.emit(f"    throw ascdsl_host::HostError{{ascdsl_host::VARIANT_NOT_COMPILED, "
                  f"{self.not_compiled(name, consts)}}};")
        self.emit("}")
        self.depth -= 1
        self.emit("}")
        self.emit("blockDim = static_cast<uint32_t>(std::min<int64_t>(programs, platform.vectorCoreNum));")
        self.emit("return ascdsl_host::OK;")

    def mapping(self, node: ast.AST | None) -> dict[str, ast.AST]:
        if node is None:
            return {}
        if isinstance(node, ast.Name) and node.id in self.dicts:
            return self.dicts[node.id]
        if not isinstance(node, ast.Dict) or not all(isinstance(k, ast.Constant) and isinstance(k.value, str)
                                                     for k in node.keys):
            raise self.error(node, "constexprs and scalars are dict literals with string keys in host code")
        return {k.value: v for k, v in zip(node.keys, node.values)}

    def tensor_dtypes(self) -> list[str]:
        """C++ expressions for the dtypes of the kernel's pointer arguments: inputs, then outputs."""
        out = [f"{_cpp_name(i)}.dtype" for i in self.op.inputs]
        for o in self.op.outputs:
            source = o.dtype or self.op.inputs[0]
            out.append(f"{_cpp_name(source)}.dtype" if source in self.op.inputs else dtype_enum(source))
        return out

    def variant_condition(self, variant: Variant, consts: dict[str, E], scalars: dict[str, E]) -> str | None:
        """The C++ test that selects ``variant``, or None if these launch values can never select it."""
        kernel = variant.kernel
        pointers = [p.type.dtype.element_ty for p in kernel.params if not p.type.is_scalar
                    or isinstance(p.type.dtype, dtypes.PointerType)]
        if len(pointers) != len(self.op.inputs) + len(self.op.outputs):
            raise CompilationError(kernel.loc, f"{kernel.name} takes {len(pointers)} pointers, but the op has "
                                   f"{len(self.op.inputs)} inputs and {len(self.op.outputs)} outputs")
        conds = [f"{expr} == {dtype_enum(d.name)}" for expr, d in zip(self.tensor_dtypes(), pointers)]
        for key, value in kernel.constexprs:
            have = consts.get(key)
            if have is None or have.type != _literal(value).type:
                return None
            conds.append(f"{have.code} == {_literal(value).code}")
        for name, param in zip(kernel.param_names, kernel.params):
            value = scalars.get(name)
            if value is not None and value.type == INT and param.type.dtype in (dtypes.int32, dtypes.int64):
                fits = f"ascdsl_host::FitsInt32({value.code})"
                conds.append(fits if param.type.dtype == dtypes.int32 else f"!{fits}")
        return " && ".join(dict.fromkeys(conds))

    def not_compiled(self, name: str, consts: dict[str, E]) -> str:
        parts = [f'"{name} with "']
        for i, (key, value) in enumerate(consts.items()):
            parts += [f'"{", " if i else ""}{key}="', f"{FORMAT[value.type]}({value.code})"]
        parts.append('" for "')
        for i, expr in enumerate(self.tensor_dtypes()):
            if i:
                parts.append('", "')
            parts.append(f"ascdsl_host::DTypeName({expr})")
        parts.append('" was not compiled into this build; add a case that launches it"')
        return "std::string(" + parts[0] + ") + " + " + ".join(parts[1:])

    # ------------------------------------------------------------------ expressions

    def resolve(self, node: ast.AST) -> Any:
        """The Python object a global name or dotted name refers to (None for locals and others)."""
        if isinstance(node, ast.Name):
            if node.id in self.scope:
                return None
            if node.id in self.fn.__globals__:
                return self.fn.__globals__[node.id]
            return getattr(builtins, node.id, None)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            return None if base is None else getattr(base, node.attr, None)
        return None

    def expr(self, node: ast.AST) -> E:
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            raise self.error(node, f"'{type(node).__name__}' expressions cannot be lowered to C++")
        return method(node)

    def int_expr(self, node: ast.AST) -> E:
        value = self.expr(node)
        if value.type not in (INT, BOOL):
            raise self.error(node, f"expected an int here, got a {value.type}")
        return value

    def truth(self, node: ast.AST) -> E:
        value = self.expr(node)
        if value.type in (INT, FLOAT):
            return E(f"{value.code} != 0", BOOL)
        if value.type == SHAPE:
            return E(f"{value.code}.ndim != 0", BOOL)
        if value.type != BOOL:
            raise self.error(node, f"a {value.type} cannot be a condition in host code")
        return value

    def expr_Constant(self, node: ast.Constant) -> E:
        value = _literal(node.value)
        if value.type == "object":
            raise self.error(node, f"the constant {node.value!r} cannot be lowered to C++")
        return value

    def expr_Name(self, node: ast.Name) -> E:
        if node.id in self.scope:
            self.used.add(node.id)
            return E(_cpp_name(node.id), self.scope[node.id])
        obj = self.resolve(node)
        value = _literal(obj)
        if value.type in (INT, FLOAT, BOOL):
            name = _cpp_name(node.id)
            self.constants.setdefault(name, f"constexpr {CPP_TYPE[value.type]} {name} = {value.code};")
            return E(name, value.type, obj)
        if value.type == "object":
            raise self.error(node, f"{node.id!r} is not a value host code can use")
        return value

    def expr_Attribute(self, node: ast.Attribute) -> E:
        if self.resolve(node.value) is not None:
            return self.global_attribute(node)
        base = self.expr(node.value)
        table = {("tensor", "shape"): (f"{base.code}.shape", SHAPE), ("tensor", "ndim"): (f"{base.code}.shape.ndim", INT),
                 ("tensor", "numel"): (f"ascdsl_host::Numel({base.code}.shape)", INT),
                 ("tensor", "dtype"): (f"{base.code}.dtype", DTYPE), (DTYPE, "name"): (base.code, DTYPE),
                 (DTYPE, "itemsize"): (f"ascdsl_host::DTypeSize({base.code})", INT),
                 ("platform", "name"): (f"std::string({base.code}.name)", STR),
                 ("platform", "vector_core_count"): (f"int64_t{{{base.code}.vectorCoreNum}}", INT),
                 ("platform", "ai_core_count"): (f"int64_t{{{base.code}.aiCoreNum}}", INT),
                 ("platform", "ub_bytes"): (f"static_cast<int64_t>({base.code}.ubSize)", INT),
                 ("platform", "ub_budget_bytes"): (f"static_cast<int64_t>({base.code}.ubBudget)", INT),
                 ("platform", "has_bf16"): (f"{base.code}.hasBf16", BOOL)}
        if (base.type, node.attr) not in table:
            raise self.error(node, f"a {base.type} has no attribute {node.attr!r} in host code")
        return E(*table[base.type, node.attr])

    def global_attribute(self, node: ast.Attribute) -> E:
        value = _literal(self.resolve(node))
        if value.type in ("object", "tuple"):
            raise self.error(node, f"{ast.unparse(node)!r} is not a value host code can use")
        return value

    def expr_Subscript(self, node: ast.Subscript) -> E:
        base = self.expr(node.value)
        if base.type != SHAPE:
            raise self.error(node, f"a {base.type} cannot be indexed in host code")
        if isinstance(node.slice, ast.Slice):
            if node.slice.step is not None:
                raise self.error(node, "slices with a step are not supported in host code")
            start, stop = (self.int_expr(b).code if b is not None else "ascdsl_host::NO_BOUND"
                           for b in (node.slice.lower, node.slice.upper))
            return E(f"ascdsl_host::Slice({base.code}, {start}, {stop})", SHAPE)
        return E(f"ascdsl_host::Dim({base.code}, {self.int_expr(node.slice).code})", INT)

    def expr_Tuple(self, node: ast.Tuple) -> E:
        items = [self.int_expr(e) for e in node.elts]
        if all(i.is_const for i in items):
            return _literal(tuple(i.const for i in items))
        return E(f"ascdsl_host::MakeShape({{{', '.join(i.code for i in items)}}})", SHAPE)

    expr_List = expr_Tuple

    def expr_UnaryOp(self, node: ast.UnaryOp) -> E:
        if isinstance(node.op, ast.Not):
            return E(f"!({self.truth(node.operand).code})", BOOL)
        value = self.expr(node.operand)
        if value.type not in (INT, FLOAT) or not isinstance(node.op, ast.USub):
            raise self.error(node, "only -x and `not x` are unary operators in host code")
        if value.is_const:
            return _literal(-value.const)
        return E(f"-({value.code})", value.type)

    def expr_BinOp(self, node: ast.BinOp) -> E:
        return self.binop(node)

    def binop(self, node: ast.BinOp) -> E:
        a, b = self.expr(node.left), self.expr(node.right)
        if isinstance(node.op, ast.Add) and a.type == b.type == SHAPE:
            return E(f"ascdsl_host::Concat({a.code}, {b.code})", SHAPE)
        if a.type not in (INT, FLOAT, BOOL) or b.type not in (INT, FLOAT, BOOL):
            raise self.error(node, f"cannot apply {type(node.op).__name__} to a {a.type} and a {b.type}")
        if a.is_const and b.is_const and type(node.op) in FOLD:
            try:
                return _literal(FOLD[type(node.op)](a.const, b.const))
            except ZeroDivisionError:
                pass  # the emitted helper raises it at run time, like Python
        kind = FLOAT if FLOAT in (a.type, b.type) else INT
        if isinstance(node.op, ast.Div):
            return E(f"ascdsl_host::TrueDiv({a.code}, {b.code})", FLOAT)
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)):
            if kind == FLOAT:
                raise self.error(node, "// and % on floats are not supported in host code")
            helper = "FloorDiv" if isinstance(node.op, ast.FloorDiv) else "FloorMod"
            return E(f"ascdsl_host::{helper}({a.code}, {b.code})", INT)
        if type(node.op) not in BINARY:
            raise self.error(node, f"the operator {type(node.op).__name__} is not supported in host code")
        return E(f"({a.code} {BINARY[type(node.op)]} {b.code})", kind)

    def expr_BoolOp(self, node: ast.BoolOp) -> E:
        op = " && " if isinstance(node.op, ast.And) else " || "
        return E("(" + op.join(self.truth(v).code for v in node.values) + ")", BOOL)

    def expr_IfExp(self, node: ast.IfExp) -> E:
        cond, a, b = self.truth(node.test), self.expr(node.body), self.expr(node.orelse)
        if a.type != b.type:
            raise self.error(node, f"both branches must have one type in host code, got {a.type} and {b.type}")
        return E(f"({cond.code} ? {a.code} : {b.code})", a.type)

    def expr_Compare(self, node: ast.Compare) -> E:
        parts, left = [], self.expr(node.left)
        for op, right_node in zip(node.ops, node.comparators):
            if isinstance(op, (ast.In, ast.NotIn)):
                options = self.resolve(right_node) if isinstance(right_node, (ast.Name, ast.Attribute)) else None
                if options is None:
                    if not isinstance(right_node, (ast.Tuple, ast.List)):
                        raise self.error(right_node, "`in` needs a tuple of constants in host code")
                    options = tuple(ast.literal_eval(e) for e in right_node.elts)
                tests = [self.equal(node, left, _literal(o)) for o in options] or ["false"]
                test = "(" + " || ".join(tests) + ")"
                parts.append(test if isinstance(op, ast.In) else f"!{test}")
                continue
            right = self.expr(right_node)
            if type(op) not in COMPARE:
                raise self.error(node, f"the comparison {type(op).__name__} is not supported in host code")
            if isinstance(op, (ast.Eq, ast.NotEq)):
                parts.append(self.equal(node, left, right, negate=isinstance(op, ast.NotEq)))
            elif left.type in (INT, FLOAT, BOOL) and right.type in (INT, FLOAT, BOOL):
                parts.append(f"{left.code} {COMPARE[type(op)]} {right.code}")
            else:
                raise self.error(node, f"cannot order a {left.type} and a {right.type}")
            left = right
        return E(parts[0] if len(parts) == 1 else "(" + " && ".join(f"({p})" for p in parts) + ")", BOOL)

    def equal(self, node: ast.AST, a: E, b: E, negate: bool = False) -> str:
        if a.type == DTYPE and b.type == STR:
            if b.const not in dtypes.BY_NAME:
                return "true" if negate else "false"
            b = _literal(dtypes.lookup(b.const))
        if a.type == SHAPE and b.type == SHAPE:
            return f"{'!' if negate else ''}ascdsl_host::ShapeEq({a.code}, {b.code})"
        numeric = (INT, FLOAT, BOOL)
        if a.type == b.type or a.type in numeric and b.type in numeric:
            return f"{a.code} {'!=' if negate else '=='} {b.code}"
        raise self.error(node, f"cannot compare a {a.type} with a {b.type} in host code")

    def expr_JoinedStr(self, node: ast.JoinedStr) -> E:
        return E(self.message(node), STR)

    def message(self, node: ast.AST) -> str:
        """A C++ std::string expression for a message: a string constant or an f-string."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return f"std::string({_quote(node.value)})"
        if not isinstance(node, ast.JoinedStr):
            raise self.error(node, "a message is a string or an f-string in host code")
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(f"std::string({_quote(value.value)})")
                continue
            if value.conversion != -1 or value.format_spec is not None:
                raise self.error(value, "f-string conversions and format specs are not supported in host code")
            item = self.expr(value.value)
            parts.append(f"std::string({item.code})" if item.type == STR else f"{FORMAT[item.type]}({item.code})")
        return " + ".join(parts) or 'std::string("")'

    def expr_Call(self, node: ast.Call) -> E:
        fn = self.resolve(node.func)
        if node.keywords:
            raise self.error(node, "keyword arguments are not supported in host calls")
        args = [self.expr(a) for a in node.args]
        if fn in (min, max) and len(args) >= 2 and all(a.type in (INT, FLOAT) for a in args):
            kind = FLOAT if any(a.type == FLOAT for a in args) else INT
            if all(a.is_const for a in args):
                return _literal(fn(a.const for a in args))
            code = args[0].code
            for a in args[1:]:
                code = f"std::{fn.__name__}<{CPP_TYPE[kind]}>({code}, {a.code})"
            return E(code, kind)
        if fn in (language.cdiv, language.next_power_of_2) and len(args) == (2 if fn is language.cdiv else 1):
            if not all(a.type == INT for a in args):
                raise self.error(node, f"{fn.__name__} takes ints")
            helper = "CeilDiv" if fn is language.cdiv else "NextPowerOf2"
            return E(f"ascdsl_host::{helper}({', '.join(a.code for a in args)})", INT)
        if fn is len and len(args) == 1 and args[0].type == SHAPE:
            return E(f"int64_t{{{args[0].code}.ndim}}", INT)
        if fn in (int, float) and len(args) == 1 and args[0].type in (INT, FLOAT, BOOL):
            kind = INT if fn is int else FLOAT
            return E(f"static_cast<{CPP_TYPE[kind]}>({args[0].code})", kind)
        if fn is abs and len(args) == 1 and args[0].type in (INT, FLOAT):
            return E(f"std::abs({args[0].code})", args[0].type)
        name = ast.unparse(node.func)
        if "planner" in name:
            raise self.error(node, f"{name}(...) is not supported yet: the UB planner query has no C++ lowering")
        raise self.error(node, f"{name}(...) cannot be called in host code",
                         hint="host code may call min, max, abs, int, float, len, ascdsl.cdiv and "
                              "ascdsl.next_power_of_2")


# ---------------------------------------------------------------------- the plain tiling header

@dataclass(frozen=True)
class ShapeFunction:
    """``Status name(inputs..., attrs..., Shape* shapes, message)``: the shape of every output."""

    name: str
    params: tuple[Param, ...]
    helpers: tuple[HostFunction, ...]
    body: tuple[str, ...]
    used: frozenset[str]

    @property
    def arguments(self) -> tuple[str, ...]:
        return _declare(self.params, self.used) + ("ascdsl_host::Shape* shapes", "std::string& message")


def op_params(op: Operator) -> tuple[Param, ...]:
    """Every input, then every attribute, as C++ parameters (the order of InferShape and main.cpp)."""
    def all_params(*_):
        pass
    names = [*op.inputs, *(a.name for a in op.attrs)]
    all_params.__signature__ = inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                                                  for n in names])
    return signature(op, all_params)


def output_shapes(op: Operator, prefix: str) -> ShapeFunction:
    helpers, body, used = [], [], set()
    for i, output in enumerate(op.outputs):
        if callable(output.shape):
            fn = lower_output_shape(op, output, f"{prefix}{_camel(output.name)}Shape")
            helpers.append(fn)
            used |= {p.name for p in fn.params}
            args = ", ".join([p.cpp.split()[-1] for p in fn.params] + [f"shapes[{i}]", "message"])
            body.append(f"if (const int32_t status = {fn.name}({args})) {{")
            body.append("    return status;")
            body.append("}")
        else:
            used.add(output.shape or op.inputs[0])
            body.append(f"shapes[{i}] = {_cpp_name(output.shape or op.inputs[0])}.shape;  // {output.name}")
    if not helpers:
        body.append("static_cast<void>(message);  // no output shape can fail")
    return ShapeFunction(f"{prefix}OutputShapes", op_params(op), tuple(helpers), tuple(body), frozenset(used))


def _camel(name: str) -> str:
    return "".join(w.capitalize() for w in name.split("_"))


def runtime_source(platform) -> str:
    """The ``ascdsl_host`` runtime the generated functions use (``templates/host_runtime.h.j2``)."""
    rows = [{"enum": DTYPE_ENUM[d.name], "code": i, "name": d.name, "itemsize": d.itemsize}
            for i, d in enumerate(dtypes.ALL)]
    return render("host_runtime.h.j2", dtypes=rows, max_dims=MAX_DIMS, default=platform)


def tiling_header(op: Operator, layout: TilingLayout, variants: Sequence[Variant], platform, source: str) -> str:
    """``kernel/<op>_tiling.h``: the plain tiling struct, and (host side only) the tiling function
    ``<OpType>Tiling`` and ``<OpType>OutputShapes``."""
    return render("tiling_header.h.j2", op=op, source=source, guard=f"{cann_name(op.op_type).upper()}_TILING_H",
                  struct=layout.struct_source(), runtime=runtime_source(platform),
                  tiling=lower_tiling(op, layout, variants, f"{op.op_type}Tiling"),
                  shapes=output_shapes(op, op.op_type))


# ---------------------------------------------------------------------- the same contract in Python

STATUS = {"OK": 0, "VALUE_ERROR": 1, "TYPE_ERROR": 2, "HOST_ERROR": 3, "VARIANT_NOT_COMPILED": 4}


@dataclass(frozen=True)
class TilingResult:
    """What a tiling function gives: a status and message, the tiling fields and the block dim."""

    status: int
    message: str = ""
    fields: tuple[tuple[str, Any], ...] = ()
    block_dim: int = 0


def python_tiling(op: Operator, layout: TilingLayout, variants: Sequence[Variant], platform,
                  inputs: Sequence, attrs: dict) -> TilingResult:
    """Run ``op``'s host function in Python on ``inputs`` (:class:`TensorDesc`) and ``attrs`` and map
    its plan to what the generated C++ function returns (the reference for that function)."""
    from ..errors import InputTypeError, InputValueError
    kwargs = {p: attrs[p] for p in inspect.signature(op.host).parameters if p in attrs}
    if "platform" in inspect.signature(op.host).parameters:
        kwargs["platform"] = platform
    try:
        plan = op.host(*inputs, **kwargs)
    except InputValueError as e:
        return TilingResult(STATUS["VALUE_ERROR"], str(e))
    except InputTypeError as e:
        return TilingResult(STATUS["TYPE_ERROR"], str(e))
    except (IndexError, ZeroDivisionError) as e:
        return TilingResult(STATUS["HOST_ERROR"], str(e))
    grid = tuple(plan.grid) + (1,) * (3 - len(plan.grid))
    programs = grid[0] * grid[1] * grid[2]
    fields = {"grid0": grid[0], "grid1": grid[1], "grid2": grid[2], **plan.scalars, "tilingKey": 0}
    if programs:
        pointers = [d.dtype for d in inputs] + [op.output_dtype(o, tuple(inputs)) for o in op.outputs]
        kernel = plan.kernel.specialize(*(dtypes.PointerType(d) for d in pointers), **plan.scalars,
                                        **plan.constexprs).kernels[0]
        keys = [v.key for v in variants if v.kernel == kernel]
        if not keys:
            consts = ", ".join(f"{k}={_python_str(v)}" for k, v in plan.constexprs.items())
            return TilingResult(STATUS["VARIANT_NOT_COMPILED"],
                                f"{kernel.name} with {consts} for {', '.join(d.name for d in pointers)} "
                                "was not compiled into this build; add a case that launches it")
        fields["tilingKey"] = keys[0]
    order = [f.name for f in layout.fields]
    return TilingResult(0, "", tuple(sorted(fields.items(), key=lambda kv: order.index(kv[0]))),
                        min(programs, platform.vector_core_count))


def _python_str(value) -> str:
    return value.name if isinstance(value, dtypes.DType) else str(value)
