"""Writes through the L2 (ascdsl/sim/cost.py): a write lands in the L2 at its write rate, the L2 writes it back to
HBM over the core's share of it, which the core's reads from HBM share, and a block ends when its last write has
reached HBM."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from ascdsl import sim
from ascdsl.bench_kernels import add_kernel
from ascdsl.platforms import get_platform
from ascdsl.sim import cost

SRC = Path(__file__).parent / "kernels" / "cost.cpp"
K = cost.A2
PLAT = get_platform("Ascend910B3")


def test_a_write_lands_in_the_l2_and_the_block_ends_when_hbm_has_it():
    n = 4096  # one tile of 16 KiB in, one out, in one burst each
    x, y = np.ones(n, np.float32), np.zeros(n, np.float32)
    stats = sim.run_kernel(SRC, "scale_double", [x, y, np.uint32(n), np.uint32(1), np.uint32(1)], 1).stats
    np.testing.assert_array_equal(y, 2 * x)
    setup = K.copy_setup.value + cost.l2_burst_cycles(K, write=True)
    assert cost.l2_burst_cycles(K, write=True) == K.burst_cycles.value * K.core_gm_bytes_per_cycle.value / 86
    assert stats.pipe_busy["MTE3"] == pytest.approx(setup + 4 * n / K.l2_write_bytes_per_cycle.value, abs=1)
    (store,) = [i for i in stats.trace.intervals if i.pipe == "MTE3" and not i.wait]
    assert store.end == pytest.approx(store.start + setup + 4 * n / K.l2_write_bytes_per_cycle.value)
    # the write-back: the bytes at the core's share of HBM (alone on the chip: its link's rate) from the write on
    assert stats.est_cycles == math.ceil(store.start + setup + 4 * n / cost.core_share(PLAT, 1))
    assert stats.est_cycles >= stats.floor_cycles


def _add(blocks: int) -> sim.SimStats:
    n = blocks * 1024
    rng = np.random.default_rng(0)
    x, y, out = rng.random(n, np.float32), rng.random(n, np.float32), np.zeros(n, np.float32)
    with sim.record() as runs:
        add_kernel[(blocks,)](x, y, out, n, BLOCK_SIZE=1024, backend="sim")
    np.testing.assert_array_equal(out, x + y)
    return runs[-1].stats


def test_a_block_of_a_streaming_kernel_ends_when_its_write_back_does():
    """Vector add, a block of 1024 a core: the write costs the link a quarter of what it did at the core's share of
    HBM, but the block ends when the L2 has written it back, after the reads, at that share."""
    stats = _add(40)
    block = stats.per_block[stats.trace.block]
    setup = K.copy_setup.value + cost.l2_burst_cycles(K, write=True)
    assert block.pipe_busy["MTE3"] == pytest.approx(setup + 4096 / K.l2_write_bytes_per_cycle.value, abs=1)
    (store,) = [i for i in stats.trace.intervals if i.pipe == "MTE3" and not i.wait]
    assert block.est_cycles == math.ceil(store.start + setup + 4096 / cost.core_share(PLAT, 40))


@pytest.mark.parametrize("blocks", [40, 200])
def test_a_streaming_kernel_whose_writes_go_through_the_l2_stays_at_or_over_its_floor(blocks):
    """Every byte read once and written once: the reads and the write-backs share the core's share of HBM, which
    carries every byte the floor counts."""
    stats = _add(blocks)
    assert stats.floor_cycles == int(3 * 4 * blocks * 1024 / cost.hbm_bytes_per_cycle(K))
    assert stats.est_cycles >= stats.floor_cycles
