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
import math
import operator
from dataclasses import dataclass

import numpy as np
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


def _array(x) -> Array:
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
        out = lift(_array(self.base), rank)
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
    :meth:`ascdsl.interpreter.state._Programs.copies`)."""
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


# --- memory accesses -------------------------------------------------------------------------

@dataclass(frozen=True)
class Access:
    """How a load or store reaches the enabled lanes of a tile of ``shape`` in ``programs`` programs.

    The tile is seen as runs: its first ``axes`` axes index the runs, the others (folded where they
    are contiguous in memory) the ``run`` lanes of each, of which the leading ``length`` are enabled
    in the runs ``on`` selects (compact over ``(programs, *shape[:axes])``; None: all). Either
    ``view`` is the whole ``(programs, *shape[:-1], length)`` box as a strided view of the buffer
    (then ``axes`` is ``len(shape) - 1``), or ``pieces`` are the enabled runs as a few strided views
    (:func:`_pieces`; what the uneven shares of :func:`ascdsl.lib.core_span` make), or
    ``runs[starts]`` are the enabled runs in program and lane order."""

    programs: int
    shape: tuple[int, ...]
    axes: int
    run: int
    length: int
    on: Array | None
    view: Array | None = None
    runs: Array | None = None
    starts: Array | None = None
    pieces: tuple[tuple[int, int, Array], ...] | None = None

    def _folded(self, x: Array) -> Array:
        return x.reshape((self.programs,) + self.shape[:self.axes] + (self.run,))

    def _selected(self) -> Array:
        """Which of the runs ``(programs, *shape[:axes])`` are enabled."""
        return expand(self.on, (self.programs,) + self.shape[:self.axes])

    def gather(self, fill, dtype: np.dtype, share: bool = False) -> Array:
        """The loaded tile: enabled lanes from memory, the others ``fill``. ``share``: the memory
        does not change while the tile lives, so a whole box is returned as a read-only view."""
        full = (self.programs,) + self.shape
        if self.on is None and self.length == self.run and self.pieces is None:
            if self.view is None:
                return self.runs[self.starts].reshape(full)
            if not share:
                return np.array(self.view, dtype=dtype)
            out = self.view.view()
            out.flags.writeable = False
            return out
        out = np.empty(full, dtype)
        head = self._folded(out)[..., :self.length]
        if self.view is not None:  # every lane of the box is in bounds: copy it whole
            head[...] = self.view
        elif self.pieces is not None:
            rows = out.reshape(-1, self.run)[:, :self.length]
            for first, spacing, piece in self.pieces:
                _lattice(rows, first, spacing, piece.shape)[...] = piece
            if self.on is None and self.length == self.run:
                return out
        elif self.on is None:
            head[...] = self.runs[self.starts].reshape(head.shape)
        else:
            head[self._selected()] = self.runs[self.starts]
        self._fill_disabled(out, fill)
        return out

    def _fill_disabled(self, out: Array, fill: Array) -> None:
        """Write ``fill`` (compact) to the lanes of the tile ``out`` that the access does not enable."""
        if fill.size != 1:
            on = True if self.on is None else self.on.reshape(self.on.shape + (1,) * (len(self.shape) - self.axes))
            enabled = on & (index(len(self.shape) - 1, self.shape) < self.length)
            np.copyto(out, fill, where=~enabled)
            return
        value = fill.reshape(())
        if self.length < self.run:
            out[..., self.length:] = value
        if self.on is not None:
            self._folded(out)[~self._selected()] = value

    def scatter(self, value: Array) -> None:
        """Store ``value`` (compact, broadcastable to the tile) to the enabled lanes."""
        if self.view is not None or self.pieces is not None:
            self.compute([(None, [value])])
            return
        whole = np.broadcast_to(value, (self.programs,) + self.shape)
        head = self._folded(whole if whole.flags.c_contiguous else np.ascontiguousarray(whole))[..., :self.length]
        self.runs[self.starts] = head.reshape(-1, self.length) if self.on is None else head[self._selected()]

    def compute(self, links: list[tuple]) -> None:
        """Store the last result of a chain of elementwise ops to the enabled lanes of a ``view`` or
        ``pieces`` access, computed into the memory: ``links`` are ``(ufunc, xs)``, innermost first, for
        ``ufunc(*xs)`` over compact or loaded operands that broadcast to the tile, where an operand None
        is the result of the link before (a ufunc None copies ``xs[0]``).

        A chain of three ops or more runs strip by strip (:func:`_strips`), each op after the first
        reading the one before's result while it is in cache (for two, the NumPy calls a strip costs
        outweigh the one reread they save); the ops before the last compute into the stored memory
        where it is one contiguous block (the strip or the whole), else into a contiguous scratch
        (far apart rows, a power of two apart, would contend for the same cache sets). Lanes are
        independent, so each op's result is the one it has over the whole tile."""
        if self.view is not None:
            where = None if self.on is None else self.on[..., None]  # (a ufunc given where= runs its
            operands = [[None if x is None else dense(x)[..., :self.length] for x in xs] for _, xs in links]
            targets = [(self.view, operands, where)]                  # masked loops, even for True)
        else:
            per_link = [self._arguments(xs) for _, xs in links]
            targets = [(view, [args[p] for args in per_link], None) for p, (_, _, view) in enumerate(self.pieces)]
        scratch = None
        for out, operands, where in targets:
            cuts = list(_strips(out.shape)) if len(links) > 2 else [()]
            parts = [[None if x is None else _parts(x, cuts) for x in xs] for xs in operands]
            masks = [None] * len(cuts) if where is None else _parts(where, cuts)
            last = len(links) - 1
            for s, (into, mask) in enumerate(zip(_parts(out, cuts), masks)):
                held = into
                if len(links) > 1 and not into.flags.c_contiguous:
                    if scratch is None or scratch.size < into.size:
                        scratch = np.empty(into.size, into.dtype)
                    held = scratch[:into.size].reshape(into.shape)
                for k, ((ufunc, _), xs) in enumerate(zip(links, parts)):
                    args = [held if x is None else x[s] for x in xs]
                    target = into if k == last else held
                    if ufunc is None:
                        np.copyto(target, args[0], casting="unsafe", where=True if mask is None else mask)
                    elif mask is None or target is not into:
                        ufunc(*args, out=target)
                    else:
                        ufunc(*args, out=target, where=mask)

    def _arguments(self, xs: list) -> list[list[Array]]:
        """Per piece, the operands' values at its lanes: the pieces of a :class:`Loaded` operand read
        through the same pieces, else runs of the compact operand (:meth:`_rows`)."""
        columns = []
        for x in xs:
            if x is None:
                columns.append([None] * len(self.pieces))
            elif isinstance(x, Loaded) and x.access.same_pieces(self):
                columns.append([view for _, _, view in x.access.pieces])
            else:
                rows = self._rows(dense(x))
                columns.append([_lattice(rows, first, spacing, view.shape) for first, spacing, view in self.pieces])
        return [list(args) for args in zip(*columns)]

    def same_pieces(self, other: "Access") -> bool:
        """Whether ``other`` reaches the same lanes of the tile piece by piece."""
        return self is other or (self.pieces is not None and other.pieces is not None
                                 and (self.programs, self.shape, self.axes, self.run, self.length)
                                 == (other.programs, other.shape, other.axes, other.run, other.length)
                                 and [(f, s, v.shape) for f, s, v in self.pieces]
                                 == [(f, s, v.shape) for f, s, v in other.pieces])

    def _rows(self, x: Array) -> Array:
        """A compact operand as runs ``(runs or 1, length or 1)``, broadcastable to the pieces' rows."""
        lead, runs = (self.programs,) + self.shape[:self.axes], x.shape[:1 + self.axes]
        tail = x.shape[1 + self.axes:]
        if all(d == 1 for d in runs):
            count = 1
        elif runs == lead:
            count = -1
        else:
            x, count = np.broadcast_to(x, lead + tail), -1
        if all(d == 1 for d in tail):
            return x.reshape(count, 1)
        x = np.broadcast_to(x, x.shape[:1 + self.axes] + self.shape[self.axes:])
        return x.reshape(count, self.run)[:, :self.length]


STRIP_ELEMENTS = 1 << 17
"""A chain computed into memory (:meth:`Access.compute`) runs in strips of at most this many lanes (512 KB
of float32: the result's strip and an operand's stay in a core's L2 cache; fewer, longer strips cost fewer
NumPy calls)."""


def _strips(shape: tuple[int, ...]):
    """Index tuples (of slices) that cut a box of ``shape`` into consecutive strips of at most
    :data:`STRIP_ELEMENTS` lanes: one axis in steps, the axes before it an index at a time."""
    axis, inner = len(shape), 1
    while axis > 0 and inner * shape[axis - 1] <= STRIP_ELEMENTS:
        axis, inner = axis - 1, inner * shape[axis - 1]
    if axis == 0:
        yield ()
        return
    axis -= 1
    step = max(1, STRIP_ELEMENTS // inner)
    for lead in np.ndindex(*shape[:axis]):
        for start in range(0, shape[axis], step):
            yield tuple(slice(i, i + 1) for i in lead) + (slice(start, start + step),)


def _parts(x: Array, cuts: list[tuple]) -> list[Array]:
    """The part of ``x`` (compact, of the box's rank) that broadcasts to each of the ``cuts`` of the box
    (:func:`_strips`): its axes of extent 1 whole."""
    cut = [d != 1 for d in x.shape[:len(cuts[0])]]
    if not any(cut):
        return [x] * len(cuts)
    return [x[tuple(c if k else slice(None) for c, k in zip(part, cut))] for part in cuts]


def _lattice(rows: Array, first: int, spacing: int, shape: tuple[int, int, int]) -> Array:
    """Rows ``first + i * spacing + j`` of ``rows`` as ``(i, j, lane)`` (a single row broadcasts)."""
    if rows.shape[0] == 1:
        return rows[None]
    step = rows.strides[0]
    return np.lib.stride_tricks.as_strided(rows[first:], shape[:2] + rows.shape[1:],
                                           (spacing * step, step) + rows.strides[1:])


class Loaded:
    """A loaded float32 tile kept as the strided pieces of a buffer that no lane writes during the launch
    (:class:`Access` ``pieces`` of whole contiguous runs), its disabled runs (``off``, positions) the
    compact ``fill``, until something needs its elements: ufuncs (:meth:`apply`), reductions along the
    last axis (:meth:`reduce_last`) and stores computed in place (:meth:`Access.compute`) read the
    pieces where they are, so the load's copy is never made. Every lane's result is NumPy's on the same
    runs laid out alike, so it is the one the copy would give."""

    __slots__ = ("access", "dtype", "shape", "fill", "off", "_dense")

    def __init__(self, access: Access, dtype: np.dtype, fill: Array, off: Array | None):
        self.access, self.dtype, self.fill, self.off, self._dense = access, dtype, fill, off, None
        self.shape = (access.programs,) + access.shape

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def dense(self) -> Array:
        if self._dense is None:
            self._dense = self.access.gather(self.fill, self.dtype)
        return self._dense

    def _fresh(self, shape: tuple[int, ...], out: Array | None = None) -> tuple[Array, Array]:
        """A new tile of ``shape`` (the programs first; or ``out``, C-contiguous) and its rows, one per
        run of the access."""
        out = np.empty(shape, self.dtype) if out is None else out
        runs = self.access.programs * math.prod(self.access.shape[:self.access.axes])
        return out, out.reshape((runs,) + shape[1 + self.access.axes:])

    def _disabled(self, x) -> Array:
        """The runs of operand ``x`` at the disabled runs of this tile (a single one broadcasts)."""
        if type(x) is Loaded:
            x = x.fill if x.access.same_pieces(self.access) else x.dense()
        rows = self.access._rows(x)
        return rows if rows.shape[0] == 1 else rows[self.off]

    def apply(self, ufunc, xs: list, out: Array | None = None) -> Array:
        """``ufunc(*xs)`` (this among ``xs``; the others compact or loaded) as a new tile, or into ``out``
        (C-contiguous, of the tile's shape and dtype; it may be one of ``xs``, which is then read where
        it is written)."""
        out, rows = self._fresh(self.shape, out)
        rows = rows.reshape(rows.shape[0], -1)
        for (first, spacing, view), args in zip(self.access.pieces, self.access._arguments(xs)):
            ufunc(*args, out=_lattice(rows, first, spacing, view.shape))
        if self.off is not None:
            rows[self.off] = ufunc(*map(self._disabled, xs))
        return out

    def reduce_last(self, ufunc) -> Array:
        """``ufunc.reduce`` along the tile's last axis, as a new tile without it."""
        a = self.access
        out, rows = self._fresh(self.shape[:-1])
        for first, spacing, view in a.pieces:
            lanes = view.reshape(view.shape[:2] + a.shape[a.axes:])
            ufunc.reduce(lanes, axis=-1, dtype=self.dtype, out=_lattice(rows, first, spacing, view.shape))
        if self.off is not None:
            fill = np.broadcast_to(self._disabled(self), (self.off.size, a.run)).astype(self.dtype)
            rows[self.off] = ufunc.reduce(fill.reshape((self.off.size,) + a.shape[a.axes:]), axis=-1, dtype=self.dtype)
        return out


def loaded(access: Access, dtype: np.dtype, fill: Array) -> Loaded | None:
    """The tile a constant buffer's ``access`` loads, the disabled lanes ``fill``, kept as its pieces
    (:class:`Loaded`) when they are whole runs of float32, each line of runs one contiguous block (a
    grid-stride loop's rows, far apart, are faster copied once than read where they are); else None."""
    if access.pieces is None or access.length != access.run or dtype != np.float32:
        return None
    if any(view.strides[2] != view.itemsize or (view.shape[1] > 1 and view.strides[1] != view.shape[2] * view.itemsize)
           for _, _, view in access.pieces):
        return None
    off = None
    if access.on is not None:
        off = np.flatnonzero(~access._selected().reshape(-1))
        off = off if off.size else None
    return Loaded(access, dtype, fill, off)


PIECE_ELEMENTS = 8192
"""A strided piece of a memory access costs about one NumPy call: pieces are taken when they hold this
many enabled elements on average, else the runs are gathered through an index (two copies)."""


def _pieces(offsets: Array, positions: Array | None, width: int, step: int,
            elements: int) -> tuple[tuple[int, int, int, tuple, tuple], ...] | None:
    """The enabled runs (their ``offsets`` in the buffer and their ``positions`` among the tile's runs;
    None: 0, 1, ...) as few strided views ``(first, spacing, offset, shape, steps)`` of the buffer:
    ``view[i, j]`` is the run at position ``first + i * spacing + j``. Greedily the longest from each run on (consecutive positions,
    equally spaced offsets), then equally spaced lines of them as one; None when they would be many."""
    n = offsets.size
    limit = elements // PIECE_ELEMENTS
    gaps = offsets[1:] - offsets[:-1]
    linked = None if positions is None else positions[1:] - positions[:-1] == 1
    change = gaps[1:] != gaps[:-1]
    if linked is not None:
        change |= linked[1:] != linked[:-1]
    changes = np.flatnonzero(change)
    if changes.size > 8 * limit + 2:
        return None
    ends = [0, *(changes + 1).tolist(), n - 1]  # classes of pairs: [ends[c], ends[c + 1]) alike
    joined = [True] * len(ends) if linked is None else linked[ends[:-1]].tolist()
    starts, counts, run, c = [], [], 0, 0  # the lines: first run, runs
    while run < n:
        while ends[c + 1] <= run and c + 2 < len(ends):
            c += 1
        count = ends[c + 1] - run + 1 if run < n - 1 and joined[c] else 1
        starts.append(run)
        counts.append(count)
        if len(starts) > 8 * limit:
            return None
        run += count
    at = np.array(starts)
    where, after = offsets[at].tolist(), offsets[np.minimum(at + 1, n - 1)].tolist()
    lines = [(first, count, offset, following - offset if count > 1 else 0) for first, count, offset, following
             in zip(starts if positions is None else positions[at].tolist(), counts, where, after)]
    pieces, k = [], 0
    while k < len(lines):
        first, count, offset, gap = lines[k]
        outer = 1
        if k + 1 < len(lines) and lines[k + 1][1] == count and lines[k + 1][3] == gap:
            spacing, jump = lines[k + 1][0] - first, lines[k + 1][2] - offset
            while k + outer < len(lines) and lines[k + outer][1:4:2] == (count, gap) and \
                    lines[k + outer][0] == first + outer * spacing and lines[k + outer][2] == offset + outer * jump:
                outer += 1
        else:
            spacing = jump = 0
        pieces.append((first, spacing, offset, (outer, count, width), (jump, gap, step)))
        if len(pieces) > limit:
            return None
        k += outer
    return tuple(pieces)


def mask_parts(factors, shape: tuple[int, ...]) -> tuple[Array | None, int] | None:
    """``(on, length)`` for mask factors (compact bool arrays, all of which must hold): ``on`` the runs
    (compact, without the last axis) whose lanes are enabled (None: all), ``length`` how many leading
    lanes of each; None for any other mask."""
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


@dataclass(frozen=True)
class _Geometry:
    """Where an :class:`Access` reaches, as element offsets into its buffer: what :func:`plan` finds
    and :func:`Access` views are made from, so that an access whose pointer differs from a planned one
    by a constant (another buffer through the same offsets) reuses it (:class:`Plans`). ``lo`` and
    ``hi`` are the least and greatest offsets it touches; ``view`` is ``(first, extents, strides)``,
    ``pieces`` ``(first run, spacing, offset, shape, steps)`` per piece, ``starts`` the runs' offsets
    (read ``width`` lanes at ``step``)."""

    axes: int
    run: int
    width: int
    lo: int
    hi: int
    view: tuple | None = None
    pieces: tuple | None = None
    starts: Array | None = None  # (the runs' offsets, for pieces too)
    step: int = 1

    def distinct(self) -> bool:
        """Whether every lane is at its own element (what a store needs)."""
        if self.view is not None:
            return _disjoint(*self.view[1:])
        if self.starts.size < 2:
            return True
        ordered = self.starts if (self.starts[1:] >= self.starts[:-1]).all() else np.sort(self.starts)
        return bool((ordered[1:] - ordered[:-1] > (self.width - 1) * self.step).all())

    def access(self, programs: int, shape: tuple[int, ...], on: Array | None, flat: Array, shift: int) -> "Access | None":
        """The access of these lanes in ``flat``, every offset moved by ``shift``; None if that leaves ``flat``."""
        if self.lo + shift < 0 or self.hi + shift >= flat.size:
            return None
        if on is not None:  # the runs' mask, without the axes folded into the runs (extent 1 in ``on``)
            on = on.reshape(on.shape[:self.axes + 1])
        if self.view is not None:
            first, extents, strides = self.view
            return Access(programs, shape, self.axes, self.run, self.width, on,
                          view=strided(flat, first + shift, extents, strides))
        if self.pieces is not None:
            return Access(programs, shape, self.axes, self.run, self.width, on, pieces=tuple(
                (first, spacing, strided(flat, offset + shift, extent, steps))
                for first, spacing, offset, extent, steps in self.pieces))
        reach = (self.width - 1) * self.step
        return Access(programs, shape, self.axes, self.run, self.width, on,
                      runs=strided(flat, 0, (flat.size - reach, self.width), (1, self.step)),
                      starts=self.starts if shift == 0 else self.starts + shift)


class Plans:
    """The accesses planned for one set of programs, so that the loads and stores of a tile through
    the same offsets (``x_ptr + offsets``, ``y_ptr + offsets``: pointers that differ by a constant,
    under the same mask) are planned once."""

    def __init__(self) -> None:
        self.seen: dict[tuple, tuple] = {}

    @staticmethod
    def key(ptr: Affine, on: Array | None, length: int, programs: int) -> tuple:
        return (ptr.shape, length, programs, None if on is None else id(on),
                tuple(c if c is None or type(c) is int else id(c) for c in ptr.coefs))

    def recall(self, key: tuple, ptr: Affine, store: bool) -> tuple[_Geometry, int, int] | None:
        """``(geometry, address, offset)`` of an access planned for a pointer that ``ptr`` exceeds by a
        constant: its lane's address moved by that constant, and the lane's offset in that access's buffer
        (for a ``store``, only one whose lanes are distinct)."""
        hit = self.seen.get(key)
        if hit is None:
            return None
        old, _, geometry, address, offset = hit  # (``old`` and ``on`` keep the arrays whose ids the key holds)
        delta = _constant_difference(ptr.base, old.base)
        if delta is None or (store and not geometry.distinct()):
            return None
        return geometry, address + delta, offset

    def note(self, key: tuple, ptr: Affine, on: Array | None, geometry: "_Geometry", address: int, offset: int) -> None:
        self.seen[key] = (ptr, on, geometry, address, offset)


class Memo:
    """The geometries planned in earlier launches, by everything :func:`_geometry` reads: the
    pointer's exact base and coefficients, its shape, the runs' mask, the lanes, the programs, load or
    store, :data:`PIECE_ELEMENTS` (and, checked on reuse, the size and origin of the buffer): a launch of the same
    specialisation with the same geometry plans nothing again. The ``capacity`` latest are kept, each
    of at most ``largest`` bytes of key and runs (larger ones are planned every time)."""

    def __init__(self, capacity: int = 64, largest: int = 1 << 18) -> None:
        self.capacity, self.largest, self.seen = capacity, largest, {}

    @staticmethod
    def key(ptr: Affine, on: Array | None, length: int, programs: int, store: bool) -> tuple:
        return (ptr.shape, length, programs, store, PIECE_ELEMENTS, _exact(on), _exact(ptr.base),
                *map(_exact, ptr.coefs))

    def note(self, key: tuple, address: int, where: tuple[int, int], geometry: _Geometry) -> None:
        """Remember ``geometry`` (lane 0 at ``address``) planned in a buffer of ``where``: (size, origin)."""
        size = sum(len(part[2]) for part in key if type(part) is tuple and len(part) == 3 and type(part[2]) is bytes)
        if size + (0 if geometry.starts is None else geometry.starts.nbytes) > self.largest:
            return
        self.seen.pop(key, None)
        if len(self.seen) >= self.capacity:
            del self.seen[next(iter(self.seen))]  # the oldest
        self.seen[key] = (address, where, geometry)


def _exact(x) -> object:
    """A term or mask as a hashable value equal only for equal values of equal shape and dtype."""
    return x if x is None or type(x) is int else (x.shape, x.dtype.str, x.tobytes())


MEMO = Memo()


def _constant_difference(a, b) -> int | None:
    """``a - b`` of two terms when it is the same in every program, else None."""
    if type(a) is int and type(b) is int:
        return a - b
    d = _array(a) - _array(b)
    lo, hi = int(np.minimum.reduce(d)), int(np.maximum.reduce(d))
    return lo if lo == hi else None


def plan(ptr: Affine, on: Array | None, length: int, programs: int, buffer, store: bool,
         plans: Plans | None = None) -> Access | None | bool:
    """The :class:`Access` of a load or ``store`` through ``ptr`` to the lanes :func:`mask_parts`
    gave (``on``, ``length``), in ``programs`` programs. ``buffer(address)`` is ``(flat buffer,
    address of its element 0)`` of the buffer the op reaches (``address`` is an enabled lane's), or
    ``(None, 0)``. False: no lane is enabled. None: the general path decides (lanes out of bounds or
    in several buffers, overlapping stores). ``plans``: the accesses planned before for the same
    programs, reused for a pointer that differs from one of them by a constant."""
    shape = ptr.shape
    if length == 0 or (on is not None and not on.any()):
        return False
    rank = len(shape)
    steps = [0 if c is None or e == 1 else c if type(c) is int else None for c, e in zip(ptr.coefs, shape)]
    step = steps[-1]
    if step is None or step < 0 or (store and step == 0 and length > 1):
        return None
    key = None if plans is None else Plans.key(ptr, on, length, programs)
    hit = None if key is None else plans.recall(key, ptr, store)
    if hit is not None:
        geometry, address, offset = hit
        flat, origin = buffer(address)
        return None if flat is None else geometry.access(programs, shape, on, flat, address - origin - offset)
    remembered = MEMO.key(ptr, on, length, programs, store)
    address, where, geometry = MEMO.seen.get(remembered, (None, None, None))
    if address is None:
        address = (ptr.base if type(ptr.base) is int else int(ptr.base[0])) if on is None else None  # lane 0, program 0
    if address is None:
        starts = expand(ptr.partial(rank - 1)[..., 0], (programs,) + shape[:-1])
        address = int(starts[expand(on, starts.shape)][0])
    flat, origin = buffer(address)
    if flat is None:
        return None
    if geometry is None or where != (flat.size, origin):
        geometry = _geometry(ptr, steps, on, length, programs, flat.size, origin, store)
        if geometry is None:
            return None
        MEMO.note(remembered, address, (flat.size, origin), geometry)
    if key is not None:
        plans.note(key, ptr, on, geometry, address, address - origin)
    return geometry.access(programs, shape, on, flat, 0)


def _geometry(ptr: Affine, steps: list[int], on: Array | None, length: int, programs: int, size: int,
              origin: int, store: bool) -> _Geometry | None:
    """Where :func:`plan`'s access reaches in a buffer of ``size`` elements whose element 0 is at
    ``origin``; None when it is out of bounds or a store's lanes may overlap."""
    shape = ptr.shape
    rank, step = len(shape), steps[-1]
    if None not in steps:
        view = _view(ptr.base, steps, programs, shape, length, size, origin, store)
        if view is not None:
            return view
    axes, run, width = rank - 1, shape[-1], length  # width: the lanes of each run accessed
    if length == shape[-1] and step > 0:  # fold axes whose rows continue the run in memory
        while axes > 0 and steps[axes - 1] == run * step and (on is None or on.shape[axes] == 1):
            axes, run = axes - 1, run * shape[axes - 1]
        width = run
    if on is not None:
        on = on.reshape(on.shape[:axes + 1])
    starts = ptr.partial(axes)
    starts = expand(starts.reshape(starts.shape[:axes + 1]), (programs,) + shape[:axes])
    offsets = (starts.reshape(-1) if on is None else starts[expand(on, starts.shape)]) - origin
    reach = (width - 1) * step
    lo, hi = int(np.minimum.reduce(offsets)), int(np.maximum.reduce(offsets)) + reach
    if lo < 0 or hi >= size:
        return None
    geometry = _Geometry(axes, run, width, lo, hi, starts=offsets, step=step)
    if store and not geometry.distinct():
        return None
    if offsets.size > 1:
        positions = None if on is None else np.flatnonzero(expand(on, starts.shape))
        pieces = _pieces(offsets, positions, width, step, offsets.size * width)
        if pieces is not None:
            return _Geometry(axes, run, width, lo, hi, pieces=pieces, starts=offsets, step=step)
    return geometry


def _view(base, steps: list[int], programs: int, shape: tuple[int, ...], length: int, size: int,
          origin: int, store: bool) -> _Geometry | None:
    """The whole box of the access as one strided view of the buffer, when the programs' bases are
    equally spaced and every lane is in bounds (and, for a store, no two lanes share an address)."""
    if type(base) is int:
        first, gap = base, 0
    else:
        first, gap = int(base[0]), int(base[1]) - int(base[0])
        if programs > 2 and (int(base[-1]) - first != gap * (programs - 1) or not (base[1:] - base[:-1] == gap).all()):
            return None
    extents = (programs,) + shape[:-1] + (length,)
    strides = [gap] + steps
    lo = hi = first - origin
    for e, s in zip(extents, strides):
        lo, hi = lo + min(0, s * (e - 1)), hi + max(0, s * (e - 1))
    if lo < 0 or hi >= size:
        return None
    if store and not _disjoint(extents, strides):
        return None
    return _Geometry(len(shape) - 1, shape[-1], length, lo, hi, view=(first - origin, extents, tuple(strides)))


def _disjoint(extents, steps) -> bool:
    """Whether a strided box addresses every lane at a distinct element (a sufficient test: each
    step, by size, is beyond the reach of the smaller ones)."""
    reach = 0
    for s, e in sorted((abs(s), e) for s, e in zip(steps, extents) if e > 1):
        if s <= reach:
            return False
        reach += s * (e - 1)
    return True
