"""NumPy models shared by the simulator tests: the pairwise tree sum of the reduction APIs."""
from __future__ import annotations

import numpy as np


def tree(values: np.ndarray):
    """Pairwise tree in lane order: (0+1), (2+3), ... level by level, in the values' dtype."""
    v = list(values)
    while len(v) > 1:
        v = [v[i] + v[i + 1] for i in range(0, len(v) - 1, 2)] + ([v[-1]] if len(v) % 2 else [])
    return v[0]
