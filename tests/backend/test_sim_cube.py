"""``tl.dot`` on the AI cube core (issue 26): the tutorial matmul generated as a pure-cube Ascend C class
(GM -> L1 Nd2Nz, LoadData to L0A/L0B, Mmad accumulating in L0C, Fixpipe), run on the simulator against the
interpreter within the output dtype's tolerance (vector work after the product: :mod:`.test_sim_mix`); what
the lowering does not cover is a located error."""
import numpy as np
import pytest

import ascdsl
from ascdsl import dtypes, sim
from ascdsl.backend.plan import tiling
from ascdsl.backend.render.ascendc import kernel_source
from ascdsl.platforms import DEFAULT_PLATFORM, get_platform
from ascdsl.sim import cost
from ascdsl.testing import assert_close
from tests.backend import cube_kernels as ck
from tests.backend.helpers import CANN, RNG, assert_type_checks, both, data, each

SHAPES = [(40, 50, 70, 32, 32, 32), (100, 33, 129, 64, 32, 64), (16, 16, 16, 16, 16, 16)]
"""M, N, K and BLOCK_M, BLOCK_N, BLOCK_K: tails in every dimension (the K tail of 6 or 1 part-fills a fractal),
and one exact tile."""


def _tutorial(dtype, m, n, k, bm, bn, bk, backend=None):
    a, b, c = data((m, k), dtype), data((k, n), dtype), np.zeros((m, n), dtype.np)
    grid = (ascdsl.cdiv(m, bm) * ascdsl.cdiv(n, bn),)
    args = (a, b, c, m, n, k, k, 1, n, 1, n, 1)
    return grid, args, dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)


@pytest.mark.parametrize("kernel, dtype, shapes", [(ck.matmul, dtypes.float16, SHAPES),
                                                    (ck.matmul, dtypes.bfloat16, SHAPES),
                                                    (ck.matmul_advancing, dtypes.float16, SHAPES[:2])],
                         ids=["float16", "bfloat16", "advancing-pointers"])
def test_tutorial_matmul_with_tails_matches_the_interpreter(kernel, dtype, shapes):
    """Also the tutorial's own loop (``a_ptrs += BLOCK_K * stride_ak``): the pointer blocks are the entry ones
    plus ``k * BLOCK_K * stride`` (``carried_offsets``), so the loop over K is the cube's."""
    def check(m, n, k, bm, bn, bk):
        grid, args, meta = _tutorial(dtype, m, n, k, bm, bn, bk)
        want, got = both(kernel[grid], *args, **meta)
        a, b = args[0].astype(np.float64), args[1].astype(np.float64)
        assert_close(want[2], (a @ b).astype(dtype.np), dtype)  # the interpreter is right
        assert_close(got[2], want[2], dtype, err_msg=f"{m}x{n}x{k}")
    each(check, shapes)


def test_one_copy_to_l1_serves_several_steps_of_k():
    """BLOCK_K = 32 half: 4 steps a GM -> L1 copy of B and 16 a copy of A (its rows of 16 x 64 bytes; its blocks
    of 16 steps fit L1 twice beside B's), so 18 steps take 2 copies of A and 5 of B (A's first serves B's copies
    0-3, its second B's last, of 2 steps and a K tail of 6); each step's blocks go L1 -> L0A/L0B on MTE1."""
    m, n, k = 16, 32, 550
    grid, args, meta = _tutorial(dtypes.float16, m, n, k, 16, 32, 32)
    with sim.record() as runs:
        want, got = both(ck.matmul[grid], *args, **meta)
    assert_close(got[2], want[2], dtypes.float16)
    (run,) = runs
    assert run.stats.vector_calls["Mmad"] == 18
    assert run.stats.gm_copies == 2 + 5 + 1  # and one Fixpipe
    # MTE1 moves each step's 512-byte fractals, A's (1 x 2) at 512 bytes a cycle and B's (2 x 2) at 256; the
    # K tail of 6 is one fractal of K
    assert run.stats.pipe_busy["MTE1"] == 17 * (2 + 4 * 2) + (1 + 2 * 2)


def test_a_cube_launch_shares_hbm_among_the_cube_cores():
    """80 programs run on the 20 cube cores of the 910B3, a block a core looping over programs b, b + 20, b + 40
    and b + 60: each core gets HBM over 20 (capped at its link's 32 bytes a cycle), not over the 40 vector cores.
    The blocks all start together, so a panel's first read is shared by every block that reads it: block 0's four
    panels of A (8 KiB each) by 8 blocks each, its panels 0 and 4 of B (16 KiB, each read twice) by 5 blocks."""
    m, n, k = 640, 1024, 64
    grid, args, meta = _tutorial(dtypes.float16, m, n, k, 64, 128, 64)
    with sim.record() as runs:
        want, got = both(ck.matmul[grid], *args, **meta)
    assert_close(got[2], want[2], dtypes.float16)
    (run,) = runs
    plat, costs = get_platform(DEFAULT_PLATFORM), cost.constants(get_platform(DEFAULT_PLATFORM))
    share = cost.core_share(plat, grid[0], cube=True)
    assert share == min(costs.core_gm_bytes_per_cycle.value, cost.hbm_bytes_per_cycle(costs) / plat.ai_core_count)
    assert share > cost.core_share(plat, grid[0])
    assert len(run.stats.per_block) == plat.ai_core_count
    block = run.stats.per_block[0]
    a, b = 64 * 64 * 2, 64 * 128 * 2  # a copy of A (64 rows of 128 bytes, 64 bursts) and one of B (64 of 256)
    l2 = 4 * a * 7 / 8 + 4 * b - 2 * b / 5
    assert block.l2_read_bytes == round(l2)
    # set-ups, bursts and bytes at the share; the simulation read programs 40's and 60's copies of B from the L2,
    # the sharing moves the rest at the mean cost of a byte's move (its share of the bursts, its cycles)
    read, bursts = 4 * (a + b), 8 * 64
    burst_saved = costs.burst_cycles.value - cost.l2_burst_cycles(costs)
    byte_saved = 1 / share - 1 / costs.l2_bytes_per_cycle.value
    busy = 8 * costs.copy_setup.value + bursts * costs.burst_cycles.value + read / share
    run_l2 = 2 * (64 * burst_saved + b * byte_saved)
    mean = (bursts * burst_saved + read * byte_saved) / read
    assert block.pipe_busy["MTE2"] == round(busy - run_l2 - (l2 - 2 * b) * mean)


@pytest.mark.parametrize("a_cols, b_cols", [(False, False), (True, False), (False, True), (True, True)])
def test_a_copy_of_a_serving_several_copies_of_b_matches_the_interpreter(a_cols, b_cols):
    """10 steps of K (a tail of 6) in a copy of A of 10 steps and copies of B of 4, 4 and 2, M and N not multiples
    of their blocks, each operand row- or column-major: a step takes its fractals of A from K's offset in A's copy
    and those of B from its offset in B's."""
    m, n, k = 40, 50, 294
    grid, args, meta = _tutorial(dtypes.float16, m, n, k, 16, 32, 32)
    a, b = args[0], args[1]
    a_gm, a_strides = (np.ascontiguousarray(a.T), (1, m)) if a_cols else (a, (k, 1))
    b_gm, b_strides = (np.ascontiguousarray(b.T), (1, k)) if b_cols else (b, (n, 1))
    with sim.record() as runs:
        want, got = both(ck.matmul[grid], a_gm, b_gm, *args[2:6], *a_strides, *b_strides, *args[10:], **meta)
    assert_close(want[2], (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16), dtypes.float16)
    assert_close(got[2], want[2], dtypes.float16)
    (run,) = runs
    assert run.stats.gm_copies == grid[0] * (1 + 3 + 1)


def test_steps_whose_blocks_do_not_follow_each_other_copy_one_at_a_time():
    m, n, k = 40, 32, 128
    a, b = data((m, k), dtypes.float16), data((k, n), dtypes.float16)
    with sim.record() as runs:
        want, got = both(ck.matmul_reversed_k[(ascdsl.cdiv(m, 32),)], a, b, np.zeros((m, n), np.float32), m, n, k,
                         BLOCK=32)
    assert_close(got[2], want[2], dtypes.float32, scale=np.abs(a).astype(np.float32) @ np.abs(b).astype(np.float32))
    assert [r.stats.gm_copies for r in runs] == [2 * (2 * 4 + 1)]  # two programs: 4 steps of 2 copies, a Fixpipe


def test_an_accumulation_written_plus_equals_runs_on_the_cube():
    m, n, k = 40, 50, 70
    a, b = data((m, k), dtypes.float16), data((k, n), dtypes.float16)
    want, got = both(ck.matmul_plus_equals[(2, 2)], a, b, np.zeros((m, n), np.float16), m, n, k, BLOCK_M=32,
                     BLOCK_N=32, BLOCK_K=32)
    assert_close(want[2], (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16), dtypes.float16)
    assert_close(got[2], want[2], dtypes.float16)


def test_float32_result_on_a_2d_grid_without_stride_parameters():
    m, n, k = 70, 45, 100
    a, b = data((m, k), dtypes.float16), data((k, n), dtypes.float16)
    want, got = both(ck.matmul_grid2[(ascdsl.cdiv(m, 32), ascdsl.cdiv(n, 32))], a, b, np.zeros((m, n), np.float32),
                     m, n, k, BLOCK_M=32, BLOCK_N=32, BLOCK_K=64)
    assert_close(got[2], want[2], dtypes.float32, scale=np.abs(a).astype(np.float32) @ np.abs(b).astype(np.float32))


@pytest.mark.parametrize("extra", [(1, 0), (0, 2), (2, 1)], ids=["rows", "columns", "both"])
def test_programs_of_no_valid_rows_or_columns_store_nothing(extra):
    """A grid larger than the matrix: the programs past it have blocks of no valid rows or no valid columns (B's
    `LoadData` of no columns would repeat 0 times, which the simulator refuses); they compute and store nothing, as
    on the interpreter (the programs of the matrix overwrite all of the NaN canary, on both)."""
    m, n, k = 40, 45, 70
    a, b = data((m, k), dtypes.float16), data((k, n), dtypes.float16)
    c = np.full((m, n), np.nan, np.float32)
    grid = (ascdsl.cdiv(m, 32) + extra[0], ascdsl.cdiv(n, 32) + extra[1])
    want, got = both(ck.matmul_grid2[grid], a, b, c, m, n, k, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
    assert not np.isnan(want[2]).any()
    assert_close(got[2], want[2], dtypes.float32, scale=np.abs(a).astype(np.float32) @ np.abs(b).astype(np.float32))


def test_a_mix_kernel_s_programs_of_no_valid_columns_store_nothing():
    """relu of the product (a MIX kernel) with ``N`` 0: every program's block of B has no valid columns; the cube
    core stores no product to the workspace, the vector cores store nothing (their load of it is masked as the
    product's lanes are), as on the interpreter: the NaN canary stays."""
    m, k = 50, 40
    a, b = data((m, k), dtypes.float16), data((k, 32), dtypes.float16)
    want, got = both(ck.matmul_relu[(ascdsl.cdiv(m, 32),)], a, b, np.full((m, 32), np.nan, np.float32), m, 0, k,
                     BLOCK=32)
    assert np.isnan(want[2]).all()
    assert np.isnan(got[2]).all()


def test_steps_of_k_of_no_valid_k_add_nothing():
    """A loop over K that runs past K: its last steps load blocks of no valid K (`LoadData` of 0 fractals of K);
    they add nothing to the product, as on the interpreter; a loop all past K leaves the product 0."""
    m, n, k = 40, 45, 70
    a, b = data((m, k), dtypes.float16), data((k, n), dtypes.float16)
    scale = np.abs(a).astype(np.float32) @ np.abs(b).astype(np.float32)
    for valid, k_end in ((k, 4 * 32), (0, 2 * 32)):  # a step of 6 of K then one of none; two of none
        want, got = both(ck.matmul_k_end[(2, 2)], a, b, np.full((m, n), np.nan, np.float32), m, n, valid, k_end,
                         BLOCK=32)
        assert not np.isnan(want[2]).any()
        assert_close(got[2], want[2], dtypes.float32, scale=scale)


@pytest.mark.parametrize("wrap", [0, -1, 2])
def test_a_scalar_modulo_by_zero_or_minus_one_gives_the_interpreters_rows_not_a_trap(wrap):
    """The simulator runs the kernel in this process: C's trap would kill it (SIGFPE)."""
    m, n, k = 128, 16, 32
    a, b = data((m, k), dtypes.float16), data((k, n), dtypes.float16)
    want, got = both(ck.matmul_grid2[(4, 1)], a, b, np.zeros((m, n), np.float32), m, n, k, BLOCK_M=16,
                     BLOCK_N=16, BLOCK_K=16, WRAP=wrap)
    assert_close(got[2], want[2], dtypes.float32, scale=np.abs(a).astype(np.float32) @ np.abs(b).astype(np.float32))
    written = [blk for blk in range(8) if (want[2][16 * blk:16 * blk + 16] != 0).any()]
    assert written == ([0, 3, 4, 7] if wrap == 2 else [0, 2, 4, 6])


def test_one_product_without_a_loop_over_k():
    m, n, k = 50, 20, 48
    x, w = data((m, k), dtypes.bfloat16), data((k, n), dtypes.bfloat16)
    want, got = both(ck.small_matmul[(ascdsl.cdiv(m, 32), ascdsl.cdiv(n, 16))], x, w,
                     np.zeros((m, n), dtypes.bfloat16.np), m, n, K=k, BLOCK_M=32, BLOCK_N=16)
    assert_close(got[2], want[2], dtypes.bfloat16)


def test_batched_matmul_over_a_program_id():
    z, m, n, k = 3, 20, 40, 50
    a, b = data((z, m, k), dtypes.float16), data((z, k, n), dtypes.float16)
    grid = (ascdsl.cdiv(m, 16) * ascdsl.cdiv(n, 32), z)
    want, got = both(ck.batched_matmul[grid], a, b, np.zeros((z, m, n), np.float16), m, n, k,
                     BLOCK_M=16, BLOCK_N=32, BLOCK_K=32)
    assert_close(want[2], (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16), dtypes.float16)
    assert_close(got[2], want[2], dtypes.float16)


def test_vector_work_after_the_product_runs_as_a_mix_kernel():
    """relu of the float32 product (a MIX kernel: :mod:`tests.backend.test_sim_mix`), stored as float32."""
    m, n, k = 50, 32, 40
    a, b = data((m, k), dtypes.float16), data((k, n), dtypes.float16)
    want, got = both(ck.matmul_relu[(ascdsl.cdiv(m, 32),)], a, b, np.zeros((m, n), np.float32), m, n, k, BLOCK=32)
    product = np.abs(a).astype(np.float32) @ np.abs(b).astype(np.float32)
    assert_close(want[2], np.maximum(a.astype(np.float64) @ b.astype(np.float64), 0), dtypes.float32, scale=product)
    assert_close(got[2], want[2], dtypes.float32, scale=product)


def test_vector_work_before_a_product_in_a_loop_over_k_is_a_located_error():
    """An operand computed at each step of a loop over K (the workspace would hold a tile per step: not
    lowered); one product of a computed operand runs as a MIX kernel (:mod:`.test_sim_mix`)."""
    a, b, c = np.zeros((32, 32), np.float16), np.zeros((32, 32), np.float16), np.zeros((32, 32), np.float32)
    with pytest.raises(ascdsl.CompilationError) as info:
        ck.matmul_scaled_operand[(1,)](a, b, c, 32, 32, 32, BLOCK=32, backend="sim")
    message = str(info.value)
    assert message.startswith("tests/backend/cube_kernels.py:"), message
    assert "an operand of `tl.dot` computed by `mul`" in message and "acc = tl.dot(x * 2.0, w, acc)" in message
    ck.matmul_scaled_operand[(1,)](a, b, c, 32, 32, 32, BLOCK=32)  # the interpreter runs it


def _attention_reference(q, k, v, scale, causal):
    s = q.astype(np.float64) @ np.swapaxes(k.astype(np.float64), -1, -2) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True) @ v.astype(np.float64)


def _attention(causal, z=3, n=50, d=32, blocks=(16, 32)):
    """50 queries and keys (not multiples of the 16 x 32 blocks), 3 heads."""
    q, k, v = (data((z, n, d), dtypes.float16) for _ in range(3))
    return ck.attention_fwd[(ascdsl.cdiv(n, blocks[0]), z)], (q, k, v, np.zeros((z, n, d), np.float16), 0.25, n), \
        dict(D=d, BLOCK_M=blocks[0], BLOCK_N=blocks[1], CAUSAL=causal)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_attention_forward_takes_turns_between_the_cores_at_each_step(causal):
    """Each step of the loop over keys: the AIC stores q @ k^T to a slot of the workspace and sets flag 0; the
    AIVs wait for it, compute the online softmax, store p (fp16) to its slot and set flag 3, which the AIC waits
    for before p @ v, stored and flagged 2 to the AIVs, which wait for it and update acc; the slots alternate.
    The AIC runs q @ k^T a step ahead: each turn of its loop, that of its step, then p @ v of the step before."""
    _, args, meta = _attention(causal)
    kernel = ck.attention_fwd.specialize(*args, **meta).kernels[0]
    source = kernel_source("attention", tiling.variants([kernel]), tiling.layout("AttentionTiling", [kernel]),
                           "Ascend910B3")
    vector_part, cube_part = source.split("class AttentionFwdV1Cube")

    def order(text: str) -> list[str]:
        lines = [line.strip().split("  //")[0] for line in text.splitlines()]
        copies = ("CopyIn", "CopyA", "CopyB", "CopyOut")
        return [line.split("(")[0] if line.startswith(copies) else line for line in lines
                if "CrossCore" in line or line.startswith(copies)]

    assert order(cube_part) == ["CopyA", "CopyB", "CopyOut", "CrossCoreSetFlag<2, PIPE_FIX>(0);",
                                "CrossCoreWaitFlag<2, PIPE_S>(3);", "CopyA", "CopyB", "CopyOut",
                                "CrossCoreSetFlag<2, PIPE_FIX>(2);"]
    assert order(vector_part) == ["CrossCoreWaitFlag<2, PIPE_S>(0);", "CopyIn3", "CopyOut3",
                                  "CrossCoreSetFlag<2, PIPE_MTE3>(3);", "CrossCoreWaitFlag<2, PIPE_S>(2);", "CopyIn4",
                                  "CopyOut5"]
    assert "const int32_t slot = (start_n / 32) % 2;" in cube_part and "KERNEL_TYPE_MIX_AIC_1_2" in source
    ahead, behind = cube_part.split("if (turn > 0) {")
    assert "const int32_t start_n = turn;" in ahead and "CrossCoreSetFlag<2, PIPE_FIX>(0);" in ahead
    assert "const int32_t start_n = turn - 32;" in behind and "CrossCoreWaitFlag<2, PIPE_S>(3);" in behind


@pytest.mark.parametrize("causal, shape", [(False, {}), (True, {}), (True, dict(z=2, n=40, d=64, blocks=(32, 16)))],
                         ids=["full", "causal", "causal-d64-more-steps"])
def test_attention_forward_matches_the_interpreter(causal, shape):
    """The interpreter matches softmax(q k^T * scale) v; the simulator, running a block's AIC and AIVs
    interleaved at their flags, matches the interpreter (with 16-key blocks, 3 steps of both slots)."""
    launch, args, meta = _attention(causal, **shape)
    want, got = both(launch, *args, **meta)
    assert_close(want[3], _attention_reference(*args[:3], 0.25, causal).astype(np.float16), dtypes.float16)
    assert_close(got[3], want[3], dtypes.float16)


def test_attention_programs_of_no_valid_queries_store_nothing():
    """Attention forward on a grid of a query block past ``N_CTX`` (a loop of steps, a MIX kernel): its products
    have no valid rows, so the cube core computes and stores none of them but still sets and waits for each step's
    flags; the output stays as the interpreter leaves it."""
    launch, args, meta = _attention(False)
    launch = ck.attention_fwd[(ascdsl.cdiv(50, 16) + 1, 3)]
    want, got = both(launch, *args, **meta)
    assert_close(got[3], want[3], dtypes.float16)


def test_an_operand_computed_before_a_loop_of_steps_is_a_located_error():
    x, w, out = np.zeros((16, 16), np.float16), np.zeros((48, 16), np.float16), np.zeros((16, 16), np.float32)
    with pytest.raises(ascdsl.CompilationError) as info:
        ck.steps_of_a_scaled_operand[(1,)](x, w, out, 48, BLOCK=16, backend="sim")
    message = str(info.value)
    assert message.startswith("tests/backend/cube_kernels.py:"), message
    assert ("an operand of `tl.dot` in a loop of steps computed before the loop (the vector cores pass the operands "
            "they compute at each step)") in message and "x = (tl.load(" in message, message


def test_vector_work_before_and_after_one_product_is_a_located_error():
    a, b, c = np.zeros((16, 16), np.float16), np.zeros((16, 16), np.float16), np.zeros((16, 16), np.float32)
    with pytest.raises(ascdsl.CompilationError) as info:
        ck.scaled_operand_relu[(1,)](a, b, c, 16, 16, K=16, BLOCK=16, backend="sim")
    message = str(info.value)
    assert message.startswith("tests/backend/cube_kernels.py:"), message
    assert ("`maximum` after a product of an operand the kernel computes (vector work before `tl.dot` or after it, "
            "not both)") in message and "tl.maximum(y, 0.0)" in message, message


def test_a_product_of_a_computed_operand_is_a_located_error():
    a, b, c = np.zeros((16, 16), np.float16), np.zeros((16, 16), np.float16), np.zeros((16, 16), np.float32)
    with pytest.raises(ascdsl.CompilationError) as info:
        ck.two_products[(1,)](a, b, c, 16, 16, K=16, BLOCK=16, backend="sim")
    message = str(info.value)
    assert "a second `tl.dot` (one product per kernel)" in message and "z = tl.dot(y, w)" in message, message


@pytest.mark.parametrize("dtype", [dtypes.float16, dtypes.bfloat16], ids=str)
def test_column_major_operands_by_stride_parameters_match_the_interpreter(dtype):
    """A and B column-major (``stride_am = 1``, ``stride_bk = 1``), each alone and both: the kernel copies each as
    it lies in GM and LoadData transposes its fractals, chosen at run time by the strides."""
    def check(m, n, k, bm, bn, bk, a_cols, b_cols):
        grid, args, meta = _tutorial(dtype, m, n, k, bm, bn, bk)
        a, b = args[0], args[1]
        a_gm, a_strides = (np.ascontiguousarray(a.T), (1, m)) if a_cols else (a, (k, 1))
        b_gm, b_strides = (np.ascontiguousarray(b.T), (1, k)) if b_cols else (b, (n, 1))
        args = (a_gm, b_gm, *args[2:6], *a_strides, *b_strides, *args[10:])
        want, got = both(ck.matmul[grid], *args, **meta)
        assert_close(want[2], (a.astype(np.float64) @ b.astype(np.float64)).astype(dtype.np), dtype)
        assert_close(got[2], want[2], dtype, err_msg=f"{m}x{n}x{k} a_cols={a_cols} b_cols={b_cols}")
    each(check, [(*SHAPES[0], True, False), (*SHAPES[1], False, True), (*SHAPES[0], True, True),
                 (*SHAPES[2], True, True)])


@pytest.mark.parametrize("dtype", [dtypes.float16, dtypes.bfloat16], ids=str)
def test_a_transposed_operand_matches_the_interpreter(dtype):
    """``tl.dot(x, tl.trans(w))`` (attention's ``q @ k^T``): w is loaded N x K, row-major."""
    def check(m, n, k, bm, bn, bk):
        a, b = data((m, k), dtype), data((n, k), dtype)
        grid = (ascdsl.cdiv(m, bm), ascdsl.cdiv(n, bn))
        want, got = both(ck.matmul_trans_b[grid], a, b, np.zeros((m, n), dtype.np), m, n, k, k, 1, k, 1,
                         BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)
        assert_close(want[2], (a.astype(np.float64) @ b.astype(np.float64).T).astype(dtype.np), dtype)
        assert_close(got[2], want[2], dtype, err_msg=f"{m}x{n}x{k}")
    each(check, SHAPES[:2])


def test_attention_scores_of_keys_stored_n_by_d_run_as_a_mix_kernel():
    """``tl.dot(q, tl.trans(k))`` then a row softmax on the vector cores (a MIX kernel)."""
    m, n, d = 50, 40, 32
    q, k = data((m, d), dtypes.float16), data((n, d), dtypes.float16)
    want, got = both(ck.attention_scores[(ascdsl.cdiv(m, 16),)], q, k, np.zeros((m, n), np.float16), m, n, D=d,
                     BLOCK_M=16, BLOCK_N=64)
    s = q.astype(np.float64) @ k.astype(np.float64).T * 0.125
    e = np.exp(s - s.max(1, keepdims=True))
    assert_close(want[2], (e / e.sum(1, keepdims=True)).astype(np.float16), dtypes.float16)
    assert_close(got[2], want[2], dtypes.float16)


def test_a_transposed_left_operand_matches_the_interpreter():
    """``tl.trans`` of A loaded K x M with M contiguous (both operands run K along the rows of L1): fp16 by
    LoadData's fractal transpose, int8 (exact) by LoadDataWithTranspose's squares."""
    m, n, k = 40, 50, 64
    x, w = data((m, k), dtypes.float16), data((k, n), dtypes.float16)
    grid = (ascdsl.cdiv(m, 32), ascdsl.cdiv(n, 32))
    want, got = both(ck.matmul_trans_a[grid], np.ascontiguousarray(x.T), w, np.zeros((m, n), np.float32), m, n, K=k,
                     BLOCK_M=32, BLOCK_N=32)
    scale = np.abs(x).astype(np.float32) @ np.abs(w).astype(np.float32)
    assert_close(want[2], x.astype(np.float64) @ w.astype(np.float64), dtypes.float32, scale=scale)
    assert_close(got[2], want[2], dtypes.float32, scale=scale)
    a, b, _ = _int8(m, n, k)
    want, got = both(ck.matmul_trans_a[grid], np.ascontiguousarray(a.T), b, np.zeros((m, n), np.int32), m, n, K=k,
                     BLOCK_M=32, BLOCK_N=32)
    np.testing.assert_array_equal(want[2], a.astype(np.int32) @ b.astype(np.int32))
    np.testing.assert_array_equal(got[2], want[2])


def test_a_column_major_operand_by_literal_strides_matches_the_interpreter():
    m, n, k = 40, 20, 24
    a, b = data((m, k), dtypes.float16), data((k, n), dtypes.float16)
    want, got = both(ck.matmul_column_major_a[(ascdsl.cdiv(m, 32),)], np.ascontiguousarray(a.T), b,
                     np.zeros((m, n), np.float32), m, n, k, BLOCK=32)
    scale = np.abs(a).astype(np.float32) @ np.abs(b).astype(np.float32)
    assert_close(want[2], a.astype(np.float64) @ b.astype(np.float64), dtypes.float32, scale=scale)
    assert_close(got[2], want[2], dtypes.float32, scale=scale)


def _int8(m, n, k):
    """int8 A (m x k) and B (k x n) over their whole range, B given as its N x K transpose."""
    a = RNG.integers(-128, 128, (m, k), dtype=np.int8)
    b = RNG.integers(-128, 128, (k, n), dtype=np.int8)
    return a, b, np.ascontiguousarray(b.T)


def test_int8_operands_accumulate_exactly_in_int32():
    """int8 fractals are 16 x 32 (the K tails of 4 and 1 part-fill one). K contiguous (A row-major, B column-major)
    L0A/L0B take the fractals as they are; B row-major (the tutorial's) or A column-major run K along the rows of
    L1, and LoadDataWithTranspose transposes their 32 x 32 squares (N and M tails of odd fractals included)."""
    def check(m, n, k, bm, bn, bk, a_cols, b_cols):
        a, b, bt = _int8(m, n, k)
        a_gm, a_strides = (np.ascontiguousarray(a.T), (1, m)) if a_cols else (a, (k, 1))
        b_gm, b_strides = (bt, (1, k)) if b_cols else (b, (n, 1))
        grid = (ascdsl.cdiv(m, bm), ascdsl.cdiv(n, bn))
        want, got = both(ck.matmul_int8[grid], a_gm, b_gm, np.zeros((m, n), np.int32), m, n, k, *a_strides,
                         *b_strides, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)
        np.testing.assert_array_equal(want[2], a.astype(np.int32) @ b.astype(np.int32))
        np.testing.assert_array_equal(got[2], want[2], err_msg=f"{m}x{n}x{k} a_cols={a_cols} b_cols={b_cols}")
    each(check, [(20, 33, 100, 16, 32, 64, False, True), (40, 50, 129, 32, 32, 32, False, False),
                 (40, 50, 129, 48, 48, 32, True, False), (20, 33, 100, 16, 64, 64, True, True)])


def test_a_float32_operand_with_k_strided_is_a_located_error():
    """float32 fractals (16 x 8) are not transposed on the way to L0A/L0B, so B must run K contiguous (as an N x K
    block): a literal stride is refused at compile time, a stride parameter at launch."""
    m, n, k = 32, 32, 64
    a, b = data((m, k), dtypes.float32), data((k, n), dtypes.float32)
    with pytest.raises(ascdsl.CompilationError) as info:
        ck.matmul_fixed_n[(1,)](a, b, np.zeros((m, n), np.float32), m, N=n, K=k, BLOCK=32, backend="sim")
    message = str(info.value)
    assert "a float32 operand block whose K is strided" in message and "w = tl.load(b_ptr" in message, message
    grid, args, meta = _tutorial(dtypes.float32, m, n, k, 32, 32, 32)
    with pytest.raises(ascdsl.CompilationError) as info:
        ck.matmul[grid](*args, backend="sim", **meta)
    message = str(info.value)
    assert "copies the columns of `b` as contiguous, but `stride_bk` is 32 at this launch" in message, message
    assert "b = tl.load(b_ptr" in message


def test_vector_work_on_an_int32_product_is_a_located_error():
    a, _, bt = _int8(16, 16, 32)
    with pytest.raises(ascdsl.CompilationError) as info:
        ck.int8_dequantised[(1,)](a, bt, np.zeros((16, 16), np.float32), 16, 16, K=32, BLOCK=16, backend="sim")
    message = str(info.value)
    assert "vector work on an int32 product (the workspace" in message and "y = tl.dot(x, tl.trans(w))" in message


def test_float32_operands_with_k_contiguous_match_the_interpreter():
    """The A2 cube multiplies float32 (16 x 8 fractals, a quarter of half's rate): A row-major, B column-major."""
    m, n, k = 40, 50, 70
    a, b = data((m, k), dtypes.float32), data((k, n), dtypes.float32)
    grid = (ascdsl.cdiv(m, 32) * ascdsl.cdiv(n, 32),)
    args = (a, np.ascontiguousarray(b.T), np.zeros((m, n), np.float32), m, n, k, k, 1, 1, k, n, 1)
    want, got = both(ck.matmul[grid], *args, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
    scale = np.abs(a) @ np.abs(b)
    assert_close(want[2], a.astype(np.float64) @ b.astype(np.float64), dtypes.float32, scale=scale)
    assert_close(got[2], want[2], dtypes.float32, scale=scale)


def test_a_loop_over_k_without_an_iteration_stores_zeros():
    """K = 0: no Mmad accumulates, so L0C (poisoned by the simulator) becomes 0 by a product of zeroed L0A/L0B
    (InitConstValue) instead of being stored as it is; int8 too (zeroed as 16-bit words)."""
    m, n = 40, 50
    grid, args, meta = _tutorial(dtypes.float16, m, n, 0, 32, 32, 32)
    c = np.full((m, n), np.nan, np.float16)
    want, got = both(ck.matmul[grid], *args[:2], c, *args[3:], **meta)
    np.testing.assert_array_equal(want[2], np.zeros((m, n), np.float16))
    np.testing.assert_array_equal(got[2].view(np.uint16), want[2].view(np.uint16))  # +0.0, no NaN
    a, _, bt = _int8(m, n, 0)
    want, got = both(ck.matmul_int8[(2, 2)], a, bt, np.full((m, n), 7, np.int32), m, n, 0, 0, 1, 1, 0,
                     BLOCK_M=32, BLOCK_N=32, BLOCK_K=64)
    np.testing.assert_array_equal(want[2], np.zeros((m, n), np.int32))
    np.testing.assert_array_equal(got[2], want[2])


def test_an_operand_neither_row_nor_column_contiguous_is_a_located_error_at_launch():
    grid, args, meta = _tutorial(dtypes.float16, 32, 32, 32, 32, 32, 32)
    a = np.zeros((32, 64), np.float16)  # every other column of it: stride_am = 64, stride_ak = 2
    with pytest.raises(ascdsl.CompilationError) as info:
        ck.matmul[grid](a, *args[1:6], 64, 2, *args[8:], backend="sim", **meta)
    message = str(info.value)
    assert "copies `a` with its rows or its columns contiguous, but `stride_ak` is 2 and `stride_am` is 64" in message
    assert "a = tl.load(a_ptr" in message, message


def test_a_row_stride_past_16_bits_is_a_located_error_at_launch():
    m, n, k = 2, 16, 70000
    a, b, c = np.zeros((m, k), np.float16), np.zeros((k, n), np.float16), np.zeros((m, n), np.float32)
    with pytest.raises(ascdsl.CompilationError) as info:
        ck.matmul_grid2[(1, 1)](a, b, c, m, n, k, BLOCK_M=16, BLOCK_N=16, BLOCK_K=64, backend="sim")
    message = str(info.value)
    assert "the row stride `K` of `a` is 70000 at this launch" in message and "x = tl.load(a_ptr" in message


@CANN
def test_generated_cube_kernels_type_check_against_cann(tmp_path):
    kernels = [ck.matmul.specialize(*_tutorial(dt, 40, 50, 70, 32, 32, 32)[1], BLOCK_M=32, BLOCK_N=32,
                                    BLOCK_K=32).kernels[0] for dt in (dtypes.float16, dtypes.bfloat16)]
    m, n, k = 70, 45, 100
    kernels.append(ck.matmul_grid2.specialize(np.zeros((m, k), np.float16), np.zeros((k, n), np.float16),
                                              np.zeros((m, n), np.float32), m, n, k, BLOCK_M=32, BLOCK_N=32,
                                              BLOCK_K=64).kernels[0])
    a, b = np.zeros((m, k), np.float16), np.zeros((n, k), np.float16)
    kernels.append(ck.matmul_trans_b.specialize(a, b, np.zeros((m, n), np.float16), m, n, k, k, 1, k, 1, BLOCK_M=32,
                                                BLOCK_N=32, BLOCK_K=32).kernels[0])
    kernels.append(ck.matmul_column_major_a.specialize(a, b, np.zeros((m, n), np.float32), m, n, k,
                                                       BLOCK=32).kernels[0])
    x, w = np.zeros((m, k), np.int8), np.zeros((k, n), np.int8)
    kernels.append(ck.matmul_int8.specialize(x, w, np.zeros((m, n), np.int32), m, n, k, k, 1, n, 1, BLOCK_M=32,
                                             BLOCK_N=32, BLOCK_K=64).kernels[0])
    x, w = np.zeros((m, k), np.float32), np.zeros((n, k), np.float32)
    kernels.append(ck.matmul.specialize(x, w, np.zeros((m, n), np.float32), m, n, k, k, 1, 1, k, n, 1, BLOCK_M=32,
                                        BLOCK_N=32, BLOCK_K=32).kernels[0])
    for causal in (False, True):  # MIX kernels whose cores take turns at each step
        _, args, meta = _attention(causal)
        kernels.append(ck.attention_fwd.specialize(*args, **meta).kernels[0])
    assert_type_checks("cube_matmul", kernels, tmp_path)


def test_blocks_over_l0a_are_a_located_error():
    grid, args, meta = _tutorial(dtypes.float16, 256, 32, 256, 256, 32, 128)
    with pytest.raises(ascdsl.CompilationError) as info:
        ck.matmul[grid](*args, backend="sim", **meta)
    message = str(info.value)
    assert "need 131072 bytes of L0A, which holds 65536" in message and "acc = tl.dot(a, b, acc)" in message
