"""``backend="sim"``: run kernels as generated Ascend C on the CPU simulator (:mod:`ascdsl.sim`).

A launch specialises the kernel, runs the passes, renders a one-variant direct-launch kernel file,
writes it under the simulator's cache (named by its content hash, so g++ builds it once) and runs
``blockDim = min(grid product, vector cores)`` blocks; results land in the arrays in place.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache

import numpy as np

from ..dtypes import DType
from ..ir import Kernel
from ..jit import register_backend
from ..platforms import get_platform
from . import tiling
from .ascendc import kernel_source

SYMBOL = "ascdsl_kernel"


@lru_cache(maxsize=256)
def _compiled(kernel: Kernel, platform: str) -> tuple[str, tiling.TilingLayout]:
    """The kernel file for ``kernel`` on ``platform`` and its tiling layout."""
    from ..sim.build import cache_dir

    layout = tiling.layout("KernelTilingData", [kernel])
    source = kernel_source(SYMBOL, tiling.variants([kernel]), layout, platform)
    path = cache_dir() / f"gen-{hashlib.sha256(source.encode()).hexdigest()[:24]}.cpp"
    if not path.exists():
        path.write_text(source)
    return str(path), layout


def run(kernel: Kernel, args: list, grid: tuple[int, int, int], platform: str) -> None:
    """The ``sim`` backend runner (see :func:`ascdsl.jit.register_backend`)."""
    from .. import sim

    path, layout = _compiled(kernel, platform)
    fields = {"tilingKey": 1, "grid0": grid[0], "grid1": grid[1], "grid2": grid[2]}
    arrays = []
    for name, param, value in zip(kernel.param_names, kernel.params, args):
        if isinstance(param.type.dtype, DType):
            fields[name] = value
        else:
            arrays.append(value)
    programs = grid[0] * grid[1] * grid[2]
    block_dim = max(1, min(programs, get_platform(platform).vector_core_count))
    sim.run_kernel(path, SYMBOL, [*arrays, None, layout.pack(fields)], block_dim, platform, tiling_key=1)


register_backend("sim", run)
