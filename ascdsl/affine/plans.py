"""Planning an access: the lanes a mask enables (:func:`mask_parts`), where an affine pointer reaches in its
buffer (:func:`plan`: a view, pieces or runs), and the plans kept for reuse (:class:`Plans` within a launch,
:data:`MEMO` across launches)."""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .access import Access
from .tiles import Affine, Array, array, expand, strided


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
    d = array(a) - array(b)
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
