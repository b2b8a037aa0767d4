"""The FRACTAL_NZ layout of the softmax APIs: conversions to and from ND (row-major).

An ``[..., m, k]`` matrix is zero-padded to ``[..., 16 * ceil(m / 16), 16 * ceil(k / 16)]``, cut into
16 x 16 fractals, and stored fractal column by fractal column: shape
``[..., ceil(k / 16), 16 * ceil(m / 16), 16]``, where element ``(i, j)`` of the padded matrix lives at
``[..., j // 16, i, j % 16]``. The fractal is 16 x 16 for every dtype (reference §5).
"""
from __future__ import annotations

import numpy as np

from .errors import InputValueError

FRACTAL = 16


def nz_shape(m: int, k: int) -> tuple[int, int, int]:
    """The last three dims of the NZ form of an ``m x k`` matrix."""
    return -(-k // FRACTAL), FRACTAL * -(-m // FRACTAL), FRACTAL


def nd_to_nz(x) -> np.ndarray:
    """``x`` of shape ``[..., m, k]`` (rank >= 2) in NZ layout, zero-padded (a new array)."""
    x = np.asarray(x)
    if x.ndim < 2:
        raise InputValueError(f"nd_to_nz needs a matrix of rank >= 2, got shape {x.shape}")
    *batch, m, k = x.shape
    k1, mp, _ = nz_shape(m, k)
    padded = np.zeros((*batch, mp, k1 * FRACTAL), x.dtype)
    padded[..., :m, :k] = x
    nz = padded.reshape(*batch, mp, k1, FRACTAL).swapaxes(-3, -2)
    return np.ascontiguousarray(nz)


def nz_to_nd(x, m: int, k: int) -> np.ndarray:
    """The ``[..., m, k]`` matrix stored in ``x`` of NZ shape ``[..., ceil(k/16), 16*ceil(m/16), 16]``."""
    x = np.asarray(x)
    if x.ndim < 3 or x.shape[-3:] != nz_shape(m, k):
        raise InputValueError(f"an NZ tensor of an {m} x {k} matrix has shape [..., "
                              f"{', '.join(map(str, nz_shape(m, k)))}], got {x.shape}")
    *batch, k1, mp, _ = x.shape
    nd = x.swapaxes(-3, -2).reshape(*batch, mp, k1 * FRACTAL)
    return np.ascontiguousarray(nd[..., :m, :k])
