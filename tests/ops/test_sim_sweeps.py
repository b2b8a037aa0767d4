"""SoftmaxGrad and LogSoftmaxBackward as generated Ascend C on the simulator (hazard checks on), over
the interpreter sweeps of issue 5 (1, tails, 31/32/33, rows under 32 bytes, rows larger than UB, more
rows than cores, 0-size dims, 8 dims, every dtype and dim form), against the interpreter and NumPy
float64.

Also every op's cases on the simulator. g++ dominates: the kernels of an op's cases are built as files of their
own (:func:`tests.backend.helpers.op_case_files`), which the sweeps of that op use too; each sweep then records its other launches
(``simrun.recording``), builds those into kernel files (``simrun.prebuild``) and runs the sweep. Results
match the interpreter within the dtype's tolerance, not bit for bit: the reductions sum in the vector
unit's order, and the simulator's ``Exp`` is not NumPy's.
"""
from pathlib import Path

import numpy as np
import pytest

from ascdsl import dtypes, layout
from ascdsl.backend import simrun
from ascdsl.op import load_operators
from ascdsl.platforms import get_platform
from ascdsl.testing import assert_close, verify
from ops.log_softmax_grad import log_softmax_backward, merge_axes, reference
from ops.softmax_grad import softmax_grad
from tests.backend.helpers import op_case_files
from tests.ops.test_log_softmax_grad import SWEEP, make_inputs as log_inputs, variant
from tests.ops.test_softmax_grad import SHAPES, expected, make_inputs, plan

DTYPES = ("float32", "float16", "bfloat16")
B3 = get_platform("Ascend910B3")
OPS = {op.name: op for op in load_operators([Path(__file__).resolve().parents[2] / "ops"])}


def _prebuilt(op, run_all) -> None:
    """Build every specialisation ``run_all`` launches that ``op``'s case files do not hold in as few g++ builds
    as the batch size allows."""
    op_case_files(op)
    with simrun.recording() as launches:
        run_all("sim")
    simrun.prebuild(launches)  # leaves out the kernels of the case files


@pytest.mark.parametrize("op", OPS.values(), ids=lambda op: op.name)
def test_op_cases_pass_on_the_simulator(op):
    op_case_files(op)
    failed = [r for r in verify(op, ("sim",)) if not r.ok]
    assert not failed, "\n".join(f"{r.case}: {r.message}" for r in failed)


def _failures(cases, check) -> list[str]:
    failed = []
    for case in cases:
        try:
            check(*case)
        except AssertionError as e:
            failed.append(f"{case[:-1]}: {str(e).strip().splitlines()[0]}")
    return failed


def _rows_past_the_last_round(dtype) -> list[tuple[int, int]]:
    """Rows past the last whole round of the cores, which go in column parts (the two-pass kernels): rows over
    the UB in every dtype (3 rows in 13 parts, the last one ragged), and in float32 rows that fit it beside
    whole ones (43 rows of 4100: a whole row a core and 3 rows in 13 parts of 320 columns). Both sweeps run
    them (:func:`test_rows_past_the_last_round_are_planned_in_parts`: their plans)."""
    return [(3, B3.ub_bytes // dtypes.lookup(dtype).itemsize + 5)] + ([(43, 4100)] if dtype == "float32" else [])


def _softmax_grad_cases(dtype):
    long_row = (2, B3.ub_bytes // dtypes.lookup(dtype).itemsize + 5)  # two_pass: a row larger than UB
    return [(shape, fmt, front) for shape in SHAPES + [long_row] for fmt in ("ND",) for front in (False, True)] + [
        ((3, 33, 20), "NZ", False), ((40, 17), "NZ", False)] + [
        (shape, "ND", False) for shape in _rows_past_the_last_round(dtype)]


def _softmax_grad(grad, src, fmt, front, backend):
    if fmt == "NZ":
        m, k = grad.shape[-2:]
        out = softmax_grad(layout.nd_to_nz(grad), layout.nd_to_nz(src), format="NZ", backend=backend)
        return layout.nz_to_nd(out, m, k)
    return softmax_grad(grad, src, is_front=front, backend=backend)


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_grad_sweep_on_the_simulator(dtype):
    cases = [(shape, fmt, front, make_inputs(shape, dtype)) for shape, fmt, front in _softmax_grad_cases(dtype)]
    _prebuilt(OPS["softmax_grad"],
              lambda backend: [_softmax_grad(*inputs, fmt, front, backend) for _, fmt, front, inputs in cases])

    def check(shape, fmt, front, inputs):
        sim = _softmax_grad(*inputs, fmt, front, "sim")
        interpreted = _softmax_grad(*inputs, fmt, front, "interpreter")
        assert sim.dtype == interpreted.dtype and sim.shape == interpreted.shape
        assert_close(sim, interpreted.astype(np.float64))
        assert_close(sim, expected(*inputs, front))
    failed = _failures(cases, check)
    assert not failed, "\n".join(failed)


@pytest.mark.parametrize("dtype", DTYPES)
def test_log_softmax_backward_sweep_on_the_simulator(dtype):
    cases = [(shape, dim, real, log_inputs(shape, dim, dtype, real=real)) for shape, dim in SWEEP for real in (True,)]
    cases += [((6, 1, 37), 1, False, log_inputs((6, 1, 37), 1, dtype, real=False, seed=3))]  # no-reduce, any input
    cases += [(shape, -1, True, log_inputs(shape, -1, dtype)) for shape in _rows_past_the_last_round(dtype)]
    _prebuilt(OPS["log_softmax_grad"],
              lambda backend: [log_softmax_backward(*inputs, dim, backend=backend) for _, dim, _, inputs in cases])

    def check(shape, dim, real, inputs):
        sim = log_softmax_backward(*inputs, dim, backend="sim")
        interpreted = log_softmax_backward(*inputs, dim, backend="interpreter")
        assert sim.dtype == interpreted.dtype and sim.shape == interpreted.shape
        g, o = (x.astype(np.float64) for x in inputs)
        want = reference(g, o, dim)
        terms = np.abs(g) + np.abs(g - want)  # grad - exp(out) * sum cancels: measure against its terms
        assert_close(sim, interpreted.astype(np.float64), scale=terms)
        assert_close(sim, want, scale=terms)
    failed = _failures(cases, check)
    assert not failed, "\n".join(failed)


@pytest.mark.parametrize("dtype", DTYPES)
def test_rows_past_the_last_round_are_planned_in_parts(dtype):
    """The rows past the last whole round of the cores in column parts (the two-pass kernels), 13 parts a row:
    the sweeps above run them on the simulator against the interpreter and float64."""
    for shape in _rows_past_the_last_round(dtype):
        assert plan(shape, dtype).scalars["tail"] == shape[0] % 40 * 13
        assert variant(shape, -1, dtype).scalars["tail"] == shape[0] % 40 * 13


def test_sweeps_cover_every_variant():
    """The shapes above reach every variant the hosts choose (so every kernel runs on the simulator)."""
    seen = {variant(shape, dim, dtype).variant for shape, dim in SWEEP for dtype in DTYPES if merge_axes(shape, dim)}
    assert {"no_reduce", "reduce_tail_full_load", "reduce_tail_recompute", "reduce_middle_full_load",
            "reduce_middle_recompute", "reduce_middle_lines", "reduce_middle_slabs", "empty"} <= seen
