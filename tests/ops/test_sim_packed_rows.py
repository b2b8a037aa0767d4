"""16-bit rows of ``k = 8 mod 16`` elements (issue 24's sweep: 53551x24 float16) read flat, a tile of rows
one burst (``softmax_grad``'s ``packed``, ``log_softmax_grad``'s ``reduce_tail_packed``): the plans, the
simulator against the interpreter and float64, and the cost model's estimate at the sweep's shape."""
from pathlib import Path

import numpy as np
import pytest

import ascdsl
from ascdsl import bench, dtypes, record
from ascdsl.backend.lift.poly import describe_slots
from ascdsl.backend.render.ascendc import planned
from ascdsl.lib import reads_flat
from ascdsl.op import load_operators
from ascdsl.platforms import get_platform
from ascdsl.testing import assert_close
from ops.log_softmax_grad import log_softmax_backward, log_softmax_backward_host, reference
from ops.softmax_grad import packed_kernel, softmax_grad, softmax_grad_host
from tests.ops.test_log_softmax_grad import make_inputs as log_inputs
from tests.ops.test_softmax_grad import expected, make_inputs

pytestmark = pytest.mark.usefixtures("prebuilt_module")  # the simulator kernels in few g++ runs
B3 = get_platform("Ascend910B3")
OPS = {op.name: op for op in load_operators([Path(__file__).resolve().parents[2] / "ops"])}


def _desc(shape, dtype):
    return ascdsl.TensorDesc(shape, dtypes.lookup(dtype))


@pytest.mark.parametrize("shape, dtype, packed", [
    ((53551, 24), "float16", True), ((7, 40), "bfloat16", True), ((100, 504), "float16", True),
    ((100, 520), "float16", False),  # 1040 bytes: past ascdsl.lib.FLAT_ROW_BYTES
    ((53551, 24), "float32", False), ((100, 32), "float16", False), ((100, 16), "float32", False),
    # rows the backend packs at a pitch of k: 1 < k, k % 8 != 0, k / gcd(k, 8) <= 255 (ascdsl.lib.PACKED_STRIDE),
    # at least 4 rows a core per class call (ascdsl.lib.PACKED_ROWS_A_CALL): 8 / gcd(k, 8) calls a repeat
    ((71279, 19), "float16", True), ((30000, 37), "float32", True), ((4000, 25), "float16", True),
    ((4000, 57), "bfloat16", True), ((4000, 2), "float32", True),
    ((4000, 58), "float16", True), ((8784, 162), "float16", True), ((31102, 62), "float16", True),
    ((6400, 255), "float32", True), ((6000, 510), "bfloat16", True), ((4000, 13), "float32", True),
    ((6400, 257), "float16", False), ((6400, 257), "float32", False),  # 257 blocks apart; 1028 bytes
    ((1280, 37), "float32", True), ((1279, 37), "float32", False),  # 32 rows a core: 8 calls of one repeat
    ((5120, 199), "float16", True), ((5119, 199), "float16", False),  # 128: 8 classes of 4 repeats
    ((4000, 13), "float16", True), ((4000, 9), "bfloat16", True), ((4000, 14), "float16", True)])
def test_the_python_entries_read_short_rows_flat(shape, dtype, packed):
    d = _desc(shape, dtype)
    assert softmax_grad_host(d, d, False, B3, packed=True).variant == ("packed" if packed else "rows")
    assert softmax_grad_host(d, d, True, B3, packed=True).variant == "rows"  # the front: a block a row out
    assert log_softmax_backward_host(d, d, 1, B3, lines=True).variant == (
        "reduce_tail_packed" if packed else "reduce_tail_full_load")


@pytest.mark.parametrize("k", range(9, 14))
def test_softmax_grad_s_packed_rows_of_9_to_13_halves_are_sized(k):
    """``packed_kernel``'s work slot holds ``4 * K * ROWS`` and ``32 * ROWS + 224`` bytes, which cross at ``ROWS = 224
    / (4 * K - 32)``, 11.2 to 56, past the lift's first domain (``ROWS`` up to 11) for ``K = 13``: the lift keeps
    their largest (``max``), and the planner sizes ``ROWS``. At its answer the lifted footprint is the plan of the
    kernel compiled (general form, as the lifted kernel is) at that value and fits the budget; a quantum more
    does not fit."""
    d = _desc((4000, k), "float16")
    rows = ascdsl.planner.largest_extent(packed_kernel, "ROWS", d, d, d, platform=B3, K=k)
    found = ascdsl.planner.lifted(packed_kernel, (d, d, d), B3, {"ROWS": None, "K": k})
    (extent,) = found.extents
    assert f"max({4 * k} * ROWS, 32 * ROWS + 224)" in describe_slots(found.slots)
    types = ascdsl.planner.arg_types(packed_kernel, (d, d, d))

    def need(value: int) -> int:
        kernel = packed_kernel.specialize(*types, ROWS=value, K=k).kernels[0]
        assert found.bytes({"ROWS": value}) == planned(kernel, B3, general=True).plan.total_bytes
        return found.bytes({"ROWS": value})
    assert need(rows) <= B3.ub_budget_bytes < need(rows + extent.quantum)
    assert rows > 224 // (4 * k - 32)  # past the crossing: the larger side is 4 * K * ROWS


def test_rows_read_flat_at_a_pitch_of_k_stop_where_a_class_s_rows_lie_over_255_blocks_apart():
    assert [k for k in range(0, 600) if reads_flat(4, 1 << 20, k, 1)] == [k for k in range(2, 256) if k % 8]
    odd, twice_odd, four_times_odd = range(1, 256, 2), range(2, 512, 4), range(4, 512, 8)  # 255 blocks apart at most
    assert [k for k in range(0, 600) if reads_flat(2, 1 << 20, k, 1)] == sorted(
        [k for k in (*odd, *twice_odd, *four_times_odd) if k > 1]
        + list(range(8, 512, 16)))  # whole float32 blocks
    assert not reads_flat(4, 1 << 29, 3, 1)  # the offsets row * K + lane stay far inside int32


@pytest.mark.parametrize("k, calls", [(19, 8), (37, 8), (62, 4 * 2), (77, 8 * 2), (130, 4 * 3), (183, 8 * 3),
                                      (199, 8 * 4), (250, 4 * 4), (255, 8 * 5), (300, 2 * 5), (4, 2), (2, 4)])
def test_packed_rows_need_four_rows_a_core_per_class_call(k, calls):
    """Fewer rows a core than 4 per call of a tile's class loops (classes times the repeats a row spans) take more
    vector time than the flat read saves in bursts (ascdsl.lib.PACKED_ROWS_A_CALL); 16-bit rows of ``8 mod 16``
    elements are whole float32 blocks, no classes."""
    for itemsize in (2, 4) if k * 4 < 1024 else (2,):
        assert reads_flat(itemsize, 40 * 4 * calls, k, 40) and reads_flat(itemsize, 4 * calls, k, 1)
        assert not reads_flat(itemsize, 40 * 4 * calls - 1, k, 40)
    assert reads_flat(2, 40, 24, 40)


def test_the_op_projects_tiling_functions_keep_one_kernel_for_every_length():
    d = _desc((53551, 24), "float16")
    assert softmax_grad_host(d, d, False, B3).variant == "rows"
    assert log_softmax_backward_host(d, d, 1, B3).variant == "reduce_tail_full_load"


SHAPES = [((53551, 24), "float16"), ((7, 40), "float16"), ((500, 24), "bfloat16"), ((1000, 120), "float16"),
          ((41, 248), "bfloat16"), ((3, 50, 24), "float16"),
          ((2000, 19), "float16"), ((1400, 37), "float32"), ((16, 50, 14), "bfloat16"), ((1400, 57), "float32"),
          ((1400, 13), "float32"),
          # rows past one repeat from some lane offset: a masked call per repeat a row spans
          ((1400, 62), "float16"), ((2600, 77), "float32"), ((3880, 125), "bfloat16"), ((3880, 183), "float16"),
          ((2600, 250), "float32"), ((1640, 300), "float16"),
          # 16-bit rows of 9 to 13: tiles of ROWS below the crossing of the work slot's needs (224 / (4 * k - 32):
          # 40 rows of 9, 20 of 10, 35 of 9) and past it (50 of 13, 35 of 11, 43 of 12, two tiles of 13000x13)
          ((1600, 9), "float16"), ((800, 10), "float16"), ((1400, 9), "bfloat16"),
          ((2000, 13), "float16"), ((1400, 11), "float16"), ((1720, 12), "float16"), ((13000, 13), "float16")]


@pytest.mark.parametrize("shape, dtype", SHAPES, ids=str)
@pytest.mark.parametrize("front", [False, True])
def test_softmax_grad_packed_rows_on_the_simulator(shape, dtype, front):
    grad, src = make_inputs(shape, dtype)
    with record.launches() as seen:
        sim = softmax_grad(grad, src, is_front=front, backend="sim")
    assert [launch.kernel.name for launch in seen] == ["rows_kernel" if front else "packed_kernel"]
    interpreted = softmax_grad(grad, src, is_front=front, backend="interpreter")
    assert sim.dtype == interpreted.dtype and sim.shape == interpreted.shape
    assert_close(sim, interpreted.astype(np.float64))
    assert_close(sim, expected(grad, src, front))


@pytest.mark.parametrize("shape, dtype", SHAPES, ids=str)
def test_log_softmax_backward_packed_rows_on_the_simulator(shape, dtype):
    grad, out = log_inputs(shape, -1, dtype)
    with record.launches() as seen:
        sim = log_softmax_backward(grad, out, -1, backend="sim")
    assert [launch.kernel.name for launch in seen] == ["reduce_tail_packed_kernel"]
    interpreted = log_softmax_backward(grad, out, -1, backend="interpreter")
    assert sim.dtype == interpreted.dtype and sim.shape == interpreted.shape
    g, o = grad.astype(np.float64), out.astype(np.float64)
    want = reference(g, o, -1)
    terms = np.abs(g) + np.abs(g - want)  # grad - exp(out) * sum cancels: measure against its terms
    assert_close(sim, interpreted.astype(np.float64), scale=terms)
    assert_close(sim, want, scale=terms)


@pytest.mark.parametrize("case, most", [(bench._sg("16-bit short rows", (53551, 24), "float16"), 1.35),
                                        (bench._lsm("16-bit short rows", (53551, 24), "float16"), 1.35),
                                        (bench._sg("rows at a pitch of k", (71279, 19), "float16"), 1.25),
                                        (bench._lsm("rows at a pitch of k", (71279, 19), "float16"), 1.4),
                                        (bench._sg("rows at a pitch of k", (30000, 37), "float32"), 1.05),
                                        (bench._sg("rows past a repeat", (31102, 62), "float16"), 1.05),
                                        (bench._lsm("rows past a repeat", (31102, 62), "float16"), 1.1),
                                        (bench._lsm("rows of 9 to 13", (20000, 13), "float16"), 2.3),
                                        (bench._sg("rows of 9 to 13", (20000, 13), "float16"), 2.25)],
                         ids=lambda c: f"{c.op}-{'x'.join(map(str, c.shape))}-{c.dtype}" if hasattr(c, "op") else "")
def test_the_sweeps_short_rows_move_a_tile_a_burst(case, most):
    """53551x24 float16 were 2.43 (softmax_grad) and 2.58 (log_softmax_grad): one burst a row of 48 bytes;
    71279x19 float16 2.537 and 2.594, 30000x37 float32 1.280 (a burst a row, before the backend's packed rows);
    31102x62 float16 1.350 and 1.393 (a burst a row, before the packed rows past one repeat); log_softmax_grad's
    20000x13 float16 4.283 (a burst a row; V-bound packed: a core's 500 rows in two tiles of 8 classes' calls),
    softmax_grad's 4.255 (a burst a row while the lift did not size its packed kernel's ``ROWS``)."""
    k = bench.simulate(OPS[case.op], case, B3.name)
    assert k.ratio <= most and k.gm_over_min == 1.0
