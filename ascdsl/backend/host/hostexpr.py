"""Lowering of host-code expressions to expression nodes (:mod:`.kir.host` and the kernel's), which
:mod:`.emit` prints as C++ (the base of :class:`~.hostlower.HostLowering`).

Semantics follow Python where they differ from C++: ``//`` and ``%`` floor, ``shape[-1]`` counts from
the end. Ints are ``int64_t``, floats ``double``. Values known at build time (literals, module
constants, kernel references, parameters fixed to their default) stay constants, so conditions on
them fold and only the branch Python would take is emitted.
"""
from __future__ import annotations

import ast
import builtins
import inspect
import operator
from collections.abc import Callable, Sequence
from typing import Any

from ... import dtypes, language, planner
from ...errors import CompilationError, Loc
from ...op import Launch, Operator, host_source
from .hostcode import (ATTR_KIND, BOOL, DTYPE, FLOAT, FORMAT, INT, KERNEL, OBJECT, PLATFORM, SHAPE, STR, TENSOR, TUPLE,
                       E, PLATFORM_PARAM, cpp_name, fixed_params, literal, signature, tensor_param)
from .hostplan import PlannerTables
from ..kir import Bin, BinOp, Brace, Cond, Conv, Not
from ..kir.host import (Declare, HostType, Ident, Init, Invoke, Logic, Member, Neg, Paren, Runtime, Storage, Table,
                        Value)
from ..plan.tiling import TilingLayout, Variant

BINARY = {ast.Add: BinOp.ADD, ast.Sub: BinOp.SUB, ast.Mult: BinOp.MUL}
FOLD = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
        ast.Mod: operator.mod, ast.Div: operator.truediv}
COMPARE = {ast.Eq: BinOp.EQ, ast.NotEq: BinOp.NE, ast.Lt: BinOp.LT, ast.LtE: BinOp.LE, ast.Gt: BinOp.GT,
           ast.GtE: BinOp.GE}
ORDER = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}


class HostExpressions:
    """Expression lowering over one host function's AST; every unsupported node is a located error."""

    def __init__(self, op: Operator, fn: Callable, layout: TilingLayout | None, variants: Sequence[Variant]):
        self.op, self.layout, self.variants = op, layout, tuple(variants)
        self.fn = inspect.unwrap(fn)
        self.path, tree = host_source(self.fn)
        self.body = host_body(tree)
        self.params = signature(op, fn)
        if layout is not None:  # the launch selects its variant by every tensor's dtype, and reads the platform
            named = {p.name for p in self.params}
            self.params += tuple(tensor_param(i) for i in op.inputs if i not in named)
            if "platform" not in named:
                self.params += (PLATFORM_PARAM,)
        self.scope: dict[str, HostType] = {p.name: (TENSOR if p.kind == "tensor" else PLATFORM if
                                                    p.kind == "platform" else ATTR_KIND[p.attr_type])
                                      for p in self.params}
        self.fixed = {name: literal(value) for name, value in fixed_params(op, fn).items()}
        self.scope.update({name: value.type for name, value in self.fixed.items()})
        self.locals: dict[str, str] = {}
        self.constants: dict[str, Table] = {}  # declared whether or not the body reads them (planner tables)
        self.module_constants: dict[str, Declare] = {}  # declared if the body reads them
        self.kernels: dict[str, Any] = {}  # the kernels the function names, by name (the C++ enum Kernel)
        self.planner = PlannerTables(op, self)
        self.dtype_binding: dict[str, dtypes.DType] = {}  # tensor -> dtype while a planner table is built
        self.blocks: list[list] = [[]]  # the statements of the function's body, then of each block being lowered
        self.temps = 0
        # the function's own names, which no temporary may take
        self.taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {p.name for p in self.params}
        # the function's module and variables: a constant a host helper reads is named after the helper where its
        # module is another or the function has a variable of its name
        self.module = self.fn.__globals__
        self.variables = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}

    def error(self, node: ast.AST, message: str, hint: str | None = None) -> CompilationError:
        loc = Loc(self.path, node.lineno, node.col_offset + 1)
        return CompilationError(loc, message, hint=hint or "host code lowers to C++: use ints, floats, shapes, "
                                "dtypes and attributes, min/max/cdiv/next_power_of_2, if/else, for over range")

    def emit(self, stmt) -> None:
        """Append ``stmt`` to the block being lowered."""
        self.blocks[-1].append(stmt)

    def nested(self, lower: Callable[[], None]) -> tuple:
        """The statements ``lower()`` emits, as a block of their own."""
        self.blocks.append([])
        try:
            lower()
        finally:
            body = self.blocks.pop()
        return tuple(body)

    @staticmethod
    def node(value):
        """The expression node of ``value`` (an :class:`E` or a node)."""
        return value.node if isinstance(value, E) else value

    def temp(self, base: str) -> str:
        self.temps += 1
        while f"{base}{self.temps}" in self.taken:
            self.temps += 1
        return f"{base}{self.temps}"


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
            raise self.error(node, f"expected an int here, got a {value.type.word}")
        return value

    def truth(self, node: ast.AST) -> E:
        value = self.expr(node)
        if value.is_const and value.type in (INT, FLOAT, BOOL, SHAPE):
            return literal(bool(value.const))
        if value.type in (INT, FLOAT):
            return E(Bin(BinOp.NE, value.node, Value(0)), BOOL)
        if value.type == SHAPE:
            return E(Bin(BinOp.NE, Member(value.node, "ndim"), Value(0)), BOOL)
        if value.type != BOOL:
            raise self.error(node, f"a {value.type.word} cannot be a condition in host code")
        return value

    def expr_Constant(self, node: ast.Constant) -> E:
        value = literal(node.value)
        if value.type == OBJECT:
            raise self.error(node, f"the constant {node.value!r} cannot be lowered to C++")
        return value

    def expr_Name(self, node: ast.Name) -> E:
        if node.id in self.fixed:
            return self.fixed[node.id]
        if node.id in self.scope:
            return E(Ident(cpp_name(node.id)), self.scope[node.id])
        obj = self.resolve(node)
        value = literal(obj)
        if value.type in (INT, FLOAT, BOOL):
            own = self.fn.__globals__ is self.module and node.id not in self.variables
            name = cpp_name(node.id if own else f"{self.fn.__name__}_{node.id}")
            line = Declare(value.type, Ident(name), value.node, Storage.CONSTEXPR)
            if self.module_constants.setdefault(name, line) != line:
                raise self.error(node, f"the C++ constant {name} would have two values: rename {node.id!r}")
            return E(Ident(name), value.type, obj)
        if value.type == KERNEL:
            self.kernels.setdefault(obj.parsed.name, obj)
        elif value.type == OBJECT:
            raise self.error(node, f"{node.id!r} is not a value host code can use")
        return value

    def expr_Attribute(self, node: ast.Attribute) -> E:
        if self.resolve(node.value) is not None:
            return self.global_attribute(node)
        base = self.expr(node.value)
        if base.type == TENSOR and node.attr == "dtype" and getattr(node.value, "id", None) in self.dtype_binding:
            return literal(self.dtype_binding[node.value.id])
        if base.type == DTYPE and base.is_const and node.attr in ("name", "itemsize"):
            return base if node.attr == "name" else literal(base.const.itemsize)
        x = base.node
        table = {(TENSOR, "shape"): (Member(x, "shape"), SHAPE),
                 (TENSOR, "ndim"): (Member(Member(x, "shape"), "ndim"), INT),
                 (TENSOR, "numel"): (Invoke(Runtime.NUMEL, (Member(x, "shape"),)), INT),
                 (TENSOR, "dtype"): (Member(x, "dtype"), DTYPE), (DTYPE, "name"): (x, DTYPE),
                 (DTYPE, "itemsize"): (Invoke(Runtime.DTYPE_SIZE, (x,)), INT),
                 (PLATFORM, "name"): (Invoke(Runtime.STRING, (Member(x, "name"),)), STR),
                 (PLATFORM, "vector_core_count"): (Init(HostType.INT, Member(x, "vectorCoreNum")), INT),
                 (PLATFORM, "ai_core_count"): (Init(HostType.INT, Member(x, "aiCoreNum")), INT),
                 (PLATFORM, "ub_bytes"): (Conv(HostType.INT, Member(x, "ubSize")), INT),
                 (PLATFORM, "ub_budget_bytes"): (Conv(HostType.INT, Member(x, "ubBudget")), INT),
                 (PLATFORM, "has_bf16"): (Member(x, "hasBf16"), BOOL)}
        if (base.type, node.attr) not in table:
            raise self.error(node, f"a {base.type.word} has no attribute {node.attr!r} in host code")
        return E(*table[base.type, node.attr])

    def global_attribute(self, node: ast.Attribute) -> E:
        value = literal(self.resolve(node))
        if value.type in (OBJECT, TUPLE):
            raise self.error(node, f"{ast.unparse(node)!r} is not a value host code can use")
        return value

    def expr_Subscript(self, node: ast.Subscript) -> E:
        base = self.expr(node.value)
        if base.type != SHAPE:
            raise self.error(node, f"a {base.type.word} cannot be indexed in host code")
        if isinstance(node.slice, ast.Slice):
            if node.slice.step is not None:
                raise self.error(node, "slices with a step are not supported in host code")
            start, stop = (self.int_expr(b).node if b is not None else Ident("ascdsl_host::NO_BOUND")
                           for b in (node.slice.lower, node.slice.upper))
            return E(Invoke(Runtime.SLICE, (base.node, start, stop)), SHAPE)
        return E(Invoke(Runtime.DIM, (base.node, self.int_expr(node.slice).node)), INT)

    def expr_Tuple(self, node: ast.Tuple) -> E:
        items = [self.int_expr(e) for e in node.elts]
        if all(i.is_const for i in items):
            return literal(tuple(i.const for i in items))
        return E(Invoke(Runtime.MAKE_SHAPE, (Brace(tuple(i.node for i in items)),)), SHAPE)

    expr_List = expr_Tuple

    def expr_UnaryOp(self, node: ast.UnaryOp) -> E:
        if isinstance(node.op, ast.Not):
            operand = self.truth(node.operand)
            return literal(not operand.const) if operand.is_const else E(Not(Paren(operand.node)), BOOL)
        value = self.expr(node.operand)
        if value.type not in (INT, FLOAT) or not isinstance(node.op, ast.USub):
            raise self.error(node, "only -x and `not x` are unary operators in host code")
        if value.is_const:
            return literal(-value.const)
        return E(Neg(Paren(value.node)), value.type)

    def expr_BinOp(self, node: ast.BinOp) -> E:
        return self.binop(node)

    def binop(self, node: ast.BinOp) -> E:
        a, b = self.expr(node.left), self.expr(node.right)
        if isinstance(node.op, ast.Add) and a.type == b.type == SHAPE:
            return E(Invoke(Runtime.CONCAT, (a.node, b.node)), SHAPE)
        if a.type not in (INT, FLOAT, BOOL) or b.type not in (INT, FLOAT, BOOL):
            raise self.error(node, f"cannot apply {type(node.op).__name__} to a {a.type.word} and a {b.type.word}")
        if a.is_const and b.is_const and type(node.op) in FOLD:
            try:
                return literal(FOLD[type(node.op)](a.const, b.const))
            except ZeroDivisionError:
                pass  # the emitted helper raises it at run time, like Python
        kind = FLOAT if FLOAT in (a.type, b.type) else INT
        if isinstance(node.op, ast.Div):
            return E(Invoke(Runtime.TRUE_DIV, (a.node, b.node)), FLOAT)
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)):
            if kind == FLOAT:
                raise self.error(node, "// and % on floats are not supported in host code")
            helper = Runtime.FLOOR_DIV if isinstance(node.op, ast.FloorDiv) else Runtime.FLOOR_MOD
            return E(Invoke(helper, (a.node, b.node)), INT)
        if type(node.op) not in BINARY:
            raise self.error(node, f"the operator {type(node.op).__name__} is not supported in host code")
        return E(Paren(Bin(BINARY[type(node.op)], a.node, b.node)), kind)

    def expr_BoolOp(self, node: ast.BoolOp) -> E:
        """``and``/``or`` on truth values; a constant operand decides or drops out, as in Python."""
        stop = not isinstance(node.op, ast.And)  # the value that ends the chain
        items = []
        for v in node.values:
            value = self.truth(v)
            if value.is_const:
                if value.const == stop:
                    return literal(stop)
                continue
            items.append(value.node)
        if not items:
            return literal(not stop)
        return E(Paren(Logic(not stop, tuple(items))), BOOL)

    def expr_IfExp(self, node: ast.IfExp) -> E:
        cond = self.truth(node.test)
        if cond.is_const:
            return self.expr(node.body if cond.const else node.orelse)
        a, b = self.expr(node.body), self.expr(node.orelse)
        if a.type != b.type:
            raise self.error(node, f"both branches must have one type in host code, got {a.type.word} and "
                                   f"{b.type.word}")
        return E(Paren(Cond(cond.node, a.node, b.node)), a.type)

    def expr_Compare(self, node: ast.Compare) -> E:
        """A chain of comparisons; one of build-time values is decided here (a False one decides the chain, a
        True one drops out, as :meth:`expr_BoolOp`'s operands do)."""
        parts, left = [], self.expr(node.left)
        for op, right_node in zip(node.ops, node.comparators):
            if isinstance(op, (ast.In, ast.NotIn)):
                options = self.resolve(right_node) if isinstance(right_node, (ast.Name, ast.Attribute)) else None
                if options is None:
                    if not isinstance(right_node, (ast.Tuple, ast.List)):
                        raise self.error(right_node, "`in` needs a tuple of constants in host code")
                    options = tuple(ast.literal_eval(e) for e in right_node.elts)
                tests = [self.equal(node, left, literal(o)) for o in options]
                if any(t is True for t in tests):
                    parts.append(isinstance(op, ast.In))
                elif all(t is False for t in tests):
                    parts.append(isinstance(op, ast.NotIn))
                else:
                    test = Paren(Logic(False, tuple(t for t in tests if t is not False)))
                    parts.append(test if isinstance(op, ast.In) else Not(test))
                continue
            right = self.expr(right_node)
            if type(op) not in COMPARE:
                raise self.error(node, f"the comparison {type(op).__name__} is not supported in host code")
            if isinstance(op, (ast.Eq, ast.NotEq)):
                parts.append(self.equal(node, left, right, negate=isinstance(op, ast.NotEq)))
            elif left.type in (INT, FLOAT, BOOL) and right.type in (INT, FLOAT, BOOL):
                parts.append(ORDER[type(op)](left.const, right.const) if left.is_const and right.is_const
                             else Bin(COMPARE[type(op)], left.node, right.node))
            else:
                raise self.error(node, f"cannot order a {left.type.word} and a {right.type.word}")
            left = right
        if False in parts:
            return literal(False)
        parts = [p for p in parts if p is not True]
        if not parts:
            return literal(True)
        return E(parts[0] if len(parts) == 1 else Paren(Logic(True, tuple(Paren(p) for p in parts))), BOOL)

    def equal(self, node: ast.AST, a: E, b: E, negate: bool = False):
        """The test ``a == b`` (``a != b``): an expression node, or a bool where both are build-time values."""
        if a.type == DTYPE and b.type == STR:
            if b.const not in dtypes.BY_NAME:
                return negate
            b = literal(dtypes.lookup(b.const))
        if a.is_const and b.is_const and (a.type == b.type or {a.type, b.type} <= {INT, FLOAT, BOOL}):
            return (a.const == b.const) != negate
        if a.type == SHAPE and b.type == SHAPE:
            same = Invoke(Runtime.SHAPE_EQ, (a.node, b.node))
            return Not(same) if negate else same
        numeric = (INT, FLOAT, BOOL)
        if a.type == b.type or a.type in numeric and b.type in numeric:
            return Bin(BinOp.NE if negate else BinOp.EQ, a.node, b.node)
        raise self.error(node, f"cannot compare a {a.type.word} with a {b.type.word} in host code")

    def expr_JoinedStr(self, node: ast.JoinedStr) -> E:
        return E(self.message(node), STR)

    def message(self, node: ast.AST):
        """A C++ std::string expression for a message: a string constant or an f-string."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return Invoke(Runtime.STRING, (Value(node.value),))
        if not isinstance(node, ast.JoinedStr):
            raise self.error(node, "a message is a string or an f-string in host code")
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(Value(value.value))
                continue
            if value.conversion != -1 or value.format_spec is not None:
                raise self.error(value, "f-string conversions and format specs are not supported in host code")
            item = self.expr(value.value)
            parts.append(item.node if item.type == STR else Invoke(FORMAT[item.type], (item.node,)))
        if not parts or isinstance(parts[0], Value):  # a std::string from the start: `+` joins no two literals
            parts[:1] = [Invoke(Runtime.STRING, tuple(parts[:1]) or (Value(""),))]
        return concat(parts)

    def expr_Call(self, node: ast.Call) -> E:
        fn = self.resolve(node.func)
        if fn is planner.largest_block:
            return self.planner.largest_block(node)
        if fn is planner.largest_extent:
            return self.planner.largest_extent(node)
        if fn is Launch:
            raise self.error(node, "host code makes its ascdsl.Launch in the return statement"
                             + ("" if self.layout is not None else ", and an output-shape function makes none"))
        if node.keywords:
            raise self.error(node, "keyword arguments are not supported in host calls")
        args = [self.expr(a) for a in node.args]
        if fn in (min, max) and len(args) >= 2 and all(a.type in (INT, FLOAT) for a in args):
            kind = FLOAT if any(a.type == FLOAT for a in args) else INT
            if all(a.is_const for a in args):
                return literal(fn(a.const for a in args))
            result = args[0].node
            for a in args[1:]:
                result = Invoke(Runtime.MIN if fn is min else Runtime.MAX, (result, a.node), kind)
            return E(result, kind)
        if fn in (language.cdiv, language.next_power_of_2) and len(args) == (2 if fn is language.cdiv else 1):
            if not all(a.type == INT for a in args):
                raise self.error(node, f"{fn.__name__} takes ints")
            if all(a.is_const for a in args) and (fn is language.next_power_of_2 or args[1].const != 0):
                return literal(fn(*(a.const for a in args)))
            helper = Runtime.CEIL_DIV if fn is language.cdiv else Runtime.NEXT_POWER_OF_2
            return E(Invoke(helper, tuple(a.node for a in args)), INT)
        if fn is len and len(args) == 1 and args[0].type == SHAPE:
            return E(Init(HostType.INT, Member(args[0].node, "ndim")), INT)
        if fn in (int, float) and len(args) == 1 and args[0].type in (INT, FLOAT, BOOL):
            kind = INT if fn is int else FLOAT
            # int(inf) and int(nan) raise: at run time, like Python
            if args[0].is_const and (fn is float or abs(args[0].const) < float("inf")):
                return literal(fn(args[0].const))
            return E(Conv(kind, args[0].node), kind)
        if fn is abs and len(args) == 1 and args[0].type in (INT, FLOAT):
            if args[0].is_const:
                return literal(abs(args[0].const))
            return E(Invoke(Runtime.ABS, (args[0].node,)), args[0].type)
        name = ast.unparse(node.func)
        raise self.error(node, f"{name}(...) cannot be called in host code",
                         hint="host code may call min, max, abs, int, float, len, ascdsl.cdiv, "
                              "ascdsl.next_power_of_2, ascdsl.planner.largest_block and largest_extent, and "
                              "@ascdsl.host helpers (`x = helper(...)`)")


def host_body(tree: ast.FunctionDef | ast.Lambda) -> list[ast.stmt]:
    """The statements of a host function's syntax tree (a lambda is a function whose body returns its expression)."""
    if isinstance(tree, ast.FunctionDef):
        return tree.body
    return [ast.copy_location(ast.Return(tree.body), tree.body)]


def concat(parts):
    """``a + b + ...`` of strings (adjacent literals joined into one)."""
    def text(x):  # a literal's string, or None
        if isinstance(x, Invoke) and x.fn is Runtime.STRING:
            x = x.args[0]
        return x.value if isinstance(x, Value) and isinstance(x.value, str) else None

    joined = []
    for p in parts:
        if joined and text(joined[-1]) is not None and isinstance(p, Value) and text(p) is not None:
            both = Value(text(joined[-1]) + p.value)
            joined[-1] = Invoke(Runtime.STRING, (both,)) if isinstance(joined[-1], Invoke) else both
        else:
            joined.append(p)
    result = joined[0]
    for p in joined[1:]:
        result = Bin(BinOp.ADD, result, p)
    return result
