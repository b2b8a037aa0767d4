"""Structured control flow for :class:`~.codegen.CodeGen`: ``for``/``while`` loops, ``if`` statements.

A runtime ``for`` becomes a ``for`` op whose loop-carried values are the names assigned in the body
that are defined before the loop (a ``while`` op carries them too, and computes its condition in a
region of its own); a runtime ``if`` becomes an ``if`` op yielding the names defined at the end of
both branches. Their types must not change (a located error otherwise); Python
literals among them become constants of the other side's type. Every region ends with ``yield``.
Conditions and ranges on constexprs are resolved at compile time, and ``tl.static_range`` unrolls.
"""
from __future__ import annotations

import ast
import builtins as py
import inspect

from .. import language as tl
from ..dtypes import PointerType
from ..errors import CompilationError
from ..ir import Op, Type, Value
from ..ir.symbol import Poly, Undecided, equal
from ..semantics import Literal, SemanticError, literal_dtype, promote, weak_dtype
from .blockptr import BlockPointer, fold, runtime_parts, stepped, with_parts
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


MAX_UNROLL = 4096
"""The most iterations ``tl.static_range`` unrolls (a bound that keeps a typo from hanging the compiler)."""


class ControlFlow:
    """The ``visit_For``/``visit_If`` half of CodeGen (it provides ``em``, ``scope``, ``visit``...)."""

    def visit_If(self, node: ast.If) -> None:
        cond = self.condition(node.test)
        if is_constexpr(cond):
            return self.visit_stmts(node.body if cond else node.orelse)
        before, b = self.scope, self.em.b
        # NOTE: the else block is built while the then block is still open, so that both yields
        # are emitted knowing the joined types of the two branches. A name's runtime parts are
        # joined one by one (a block pointer's are its offsets).
        with b.block([]):
            then_scope = self.visit_branch(node.body, before)
            with b.block([]):
                else_scope = self.visit_branch(node.orelse, before)
                names = [n for n in then_scope if n in else_scope]
                sides = {n: self.split(n, then_scope[n], else_scope[n], "if") for n in names}
                joined = {(n, i): t for n in names for i, (x, y) in enumerate(zip(*sides[n]))
                          if (t := self.join(n, x, y)) is not None}
                self.emit_yield([sides[n][1][i] for n, i in joined], joined)
            else_block = b.last_block
            self.emit_yield([sides[n][0][i] for n, i in joined], joined)
        then_block = b.last_block
        results = () if not joined and len(then_block.body) == len(else_block.body) == 1 else b.emit(
            Op.IF, list(joined.values()), [cond], regions=[then_block, else_block], loc=self.fn.loc(node))
        merged = {n: list(sides[n][0]) for n in names}
        for (n, i), result in zip(joined, results):
            merged[n][i] = result
        self.scope = {**before, **{n: with_parts(then_scope[n], merged[n]) for n in names}}

    def visit_branch(self, stmts: list[ast.stmt], before: dict) -> dict:
        self.scope = dict(before)
        self.visit_runtime(stmts)
        return self.scope

    def visit_runtime(self, stmts: list[ast.stmt]) -> None:
        """Visit the body of a runtime if or loop (where ``return`` is an error)."""
        self.runtime_depth += 1
        try:
            self.visit_stmts(stmts)
        finally:
            self.runtime_depth -= 1

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

    def changed(self, name: str, first, second, where: str, hint: str | None = None) -> CompilationError:
        message = {"if": f"`{name}` is {first} in one branch of the if and {second} in the other",
                   "loop": f"`{name}` is {first} before the loop and {second} after an iteration"}[where]
        return self.error(self.assigned_at[name], message + "; it must keep one type",
                          hint or "cast with .to(dtype), or give it its final shape and dtype first, "
                          "e.g. acc = tl.zeros((BLOCK,), tl.float32)")

    def emit_yield(self, values: list, types: dict[tuple[str, int], Type]) -> None:
        """Yield ``values``, one per ``(name, part)`` key of ``types``, as values of those types."""
        self.em.b.emit(Op.YIELD, (), [self.carry(n, v, t) for v, ((n, _), t) in zip(values, types.items())],
                       loc=self.em.loc)

    def split(self, name: str, a, b, where: str) -> tuple[tuple, tuple]:
        """The runtime parts of two values of ``name`` side by side; block pointers must agree in
        everything but their offsets."""
        if (isinstance(a, BlockPointer) or isinstance(b, BlockPointer)) and not (
                isinstance(a, BlockPointer) and isinstance(b, BlockPointer) and a.same_layout(b)):
            hint = ("a block pointer may change only its offsets: create it once with tl.make_block_ptr "
                    "before the if or loop, and move it with tl.advance")
            if isinstance(a, BlockPointer) and isinstance(b, BlockPointer):
                place = {"if": "in the two branches of the if", "loop": "after an iteration"}[where]
                raise self.error(self.assigned_at[name], f"`{name}` is a block pointer with a different base, "
                                 f"shape, strides, block_shape or order {place}", hint)
            raise self.changed(name, describe(a), describe(b), where, hint)
        return runtime_parts(a), runtime_parts(b)

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
            self.unrolling += 1
            try:
                for i in py.range(*bounds):
                    if self.returned:
                        break
                    self.assign(node.target, i)
                    self.visit_stmts(node.body)
            finally:
                self.unrolling -= 1
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
            signature = inspect.signature(tl.static_range if func is tl.static_range else tl.range)
            bound = signature.bind(*args, **kwargs)
        except TypeError as e:
            raise self.error(node, f"wrong arguments for range(): {e}") from None
        start, end, step = (bound.arguments.get(k) for k in ("start", "end", "step"))
        step = 1 if step is None else step
        start, end = (0, start) if end is None else (start, end)
        if func is tl.static_range and not all(isinstance(x, int) for x in (start, end, step)):
            raise self.error(node, "tl.static_range bounds must be constexpr ints",
                             "use range(...) for bounds known only at run time")
        runtime_int = isinstance(step, Value) and step.type.is_scalar and step.type.dtype.is_int
        if not (runtime_int or (isinstance(step, (int, Poly)) and not equal(step, 0))):
            raise self.error(node, f"the step of a loop must be a nonzero int, got {describe(step)}",
                             "use a constexpr step or an int scalar argument")
        if func is tl.static_range and len(range(start, end, step)) > MAX_UNROLL:
            raise self.error(node, f"tl.static_range would unroll {len(range(start, end, step))} iterations, "
                                   f"more than {MAX_UNROLL}", "use range(...) for a loop that runs at run time")
        return func is tl.static_range, (start, end, step)

    def runtime_loop(self, node: ast.For, start, end, step) -> None:
        b, before, target = self.em.b, self.scope, node.target.id
        iv_dtype = literal_dtype(0)
        for x in (start, end, step):
            if not (isinstance(x, (int, Poly)) or (isinstance(x, Value) and x.type.is_scalar and x.type.dtype.is_int)):
                raise self.error(node.iter, f"loop bounds must be int scalars, got {describe(x)}")
            # constexpr bounds past int32 make an int64 loop
            iv_dtype = promote(iv_dtype, x.type.dtype if isinstance(x, Value) else literal_dtype(x))
        lo, hi, st = (self.em.value(x, iv_dtype) for x in (start, end, step))
        # block pointers advanced by constexprs are recomputed from the induction variable, which needs
        # a positive constexpr step; otherwise they are carried like any other value
        deltas = self.loop_deltas(node, before, Type(iv_dtype)) if isinstance(step, (int, Poly)) and step > 0 else {}
        if deltas and isinstance(step, Poly):
            raise Undecided("a block pointer a loop of a run-time tile extent's step advances: compile with values")
        carried, inits = [], []
        for name in assigned_names(node.body):
            value = before.get(name)
            if name != target and name not in deltas and isinstance(value, (Value, BlockPointer, *Literal)):
                carried.append(name)
                inits += [x if isinstance(x, Value) else self.em.const(x, literal_dtype(x))
                          for x in runtime_parts(value)]
        with b.block([Type(iv_dtype)] + [v.type for v in inits]) as (iv, *args):
            b.name(iv, target)
            if len(args) == len(carried):  # one runtime part per carried name: name the parts
                for name, arg in zip(carried, args):
                    b.name(arg, name)
            span = iv if not deltas or (isinstance(start, int) and start == 0) else self.em.binary(Op.SUB, iv, start)
            stepped_ = {n: stepped(self.em, before[n], span, step, d) for n, d in deltas.items()}
            self.scope = {**before, **self.rebuild(carried, before, args), **stepped_, target: iv}
            self.visit_runtime(node.body)
            for name in assigned_names(node.body):
                if name in before and name not in (*carried, *deltas) and self.scope[name] is not before[name]:
                    raise self.changed(name, describe(before[name]), describe(self.scope[name]),
                                       "loop")
            for name in deltas:
                self.split(name, before[name], self.scope[name], "loop")
            news = [(n, x) for n in carried for x in self.split(n, before[n], self.scope[n], "loop")[1]]
            b.emit(Op.YIELD, (), [self.carry(n, x, v.type) for (n, x), v in zip(news, inits)],
                   loc=self.fn.loc(node))
        results = b.emit(Op.FOR, [v.type for v in inits], [lo, hi, st, *inits], regions=[b.last_block],
                         loc=self.fn.loc(node))
        if len(results) == len(carried):
            for name, result in zip(carried, results):
                b.name(result, name)
        self.scope = {**before, **self.rebuild(carried, before, results)}
        if deltas:  # after the loop: moved once per iteration, max(end - start, 0) rounded up to a step
            span = fold(self.em, Op.MAXIMUM, fold(self.em, Op.SUB, end, start), 0)
            span = fold(self.em, Op.MUL, fold(self.em, Op.IDIV, fold(self.em, Op.ADD, span, step - 1), step), step)
            self.scope.update({n: stepped(self.em, before[n], span, step, d) for n, d in deltas.items()})

    def visit_While(self, node: ast.While) -> None:
        """A ``while`` loop: a ``while`` op carrying the names the body assigns that are defined
        before it, with a region computing the condition from them and a region for the body."""
        if node.orelse:
            raise self.error(node, "unsupported Python construct in a kernel: `while ... else`",
                             "move the else body after the loop")
        b, before = self.em.b, self.scope
        carried, inits = [], []
        for name in assigned_names(node.body):
            value = before.get(name)
            if isinstance(value, (Value, BlockPointer, *Literal)):
                carried.append(name)
                inits += [x if isinstance(x, Value) else self.em.const(x, literal_dtype(x))
                          for x in runtime_parts(value)]
        types = [v.type for v in inits]
        with b.block(types) as args:
            self.scope = {**before, **self.rebuild(carried, before, args)}
            cond = self.condition(node.test)
            if is_constexpr(cond):
                raise self.error(node.test, f"the condition of a `while` loop is always {bool(cond)} here",
                                 "a while loop needs a runtime condition (use `if` for a constexpr one)")
            b.emit(Op.YIELD, (), [cond], loc=self.fn.loc(node.test))
        test = b.last_block
        with b.block(types) as args:
            if len(args) == len(carried):
                for name, arg in zip(carried, args):
                    b.name(arg, name)
            self.scope = {**before, **self.rebuild(carried, before, args)}
            self.visit_runtime(node.body)
            for name in assigned_names(node.body):
                if name in before and name not in carried and self.scope[name] is not before[name]:
                    raise self.changed(name, describe(before[name]), describe(self.scope[name]), "loop")
            news = [(n, x) for n in carried for x in self.split(n, before[n], self.scope[n], "loop")[1]]
            b.emit(Op.YIELD, (), [self.carry(n, x, v.type) for (n, x), v in zip(news, inits)],
                   loc=self.fn.loc(node))
        results = b.emit(Op.WHILE, types, inits, regions=[test, b.last_block], loc=self.fn.loc(node))
        if len(results) == len(carried):
            for name, result in zip(carried, results):
                b.name(result, name)
        self.scope = {**before, **self.rebuild(carried, before, results)}

    def loop_deltas(self, node: ast.For, before: dict, iv_type: Type) -> dict[str, tuple[int, ...]]:
        """The block pointers the loop body advances by constexprs only, with their per-iteration
        deltas: found by a trial visit of the body from zero offsets (its IR is dropped). These are
        not loop-carried; their offsets are computed from the induction variable instead."""
        names = [n for n in assigned_names(node.body) if isinstance(before.get(n), BlockPointer)]
        if not names:
            return {}
        with self.em.b.block([iv_type]) as (iv,):
            self.scope = {**before, **{n: before[n].moved([0] * len(before[n].offsets)) for n in names},
                          node.target.id: iv}
            self.visit_runtime(node.body)
        after, self.scope = self.scope, before
        return {n: after[n].offsets for n in names if isinstance(after[n], BlockPointer)
                and after[n].same_layout(before[n]) and all(isinstance(o, int) for o in after[n].offsets)}

    @staticmethod
    def rebuild(names: list[str], templates: dict, flat) -> dict:
        """``names`` rebuilt like ``templates`` from the flat list of their runtime parts."""
        out, flat = {}, list(flat)
        for name in names:
            count = len(runtime_parts(templates[name]))
            out[name], flat = with_parts(templates[name], flat[:count]), flat[count:]
        return out

    def condition(self, node: ast.expr):
        """A branch condition: a constexpr, or a runtime scalar as bool."""
        cond = self.visit(node)
        if is_constexpr(cond):
            return cond
        if not cond.type.is_scalar:
            raise self.error(node, f"a condition must be a scalar, got {describe(cond)}",
                             "use tl.where(mask, a, b) to select between tiles")
        if isinstance(cond.type.dtype, PointerType):
            return True  # an array argument is never null (a None argument is a constexpr)
        return self.em.to_bool(cond)
