"""The handlers of the ops that compute on tiles: leaves, shapes, elementwise ops, reductions, combines and
scans, matrix products and assertions."""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .. import affine, numerics
from ..affine import Affine, Conj, Loaded, lift
from ..errors import DeviceAssertionError
from ..ir.core import Instr, Op
from .state import Programs
from .values import Array, align, result


def _const(instr: Instr) -> Array:
    value = numerics.cast(np.array(instr.attr("value")), result(instr))
    return value.reshape((1,) * (1 + len(instr.result.type.shape)))


def _arange(instr: Instr) -> Array | Affine:
    start, end, dt = instr.attr("start"), instr.attr("end"), result(instr)
    if dt in affine.AFFINE_DTYPES:
        return affine.arange(start, end, dt)
    return np.arange(start, end, dtype=dt)[None]


UNIFORM_LEAVES: dict[Op, Callable[[Instr], Array]] = {Op.CONST: _const, Op.ARANGE: _arange}
"""Leaves that are the same in every program: evaluated once per launch."""


def leaf(P: Programs, instr: Instr) -> tuple[Array]:
    return (P.leaves[instr.result.id],)


def program_id(P: Programs, instr: Instr) -> tuple[Array]:
    return (P.pid[instr.attr("axis")].astype(result(instr)),)


def num_programs(P: Programs, instr: Instr) -> tuple[Array]:
    return (np.array([P.grid[instr.attr("axis")]], dtype=result(instr)),)


def broadcast(P: Programs, instr: Instr, x) -> tuple:
    shape = instr.result.type.shape
    if isinstance(x, Affine):
        return (affine.broadcast(x, shape),)
    if isinstance(x, Conj):
        return (Conj(tuple(broadcast(P, instr, f)[0] for f in x.factors)),)
    return (x.reshape(x.shape[:1] + (1,) * (len(shape) - x.ndim + 1) + x.shape[1:]),)  # compact


def expand_dims(P: Programs, instr: Instr, x) -> tuple:
    axis = instr.attr("axis")
    if isinstance(x, Affine):
        return (affine.expand_dims(x, axis, instr.result.type.shape),)
    if isinstance(x, Conj):
        return (Conj(tuple(np.expand_dims(f, axis + 1 if axis >= 0 else axis) for f in x.factors)),)
    return (np.expand_dims(x, axis + 1 if axis >= 0 else axis),)


def elementwise(P: Programs, instr: Instr, *xs) -> tuple:
    """The result is compact (it broadcasts to the tile) and stays symbolic where it can."""
    shape, op = instr.result.type.shape, instr.op
    if any(type(x) is Affine for x in xs):
        out = affine.elementwise(op, xs, result(instr), shape)
        if out is not None:
            return (out,)
    if op is Op.AND and xs[0].dtype == np.bool_ and len(xs) == 2:
        out = affine.conj(*xs, len(shape))
        if out is not None:
            return (out,)
    if op is Op.ADD and id(instr) in P.prepared.accumulators[0]:
        term = _plus_zero(xs)
        if term is not None:
            return (term if type(term) is Loaded else lift(term, len(shape)),)
    loaded = next((x for x in xs if type(x) is Loaded), None)
    spare, ufunc = P.spare, numerics.NP_FOR_OP.get(op)
    if (loaded is not None or spare is not None) and not (
            isinstance(ufunc, np.ufunc) and ufunc.nout == 1 and result(instr) == numerics.F32
            and all(x.dtype == numerics.F32 for x in xs)):  # NumPy's exact result, whatever memory it is written to
        loaded = spare = None
    if loaded is not None:
        return (loaded.apply(ufunc, [x if type(x) is Loaded else lift(affine.dense(x), len(shape)) for x in xs],
                             spare if spare is not None and spare.shape == loaded.shape else None),)
    xs = [lift(affine.dense(x), len(shape)) for x in xs]
    if op is Op.WHERE and xs[0].size < xs[1].size + xs[2].size:  # a condition that holds everywhere
        chosen = xs[1] if xs[0].all() else xs[2] if not xs[0].any() else None  # (or nowhere) picks
        if chosen is not None and chosen.dtype == result(instr):
            return (chosen,)
    if spare is not None and spare.shape == np.broadcast_shapes(*(x.shape for x in xs)):
        return (ufunc(*xs, out=spare),)  # in place of a dying operand
    return (numerics.elementwise(op, xs, result(instr)),)


def _plus_zero(xs) -> Array | Loaded | None:
    """For ``+0.0 + x`` (either order; the +0.0 a compact float32 array) of float32 tiles, ``x``."""
    for zero, x in (xs, xs[::-1]):
        if type(zero) is np.ndarray and zero.size == 1 and zero.dtype == numerics.F32 and zero.tobytes() == ZERO \
                and type(x) in (np.ndarray, Loaded) and x.dtype == numerics.F32:
            return x
    return None


ZERO_F32 = np.float32(0.0)
ZERO = ZERO_F32.tobytes()

LAST_AXIS_REDUCE = {Op.SUM: np.add, Op.MAX: np.maximum, Op.MIN: np.minimum}
"""Reductions a lazily loaded float32 tile (:class:`ascdsl.affine.Loaded`) runs along its last axis in place."""


def reduce(P: Programs, instr: Instr, x: Array) -> tuple[Array]:
    axis, rank = instr.attr("axis"), x.ndim - 1
    axes = tuple(range(1, rank + 1)) if axis is None else (axis % rank + 1,)
    if type(x) is Loaded and axes == (rank,) and result(instr) == numerics.F32 and instr.op in LAST_AXIS_REDUCE:
        out = x.reduce_last(LAST_AXIS_REDUCE[instr.op])
    else:
        out = numerics.reduce(instr.op, x.dense() if type(x) is Loaded else x, axes, result(instr))
    if id(instr) in P.prepared.accumulators[1]:  # its accumulator's lanes may be -0.0 (_accumulators)
        out = out + ZERO_F32
    return (out.reshape(out.shape[:1] + instr.result.type.shape),)



def reshape(P: Programs, instr: Instr, x: Array) -> tuple[Array]:
    return (x.reshape(x.shape[:1] + instr.result.type.shape),)


def permute(P: Programs, instr: Instr, x: Array) -> tuple[Array]:
    return (np.transpose(x, (0, *(d + 1 for d in instr.attr("order")))),)


def join(P: Programs, instr: Instr, a: Array, b: Array) -> tuple[Array]:
    return (np.stack(align([a, b]), axis=-1),)


def split(P: Programs, instr: Instr, x: Array) -> tuple[Array, Array]:
    return x[..., 0], x[..., 1]


def cat(P: Programs, instr: Instr, a: Array, b: Array) -> tuple[Array]:
    return (np.concatenate(align([a, b]), axis=1),)


def flip(P: Programs, instr: Instr, x: Array) -> tuple[Array]:
    return (np.flip(x, instr.attr("axis") + 1),)


def slice_(P: Programs, instr: Instr, x: Array) -> tuple[Array]:
    return (x[:, instr.attr("start"):instr.attr("stop"):instr.attr("step")],)


def sort(P: Programs, instr: Instr, x: Array) -> tuple[Array]:
    axis = instr.attr("axis") + 1
    out = np.sort(numerics.widen(x), axis=axis)
    return ((np.flip(out, axis) if instr.attr("descending") else out).astype(x.dtype),)


def histogram(P: Programs, instr: Instr, x: Array, mask: Array | None = None) -> tuple[Array]:
    """Counts per program at once: value ``v`` of program ``p`` is bin ``p * bins + v`` of one bincount."""
    bins = instr.attr("bins")
    x, *rest = align([x] + ([mask] if mask is not None else []))
    values = x.reshape(x.shape[0], -1).astype(np.int64)
    keep = (values >= 0) & (values < bins)
    if rest:
        keep &= rest[0].reshape(values.shape)
    slots = values + np.arange(values.shape[0])[:, None] * bins
    counts = np.bincount(slots[keep], minlength=values.shape[0] * bins)
    return (counts.reshape(values.shape[0], bins).astype(np.int32),)


def _combiner(P: Programs, instr: Instr) -> Callable[[list[Array], list[Array]], list[Array]]:
    """The region of a reduce/scan as a function of two lists of equally shaped arrays: it runs
    once on all their elements, flattened (the region's values are scalars)."""
    region = instr.regions[0]

    def combine(lhs: list[Array], rhs: list[Array]) -> list[Array]:
        shape = lhs[0].shape
        flat = [x.reshape(-1) for x in (*lhs, *rhs)]
        out = P.run_masked(None, region, flat)
        return [np.broadcast_to(o, flat[0].shape).reshape(shape) for o in out]
    return combine


def _to_last(instr: Instr, xs: Sequence[Array]) -> list[Array]:
    """The reduced/scanned axis of every operand moved last (all axes flattened for axis=None)."""
    axis = instr.attr("axis")
    if axis is None:
        return [x.reshape(x.shape[0], -1) for x in xs]
    return [np.moveaxis(x, axis + 1, -1) for x in xs]


UFUNC_FOR_OP = {Op.ADD: np.add, Op.MUL: np.multiply, Op.MAXIMUM: np.maximum, Op.MINIMUM: np.minimum,
                Op.AND: np.bitwise_and, Op.OR: np.bitwise_or, Op.XOR: np.bitwise_xor}


def _ufunc(instr: Instr, x: Array):
    """NumPy's ufunc for a one-operand combine region that is one of these ops of its two arguments
    (``cumsum``, ``xor_sum``, ``lambda a, b: a + b``...): it folds in C instead of log-depth steps.
    Not for 16-bit floats, whose every combine step rounds to the dtype."""
    body, args = instr.regions[0].body, instr.regions[0].args
    if len(args) != 2 or len(body) != 2 or x.dtype in numerics.NARROW or body[0].op not in UFUNC_FOR_OP:
        return None
    if {v.id for v in body[0].operands} != {a.id for a in args} or body[1].operands != body[0].results:
        return None
    return UFUNC_FOR_OP[body[0].op]


def reduce_with(P: Programs, instr: Instr, *xs: Array) -> list[Array]:
    """Neighbours are combined pairwise, halving the axis each step (log depth, order kept). A float
    ``+`` or ``*`` folds in that tree too (NumPy's own order is its implementation's; the Ascend C
    backend folds the same tree, so the two agree bit for bit)."""
    ufunc = _ufunc(instr, xs[0]) if len(xs) == 1 else None
    if ufunc in (np.add, np.multiply) and xs[0].dtype.kind == "f":
        ufunc = None
    combine, xs = _combiner(P, instr), _to_last(instr, align(xs))
    if ufunc is not None:
        out = ufunc.reduce(xs[0], axis=-1).astype(xs[0].dtype, copy=False)
        return [out.reshape(out.shape[:1] + instr.result.type.shape)]
    while xs[0].shape[-1] > 1:
        length = xs[0].shape[-1]
        pairs = 2 * (length // 2)
        out = combine([x[..., 0:pairs:2] for x in xs], [x[..., 1:pairs:2] for x in xs])
        xs = [np.concatenate([o, x[..., pairs:]], axis=-1) if length % 2 else o for o, x in zip(out, xs)]
    return [x[..., 0].reshape(x.shape[:1] + r.type.shape) for x, r in zip(xs, instr.results)]


def scan(P: Programs, instr: Instr, *xs: Array) -> list[Array]:
    """Inclusive scan in log depth: step d combines each element with the one d before it."""
    ufunc = _ufunc(instr, xs[0]) if len(xs) == 1 else None
    combine, xs = _combiner(P, instr), _to_last(instr, align(xs))
    reverse = instr.attr("reverse")
    xs = [np.flip(x, -1) for x in xs] if reverse else xs
    if ufunc is not None:
        xs = [ufunc.accumulate(xs[0], axis=-1).astype(xs[0].dtype, copy=False)]
    length, d = xs[0].shape[-1], 1 if ufunc is None else xs[0].shape[-1]
    while d < length:
        out = combine([x[..., :length - d] for x in xs], [x[..., d:] for x in xs])
        xs = [np.concatenate([x[..., :d], o], axis=-1) for x, o in zip(xs, out)]
        d *= 2
    xs = [np.flip(x, -1) for x in xs] if reverse else xs
    return [np.moveaxis(x, -1, instr.attr("axis") + 1) for x in xs]


def dot(P: Programs, instr: Instr, a: Array, b: Array, acc: Array | None = None) -> tuple[Array]:
    to = result(instr)
    compute = np.dtype(np.int64) if to.kind in "iu" else numerics.F32
    out = np.matmul(numerics.widen(a).astype(compute), numerics.widen(b).astype(compute))
    if acc is not None:
        out = out + numerics.widen(acc).astype(compute)
    return (numerics.cast(out, to),)


def assert_(P: Programs, instr: Instr, cond: Array) -> tuple[()]:
    rank = cond.ndim - 1
    failed = ~cond if P.active is None else ~cond & lift(P.active, rank)
    if failed.any():
        lane = int(np.argmax(failed))
        program = lane // (failed.size // failed.shape[0]) if failed.shape[0] > 1 else 0
        where = f"program {P.program(program)}" if failed.shape[0] > 1 else "every program"
        message = instr.attr("message") or "assertion failed"
        raise DeviceAssertionError(instr.loc, f"device assertion failed in {where}: {message}",
                                   hint="the condition of tl.device_assert is False for some lanes")
    return ()
