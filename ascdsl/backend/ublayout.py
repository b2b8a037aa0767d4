"""How tiles lie in UB: row pitches of 2-D tiles and the elements a tile occupies.

A 2-D ``[M, N]`` tile (``N > 1``) is ``M`` rows of ``pitch`` elements, ``N`` rounded up to one
block (``platform.block_bytes``) of the kernel's narrowest 2-D tile dtype, so a Cast keeps every
element in place; ``[M, 1]`` is stored as ``[M]`` and ``[1, N]`` as ``[N]``.
"""
from __future__ import annotations

from ..ir.core import Kernel, Value, walk
from ..platforms import Platform


def tile_align(kernel: Kernel, platform: Platform) -> int:
    """Row pitches of 2-D tiles are multiples of this many elements."""
    sizes = [v.type.dtype.itemsize for i in walk(kernel.body) for v in i.results
             if len(v.type.shape) == 2 and v.type.dtype.itemsize >= 2]
    return platform.block_bytes // min(sizes, default=4)


def is_2d(shape: tuple[int, ...]) -> bool:
    return len(shape) == 2 and shape[1] > 1


def pitch(shape: tuple[int, ...], align: int) -> int:
    """Elements per UB row of a tile of ``shape`` (its numel when it is stored as one row)."""
    if is_2d(shape):
        return -(-shape[1] // align) * align
    return max(1, numel(shape))


def contiguous(shape: tuple[int, ...], align: int) -> bool:
    """A tile of ``shape`` occupies its elements in row-major order without gaps."""
    return not is_2d(shape) or shape[1] % align == 0


def padded_numel(shape: tuple[int, ...], align: int) -> int:
    """Elements a tile occupies in UB (rows times pitch)."""
    return shape[0] * pitch(shape, align) if is_2d(shape) else numel(shape)


def numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def count(v: Value, align: int) -> int:
    return padded_numel(v.type.shape, align)
