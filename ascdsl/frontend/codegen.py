"""Python ``ast`` -> tile IR for one ``@jit`` function body (a kernel, or a helper being inlined).

:class:`CodeGen` is an ``ast.NodeVisitor`` over a whitelist: a construct is supported iff there
is a ``visit_X`` for it, and :func:`check_syntax` applies the same whitelist when a function is
decorated. During code generation a name is bound to an IR :class:`Value` (known at run time) or
to a Python object (a constexpr, a dtype, a function, a module); expressions on constexprs are
evaluated in Python and emit nothing.
"""
from __future__ import annotations

import ast
import builtins as py
import difflib
import functools
import operator
import os
import types

from .. import dtypes, language as tl
from ..dtypes import DType, PointerType
from ..errors import CompilationError, Error
from ..ir import Op, Value
from ..ir.symbol import Undecided
from ..language.helper import Helper
from ..semantics import Literal, SemanticError
from .blockptr import BlockPointer, TensorDescriptor, reject_operators
from .builtins import BUILTINS, METHODS, PY_BUILTINS, call_builtin, fold, fold_call, is_foldable, kernel_object
from .control import ControlFlow
from .emit import Emitter, describe, is_constexpr
from .source import ParsedFunction, parse_function

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

BINARY = {ast.Add: (operator.add, Op.ADD), ast.Sub: (operator.sub, Op.SUB),
          ast.Mult: (operator.mul, Op.MUL), ast.Div: (operator.truediv, Op.DIV),
          ast.FloorDiv: (operator.floordiv, Op.IDIV), ast.Mod: (operator.mod, Op.MOD),
          ast.BitAnd: (operator.and_, Op.AND), ast.BitOr: (operator.or_, Op.OR),
          ast.BitXor: (operator.xor, Op.XOR), ast.Pow: (operator.pow, None),
          ast.LShift: (operator.lshift, Op.SHL), ast.RShift: (operator.rshift, Op.SHR),
          ast.MatMult: (operator.matmul, None)}
COMPARE = {ast.Lt: (operator.lt, Op.LT), ast.LtE: (operator.le, Op.LE), ast.Gt: (operator.gt, Op.GT),
           ast.GtE: (operator.ge, Op.GE), ast.Eq: (operator.eq, Op.EQ), ast.NotEq: (operator.ne, Op.NE),
           ast.Is: (operator.is_, None), ast.IsNot: (operator.is_not, None),
           ast.In: (lambda a, b: a in b, None), ast.NotIn: (lambda a, b: a not in b, None)}
UNARY = {ast.USub: (operator.neg, Op.NEG), ast.Invert: (operator.invert, Op.NOT),
         ast.UAdd: (operator.pos, None), ast.Not: (operator.not_, None)}
SYMBOLS = {ast.Pow: "**", ast.MatMult: "@", ast.In: "in",
           ast.NotIn: "not in"}
DTYPE_ATTRIBUTES = ("element_ty", "name", "itemsize", "is_float", "is_int")
DTYPE_QUERIES = {"primitive_bitwidth": lambda d: d.bits, "scalar": lambda d: d}
DTYPE_METHODS = {
    "is_floating": lambda d: d.is_float, "is_int": lambda d: d.is_int, "is_ptr": lambda d: isinstance(d, PointerType),
    "is_int_signed": lambda d: d.kind == "int", "is_int_unsigned": lambda d: d.kind == "uint",
    "is_bool": lambda d: d.kind == "bool", "is_standard_floating": lambda d: d.is_float,
    "is_block": lambda d: False, "is_fp64": lambda d: False, "is_fp8": lambda d: False,
    **{f"is_{short}": (lambda name: lambda d: d.name == name)(name) for short, name in (
        ("fp16", "float16"), ("bf16", "bfloat16"), ("fp32", "float32"), ("int1", "bool"), ("int8", "int8"),
        ("int16", "int16"), ("int32", "int32"), ("int64", "int64"), ("uint8", "uint8"))},
}
"""Triton's dtype methods (``x.dtype.is_floating()``), folded at compile time."""
DESCRIPTOR_METHODS = {"load": tl.load_tensor_descriptor, "store": tl.store_tensor_descriptor}

UNSUPPORTED = {
    ast.Break: ("`break`", "loops run their full range; guard the body with a mask or an if"),
    ast.Continue: ("`continue`", "guard the rest of the body with an if"),
    ast.Lambda: ("lambdas", "define an @ascdsl.jit helper function at module level"),
    ast.FunctionDef: ("nested functions", "define an @ascdsl.jit helper function at module level"),
    ast.ClassDef: ("classes", "define classes outside kernels"),
    ast.ListComp: ("list comprehensions", "unroll with `for i in tl.static_range(n)`"),
    ast.SetComp: ("set comprehensions", "unroll with `for i in tl.static_range(n)`"),
    ast.DictComp: ("dict comprehensions", "unroll with `for i in tl.static_range(n)`"),
    ast.GeneratorExp: ("generator expressions", "unroll with `for i in tl.static_range(n)`"),
    ast.Try: ("`try`", "kernels cannot catch exceptions; check conditions with tl.static_assert"),
    ast.With: ("`with`", "kernels have no context managers"),
    ast.Raise: ("`raise`", "use tl.static_assert(condition, message) on constexprs"),
    ast.Global: ("`global`", "read module constants directly; pass values as arguments"),
    ast.Nonlocal: ("`nonlocal`", "pass values as arguments and return results"),
    ast.Import: ("`import` in a kernel", "import at module level"),
    ast.ImportFrom: ("`import` in a kernel", "import at module level"),
    ast.Delete: ("`del`", "just stop using the name"),
    ast.JoinedStr: ("f-strings", "pass values separately to tl.static_print / tl.device_print"),
    ast.Slice: ("slicing", "tiles accept only `:` and `None` (x[:, None]); use masks to select"),
    ast.Starred: ("`*` unpacking", "pass arguments one by one"),
}
# Nodes that are never visited on their own (their parents handle them).
PASSIVE = (ast.Slice, ast.keyword, ast.arg, ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)


def check_syntax(fn: ParsedFunction) -> None:
    """Reject the first unsupported construct of ``fn`` (the same whitelist as :class:`CodeGen`)."""
    bad = [node for stmt in fn.tree.body for node in ast.walk(stmt)
           if hasattr(node, "lineno") and not isinstance(node, PASSIVE)
           and not hasattr(CodeGen, "visit_" + type(node).__name__)]
    if bad:
        raise unsupported(fn, min(bad, key=lambda n: (n.lineno, n.col_offset)))


def inlined_source(func) -> ParsedFunction | None:
    """The source a call of ``func`` inlines: an ``@ascdsl.jit`` function's, or a language
    :class:`~ascdsl.language.helper.Helper`'s (parsed and checked on its first call); else None."""
    if isinstance(func, Helper):
        return _helper_source(func.fn)
    parsed = getattr(func, "parsed", None)
    return parsed if isinstance(parsed, ParsedFunction) else None


@functools.cache
def _helper_source(fn) -> ParsedFunction:
    parsed = parse_function(fn)
    check_syntax(parsed)
    return parsed


def unsupported(fn: ParsedFunction, node: ast.AST) -> CompilationError:
    what, hint = UNSUPPORTED.get(type(node), (f"`{type(node).__name__}`", None))
    return fn.error(node, f"unsupported Python construct in a kernel: {what}", hint or (
        "kernels support assignments, operators, calls of tl builtins and @ascdsl.jit functions, "
        "for loops over range, while loops and if/else"))


def _bare_return(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Return) and stmt.value is None


def _returns_early(stmt: ast.stmt) -> bool:
    """An ``if`` with a bare ``return`` in its branches (outside loops): an early exit."""
    if not isinstance(stmt, ast.If):
        return False
    return any(_bare_return(s) or _returns_early(s) for s in stmt.body + stmt.orelse)


def _then(stmts: list[ast.stmt], rest: list[ast.stmt]) -> list[ast.stmt]:
    """``stmts`` followed by ``rest`` on every path through them that does not return: as Triton
    compiles early returns outside loops (``if c: return`` makes the rest of the kernel its else)."""
    out = []
    for i, stmt in enumerate(stmts):
        if _bare_return(stmt):
            return out or [ast.Pass()]
        if _returns_early(stmt):
            tail = stmts[i + 1:] + rest
            return out + [ast.copy_location(ast.If(stmt.test, _then(stmt.body, tail), _then(stmt.orelse, tail)), stmt)]
        out.append(stmt)
    return out + (_then(rest, []) if any(map(_returns_early, rest)) else rest)  # a later early return too


class BoundMethod:
    """``x.sum`` before it is called: the builtin and its first argument."""

    def __init__(self, function, value):
        self.function, self.value = function, value


class CodeGen(ControlFlow, ast.NodeVisitor):
    """Emits one function body; helpers are inlined by a nested CodeGen sharing the emitter."""

    def __init__(self, fn: ParsedFunction, em: Emitter, scope: dict, callers: tuple = (), pinned=None):
        self.fn, self.em, self.scope = fn, em, dict(scope)
        self.callers = callers + (fn,)
        self.pinned = pinned  # inside an ascdsl library helper: the user's call site, for every loc
        self.assigned_at: dict[str, ast.AST] = {}
        self.result = None
        self.returned = False  # a return was reached (the rest of the body is not compiled)
        self.runtime_depth = 0  # nesting of runtime ifs and loops, where returns are not allowed
        self.unrolling = 0  # nesting of tl.static_range bodies (an early return there is not an else)

    def run(self):
        """Emit the body; returns the value of its final ``return`` (None without one)."""
        outer, self.em.call = self.em.call, self.call  # for builtins that call back (tl.reduce's combine_fn)
        try:
            self.visit_stmts(self.fn.tree.body)
        finally:
            self.em.call = outer
        return self.result

    def visit(self, node: ast.AST):
        saved = self.em.loc
        self.em.loc = self.pinned or (self.fn.loc(node) if hasattr(node, "lineno") else saved)
        try:
            return super().visit(node)
        except (CompilationError, Undecided):  # Undecided: for whoever passed a symbol (builtins.fold)
            raise
        except SemanticError as e:
            raise CompilationError(self.pinned or self.fn.loc(node), e.message, e.hint) from None
        except Error as e:  # e.g. a value check in a helper ascdsl folds on constexprs
            raise CompilationError(self.pinned or self.fn.loc(node), str(e)) from None
        except Exception as e:  # an ascdsl bug: still report it at the user's line
            raise CompilationError(self.pinned or self.fn.loc(node), f"internal compiler error: {type(e).__name__}: {e}",
                                   "this is a bug in ascdsl; please report it with this kernel") from e
        finally:
            self.em.loc = saved

    def generic_visit(self, node: ast.AST):
        raise unsupported(self.fn, node)

    def error(self, node: ast.AST, message: str, hint: str | None = None) -> CompilationError:
        return self.fn.error(node, message, hint)

    # ------------------------------------------------------------------------- statements

    def visit_stmts(self, stmts: list[ast.stmt]) -> None:
        for i, stmt in enumerate(stmts):
            if self.returned:  # a return under a constexpr condition ends the function there
                break
            if not (self.runtime_depth or self.unrolling) and _returns_early(stmt):  # the rest runs where no return is
                for s in _then([stmt], stmts[i + 1:]):
                    self.visit(s)
                break
            self.visit(stmt)

    def visit_Expr(self, node: ast.Expr) -> None:
        self.visit(node.value)

    def visit_Pass(self, node: ast.Pass) -> None:
        pass

    def visit_Assign(self, node: ast.Assign) -> None:
        value = self.visit(node.value)
        for target in node.targets:
            self.assign(target, value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is None:
            raise self.error(node, "a declaration without a value does nothing in a kernel", "assign a value")
        self.assign(node.target, self.visit(node.value))

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if not isinstance(node.target, ast.Name):
            raise self.assign_error(node.target)
        current = self.lookup(node.target.id)
        self.assign(node.target, self.binop(node.op, current, self.visit(node.value)))

    def assign(self, target: ast.expr, value) -> None:
        if isinstance(target, ast.Name):
            self.scope[target.id] = value
            self.assigned_at[target.id] = target
            if isinstance(value, Value):
                self.em.b.name(value, target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if not isinstance(value, tuple) or len(value) != len(target.elts):
                raise self.error(target, f"cannot unpack {describe(value)} into {len(target.elts)} names",
                                 "unpack tuples of the same length (tiles cannot be unpacked)")
            for t, v in zip(target.elts, value):
                self.assign(t, v)
        else:
            raise self.assign_error(target)

    def assign_error(self, target: ast.expr) -> CompilationError:
        return self.error(target, "only names can be assigned in a kernel (tiles are immutable)",
                          "build a new tile instead, e.g. x = tl.where(mask, new, x)")

    def visit_Assert(self, node: ast.Assert) -> None:
        """``assert cond, "message"``: checked now on constexprs, else a tl.device_assert."""
        message = "" if node.msg is None else self.visit(node.msg)
        call_builtin(self.em, tl.device_assert, [self.visit(node.test), message], {})

    def visit_Return(self, node: ast.Return) -> None:
        if self.runtime_depth:
            raise self.error(node, "`return` inside a runtime if or loop is not supported",
                             "assign the result to a variable (tl.where for tiles) and return it at the end")
        self.result = None if node.value is None else self.visit(node.value)
        self.returned = True
        if self.result is not None and len(self.callers) == 1:
            raise self.error(node, "a kernel cannot return a value", "write results with tl.store")

    # ------------------------------------------------------------------------- expressions

    def visit_Constant(self, node: ast.Constant):
        if node.value is not None and not isinstance(node.value, (*Literal, str)):
            raise self.error(node, f"unsupported constant {node.value!r} in a kernel")
        return node.value

    def visit_Name(self, node: ast.Name):
        return self.lookup(node.id)

    def lookup(self, name: str):
        if name in self.scope:
            return self.scope[name]
        found, value = self.fn.resolve(name)
        if found:
            return kernel_object(value, name)
        if name in PY_BUILTINS:
            return PY_BUILTINS[name]
        if hasattr(py, name):
            raise SemanticError(f"the Python builtin `{name}` cannot be used in a kernel",
                                "kernels can use range, min, max, len, int, float, bool and abs")
        close = difflib.get_close_matches(name, [*self.scope, *self.fn.closure(), *self.fn.globals], n=1)
        hint = f"did you mean `{close[0]}`?" if close else "define it before use, or pass it as an argument"
        raise SemanticError(f"undefined name `{name}`", hint)

    def visit_Attribute(self, node: ast.Attribute):
        return self.attribute(self.visit(node.value), node.attr)

    def attribute(self, obj, attr: str):
        if isinstance(obj, TensorDescriptor):
            if attr in DESCRIPTOR_METHODS:
                return BoundMethod(DESCRIPTOR_METHODS[attr], obj)
            if attr in ("shape", "strides", "block_shape", "dtype"):
                return getattr(obj, attr)
            raise SemanticError(f"tensor descriptors have no attribute `{attr}`",
                                "use desc.load(offsets), desc.store(offsets, value), desc.block_shape, desc.dtype")
        if isinstance(obj, (DType, PointerType)) and attr in DTYPE_QUERIES:
            return DTYPE_QUERIES[attr](obj)
        if isinstance(obj, tl.block_type) and attr in ("element_ty", "shape", "scalar", "numel"):
            return getattr(obj, attr)
        if obj is tl.PropagateNan:
            return getattr(obj, attr)
        if isinstance(obj, BlockPointer) and attr == "type":  # Triton's: a pointer to the block's block type
            return PointerType(tl.block_type(obj.base.type.dtype.element_ty, obj.block_shape))
        if isinstance(obj, types.ModuleType):
            if not hasattr(obj, attr) and obj is tl and attr in dtypes.TRITON_ONLY:
                raise SemanticError(f"`tl.{attr}` is a Triton dtype that ascdsl does not support",
                                    "kernels use " + ", ".join(d.name for d in dtypes.ALL))
            if not hasattr(obj, attr):
                raise SemanticError(f"module `{obj.__name__}` has no attribute `{attr}`", "check the spelling")
            return kernel_object(getattr(obj, attr), f"{obj.__name__}.{attr}")
        if isinstance(obj, Value):
            if attr in ("dtype", "shape"):
                return getattr(obj.type, attr)
            if attr == "type":  # Triton's: a tile's block type, a scalar's dtype
                return tl.block_type(obj.type.dtype, obj.type.shape) if obj.type.shape else obj.type.dtype
            if attr in METHODS:
                return BoundMethod(METHODS[attr], obj)
            methods = ", ".join(f".{m}()" for m in METHODS if m != "to")
            raise SemanticError(f"tiles have no attribute `{attr}`",
                                f"tiles have .dtype, .shape, .to(dtype) and {methods}")
        if attr in DTYPE_ATTRIBUTES and hasattr(obj, attr):
            return getattr(obj, attr)
        raise SemanticError(f"{describe(obj)} has no attribute `{attr}` usable in a kernel",
                            "dtypes have " + ", ".join(f".{a}" for a in DTYPE_ATTRIBUTES))

    def visit_Tuple(self, node: ast.Tuple) -> tuple:
        return tuple(self.visit(e) for e in node.elts)

    visit_List = visit_Tuple

    def visit_Subscript(self, node: ast.Subscript):
        value = self.visit(node.value)
        if isinstance(value, Value):
            return self.expand(value, node.slice)
        index = self.visit(node.slice)
        if isinstance(value, (tuple, str)) and isinstance(index, int):
            return fold(operator.getitem, value, index)
        raise SemanticError(f"cannot index {describe(value)} with {describe(index)}",
                            "index constexpr tuples (x.shape[0]) with constexpr ints")

    def expand(self, value: Value, index: ast.expr) -> Value:
        """``x[:, None]`` and friends: one ``:`` per kept axis, ``None`` adds a unit axis."""
        items = index.elts if isinstance(index, ast.Tuple) else [index]
        rank, axis, kept = len(value.type.shape), 0, 0
        for item in items:
            if isinstance(item, ast.Constant) and item.value is None:
                value = self.em.expand_dims(value, axis)
            elif isinstance(item, ast.Slice) and item.lower is item.upper is item.step is None:
                kept += 1
            else:
                raise self.error(item, "tiles can only be indexed with `:` and `None`, as in x[:, None]",
                                 "to select elements, load them with a mask or use tl.where")
            axis += 1
        if kept > rank:
            raise self.error(index, f"{kept} `:` entries index a tile of rank {rank}", "use one `:` per axis")
        return value

    def visit_BinOp(self, node: ast.BinOp):
        return self.binop(node.op, self.visit(node.left), self.visit(node.right))

    def binop(self, op: ast.operator, a, b):
        python, ir = BINARY[type(op)]
        reject_operators(a, b)
        if is_constexpr(a) and is_constexpr(b):
            return fold(python, a, b)
        if ir is None:
            raise SemanticError(f"operator `{SYMBOLS[type(op)]}` works only on constexprs in a kernel",
                                "for tiles, write it with * and the tl math functions")
        return self.em.binary(ir, a, b)

    def visit_UnaryOp(self, node: ast.UnaryOp):
        python, ir = UNARY[type(node.op)]
        x = self.visit(node.operand)
        reject_operators(x)
        if is_constexpr(x):
            return fold(python, x)
        if isinstance(node.op, ast.Not):  # on int tiles Triton's `not` is `~`; on scalars it is logical
            if not x.type.is_scalar and not x.type.dtype.is_float:
                return self.em.unary(Op.NOT, x)
            return self.em.unary(Op.NOT, self.em.to_bool(x))
        return x if ir is None else self.em.unary(ir, x)

    def visit_BoolOp(self, node: ast.BoolOp):
        op = Op.AND if isinstance(node.op, ast.And) else Op.OR
        result = self.visit(node.values[0])
        for operand in node.values[1:]:
            if is_constexpr(result):
                if bool(result) != (op == Op.AND):  # short circuit: False and ..., True or ...
                    return result
                result = self.visit(operand)
            else:
                rhs = self.visit(operand)
                rhs = bool(rhs) if is_constexpr(rhs) else self.em.to_bool(rhs)
                result = self.em.binary(op, self.em.to_bool(result), rhs)
        return result

    def visit_Compare(self, node: ast.Compare):
        values = [self.visit(node.left)] + [self.visit(c) for c in node.comparators]
        if not all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
            reject_operators(*values)
        if len(node.ops) > 1:
            if not is_constexpr(tuple(values)):
                raise SemanticError("chained comparisons work only on constexprs in a kernel",
                                    "combine masks instead: (a < b) & (b < c)")
            return all(fold(COMPARE[type(op)][0], a, b) for op, a, b in zip(node.ops, values, values[1:]))
        (op,), (a, b) = node.ops, values
        python, ir = COMPARE[type(op)]
        if ir is None or (is_constexpr(a) and is_constexpr(b)):
            return fold(python, a, b)
        return self.em.binary(ir, a, b)

    def visit_IfExp(self, node: ast.IfExp):
        cond = self.condition(node.test)
        if is_constexpr(cond):
            return self.visit(node.body if cond else node.orelse)
        return self.em.where(cond, self.visit(node.body), self.visit(node.orelse))

    def visit_Call(self, node: ast.Call):
        if isinstance(node.func, ast.Attribute):  # x.dtype.is_floating(): Triton's dtype methods
            owner = self.visit(node.func.value)
            if isinstance(owner, (DType, PointerType, tl.block_type)) and node.func.attr in DTYPE_METHODS:
                if node.args or node.keywords:
                    raise self.error(node, f"dtype.{node.func.attr}() takes no arguments")
                if isinstance(owner, tl.block_type):  # a block type answers for its element type
                    return True if node.func.attr == "is_block" else DTYPE_METHODS[node.func.attr](owner.element_ty)
                return DTYPE_METHODS[node.func.attr](owner)
            func = self.attribute(owner, node.func.attr)
        else:
            func = self.visit(node.func)
        args = [self.visit(a) for a in node.args]
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                raise self.error(kw, "unsupported Python construct in a kernel: `**` unpacking",
                                 "pass keyword arguments one by one")
            kwargs[kw.arg] = self.visit(kw.value)
        return self.call(func, args, kwargs)

    def call(self, func, args: list, kwargs: dict):
        """Call ``func`` (a builtin, an @jit or language helper, a foldable Python function) from kernel code."""
        if isinstance(func, BoundMethod):
            func, args = func.function, [func.value, *args]
        if any(func is f for f in BUILTINS):
            return call_builtin(self.em, func, args, kwargs)
        helper = inlined_source(func)
        if helper is not None:
            return self.inline(helper, args, kwargs)
        if is_foldable(func):
            return fold_call(func, args, kwargs, self.em)
        if func is tl.constexpr:
            return fold(lambda value: value, *args, **kwargs)
        if func is tl.pointer_type or func is tl.block_type:  # tl.pointer_type(tl.float32): a type
            if not is_constexpr((*args, *kwargs.values())):
                raise SemanticError(f"tl.{func.__name__}() takes dtypes and constexprs", "e.g. tl.pointer_type(tl.float32)")
            return fold(func, *args, **kwargs)
        if any(func is f for f in (py.range, tl.range, tl.static_range)):
            raise SemanticError("range(...) can only be the iterable of a for loop", "for i in range(n):")
        raise SemanticError(f"cannot call {describe(func)} in a kernel",
                            "kernels call tl builtins, @ascdsl.jit functions, min/max/abs, and len/int/"
                            "float/bool/math functions on constexprs")

    def inline(self, helper: ParsedFunction, args, kwargs):
        if helper in self.callers:
            raise SemanticError(f"`{helper.name}` calls itself; recursion is not supported in kernels",
                                "unroll with tl.static_range or loop with range")
        bound = helper.bind(args, kwargs)
        for name in helper.constexprs:
            if not is_constexpr(bound[name]):
                raise SemanticError(f"`{name}` of {helper.name}() is a tl.constexpr, but got {describe(bound[name])}",
                                    "pass a constexpr (a literal or a constexpr parameter)")
        site = self.pinned or self.em.loc
        library = self.pinned is not None or os.path.abspath(helper.file).startswith(_PACKAGE)
        try:
            return CodeGen(helper, self.em, bound, self.callers, pinned=site if library else None).run()
        except CompilationError as e:
            if library and self.pinned is None:  # report ascdsl's own helpers at the user's call
                raise CompilationError(site, e.message, e.hint, e.notes + (
                    f"inside ascdsl's `{helper.name}`",)) from None
            raise e.with_note(f"in `{helper.name}`, called from {site}") from None
