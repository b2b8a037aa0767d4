"""The cube rows of ``ascdsl bench`` (also ``python -m ascdsl.bench_cube``): the matmul of Triton's tutorial
(:func:`ascdsl.bench_kernels.matmul_kernel`, ``tl.dot`` on the AI cube cores) and attention forward
(:func:`ascdsl.bench_kernels.attention_fwd`, a MIX kernel whose cores take turns at each step) on the simulator,
its estimate against the floor (the larger of the bytes at HBM bandwidth, each byte read once, and the
multiply-adds at the cube's peak), every result checked against the interpreter's within the output dtype's
tolerance.

Columns: ``est us`` and ``floor us`` as in the seed-op table; ``pipe`` the busiest pipe of the slowest
core; ``M busy`` the cube pipe's busy share of that core's span; ``L2 reads`` the share of GM reads the
model's L2 served (bytes the launch had read or written before); ``HBM MiB`` the GM bytes the cube core that read
the most from HBM read from it, and the mean over the cores (the blocks that read a byte at the same time share its
read from HBM: docs/performance.md, "The first reads shared by the blocks that run together").
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import numpy as np

from . import dtypes, sim
from .bench_kernels import attention_fwd, matmul_kernel
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

    kernel = "matmul_kernel"

    def grid(self) -> tuple[int]:
        bm, bn, _ = self.block
        return (cdiv(self.m, bm) * cdiv(self.n, bn),)

    def run(self, backend: str, platform: str) -> np.ndarray:
        return launch(self, *inputs(self), backend, platform)


@dataclass(frozen=True)
class AttentionCase:
    """Attention forward over ``heads`` (batch x heads) of ``ctx`` float16 queries, keys and values of ``d``
    elements, ``BLOCK_M x BLOCK_N`` blocks, scale ``d ** -0.5``."""

    heads: int
    ctx: int
    d: int
    block: tuple[int, int]
    causal: bool = False
    dtype = "float16"
    kernel = "attention_fwd"

    @property
    def label(self) -> str:
        return f"{self.heads}x{self.ctx}x{self.d}{' causal' if self.causal else ''}"

    def run(self, backend: str, platform: str) -> np.ndarray:
        rng = np.random.default_rng(0)
        q, k, v = ((rng.random((self.heads, self.ctx, self.d), np.float32) * 2 - 1).astype(np.float16)
                   for _ in range(3))
        o = np.zeros_like(q)
        bm, bn = self.block
        attention_fwd[(cdiv(self.ctx, bm), self.heads)](q, k, v, o, self.d ** -0.5, self.ctx, D=self.d, BLOCK_M=bm,
                                                         BLOCK_N=bn, CAUSAL=self.causal, backend=backend,
                                                         platform=platform)
        return o


CASES = (
    MatmulCase(4096, 4096, 4096, "float16", (128, 256, 64)),
    MatmulCase(2048, 2048, 2048, "bfloat16", (128, 256, 64)),
    MatmulCase(1000, 3000, 700, "float16", (128, 256, 64)),  # no size a multiple of a block
    MatmulCase(8192, 640, 320, "float16", (128, 128, 64)),  # tall and skinny
)
QUICK = (MatmulCase(200, 300, 150, "float16", (64, 128, 64)),)
ATTENTION = (AttentionCase(8, 1024, 64, (64, 64)),)
"""Attention rows of the full table (``M x N x K``: heads x context x head dim)."""


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


def hbm_reads(stats: sim.SimStats, platform: str = DEFAULT_PLATFORM) -> tuple[float, ...]:
    """The GM bytes each AI cube core read from HBM, not the L2 (block ``b`` runs on core ``b % cores``)."""
    n = cost.cores(get_platform(platform), cube=True)
    per_core = [0.0] * min(n, len(stats.per_block))
    for b, s in enumerate(stats.per_block):
        per_core[b % n] += s.gm_read_bytes - s.l2_read_bytes
    return tuple(per_core)


@dataclass(frozen=True)
class Row:
    case: MatmulCase | AttentionCase
    stats: sim.SimStats
    floor_us: float
    hbm: tuple[float, ...]  # bytes each core read from HBM

    def cells(self) -> tuple[str, ...]:
        s, c = self.stats, self.case
        busy = s.pipe_busy.get("M", 0) / s.est_cycles if s.est_cycles else 0.0
        return (c.kernel, c.label, c.dtype, "x".join(map(str, c.block)), f"{s.est_us:.4g}",
                f"{self.floor_us:.4g}", f"{s.limit_ratio:.2f}", s.critical_pipe, f"{busy:.0%}",
                f"{s.l2_read_bytes / s.gm_read_bytes:.0%}" if s.gm_read_bytes else "-",
                f"{max(self.hbm) / 2**20:.2f} / {sum(self.hbm) / len(self.hbm) / 2**20:.2f}" if self.hbm else "-")


HEADER = ("kernel", "M x N x K", "dtype", "blocks", "est us", "floor us", "est/floor", "pipe", "M busy", "L2 reads",
          "HBM MiB max / mean core")


def measure(case: MatmulCase | AttentionCase, platform: str = DEFAULT_PLATFORM) -> Row:
    """One case on the simulator, its result checked against the interpreter's."""
    with sim.record() as runs:
        got = case.run("sim", platform)
    want = case.run("interpreter", platform)
    assert_close(got, want, dtypes.lookup(case.dtype), err_msg=f"{case.kernel} {case.label} {case.dtype}")
    (run,) = runs
    clock = cost.constants(get_platform(platform)).clock_mhz.value
    return Row(case, run.stats, run.stats.floor_cycles / clock, hbm_reads(run.stats, platform))


def report(platform: str = DEFAULT_PLATFORM, out=None, quick: bool = False) -> list[Row]:
    """Print the cube table under its title (what ``ascdsl bench`` prints) and return its rows."""
    out = out or sys.stdout
    print("\ncube kernels: the tutorial matmul (tl.dot on the AI cube cores) and attention forward (MIX) on the "
          "simulator, results checked against the interpreter:", file=out)
    print("| " + " | ".join(HEADER) + " |\n" + "|---" * len(HEADER) + "|", file=out, flush=True)
    rows = []
    for case in QUICK if quick else CASES + ATTENTION:
        rows.append(measure(case, platform))
        print("| " + " | ".join(rows[-1].cells()) + " |", file=out, flush=True)
    return rows


def main(argv: list[str] | None = None) -> None:
    """``python -m ascdsl.bench_cube [--quick] [--platform P]``."""
    parser = argparse.ArgumentParser(prog="python -m ascdsl.bench_cube",
                                     description="The cube kernels on the simulator, est/floor, each result checked "
                                                 "against the interpreter's.")
    parser.add_argument("--quick", action="store_true", help="the small cases only")
    parser.add_argument("--platform", default=DEFAULT_PLATFORM)
    args = parser.parse_args(argv)
    report(args.platform, quick=args.quick)


if __name__ == "__main__":
    main()
