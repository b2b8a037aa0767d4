"""The symbolic tiles: :class:`Affine` index tiles and their algebra (the ops that keep them affine), and
:class:`Conj` masks."""
from __future__ import annotations

import functools
import operator

import numpy as np

from ..ir.core import Op


Array = np.ndarray
I64 = np.dtype(np.int64)
INT32 = np.dtype(np.int32)
AFFINE_DTYPES = frozenset({INT32, I64})  # pointers are int64 too
INT32_RANGE = (-(1 << 31), 1 << 31)


def lift(x: Array, rank: int) -> Array:
    """A scalar ``(n,)`` as ``(n, 1, ..., 1)`` so that it broadcasts against tiles of ``rank``."""
    return x.reshape(x.shape[:1] + (1,) * rank) if x.ndim == 1 and rank else x


@functools.lru_cache(maxsize=1024)
def index(axis: int, shape: tuple[int, ...]) -> Array:
    """``arange(shape[axis])`` laid along ``axis`` of a compact value of tile shape ``shape``."""
    out = np.arange(shape[axis], dtype=I64).reshape((1,) * (axis + 1) + (shape[axis],) + (1,) * (len(shape) - axis - 1))
    out.flags.writeable = False
    return out


Term = "int | Array"
"""A base or coefficient: a Python int when it is the same in every program (arithmetic on it is
Python's, wrapped to int64 as NumPy's is), else an int64 array ``(n,)``."""


def term(x: Array | int) -> int | Array:
    """``x`` (an int, or an int array over the programs) as a term: an int when it is one value."""
    if isinstance(x, np.ndarray):
        return int(x[0]) if x.shape[0] == 1 else x.astype(I64, copy=False)
    return x


def _int64(x):
    """Python ints wrap as int64 arithmetic does (arrays already do)."""
    return (x + (1 << 63)) % (1 << 64) - (1 << 63) if type(x) is int else x


def _int32(x):
    if x is None:
        return None
    if type(x) is int:
        return (x + (1 << 31)) % (1 << 32) - (1 << 31)
    return x.astype(INT32).astype(I64)


def array(x) -> Array:
    return np.array([x], I64) if type(x) is int else x


def _programs(x) -> int:
    return 1 if type(x) is int or x is None else x.shape[0]


class Affine:
    """An integer tile ``base + sum_k coefs[k] * i_k`` (see the module docstring): ``base`` and each
    coefficient are terms (:data:`Term`); a coefficient None is zero."""

    __slots__ = ("base", "coefs", "dtype", "shape", "_dense", "_bounds")

    def __init__(self, base, coefs: tuple, dtype: np.dtype, shape: tuple[int, ...]):
        self.base, self.coefs, self.dtype, self.shape = base, coefs, dtype, shape
        self._dense = self._bounds = None

    @property
    def programs(self) -> int:
        return max(_programs(self.base), *map(_programs, self.coefs)) if self.coefs else _programs(self.base)

    def dense(self) -> Array:
        """The elements, as a compact array of the dtype (axes without a coefficient are 1)."""
        if self._dense is None:
            self._dense = self.partial(len(self.shape)).astype(self.dtype, copy=False)
        return self._dense

    def partial(self, axes: int) -> Array:
        """The exact int64 value over the first ``axes`` tile axes, the others at index 0 (compact)."""
        rank = len(self.shape)
        out = lift(array(self.base), rank)
        for k in range(axes):
            c = self.coefs[k]
            if c is not None and self.shape[k] > 1:
                out = out + (c if type(c) is int else lift(c, rank)) * index(k, self.shape)
        return out

    def spans(self):
        """Per program (terms), the least and greatest exact value over the lanes."""
        lo = hi = self.base
        for c, size in zip(self.coefs, self.shape):
            if c is not None and size > 1:
                span = c * (size - 1)
                if type(span) is int:
                    lo, hi = lo + min(span, 0), hi + max(span, 0)
                else:
                    lo, hi = lo + np.minimum(span, 0), hi + np.maximum(span, 0)
        return lo, hi

    def bounds(self) -> tuple[int, int]:
        """The least and greatest exact value over all programs and lanes."""
        if self._bounds is None:
            lo, hi = self.spans()
            self._bounds = (lo if type(lo) is int else int(np.minimum.reduce(lo)),
                            hi if type(hi) is int else int(np.maximum.reduce(hi)))
        return self._bounds

    def fits_int32(self) -> bool:
        """Whether the exact values equal their 32-bit wrap (no lane overflowed)."""
        lo, hi = self.bounds()
        return INT32_RANGE[0] <= lo and hi < INT32_RANGE[1]

    def uniform(self) -> bool:
        return all(c is None for c in self.coefs)


def arange(start: int, end: int, dtype: np.dtype) -> Affine:
    return Affine(start, (1,), dtype, (end - start,))


def _scalar(x: Array, shape: tuple[int, ...]) -> Affine | None:
    """A plain operand as an affine tile of ``shape`` when it is the same over the tile."""
    if x.dtype not in AFFINE_DTYPES or any(d != 1 for d in x.shape[1:]):
        return None
    return Affine(term(x.reshape(-1)), (None,) * len(shape), x.dtype, shape)


def _add(a, b):
    return a if b is None else b if a is None else _int64(a + b)


def _neg(a):
    return None if a is None else _int64(-a)


def _scale(c, by):
    return None if c is None else _int64(c * by)


def elementwise(op: Op, xs, to: np.dtype, shape: tuple[int, ...]) -> Affine | None:
    """``op`` on operands of which at least one is :class:`Affine`, kept affine where it stays so:
    ``+``, ``-``, negation, ``*`` by a value that is the same over the tile, pointer arithmetic by an
    offset that did not overflow its dtype, and casts between int32 and int64 (a compact bool array
    for comparisons that their spans decide). None otherwise."""
    if to not in AFFINE_DTYPES and op not in COMPARE:
        return None
    terms = [x if isinstance(x, Affine) else _scalar(x, shape) for x in xs]
    if any(t is None or t.dtype not in AFFINE_DTYPES for t in terms):
        return None
    a = terms[0]
    if op in COMPARE:
        return _compare(op, *terms, shape)
    if op is Op.CAST:
        if to == I64 and a.dtype == INT32 and not a.fits_int32():
            return None
        if to == INT32 and a.dtype == I64:
            return Affine(_int32(a.base), tuple(map(_int32, a.coefs)), to, shape)
        return Affine(a.base, a.coefs, to, shape)
    if op is Op.NEG:
        return Affine(_neg(a.base), tuple(map(_neg, a.coefs)), to, shape)
    b = terms[1]
    if op is Op.PTR_ADD:
        if b.dtype == INT32 and not b.fits_int32():
            return None  # the int32 offset wrapped: only its elements know how
        return Affine(_add(a.base, b.base), tuple(map(_add, a.coefs, b.coefs)), to, shape)
    if op is Op.ADD:
        return Affine(_add(a.base, b.base), tuple(map(_add, a.coefs, b.coefs)), to, shape)
    if op is Op.SUB:
        return Affine(_add(a.base, _neg(b.base)), tuple(_add(c, _neg(d)) for c, d in zip(a.coefs, b.coefs)),
                      to, shape)
    if op is Op.MUL and (a.uniform() or b.uniform()):
        a, b = (b, a) if a.uniform() else (a, b)
        out = Affine(_scale(a.base, b.base), tuple(_scale(c, b.base) for c in a.coefs), to, shape)
        if to == INT32:  # keep the int64 arithmetic far from overflow; the 32-bit wrap is the same
            out = Affine(_int32(out.base), tuple(map(_int32, out.coefs)), to, shape)
        return out
    return None


COMPARE = {Op.LT: (operator.lt, operator.ge), Op.LE: (operator.le, operator.gt),
           Op.GT: (operator.gt, operator.le), Op.GE: (operator.ge, operator.lt)}
"""Comparisons decided by the spans of their operands: (holds everywhere, holds nowhere) as a function
of (the left operand's extreme, the right one's) - the left's greatest against the right's least for
``<``, and so on."""


def _compare(op: Op, a: Affine, b: Affine, shape: tuple[int, ...]) -> Array | None:
    """``a op b`` where one side is the same over the tile and every program's answer is the same on
    all its lanes (``cols < n`` with every column inside): a compact bool array. None otherwise."""
    if not (a.uniform() or b.uniform()) or a.dtype != INT32 or b.dtype != INT32 or not (a.fits_int32() and b.fits_int32()):
        return None
    (a_lo, a_hi), (b_lo, b_hi) = a.spans(), b.spans()
    everywhere, nowhere = COMPARE[op]
    if op in (Op.LT, Op.LE):
        yes, no = everywhere(a_hi, b_lo), nowhere(a_lo, b_hi)
    else:
        yes, no = everywhere(a_lo, b_hi), nowhere(a_hi, b_lo)
    if type(yes) is bool:  # the same in every program
        return _uniform(yes, len(shape)) if yes or no else None
    if not (yes | no).all():
        return None
    return yes.reshape(yes.shape + (1,) * len(shape))


@functools.lru_cache(maxsize=64)
def _uniform(value: bool, rank: int) -> Array:
    """``value`` as a compact bool tile of ``rank`` (shared: read-only)."""
    out = np.full((1,) * (1 + rank), value)
    out.flags.writeable = False
    return out


def broadcast(a: Affine, shape: tuple[int, ...]) -> Affine:
    """``a`` broadcast to ``shape`` (new leading axes and extents grown from 1 have no coefficient)."""
    lead = len(shape) - len(a.shape)
    coefs = (None,) * lead + tuple(c if old == new else None
                                   for c, old, new in zip(a.coefs, a.shape, shape[lead:]))
    return Affine(a.base, coefs, a.dtype, shape)


def expand_dims(a: Affine, axis: int, shape: tuple[int, ...]) -> Affine:
    axis = axis if axis >= 0 else len(shape) + axis
    return Affine(a.base, a.coefs[:axis] + (None,) + a.coefs[axis:], a.dtype, shape)


def select(cond: Array, a: Affine, b: Affine) -> Affine | None:
    """Per program (``cond`` of shape ``(n,)``): ``a`` where it holds, else ``b``; None when they
    differ in dtype."""
    if a.dtype != b.dtype:
        return None
    coefs = tuple(None if c is None and d is None else np.where(cond, 0 if c is None else c, 0 if d is None else d)
                  for c, d in zip(a.coefs, b.coefs))
    return Affine(np.where(cond, a.base, b.base), coefs, a.dtype, a.shape)


def repeat(a: Affine, copies: int, interleaved: bool = False) -> Affine:
    """``a`` for each program ``copies`` times, in a row or ``interleaved`` (see
    :meth:`ascdsl.interpreter.state.Programs.copies`)."""
    again = lambda x: x if type(x) is int or x is None else np.tile(x, copies) if interleaved \
        else np.repeat(x, copies)  # noqa: E731
    return Affine(again(a.base), tuple(map(again, a.coefs)), a.dtype, a.shape)


class Conj:
    """A bool tile that is the ``&`` of compact bool ``factors`` (each of rank ``1 + len(shape)``)."""

    __slots__ = ("factors", "_dense", "parts")
    dtype = np.dtype(np.bool_)

    def __init__(self, factors: tuple[Array, ...]):
        self.factors, self._dense, self.parts = factors, None, None  # parts: (active, mask_parts)

    def dense(self) -> Array:
        if self._dense is None:
            self._dense = functools.reduce(np.bitwise_and, self.factors)
        return self._dense


def conj(a, b, rank: int) -> Conj | None:
    """``a & b`` of bool operands as a :class:`Conj` when the result would be larger than both
    (a row mask and a column mask); None when a plain ``&`` is as cheap."""
    fa = a.factors if isinstance(a, Conj) else (lift(a, rank),)
    fb = b.factors if isinstance(b, Conj) else (lift(b, rank),)
    if len(fa) == len(fb) == 1 and (fa[0].shape == fb[0].shape or fa[0].ndim != fb[0].ndim):
        return None
    return Conj(fa + fb)


def expand(x: Array, shape: tuple[int, ...]) -> Array:
    """``x`` broadcast to ``shape`` as a new array (for small arrays, cheaper than a broadcast view)."""
    if x.shape == shape:
        return x
    out = np.empty(shape, x.dtype)
    out[...] = x
    return out


def strided(flat: Array, first: int, shape: tuple[int, ...], steps) -> Array:
    """The view of the 1-D contiguous ``flat`` whose element ``i`` is ``flat[first + sum(i_k * steps_k)]``
    (NumPy checks that it stays inside ``flat``)."""
    item = flat.itemsize
    return np.ndarray(shape, flat.dtype, flat, first * item, tuple(s * item for s in steps))


def dense(x) -> Array:
    """The elements of a runtime value (symbolic or not), as a compact array."""
    return x if type(x) is np.ndarray else x.dense()
