"""How tiles lie in UB: row pitches of 2-D and 3-D tiles and the elements a tile occupies.

A tile whose last axis ``N`` is longer than 1 is stored as rows of ``N`` elements, one row per index
of its other axes (``[M, N]``: ``M`` rows; ``[A, B, C]``: ``A * B`` rows, so it lies exactly as
``[A * B, C]``), each row ``pitch`` elements: ``N`` rounded up to one block
(``platform.block_bytes``) of the kernel's narrowest 2-D or 3-D tile dtype (bool masks aside), so a
Cast keeps every element in place and every row of an 8-bit tile starts on a block. A tile whose last axis is 1 is stored as its elements in order: ``[M, 1]`` as
``[M]``, ``[A, B, 1]`` as ``[A * B]``; ``[1, N]`` is one row.
"""
from __future__ import annotations

from ... import dtypes
from ...ir.core import Kernel, Value, walk
from ...ir.symbol import Differs, Undecided, equal, multiple, value_at
from ...platforms import Platform


def tile_align(kernel: Kernel, platform: Platform) -> int:
    """Row pitches of 2-D and 3-D tiles are multiples of this many elements."""
    sizes = [v.type.dtype.itemsize for i in walk(kernel.body) for v in i.results
             if len(v.type.shape) >= 2 and v.type.dtype != dtypes.bool_]  # bool tiles are bit masks
    return platform.block_bytes // min(sizes, default=4)


def has_rows(shape: tuple[int, ...]) -> bool:
    """A tile of ``shape`` is stored as padded rows (its last axis is longer than 1)."""
    return len(shape) >= 2 and shape[-1] > 1


def pitch(shape: tuple[int, ...], align: int) -> int:
    """Elements per UB row of a tile of ``shape`` (its numel when it is stored as one row)."""
    if has_rows(shape):
        return -(-shape[-1] // align) * align
    n = numel(shape)
    return n if n >= 1 else 1  # not max(1, n), which asks n > 1: undecided where a symbol's low is 1


def rows(shape: tuple[int, ...]) -> int:
    """The UB rows of a tile of ``shape`` (1 for a tile stored as its elements in order)."""
    return numel(shape[:-1]) if has_rows(shape) else 1


def contiguous(shape: tuple[int, ...], align: int) -> bool:
    """A tile of ``shape`` occupies its elements in row-major order without gaps."""
    return not has_rows(shape) or multiple(shape[-1], align)


def same_layout(a: tuple[int, ...], b: tuple[int, ...], align: int) -> bool:
    """Tiles of shapes ``a`` and ``b`` (of one numel) put every element at the same UB offset: a reshape between
    them is free, else it moves the elements (a ``Gather``), a kernel of another form. Where the symbols' domains
    leave it open (``[ROWS * K] -> [ROWS, K]`` for ``K`` of multiples of less than ``align``), :class:`.Differs`
    with the answer at each point (1 or 0), so the lift can tell that samples there differ in form."""
    return bool(_held(_same_layout, align, a, b))


def _same_layout(a: tuple, b: tuple, align: int) -> bool:
    both_rows = has_rows(a) and has_rows(b) and equal(a[-1], b[-1])
    return both_rows or contiguous(a, align) and contiguous(b, align)


def strides(shape: tuple[int, ...], align: int) -> tuple[int, ...]:
    """The UB offset (in elements) between neighbours along each axis of a tile of ``shape``."""
    dims = (*shape[:-1], pitch(shape, align)) if has_rows(shape) else shape
    out, step = [], 1
    for d in reversed(dims):
        out.append(step)
        step *= d
    return tuple(reversed(out))


def padded_numel(shape: tuple[int, ...], align: int) -> int:
    """Elements a tile occupies in UB (rows times pitch)."""
    return rows(shape) * pitch(shape, align)


def numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def count(v: Value, align: int) -> int:
    return padded_numel(v.type.shape, align)


def held_count(v: Value, align: int) -> int:
    """:func:`count` for lanes the kernel holds (an API call's count of ``rows * pitch``), else as
    :func:`held_pitch`."""
    return _held(padded_numel, align, v.type.shape)


def held_pitch(v: Value, align: int) -> int:
    """:func:`pitch` for a pitch the kernel holds (a row offset ``r * pitch``): where the symbols' domains leave it
    inexact (a last axis of multiples of less than ``align``), :class:`.Differs` with its value at each point,
    so the lift can tell that samples there fit no polynomial."""
    return _held(pitch, align, v.type.shape)


def _held(of, align: int, *shapes: tuple) -> int:
    """``of(*shapes, align)``; where the symbols' domains leave it open, :class:`.Differs` with its value at each
    point."""
    try:
        return of(*shapes, align)
    except Undecided as e:
        raise Differs(str(e), lambda values: int(of(*(tuple(value_at(s, values) for s in shape) for shape in shapes),
                                                   align))) from e
