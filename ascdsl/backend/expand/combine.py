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
its ``max`` is the element, exactly). Control flow in the body stays whole-tile:

* an ``if`` is if-converted: both branches run on the whole tiles and each result is a per-lane
  ``where`` of the condition (in the lanes a branch does not take, an integer divisor is 1; float
  infinities and NaNs there are never selected);
* a ``for`` loop of constant bounds is unrolled (up to :data:`MAX_TRIPS` iterations), a longer one is a
  loop in the kernel; one whose bounds or step differ per lane runs for the largest trip count of the
  tile (``range``'s length, per lane), a lane's carried values updated only in its own iterations
  (``where``);
* a ``while`` loop is a loop in the kernel while its condition holds in some lane, likewise masked.

int64 operands, and ``for`` loops whose int64 bounds differ per lane (the trip counts would be int64 tiles),
are located errors (no int64 arithmetic on the vector cores).
"""
from __future__ import annotations

from ... import dtypes
from ...ir.core import Block, GroupOp, Instr, Op, Type
from ..kir import Call, For, Ref, add, lit
from ..legalise_shapes import shapes
from ..legalise_types import limits
from ..selection.repeat import row, view
from ..selection.support import unsupported

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
        if x.type.dtype == dtypes.int64:
            raise limits.wide_work(instr.loc, "a combine function over int64 tiles", "combine in int32")
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
"""The most iterations of a loop of constant bounds in a combine body that unroll (longer ones run as a
loop in the kernel)."""
CONTROL = frozenset({Op.IF, Op.FOR, Op.WHILE})


def _check_body(block) -> None:
    for op in block.body:
        if op.op in CONTROL:
            for region in op.regions:
                _check_body(region)
        elif op.regions or len(op.results) > 1 or op.op not in GroupOp.ELEMENTWISE | {Op.CONST, Op.YIELD}:
            raise unsupported(op, f"`{op.op.value}` in a combine function (the body of a combine function "
                                  "lowers when it is elementwise ops, branches and loops)")


def _inline(r, instr: Instr, firsts: list, seconds: list) -> list:
    """The combine body as tile ops of ``firsts`` and ``seconds`` (the two halves of its arguments)."""
    (region,) = instr.regions
    env = {a.id: _narrow(r, x, a.type.dtype, instr.loc) for a, x in zip(region.args, (*firsts, *seconds))}
    shape = firsts[0].type.shape
    return [_widen(r, _tile(r, x, shape, instr.loc), instr.loc) for x in _inline_block(r, region, env, shape, None)]


def _inline_block(r, block, env: dict, shape, live) -> list:
    """The values ``block`` yields, its ops emitted on tiles of ``shape``. ``live`` (a bool tile, or None
    for every lane) marks the lanes whose values are used: in the others an integer divisor is 1."""
    for op in block.body:
        xs = tuple(env.get(x.id, x) for x in op.operands)
        if op.op is Op.YIELD:
            return list(xs)
        if op.op is Op.IF:
            outs = _branch(r, op, xs[0], env, shape, live)
        elif op.op is Op.FOR:
            outs = _for(r, op, xs, env, shape, live)
        elif op.op is Op.WHILE:
            outs = _while(r, op, xs, env, shape, live)
        else:
            if live is not None and op.op in (Op.IDIV, Op.MOD) and op.result.type.dtype.is_int:
                xs = (xs[0], _where(r, live, xs[1], r.const(1, xs[1].type.dtype, op.loc), shape, op.loc))
            t = op.result.type.with_shape(shape) if any(not x.type.is_scalar for x in xs) else op.result.type
            outs = [r.op(op.op, t, xs, op.attrs, op.loc)]
        env.update((v.id, x) for v, x in zip(op.results, outs))
    raise AssertionError("a combine region ends with its yield")


def _tile(r, x, shape, loc):
    return x if not x.type.is_scalar else r.op(Op.BROADCAST, x.type.with_shape(shape), (x,), (), loc)


def _where(r, cond, a, b, shape, loc):
    """``where(cond, a, b)`` on tiles of ``shape`` (a per-lane select)."""
    return r.op(Op.WHERE, a.type.with_shape(shape), tuple(_tile(r, x, shape, loc) for x in (cond, a, b)), (), loc)


def _both(r, a, b, loc):
    """The lanes of bool tiles ``a`` and ``b`` (``b`` None: every lane)."""
    return a if b is None else r.op(Op.AND, a.type, (a, b), (), loc)


def _branch(r, op: Instr, cond, env: dict, shape, live) -> list:
    """An ``if`` by if-conversion: both branches on whole tiles, each result a per-lane select (the
    untaken branch's values, infinities or NaNs of a float division say, are never selected)."""
    cond = _tile(r, cond, shape, op.loc)
    then = _inline_block(r, op.regions[0], env, shape, _both(r, cond, live, op.loc))
    other = r.op(Op.NOT, cond.type, (cond,), (), op.loc)
    orelse = _inline_block(r, op.regions[1], env, shape, _both(r, other, live, op.loc))
    return [_where(r, cond, a, b, shape, op.loc) for a, b in zip(then, orelse)]


def _for(r, op: Instr, xs: tuple, env: dict, shape, live) -> list:
    """A ``for`` loop of a combine body: unrolled if its bounds are constants and it is short, else a loop
    in the kernel over whole tiles, for the most iterations of any lane, a lane's carried values
    updated only in its own iterations."""
    body, loc = op.regions[0], op.loc
    bounds = [r.consts.get(x.id) if x.type.is_scalar else None for x in xs[:3]]
    if None not in bounds:
        trips = range(*(int(b) for b in bounds))
        if len(trips) <= MAX_TRIPS:
            carried = list(xs[3:])
            for i in trips:
                env[body.args[0].id] = r.const(i, body.args[0].type.dtype, loc)
                env.update((a.id, x) for a, x in zip(body.args[1:], carried))
                carried = _inline_block(r, body, env, shape, live)
            return carried

        def step(k, carried):
            env[body.args[0].id] = k
            env.update((a.id, x) for a, x in zip(body.args[1:], carried))
            return _inline_block(r, body, env, shape, live)
        return _kernel_for(r, xs[:3], xs[3:], body.args[0].type, shape, loc, step)
    dt = body.args[0].type.dtype
    if dt == dtypes.int64:
        raise limits.wide_work(loc, "a `for` loop over int64 bounds that differ per lane in a combine function (each "
                                    "lane's trip count is computed from its bounds on whole tiles)", "loop over int32 bounds")
    lower, upper = _tile(r, xs[0], shape, loc), _tile(r, xs[1], shape, loc)
    ints = Type(dt, shape)
    trips = r.op(Op.MAXIMUM, ints, (_span(r, lower, upper, bounds[2], xs[2], ints, loc), r.const(0, dt, loc)), (),
                 loc)
    if live is not None:
        trips = _where(r, live, trips, r.const(0, dt, loc), shape, loc)
    most = r.op(Op.MAX, Type(dt), (trips,), (("axis", None), ("keep_dims", False)), loc)

    def masked(k, carried):
        ks = _tile(r, k, shape, loc)
        now = r.op(Op.GT, Type(dtypes.bool_, shape), (trips, ks), (), loc)
        at = r.op(Op.MUL, ints, (ks, r.const(int(bounds[2]), dt, loc) if bounds[2] is not None else
                                 _tile(r, xs[2], shape, loc)), (), loc)
        env[body.args[0].id] = r.op(Op.ADD, ints, (lower, at), (), loc)
        env.update((a.id, x) for a, x in zip(body.args[1:], carried))
        new = _inline_block(r, body, env, shape, now)
        return [_where(r, now, n, c, shape, loc) for n, c in zip(new, carried)]
    return _kernel_for(r, (r.const(0, dt, loc), most, r.const(1, dt, loc)), xs[3:], body.args[0].type, shape, loc,
                       masked)


def _span(r, lower, upper, step, runtime_step, ints: Type, loc):
    """Each lane's ``ceil((upper - lower) / step)`` (``range``'s length before the clamp at 0): for a constant
    ``step`` its sign picks the order; a runtime one (a scalar or a tile) is read per lane (a lane whose step
    is 0 runs no iteration: the interpreter raises an error there)."""
    dt = ints.dtype
    if step is not None:
        s = int(step)
        span = r.op(Op.SUB, ints, (upper, lower) if s > 0 else (lower, upper), (), loc)
        if abs(s) == 1:
            return span
        return r.op(Op.IDIV, ints, (r.op(Op.ADD, ints, (span, r.const(abs(s) - 1, dt, loc)), (), loc),
                                    r.const(abs(s), dt, loc)), (), loc)
    st = _tile(r, runtime_step, ints.shape, loc)
    zero = r.const(0, dt, loc)
    rising = r.op(Op.GT, ints.with_dtype(dtypes.bool_), (st, zero), (), loc)
    span = _where(r, rising, r.op(Op.SUB, ints, (upper, lower), (), loc), r.op(Op.SUB, ints, (lower, upper), (), loc),
                  ints.shape, loc)
    size = r.op(Op.ABS, ints, (st,), (), loc)
    stuck = r.op(Op.EQ, ints.with_dtype(dtypes.bool_), (size, zero), (), loc)
    divisor = _where(r, stuck, r.const(1, dt, loc), size, ints.shape, loc)
    quotient = r.op(Op.IDIV, ints, (r.op(Op.ADD, ints, (span, r.op(Op.SUB, ints, (divisor, r.const(1, dt, loc)), (),
                                                                    loc)), (), loc), divisor), (), loc)
    return _where(r, stuck, zero, quotient, ints.shape, loc)


def _while(r, op: Instr, xs: tuple, env: dict, shape, live) -> list:
    """A ``while`` loop of a combine body: a loop in the kernel while the condition holds in some lane, the
    carried values of a lane updated only while its own condition holds."""
    test, body = op.regions
    loc = op.loc

    def holds(carried):
        env.update((a.id, x) for a, x in zip(test.args, carried))
        (cond,) = _inline_block(r, test, env, shape, live)
        return _both(r, _tile(r, cond, shape, loc), live, loc)

    def any_lane(carried):
        count = r.op(Op.CAST, Type(dtypes.int32, shape), (holds(carried),), (("dtype", dtypes.int32),), loc)
        most = r.op(Op.MAX, Type(dtypes.int32), (count,), (("axis", None), ("keep_dims", False)), loc)
        return [r.op(Op.GT, Type(dtypes.bool_), (most, r.const(0, dtypes.int32, loc)), (), loc)]

    def step(carried):
        now = holds(carried)
        env.update((a.id, x) for a, x in zip(body.args, carried))
        new = _inline_block(r, body, env, shape, now)
        return [_where(r, now, n, c, shape, loc) for n, c in zip(new, carried)]
    init = [_tile(r, x, shape, loc) for x in xs]
    test_block, _ = _region(r, init, any_lane, loc, tiles=False)
    body_block, _ = _region(r, init, step, loc)
    results = [r.value(x.type) for x in init]
    r.out.append(Instr(Op.WHILE, tuple(results), tuple(init), (), (test_block, body_block), loc))
    return results


def _region(r, init: list, build, loc, lead=(), tiles=True) -> tuple:
    """A region of arguments ``lead`` and one like each of ``init``, its ops those ``build(*lead,
    arguments)`` emits, yielding what it returns (as tiles of ``init``'s shape if ``tiles``)."""
    args = [r.value(x.type) for x in init]
    saved, r.out = r.out, []
    outs = build(*lead, args)
    if tiles:
        outs = [_tile(r, o, x.type.shape, loc) for o, x in zip(outs, init)]
    r.out.append(Instr(Op.YIELD, (), tuple(outs), (), (), loc))
    body, r.out = tuple(r.out), saved
    return Block((*lead, *args), body), args


def _kernel_for(r, bounds, carried, iv_type, shape, loc, step) -> list:
    """A loop in the kernel over ``bounds`` carrying tiles of ``carried``, ``step(k, tiles)`` its body."""
    init = [_tile(r, x, shape, loc) for x in carried]
    k = r.value(iv_type)
    block, _ = _region(r, init, step, loc, lead=(k,))
    results = [r.value(x.type) for x in init]
    r.out.append(Instr(Op.FOR, tuple(results), (*bounds, *init), (), (block,), loc))
    return results


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
