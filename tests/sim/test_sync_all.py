"""SyncAll, the barrier over every block of a launch: blocks interleave at it (GM written before it is seen by
every block after it), the protocol errors that would hang a device, and its cost (``ascdsl_sim/grid_sync.h``)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ascdsl import sim
from ascdsl.sim import cost
from ascdsl.platforms import get_platform

KERNEL = Path(__file__).parent / "kernels" / "sync_all.cpp"
SLOT = 8
LATENCY = cost.constants(get_platform("Ascend910B3")).sync_all_latency.value


def exchange(blocks: int, sync: bool, **kw) -> np.ndarray:
    slots = np.zeros(blocks * SLOT, np.float32)
    out = np.full(blocks * SLOT, -1, np.float32)
    sim.run_kernel(KERNEL, "exchange", [slots, out, np.uint32(sync)], blocks, **kw)
    return out.reshape(blocks, SLOT)


def exchanged(blocks: int) -> np.ndarray:
    """What ``exchange`` stores: twice the next block's value (block b's is b + 1)."""
    return np.repeat(2.0 * (np.arange(1, blocks + 1) % blocks + 1), SLOT).reshape(blocks, SLOT).astype(np.float32)


@pytest.mark.parametrize("blocks", [1, 2, 7, 40])
def test_blocks_read_what_the_others_wrote_before_the_barrier(blocks):
    np.testing.assert_array_equal(exchange(blocks, True), exchanged(blocks))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_shuffled_start_order_gives_the_same_result(seed):
    np.testing.assert_array_equal(exchange(9, True, shuffle_blocks=seed), exchanged(9))


def test_without_the_barrier_blocks_read_slots_not_yet_written():
    out = exchange(7, False)
    # blocks run one after another: each but the last reads its next block's slot before that block wrote it
    np.testing.assert_array_equal(out[:-1], 0)
    np.testing.assert_array_equal(out[-1], exchanged(7)[-1])


def ring(blocks: int, rounds: int, early: bool = False, **kw) -> tuple[np.ndarray, np.ndarray]:
    init = np.repeat(np.arange(blocks, dtype=np.float32) * 3 + 1, SLOT)
    slots = np.zeros_like(init)
    out = np.zeros_like(init)
    sim.run_kernel(KERNEL, "ring", [init, slots, out, np.uint32(rounds), np.uint32(early)], blocks, **kw)
    v = init[::SLOT].astype(np.float64)
    for _ in range(rounds):
        v = 2 * np.roll(v, -1) + np.arange(blocks)
    return out[::SLOT], v.astype(np.float32)


@pytest.mark.parametrize(("blocks", "rounds"), [(3, 1), (5, 4), (16, 3)])
def test_two_barriers_a_step_in_a_loop_match_call_for_call(blocks, rounds):
    got, want = ring(blocks, rounds)
    np.testing.assert_array_equal(got, want)


def test_ring_with_shuffled_start_order():
    got, want = ring(6, 5, shuffle_blocks=11)
    np.testing.assert_array_equal(got, want)


def test_a_block_that_ends_while_the_others_wait_would_hang():
    with pytest.raises(sim.SimError) as e:
        ring(4, 2, early=True, shuffle_blocks=5)
    assert (e.value.api, e.value.block) == ("SyncAll", 3)
    assert "block 3 ended after 0 SyncAll while blocks" in str(e.value) and "wait at SyncAll #1" in str(e.value)
    assert "hang" in str(e.value)


def test_more_blocks_than_vector_cores_would_hang():
    plat = get_platform("Ascend910B3")
    with pytest.raises(sim.SimError) as e:
        exchange(plat.vector_core_count + 1, True)
    assert (e.value.api, e.value.block) == ("SyncAll", 0)
    assert f"all {plat.vector_core_count + 1} blocks" in str(e.value)
    assert f"only {plat.vector_core_count} run at once" in str(e.value)


def test_sync_all_of_cube_and_vector_cores_outside_a_mix_launch_is_refused():
    with pytest.raises(sim.SimError) as e:
        sim.run_kernel(KERNEL, "sync_all_cores", [], 2)
    assert (e.value.api, e.value.block) == ("SyncAll", 0)
    assert "SyncAll<false>" in str(e.value) and "hang" in str(e.value)


def test_sync_all_in_a_mix_launch_is_not_modelled():
    with pytest.raises(sim.SimError) as e:
        sim.run_kernel(KERNEL, "sync_all_mix", [], 2, mix=True)
    assert (e.value.api, e.value.block) == ("SyncAll", 0)
    assert "MIX launch is not modelled" in str(e.value)


def test_the_software_form_is_not_modelled():
    with pytest.raises(sim.SimError) as e:
        sim.run_kernel(KERNEL, "sync_all_soft", [np.zeros(2 * 8, np.int32)], 2)
    assert (e.value.api, e.value.block) == ("SyncAll", 0)
    assert "workspace form" in str(e.value)


def slow_first(sync: bool, blocks: int = 8, work: int = 50) -> sim.SimResult:
    out = np.zeros(blocks * SLOT, np.float32)
    result = sim.run_kernel(KERNEL, "slow_first", [out, np.uint32(work), np.uint32(sync)], blocks)
    np.testing.assert_array_equal(out, 1.0)
    return result


def test_the_slowest_block_holds_every_block_at_the_barrier():
    alone, synced = slow_first(False).stats, slow_first(True).stats
    # block 0's arrival: the end of its PipeBarrier<PIPE_ALL> without the barrier (its longest span, so its trace)
    assert alone.trace.block == 0
    arrival = max(i.end for i in alone.trace.intervals if i.api == "PipeBarrier<PIPE_ALL>")
    assert arrival > 20 * alone.per_block[1].est_cycles  # block 0's work is what the others wait for
    for b in synced.per_block:
        assert b.est_cycles >= arrival + LATENCY
    assert synced.per_block[1].est_cycles > 20 * alone.per_block[1].est_cycles
    waits = [i for i in synced.trace.intervals if i.api == "SyncAll" and i.wait]
    assert waits and min(i.end for i in waits) >= arrival + LATENCY
    assert synced.est_cycles - alone.est_cycles == pytest.approx(LATENCY, rel=0.05)


MAIN = Path(__file__).parent / "kernels" / "sync_all_main.cpp"


def test_cpu_debug_main_runs_the_barrier():
    assert sim.run_main(MAIN, [KERNEL], argv=["7", "1"], shuffle_seed=4).stdout == "wrong:\n"
    assert sim.run_main(MAIN, [KERNEL], argv=["7", "0"]).stdout == "wrong: 0 1 2 3 4 5\n"


def test_cpu_debug_main_refuses_more_blocks_than_vector_cores():
    cores = get_platform("Ascend910B3").vector_core_count
    with pytest.raises(sim.SimError) as e:
        sim.run_main(MAIN, [KERNEL], argv=[str(cores + 1), "1"])
    assert (e.value.api, e.value.block) == ("SyncAll", 0)
    assert f"only {cores} run at once" in str(e.value)
