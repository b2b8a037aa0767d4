"""The cube rows of ``ascdsl bench`` (also ``python -m ascdsl.bench_cube``): the matmul of Triton's tutorial
(:func:`ascdsl.bench_kernels.matmul_kernel`, ``tl.dot`` on the AI cube cores) on the simulator, its estimate
against the floor (the larger of the bytes at HBM bandwidth, each byte read once, and the multiply-adds at
the cube's peak), every result checked against the interpreter's within the output dtype's tolerance.

Columns: ``est us`` and ``floor us`` as in the seed-op table; ``pipe`` the busiest pipe of the slowest
core; ``M busy`` the cube pipe's busy share of that core's span; ``L2 reads`` the share of GM reads the
model's L2 served (bytes the launch had read or written before).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from . import dtypes, sim
from .bench_kernels import matmul_kernel
from .language import cdiv
from .platforms import DEFAULT_PLATFORM, get_platform
from .sim import cost
from .testing import assert_close


@dataclass(frozen=True)
class MatmulCase:
    """``C[M, N] = A[M, K] @ B[K, N]`` in ``dtype`` (row-major), blocks ``BLOCK_SIZE_M/N/K`` of the kernel."""

    m: int
    n: int
    k: int
    dtype: str
    block: tuple[int, int, int]
    group: int = 8

    @property
    def label(self) -> str:
        return f"{self.m}x{self.n}x{self.k}"

    def grid(self) -> tuple[int]:
        bm, bn, _ = self.block
        return (cdiv(self.m, bm) * cdiv(self.n, bn),)


CASES = (
    MatmulCase(4096, 4096, 4096, "float16", (128, 256, 64)),
    MatmulCase(2048, 2048, 2048, "bfloat16", (128, 256, 64)),
    MatmulCase(1000, 3000, 700, "float16", (128, 256, 64)),  # no size a multiple of a block
    MatmulCase(8192, 640, 320, "float16", (128, 128, 64)),  # tall and skinny
)
QUICK = (MatmulCase(200, 300, 150, "float16", (64, 128, 64)),)


def inputs(case: MatmulCase, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``A`` and ``B`` with entries in [-1, 1)."""
    rng = np.random.default_rng(seed)
    dt = dtypes.lookup(case.dtype).np
    return ((rng.random((case.m, case.k), np.float32) * 2 - 1).astype(dt),
            (rng.random((case.k, case.n), np.float32) * 2 - 1).astype(dt))


def launch(case: MatmulCase, a: np.ndarray, b: np.ndarray, backend: str, platform: str) -> np.ndarray:
    """``C`` of one launch of the tutorial kernel on ``backend``."""
    c = np.zeros((case.m, case.n), a.dtype)
    bm, bn, bk = case.block
    strides = [s // x.itemsize for x in (a, b, c) for s in x.strides]
    matmul_kernel[case.grid()](a, b, c, case.m, case.n, case.k, *strides, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn,
                               BLOCK_SIZE_K=bk, GROUP_SIZE_M=case.group, backend=backend, platform=platform)
    return c


@dataclass(frozen=True)
class Row:
    case: MatmulCase
    stats: sim.SimStats
    floor_us: float

    def cells(self) -> tuple[str, ...]:
        s, c = self.stats, self.case
        busy = s.pipe_busy.get("M", 0) / s.est_cycles if s.est_cycles else 0.0
        return ("matmul_kernel", c.label, c.dtype, "x".join(map(str, c.block)), f"{s.est_us:.4g}",
                f"{self.floor_us:.4g}", f"{s.limit_ratio:.2f}", s.critical_pipe, f"{busy:.0%}",
                f"{s.l2_read_bytes / s.gm_read_bytes:.0%}" if s.gm_read_bytes else "-")


HEADER = ("kernel", "M x N x K", "dtype", "blocks", "est us", "floor us", "est/floor", "pipe", "M busy", "L2 reads")


def measure(case: MatmulCase, platform: str = DEFAULT_PLATFORM) -> Row:
    """One case on the simulator, its result checked against the interpreter's."""
    a, b = inputs(case)
    with sim.record() as runs:
        got = launch(case, a, b, "sim", platform)
    want = launch(case, a, b, "interpreter", platform)
    assert_close(got, want, dtypes.lookup(case.dtype), err_msg=f"matmul {case.label} {case.dtype}")
    (run,) = runs
    clock = cost.constants(get_platform(platform)).clock_mhz.value
    return Row(case, run.stats, run.stats.floor_cycles / clock)


def report(platform: str = DEFAULT_PLATFORM, out=None, quick: bool = False) -> list[Row]:
    """Print the cube table under its title (what ``ascdsl bench`` prints) and return its rows."""
    out = out or sys.stdout
    print("\ncube kernels: the tutorial matmul (tl.dot on the AI cube cores) on the simulator, results checked "
          "against the interpreter:", file=out)
    print("| " + " | ".join(HEADER) + " |\n" + "|---" * len(HEADER) + "|", file=out, flush=True)
    rows = []
    for case in QUICK if quick else CASES:
        rows.append(measure(case, platform))
        print("| " + " | ".join(rows[-1].cells()) + " |", file=out, flush=True)
    return rows


if __name__ == "__main__":
    report(quick="--quick" in sys.argv[1:])
