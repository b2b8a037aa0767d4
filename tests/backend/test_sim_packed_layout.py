"""Rows packed at a pitch of K (issue 24, :mod:`ascdsl.backend.legalise_shapes.packed`) on the simulator (hazard
checks on) against the interpreter: float32 ``[R, K]`` tiles reshaped from flat reads whose K is not a whole
number of blocks, their row sums and maxima (one bit-masked ``WholeReduce*`` per residue class of the lane
offsets) and row broadcasts (``Sub``/``Mul`` under the same masks, the ``Brcb`` blocks at block stride 0), for K
in 13, 19, 37 in float16 and float32; a tile with another use (a column sum) keeps the padded rows."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from ascdsl.backend import kir
from ascdsl.backend.lift import lift
from ascdsl.backend.render.ascendc import compile_variant
from ascdsl.platforms import get_platform
from ascdsl.lib import load_flat_rows, store_flat_rows
from ascdsl.testing import assert_close
from tests.backend.helpers import assert_type_checks, both, data, each
from tests.cann.headers import needs_kernel_headers

F16, F32 = dtypes.float16, dtypes.float32


@ascdsl.jit
def rows_kernel(x_ptr, y_ptr, out_ptr, sums_ptr, n, ROWS: tl.constexpr, K: tl.constexpr, MAX: tl.constexpr):
    x = load_flat_rows(x_ptr, 0, n, ROWS, K)
    y = load_flat_rows(y_ptr, 0, n, ROWS, K)
    if MAX:
        s = tl.max(x, axis=1)
        store_flat_rows(out_ptr, 0, n, (x - s[:, None]) * y)
    else:
        s = tl.sum(x * y, axis=1)
        store_flat_rows(out_ptr, 0, n, y - tl.exp(x) * s[:, None])
    rows = tl.arange(0, ROWS)
    tl.store(sums_ptr + rows, s, mask=rows < n)


@ascdsl.jit
def columns_too_kernel(x_ptr, out_ptr, sums_ptr, n, ROWS: tl.constexpr, K: tl.constexpr):
    x = load_flat_rows(x_ptr, 0, n, ROWS, K)
    store_flat_rows(out_ptr, 0, n, x - tl.sum(x, axis=1)[:, None])
    cols = tl.arange(0, K)
    tl.store(sums_ptr + cols, tl.sum(x, axis=0))


CASES = [(13, 29, 32), (19, 64, 64), (19, 300, 300), (37, 40, 48), (3, 2047, 2048)]  # the last: 256 rows a class
LONG = [(62, 29, 32),  # past one repeat from offsets 4 and 6 only: two of the four classes skip the second repeat
        (77, 64, 64),  # the second repeat partial from every offset
        (125, 40, 40),  # the second repeat full from offsets 3 and up, a third from 4 and up
        (183, 21, 24), (250, 9, 16), (132, 17, 24),  # 3 and 4 repeats from every offset; c = 2
        (255, 33, 40)]  # 4 and 5 repeats, the classes 255 blocks apart


def _matches_the_interpreter(dt, use_max, cases):
    def check(k, n, rows):
        x, y = data(n * k, dt), data(n * k, dt)
        x = (x / 4).astype(dt.np)  # exp stays finite
        want, got = both(rows_kernel[(1,)], x, y, np.zeros(n * k, dt.np), np.zeros(rows, np.float32), n,
                         ROWS=rows, K=k, MAX=use_max)
        tol = 1e-5 if dt == F32 else 2e-3
        np.testing.assert_allclose(got[3][:n], want[3][:n], rtol=tol, atol=tol, err_msg=f"sums k={k} n={n}")
        a, b = (v.astype(np.float64).reshape(n, k) for v in (x, y))  # y - exp(x) * s cancels: measure by its terms
        terms = (np.abs(a) + np.abs(a).max(1, keepdims=True)) * np.abs(b) if use_max else \
            np.abs(b) + np.exp(a) * np.abs(a * b).sum(1, keepdims=True)
        assert_close(got[2], want[2], scale=terms.ravel(), rtol=tol, atol=tol, err_msg=f"out k={k} n={n}")
    each(check, cases)


@pytest.mark.parametrize("dt", [F16, F32], ids=str)
@pytest.mark.parametrize("use_max", [False, True], ids=["sum", "max"])
def test_packed_rows_match_the_interpreter(dt, use_max):
    _matches_the_interpreter(dt, use_max, CASES)


@pytest.mark.parametrize("dt", [F16, F32], ids=str)
@pytest.mark.parametrize("use_max", [False, True], ids=["sum", "max"])
def test_packed_rows_past_one_repeat_match_the_interpreter(dt, use_max):
    """Rows that span several repeats from some lane offset: a masked call per repeat, the partial results folded
    (classes whose rows span fewer repeats skip the last and leave the reduction's identity there)."""
    _matches_the_interpreter(dt, use_max, LONG)


def _compiled(**constexprs) -> kir.Kernel:
    """``rows_kernel`` on float32 pointers, compiled."""
    (k,) = rows_kernel.specialize(*(tl.pointer_type(F32),) * 4, dtypes.int32, **constexprs).kernels
    return compile_variant(k, "Ascend910B3")


def _masked(body) -> bool:
    """``body`` defines a bit mask first (in an ``if`` for the classes whose rows reach a repeat)."""
    first = body[0] if body else None
    if isinstance(first, kir.If):
        return _masked(first.body)
    return isinstance(first, kir.Let) and first.var.ctype is kir.Struct.BIT_MASK


def _class_loops(k: kir.Kernel) -> list:
    """The loops over residue classes: each defines a bit mask first."""
    return [s for s in kir.walk(k.process) if isinstance(s, kir.For) and _masked(s.body)]


def test_packed_rows_take_one_masked_call_per_class_and_no_gather():
    k = _compiled(ROWS=64, K=19, MAX=False)  # 8 classes of 8 rows, 19 blocks apart
    calls = [s for s in kir.walk(k.process) if isinstance(s, kir.Call)]
    assert not [c for c in calls if c.api == "Gather"]
    loops = _class_loops(k)
    assert [(loop.stop, loop.independent) for loop in loops] == [(kir.lit(8), True)] * 2  # the sums, exp(x) * s
    reduce, mul = (loop.body[1] for loop in loops)
    assert reduce.api == "WholeReduceSum" and reduce.args[0] == loops[0].body[0].var
    assert reduce.args[2:] == (kir.lit(8), kir.lit(1), kir.lit(19))  # dstRepStride c, srcRepStride 19 blocks
    assert mul.api == "Mul" and mul.args[2] == kir.Brace(tuple(map(kir.lit, (1, 1, 0, 19, 19, 8))))
    assert not any(isinstance(s, kir.Barrier) for loop in loops for s in kir.walk(loop.body))
    loops = _class_loops(_compiled(ROWS=2048, K=3, MAX=True))  # 256 rows a class: calls of 255 rows in a loop
    assert len(loops) == 2 and all(isinstance(loop.body[1], kir.For) and loop.body[1].step == kir.lit(255)
                                   and loop.body[1].independent for loop in loops)


def test_rows_past_one_repeat_take_a_class_loop_a_repeat_and_fold_the_partial_results():
    k = _compiled(ROWS=40, K=125, MAX=True)  # 8 classes of 5 rows, 125 blocks apart: 2 repeats, 3 from offset 4
    calls = [s for s in kir.walk(k.process) if isinstance(s, kir.Call)]
    assert not [c for c in calls if c.api == "Gather"]
    loops = _class_loops(k)
    assert [(loop.stop, loop.independent) for loop in loops] == [(kir.lit(8), True)] * 6  # the maxima, x - s
    guarded = [loop for loop in loops if isinstance(loop.body[0], kir.If)]
    assert guarded == [loops[2], loops[5]]  # the third repeat: the classes at offsets 4 and up (125 * r % 8 > 3)
    assert all(loop.body[0].cond == kir.Bin(kir.BinOp.GT, kir.Bin(kir.BinOp.MOD, kir.Bin(
        kir.BinOp.MUL, kir.lit(125), loop.var), kir.lit(8)), kir.lit(3)) for loop in guarded)
    reduces = [next(c for c in kir.walk(loop.body) if isinstance(c, kir.Call)) for loop in loops[:3]]
    assert [c.api for c in reduces] == ["WholeReduceMax"] * 3
    assert [c.srcs[0].offset.b for c in reduces[1:]] == [kir.lit(64), kir.lit(128)]  # a repeat further each
    result, *parts = (c.dst.buf for c in reduces)
    fill = [c for c in calls if c.api == "Duplicate" and c.dst.buf in parts]
    assert [(c.dst.buf, c.args[0].value) for c in fill] == [(parts[1], float("-inf"))]  # only where classes skip
    folds = [c for c in calls if c.api == "Max" and c.dst.buf == result]
    assert [c.srcs[1].buf for c in folds] == parts
    assert calls.index(fill[0]) < calls.index(reduces[0]) and calls.index(folds[0]) > calls.index(reduces[2])
    subs = [next(c for c in kir.walk(loop.body) if isinstance(c, kir.Call)) for loop in loops[3:]]
    assert [c.api for c in subs] == ["Sub"] * 3
    assert not any(isinstance(s, kir.Barrier) for loop in loops for s in kir.walk(loop.body))


def test_a_packed_tile_with_a_column_sum_keeps_padded_rows():
    def check(k, n, rows):
        x = data(n * k, F32)
        want, got = both(columns_too_kernel[(1,)], x, np.zeros(n * k, np.float32), np.zeros(k, np.float32), n,
                         ROWS=rows, K=k)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got[2], want[2], rtol=1e-5, atol=1e-4)
    each(check, [(19, 40, 48)])


@needs_kernel_headers
def test_packed_rows_type_check_against_cann(tmp_path):
    kernels = [k for dt, k_, use_max, rows in ((F16, 19, False, 64), (F32, 13, True, 64), (F16, 37, True, 64),
                                               (F16, 125, True, 40), (F32, 250, False, 24))  # past one repeat
               for k in rows_kernel.specialize(*(tl.pointer_type(dt),) * 3, tl.pointer_type(F32), dtypes.int32,
                                               ROWS=rows, K=k_, MAX=use_max).kernels]
    assert_type_checks("packed_rows", kernels, tmp_path)


@pytest.mark.parametrize("k, c, repeats", [(19, 8, 1), (62, 4, 2), (125, 8, 3)])
def test_the_general_form_lifts_rows_with_class_loops_over_a_run_time_row_count(k, c, repeats):
    """The lift compiles the kernel with ``ROWS`` symbolic: the packed layout holds there too, its class loops
    (a loop a repeat a row spans, for the sums and for ``exp(x) * s``) bounded by ``min(c, ROWS)`` and the class
    counts expressions of the tiling's ``ROWS`` (the lifted packed variants of ``ascdsl build`` ran on the simulator
    in its verification)."""
    f16, f32 = tl.pointer_type(F16), tl.pointer_type(F32)
    (kernel,) = rows_kernel.specialize(f16, f16, f16, f32, dtypes.int32, ROWS=32, K=k, MAX=False).kernels
    found = lift.analyse(rows_kernel, kernel, get_platform("Ascend910B3"))
    assert found is not None and [e.name for e in found.extents] == ["ROWS"]
    loops = _class_loops(found.kernel)
    rows = kir.Field("ROWS", dtypes.int32)
    assert len(loops) == 2 * repeats and all(loop.stop == kir.minimum(kir.lit(c), rows) for loop in loops)
    assert not [s for s in kir.walk(found.kernel.process) if isinstance(s, kir.Call) and s.api == "Gather"]
