"""CPU simulator for Ascend C: compile kernels with g++ against our header-only ``kernel_operator.h``
and run them block by block, with hardware checks, hazard detection and counters::

    import numpy as np, ascdsl.sim
    res = ascdsl.sim.run_kernel("add.cpp", "add_custom", [x, y, z, np.uint32(n)], block_dim=40)
    res.stats.gm_read_bytes

Checks raise :class:`SimError` ("<API>: block <n>: <reason>"): UB size and buffer limits, 32-byte
alignment, DataCopy/DataCopyPad units and ranges, repeat limits, queue misuse, GM bounds and
cross-block GM writes, bf16 arithmetic and missing casts, forbidden src/dst overlap, work and temporary
buffer minimums, and missing synchronisation between the MTE2, V, MTE3 and S pipes.

Each run's stats carry the cost model's estimate (``est_cycles``, ``est_us``, ``floor_cycles``,
``pipe_busy``, ``critical_pipe``): see :mod:`ascdsl.sim.cost` for the model and its constants.

``run_main`` builds and runs a CANN CPU-debug ``main.cpp`` (our ``tikicpulib.h``); ``record`` collects
results; ``build_stats`` reports g++ builds; ``check_front_end`` parses generated code with other compilers
(clang++) with warnings on; ``INCLUDE_DIR`` is the header directory (``-I`` it to
compile a kernel by hand).
"""
from .build import INCLUDE_DIR, BuildStats, build_stats, check_front_end
from .errors import SimArgumentError, SimCompileError, SimError
from .main import MainResult, run_main
from .runner import run_kernel
from .signature import Entry, Param, gm_entry
from .stats import SimResult, SimStats, record

__all__ = [
    "INCLUDE_DIR",
    "BuildStats", "Entry", "MainResult", "Param", "SimArgumentError", "SimCompileError", "SimError", "SimResult",
    "SimStats", "build_stats", "check_front_end", "gm_entry", "record", "run_kernel", "run_main",
]
