"""LogSoftmaxBackward (ops/log_softmax_grad.py) on the interpreter: shapes, dtypes, dim forms,
variants, the no-reduce formula, errors, PyTorch and a hypothesis sweep."""
import dataclasses

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ascdsl
from ascdsl import dtypes
from ascdsl.backend.render.ascendc import planned
from ascdsl.platforms import get_platform
from ascdsl.testing import assert_close, run_case
from ops.log_softmax_grad import OP, log_softmax_backward, log_softmax_backward_host, merge_axes, reference

DTYPES = ("float32", "float16", "bfloat16")
B3 = get_platform("Ascend910B3")


def log_softmax(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    if x.size == 0:
        return x
    m = x.max(axis=axes, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axes, keepdims=True))


def make_inputs(shape, dim, dtype, seed=0, real=True):
    """grad_output ~ N(0, 1); output a real log-softmax output over ``dim`` (or N(0, 1) if not ``real``)."""
    rng = np.random.default_rng(seed)
    np_dtype = dtypes.lookup(dtype).np
    grad = rng.standard_normal(shape)
    x = rng.standard_normal(shape)
    if real:
        rank = max(len(shape), 1)
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        axes = tuple(d % rank for d in dims)
        x = log_softmax(np.atleast_1d(x), axes).reshape(shape)
    return grad.astype(np_dtype), x.astype(np_dtype)


def check(shape, dim, dtype, **kw):
    grad, out = make_inputs(shape, dim, dtype, **kw)
    actual = log_softmax_backward(grad, out, dim)
    assert actual.dtype == grad.dtype and actual.shape == grad.shape
    g, o = grad.astype(np.float64), out.astype(np.float64)
    # grad - exp(out) * sum(grad) cancels on arbitrary inputs, and so may the sum itself (a float32 sum
    # is exact to within eps * sum(|grad|)): measure the error against the magnitudes of the terms
    a = np.abs(g)
    terms = a + np.abs(a - reference(a, o, dim))
    assert_close(actual, reference(g, o, dim), scale=terms)
    return grad, out, actual


def variant(shape, dim, dtype="float32", platform=B3):
    shape, axis = merge_axes(shape, dim)  # the OpDef's int dim, as the Python entry passes it
    desc = ascdsl.TensorDesc(shape, dtypes.lookup(dtype))
    return log_softmax_backward_host(desc, desc, axis, platform, lines=True)


SWEEP = [
    ((1,), 0), ((31,), -1), ((32,), 0), ((33,), -1),  # one row: the reduced axis is everything
    ((1, 1), 1), ((4, 1), 1), ((1, 33), 0),  # no-reduce through a size-1 axis
    ((7, 31), 1), ((7, 32), -1), ((7, 33), 1),  # reduce-tail with 32-byte tails
    ((100, 3), -1), ((9, 5), 1),  # rows under 32 bytes
    ((1000, 17), 1),  # more rows than cores
    ((31, 5), 0), ((3, 33, 5), 1), ((2, 32, 3), -2),  # reduce-middle
    ((3, 4, 5), (0, 1)), ((3, 4, 5), (1, 2)), ((3, 4, 5), [0, 1, 2]), ((3, 4, 5), (-2, -1)),
    ((2,) * 8, 3), ((2,) * 8, [2, 3, 4]), ((1, 2, 1, 3, 1, 2, 1, 2), -1),  # 8 dims
    ((2, 12000), -1), ((3, 1500, 70), 1),  # reduced extent beyond the full-load tile: recompute
    ((3, 33, 70), 1),  # reduce-middle columns of 256 bytes or more: column tiles
    ((3, 1500, 4), 1), ((8, 203, 15), 1), ((45, 7, 3), 1),  # lines of whole rows, a slab in parts, a part line
    ((23, 1000, 5), 1),  # a core's one slab in several tiles of lines, the last ragged
    ((170, 19, 3), 1),  # tiles of whole slabs (4-5 a core, 2 a tile), the last ragged
    ((83, 60, 7), 1),  # 2 whole slabs a core and the 3 past them in 4 parts, the last line ragged
    ((0, 5), 0), ((5, 0), 1), ((3, 0, 4), 1), ((0,), 0),  # empty tensors
    ((), -1), ((), 0),  # rank 0
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,dim", SWEEP, ids=lambda v: str(v).replace(" ", ""))
def test_sweep_against_float64(shape, dim, dtype):
    check(shape, dim, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_rows_larger_than_ub(dtype):
    n = get_platform("Ascend910B3").ub_bytes // dtypes.lookup(dtype).itemsize + 17  # one row > 192 KiB
    assert variant((2, n), -1, dtype).variant == "reduce_tail_recompute"
    check((2, n), -1, dtype)
    assert variant((2, n, 2), 1, dtype).variant == "reduce_middle_lines"
    assert variant((2, n, 130), 1, dtype).variant == "reduce_middle_recompute"
    check((2, n // 4, 2), 1, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_no_reduce_on_arbitrary_inputs(dtype):
    """The source document simplifies the d1 == 1 case to (grad_output - 1) * exp(output); the sum
    over one element is grad_output itself, so it is grad_output * (1 - exp(output))."""
    grad, out, actual = check((6, 1, 37), 1, dtype, real=False, seed=3)
    assert variant((6, 1, 37), 1, dtype).variant == "no_reduce"
    g, x = grad.astype(np.float64), out.astype(np.float64)
    assert_close(actual, g * (1 - np.exp(x)))
    seed_formula = (g - 1) * np.exp(x)
    assert not np.allclose(actual.astype(np.float64), seed_formula, rtol=0.1)


def test_a_cores_rows_come_in_tiles_whose_loads_overlap():
    """541 rows of 613 floats are 14 a core: tiles of 4 (TILES_PER_CORE a core), not one tile the core loads,
    computes and stores in turn; short rows keep tiles of MIN_TILE_BYTES (1000 rows of 100: 21 a tile)."""
    assert variant((541, 613), 1).constexprs["ROWS"] == 4
    assert variant((1000, 100), 1).constexprs["ROWS"] == 21


def test_a_cores_few_lines_come_in_tiles_whose_loads_overlap():
    """Reduce-middle lines (issue 24's sweep): 37 slabs of 268x15 floats are one a core, 34 lines of 480 bytes
    that one tile each pass read in turn (1.45x of the floor), now tiles of 18 lines (MIN_TILE_BYTES; 1.36x);
    26 slabs of 2308x5 (145 lines of 320 bytes) tiles of 73 (a core's 290 lines in TILES_PER_CORE; 1.53x ->
    1.35x); a tile of 8x2023x15 takes at most its part's 51 lines (1.82x -> 1.70x). Three slabs a core of
    116x201x9 keep whole slabs of 26 lines a tile."""
    assert variant((37, 268, 15), 1).constexprs["BLOCK_L"] == 18
    assert variant((26, 2308, 5), 1).constexprs["BLOCK_L"] == 73
    plan = variant((8, 2023, 15), 1)
    assert plan.constexprs["BLOCK_L"] == plan.scalars["part_lines"] == 51
    assert variant((116, 201, 9), 1).constexprs["BLOCK_L"] == 26


def test_the_slabs_past_the_last_round_of_the_cores_go_in_parts():
    """82 slabs of 747x7 floats on 40 cores (issue 24's sweep) put 3 whole slabs on 2 cores where the mean is
    2.05 (1.42x of the floor); now every core takes 2 whole slabs and the 2 slabs past them go in 16 parts of 3
    lines over 32 cores, each part summing its whole slab (1.16x); 122x1394x13: 3 whole slabs a core and the 2
    past them in 20 parts of 9 lines (1.25x -> 1.05x). A whole round (80 slabs) takes no parts, and slabs past
    it that are more than half the cores go one a core (a part is a whole slab)."""
    for shape, parts, part_lines, big in [((82, 747, 7), 16, 3, 32), ((122, 1394, 13), 20, 9, 40)]:
        plan = variant(shape, 1)
        whole = shape[0] // 40 * 40
        assert plan.variant == "reduce_middle_lines" and plan.grid == (40,), plan
        assert (plan.scalars["whole"], plan.scalars["per_core"], plan.scalars["big_cores"]) == (whole, whole // 40, big)
        assert (plan.scalars["parts"], plan.scalars["part_lines"]) == (parts, part_lines), plan
        assert plan.constexprs["BLOCK_L"] > part_lines  # the whole slabs' tiles are not cut to a part
    plan = variant((80, 747, 7), 1)
    assert (plan.scalars["whole"], plan.scalars["per_core"], plan.scalars["big_cores"]) == (80, 2, 0)
    plan = variant((77, 804, 11), 1)
    assert (plan.scalars["parts"], plan.scalars["per_core"], plan.scalars["big_cores"]) == (1, 1, 37)
    check((83, 60, 7), 1, "float32")


def test_the_rows_past_the_last_round_of_the_cores_go_in_parts():
    """As softmax_grad's rows: 82 rows of 6587 floats are 2 whole rows a core and 2 rows in 20 parts of 336 columns
    (1.35x -> 1.10x of the floor), each part summing its whole row of ``dy`` in the recompute kernel; 125x3334
    (3 whole rows a core: a part sums ``dy`` alone, so up to 4 whole rows) 5 rows in 8 parts (1.22x -> 1.12x);
    44x33072 (over the UB) 4 rows in 10 parts (1.62x -> 1.10x). 16-bit rows that fit the UB, a core with 5 whole
    rows, rows past the round that would go in fewer than 4 parts (99x3333: 19 rows in 2 parts, 1.157x -> 1.170x)
    and a whole round keep the full-load kernel."""
    for shape, per_core, parts, part_k in [((82, 6587), 2, 20, 336), ((125, 3334), 3, 8, 424),
                                           ((44, 33072), 1, 10, 3312)]:
        plan = variant(shape, -1)
        rest = shape[0] % 40
        assert plan.variant == "reduce_tail_recompute" and plan.grid == (40,), plan
        assert (plan.scalars["per_core"], plan.scalars["big_cores"], plan.scalars["tail"]) == (per_core, 0, rest * parts)
        assert (plan.scalars["parts"], plan.scalars["part_k"]) == (parts, part_k), plan
    for shape, dtype in [((82, 6587), "float16"), ((205, 3334), "float32"), ((99, 3333), "float32"),
                         ((80, 6587), "float32")]:
        plan = variant(shape, -1, dtype)
        assert plan.variant == "reduce_tail_full_load" and plan.scalars["per_core"] == shape[0] // 40, plan


def test_many_small_slabs_come_in_tiles_of_whole_slabs():
    """Four slabs a core or more, a slab that fits: tiles of whole slabs (``reduce_middle_slabs``), read once,
    as many as make MIN_TILE_BYTES, at most a core's share in TILES_PER_CORE tiles: 251x158x3 (7 slabs of
    1896 bytes a core) 2 a tile, 280x98x15 and 502x379x9 (5880 and 13644 bytes) one; 116x201x9 (3 a core) and
    the op project's tiling function (``lines=False``) keep their kernels."""
    for shape, slabs, lines in [((251, 158, 3), 2, 7), ((280, 98, 15), 1, 13), ((502, 379, 9), 1, 48)]:
        plan = variant(shape, 1)
        assert plan.variant == "reduce_middle_slabs" and plan.grid == (B3.vector_core_count,), plan
        assert (plan.constexprs["SLABS"], plan.constexprs["LINES"]) == (slabs, lines), plan
        assert (plan.scalars["per_core"], plan.scalars["big_cores"]) == divmod(shape[0], B3.vector_core_count)
    assert variant((116, 201, 9), 1).variant == "reduce_middle_lines"
    desc = ascdsl.TensorDesc((251, 158, 3), dtypes.float32)
    assert log_softmax_backward_host(desc, desc, 1, B3).variant == "reduce_middle_full_load"


def test_variants_and_core_split():
    cores = B3.vector_core_count
    plan = variant((1000, 257), 1)  # 1028 bytes, 257 blocks between a class's rows: not packed (ascdsl.lib.reads_flat)
    assert plan.variant == "reduce_tail_full_load" and plan.grid == (cores,)
    assert (plan.scalars["per_core"], plan.scalars["big_cores"]) == (1000 // cores, 1000 % cores)
    plan = variant((7, 33), 1)
    assert plan.grid == (7,) and (plan.scalars["per_core"], plan.scalars["big_cores"]) == (1, 0)
    assert variant((3, 33, 70), 1).variant == "reduce_middle_full_load"
    assert variant((3, 2000, 70), 1).variant == "reduce_middle_recompute"
    assert variant((3, 2000, 64), 1).variant == variant((3, 2000, 16), 1).variant == "reduce_middle_recompute"
    assert variant((3, 12000), 1).variant == "reduce_tail_recompute"
    plan = variant((120, 8000), 1)  # one 32 KB row per tile fits two double-buffered queues, two do not
    assert plan.variant == "reduce_tail_full_load" and plan.constexprs["ROWS"] == 1
    assert variant((3, 2000), 1).variant == variant((3, 2000), 1, "float16").variant == "reduce_tail_full_load"
    assert variant((4, 1, 9), 1).variant == "no_reduce"
    assert variant((0, 3), 1).grid == (0,)
    small = get_platform("Ascend310P3")
    plan = variant((30, 7), 1, "float16", small)
    assert plan.grid == (small.vector_core_count,) and plan.scalars["big_cores"] == 30 % small.vector_core_count


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_reduce_middle_columns_under_256_bytes_go_in_lines_of_whole_rows(dtype):
    """8x2023x15: each slab [2023, 15] is read as lines of 8 rows (120 values, 480 bytes in float32; 16 rows in
    16-bit), and its lines go in 5 parts over the 40 cores, each part summing its whole slab."""
    plan = variant((8, 2023, 15), 1, dtype)
    group = 8 if dtype == "float32" else 16
    assert plan.variant == "reduce_middle_lines" and plan.grid == (40,)
    assert (plan.constexprs["GROUP"], plan.constexprs["INNER"]) == (group, 15)
    assert plan.scalars["lines"] == -(-2023 * 15 // (group * 15)) and plan.scalars["parts"] == 5
    assert plan.scalars["parts"] * plan.scalars["part_lines"] >= plan.scalars["lines"]
    assert variant((3, 40, 6), 1).constexprs["GROUP"] * 6 % 8 == 0  # 6 floats: lines of 4 rows, 96 bytes,
    assert variant((3, 40, 6), 1).constexprs["GROUP"] * 6 * 4 >= 256  # lengthened to 256 bytes or more
    check((8, 203, 15), 1, dtype)
    desc = ascdsl.TensorDesc((8, 2023, 15), dtypes.lookup(dtype))  # the op project's tiling: column tiles
    assert log_softmax_backward_host(desc, desc, 1, B3).variant == "reduce_middle_recompute"


@pytest.mark.parametrize("count", [37, 40 * 8, 4096 * 1024, 4096 * 1024 + 8, 3_000_001])
def test_no_reduce_blocks_fill_the_ub_and_are_equal(count):
    """Blocks as long as fit (not a power of two), evened out: equal whole 32-byte blocks (the last one
    no longer), the UB nearly full and whole rounds of the cores where the data is long."""
    cores = B3.vector_core_count
    plan = variant((count, 1, 1), 1)
    block, n = plan.constexprs["BLOCK"], plan.scalars["n"]
    units = plan.grid[0] * plan.scalars["per_core"] + plan.scalars["big_cores"]
    assert plan.variant == "no_reduce" and block % 8 == 0 and n == count
    assert units == -(-count // block) and count - (units - 1) * block <= block
    ptr = ascdsl.language.pointer_type(dtypes.float32)
    total = lambda b: planned(plan.kernel.specialize(ptr, ptr, ptr, **plan.scalars, BLOCK=b).kernels[0],  # noqa: E731
                              B3).plan.total_bytes
    assert total(block) <= B3.ub_budget_bytes
    if count > cores * block:  # long: the UB is full and the cores' work is even
        assert total(block) >= 0.9 * B3.ub_budget_bytes and units % cores == 0
    else:  # short: one block per core, no more cores than blocks
        assert plan.scalars["per_core"] == 1 and plan.grid[0] == units


def test_every_tile_fits_the_ub_budget():
    for shape, dim in SWEEP + [((2, 60000), 1), ((2, 60000, 3), 1), ((2, 3, 60000), 1)]:
        for dtype in DTYPES:
            plan = variant(shape, dim, dtype)
            if 0 in plan.grid:
                continue
            ptr = ascdsl.language.pointer_type(dtypes.lookup(dtype))
            (kernel,) = plan.kernel.specialize(ptr, ptr, ptr, **plan.scalars, **plan.constexprs).kernels
            assert planned(kernel, B3).plan.total_bytes <= B3.ub_budget_bytes, (shape, dim, dtype, plan)


@pytest.mark.parametrize("platform", ["Ascend910B1", "Ascend310P3"])
def test_other_platforms(platform):
    grad, out = make_inputs((97, 45), 1, "float16")
    actual = log_softmax_backward(grad, out, 1, platform=platform)
    assert_close(actual, reference(grad.astype(np.float64), out.astype(np.float64), 1))


def test_dim_forms_agree():
    grad, out = make_inputs((3, 4, 5), (1, 2), "float32")
    expected = log_softmax_backward(grad, out, [1, 2])
    for dim in ((1, 2), [2, 1], [-1, -2], (np.int64(1), 2)):
        np.testing.assert_array_equal(log_softmax_backward(grad, out, dim), expected)
    np.testing.assert_array_equal(log_softmax_backward(grad, out, 2), log_softmax_backward(grad, out, -1))


def test_non_contiguous_inputs_are_copied():
    grad, out = make_inputs((6, 8), 0, "float32")
    actual = log_softmax_backward(grad.T, out.T, 1)
    assert_close(actual, reference(grad.T.astype(np.float64), out.T.astype(np.float64), 1))


# ----------------------------------------------------------------------------- PyTorch


TORCH_CASES = [((7, 33), 1), ((3, 33, 5), 1), ((4, 1, 9), 1), ((2, 9000), -1), ((2,) * 8, -3), ((), 0), ((0, 4), 1)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,dim", TORCH_CASES, ids=lambda v: str(v).replace(" ", ""))
def test_against_pytorch(shape, dim, dtype):
    torch = pytest.importorskip("torch")
    grad, out = make_inputs(shape, dim, dtype, seed=5)
    expected = torch.ops.aten._log_softmax_backward_data(
        torch.from_numpy(grad.astype(np.float32)), torch.from_numpy(out.astype(np.float32)), dim, torch.float32)
    assert_close(log_softmax_backward(grad, out, dim), expected.numpy().astype(np.float64))


# ----------------------------------------------------------------------------- hypothesis


@st.composite
def shapes_and_dims(draw):
    rank = draw(st.integers(0, 5))
    shape = tuple(draw(st.lists(st.integers(0, 6), min_size=rank, max_size=rank)))
    n = max(rank, 1)
    first = draw(st.integers(0, n - 1))
    last = draw(st.integers(first, n - 1))
    axes = list(range(first, last + 1))
    negative = draw(st.booleans())
    axes = [a - n if negative else a for a in axes]
    dim = axes[0] if len(axes) == 1 and draw(st.booleans()) else axes
    return shape, dim


@settings(max_examples=60, deadline=None)
@given(shapes_and_dims(), st.sampled_from(DTYPES), st.booleans())
def test_hypothesis_shapes_and_dims(shape_dim, dtype, real):
    shape, dim = shape_dim
    check(shape, dim, dtype, real=real)


# ----------------------------------------------------------------------------- errors


def test_float32_on_arbitrary_inputs_against_float64():
    check((5, 37), 1, "float32", real=False)
    check((5, 37, 3), 1, "float32", real=False)


ERRORS = [
    (dict(grad=(3, 4), out=(3, 5)), ValueError, r"same shape \(no broadcasting\), got \(3, 4\) and \(3, 5\)"),
    (dict(grad=(3, 4), out=(1, 4)), ValueError, r"same shape"),
    (dict(out_dtype=np.float16), TypeError, r"same dtype, got float32 and float16"),
    (dict(dtype=np.int32), TypeError, r"supports float32, float16 and bfloat16, not int32"),
    (dict(dtype=np.float64), TypeError, r"unsupported dtype float64"),
    (dict(dtype=ml_dtypes.bfloat16, platform="Ascend310P3"), TypeError,
     r"Ascend310P3 cannot cast bfloat16 to float32"),
    (dict(grad=(1,) * 9), ValueError, r"at most 8 dims, got 9"),
    (dict(dim=2), ValueError, r"dim 2 is out of range \[-2, 1\] for a tensor of rank 2"),
    (dict(dim=-3), ValueError, r"dim -3 is out of range \[-2, 1\]"),
    (dict(grad=(), dim=1), ValueError, r"dim 1 is out of range \[-1, 0\] for a tensor of rank 0"),
    (dict(grad=(2, 3, 4), dim=[0, 2]), ValueError, r"must be contiguous \(like \[2, 3, 4\], not \[2, 4\]\)"),
    (dict(grad=(2, 3, 4), dim=[1, 1]), ValueError, r"dim lists axis 1 twice"),
    (dict(grad=(2, 3, 4), dim=[1, -2]), ValueError, r"dim lists axis 1 twice"),
    (dict(dim=[]), ValueError, r"at least one axis, got an empty list"),
    (dict(dim=1.0), TypeError, r"dim must be an int or a list of ints, got 1.0"),
    (dict(dim=True), TypeError, r"dim must be an int or a list of ints"),
    (dict(dim=[0, "1"]), TypeError, r"dim must be an int or a list of ints"),
    (dict(platform="Ascend999"), ValueError, r"unknown platform 'Ascend999'"),
]


@pytest.mark.parametrize("spec,kind,message", ERRORS, ids=[m for _, _, m in ERRORS])
def test_clear_errors(spec, kind, message):
    dtype = spec.get("dtype", np.float32)
    grad = np.zeros(spec.get("grad", (3, 4)), dtype)
    out = np.zeros(spec.get("out", grad.shape), spec.get("out_dtype", dtype))
    with pytest.raises(kind, match=message) as info:
        log_softmax_backward(grad, out, spec.get("dim", 1), platform=spec.get("platform"))
    assert isinstance(info.value, ascdsl.Error)


@pytest.mark.parametrize("shape,dim", [((4, 33), -1), ((3, 5, 7), 1), ((2, 3, 4, 5), (1, 2)), ((), 0), ((0, 4), 0)])
def test_cases_verify_on_log_softmax_outputs(shape, dim):
    """The op's cases (and the build's probes) run on inputs from its domain: ``output`` is a log-softmax
    along ``dim``, ``grad_output`` the case's standard-normal data."""
    case = ascdsl.Case(shape, shape, dim=dim)
    grad, output = OP.inputs_of(case)
    assert np.array_equal(grad, case.inputs()[0]) and output.shape == shape and output.dtype == np.float32
    axes = tuple(d % max(len(shape), 1) for d in ((dim,) if isinstance(dim, int) else dim))
    if output.size:
        total = np.exp(np.atleast_1d(output).astype(np.float64)).sum(axis=axes)
        assert np.allclose(total, 1.0, atol=1e-5) and not np.array_equal(output, case.inputs()[1])


@pytest.mark.parametrize("shape", [(41, 8, 64), (41, 512, 256)])  # full load, recompute
def test_reduce_middle_with_more_units_than_cores(shape):
    """41 units over 40 cores: the first core's second unit runs masked, and a tile whose rows continue
    each other in memory (``BLOCK_B == d2``) is one run per program under that program mask."""
    assert variant(shape, 1).constexprs["BLOCK_B"] == shape[2] and variant(shape, 1).grid == (40,)
    check(shape, 1, "float32")


def test_error_scale_judges_the_cancelled_result_by_the_terms_it_cancels():
    """A float32 sum over 2023 rows is exact only to ulps of ``sum|grad|``: judged against ``|expected|``,
    even NumPy's float32 sum fails on cancelled elements; against the op's error scale it passes, while a
    total that lost one row's term still fails."""
    case = ascdsl.Case((5, 2023, 15), (5, 2023, 15), dim=1)
    grad, out = OP.inputs_of(case)
    expected = reference(grad.astype(np.float64), out.astype(np.float64), 1)
    scale = OP.error_scale(grad.astype(np.float64), out.astype(np.float64), 1)
    total = grad.sum(axis=1, keepdims=True, dtype=np.float32)
    in_float32 = grad - np.exp(out) * total
    with pytest.raises(AssertionError, match="elements differ"):
        assert_close(in_float32, expected, dtypes.float32)
    assert_close(in_float32, expected, dtypes.float32, scale)
    lost_a_row = grad - np.exp(out) * (total - grad[:, 1000:1001, :])
    with pytest.raises(AssertionError, match="elements differ"):
        assert_close(lost_a_row, expected, dtypes.float32, scale)


def column_tiles(grad_output, output, dim, *, platform=None, backend=None):
    """The op project's schedule of a reduce-middle case (column tiles, no lines kernel), as an entry."""
    shape, axis = merge_axes(grad_output.shape, dim)
    target = get_platform(platform or "Ascend910B3")
    grad_view, output_view = grad_output.reshape(shape), output.reshape(shape)
    plan = log_softmax_backward_host(ascdsl.TensorDesc.of(grad_view), ascdsl.TensorDesc.of(output_view), axis,
                                     target)
    out = np.empty_like(grad_view)
    plan(grad_view, output_view, out, backend=backend, platform=target.name)
    return out.reshape(grad_output.shape)


def test_verification_uses_the_error_scale():
    """The op project's column tiles sum 2023 float32 rows in their own order: the run passes when
    judged by the error scale (as the build's checks judge it), and fails against ``|expected|``."""
    op = dataclasses.replace(OP, entry=column_tiles)
    case = ascdsl.Case((5, 2023, 15), (5, 2023, 15), dim=1)
    assert run_case(op, case, "interpreter").ok
    result = run_case(dataclasses.replace(op, error_scale=None), case, "interpreter")
    assert not result.ok and "float32 tolerance" in result.message
