"""NumPy models shared by the simulator tests: the pairwise tree sum and the host SoftmaxGrad tiling."""
from __future__ import annotations

import numpy as np


def tree(values: np.ndarray):
    """Pairwise tree in lane order: (0+1), (2+3), ... level by level, in the values' dtype."""
    v = list(values)
    while len(v) > 1:
        v = [v[i] + v[i + 1] for i in range(0, len(v) - 1, 2)] + ([v[-1]] if len(v) % 2 else [])
    return v[0]


FIELDS = ["srcM", "srcK", "srcSize", "outMaxM", "outMaxK", "outMaxSize", "splitM", "splitK", "splitSize", "reduceM", "reduceK", "reduceSize", "rangeM", "tailM", "tailSplitSize", "tailReduceSize"]


def row_words(k: int, dtype_size: int, front: bool) -> int:
    e = 32 // dtype_size
    return 2 * e + 3 * k + 64 if dtype_size == 2 else (e if front else 2 * e) + k + 64


def softmax_grad_tiling(m: int, k: int, dtype_size: int, work_bytes: int, front: bool = False) -> dict[str, int]:
    e = 32 // dtype_size
    base = min(work_bytes // 4 // row_words(k, dtype_size, front), m)
    if 8 < base < m:
        base = base // 8 * 8
    if base > 8 and m % 8 == 0 and k % 64 == 0:
        base = base // 8 * 8
        while m % base:
            base -= 8
        while base * k >= 64 * 256:
            base //= 2
    tail = m % base
    return {
        "srcM": m, "srcK": k, "srcSize": m * k, "outMaxM": m, "outMaxK": e, "outMaxSize": m * e,
        "splitM": base, "splitK": k, "splitSize": base * k, "reduceM": base, "reduceK": e, "reduceSize": base * e,
        "rangeM": m // base, "tailM": tail, "tailSplitSize": tail * k, "tailReduceSize": tail * e,
    }


def tiling_bytes(m: int, k: int, tmp_bytes: int, front: bool, softmax: dict[str, int]) -> np.ndarray:
    """SoftmaxGradTilingData of kernels/softmax.cpp as a uint8 array."""
    words = [m, k, tmp_bytes, int(front)] + [softmax[f] for f in FIELDS]
    return np.array(words, np.uint32).view(np.uint8).copy()
