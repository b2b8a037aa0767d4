"""``simplify``: the kernel IR as a CANN engineer would write it, after every decision is made.

The general form (:mod:`.lift`) keeps one code structure for every tile extent, so a tile of one row
still walks its rows in a loop (``for (r = 0; r < 1; r += 255)``), and a count that only one branch
of a condition changes is still written as the condition. Once the lift has turned the extents that
vary into tiling fields, what is left literal is literal in every instance. This pass folds it:

* integer arithmetic and comparisons of literals (C semantics: division truncates), an integer compared
  with itself, ``x + 0``,
  ``x * 1``, ``x * 0``, ``c ? a : a``, conditions whose value is known, and ``min(a, b)`` where ``b``
  cannot be below ``a``;
* loops that run exactly once become their body (the loop variable replaced by its start), loops
  that never run disappear; a non-``constexpr`` ``if`` whose condition is known becomes its branch;
* scalar definitions nothing reads any more are dropped, and a copy of one burst has no strides
  (``DataCopyExtParams`` strides are the gaps between bursts).

It runs last, just before rendering (:mod:`.emit`): it moves no call, buffer or barrier, so the UB
plan and the synchronisation stay what their passes decided; loops around stage calls are kept (a
stage takes the loop variable as a parameter).
"""
from __future__ import annotations

import dataclasses

from ... import dtypes
from .. import kir
from ..kir import Bin, BinOp, Cond, Conv, For, If, Let, Lit, Not, Run, Var, lit

COMPARE = {BinOp.LT: int.__lt__, BinOp.LE: int.__le__, BinOp.GT: int.__gt__, BinOp.GE: int.__ge__,
           BinOp.EQ: int.__eq__, BinOp.NE: int.__ne__}


def simplify(k: kir.Kernel) -> kir.Kernel:
    """``k`` with its literal arithmetic folded and its once-running loops unrolled (see the module)."""
    stages = {st: dataclasses.replace(st, body=_method(st.body)) for st in k.stages}
    process = _method(kir.restage(k.process, stages))
    return kir.verify(dataclasses.replace(k, process=process, stages=tuple(stages.values())))


def _method(body) -> tuple:
    body = _stmts(body, {})
    while True:  # a dropped definition may leave another unread
        read = _read(body)
        kept = _drop_unread(body, read)
        if kept == body:
            return body
        body = kept


# ----------------------------------------------------------------------------- statements

def _stmts(body, env: dict) -> tuple:
    groups = [_stmt(s, env) for s in body]
    # an unrolled body joins its parent's scope: keep the loop where that would define a name twice
    counts: dict = {}
    for g, _ in groups:
        for s in g:
            if isinstance(s, Let):
                counts[s.var] = counts.get(s.var, 0) + 1
    out = []
    for g, loop in groups:
        if loop is not None and any(isinstance(s, Let) and counts[s.var] > 1 for s in g):
            g = (dataclasses.replace(loop, body=_stmts(loop.body, env)),)
        out += g
    return tuple(out)


def _stmt(s, env: dict) -> tuple[tuple, For | None]:
    """The statements ``s`` becomes, and the loop they came from when it was unrolled."""
    if isinstance(s, For):
        start, stop, step = (_expr(e, env) for e in (s.start, s.stop, s.step))
        loop = dataclasses.replace(s, start=start, stop=stop, step=step)
        once = _once(loop)
        if once is False:
            return (), None
        if once and not any(isinstance(x, Run) for x in kir.walk(s.body)):
            body = _stmts(s.body, {**env, s.var: start})
            return _located(body, s.loc), loop
        return (dataclasses.replace(loop, body=_stmts(s.body, env)),), None
    if isinstance(s, If):
        cond = _expr(s.cond, env)
        if not s.static and isinstance(cond, Lit):
            return _located(_stmts(s.body if cond.value else s.orelse, env), s.loc), None
        return (dataclasses.replace(s, cond=cond, body=_stmts(s.body, env), orelse=_stmts(s.orelse, env)),), None
    if isinstance(s, kir.While):
        return (dataclasses.replace(s, cond=_expr(s.cond, env), test=_stmts(s.test, env), body=_stmts(s.body, env)),), None
    if isinstance(s, (Let, kir.Set)):
        expr = _expr(s.expr, env)
        if s.var.ctype is kir.Struct.COPY_PARAMS and _one_burst(expr):  # no gap between bursts to skip
            expr = kir.Brace(expr.items[:2] + (kir.lit(0), kir.lit(0)) + expr.items[4:])
        return (dataclasses.replace(s, expr=expr),), None
    if isinstance(s, kir.Call):
        return (dataclasses.replace(s, dst=_operand(s.dst, env), srcs=tuple(_operand(o, env) for o in s.srcs),
                                    work=tuple(_operand(o, env) for o in s.work),
                                    args=tuple(_expr(a, env) for a in s.args)),), None
    return (s,), None


def _once(loop: For) -> bool | None:
    """True: ``loop`` runs exactly once; False: never; None: not known."""
    start, stop, step = loop.start, loop.stop, loop.step
    if loop.cmp is not BinOp.LT or not (isinstance(start, Lit) and isinstance(stop, Lit)):
        return None
    if start.value >= stop.value:
        return False
    if stop.value - start.value == 1:  # any step runs it once (every step the backend writes is positive)
        return True
    return isinstance(step, Lit) and step.value >= stop.value - start.value or None


def _one_burst(params) -> bool:
    """``DataCopyExtParams{blockCount, blockLen, srcStride, dstStride, rsv}`` of a single burst."""
    count = params.items[0] if isinstance(params, kir.Brace) else None
    if isinstance(count, Conv):
        count = count.x
    return _one(count)


def _located(body: tuple, loc) -> tuple:
    """``body`` with the removed statement's source location on its first statement without one."""
    if not body or loc is None or not loc.line or not hasattr(body[0], "loc") or body[0].loc.line:
        return body
    return (dataclasses.replace(body[0], loc=loc),) + body[1:]


def _read(body) -> set:
    out = set(kir.vars_read(body))
    for s in kir.walk(body):
        if isinstance(s, Run):
            out |= set(s.stage.params)
    return out


def _drop_unread(body, read: set) -> tuple:
    out = []
    for s in body:
        if isinstance(s, Let) and s.var.kind is kir.VarKind.LOCAL and s.var not in read:
            continue
        if isinstance(s, (For, If, kir.While)):
            s = dataclasses.replace(s, **{f: _drop_unread(getattr(s, f), read) for f in ("body", "orelse", "test")
                                          if hasattr(s, f)})
        out.append(s)
    return tuple(out)


# ----------------------------------------------------------------------------- expressions

def _operand(o, env: dict):
    if o is None:
        return None
    offset = _expr(o.offset, env)
    return dataclasses.replace(o, offset=offset) if offset != o.offset else o


def _expr(e, env: dict):
    if isinstance(e, Var):
        return env.get(e, e)
    if isinstance(e, Bin):
        return _bin(e.op, _expr(e.a, env), _expr(e.b, env))
    if isinstance(e, Cond):
        c, a, b = _expr(e.c, env), _expr(e.a, env), _expr(e.b, env)
        if isinstance(c, Lit):
            return a if c.value else b
        if a == b:
            return a
        if isinstance(c, Bin) and c.op is BinOp.LT and (c.a, c.b) == (a, b) and isinstance(a, Lit):
            low = _lowest(b)  # min(a, b) with b >= a: a
            if low is not None and low >= a.value:
                return a
        return Cond(c, a, b)
    if isinstance(e, Conv):  # kept around a literal: the cast may be what deduces a template's type
        return Conv(e.dtype, _expr(e.x, env))
    if isinstance(e, Not):
        x = _expr(e.x, env)
        return Lit(not x.value, dtypes.bool_) if _boolean(x) else Not(x)
    if isinstance(e, kir.Brace):
        return kir.Brace(tuple(_expr(x, env) for x in e.items))
    if isinstance(e, kir.Elem):
        return kir.Elem(_operand(e.ref, env), e.index if isinstance(e.index, int) else _expr(e.index, env))
    if isinstance(e, kir.GmValue):
        return kir.GmValue(_operand(e.gm, env))
    return e


def _bin(op: BinOp, a, b):
    x, y = _number(a), _number(b)
    if x is not None and y is not None:
        folded = _fold(op, x, y)
        if folded is not None:
            return folded
    if op in COMPARE and a == b and (kir.int_bytes(a) is not None or op in (BinOp.LT, BinOp.GT)):
        return Lit(COMPARE[op](0, 0), dtypes.bool_)  # `n < n` (clang: a self-comparison); NaN keeps `x <= x`
    if op is BinOp.ADD and _zero(b) or op is BinOp.SUB and _zero(b):
        return a
    if op is BinOp.ADD and _zero(a):
        return b
    if op is BinOp.MUL and (_any_zero(a) or _any_zero(b)):
        return lit(0)
    if op is BinOp.MUL and _one(b) or op is BinOp.DIV and _one(b):
        return a
    if op is BinOp.MUL and _one(a):
        return b
    if op in (BinOp.AND, BinOp.OR) and (_boolean(a) or _boolean(b)):
        known, other = (a, b) if _boolean(a) else (b, a)
        if _truth(other):  # a boolean-valued expression: & and | are logical
            return other if known.value == (op is BinOp.AND) else known
    return Bin(op, a, b)


def _fold(op: BinOp, a: Lit, b: Lit):
    """``a op b`` of signed integer literals with C's result (an int64 one stays a cast literal, so
    that it still widens what it meets); None where C's unsigned rules or an overflow would differ."""
    if a.dtype.kind != "int" or b.dtype.kind != "int":
        return None
    x, y = int(a.value), int(b.value)
    if op in COMPARE:
        return Lit(COMPARE[op](x, y), dtypes.bool_)
    if op is BinOp.ADD:
        v = x + y
    elif op is BinOp.SUB:
        v = x - y
    elif op is BinOp.MUL:
        v = x * y
    elif op in (BinOp.DIV, BinOp.MOD) and y != 0:
        q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)  # C truncates toward zero
        v = q if op is BinOp.DIV else x - q * y
    else:
        return None
    wide = max(a.dtype.itemsize, b.dtype.itemsize) > 4
    if not _fits(v, dtypes.int32):
        return None
    return Conv(dtypes.int64, Lit(v, dtypes.int32)) if wide else Lit(v, dtypes.int32)


def _lowest(e):
    """A lower bound of ``e`` when it is a literal or a choice between literals."""
    if isinstance(e, Lit) and _integer(e):
        return int(e.value)
    if isinstance(e, Cond):
        a, b = _lowest(e.a), _lowest(e.b)
        return None if a is None or b is None else min(a, b)
    return None


def _number(e) -> Lit | None:
    """``e`` as an integer literal: a literal, or a cast of one that keeps its value."""
    if isinstance(e, Conv) and isinstance(e.dtype, dtypes.DType) and e.dtype.is_int and _integer(e.x) \
            and _fits(e.x.value, e.dtype):
        return Lit(e.x.value, e.dtype)
    return e if _integer(e) else None


def _integer(e) -> bool:
    return isinstance(e, Lit) and e.dtype.is_int and isinstance(e.value, (int, bool))


def _boolean(e) -> bool:
    return isinstance(e, Lit) and e.dtype is dtypes.bool_


def _truth(e) -> bool:
    """``e`` is a C ``bool`` (a comparison, a test, or logic of such)."""
    if isinstance(e, Bin):
        return e.op in COMPARE or e.op in (BinOp.AND, BinOp.OR) and _truth(e.a) and _truth(e.b)
    return _boolean(e) or isinstance(e, (Not, kir.IsSame))


def _zero(e) -> bool:
    """``e`` is an int32 literal 0 (adding it changes no type; a wider zero would)."""
    return isinstance(e, Lit) and e.dtype is dtypes.int32 and e.value == 0


def _one(e) -> bool:
    return isinstance(e, Lit) and e.dtype is dtypes.int32 and e.value == 1


def _any_zero(e) -> bool:
    """``e`` is 0 of any integer type (a product with it is 0 whatever the other factor's type)."""
    n = _number(e)
    return n is not None and n.value == 0


def _fits(v: int, dtype) -> bool:
    bits = 8 * dtype.itemsize
    lo, hi = (0, (1 << bits) - 1) if dtype.kind == "uint" else (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    return lo <= v <= hi
