"""Host tiling of the ``AscendC::SoftmaxGrad`` high-level API, from Python.

CANN computes it on the host with ``GetSoftMaxGradMinTmpSize`` / ``GetSoftMaxGradMaxTmpSize`` and
``SoftMaxGradTilingFunc`` (``lib/activation/softmax_tiling.h``). The simulator provides those functions
(``ascdsl/sim/include/lib/activation/softmax_tiling.h``, written from the documented algorithm), and
this module calls them, and host code generated around them (:func:`host_library`), through ctypes:
the generated host code and Python share one implementation.

For a ``[M, K]`` input (``M`` the product of the non-last dims, ``K`` the last, 32-byte aligned) with
``E = 32 / dtype_size`` elements per block, one row needs this many float32 words of temporary space::

    half:  2E + 3K + 64            float: isFront ? E + K + 64 : 2E + K + 64

The minimum temporary buffer is one row of it, the maximum ``M`` rows; the tiling splits ``M`` into
``rangeM`` chunks of ``splitM`` rows and a tail of ``tailM``.
"""
from __future__ import annotations

import ctypes
import functools
from collections.abc import Sequence
from dataclasses import astuple, dataclass, fields
from pathlib import Path

import numpy as np

from .. import dtypes
from ..errors import InputValueError
from .build import build_library


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
        """The struct as 16 little-endian ``uint32`` values (what the kernel copies in)."""
        return np.array(astuple(self), np.uint32)


FIELDS = tuple(f.name for f in fields(SoftMaxTiling))


def host_library(sources: Sequence[Path], wrapper: str = "") -> ctypes.CDLL:
    """Host C++ ``sources`` (and ``wrapper`` text) built against the simulator's headers (which provide
    CANN's host tiling functions) into a shared library, loaded; builds are cached."""
    return _load(build_library(lambda names: wrapper + "".join(f'#include "{n}"\n' for n in names), list(sources)))


@functools.cache
def _load(path: Path) -> ctypes.CDLL:
    return ctypes.CDLL(str(path))


@functools.cache
def _abi() -> ctypes.CDLL:
    lib = host_library([], '#include "ascdsl_sim/softmax_tiling_abi.h"\n')
    dims = ctypes.POINTER(ctypes.c_int64)
    lib.ascdsl_softmax_grad_tmp_size.restype = ctypes.c_uint32
    lib.ascdsl_softmax_grad_tmp_size.argtypes = [dims, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_bool, ctypes.c_bool]
    lib.ascdsl_softmax_grad_tiling.restype = None
    lib.ascdsl_softmax_grad_tiling.argtypes = [dims, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_bool,
                                               ctypes.POINTER(ctypes.c_uint32)]
    return lib


def _dtype_size(dtype) -> int:
    if isinstance(dtype, int):
        return dtype
    if isinstance(dtype, str):
        return dtypes.lookup(dtype).itemsize
    return dtype.itemsize if isinstance(dtype, dtypes.DType) else np.dtype(dtype).itemsize


def _dims(shape) -> tuple[ctypes.Array, int]:
    shape = tuple(int(s) for s in shape)
    if not shape:
        raise InputValueError("the SoftmaxGrad API needs a shape of rank >= 1")
    return (ctypes.c_int64 * len(shape))(*shape), len(shape)


def softmax_grad_tmp_size(shape, dtype, is_front: bool = False) -> tuple[int, int]:
    """``(min_bytes, max_bytes)``: ``GetSoftMaxGradMinTmpSize`` and ``GetSoftMaxGradMaxTmpSize``."""
    dims, n = _dims(shape)
    size = _dtype_size(dtype)
    return tuple(int(_abi().ascdsl_softmax_grad_tmp_size(dims, n, size, is_front, m)) for m in (False, True))


def row_words(k: int, dtype_size: int, is_front: bool) -> int:
    """Temporary float32 words one row of ``k`` elements needs."""
    return softmax_grad_tmp_size((1, k), dtype_size, is_front)[0] // 4


def softmax_grad_tiling(shape, dtype, work_bytes: int, is_front: bool = False) -> SoftMaxTiling:
    """``SoftMaxGradTilingFunc``: the tiling for ``shape`` with ``work_bytes`` of temporary buffer."""
    dims, n = _dims(shape)
    words = (ctypes.c_uint32 * 16)()
    _abi().ascdsl_softmax_grad_tiling(dims, n, _dtype_size(dtype), work_bytes, is_front, words)
    tiling = SoftMaxTiling(*map(int, words))
    if tiling.splitM == 0:
        minimum = softmax_grad_tmp_size(shape, dtype, is_front)[0]
        raise InputValueError(f"a SoftmaxGrad work buffer of {work_bytes} B is below the minimum "
                              f"{minimum} B for rows of {tiling.srcK} elements")
    return tiling
