"""Symbolic tiles of the interpreter: integer tiles affine in their indices, and masks kept as
conjunctions, so that memory accesses become strided copies instead of gathers.

Runtime values of the interpreter (:mod:`ascdsl.interpreter`) have a leading program axis, and every
other axis either has the IR value's extent or is 1 (a *compact* value, broadcast where it is used).
Two kinds of value stay symbolic until something needs their elements:

* :class:`Affine`, an int32, int64 or pointer tile whose element ``(i_1, ..., i_r)`` in program ``p``
  is ``base[p] + sum_k coefs[k][p] * i_k``: what ``tl.arange``, ``+``, ``-``, ``*`` by a scalar,
  broadcasts and pointer arithmetic make. Its value is the exact integer result wrapped to its dtype,
  as the ops would compute it (integer addition and multiplication wrap alike whatever the order).
* :class:`Conj`, a bool tile that is the ``&`` of compact factors, such as a row mask and a column
  mask, never formed as a whole tile unless something reads it.

:func:`plan` turns a load or store through an affine pointer under such a mask into a strided view
of the buffer or a set of equally long strided runs; anything else (or anything out of bounds) is
left to the interpreter's general gather/scatter path, which also reports errors.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .ir.core import Op

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


class Affine:
    """An integer tile ``base + sum_k coefs[k] * i_k`` (see the module docstring). ``base`` and each
    coefficient are int64 arrays of shape ``(n,)`` or ``(1,)``; a coefficient None is zero."""

    __slots__ = ("base", "coefs", "dtype", "shape", "_dense")

    def __init__(self, base: Array, coefs: tuple[Array | None, ...], dtype: np.dtype, shape: tuple[int, ...]):
        self.base, self.coefs, self.dtype, self.shape, self._dense = base, coefs, dtype, shape, None

    @property
    def programs(self) -> int:
        return max([self.base.shape[0]] + [c.shape[0] for c in self.coefs if c is not None])

    def dense(self) -> Array:
        """The elements, as a compact array of the dtype (axes without a coefficient are 1)."""
        if self._dense is None:
            self._dense = self.partial(len(self.shape)).astype(self.dtype, copy=False)
        return self._dense

    def partial(self, axes: int) -> Array:
        """The exact int64 value over the first ``axes`` tile axes, the others at index 0 (compact)."""
        rank = len(self.shape)
        out = lift(self.base, rank)
        for k in range(axes):
            c = self.coefs[k]
            if c is not None and self.shape[k] > 1:
                out = out + lift(c, rank) * index(k, self.shape)
        return out

    def bounds(self) -> tuple[int, int]:
        """The least and greatest exact value over all programs and lanes."""
        lo = hi = self.base
        for c, size in zip(self.coefs, self.shape):
            if c is not None and size > 1:
                span = c * (size - 1)
                lo, hi = lo + np.minimum(span, 0), hi + np.maximum(span, 0)
        return int(lo.min()), int(hi.max())

    def fits_int32(self) -> bool:
        """Whether the exact values equal their 32-bit wrap (no lane overflowed)."""
        lo, hi = self.bounds()
        return INT32_RANGE[0] <= lo and hi < INT32_RANGE[1]

    def uniform(self) -> bool:
        return all(c is None for c in self.coefs)


def arange(start: int, end: int, dtype: np.dtype) -> Affine:
    return Affine(np.array([start], I64), (np.ones(1, I64),), dtype, (end - start,))


def _scalar(x: Array, shape: tuple[int, ...]) -> Affine | None:
    """A plain operand as an affine tile of ``shape`` when it is the same over the tile."""
    if x.dtype not in AFFINE_DTYPES or any(d != 1 for d in x.shape[1:]):
        return None
    return Affine(x.reshape(-1).astype(I64, copy=False), (None,) * len(shape), x.dtype, shape)


def _add(a: Array | None, b: Array | None) -> Array | None:
    return a if b is None else b if a is None else a + b


def _scale(c: Array | None, by: Array) -> Array | None:
    return None if c is None else c * by


def _wrap32(x: Array | None) -> Array | None:
    return None if x is None else x.astype(INT32).astype(I64)


def elementwise(op: Op, xs, to: np.dtype, shape: tuple[int, ...]) -> Affine | None:
    """``op`` on operands of which at least one is :class:`Affine`, kept affine where it stays so:
    ``+``, ``-``, negation, ``*`` by a value that is the same over the tile, pointer arithmetic by an
    offset that did not overflow its dtype, and casts between int32 and int64. None otherwise."""
    if to not in AFFINE_DTYPES:
        return None
    terms = [x if isinstance(x, Affine) else _scalar(x, shape) for x in xs]
    if any(t is None or t.dtype not in AFFINE_DTYPES for t in terms):
        return None
    a = terms[0]
    if op is Op.CAST:
        if to == I64 and a.dtype == INT32 and not a.fits_int32():
            return None
        if to == INT32 and a.dtype == I64:
            return Affine(_wrap32(a.base), tuple(map(_wrap32, a.coefs)), to, shape)
        return Affine(a.base, a.coefs, to, shape)
    if op is Op.NEG:
        return Affine(-a.base, tuple(None if c is None else -c for c in a.coefs), to, shape)
    b = terms[1]
    if op is Op.PTR_ADD:
        if b.dtype == INT32 and not b.fits_int32():
            return None  # the int32 offset wrapped: only its elements know how
        return Affine(a.base + b.base, tuple(map(_add, a.coefs, b.coefs)), to, shape)
    if op is Op.ADD:
        return Affine(a.base + b.base, tuple(map(_add, a.coefs, b.coefs)), to, shape)
    if op is Op.SUB:
        return Affine(a.base - b.base, tuple(_add(c, None if d is None else -d) for c, d in zip(a.coefs, b.coefs)),
                      to, shape)
    if op is Op.MUL and (a.uniform() or b.uniform()):
        a, b = (b, a) if a.uniform() else (a, b)
        out = Affine(a.base * b.base, tuple(_scale(c, b.base) for c in a.coefs), to, shape)
        if to == INT32:  # keep the int64 arithmetic far from overflow; the 32-bit wrap is the same
            out = Affine(_wrap32(out.base), tuple(map(_wrap32, out.coefs)), to, shape)
        return out
    return None


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
    zero = np.zeros(1, I64)
    coefs = tuple(None if c is None and d is None else
                  np.where(cond, zero if c is None else c, zero if d is None else d)
                  for c, d in zip(a.coefs, b.coefs))
    return Affine(np.where(cond, a.base, b.base), coefs, a.dtype, a.shape)


class Conj:
    """A bool tile that is the ``&`` of compact bool ``factors`` (each of rank ``1 + len(shape)``)."""

    __slots__ = ("factors", "_dense")
    dtype = np.dtype(np.bool_)

    def __init__(self, factors: tuple[Array, ...]):
        self.factors, self._dense = factors, None

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


def dense(x) -> Array:
    """The elements of a runtime value (symbolic or not), as a compact array."""
    return x if type(x) is np.ndarray else x.dense()


# --- memory accesses -------------------------------------------------------------------------

@dataclass(frozen=True)
class Access:
    """How a load or store reaches memory: ``runs[j]`` (``len(starts)`` of them, ``length`` lanes
    each, in program and lane order) are the enabled lanes; they are the leading ``length`` lanes of
    the last axis of the runs of the tile (shape ``(programs, *shape[:-1])``) that ``on`` selects
    (None: all). ``view``, when not None, is the whole ``(programs, *shape[:-1], length)`` box as a
    strided view of the buffer, every lane of it in bounds."""

    programs: int
    shape: tuple[int, ...]
    length: int
    on: Array | None
    runs: Array | None
    starts: Array | None
    view: Array | None

    def gather(self, fill, dtype: np.dtype) -> Array:
        """The loaded tile: enabled lanes from memory, the others ``fill``."""
        full = (self.programs,) + self.shape
        whole = self.on is None and self.length == self.shape[-1]
        if self.view is not None and whole:
            return np.array(self.view, dtype=dtype)
        if whole:
            return self.runs[self.starts].reshape(full)
        out = np.empty(full, dtype)
        out[...] = fill
        head = out[..., :self.length]
        if self.view is not None:
            np.copyto(head, self.view, where=True if self.on is None else self.on[..., None])
        elif self.on is None:
            head[...] = self.runs[self.starts].reshape(head.shape)
        else:
            head[np.broadcast_to(self.on, full[:-1])] = self.runs[self.starts]
        return out

    def scatter(self, value: Array) -> None:
        """Store ``value`` (broadcastable to the tile) to the enabled lanes."""
        head = value[..., :self.length]
        if self.view is not None:
            if self.on is None:
                np.copyto(self.view, head, casting="unsafe")
            else:
                np.copyto(self.view, head, casting="unsafe", where=self.on[..., None])
            return
        full = (self.programs,) + self.shape[:-1] + (self.length,)
        head = np.broadcast_to(head, full)
        self.runs[self.starts] = head.reshape(-1, self.length) if self.on is None else \
            head[np.broadcast_to(self.on, full[:-1])]


def _mask_parts(factors, shape: tuple[int, ...]) -> tuple[Array | None, int] | None:
    """``(on, length)`` for mask factors: ``on`` the runs (compact, without the last axis) whose
    lanes are enabled, ``length`` how many leading lanes of each; None for any other mask."""
    outer, inner = [], []
    for f in factors:
        if f.shape[-1] == 1:
            outer.append(f)
        elif all(d == 1 for d in f.shape[:-1]):
            inner.append(f)
        elif not f.all():
            return None
    length = shape[-1]
    if inner:
        lanes = functools.reduce(np.bitwise_and, inner).reshape(-1)
        length = int(np.count_nonzero(lanes))
        if not lanes[:length].all():
            return None
    on = None
    if outer:
        on = functools.reduce(np.bitwise_and, outer)[..., 0]
        if on.all():
            on = None
    return on, length


def plan(ptr: Affine, factors, lead: int, buffer, store: bool) -> Access | None | bool:
    """The :class:`Access` of a load or ``store`` through ``ptr`` where all of ``factors`` (compact
    bool arrays) hold, for ``lead`` programs at least (those of the stored value or of a load's
    ``other``).
    ``buffer(address)`` is ``(flat buffer, address of its element 0)`` of the buffer the op reaches
    (``address`` is an enabled lane's), or None. False: no lane is enabled. None: the general path
    decides (a mask that is not a box, lanes out of bounds or in several buffers, overlapping stores)."""
    shape = ptr.shape
    parts = _mask_parts(factors, shape)
    if parts is None:
        return None
    on, length = parts
    if length == 0 or (on is not None and not on.any()):
        return False
    last = ptr.coefs[-1]
    if last is not None and last.shape[0] != 1:
        return None
    step = 0 if last is None or shape[-1] == 1 else int(last[0])
    if step < 0 or (store and step == 0 and length > 1):
        return None
    programs = max([ptr.programs, lead] + [f.shape[0] for f in factors])
    starts = None
    if on is None:
        address = int(ptr.base[0])  # lane 0 of program 0
    else:
        starts = np.broadcast_to(ptr.partial(len(shape) - 1)[..., 0], (programs,) + shape[:-1])
        address = int(starts[np.broadcast_to(on, starts.shape)][0])
    flat, origin = buffer(address)
    if flat is None:
        return None
    view = _view(ptr, programs, length, step, flat, origin, store)
    if view is not None:
        return Access(programs, shape, length, on, None, None, view)
    if starts is None:
        starts = np.broadcast_to(ptr.partial(len(shape) - 1)[..., 0], (programs,) + shape[:-1])
    item, size, reach = flat.itemsize, flat.size, (length - 1) * step
    enabled = starts.reshape(-1) if on is None else starts[np.broadcast_to(on, starts.shape)]
    offsets = enabled - origin
    if offsets.min() < 0 or offsets.max() + reach >= size:
        return None
    if store and offsets.size > 1:
        ordered = np.sort(offsets)
        if not (ordered[1:] - ordered[:-1] > reach).all():
            return None
    runs = as_strided(flat, shape=(size - reach, length), strides=(item, step * item))
    return Access(programs, shape, length, on, runs, offsets, None)


def _view(ptr: Affine, programs: int, length: int, step: int, flat: Array, origin: int,
          store: bool) -> Array | None:
    """The whole box of the access as a strided view of ``flat``, when the programs' bases are
    equally spaced, the coefficients the same in every program and every lane in bounds (and,
    for a store, no two lanes share an address)."""
    if any(c is not None and c.shape[0] != 1 for c in ptr.coefs):
        return None
    base = np.broadcast_to(ptr.base, (programs,))
    gap = int(base[1] - base[0]) if programs > 1 else 0
    if programs > 2 and not (np.diff(base) == gap).all():
        return None
    extents = (programs,) + ptr.shape[:-1] + (length,)
    steps = (gap,) + tuple(0 if c is None else int(c[0]) for c in ptr.coefs[:-1]) + (step,)
    lo = hi = int(base[0]) - origin
    for e, s in zip(extents, steps):
        lo, hi = lo + min(0, s * (e - 1)), hi + max(0, s * (e - 1))
    if lo < 0 or hi >= flat.size:
        return None
    if store and not _disjoint(extents, steps):
        return None
    item = flat.itemsize
    return as_strided(flat[int(base[0]) - origin:], shape=extents, strides=tuple(s * item for s in steps))


def _disjoint(extents, steps) -> bool:
    """Whether a strided box addresses every lane at a distinct element (a sufficient test: each
    step, by size, is beyond the reach of the smaller ones)."""
    reach = 0
    for s, e in sorted((abs(s), e) for s, e in zip(steps, extents) if e > 1):
        if s <= reach:
            return False
        reach += s * (e - 1)
    return True
