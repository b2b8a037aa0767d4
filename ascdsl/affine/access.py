"""How a load or store reaches the lanes of a tile in its buffer (:class:`Access`: one strided view, a few
strided pieces, or runs gathered through an index), and tiles loaded lazily as those pieces (:class:`Loaded`)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .tiles import Array, dense, expand, index


@dataclass(frozen=True)
class Access:
    """How a load or store reaches the enabled lanes of a tile of ``shape`` in ``programs`` programs.

    The tile is seen as runs: its first ``axes`` axes index the runs, the others (folded where they
    are contiguous in memory) the ``run`` lanes of each, of which the leading ``length`` are enabled
    in the runs ``on`` selects (compact over ``(programs, *shape[:axes])``; None: all). Either
    ``view`` is the whole ``(programs, *shape[:-1], length)`` box as a strided view of the buffer
    (then ``axes`` is ``len(shape) - 1``), or ``pieces`` are the enabled runs as a few strided views
    (:func:`.plans._pieces`; what the uneven shares of :func:`ascdsl.lib.core_span` make), or
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
