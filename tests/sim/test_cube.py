"""The cube core's data path on the simulator: DataCopy GM -> L1 with Nd2NzParams, LoadData to L0A/L0B (with
and without transposing fractals), Mmad accumulating over K in L0C, Fixpipe to GM converting float to half or
bfloat16 (round to nearest even), against NumPy."""
from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from ascdsl import sim

SRC = Path(__file__).parent / "kernels" / "cube.cpp"
RNG = np.random.default_rng(26)


def _matmul(kernel, a, b, m, n, k, base, out_dtype, blocks=3):
    c = np.zeros((m, n), out_dtype)
    sim.run_kernel(SRC, kernel, [a, b, c, *map(np.uint32, (m, n, k, *base))], blocks)
    return c


def _reference(a, b, dtype):
    """float32 products summed in K order (what the cube accumulates), rounded once to ``dtype``."""
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for kk in range(a.shape[1]):
        acc += a[:, kk:kk + 1].astype(np.float32) * b[kk:kk + 1, :].astype(np.float32)
    return acc.astype(dtype)


@pytest.mark.parametrize("dtype, kernel", [(np.float16, "matmul_half"), (ml_dtypes.bfloat16, "matmul_bf16")])
def test_tiled_matmul_with_tails_matches_float32_accumulation(dtype, kernel):
    m, n, k = 40, 50, 70  # tails in every dimension of 32 x 32 x 32 tiles (k tail 6: one part-filled fractal)
    a = RNG.standard_normal((m, k)).astype(dtype)
    b = RNG.standard_normal((k, n)).astype(dtype)
    c = _matmul(kernel, a, b, m, n, k, (32, 32, 32), dtype)
    np.testing.assert_array_equal(c.view(np.uint16), _reference(a, b, dtype).view(np.uint16))


def test_b_given_transposed_needs_no_fractal_transpose():
    m, n, k = 33, 17, 48
    a = RNG.standard_normal((m, k)).astype(np.float16)
    b = RNG.standard_normal((k, n)).astype(np.float16)
    c = _matmul("matmul_half_bt", a, np.ascontiguousarray(b.T), m, n, k, (32, 16, 32), np.float16)
    np.testing.assert_array_equal(c, _reference(a, b, np.float16))


def test_int8_accumulates_exactly_in_int32():
    m, n, k = 20, 33, 100  # int8 fractals are 16 x 32: k tail 4 of 32
    a = RNG.integers(-128, 128, (m, k), dtype=np.int8)
    b = RNG.integers(-128, 128, (k, n), dtype=np.int8)
    c = _matmul("matmul_int8_bt", a, np.ascontiguousarray(b.T), m, n, k, (16, 32, 64), np.int32)
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))


def test_int8_b_row_major_transposes_squares_of_two_fractals():
    m, n, k = 20, 48, 100  # three 16-column fractals of N: the second square's upper half is past n
    a = RNG.integers(-128, 128, (m, k), dtype=np.int8)
    b = RNG.integers(-128, 128, (k, n), dtype=np.int8)
    c = _matmul("matmul_int8", a, b, m, n, k, (32, 64, 64), np.int32)
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))


def test_fixpipe_rounds_to_nearest_even():
    # 1 + 2^-11 is halfway between two halves: the product of 1 and that float32 sum must round to even (1.0)
    a = np.zeros((16, 16), np.float16)
    a[0, 0], a[0, 1] = 1.0, 1.0
    b = np.zeros((16, 16), np.float16)
    b[0, 0], b[1, 0] = 1.0, np.float16(2.0 ** -11)  # c[0,0] = 1 + 2^-11: a tie
    b[0, 1], b[1, 1] = 1.0, np.float16(3 * 2.0 ** -11)  # c[0,1] = 1 + 3 * 2^-11: a tie, rounds up to 1 + 2^-9
    c = _matmul("matmul_half", a, b, 16, 16, 16, (16, 16, 16), np.float16, blocks=1)
    assert c[0, 0] == np.float16(1.0) and c[0, 1] == np.float16(1.0 + 2.0 ** -9)


def test_init_const_value_fills_runs_of_blocks_dst_gap_apart():
    c = np.zeros((16, 16), np.float16)
    sim.run_kernel(SRC, "init_const_value", [c], 1)
    np.testing.assert_array_equal(c, np.full((16, 16), 32, np.float16))


def test_l0a_capacity_and_fixpipe_conversion_are_checked():
    with pytest.raises(sim.SimError, match="L0A total 81920 B exceeds the 65536 B L0A"):
        sim.run_kernel(SRC, "l0a_overflow", [np.zeros(1, np.float32)], 1)
    with pytest.raises(sim.SimError, match="quantPre 0 does not convert float to half"):
        sim.run_kernel(SRC, "fixpipe_without_quant", [np.zeros(256, np.float16)], 1)


def test_cost_model_runs_mmad_on_the_cube_pipe():
    from ascdsl.sim import cost
    k = cost.A2
    n = 128
    a, b = np.ones((n, n), np.float16), np.ones((n, n), np.float16)
    c = np.zeros((n, n), np.float16)
    res = sim.run_kernel(SRC, "matmul_half", [a, b, c, *map(np.uint32, (n, n, n, n, n, n))], 1)
    assert (c == n).all()
    stats = res.stats
    assert stats.pipe_busy["M"] == n ** 3 / k.cube_macs_per_cycle.value  # one Mmad of whole fractals
    copy = k.copy_setup.value + n * k.burst_cycles.value + n * n * 2 / k.core_gm_bytes_per_cycle.value
    assert stats.pipe_busy["MTE2"] == pytest.approx(2 * copy)  # A and B into L1: one burst per row
    gm = 3 * n * n * 2  # A and B in, C out
    assert stats.floor_cycles == int(max(gm / min(cost.hbm_bytes_per_cycle(k), 20 * k.core_gm_bytes_per_cycle.value),
                                         n ** 3 / k.cube_macs_per_cycle.value / 20))  # over the 20 cube cores of 910B3
    assert stats.est_cycles >= stats.floor_cycles


MIX = Path(__file__).parent / "kernels" / "mix.cpp"


def _mix(fault):
    a = RNG.standard_normal((16, 16)).astype(np.float16)
    b = RNG.standard_normal((16, 16)).astype(np.float16)
    ws, c = np.zeros((16, 16), np.float16), np.zeros((16, 16), np.float16)
    result = sim.run_kernel(MIX, "matmul_relu_mix", [a, b, ws, c, np.uint32(fault)], 1, mix=True)
    return a, b, c, result


def test_mix_kernel_aivs_take_the_aic_workspace_after_its_flag():
    a, b, c, result = _mix(0)
    np.testing.assert_array_equal(c, np.maximum(_reference(a, b, np.float16), np.float16(0)))


def test_mix_block_takes_the_aic_span_then_the_slower_aiv():
    a, b, _, mixed = _mix(0)
    c = np.zeros((16, 16), np.float16)  # the AIC's part alone
    alone = sim.run_kernel(SRC, "matmul_half", [a, b, c, *map(np.uint32, (16, 16, 16, 16, 16, 16))], 1).stats
    m, v = mixed.stats.pipe_busy, mixed.stats.est_cycles - alone.est_cycles
    assert m["M"] == alone.pipe_busy["M"] and m["V"] > 0
    assert m["V"] / 2 <= v <= m["V"] + m["MTE2"] + m["MTE3"] + m["S"]  # one AIV's relu, loads and stores follow


def test_mix_cores_see_the_block_indices_cann_gives_them():
    """CANN 8.1 (dav_c220 GetBlockIdxImpl): an AIV of a MIX kernel is block ``2 g + s`` of its AIC ``g``;
    GetBlockNum is blockDim on every core, GetTaskRation 2 on the AIVs and 1 on the AIC."""
    lines = sim.run_kernel(MIX, "mix_ids", [], 2, mix=True).stdout.splitlines()
    assert lines == ["AIC 0 of 2: ration 1, sub-block 0", "AIV 0 of 2: ration 2, sub-block 0",
                     "AIV 1 of 2: ration 2, sub-block 1", "AIC 1 of 2: ration 1, sub-block 0",
                     "AIV 2 of 2: ration 2, sub-block 0", "AIV 3 of 2: ration 2, sub-block 1"]


def test_cross_core_wait_without_a_set_is_an_error_not_a_hang():
    with pytest.raises(sim.SimError, match="AIV 0 waits for flag 0 with no matching CrossCoreSetFlag left"):
        _mix(1)


def test_workspace_read_before_the_aic_signals_its_write_is_an_error():
    with pytest.raises(sim.SimError, match="read by AIV 0 of block 0 before the write of the AIC of block 0"):
        _mix(2)


def _two_flags(fault):
    a = RNG.standard_normal((16, 16)).astype(np.float16)
    b = RNG.standard_normal((16, 16)).astype(np.float16)
    ws, c = np.full((2, 16, 16), np.nan, np.float16), np.zeros((2, 16, 16), np.float16)
    sim.run_kernel(MIX, "two_flags_mix", [a, b, ws, c, np.uint32(fault)], 1, mix=True)
    return a, b, c


def test_a_read_is_published_by_a_later_set_of_any_flag_id():
    """Tile 1 is read after a wait for flag 1, before the wait for flag 0 whose set came first: safe, as the
    publication goes by each set's place among its core's sets, not by how many waits the reader took."""
    a, b, c = _two_flags(0)
    expected = np.maximum(_reference(a, b, np.float16), np.float16(0))
    np.testing.assert_array_equal(c, np.stack([expected, expected]))


def test_a_read_after_a_set_that_came_before_the_write_is_an_error():
    with pytest.raises(sim.SimError, match="read by AIV 0 of block 0 before the write of the AIC of block 0"):
        _two_flags(1)


def _doubled(fault):
    a = RNG.standard_normal((16, 16)).astype(np.float16)
    b = RNG.standard_normal((16, 16)).astype(np.float16)
    ws, c = np.full((16, 16), np.nan, np.float16), np.zeros((16, 16), np.float16)
    result = sim.run_kernel(MIX, "doubled_matmul_mix", [a, b, ws, c, np.uint32(fault)], 1, mix=True)
    return a, b, c, result


def test_mix_kernel_aic_takes_its_aivs_workspace_after_both_flags():
    """Flags from the AIVs to their AIC (mode 2: the AIC's wait takes a set of each AIV), the AIVs run first;
    the AIC's span starts where the slower AIV's ends."""
    a, b, c, result = _doubled(0)
    np.testing.assert_array_equal(c, _reference(a * np.float16(2), b, np.float16))
    m = result.stats.pipe_busy
    assert m["V"] > 0 and m["M"] > 0 and result.stats.est_cycles >= m["M"] + m["V"] / 2


def test_aic_wait_for_a_flag_one_aiv_never_set_is_an_error_not_a_hang():
    with pytest.raises(sim.SimError, match=r"the AIC waits for flag 1 with no matching CrossCoreSetFlag left from "
                                           r"both its AIVs \(1 and 0 set, 0 taken\)"):
        _doubled(1)


def test_workspace_read_before_the_aivs_signal_their_write_is_an_error():
    """The AIC runs first and reads the workspace without waiting: the AIV writing it after is the race."""
    with pytest.raises(sim.SimError, match="written by AIV 0 of block 0 before the read of the AIC of block 0 is "
                                           "signalled"):
        _doubled(2)


def _ping_pong(chains, steps, fault=0):
    a = RNG.standard_normal((chains, 16, 16)).astype(np.float16)
    b = RNG.standard_normal((16, 16)).astype(np.float16)
    ws, xs = np.full((chains, 16, 16), np.nan, np.float16), np.full((chains, 16, 16), np.nan, np.float16)
    c = np.zeros((chains, 16, 16), np.float16)
    result = sim.run_kernel(MIX, "ping_pong_mix", [a, b, ws, xs, c, *map(np.uint32, (chains, steps, fault))], 1,
                            mix=True)
    return a, b, c, result


def test_tiles_passed_both_ways_over_steps_run_interleaved():
    """AIC -> AIVs -> AIC ... over 4 steps: each step's product (rounded to half) scaled by 1/4 in half is the
    next step's left operand; only cores taking turns at their waits get there."""
    a, b, c, _ = _ping_pong(2, 4)
    for t in range(2):
        x = a[t]
        for _ in range(4):
            x = _reference(x, b, np.float16) * np.float16(0.25)
        np.testing.assert_array_equal(c[t], x)


def test_two_chains_overlap_the_cube_and_the_vector_cores():
    """One chain: the AIC and its AIVs take turns. Two chains: the AIC multiplies one while its AIVs scale the
    other, so twice the work costs little more than one chain, where running the cores one after the other
    would cost twice."""
    one = _ping_pong(1, 4)[3].stats
    two = _ping_pong(2, 4)[3].stats
    for pipe in ("M", "MTE1", "V", "MTE3", "S"):  # the same work twice over (MTE2: the L2 serves B's re-reads)
        assert two.pipe_busy[pipe] == 2 * one.pipe_busy[pipe], pipe
    assert one.est_cycles < two.est_cycles < 1.25 * one.est_cycles


def test_both_sides_waiting_is_the_located_hang_error():
    with pytest.raises(sim.SimError, match=r"the AIC waits for flag 1 with no matching CrossCoreSetFlag left from "
                                           r"both its AIVs \(0 and 0 set, 0 taken\); and AIV 0 waits for flag 0 .*; "
                                           r"and AIV 1 waits for flag 0 .*: it would hang on the device") as info:
        _ping_pong(1, 2, fault=1)
    assert info.value.block == 0
