"""``tl.reduce`` / ``tl.associative_scan`` with a combine function, and the builtins made of them
(``cumsum``, ``cumprod``, ``xor_sum``).

The combine function is compiled once into the region of a ``reduce``/``scan`` op: its arguments
are scalars, ``(*lhs, *rhs)`` with one of each per operand (Triton's convention: a tuple input of
``n`` tiles gives ``combine_fn(a0, ..., an-1, b0, ..., bn-1)``), and it yields one scalar per
operand, cast to the operand's dtype. The interpreter then applies it to whole tiles at once.
"""
from __future__ import annotations

from .. import dtypes, semantics
from .. import language as tl
from ..ir import Block, Op, Type, Value
from ..semantics import SemanticError
from .emit import Emitter, describe


def _operands(input, what: str) -> tuple[list[Value], bool]:
    """The tiles of ``input`` (one tile or a tuple of tiles of one shape) and whether it was a tuple."""
    many = isinstance(input, tuple)
    xs = list(input) if many else [input]
    if not xs or not all(isinstance(x, Value) and not x.type.is_scalar for x in xs):
        raise SemanticError(f"{what} needs a tile or a tuple of tiles, got {describe(input)}",
                            "pass tiles of one shape, e.g. (values, indices)")
    if len({x.type.shape for x in xs}) != 1:
        raise SemanticError(f"the tiles of {what} must have one shape, got "
                            + ", ".join(describe(x) for x in xs))
    return xs, many


def _region(em: Emitter, types: list[Type], combine) -> Block:
    """The combine region over scalars of ``types``: ``combine(lhs, rhs)`` returns one value or a tuple."""
    n = len(types)
    with em.b.block(types * 2) as args:
        out = combine(args[:n], args[n:])
        out = out if isinstance(out, tuple) else (out,)
        if len(out) != n:
            raise SemanticError(f"the combine function returns {len(out)} values for {n} operands",
                                f"return one value per operand ({n})")
        em.b.emit(Op.YIELD, (), [em.value(o, t.dtype) if isinstance(o, (Value, *semantics.Literal)) else _bad(o)
                                 for o, t in zip(out, types)], loc=em.loc)
    return em.b.last_block


def _bad(value):
    raise SemanticError(f"the combine function must return tiles or numbers, got {describe(value)}")


def _user_combine(em: Emitter, combine_fn):
    if not callable(combine_fn):
        raise SemanticError(f"combine_fn must be an @jit function, got {describe(combine_fn)}")
    return lambda lhs, rhs: em.call(combine_fn, [*lhs, *rhs], {})


def _axis(axis, rank: int, allow_none: bool) -> int | None:
    if axis is None and allow_none:
        return None
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise SemanticError(f"the axis must be a constexpr int, got {describe(axis)}")
    return semantics.normalize_axis(axis, rank)


def emit_reduce(em: Emitter, xs: list[Value], many: bool, axis, keep_dims: bool, combine):
    axis = _axis(axis, len(xs[0].type.shape), allow_none=True)
    if not isinstance(keep_dims, bool):
        raise SemanticError(f"keep_dims must be a constexpr bool, got {describe(keep_dims)}")
    region = _region(em, [Type(x.type.dtype) for x in xs], combine)
    shape = semantics.reduce_shape(xs[0].type.shape, axis, keep_dims)
    results = em.b.emit(Op.REDUCE, [Type(x.type.dtype, shape) for x in xs], xs,
                        [("axis", axis), ("keep_dims", keep_dims)], [region], loc=em.loc)
    return tuple(results) if many else results[0]


def emit_scan(em: Emitter, xs: list[Value], many: bool, axis, reverse: bool, combine):
    axis = _axis(axis, len(xs[0].type.shape), allow_none=False)
    if not isinstance(reverse, bool):
        raise SemanticError(f"reverse must be a constexpr bool, got {describe(reverse)}")
    region = _region(em, [Type(x.type.dtype) for x in xs], combine)
    results = em.b.emit(Op.SCAN, [x.type for x in xs], xs, [("axis", axis), ("reverse", reverse)], [region],
                        loc=em.loc)
    return tuple(results) if many else results[0]


def reduce(em: Emitter, input, axis, combine_fn, keep_dims=False):
    xs, many = _operands(input, "tl.reduce")
    return emit_reduce(em, xs, many, axis, keep_dims, _user_combine(em, combine_fn))


def associative_scan(em: Emitter, input, axis, combine_fn, reverse=False):
    xs, many = _operands(input, "tl.associative_scan")
    return emit_scan(em, xs, many, axis, reverse, _user_combine(em, combine_fn))


def _accumulated(em: Emitter, x, what: str, dtype=None) -> Value:
    """``x`` in the dtype a running sum/product uses: ``dtype``, else int32 for narrow ints and
    bool, float32 for bfloat16 (as Triton does), else its own."""
    (x,), _ = _operands(x, what)
    if dtype is None:
        dt = x.type.dtype
        dtype = dtypes.int32 if (dt.is_int and dt.bits < 32) or dt == dtypes.bool_ else \
            dtypes.float32 if dt == dtypes.bfloat16 else dt
    return em.cast(x, dtype)


def _binary(em: Emitter, op: Op):
    return lambda lhs, rhs: em.binary(op, lhs[0], rhs[0])


def cumsum(em: Emitter, input, axis=0, reverse=False, dtype=None):
    x = _accumulated(em, input, "tl.cumsum", dtype)
    return emit_scan(em, [x], False, axis, reverse, _binary(em, Op.ADD))


def cumprod(em: Emitter, input, axis=0, reverse=False):
    x = _accumulated(em, input, "tl.cumprod")
    return emit_scan(em, [x], False, axis, reverse, _binary(em, Op.MUL))


def xor_sum(em: Emitter, input, axis=None, keep_dims=False):
    (x,), _ = _operands(input, "tl.xor_sum")
    if not x.type.dtype.is_int:
        raise SemanticError(f"tl.xor_sum needs an int tile, got {describe(x)}", "cast with .to(tl.int32)")
    return emit_reduce(em, [x], False, axis, keep_dims, _binary(em, Op.XOR))


BUILTINS = {tl.reduce: reduce, tl.associative_scan: associative_scan, tl.cumsum: cumsum, tl.cumprod: cumprod,
            tl.xor_sum: xor_sum}
