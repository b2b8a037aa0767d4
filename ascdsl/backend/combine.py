"""``tl.reduce`` and ``tl.associative_scan`` with a general ``@jit`` combine function (any elementwise
body, tuples of tiles such as argmax's ``(value, index)`` pairs), as log-depth folds and scans over
whole tiles: the combine body is inlined as tile ops on two row slices of the operands, never run
per element.

Tile-IR rewrites (:func:`fold`, :func:`scan`, called by :mod:`.reductions` and :mod:`.scan` for the
combine functions they do not map to one op). Every operand is first put in *rows form*, the
combined axis along the rows of a 2-D tile (each row whole 32-byte blocks in UB): a 2-D tile along
axis 0 as it is, along axis 1 its transpose, a 1-D tile (or a tile of any rank to a scalar, flattened)
as a column broadcast to one block per row, a tile of rank 3 or more with the axis permuted last, its
flat ``[others, axis]`` view transposed. 8-bit and bool tiles move as float16, int16 ones as int32
(exact), and are cast back to their dtype for the body. Then, as the interpreter does:

* a fold combines the even rows with the odd rows (``ceil(log2 L)`` steps; of an odd count, the last
  row is carried to the end of the next step's rows with ``tl.cat``), the same tree as the
  interpreter's, so exact ops and 16-bit rounding agree bit for bit;
* a scan is Hillis-Steele: step ``d`` combines rows ``0 .. L-d`` (first argument) with rows
  ``d .. L`` (second) and keeps the first ``d`` rows (reversed: rows ``d ..`` with rows ``.. L-d``,
  keeping the last ``d``).

The rows are ``slice`` instructions (:func:`select`: one ``DataCopy`` of whole rows, or one per row
with a step); the result goes back from rows form by the inverse moves (a column's lanes are equal:
its ``max`` is the element, exactly). A ``for`` loop in the body with constant bounds is unrolled (up to
:data:`MAX_TRIPS` iterations); other loops, branches and int64 operands are located errors.
"""
from __future__ import annotations

from .. import dtypes
from ..ir.core import GroupOp, Instr, Op, Type
from .kir import Call, For, Ref, add, lit
from . import shapes
from .repeat import row, view
from .selector import unsupported

F16 = dtypes.float16
WIDE = {dtypes.int8: F16, dtypes.uint8: F16, dtypes.bool_: F16, dtypes.int16: dtypes.int32}
"""Dtypes whose rows move in a wider one, exact for every value of theirs (A2 has no 8-bit ``Select`` or
``Duplicate``, bool tiles are bit masks, int16 computes in int32): the combine body still runs in the
dtype itself."""
DTYPES = frozenset({dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.int32}) | frozenset(WIDE)


def fold(r, instr: Instr) -> None:
    """``tl.reduce(xs, axis, combine)`` as the module docstring's fold."""
    rows = _to_rows(r, instr)
    length = rows[0].type.shape[0]
    while length > 1:
        pairs = 2 * (length // 2)
        evens = [_slice(r, t, 0, pairs, 2, instr) for t in rows]
        odds = [_slice(r, t, 1, pairs, 2, instr) for t in rows]
        out = _inline(r, instr, evens, odds)
        if length % 2:
            out = [_cat(r, o, _slice(r, t, length - 1, length, 1, instr), instr) for o, t in zip(out, rows)]
        rows, length = out, -(-length // 2)
    for t, v in zip(rows, instr.results):
        _bind(r, instr, t, v, folded=True)


def scan(r, instr: Instr) -> None:
    """``tl.associative_scan(xs, axis, combine, reverse)`` as the module docstring's scan."""
    rows = _to_rows(r, instr)
    length, d = rows[0].type.shape[0], 1
    reverse = instr.attr("reverse")
    while d < length:
        head = [_slice(r, t, 0, length - d, 1, instr) for t in rows]
        tail = [_slice(r, t, d, length, 1, instr) for t in rows]
        if reverse:
            out = _inline(r, instr, tail, head)
            rows = [_cat(r, o, _slice(r, t, length - d, length, 1, instr), instr) for o, t in zip(out, rows)]
        else:
            out = _inline(r, instr, head, tail)
            rows = [_cat(r, _slice(r, t, 0, d, 1, instr), o, instr) for o, t in zip(out, rows)]
        d *= 2
    for t, v in zip(rows, instr.results):
        _bind(r, instr, t, v, folded=False)


def _to_rows(r, instr: Instr) -> list:
    """Every operand in rows form (the module docstring), after checking what this module lowers."""
    (region,) = instr.regions
    _check_body(region)
    xs, axis = instr.operands, instr.attr("axis")
    shape = xs[0].type.shape
    for x in (*xs, *instr.results):
        if x.type.dtype not in DTYPES:
            raise unsupported(instr, f"a combine function over {x.type.dtype} tiles (float, bool and integer tiles "
                                     "of up to 32 bits lower)")
    if any(x.type.shape != shape for x in xs):
        raise unsupported(instr, "a combine function over tiles of different shapes")
    out = []
    for x in xs:
        t = _widen(r, x, instr.loc)
        if axis is None and len(shape) >= 2:
            t = r.op(Op.RESHAPE, t.type.with_shape((x.type.numel,)), (t,), (), instr.loc)
        elif len(shape) > 2:  # the axis last, the flat view's rows transposed: the others flattened in order
            order = _last(shape, axis)
            if order != tuple(range(len(shape))):
                t = r.op(Op.PERMUTE, t.type.with_shape(tuple(shape[d] for d in order)), (t,), (("order", order),),
                         instr.loc)
            t = r.op(Op.RESHAPE, t.type.with_shape((x.type.numel // shape[axis], shape[axis])), (t,), (), instr.loc)
            t = r.op(Op.PERMUTE, t.type.with_shape(t.type.shape[::-1]), (t,), (("order", (1, 0)),), instr.loc)
        if len(t.type.shape) == 1:
            lanes = r.block_bytes // t.type.dtype.itemsize
            column = r.op(Op.EXPAND_DIMS, t.type.with_shape(t.type.shape + (1,)), (t,), (("axis", 1),), instr.loc)
            t = r.value(t.type.with_shape(t.type.shape + (lanes,)))
            shapes.spread(r, column, t, instr.loc)
        elif axis == 1 and len(shape) == 2:
            t = r.op(Op.PERMUTE, t.type.with_shape(shape[::-1]), (t,), (("order", (1, 0)),), instr.loc)
        out.append(t)
    return out


def _bind(r, instr: Instr, t, v, folded: bool) -> None:
    """Bind result ``v`` to ``t`` in rows form (one row if ``folded``), narrowed from float16 if it moved so."""
    if v.type.dtype not in WIDE:
        _from_rows(r, instr, t, v, folded)
        return
    w = r.value(v.type.with_dtype(WIDE[v.type.dtype]))
    _from_rows(r, instr, t, w, folded)
    _narrow(r, w, v.type.dtype, instr.loc, result=v)


def _widen(r, x, loc):
    """``x`` as it moves in rows form (in its :data:`WIDE` dtype)."""
    if x.type.dtype not in WIDE:
        return x
    wide = WIDE[x.type.dtype]
    return r.op(Op.CAST, x.type.with_dtype(wide), (x,), (("dtype", wide),), loc)


def _narrow(r, x, dt, loc, result=None):
    """Widened ``x`` back in ``dt`` (a bool is ``!= 0``), else ``x``."""
    if x.type.dtype == dt and result is None:
        return x
    if dt == dtypes.bool_:
        return r.op(Op.NE, x.type.with_dtype(dt), (x, r.const(0.0, F16, loc)), (), loc, result=result)
    return r.op(Op.CAST, x.type.with_dtype(dt), (x,), (("dtype", dt),), loc, result=result)


def _last(shape, axis: int) -> tuple:
    """The permutation that moves ``axis`` last, the others kept in order."""
    return (*(d for d in range(len(shape)) if d != axis), axis)


def _from_rows(r, instr: Instr, t, v, folded: bool) -> None:
    """Bind result ``v`` to ``t`` in rows form (one row if ``folded``)."""
    loc, shape = instr.loc, instr.operands[0].type.shape
    if len(shape) > 2 and instr.attr("axis") is not None:
        axis = instr.attr("axis")
        if folded:
            r.op(Op.RESHAPE, v.type, (t,), (), loc, result=v)  # the kept axes in order
            return
        order = _last(shape, axis)
        rows = r.op(Op.PERMUTE, t.type.with_shape(t.type.shape[::-1]), (t,), (("order", (1, 0)),), loc)
        if order == tuple(range(len(shape))):
            r.op(Op.RESHAPE, v.type, (rows,), (), loc, result=v)
            return
        moved = r.op(Op.RESHAPE, v.type.with_shape(tuple(shape[d] for d in order)), (rows,), (), loc)
        back = tuple(order.index(d) for d in range(len(shape)))
        r.op(Op.PERMUTE, v.type, (moved,), (("order", back),), loc, result=v)
        return
    if len(shape) == 1 or instr.attr("axis") is None:  # the lanes of each row are equal: their max
        if not folded:
            r.op(Op.MAX, v.type, (t,), (("axis", 1), ("keep_dims", False)), loc, result=v)
            return
        line = r.op(Op.RESHAPE, t.type.with_shape(t.type.shape[1:]), (t,), (), loc)
        one = v if v.type.is_scalar else r.value(Type(v.type.dtype))
        r.op(Op.MAX, one.type, (line,), (("axis", None), ("keep_dims", False)), loc, result=one)
        if one is not v:
            r.op(Op.BROADCAST, v.type, (one,), (), loc, result=v)
        return
    if instr.attr("axis") == 1:
        if folded:
            r.op(Op.RESHAPE, v.type, (t,), (), loc, result=v)
        else:
            r.op(Op.PERMUTE, v.type, (t,), (("order", (1, 0)),), loc, result=v)
        return
    r.op(Op.RESHAPE, v.type, (t,), (), loc, result=v)  # [1, N] to [N] (or the same shape: free)


def _slice(r, t, start: int, stop: int, step: int, instr: Instr):
    rows = len(range(start, stop, step))
    if (start, stop, step) == (0, t.type.shape[0], 1):
        return t
    attrs = (("start", start), ("stop", stop), ("step", step))
    return r.op(Op.SLICE, t.type.with_shape((rows,) + t.type.shape[1:]), (t,), attrs, instr.loc)


def _cat(r, a, b, instr: Instr):
    shape = (a.type.shape[0] + b.type.shape[0],) + a.type.shape[1:]
    return r.op(Op.CAT, a.type.with_shape(shape), (a, b), (), instr.loc)


MAX_TRIPS = 64
"""The most iterations of a loop in a combine body that unroll."""


def _check_body(block) -> None:
    for op in block.body:
        if op.op is Op.FOR:
            _check_body(op.regions[0])
        elif op.regions or len(op.results) > 1 or op.op not in GroupOp.ELEMENTWISE | {Op.CONST, Op.YIELD}:
            raise unsupported(op, f"`{op.op.value}` in a combine function (the body of a combine function "
                                  "lowers when it is elementwise ops and loops of constant trip counts)")


def _inline(r, instr: Instr, firsts: list, seconds: list) -> list:
    """The combine body as tile ops of ``firsts`` and ``seconds`` (the two halves of its arguments)."""
    (region,) = instr.regions
    env = {a.id: _narrow(r, x, a.type.dtype, instr.loc) for a, x in zip(region.args, (*firsts, *seconds))}
    shape = firsts[0].type.shape
    return [_widen(r, x if not x.type.is_scalar else r.op(Op.BROADCAST, x.type.with_shape(shape), (x,), (), instr.loc),
                   instr.loc) for x in _inline_block(r, region, env, shape)]


def _inline_block(r, block, env: dict, shape) -> list:
    """The values ``block`` yields, its ops emitted on tiles of ``shape`` (loops unrolled)."""
    for op in block.body:
        xs = tuple(env.get(x.id, x) for x in op.operands)
        if op.op is Op.YIELD:
            return list(xs)
        if op.op is Op.FOR:
            for res, x in zip(op.results, _unroll(r, op, xs, env, shape)):
                env[res.id] = x
            continue
        res = op.result
        t = res.type.with_shape(shape) if any(not x.type.is_scalar for x in xs) else res.type
        env[res.id] = r.op(op.op, t, xs, op.attrs, op.loc)
    raise AssertionError("a combine region ends with its yield")


def _unroll(r, op: Instr, xs: tuple, env: dict, shape) -> list:
    """A ``for`` loop of a combine body, its iterations one after the other (its bounds constants)."""
    bounds = [r.consts.get(x.id) for x in xs[:3]]
    if any(b is None for b in bounds):
        raise unsupported(op, "a loop with a runtime trip count in a combine function (constant bounds unroll)")
    trips = range(*(int(b) for b in bounds))
    if len(trips) > MAX_TRIPS:
        raise unsupported(op, f"a loop of {len(trips)} iterations in a combine function (up to {MAX_TRIPS} unroll)")
    body, carried = op.regions[0], list(xs[3:])
    for i in trips:
        env[body.args[0].id] = r.const(i, body.args[0].type.dtype, op.loc)
        env.update((a.id, x) for a, x in zip(body.args[1:], carried))
        carried = _inline_block(r, body, env, shape)
    return carried


def select(sel, instr: Instr) -> list | None:
    """Row slices of 2-D tiles (a :data:`.select.RULES` rule), else None: one ``DataCopy`` of the
    rows, or with a step, one per row."""
    if instr.op is not Op.SLICE:
        return None
    (x,), v = instr.operands, instr.result
    start, step = instr.attr("start"), instr.attr("step")
    p, dt, rows = sel.pitch(x), x.type.dtype, v.type.shape[0]
    src, dst = sel.ref(x), sel.ref(v)
    if step == 1:
        return [Call("DataCopy", Ref(dst.buf, dt, lit(0), rows * p), (src.at(lit(start * p), rows * p, start * p),),
                     (lit(rows * p),), loc=instr.loc)]
    k = sel.fresh("r")
    return [For(k, lit(0), lit(rows), lit(1), (Call(
        "DataCopy", view(Ref(dst.buf, dt, lit(0), rows * p), row(k, p)),
        (view(Ref(src.buf, dt, lit(0), sel.count(x)), add(lit(start * p), row(k, step * p))),), (lit(p),)),),
        True, loc=instr.loc)]


__all__ = ["fold", "scan", "select"]
