"""The cost model (ascdsl/sim/cost.py) pinned on hand-written kernels whose cost is obvious."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from ascdsl import sim
from ascdsl.platforms import PLATFORMS, get_platform
from ascdsl.sim import cost

SRC = Path(__file__).parent / "kernels" / "cost.cpp"
K = cost.A2
PLAT = get_platform("Ascend910B3")
ISSUE, VISSUE, DRAIN, FLAG = K.scalar_issue.value, K.vector_issue.value, K.barrier_drain.value, K.flag_latency.value


def run(kernel, args, block_dim=1, **kw):
    return sim.run_kernel(SRC, kernel, args, block_dim, **kw).stats


@pytest.mark.parametrize("block_dim", [1, 40])
def test_one_copy_costs_setup_burst_and_bytes_at_the_core_share(block_dim):
    n = 4096  # 16 KiB in one burst
    stats = run("one_copy", [np.zeros(40 * n, np.float32), np.uint32(n), np.uint32(n)], block_dim)
    share = cost.core_share(PLAT, block_dim)
    assert share == (K.core_gm_bytes_per_cycle.value if block_dim == 1 else cost.hbm_bytes_per_cycle(K) / 40)
    # AllocTensor and DataCopy dispatched, set-up and one burst, the bytes, then the EnQue/DeQue flag
    expected = 2 * ISSUE + K.copy_setup.value + K.burst_cycles.value + 4 * n / share + FLAG
    assert stats.est_cycles == math.ceil(expected)
    assert stats.est_us == pytest.approx(stats.est_cycles / K.clock_mhz.value)
    assert stats.critical_pipe == "MTE2"
    assert stats.floor_cycles == int(block_dim * 4 * n / cost.hbm_bytes_per_cycle(K))  # HBM, not 40 x 32 B/cycle
    assert stats.est_cycles >= stats.floor_cycles


def test_a_first_read_the_blocks_running_together_share_is_half_each_and_the_floor_counts_it_once():
    """Two blocks on two cores copy the same 16 KiB at the same time: each fetches half of it from HBM and reads
    the other half from the L2 (in the simulation block 0 read it all from HBM and block 1 all from the L2)."""
    n = 4096
    x = np.zeros(2 * n, np.float32)
    own, shared = run("one_copy", [x, np.uint32(n), np.uint32(n)], 2), run("one_copy", [x, np.uint32(n), np.uint32(0)], 2)
    share, l2 = cost.core_share(PLAT, 2), K.l2_bytes_per_cycle.value
    assert [b.l2_read_bytes for b in own.per_block] == [0, 0]
    assert [b.l2_read_bytes for b in shared.per_block] == [2 * n, 2 * n] and shared.l2_read_bytes == 4 * n
    hbm_copy = K.burst_cycles.value + 4 * n / share
    l2_copy = cost.l2_burst_cycles(K) + 4 * n / l2
    half = math.ceil(own.per_block[0].est_cycles - (hbm_copy - l2_copy) / 2)
    assert [b.est_cycles for b in shared.per_block] == [half, half]
    assert cost.l2_burst_cycles(K) == K.burst_cycles.value * K.core_gm_bytes_per_cycle.value / l2
    assert own.floor_cycles == int(2 * 4 * n / cost.hbm_bytes_per_cycle(K))
    assert shared.floor_cycles == int(4 * n / cost.hbm_bytes_per_cycle(K))  # the bytes once
    assert shared.est_cycles >= shared.floor_cycles


def test_a_block_that_starts_after_the_first_readers_end_reads_the_l2():
    """41 blocks on the 40 vector cores copy the same 16 KiB: blocks 0-39 start together and fetch it from HBM
    together, a 40th each; block 40 starts on core 0 once block 0 is done and reads all of it from the L2."""
    n = 4096
    stats = run("one_copy", [np.zeros(n, np.float32), np.uint32(n), np.uint32(0)], 41)
    assert [b.l2_read_bytes for b in stats.per_block] == [round(4 * n * 39 / 40)] * 40 + [4 * n]
    assert stats.floor_cycles == int(4 * n / cost.hbm_bytes_per_cycle(K))
    assert stats.est_cycles >= stats.floor_cycles


def test_each_burst_adds_its_cost():
    n = 4096
    one = run("burst_copy", [np.zeros(n, np.float32), np.uint32(n), np.uint32(1)])
    many = run("burst_copy", [np.zeros(n, np.float32), np.uint32(n), np.uint32(128)])  # 128 bursts of 128 B
    assert many.est_cycles == one.est_cycles + 127 * K.burst_cycles.value
    assert many.gm_read_bytes == one.gm_read_bytes == 4 * n


@pytest.mark.parametrize("mask", [0, 8])
def test_one_vector_op_costs_issue_and_full_repeats_whatever_the_mask(mask):
    n = 4096  # 64 repeats of 64 floats
    stats = run("one_exp", [np.uint32(n), np.uint32(mask)])
    assert stats.est_cycles == ISSUE + VISSUE + 64 * K.cycles_per_repeat["Exp"]
    assert stats.pipe_busy["V"] == VISSUE + 64 * K.cycles_per_repeat["Exp"]
    assert stats.critical_pipe == "V"
    assert stats.vector_elements["Exp"] == (n if mask == 0 else 8 * 64)


def test_barrier_chain_pays_one_drain_per_barrier():
    n, count = 1024, 10  # 16 repeats per Add
    free = run("add_chain", [np.uint32(n), np.uint32(count), np.uint32(0)], vv_hazards=False)
    chained = run("add_chain", [np.uint32(n), np.uint32(count), np.uint32(1)])
    assert free.est_cycles == ISSUE + count * (VISSUE + 16)
    assert chained.est_cycles == free.est_cycles + count * DRAIN


def test_scalar_read_of_a_vector_result_waits_for_it():
    n = 1024
    stats = run("scalar_waits", [np.zeros(1, np.float32), np.uint32(n)])
    vector_done = ISSUE + (VISSUE + 16) + DRAIN + (VISSUE + 16 * K.cycles_per_repeat["Exp"])
    # the WaitFlag<V_S> holds dispatch; then a UB GetValue and a GM SetValue on the scalar unit
    assert stats.est_cycles == vector_done + FLAG + 2 * ISSUE + K.scalar_ub_access.value + K.scalar_gm_latency.value


def test_double_buffering_overlaps_copy_in_with_compute_and_single_buffering_does_not():
    tile, tiles, work = 4096, 8, 20
    x, y = np.ones(tile * tiles, np.float32), np.zeros(tile * tiles, np.float32)
    args = [x, y, np.uint32(tile), np.uint32(tiles), np.uint32(work)]
    single, double = run("scale_single", args), run("scale_double", args)
    np.testing.assert_array_equal(y, 2 * x)
    assert single.pipe_busy == double.pipe_busy  # the same work...
    busy = double.pipe_busy
    one_tile_copies = (busy["MTE2"] + busy["MTE3"]) / tiles + 4 * FLAG
    write_back = 4 * tile / cost.core_share(PLAT, 1)  # the last tile's, from the L2 to HBM
    # ...double-buffered: the vector pipe plus filling and draining the pipeline once
    assert busy["V"] < double.est_cycles <= busy["V"] + one_tile_copies + write_back
    # single-buffered: every copy-in waits for the previous tile's FreeTensor
    assert single.est_cycles >= busy["V"] + busy["MTE2"]


def test_blocks_beyond_the_cores_run_in_turn_and_share_bandwidth():
    n = 4096
    x = np.zeros(80 * n, np.float32)
    forty = run("one_copy", [x, np.uint32(n), np.uint32(n)], 40)
    eighty = run("one_copy", [x, np.uint32(n), np.uint32(n)], 80)
    assert eighty.est_cycles == pytest.approx(2 * forty.est_cycles, abs=2)
    assert eighty.floor_cycles == pytest.approx(2 * forty.floor_cycles, abs=1)
    assert len(eighty.per_block) == 80 and eighty.per_block[0].est_cycles == forty.per_block[0].est_cycles


def test_constants_name_their_sources():
    for name, value, source in K.table():
        assert value > 0 and len(source) > 20, name
    assert K.repeat_source
    assert set(cost.COSTS) == set(PLATFORMS)


def test_a_core_left_running_alone_moves_its_bytes_at_its_link_rate():
    n = 4096  # 41 blocks on 40 cores: core 0 runs a second copy after the others have finished
    x = np.zeros(41 * n, np.float32)
    forty = run("one_copy", [x, np.uint32(n), np.uint32(n)], 40)
    one_more = run("one_copy", [x, np.uint32(n), np.uint32(n)], 41)
    alone = 2 * ISSUE + K.copy_setup.value + K.burst_cycles.value + 4 * n / K.core_gm_bytes_per_cycle.value + FLAG
    assert one_more.est_cycles == pytest.approx(forty.est_cycles + alone, abs=2)
    assert one_more.per_block[40].est_cycles == forty.per_block[0].est_cycles  # each block ran at a 40th
    assert one_more.est_cycles >= one_more.floor_cycles


def test_unequal_cores_share_hbm_among_those_still_running_and_vector_work_is_not_sped_up():
    share, link, hbm = cost.core_share(PLAT, 40), K.core_gm_bytes_per_cycle.value, cost.hbm_bytes_per_cycle(K)
    row = 1 << 20  # bytes; a block that only moves bytes spans them at its share
    blocks = [cost.BlockCost(2 * row / share, {"MTE2": 2 * row / share}, 0.0, 2 * row, floor_bytes=2 * row)] * 24
    blocks += [cost.BlockCost(row / share, {"MTE2": row / share}, 0.0, row, floor_bytes=row)] * 16
    est = cost.estimate(blocks, PLAT)
    assert est.cycles == math.ceil(row / share + row / min(link, hbm / 24))  # the second row with 24 cores left
    assert est.cycles >= est.floor_cycles == int(40 * row * 1.6 / hbm)
    vector_bound = cost.BlockCost(2 * row / share, {"MTE2": 2 * row / share, "V": 2 * row / share}, 0.0, 2 * row, floor_bytes=2 * row)
    assert cost.estimate([vector_bound] + blocks[1:], PLAT).cycles == math.ceil(2 * row / share)
