"""Traversal of the kernel IR and its verifier (see :mod:`ascdsl.backend.kir`)."""
from __future__ import annotations

import dataclasses

from .expr import (Bin, Brace, Buf, Cond, Const, Conv, Elem, ElemsPer, Field, GmValue, IsSame, Lit, Not, Role, SizeOf,
                   Struct, Text, Var, VarKind)
from .stmt import Barrier, Call, Flag, For, If, Kernel, Let, QOp, Queue, Run, Segment, Set, Stmt, While


# ----------------------------------------------------------------------------- traversal

def children(s: Stmt) -> tuple[Stmt, ...]:
    if isinstance(s, For):
        return s.body
    if isinstance(s, If):
        return s.body + s.orelse
    if isinstance(s, While):
        return s.test + s.body
    if isinstance(s, Segment):
        return s.copy_in + s.compute + s.copy_out
    if isinstance(s, Run):
        return s.stage.body
    return ()


def rewrite(body, fn) -> tuple:
    """``body`` with each statement ``s`` replaced by the statements ``fn(s)`` returns, the bodies of
    loops and branches rewritten first."""
    out: list = []
    for s in body:
        if isinstance(s, (For, If, While)):
            s = dataclasses.replace(s, **{f: rewrite(getattr(s, f), fn) for f in ("body", "orelse", "test")
                                          if hasattr(s, f)})
        out += fn(s)
    return tuple(out)


def restage(body, stages: dict) -> tuple:
    """``body`` with each stage call naming ``stages[its stage]`` (a pass that rewrote the stages)."""
    return rewrite(body, lambda s: (Run(stages[s.stage]) if isinstance(s, Run) else s,))


def walk(body) -> "list[Stmt]":
    """Every statement of ``body``, nested ones after their parent, in program order."""
    out: list = []
    _walk(body, out)
    return out


def _walk(body, out: list) -> None:
    for s in body:
        out.append(s)
        if isinstance(s, (For, If, While, Segment, Run)):
            _walk(children(s), out)


def exprs(s: Stmt) -> tuple:
    """The expressions a statement reads directly (not those of nested statements)."""
    if isinstance(s, Call):
        ops = (s.dst, *s.srcs, *s.work)
        return (*s.args, *(o.offset for o in ops if o is not None))
    if isinstance(s, (Let, Set)):
        return (s.expr,)
    if isinstance(s, For):
        return (s.start, s.stop, s.step)
    if isinstance(s, (If, While)):
        return (s.cond,)
    return ()


def sub_exprs(e) -> list:
    """``e`` and every expression inside it."""
    out: list = []
    _sub_exprs(e, out)
    return out


_LEAVES = (Var, Lit, Field, SizeOf, ElemsPer, Const, IsSame, Text)


def _sub_exprs(e, out: list) -> None:
    """:func:`sub_exprs` into one list (the passes walk every expression of every compile: a list made
    at each level and joined cost more than the walk)."""
    out.append(e)
    if isinstance(e, _LEAVES):
        return
    if isinstance(e, Bin):
        _sub_exprs(e.a, out)
        _sub_exprs(e.b, out)
    elif isinstance(e, Cond):
        _sub_exprs(e.c, out)
        _sub_exprs(e.a, out)
        _sub_exprs(e.b, out)
    elif isinstance(e, (Conv, Not)):
        _sub_exprs(e.x, out)
    elif isinstance(e, Brace):
        for x in e.items:
            _sub_exprs(x, out)
    elif isinstance(e, Elem):
        _sub_exprs(e.ref.offset, out)
        if not isinstance(e.index, int):
            _sub_exprs(e.index, out)
    elif isinstance(e, GmValue):
        _sub_exprs(e.gm.offset, out)


def vars_read(body) -> list[Var]:
    """Variables the statements of ``body`` read, first use first (nested statements included)."""
    seen: dict[Var, None] = {}
    for s in walk(body):
        for e in exprs(s):
            for x in sub_exprs(e):
                if isinstance(x, Var):
                    seen.setdefault(x)
    return list(seen)


def buffers(k: Kernel) -> list[Buf]:
    """Every buffer the kernel's statements touch, in first-touch order."""
    seen: dict[Buf, None] = {}
    for s in walk(k.process):
        if isinstance(s, Call):
            for b in (*s.writes, *s.reads):
                seen.setdefault(b)
        elif isinstance(s, Queue):
            seen.setdefault(s.buf)
        for e in exprs(s):
            for x in sub_exprs(e):
                if isinstance(x, Elem):
                    seen.setdefault(x.ref.buf)
    return list(seen)


# ----------------------------------------------------------------------------- verifier

class KirError(AssertionError):
    """A kernel IR invariant is broken (a backend bug, never a user error)."""


def verify(k: Kernel) -> Kernel:
    """Check the kernel IR's invariants; returns ``k``.

    * every variable is defined (Let, For, parameter of its stage, member) before it is read, and a variable key
      has one C type wherever it is defined, read or passed (the names are a key's: a stage's parameter is
      declared with its argument's type);
    * a view stays within its buffer's element type size, and views of one buffer agree on roles;
    * queue buffers are only touched between their ALLOC/DEQUE and their ENQUE/FREE (a buffer the program
      holds, :attr:`.Kernel.held`, anywhere: from its DeQue to the FreeTensor that ends ``Process``);
    * synchronisation nodes appear only after the sync pass (``stages`` set), segments only before.
    """
    keys: dict[int, Buf] = {}
    for b in buffers(k):
        if keys.setdefault(b.key, b) != b:
            raise KirError(f"buffer key {b.key} names two buffers: {keys[b.key]} and {b}")
    staged = bool(k.stages)
    types: dict[int, object] = {}

    def typed(vs) -> None:
        for v in vs:
            if types.setdefault(v.key, v.ctype) != v.ctype:
                raise KirError(f"variable key {v.key} ({v.hint}) has two C types: {types[v.key]} and {v.ctype}")

    def check(body, scope: set, held: set) -> None:
        scope = set(scope)
        for s in body:
            if isinstance(s, While):  # its condition reads what its test defines
                check(s.test + (If(s.cond, ()),) + s.body, scope, held)
                continue
            typed([s.var] if isinstance(s, (Let, Set, For)) else s.stage.params if isinstance(s, Run) else ())
            for e in exprs(s):
                typed(x for x in sub_exprs(e) if isinstance(x, Var))
                for x in sub_exprs(e):
                    if isinstance(x, Var) and x.kind is VarKind.LOCAL and x not in scope:
                        raise KirError(f"{x} is read before it is defined")
                    if isinstance(x, Var) and x.kind is VarKind.MEMBER and x not in k.members:
                        raise KirError(f"{x} is not a member of {k.name}")
            if isinstance(s, Call):
                for r in s.refs:
                    if r.extent <= 0:
                        raise KirError(f"{s.api} touches an empty view of {r.buf.hint}")
                    if r.buf.role in (Role.INPUT, Role.OUTPUT) and staged and r.buf not in held:
                        raise KirError(f"{s.api} touches {r.buf.hint} outside its queue's hold")
            if isinstance(s, Queue):
                if s.op in (QOp.ALLOC, QOp.DEQUE):
                    held.add(s.buf)
                else:
                    held.discard(s.buf)
            if isinstance(s, Segment) and staged:
                raise KirError("a segment is left after staging")
            if isinstance(s, (Barrier, Flag)) and not staged:
                raise KirError("synchronisation before staging")
            if isinstance(s, Let) and s.var.ctype is Struct.BIT_MASK and not (
                    isinstance(s.expr, Brace) and len(s.expr.items) == 2):
                raise KirError(f"bit mask {s.var.hint} is not two words: {s.expr}")
            if isinstance(s, Let):
                scope.add(s.var)
            if isinstance(s, For):
                check(s.body, scope | {s.var}, held)
            elif isinstance(s, If):
                check(s.body, scope, held)
                check(s.orelse, scope, held)
            elif isinstance(s, Segment):
                check(s.copy_in + s.compute + s.copy_out, scope, set(k.held))
            elif isinstance(s, Run):
                missing = [p for p in s.stage.params if p.kind is VarKind.LOCAL and p not in scope]
                if missing:
                    raise KirError(f"{s.stage.kind.value}{s.stage.index} takes {missing[0]} out of scope")
                check(s.stage.body, set(s.stage.params), set(k.held))
    check(k.process, set(), set())
    return k
