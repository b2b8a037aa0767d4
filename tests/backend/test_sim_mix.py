"""MIX kernels (issue 26): ``tl.dot`` on the AI cube core and the vector work after it (bias, activation,
scaling, a residual) on its two AI vector cores, the float32 product going through a GM workspace between
``CrossCoreSetFlag`` and ``CrossCoreWaitFlag``; run on the simulator against the interpreter within the
output dtype's tolerance. The split itself is checked on the interpreter, bit for bit."""
import numpy as np
import pytest

import ascdsl
from ascdsl import dtypes, interpreter
from ascdsl.backend.cube import mix
from ascdsl.backend.render.ascendc import kernel_source
from ascdsl.backend.plan import tiling
from ascdsl.platforms import get_platform
from ascdsl.testing import assert_close
from tests.backend import cube_kernels as ck
from tests.backend.helpers import CANN, assert_type_checks, bits, both, data, each

PLATFORM = get_platform("Ascend910B3")


def _bias_relu(m, n, k, bm, bn, bk):
    a, b, bias = data((m, k), dtypes.float16), data((k, n), dtypes.float16), data((n,), dtypes.float16)
    grid = (ascdsl.cdiv(m, bm) * ascdsl.cdiv(n, bn),)
    return ck.matmul_bias_relu, grid, [a, b, bias, np.zeros((m, n), np.float16), m, n, k], \
        dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)


def _gelu(dtype, m, n, k, bm, bn, bk):
    a, b = data((m, k), dtypes.float16), data((k, n), dtypes.float16)
    grid = (ascdsl.cdiv(m, bm), ascdsl.cdiv(n, bn))
    return ck.matmul_scaled_gelu, grid, [a, b, np.zeros((m, n), dtype.np), m, n, k, 0.125], \
        dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)


def _residual(z, m, n, k, bm, bn, bk):
    a, b, r = data((z, m, k), dtypes.float16), data((z, k, n), dtypes.float16), data((z, m, n), dtypes.float16)
    grid = (ascdsl.cdiv(m, bm) * ascdsl.cdiv(n, bn), z)
    return ck.batched_matmul_residual, grid, [a, b, r, np.zeros((z, m, n), np.float16), m, n, k], \
        dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)


def _leaky(m, n, k, bm, bn):
    x, w = data((m, k), dtypes.bfloat16), data((k, n), dtypes.bfloat16)
    grid = (ascdsl.cdiv(m, bm), ascdsl.cdiv(n, bn))
    return ck.small_linear_leaky, grid, [x, w, np.zeros((m, n), dtypes.bfloat16.np), m, n], \
        dict(K=k, BLOCK_M=bm, BLOCK_N=bn)


def _softmax(m, n, d, bm, bn):
    q, kt = data((m, d), dtypes.float16), data((d, n), dtypes.float16)
    return ck.scores_softmax, (ascdsl.cdiv(m, bm),), [q, kt, np.zeros((m, n), np.float16), m, n], \
        dict(D=d, BLOCK_M=bm, BLOCK_N=bn)


def _exp_rows(m, n, k, bm, bn, dtype=dtypes.float16):
    x, v = data((m, k), dtype), data((k, n), dtype)
    grid = (ascdsl.cdiv(m, bm), ascdsl.cdiv(n, bn))
    return ck.row_softmax_times_v, grid, [x, v, np.zeros((m, n), dtype.np), m, n], dict(K=k, BLOCK_M=bm, BLOCK_N=bn)


def _scaled(m, n, k, block):
    a, b = data((m, k), dtypes.float16), data((k, n), dtypes.float16)
    return ck.scaled_operands, (ascdsl.cdiv(m, block), ascdsl.cdiv(n, block)), \
        [a, b, np.zeros((m, n), np.float32), m, n], dict(K=k, BLOCK=block)


CASES = [(_bias_relu, (40, 50, 70, 32, 32, 32)), (_gelu, (dtypes.float16, 70, 45, 100, 32, 16, 64)),
         (_residual, (3, 20, 40, 50, 16, 32, 32)), (_leaky, (50, 20, 48, 32, 16)), (_softmax, (50, 40, 32, 16, 64)),
         (_exp_rows, (50, 40, 32, 16, 32)), (_scaled, (40, 20, 48, 16))]
"""One launch of each MIX kernel: its builder (the kernel, grid, arguments and constexprs, drawn when called)
and the builder's arguments."""


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0].__name__.strip("_"))
def test_the_two_parts_one_after_the_other_store_what_the_kernel_stores(case):
    """The split on the interpreter: the part that runs first (the cube part, or the vector part where the
    kernel computes an operand of its product) writes its tiles to the workspace, the other reads them back
    and stores exactly what the whole kernel stores."""
    build, params = case
    fn, grid, args, meta = build(*params)
    kernel = fn.specialize(*args, **meta).kernels[0]
    whole = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    interpreter.run(kernel, whole, grid)
    parts = mix.split(kernel, PLATFORM)
    assert parts.before == (build in (_exp_rows, _scaled)) == mix.before(kernel, PLATFORM)
    programs = int(np.prod(grid))
    words = np.full(mix.workspace_elements(kernel, PLATFORM, programs), np.nan, np.float32)
    workspace = words.view(parts.dtype.np)
    split = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    first, second = (parts.vector, parts.cube.kernel) if parts.before else (parts.cube.kernel, parts.vector)
    interpreter.run(first, [*split, workspace], grid)
    assert not np.isnan(workspace).all()
    interpreter.run(second, [*split, workspace], grid)
    out = next(i for i, a in enumerate(args) if isinstance(a, np.ndarray) and not a.any())
    assert whole[out].any()
    np.testing.assert_array_equal(bits(split[out]), bits(whole[out]))


def test_matmul_bias_relu_with_tails_matches_the_interpreter():
    """fp16 operands, a per-column fp16 bias loaded before the loop over K, relu, fp16 out; M, N and K not
    multiples of the blocks; 35 programs over the 20 AICs, so AICs take two programs and both AIVs work."""
    def check(m, n, k, bm, bn, bk):
        fn, grid, args, meta = _bias_relu(m, n, k, bm, bn, bk)
        want, got = both(fn[grid], *args, **meta)
        a, b, bias = (x.astype(np.float64) for x in args[:3])
        assert_close(want[3], np.maximum(a @ b + bias, 0).astype(np.float16), dtypes.float16)
        assert_close(got[3], want[3], dtypes.float16, err_msg=f"{m}x{n}x{k}")
    each(check, [(40, 50, 70, 32, 32, 32), (100, 70, 129, 16, 16, 64), (16, 16, 16, 16, 16, 16),
                 (160, 190, 40, 16, 16, 32)])  # 120 programs: 6 per AIC


@pytest.mark.parametrize("dtype", [dtypes.float16, dtypes.bfloat16], ids=str)
def test_scaled_gelu_on_a_2d_grid_matches_the_interpreter(dtype):
    fn, grid, args, meta = _gelu(dtype, 70, 45, 100, 32, 16, 64)
    want, got = both(fn[grid], *args, **meta)
    y = args[0].astype(np.float64) @ args[1].astype(np.float64) * 0.125
    assert_close(want[2], (y / (1 + np.exp(-1.702 * y))).astype(dtype.np), dtype)
    assert_close(got[2], want[2], dtype)


def test_batched_matmul_with_a_residual_matches_the_interpreter():
    fn, grid, args, meta = _residual(3, 20, 40, 50, 16, 32, 32)
    want, got = both(fn[grid], *args, **meta)
    a, b, r = (x.astype(np.float64) for x in args[:3])
    assert_close(want[3], (a @ b + r).astype(np.float16), dtypes.float16)
    assert_close(got[3], want[3], dtypes.float16)


def test_one_product_without_a_loop_then_a_leaky_relu_matches_the_interpreter():
    fn, grid, args, meta = _leaky(50, 20, 48, 32, 16)
    want, got = both(fn[grid], *args, **meta)
    y = args[0].astype(np.float64) @ args[1].astype(np.float64)
    assert_close(want[2], np.where(y > 0, y, 0.01 * y).astype(dtypes.bfloat16.np), dtypes.bfloat16)
    assert_close(got[2], want[2], dtypes.bfloat16)


def test_attention_scores_then_a_row_softmax_match_the_interpreter():
    """Reductions in the epilogue: the masked columns (0 in the workspace) become -inf before the row max."""
    fn, grid, args, meta = _softmax(50, 40, 32, 16, 64)
    want, got = both(fn[grid], *args, **meta)
    s = args[0].astype(np.float64) @ args[1].astype(np.float64) * 0.125
    e = np.exp(s - s.max(1, keepdims=True))
    assert_close(want[2], (e / e.sum(1, keepdims=True)).astype(np.float16), dtypes.float16)
    assert_close(got[2], want[2], dtypes.float16)


def test_the_product_stored_twice_runs_the_second_store_on_the_vector_cores():
    m, n, k = 40, 50, 70
    a, b = data((m, k), dtypes.float16), data((k, n), dtypes.float16)
    want, got = both(ck.matmul_two_outputs[(2, 2)], a, b, np.zeros((m, n), np.float32), np.zeros((m, n), np.float16),
                     m, n, k, BLOCK=32)
    product = np.abs(a).astype(np.float32) @ np.abs(b).astype(np.float32)
    assert_close(want[2], a.astype(np.float64) @ b.astype(np.float64), dtypes.float32, scale=product)
    assert_close(got[2], want[2], dtypes.float32, scale=product)
    assert_close(got[3], want[3], dtypes.float16)


def test_the_tutorial_matmul_stays_a_pure_cube_kernel():
    m, n, k = 40, 50, 70
    args = (np.zeros((m, k), np.float16), np.zeros((k, n), np.float16), np.zeros((m, n), np.float16), m, n, k, k, 1,
            n, 1, n, 1)
    kernel = ck.matmul.specialize(*args, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32).kernels[0]
    assert not mix.is_mix(kernel, PLATFORM)
    source = str(kernel_source("cube", tiling.variants([kernel]), tiling.layout("CubeTiling", [kernel]), PLATFORM))
    assert "KERNEL_TYPE_AIC_ONLY" in source and "CrossCore" not in source


def test_mix_kernel_source_runs_the_product_on_the_aic_and_the_epilogue_on_its_aivs():
    fn, grid, args, meta = _bias_relu(40, 50, 70, 32, 32, 32)
    kernel = fn.specialize(*args, **meta).kernels[0]
    layout = tiling.layout("MixTiling", [kernel])
    source = str(kernel_source("mix", tiling.variants([kernel]), layout, PLATFORM))
    assert "KERNEL_TASK_TYPE(1, KERNEL_TYPE_MIX_AIC_1_2)" in source
    aic, aiv = source.index("if ASCEND_IS_AIC {"), source.index("if ASCEND_IS_AIV {")
    flag, wait = source.index("CrossCoreSetFlag<2, PIPE_FIX>(0);"), source.index("CrossCoreWaitFlag<2, PIPE_S>(0);")
    assert aic < flag < aiv < wait
    assert "QuantMode_t::NoQuant" in source and "Fixpipe<float, float, CFG_ROW_MAJOR>(workspaceGm[" in source
    assert "program = aic + GetSubBlockIdx() * GetBlockNum()" in source and "Mmad(" not in source.split("class")[1]


def test_a_workspace_past_int32_offsets_is_a_located_error_at_launch():
    """524289 batches of a 1 x 1 product in 64 x 64 blocks: the last tile ends past 2**31 elements."""
    z = 524289
    a, b, r, c = (np.zeros((z, 1, 1), np.float16) for _ in range(4))
    with pytest.raises(ascdsl.CompilationError) as info:
        ck.batched_matmul_residual[(1, z)](a, b, r, c, 1, 1, 1, BLOCK_M=64, BLOCK_N=64, BLOCK_K=16, backend="sim")
    message = str(info.value)
    assert "524289 programs of 64 x 64 float32 products need a workspace of 2147487744 elements" in message
    assert "acc = tl.dot(x, w, acc)" in message, message


def test_an_epilogue_over_the_vector_cores_ub_is_a_located_error():
    fn, grid, args, meta = _bias_relu(128, 256, 64, 128, 256, 32)
    with pytest.raises(ascdsl.CompilationError) as info:
        fn[grid](*args, backend="sim", **meta)
    message = str(info.value)
    assert "bytes of UB, more than the 188416 bytes" in message and "acc = tl.dot(x, w, acc)" in message
    assert "note: the vector work after `tl.dot` runs on the vector cores, on the product's whole 128 x 256" in message


@pytest.mark.parametrize("dtype", [dtypes.float16, dtypes.bfloat16], ids=str)
def test_an_operand_computed_on_the_vector_cores_matches_the_interpreter(dtype):
    """Attention's P @ V: the AIVs exponentiate the rows of x past their max and store p (v's dtype) to the
    workspace, flag 1 to their AIC, which multiplies p by v. M and N not multiples of the blocks; 4 x 2
    programs over the 20 AICs, 5 x 5, and 13 x 3, so AICs take two programs and both AIVs work."""
    def check(m, n, k, bm, bn):
        fn, grid, args, meta = _exp_rows(m, n, k, bm, bn, dtype)
        want, got = both(fn[grid], *args, **meta)
        x = args[0].astype(np.float64)
        p = np.exp(x - x.max(1, keepdims=True)).astype(dtype.np).astype(np.float64)
        assert_close(want[2], (p @ args[1].astype(np.float64)).astype(dtype.np), dtype)
        assert_close(got[2], want[2], dtype, err_msg=f"{m}x{n}x{k}")
    each(check, [(50, 40, 32, 16, 32), (70, 75, 64, 16, 16), (200, 90, 16, 16, 32)])


def test_both_operands_computed_match_the_interpreter():
    """``tl.dot(x * 2.0, w - 1.0, acc)``: both computed tiles in one program's workspace slot, a then b."""
    fn, grid, args, meta = _scaled(40, 20, 48, 16)
    want, got = both(fn[grid], *args, **meta)
    a, b = (args[0] * np.float16(2)).astype(np.float64), (args[1] - np.float16(1)).astype(np.float64)  # fp16 tiles
    product = np.abs(a) @ np.abs(b)
    assert_close(want[2], a @ b, dtypes.float32, scale=product)
    assert_close(got[2], want[2], dtypes.float32, scale=product)


@CANN
def test_generated_mix_kernels_type_check_against_cann(tmp_path):
    kernels = [fn.specialize(*args, **meta).kernels[0] for fn, _, args, meta in (b(*p) for b, p in CASES)]
    assert_type_checks("mix_matmul", kernels, tmp_path)
