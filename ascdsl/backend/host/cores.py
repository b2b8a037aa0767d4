"""Which cores a kernel runs on, and what its launch needs from the host: CANN's kernel type, the mode of a
CPU-debug launch, how many blocks a launch of ``programs`` runs, and the GM workspace (issue 26).

* a vector kernel runs on the AI vector cores (``KERNEL_TYPE_AIV_ONLY``): ``blockDim = min(programs, AIVs)``;
* a pure-cube kernel (:mod:`.cube`) on the AI cube cores (``KERNEL_TYPE_AIC_ONLY``): ``blockDim = min(programs,
  AICs)``, each block looping over its programs, so a program's copies run during the last one's Fixpipe;
* a MIX kernel (:mod:`.mix`) on AIC + 2 AIV groups (``KERNEL_TYPE_MIX_AIC_1_2``): ``blockDim = min(programs,
  AICs)``, and a GM workspace the tiles go through: ``programs * BLOCK_M * BLOCK_N`` float32 products, or the
  operands the vector cores compute where their work comes before the product (which a build refuses).

The ``sim`` runner, the build's verification, the Python tiling contract and the generated host code (tiling
function, ``main.cpp``, op_host, op_kernel) all read these rows, so they launch a kernel alike.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...errors import CompilationError
from ...ir import Kernel, Op, walk
from ...platforms import Platform
from ..cube import cube, mix



@dataclass(frozen=True)
class Cores:
    """The cores of one kind of kernel and how a launch of it is sized."""

    kernel_type: str  # CANN's KERNEL_TYPE_* (KERNEL_TASK_TYPE of the op kernel's tiling key)
    mode: str  # tikicpulib's KernelMode of a CPU-debug launch (CANN 8.1's stub_def.h)
    limit: str  # the Platform attribute bounding blockDim
    host_limit: str  # the same bound in generated host code: the member of ascdsl_host::Platform
    what: str  # for comments and the report

    def block_dim(self, platform: Platform, programs: int) -> int:
        """The blocks of a launch of ``programs`` (0 for none: the generated tiling function's blockDim)."""
        return min(programs, getattr(platform, self.limit))


VECTOR = Cores("KERNEL_TYPE_AIV_ONLY", "AIV_MODE", "vector_core_count", "vectorCoreNum",
               "the vector cores")
CUBE = Cores("KERNEL_TYPE_AIC_ONLY", "AIC_MODE", "ai_core_count", "aiCoreNum",
            "the cube cores, a block a core looping over its programs")
MIX = Cores("KERNEL_TYPE_MIX_AIC_1_2", "MIX_MODE", "ai_core_count", "aiCoreNum",
            "a cube core and its two vector cores per block")


BY_TYPE = {c.kernel_type: c for c in (VECTOR, CUBE, MIX)}
"""Each row by its kernel type (what the manifest records)."""


def of(kernel: Kernel, platform: Platform) -> Cores:
    """The cores ``kernel`` (a tile-IR specialisation) runs on (the cube lowering's located error for a product on
    a platform whose cube and vector units are not separate cores, :func:`.cube.passed`)."""
    if not cube.is_cube(kernel):
        return VECTOR
    return MIX if mix.is_mix(kernel, platform) else CUBE


def workspace_bytes(kernel: Kernel, platform: Platform, programs: int) -> int:
    """The GM workspace (bytes) a launch of ``kernel`` over ``programs`` needs: a MIX kernel's tiles (a located
    error past int32 tile offsets, :func:`.mix.workspace_elements`), else none."""
    return 4 * mix.workspace_elements(kernel, platform, programs) if of(kernel, platform) is MIX else 0


RESIDENT = ("{programs} programs with a grid barrier (sync_block_all) on {cores} vector cores: the programs past the "
            "cores would wait for a core the ones at the barrier never free")
"""The error of a launch of a kernel with a grid barrier over more programs than vector cores (the generated
tiling function's too)."""


def barrier(kernel: Kernel):
    """The first grid barrier (``sync_block_all``) of ``kernel``, or None."""
    return next((i for i in walk(kernel.body) if i.op is Op.SYNC_ALL), None)


def check_resident(kernel: Kernel, platform: Platform, programs: int) -> None:
    """A located error at the grid barrier of ``kernel`` for a launch of more ``programs`` than the platform's
    vector cores: on the device all its programs must run at once, a block each (a kernel with a barrier is
    neither batched nor made persistent)."""
    at = barrier(kernel)
    if at is not None and programs > platform.vector_core_count:
        raise CompilationError(at.loc, RESIDENT.format(programs=programs, cores=platform.vector_core_count),
                               hint=f"launch at most {platform.vector_core_count} programs on {platform.name} "
                                    "(give each program a larger part of the work)")


def max_programs(kernel: Kernel, platform: Platform) -> int:
    """The most programs a launch of MIX kernel ``kernel`` may run (its workspace's tile offsets are int32)."""
    return (mix.INT32_MAX + 1) // mix.split(kernel, platform).tile_elements


__all__ = ["BY_TYPE", "CUBE", "Cores", "MIX", "RESIDENT", "VECTOR", "barrier", "check_resident", "max_programs", "of",
           "workspace_bytes"]
