"""Host tiling of the ``AscendC::SoftmaxGrad`` high-level API, written from its documented algorithm.

Mirrors ``SoftMaxGradTilingFunc``, ``GetSoftMaxGradMaxTmpSize`` and ``GetSoftMaxGradMinTmpSize``
(reference §2.17, the A2/A3 branch). For a ``[M, K]`` input (``M`` the product of the non-last
dims, ``K`` the last, 32-byte aligned) with ``E = 32 / dtype_size`` elements per block, one row of
the API's computation needs this many float32 words of temporary space::

    half:  2E + 3K + 64            float: isFront ? E + K + 64 : 2E + K + 64

The minimum temporary buffer is one row of it, the maximum ``M`` rows. Given a work buffer of
``W`` words, ``splitM`` is ``min(W / row, M)``, rounded down to a multiple of 8 when ``8 < splitM <
M``; when ``splitM > 8``, ``M % 8 == 0`` and ``K % 64 == 0`` (the basic-block branch) it becomes the
largest multiple of 8 that divides ``M`` and is then halved while ``splitM * K >= 64 * 256``.
"""
from __future__ import annotations

from dataclasses import astuple, dataclass, fields

import numpy as np

from . import dtypes
from .errors import InputValueError

BASIC_BLOCK_ELEMENTS = 64 * 256


@dataclass(frozen=True)
class SoftMaxTiling:
    """The kernel-side ``SoftMaxTiling`` struct: 16 ``uint32_t`` fields, in declaration order."""

    srcM: int
    srcK: int
    srcSize: int
    outMaxM: int
    outMaxK: int
    outMaxSize: int
    splitM: int
    splitK: int
    splitSize: int
    reduceM: int
    reduceK: int
    reduceSize: int
    rangeM: int
    tailM: int
    tailSplitSize: int
    tailReduceSize: int

    def words(self) -> np.ndarray:
        """The struct as 16 little-endian ``uint32`` values (what ``GET_TILING_DATA`` copies)."""
        return np.array(astuple(self), np.uint32)


FIELDS = tuple(f.name for f in fields(SoftMaxTiling))


def _dtype_size(dtype) -> int:
    if isinstance(dtype, int):
        return dtype
    if isinstance(dtype, str):
        return dtypes.lookup(dtype).itemsize
    return dtype.itemsize if isinstance(dtype, dtypes.DType) else np.dtype(dtype).itemsize


def _m_k(shape) -> tuple[int, int]:
    shape = tuple(int(s) for s in shape)
    if not shape:
        raise InputValueError("the SoftmaxGrad API needs a shape of rank >= 1")
    return int(np.prod(shape[:-1], dtype=np.int64)), shape[-1]


def row_words(k: int, dtype_size: int, is_front: bool) -> int:
    """Temporary float32 words one row of ``k`` elements needs."""
    e = 32 // dtype_size
    if dtype_size == 2:
        return 2 * e + 3 * k + 64
    return (e if is_front else 2 * e) + k + 64


def softmax_grad_tmp_size(shape, dtype, is_front: bool = False) -> tuple[int, int]:
    """``(min_bytes, max_bytes)`` of the API's temporary buffer for ``shape`` (like
    ``GetSoftMaxGradMinTmpSize`` / ``GetSoftMaxGradMaxTmpSize``)."""
    m, k = _m_k(shape)
    row = 4 * row_words(k, _dtype_size(dtype), is_front)
    return row, m * row


def softmax_grad_tiling(shape, dtype, work_bytes: int, is_front: bool = False) -> SoftMaxTiling:
    """``SoftMaxGradTilingFunc``: the tiling for ``shape`` with ``work_bytes`` of temporary buffer."""
    m, k = _m_k(shape)
    size = _dtype_size(dtype)
    e = 32 // size
    row = row_words(k, size, is_front)
    if work_bytes < 4 * row:
        raise InputValueError(f"a SoftmaxGrad work buffer of {work_bytes} B is below the minimum "
                              f"{4 * row} B for rows of {k} elements")
    base = min(work_bytes // 4 // row, m)
    if 8 < base < m:
        base = base // 8 * 8
    if base > 8 and m % 8 == 0 and k % 64 == 0:
        base = base // 8 * 8
        while m % base:
            base -= 8
        while base > 1 and base * k >= BASIC_BLOCK_ELEMENTS:
            base //= 2
    tail = m % base if base else 0
    return SoftMaxTiling(
        srcM=m, srcK=k, srcSize=m * k, outMaxM=m, outMaxK=e, outMaxSize=m * e,
        splitM=base, splitK=k, splitSize=base * k, reduceM=base, reduceK=e, reduceSize=base * e,
        rangeM=m // base if base else 0, tailM=tail, tailSplitSize=tail * k, tailReduceSize=tail * e)
