"""Issue 24's plan for 16-bit short rows of any length read flat (``kernels/packed_rows.cpp``, written by hand
before the backend builds it): float32 rows packed at a pitch of ``k`` elements, their sums one bit-masked
``WholeReduceSum`` per residue class of the rows' lane offsets, the sums broadcast back by one bit-masked ``Sub``
per class with a ``Brcb``'d block at block stride 0. The simulator (hazard checks on) against float64, and the
cost model's estimate of the plan at the sweep's shapes (``python -m tests.sim.test_packed_rows_plan`` prints
them; docs/performance.md "Rows packed at a pitch of k")."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from ascdsl import dtypes, sim
from ascdsl.sim import cost
from ascdsl.platforms import get_platform
from ascdsl.testing import assert_close
from ops.softmax_grad import error_scale, reference

SRC = Path(__file__).parent / "kernels" / "packed_rows.cpp"
B3 = get_platform("Ascend910B3")
TILES_PER_CORE, MIN_TILE_BYTES = 4, 8192  # ops/softmax_grad.py's tile policy


def tile_rows(m: int, k: int, cores: int) -> int:
    """ops/softmax_grad.py's rows a tile (a core's share in 4 tiles, none under 8 KiB of an input), rounded up to
    whole periods of the lane offsets (``8 / gcd(k, 8)`` rows)."""
    share = -(-m // min(cores, m))
    rows = min(share, max(-(-share // TILES_PER_CORE), -(-MIN_TILE_BYTES // (2 * k))))
    period = 8 // math.gcd(k, 8)
    return -(-rows // period) * period


def run(m: int, k: int, rows: int, cores: int, seed: int = 0):
    """(the plan's output, the float64 inputs, the run's stats) for ``[m, k]`` float16 on ``cores`` cores."""
    rng = np.random.default_rng(seed)
    grad = rng.standard_normal((m, k)).astype(np.float16)
    src = rng.random((m, k)).astype(np.float16)
    out = np.full((m, k), np.nan, np.float16)
    used = min(cores, m)
    res = sim.run_kernel(SRC, "softmax_grad_packed_f16",
                         [grad, src, out, np.uint32(k), np.uint32(rows), np.uint32(m // used), np.uint32(m % used)],
                         used, B3.name)
    return out, grad.astype(np.float64), src.astype(np.float64), res.stats


@pytest.mark.parametrize("m, k, rows, cores", [
    (100, 19, 16, 3),  # short last tiles: classes of unequal counts, some empty
    (2000, 37, 256, 4),  # lane offsets 0, 5, 2, 7, ...: rows of 37 + 7 lanes of a repeat
    (700, 13, 64, 2),
    (900, 24, 300, 1),  # one class (24 = 3 blocks) of 300 rows: repeats in calls of 255
    (5000, 3, 2048, 1),  # 2048 sums, 256 Brcb repeats: two calls
    (64, 57, 8, 1)])  # 57 + 7 = 64: the widest row a repeat takes at every offset
def test_the_plan_computes_softmax_grad_on_the_simulator(m, k, rows, cores):
    out, grad, src, _ = run(m, k, rows, cores)
    assert_close(out, reference(grad, src), dtypes.float16, scale=error_scale(grad, src))


def estimate(m: int, k: int) -> tuple[float, float, str]:
    """(estimated us, floor us, critical pipe) of the plan for ``[m, k]`` float16 on the 40 cores of Ascend910B3."""
    cores = B3.vector_core_count
    out, grad, src, stats = run(m, k, tile_rows(m, k, cores), cores)
    assert_close(out, reference(grad, src), dtypes.float16, scale=error_scale(grad, src))
    return stats.est_us, stats.floor_cycles / cost.constants(B3).clock_mhz.value, stats.critical_pipe


def test_the_plan_prices_the_sweeps_19_element_rows_near_the_floor():
    """71279x19 float16: today's softmax_grad (a burst a 38-byte row) is 2.54x its floor; the plan 1.10x."""
    est, floor, _ = estimate(71279, 19)
    assert est / floor <= 1.15


SHAPES = ((71279, 19), (30000, 37), (53551, 24), (20000, 13))


def main(out=sys.stdout) -> None:
    print("| shape | float16 rows of | est us | floor us | est/floor | pipe |", file=out)
    print("|---|---|---|---|---|---|", file=out)
    for m, k in SHAPES:
        est, floor, pipe = estimate(m, k)
        print(f"| {m}x{k} | {2 * k} bytes | {est:.4g} | {floor:.4g} | {est / floor:.3f} | {pipe} |", file=out)


if __name__ == "__main__":
    main()
