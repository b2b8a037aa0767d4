"""SoftmaxGrad (ops/softmax_grad.py): ND, is_front, long rows, NZ, the documented example, errors,
PyTorch, hypothesis, and the impl="api" lowering (host tiling table, simulator runs)."""
import dataclasses

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes, layout, sim
from ascdsl.platforms import get_platform
from ascdsl.sim.build import build_stats
from ascdsl.sim.softmax_tiling import FIELDS, host_library, softmax_grad_tiling, softmax_grad_tmp_size
from ascdsl.testing import assert_close, error_scales, expected_outputs
from ops.softmax_grad import OP, reference, render_softmax_grad_api, softmax_grad, softmax_grad_host

DTYPES = ("float32", "float16", "bfloat16")
B3 = get_platform("Ascend910B3")


def make_inputs(shape, dtype, seed=0):
    """grad ~ N(0, 1) and src a real softmax output along the last axis."""
    rng = np.random.default_rng(seed)
    np_dtype = dtypes.lookup(dtype).np
    x = rng.standard_normal(shape)
    e = np.exp(x - (x.max(axis=-1, keepdims=True) if x.size else 0))
    src = e / e.sum(axis=-1, keepdims=True) if x.size else e
    return rng.standard_normal(shape).astype(np_dtype), src.astype(np_dtype)


def expected(grad, src, is_front=False):
    g, s = grad.astype(np.float64), src.astype(np.float64)
    total = (g * s).sum(axis=-1, keepdims=True)
    if is_front:
        return np.broadcast_to(total, grad.shape[:-1] + (32 // grad.dtype.itemsize,))
    return (g - total) * s


def plan(shape, dtype="float32", is_front=False, nz=False, platform=B3):
    desc = ascdsl.TensorDesc(tuple(shape), dtypes.lookup(dtype))
    return softmax_grad_host(desc, desc, is_front, platform, nz=nz)


SHAPES = [(1,), (31,), (32,), (33,), (1, 1), (4, 31), (4, 32), (4, 33), (9, 3), (100, 5), (1000, 17),
          (2, 3, 7), (2,) * 8, (2, 10000), (3, 0), (0, 5), (0,), (2, 0, 3)]


@pytest.mark.parametrize("is_front", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_sweep_against_float64(shape, dtype, is_front):
    grad, src = make_inputs(shape, dtype)
    actual = softmax_grad(grad, src, is_front=is_front)
    assert actual.dtype == grad.dtype
    assert actual.shape == (shape[:-1] + (32 // grad.dtype.itemsize,) if is_front else shape)
    assert_close(actual, expected(grad, src, is_front))


@pytest.mark.parametrize("dtype", DTYPES)
def test_rows_larger_than_ub(dtype):
    k = B3.ub_bytes // dtypes.lookup(dtype).itemsize + 5
    assert plan((2, k), dtype).variant == "two_pass"
    grad, src = make_inputs((3, k), dtype)
    assert_close(softmax_grad(grad, src), expected(grad, src))
    assert_close(softmax_grad(grad, src, is_front=True), expected(grad, src, True))


def test_arbitrary_src_and_variants():
    rng = np.random.default_rng(4)
    grad, src = rng.standard_normal((2, 5, 40)).astype(np.float32), rng.standard_normal((2, 5, 40)).astype(np.float32)
    assert_close(softmax_grad(grad, src), expected(grad, src))
    assert plan((1000, 17)).variant == "rows" and plan((1000, 17)).grid == (B3.vector_core_count,)
    assert plan((5, 33)).grid == (5,)
    assert plan((2, 10000)).variant == "two_pass" and plan((2, 4000), "float16").variant == "rows"
    assert plan((2, 2000)).variant == "rows" and plan((2, 2000)).constexprs["ROWS"] == 1  # one row per tile
    assert plan((0, 4)).grid == (0,) and plan((4, 0)).grid == (0,) and plan((4, 0), is_front=True).grid == (4,)
    small = get_platform("Ascend310P3")
    assert plan((30, 7), "float16", platform=small).grid == (small.vector_core_count,)


def test_a_cores_rows_come_in_tiles_whose_loads_overlap():
    """541 rows of 613 floats are 14 a core: tiles of 4 (TILES_PER_CORE a core), not one tile the core loads,
    computes and stores in turn; short rows keep tiles of MIN_TILE_BYTES (1000 rows of 100: 21 a tile)."""
    assert plan((541, 613)).constexprs["ROWS"] == 4
    assert plan((1000, 100)).constexprs["ROWS"] == 21


def test_the_rows_past_the_last_round_of_the_cores_go_in_parts():
    """82 rows of 6587 floats on 40 cores (issue 24's sweep) put 3 rows on 2 cores where the mean is 2.05 (1.35x of
    the floor); now every core takes 2 whole rows and the 2 rows past them go in 20 parts of 336 columns over the
    40 cores, in the two-pass kernel: each part sums its whole row and writes its own columns (1.18x). 44 rows of
    33072 (over the UB): 1 whole row a core and 4 rows in 10 parts (1.65x -> 1.19x). Rows that fit the UB keep
    the full-load kernel where a core has more than 2 whole rows (125x3334), a row would go in fewer than 4 parts
    (100x5000), in 16-bit (the vector unit bounds them), for a whole round (80 rows) and with is_front."""
    for shape, per_core, parts, part_k in [((82, 6587), 2, 20, 336), ((44, 33072), 1, 10, 3312), ((5, 4100), 0, 8, 520)]:
        p = plan(shape)
        rest = shape[0] % 40
        assert p.variant == "two_pass" and p.grid == (40 if shape[0] >= 40 else rest * parts,), p
        assert (p.scalars["per_core"], p.scalars["big_cores"], p.scalars["tail"]) == (per_core, 0, rest * parts), p
        assert (p.scalars["parts"], p.scalars["part_k"]) == (parts, part_k), p
    for shape, dtype, is_front in [((125, 3334), "float32", False), ((100, 5000), "float32", False),
                                   ((82, 6587), "float16", False), ((80, 6587), "float32", False),
                                   ((82, 6587), "float32", True)]:
        p = plan(shape, dtype, is_front)
        assert p.variant == "rows" and p.scalars["per_core"] == shape[0] // 40, p
    assert plan((44, 33072), is_front=True).scalars["tail"] == 0


def test_the_parts_of_a_long_row_exchange_their_partial_sums():
    """44 rows of 33072 floats: each of the 40 parts of the 4 rows past the last whole round sums only its own 3312
    columns, exchanges that sum with its row's 9 other parts (GM scratch of a float32 slot a program, a grid
    barrier) and writes its columns: 1.19x -> 1.10x of the floor. Parts whose exchange would save a re-read of
    fewer than EXCHANGE_ELEMENTS elements (82x6587's rows) each sum their whole row, as before; is_front has no
    parts. On the interpreter and the simulator (the same kernel, 5 rows of 20000 in 8 parts each): the result,
    and the GM bytes read against the kernel whose parts each sum their whole row."""
    p = plan((44, 33072))
    assert p.constexprs["EXCHANGE"] and p.scratch == {"partials_ptr": (tl.float32, 40)}, p
    assert not plan((82, 6587)).constexprs["EXCHANGE"] and not plan((44, 33072), is_front=True).constexprs["EXCHANGE"]
    assert plan((82, 6587)).scratch == {"partials_ptr": (tl.float32, 40)}
    grad, src = make_inputs((5, 20000), "float32", seed=3)
    p = plan((5, 20000))
    assert p.constexprs["EXCHANGE"] and p.grid == (40,) and (p.scalars["tail"], p.scalars["parts"]) == (40, 8), p
    assert_close(softmax_grad(grad, src, backend="interpreter"), expected(grad, src))
    read = {}
    for exchange in (True, False):
        out = np.empty_like(grad)
        with sim.record() as runs:
            dataclasses.replace(p, constexprs={**p.constexprs, "EXCHANGE": exchange})(grad, src, out, backend="sim")
        assert_close(out, expected(grad, src))
        read[exchange] = runs[0].stats.gm_read_bytes
    # each part reads its own columns of both inputs twice (its sum, then its output) and its row's 8 partial sums,
    # instead of its whole row and its own columns
    assert read[True] == 2 * 2 * grad.nbytes + 40 * 8 * 4, read
    assert read[False] == 40 * 2 * grad[0].nbytes + 2 * grad.nbytes, read


def test_padding_never_changes_the_result():
    """Row lengths around the 32-byte block give the same values as the unpadded NumPy sums."""
    grad, src = make_inputs((6, 40), "float16", seed=2)
    for k in (1, 15, 16, 17, 31, 33):
        g, s = np.ascontiguousarray(grad[:, :k]), np.ascontiguousarray(src[:, :k])
        assert_close(softmax_grad(g, s), expected(g, s))


# ----------------------------------------------------------------------------- the documented example

from tests.seed_data import DOC_DST, DOC_GRAD  # noqa: E402  (the documented example)


def test_documented_example():
    """src is all 2.0 (the document prints only two of its rows). The float32 row sums round like
    the API's, so a few elements sit 1-2 ulp from the float64 result rounded to float32."""
    src = np.full((8, 8), 2.0, np.float32)
    dst = softmax_grad(DOC_GRAD, src)
    exact = expected(DOC_GRAD, src)
    assert_close(dst, exact)
    ulps = np.abs(dst.view(np.int32).astype(np.int64) - exact.astype(np.float32).view(np.int32))
    assert ulps.max() <= 2
    np.testing.assert_array_equal(np.round(dst, 3), DOC_DST)  # the table's printed precision
    np.testing.assert_array_equal(np.round(exact, 3).astype(np.float32), DOC_DST)


# ----------------------------------------------------------------------------- NZ


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (5, 7), (16, 16), (17, 33), (2, 40, 20), (3, 2, 31, 48)], ids=str)
def test_nz_matches_nd(shape, dtype):
    grad, src = make_inputs(shape, dtype, seed=7)
    m, k = shape[-2:]
    nz = softmax_grad(layout.nd_to_nz(grad), layout.nd_to_nz(src), format="NZ")
    assert nz.shape == layout.nd_to_nz(grad).shape
    assert_close(layout.nz_to_nd(nz, m, k), softmax_grad(grad, src).astype(np.float64))
    assert not np.any(nz.astype(np.float64) * (layout.nd_to_nz(np.ones(shape, np.float32)) == 0))  # padding stays 0
    assert_close(nz, reference(layout.nd_to_nz(grad).astype(np.float64),
                               layout.nd_to_nz(src).astype(np.float64), format="NZ"))


def test_nz_layout_round_trip_and_addressing():
    x = np.arange(20 * 28, dtype=np.float32).reshape(20, 28)
    nz = layout.nd_to_nz(x)
    assert nz.shape == (2, 32, 16)
    flat = nz.reshape(-1)
    mp = 32
    for i, j in ((0, 0), (3, 17), (19, 27), (7, 15), (7, 16)):
        assert flat[((j // 16) * mp + i) * 16 + j % 16] == x[i, j]  # reference §5 addressing
    assert (nz[1, :, 12:] == 0).all() and (nz[:, 20:, :] == 0).all()
    np.testing.assert_array_equal(layout.nz_to_nd(nz, 20, 28), x)
    assert layout.nd_to_nz(np.zeros((3, 0, 5))).shape == (3, 1, 0, 16)
    with pytest.raises(ascdsl.InputValueError, match=r"has shape \[\.\.\., 2, 32, 16\], got \(2, 16, 16\)"):
        layout.nz_to_nd(nz[:, :16], 20, 28)
    with pytest.raises(ascdsl.InputValueError, match="rank >= 2"):
        layout.nd_to_nz(np.zeros(5))


# ----------------------------------------------------------------------------- PyTorch and hypothesis


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(7, 33), (2, 3, 64), (3, 9000), (1,)], ids=str)
def test_against_pytorch(shape, dtype):
    torch = pytest.importorskip("torch")
    grad, src = make_inputs(shape, dtype, seed=9)
    want = torch.ops.aten._softmax_backward_data(torch.from_numpy(grad.astype(np.float32)),
                                                 torch.from_numpy(src.astype(np.float32)), -1, torch.float32)
    assert_close(softmax_grad(grad, src), want.numpy().astype(np.float64))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=1, max_size=4), st.sampled_from(DTYPES), st.booleans())
def test_hypothesis_shapes(shape, dtype, is_front):
    grad, src = make_inputs(tuple(shape), dtype)
    assert_close(softmax_grad(grad, src, is_front=is_front), expected(grad, src, is_front))


# ----------------------------------------------------------------------------- errors

ERRORS = [
    (dict(src=(4, 6)), ValueError, r"same shape, got \(4, 5\) and \(4, 6\)"),
    (dict(src_dtype=np.float16), TypeError, r"same dtype, got float32 and float16"),
    (dict(dtype=np.int32), TypeError, r"supports float32, float16 and bfloat16, not int32"),
    (dict(dtype=np.float64), TypeError, r"unsupported dtype float64"),
    (dict(grad=(), src=()), ValueError, r"rank >= 1, got a scalar"),
    (dict(dtype=ml_dtypes.bfloat16, platform="Ascend310P3"), TypeError, r"Ascend310P3 cannot cast bfloat16"),
    (dict(format="NCHW"), ValueError, r"format must be 'ND' or 'NZ', got 'NCHW'"),
    (dict(impl="tbe"), ValueError, r"impl must be 'dsl' or 'api', got 'tbe'"),
    (dict(is_front=1), TypeError, r"is_front must be a bool, got 1"),
    (dict(grad=(2, 16, 16), src=(2, 16, 16), format="NZ", is_front=True), ValueError,
     r"is_front is not supported with format='NZ'"),
    (dict(grad=(2, 16, 8), src=(2, 16, 8), format="NZ"), ValueError, r"an NZ tensor has shape"),
    (dict(grad=(16, 16), src=(16, 16), format="NZ"), ValueError, r"an NZ tensor has shape"),
    (dict(impl="api", backend="interpreter"), ValueError, r"only the simulator runs: pass backend='sim'"),
    (dict(impl="api", backend="sim", dtype=ml_dtypes.bfloat16), TypeError, r"impl='api' cannot serve bfloat16"),
    (dict(impl="api", backend="sim", grad=(2, 50000), src=(2, 50000)), ValueError,
     r"impl='api' cannot serve rows of 50000 float32 elements"),
]


@pytest.mark.parametrize("spec,kind,message", ERRORS, ids=[m for _, _, m in ERRORS])
def test_clear_errors(spec, kind, message):
    dtype = spec.pop("dtype", np.float32)
    grad = np.zeros(spec.pop("grad", (4, 5)), dtype)
    src = np.zeros(spec.pop("src", grad.shape), spec.pop("src_dtype", dtype))
    with pytest.raises(kind, match=message) as info:
        softmax_grad(grad, src, **spec)
    assert isinstance(info.value, ascdsl.Error)


# ----------------------------------------------------------------------------- impl="api": host tiling

# Hand-computed from the formulas in ascdsl/sim/softmax_tiling.py (not by calling it):
# row words: float 2E+K+64 (isFront: E+K+64), half 2E+3K+64; E = 8 (float) / 16 (half); W = work/4.
TILING_TABLE = [
    # shape,      size, work,   front, splitM, rangeM, tailM
    # [16,32] f: row 16+32+64=112; W 2048 -> 18 -> min(18,16)=16; K%64 != 0: no basic block
    ((16, 32), 4, 8192, False, 16, 1, 0),
    # [37,64] f: row 144; W 1440 -> 10 -> 8<10<37 -> 8; basic block needs splitM > 8
    ((37, 64), 4, 5760, False, 8, 4, 5),
    # [37,64] f front: row 8+64+64=136; W 1360 -> 10 -> 8
    ((37, 64), 4, 5440, True, 8, 4, 5),
    # [16,64] h: row 32+192+64=288; W 4608 -> 16 = M; basic: 16 | 16, 16*64 < 16384
    ((16, 64), 2, 18432, False, 16, 1, 0),
    # [64,512] f: row 592; W 25600 -> 43 -> 40; basic: 40 -> 32 (divides 64); 32*512 >= 16384 -> 16
    ((64, 512), 4, 102400, False, 16, 4, 0),
    # [24,64] f: row 144; W 3000 -> 20 -> 16; basic: 16 -> 8 (24 % 16 != 0)
    ((24, 64), 4, 12000, False, 8, 3, 0),
    # [24,40] f: row 120; W 3000 -> 25 -> 24 = M; K%64 != 0
    ((24, 40), 4, 12000, False, 24, 1, 0),
    # [20,64] f: row 144; W 3000 -> 20 = M; M%8 != 0
    ((20, 64), 4, 12000, False, 20, 1, 0),
    # [5,8] f: row 88; W 256 -> 2; range 2, tail 1
    ((5, 8), 4, 1024, False, 2, 2, 1),
    # [100,128] h: row 32+384+64=480; W 16384 -> 34 -> 32; M%8 = 4: no basic block
    ((100, 128), 2, 65536, False, 32, 3, 4),
    # [256,1024] f: row 1104; W 45000 -> 40; basic: 40 -> 32; 32*1024 -> 16 -> 8 (8*1024 < 16384)
    ((256, 1024), 4, 180000, False, 8, 32, 0),
    # [2,4,64] h front (half ignores isFront): M 8, row 288; W 1000 -> 3
    ((2, 4, 64), 2, 4000, True, 3, 2, 2),
]


@pytest.mark.parametrize("shape,size,work,front,split,rng_,tail", TILING_TABLE, ids=str)
def test_softmax_grad_tiling_table(shape, size, work, front, split, rng_, tail):
    t = softmax_grad_tiling(shape, size, work, front)
    m, k, e = int(np.prod(shape[:-1])), shape[-1], 32 // size
    assert (t.splitM, t.rangeM, t.tailM) == (split, rng_, tail)
    assert (t.srcM, t.srcK, t.srcSize, t.outMaxM, t.outMaxK, t.outMaxSize) == (m, k, m * k, m, e, m * e)
    assert (t.splitK, t.splitSize, t.reduceM, t.reduceK, t.reduceSize) == (k, split * k, split, e, split * e)
    assert (t.tailSplitSize, t.tailReduceSize) == (tail * k, tail * e)
    assert len(FIELDS) == 16 and t.words().dtype == np.uint32 and t.words()[6] == split


TMP_TABLE = [  # (shape, dtype, front, min, max): 4 * row words, times M for the max
    ((16, 32), "float32", False, 448, 7168),
    ((37, 64), "float32", False, 576, 21312),
    ((37, 64), "float32", True, 544, 20128),
    ((16, 64), "float16", False, 1152, 18432),
    ((16, 64), "float16", True, 1152, 18432),
    ((64, 512), "float32", False, 2368, 151552),
    ((5, 8), "float32", False, 352, 1760),
    ((100, 128), "float16", False, 1920, 192000),
    ((2, 4, 64), "float16", True, 1152, 9216),
    ((256, 1024), "float32", True, 4384, 1122304),
]


@pytest.mark.parametrize("shape,dtype,front,lo,hi", TMP_TABLE, ids=str)
def test_softmax_grad_tmp_size_table(shape, dtype, front, lo, hi):
    assert softmax_grad_tmp_size(shape, dtype, front) == (lo, hi)


def test_the_host_library_is_built_once_for_its_text_in_any_folder(tmp_path):
    """The build key holds the host code's text, not its folder: each API kernel's folder reuses one build."""
    copies = []
    for name in ("a", "b"):
        for rel, text in render_softmax_grad_api(dtypes.float16, name == "b").items():
            (tmp_path / name).mkdir(exist_ok=True)
            (tmp_path / name / rel).write_text(text)
        copies.append(tmp_path / name / "softmax_grad_api_host.cpp")
    first = host_library([copies[0]])
    builds = build_stats().builds
    assert host_library([copies[1]]) is first and build_stats().builds == builds


def test_tiling_rejects_a_work_buffer_below_one_row():
    with pytest.raises(ascdsl.InputValueError, match="below the minimum 448 B"):
        softmax_grad_tiling((16, 32), 4, 447)


# ----------------------------------------------------------------------------- impl="api" on the simulator

API_CASES = [((37, 64), "float32", False), ((100, 33), "float32", False), ((1000, 20), "float32", False),
             ((5, 7), "float16", False), ((3, 4, 17), "float16", True), ((50, 20), "float32", True), ((1,), "float32", False)]


@pytest.mark.parametrize("shape,dtype,front", API_CASES, ids=str)
def test_api_lowering_on_the_simulator(shape, dtype, front):
    grad, src = make_inputs(shape, dtype, seed=11)
    actual = softmax_grad(grad, src, is_front=front, impl="api", backend="sim")
    assert_close(actual, expected(grad, src, front))


def test_api_documented_example_on_the_simulator():
    dst = softmax_grad(DOC_GRAD, np.full((8, 8), 2.0, np.float32), impl="api", backend="sim")
    np.testing.assert_array_equal(np.round(dst, 3), DOC_DST)


@pytest.mark.parametrize("is_front", [False, True])
def test_error_scale_judges_long_float32_sums_by_their_terms(is_front):
    """``sum(grad * src)`` over 12345 float32 products is exact only to ulps of ``sum|grad * src|``: a
    float32 sum fails against ``|expected|`` and passes against the op's error scale, while a sum that
    lost one product still fails (both outputs: the gradient and ``is_front``'s row sums)."""
    grad, src = ascdsl.Case((40, 12345), (40, 12345)).inputs()
    attrs = {"is_front": is_front}
    (expected,), (scale,) = expected_outputs(OP, (grad, src), attrs), error_scales(OP, (grad, src), attrs)
    total = np.cumsum(grad * src, axis=-1, dtype=np.float32)[:, -1:]  # a sequential float32 sum
    lost = total - grad[:, 77:78] * src[:, 77:78]

    def result(t):
        return np.broadcast_to(t, expected.shape) if is_front else (grad - t) * src
    with pytest.raises(AssertionError, match="elements differ"):
        assert_close(result(total), expected, dtypes.float32)
    assert_close(result(total), expected, dtypes.float32, scale)
    with pytest.raises(AssertionError, match="elements differ"):
        assert_close(result(lost), expected, dtypes.float32, scale)
