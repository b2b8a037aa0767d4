"""Shape builtins (``reshape``, ``permute``, ``join``/``split``, ``cat``...), ``sort``, ``flip`` and ``dot``.

Each checks its shapes and emits one op of :data:`ascdsl.ir.GroupOp.RESHAPING` (or ``sort``/``dot``);
``trans``, ``ravel``, ``view``, ``interleave``, ``broadcast_to`` and ``expand_dims`` are spelled with
those and the existing ``broadcast``/``expand_dims``.
"""
from __future__ import annotations

import math

from .. import dtypes, semantics
from .. import language as tl
from ..ir import Op, Type, Value
from ..ir.symbol import Poly, equal
from ..semantics import Literal, SemanticError, broadcast_shapes, show_shape
from .emit import Emitter, describe


def _tile(x, what: str, min_rank: int = 1) -> Value:
    if not isinstance(x, Value) or len(x.type.shape) < min_rank:
        need = "a tile" if min_rank <= 1 else f"a tile of rank {min_rank} or more"
        raise SemanticError(f"{what} needs {need}, got {describe(x)}", "pass a tile, e.g. from tl.load or tl.arange")
    return x


def _dims(values, what: str, kinds=(int,)) -> tuple[int, ...]:
    """A shape or axis list given as varargs (``reshape(x, M, N)``) or one tuple (``reshape(x, (M, N))``);
    ``kinds``: what an entry may be (a shape's extent may be a :class:`Poly` of symbols too)."""
    if len(values) == 1 and isinstance(values[0], (tuple, list)):
        values = tuple(values[0])
    if not all(isinstance(v, kinds) and not isinstance(v, bool) for v in values):
        raise SemanticError(f"the {what} must be constexpr ints, got {describe(tuple(values))}",
                            "use literals or parameters declared as `NAME: tl.constexpr`")
    return tuple(values)


def _common(em: Emitter, a, b, what: str) -> tuple[Value, Value]:
    """``a`` and ``b`` cast to their common dtype (literals are weak)."""
    if not isinstance(a, Value) and not isinstance(b, Value):
        raise SemanticError(f"{what} needs at least one tile, got {describe(a)} and {describe(b)}")
    dtype = semantics.select_type(*(x.type.dtype if isinstance(x, Value) else x for x in (a, b)))
    return em.value(a, dtype), em.value(b, dtype)


def reshape(em: Emitter, input, shape, can_reorder=False):
    x = _tile(input, "tl.reshape", 0)
    shape = _dims(shape, "shape of tl.reshape", (int, Poly))
    # of symbols (``(ROWS, K)`` of a ``ROWS * K`` tile): the counts agree at every point, or at none (else Undecided)
    if not all(s > 0 for s in shape) or not equal(math.prod(shape), x.type.numel):
        raise SemanticError(f"cannot reshape {describe(x)} to {show_shape(shape)}: the element counts differ",
                            f"the new shape must hold exactly {x.type.numel} elements")
    if shape == x.type.shape:
        return x
    return em.op(Op.RESHAPE, x.type.with_shape(shape), [x])


def view(em: Emitter, input, shape):
    return reshape(em, input, shape)


def ravel(em: Emitter, x, can_reorder=False):
    return reshape(em, _tile(x, "tl.ravel"), (x.type.numel,))


def permute(em: Emitter, input, dims):
    x = _tile(input, "tl.permute")
    order, rank = _dims(dims, "dims of tl.permute"), len(x.type.shape)
    if sorted(order) != list(range(rank)):
        raise SemanticError(f"tl.permute needs a permutation of 0..{rank - 1}, got {order}",
                            "list every axis once, e.g. (1, 0) for a 2-D transpose")
    if order == tuple(range(rank)):
        return x
    return em.op(Op.PERMUTE, x.type.with_shape(tuple(x.type.shape[d] for d in order)), [x], [("order", order)])


def trans(em: Emitter, input, dims):
    x = _tile(input, "tl.trans")
    return permute(em, x, dims if dims else tuple(reversed(range(len(x.type.shape)))))


def expand_dims(em: Emitter, input, axis):
    x = input if isinstance(input, Value) else em.value(input, semantics.literal_dtype(input))
    axes = _dims((axis,) if isinstance(axis, int) else axis, "axis of tl.expand_dims")
    rank = len(x.type.shape) + len(axes)
    for a in sorted(semantics.normalize_axis(a, rank) for a in axes):
        x = em.expand_dims(x, a)
    return x


def broadcast_to(em: Emitter, input, shape):
    shape = _dims(shape, "shape of tl.broadcast_to")
    x = input if isinstance(input, Value) else em.value(input, semantics.literal_dtype(input))
    if broadcast_shapes(x.type.shape, shape) != shape:
        raise SemanticError(f"cannot broadcast {describe(x)} to {show_shape(shape)}",
                            "only unit axes stretch; leading axes may be added")
    return em.broadcast(x, shape)


def broadcast(em: Emitter, input, other):
    a, b = (x if isinstance(x, Value) else em.value(x, semantics.literal_dtype(x)) for x in (input, other))
    shape = broadcast_shapes(a.type.shape, b.type.shape)
    return em.broadcast(a, shape), em.broadcast(b, shape)


def join(em: Emitter, a, b):
    a, b = _common(em, a, b, "tl.join")
    shape = broadcast_shapes(a.type.shape, b.type.shape)
    a, b = em.broadcast(a, shape), em.broadcast(b, shape)
    return em.op(Op.JOIN, a.type.with_shape(shape + (2,)), [a, b])


def split(em: Emitter, a):
    x = _tile(a, "tl.split")
    if x.type.shape[-1] != 2:
        raise SemanticError(f"tl.split needs a last axis of size 2, got {describe(x)}",
                            "split undoes tl.join; reshape to (..., 2) first")
    half = x.type.with_shape(x.type.shape[:-1])
    return em.b.emit(Op.SPLIT, [half, half], [x], loc=em.loc)


def interleave(em: Emitter, a, b):
    joined = join(em, a, b)
    shape = joined.type.shape
    return reshape(em, joined, shape[:-2] + (shape[-2] * 2,))


def cat(em: Emitter, input, other, can_reorder=False):
    a, b = _common(em, _tile(input, "tl.cat"), _tile(other, "tl.cat"), "tl.cat")
    if a.type.shape[1:] != b.type.shape[1:]:
        raise SemanticError(f"tl.cat needs tiles that differ only in axis 0, got {describe(a)} and {describe(b)}",
                            "concatenate tiles of the same trailing shape")
    shape = (a.type.shape[0] + b.type.shape[0],) + a.type.shape[1:]
    return em.op(Op.CAT, a.type.with_shape(shape), [a, b])


def _axis(x: Value, dim, what: str) -> int:
    rank = len(x.type.shape)
    if dim is None:
        return rank - 1
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise SemanticError(f"the dim of {what} must be a constexpr int, got {describe(dim)}")
    return semantics.normalize_axis(dim, rank)


def flip(em: Emitter, x, dim=None):
    x = _tile(x, "tl.flip")
    return em.op(Op.FLIP, x.type, [x], [("axis", _axis(x, dim, "tl.flip"))])


def sort(em: Emitter, x, dim=None, descending=False):
    x = _tile(x, "tl.sort")
    if not isinstance(descending, bool):
        raise SemanticError(f"`descending` must be a constexpr bool, got {describe(descending)}")
    return em.op(Op.SORT, x.type, [x], [("axis", _axis(x, dim, "tl.sort")), ("descending", descending)])


def topk(em: Emitter, x, k, dim=None):
    x = _tile(x, "tl.topk")
    n = x.type.shape[-1]
    if _axis(x, dim, "tl.topk") != len(x.type.shape) - 1:
        raise SemanticError("tl.topk takes the last axis only", "tl.permute the axis to the end first")
    if not isinstance(k, int) or isinstance(k, bool) or not 0 < k <= n or k & (k - 1) or n & (n - 1):
        raise SemanticError(f"tl.topk needs a constexpr power of two k <= {n} over an axis of a power of two, "
                            f"got k={describe(k)} over {describe(x)}")
    top = sort(em, x, descending=True)
    lead = top.type.shape[:-1]
    while n > k:  # keep the first half: (..., n) -> (..., 2, n/2) -> (..., n/2, 2) -> split
        halves = reshape(em, top, lead + (2, n // 2))
        rank = len(lead) + 2
        top = split(em, permute(em, halves, tuple(range(rank - 2)) + (rank - 1, rank - 2)))[0]
        n //= 2
    return top


def histogram(em: Emitter, input, num_bins, mask=None):
    x = _tile(input, "tl.histogram")
    if not x.type.dtype.is_int:
        raise SemanticError(f"tl.histogram needs an int tile, got {describe(x)}", "cast with .to(tl.int32)")
    if not isinstance(num_bins, int) or isinstance(num_bins, bool) or num_bins <= 0:
        raise SemanticError(f"num_bins must be a positive constexpr int, got {describe(num_bins)}")
    operands = [x] + ([em.broadcast(mask, x.type.shape)] if mask is not None else [])
    return em.op(Op.HISTOGRAM, Type(dtypes.int32, (num_bins,)), operands,
                 [("bins", num_bins), ("has_mask", mask is not None)])


def dot(em: Emitter, input, other, acc=None, input_precision=None, allow_tf32=None, max_num_imprecise_acc=None,
        out_dtype=None):
    a, b = _tile(input, "tl.dot", 2), _tile(other, "tl.dot", 2)
    (*batch, m, k), (*batch_b, k2, n) = a.type.shape, b.type.shape
    if len(a.type.shape) != len(b.type.shape) or batch != batch_b or k != k2 or len(batch) > 1:
        raise SemanticError(f"tl.dot cannot multiply {describe(a)} by {describe(b)}",
                            "multiply (M, K) by (K, N) tiles, or (B, M, K) by (B, K, N)")
    kinds = {a.type.dtype.is_float, b.type.dtype.is_float}
    if len(kinds) != 1 or dtypes.bool_ in (a.type.dtype, b.type.dtype):
        raise SemanticError(f"tl.dot needs two float or two int tiles, got {describe(a)} and {describe(b)}",
                            "cast one operand with .to()")
    result = dtypes.float32 if a.type.dtype.is_float else dtypes.int32
    if out_dtype is not None:
        if not isinstance(out_dtype, dtypes.DType):
            raise SemanticError(f"out_dtype must be a dtype, got {describe(out_dtype)}")
        result = out_dtype
    operand = semantics.promote(a.type.dtype, b.type.dtype)
    shape = tuple(batch) + (m, n)
    operands = [em.cast(a, operand), em.cast(b, operand)]
    if acc is not None:
        if isinstance(acc, (Value, *Literal)):
            acc = em.value(acc, result)
        if not isinstance(acc, Value) or broadcast_shapes(acc.type.shape, shape) != shape:
            raise SemanticError(f"the accumulator of tl.dot must fit {show_shape(shape)}, got {describe(acc)}")
        operands.append(em.broadcast(acc, shape))
    return em.op(Op.DOT, Type(result, shape), operands, [("has_acc", acc is not None)])


BUILTINS = {tl.reshape: reshape, tl.view: view, tl.ravel: ravel, tl.permute: permute, tl.trans: trans,
            tl.expand_dims: expand_dims, tl.broadcast_to: broadcast_to, tl.broadcast: broadcast, tl.join: join,
            tl.split: split, tl.interleave: interleave, tl.cat: cat, tl.flip: flip, tl.sort: sort, tl.topk: topk, tl.dot: dot,
            tl.histogram: histogram}
