"""A store computed in a load's queue buffer and stored from it (``TQueBind<VECIN, VECOUT>``, as CANN's
kernels do; :func:`ascdsl.backend.plan.ubplan._bind_outputs`, :func:`ascdsl.backend.plan.queues.bind_queues`):
only where the load and everything computed in its buffer are dead where the store's data begins, on
the simulator against the interpreter (hazard checks on)."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from ascdsl.backend import kir
from ascdsl.backend.render.ascendc import compile_variant, kernel_source
from ascdsl.backend.plan import tiling
from tests.backend.helpers import CANN, RNG, assert_type_checks, both

F32, F16 = tl.pointer_type(tl.float32), tl.pointer_type(tl.float16)
pytestmark = pytest.mark.usefixtures("prebuilt_module")  # the simulator kernels in few g++ runs


@ascdsl.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m)
    tl.store(out_ptr + i, (x.to(tl.float32) * 2.0 + 1.0).to(out_ptr.dtype.element_ty), mask=m)


@ascdsl.jit
def two_stores(x_ptr, a_ptr, b_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m)
    tl.store(a_ptr + i, x + 1.0, mask=m)  # x is read after this store's data: a queue of its own
    tl.store(b_ptr + i, x * 3.0, mask=m)  # x dies here: computed in x's buffer


@ascdsl.jit
def powers(x_ptr, out_ptr, n, k, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m, other=1.0)
    y = x
    for _ in range(k):  # x is read in the loop that computes what is stored
        y = y * x
    tl.store(out_ptr + i, y, mask=m)


@ascdsl.jit
def rows_in_a_loop(x_ptr, out_ptr, rows, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    for r in range(tl.program_id(0), rows, tl.num_programs(0)):
        x = tl.load(x_ptr + r * n + cols, mask=cols < n, other=0.0)
        tl.store(out_ptr + r * n + cols, x - tl.max(x, axis=0), mask=cols < n)


def _bound(kernel, *types, **consts):
    k = compile_variant(kernel.specialize(*types, **consts).kernels[0], "Ascend910B3")
    return k, [(o.hint, i.hint) for o, i in k.plan.bound]


def test_a_store_is_computed_in_its_dying_load_s_queue_buffer():
    for ptr in (F32, F16):
        k, bound = _bound(scale, ptr, ptr, dtypes.int32, BLOCK=256)
        assert [i for _, i in bound] == ["x"]
        assert [(s.position, s.bound) for s in k.plan.slots if s.position is not kir.Position.VECCALC] == \
            [(kir.Position.VECIN, True)]  # one queue, no VECOUT one
        x = (RNG.standard_normal(1000) * 3).astype(ptr.element_ty.np)
        want, got = both(scale[(4,)], x, np.zeros_like(x), 1000, BLOCK=256)
        np.testing.assert_array_equal(want[1], got[1])


def test_a_load_read_after_a_store_s_data_begins_keeps_that_store_s_queue():
    k, bound = _bound(two_stores, F32, F32, F32, dtypes.int32, BLOCK=64)
    assert len(bound) == 1 and [s.bound for s in k.plan.slots if s.position is kir.Position.VECIN] == [True]
    assert len([s for s in k.plan.slots if s.position is kir.Position.VECOUT]) == 1
    kernels = two_stores.specialize(F32, F32, F32, dtypes.int32, BLOCK=64).kernels
    text = kernel_source("two_stores", tiling.variants(kernels), tiling.layout("TwoStoresTiling", kernels), "Ascend910B3")
    assert "EnQue<TPosition::VECOUT, TPosition::GM>(x)" in text and "DeQue<TPosition::GM, TPosition::VECIN, float>()" in text
    x = RNG.standard_normal(64).astype(np.float32)
    want, got = both(two_stores[(1,)], x, np.zeros_like(x), np.zeros_like(x), 50, BLOCK=64)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(w, g)
    np.testing.assert_array_equal(got[1][:50], x[:50] + 1)
    np.testing.assert_array_equal(got[2][:50], x[:50] * 3)


def test_a_load_read_in_the_loop_that_computes_the_store_is_not_written_over():
    x = (RNG.standard_normal(64) * 0.5 + 1).astype(np.float32)
    want, got = both(powers[(1,)], x, np.zeros_like(x), 60, 3, BLOCK=64)
    np.testing.assert_array_equal(want[1], got[1])
    np.testing.assert_allclose(got[1][:60], x[:60] ** 4, rtol=1e-6)


def test_rows_of_a_grid_stride_loop_are_stored_from_their_load_s_buffer():
    _, bound = _bound(rows_in_a_loop, F32, F32, dtypes.int32, dtypes.int32, BLOCK=128)
    assert [i for _, i in bound] == ["x"]
    x = RNG.standard_normal((37, 100)).astype(np.float32)
    want, got = both(rows_in_a_loop[(8,)], x, np.zeros_like(x), 37, 100, BLOCK=128)
    np.testing.assert_array_equal(want[1], got[1])


@CANN
def test_bound_queues_type_check_against_cann(tmp_path):
    kernels = [scale.specialize(p, p, dtypes.int32, BLOCK=256).kernels[0] for p in (F32, F16)]
    kernels += [two_stores.specialize(F32, F32, F32, dtypes.int32, BLOCK=64).kernels[0]]
    assert_type_checks("bound_queues", kernels, tmp_path)
