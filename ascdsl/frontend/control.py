"""Structured control flow for :class:`~.codegen.CodeGen`: ``for`` loops and ``if`` statements.

A runtime ``for`` becomes a ``for`` op whose loop-carried values are the names assigned in the body
that are defined before the loop; a runtime ``if`` becomes an ``if`` op yielding the names defined
at the end of both branches. Their types must not change (a located error otherwise); Python
literals among them become constants of the other side's type. Every region ends with ``yield``.
Conditions and ranges on constexprs are resolved at compile time, and ``tl.static_range`` unrolls.
"""
from __future__ import annotations

import ast
import builtins as py
import inspect

from .. import language as tl
from ..errors import CompilationError
from ..ir import Op, Type, Value
from ..semantics import Literal, SemanticError, literal_dtype, promote, weak_dtype
from .emit import describe, is_constexpr


def assigned_names(stmts: list[ast.stmt]) -> list[str]:
    """Names assigned anywhere in ``stmts``, in order of first appearance."""
    names = [n.id for s in stmts for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    return list(dict.fromkeys(names))


def literal_fits(value, type: Type) -> bool:
    """Whether a Python literal can stand for a value of ``type`` (as a weak literal would, e.g. 0 for a
    float, but not 0.5 for an int, which would silently truncate)."""
    try:
        return weak_dtype(value, type.dtype) == type.dtype
    except SemanticError:
        return False


class ControlFlow:
    """The ``visit_For``/``visit_If`` half of CodeGen (it provides ``em``, ``scope``, ``visit``...)."""

    def visit_If(self, node: ast.If) -> None:
        cond = self.condition(node.test)
        if is_constexpr(cond):
            return self.visit_stmts(node.body if cond else node.orelse)
        before, b = self.scope, self.em.b
        # NOTE: the else block is built while the then block is still open, so that both yields
        # are emitted knowing the joined types of the two branches.
        with b.block([]):
            then_scope = self.visit_branch(node.body, before)
            with b.block([]):
                else_scope = self.visit_branch(node.orelse, before)
                names = [n for n in then_scope if n in else_scope]
                joined = {n: self.join(n, then_scope[n], else_scope[n]) for n in names}
                carried = [n for n in names if joined[n] is not None]
                self.emit_yield(else_scope, carried, joined)
            else_block = b.last_block
            self.emit_yield(then_scope, carried, joined)
        then_block = b.last_block
        results = () if not carried and len(then_block.body) == len(else_block.body) == 1 else b.emit(
            Op.IF, [joined[n] for n in carried], [cond], regions=[then_block, else_block], loc=self.fn.loc(node))
        self.scope = {**before, **{n: then_scope[n] for n in names}, **dict(zip(carried, results))}

    def visit_branch(self, stmts: list[ast.stmt], before: dict) -> dict:
        self.scope = dict(before)
        self.visit_stmts(stmts)
        return self.scope

    def join(self, name: str, a, b) -> Type | None:
        """The type ``name`` has after an if (None: the same constexpr on both sides)."""
        if a is b or (is_constexpr(a) and is_constexpr(b) and type(a) is type(b) and a == b):
            return None
        if isinstance(a, Value) and isinstance(b, Value):
            if a.type != b.type:
                raise self.changed(name, a.type, b.type, "if")
            return a.type
        if isinstance(a, Value) or isinstance(b, Value):
            value, other = (a, b) if isinstance(a, Value) else (b, a)
            if not isinstance(other, Literal):
                raise self.changed(name, value.type, describe(other), "if")
            if not literal_fits(other, value.type):
                sides = (value.type, f"the literal {other!r}")
                raise self.changed(name, *(sides if value is a else sides[::-1]), "if")
            return value.type
        if isinstance(a, Literal) and isinstance(b, Literal):
            return Type(promote(literal_dtype(a), literal_dtype(b)))
        raise self.changed(name, describe(a), describe(b), "if")

    def changed(self, name: str, first, second, where: str) -> CompilationError:
        message = {"if": f"`{name}` is {first} in one branch of the if and {second} in the other",
                   "loop": f"`{name}` is {first} before the loop and {second} after an iteration"}[where]
        return self.error(self.assigned_at[name], message + "; it must keep one type",
                          "cast with .to(dtype), or give it its final shape and dtype first, "
                          "e.g. acc = tl.zeros((BLOCK,), tl.float32)")

    def emit_yield(self, scope: dict, names: list[str], types: dict[str, Type]) -> None:
        values = [self.carry(n, scope[n], types[n]) for n in names]
        self.em.b.emit(Op.YIELD, (), values, loc=self.em.loc)

    def carry(self, name: str, value, type: Type) -> Value:
        """``value`` as a value of exactly ``type`` (literals become constants)."""
        if isinstance(value, Value):
            if value.type != type:
                raise self.changed(name, type, value.type, "loop")
            return value
        if isinstance(value, Literal):
            if not literal_fits(value, type):
                raise self.changed(name, type, f"the literal {value!r}", "loop")
            return self.em.const(value, type.dtype, type.shape)
        raise self.changed(name, type, describe(value), "loop")

    def visit_For(self, node: ast.For) -> None:
        if not isinstance(node.target, ast.Name):
            raise self.error(node.target, "a for loop needs one name as its target", "for i in range(n):")
        if node.orelse:
            raise self.error(node, "unsupported Python construct in a kernel: `for ... else`",
                             "move the else body after the loop")
        unrolled, bounds = self.loop_range(node.iter)
        if unrolled:
            for i in py.range(*bounds):
                self.assign(node.target, i)
                self.visit_stmts(node.body)
        else:
            self.runtime_loop(node, *bounds)

    def loop_range(self, node: ast.expr) -> tuple[bool, tuple]:
        """(unrolled?, (start, end, step)) of a loop's ``range``/``tl.range``/``tl.static_range``."""
        func = self.visit(node.func) if isinstance(node, ast.Call) else None
        if not any(func is f for f in (py.range, tl.range, tl.static_range)):
            raise self.error(node, "a for loop must iterate over range(...), tl.range(...) or "
                             "tl.static_range(...)", "loop over indices: for i in range(n)")
        args = [self.visit(a) for a in node.args]
        kwargs = {k.arg: self.visit(k.value) for k in node.keywords}
        try:
            bound = inspect.signature(tl.range).bind(*args, **kwargs)
        except TypeError as e:
            raise self.error(node, f"wrong arguments for range(): {e}") from None
        start, end, step = (bound.arguments.get(k) for k in ("start", "end", "step"))
        start, end, step = (0, start, step or 1) if end is None else (start, end, step or 1)
        if func is tl.static_range and not all(isinstance(x, int) for x in (start, end, step)):
            raise self.error(node, "tl.static_range bounds must be constexpr ints",
                             "use range(...) for bounds known only at run time")
        if isinstance(step, Value) or step <= 0:
            raise self.error(node, f"the step of a loop must be a positive constexpr int, got {describe(step)}",
                             "count upwards and compute the index, e.g. j = n - 1 - i")
        return func is tl.static_range, (start, end, step)

    def runtime_loop(self, node: ast.For, start, end, step) -> None:
        b, before, target = self.em.b, self.scope, node.target.id
        bounds = [x for x in (start, end, step) if isinstance(x, Value)]
        iv_dtype = literal_dtype(0)
        for x in (start, end, step):
            if not (isinstance(x, int) or (isinstance(x, Value) and x.type.is_scalar and x.type.dtype.is_int)):
                raise self.error(node.iter, f"loop bounds must be int scalars, got {describe(x)}")
        for x in bounds:
            iv_dtype = promote(iv_dtype, x.type.dtype)
        lo, hi, st = (self.em.value(x, iv_dtype) for x in (start, end, step))
        carried, inits = [], []
        for name in assigned_names(node.body):
            value = before.get(name)
            if name != target and isinstance(value, (Value, *Literal)):
                carried.append(name)
                inits.append(value if isinstance(value, Value) else self.em.const(value, literal_dtype(value)))
        with b.block([Type(iv_dtype)] + [v.type for v in inits]) as (iv, *args):
            self.scope = {**before, **dict(zip(carried, args)), target: iv}
            self.visit_stmts(node.body)
            for name in assigned_names(node.body):
                if name in before and name not in carried and self.scope[name] is not before[name]:
                    raise self.changed(name, describe(before[name]), describe(self.scope[name]),
                                       "loop")
            b.emit(Op.YIELD, (), [self.carry(n, self.scope[n], v.type) for n, v in zip(carried, inits)],
                   loc=self.fn.loc(node))
        results = b.emit(Op.FOR, [v.type for v in inits], [lo, hi, st, *inits], regions=[b.last_block],
                         loc=self.fn.loc(node))
        self.scope = {**before, **dict(zip(carried, results))}

    def condition(self, node: ast.expr):
        """A branch condition: a constexpr, or a runtime scalar as bool."""
        cond = self.visit(node)
        if is_constexpr(cond):
            return cond
        if not cond.type.is_scalar:
            raise self.error(node, f"a condition must be a scalar, got {describe(cond)}",
                             "use tl.where(mask, a, b) to select between tiles")
        return self.em.to_bool(cond)
