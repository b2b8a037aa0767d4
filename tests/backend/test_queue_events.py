"""Kernels with more loads or stores than the hardware has queue event ids (8 per position, two per
double-buffered queue) fit them (:mod:`ascdsl.backend.plan.queues`): each segment's tiles packed in one
queue buffer, one queue for all segments, on the simulator against the interpreter (hazard checks
on); kernels that fit keep a queue per tile."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes, testing
from ascdsl.backend import kir
from ascdsl.backend.render.ascendc import compile_variant
from tests.backend.helpers import CANN, RNG, assert_type_checks, both, each
from tests.triton import compat_kernels

COMPAT = compat_kernels.build(ascdsl, tl)
pytestmark = pytest.mark.usefixtures("prebuilt_module")  # the simulator kernels in few g++ runs
F32 = tl.pointer_type(tl.float32)


@ascdsl.jit
def five_outputs(x_ptr, a_ptr, b_ptr, c_ptr, d_ptr, e_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m)
    tl.store(a_ptr + i, x + 1.0, mask=m)
    tl.store(b_ptr + i, x + 2.0, mask=m)
    tl.store(c_ptr + i, x * x, mask=m)
    tl.store(d_ptr + i, x * 4.0, mask=m)
    tl.store(e_ptr + i, x * 0.5, mask=m)  # a fifth double-buffered VECOUT queue would take ids 9 and 10


@ascdsl.jit
def four_outputs(x_ptr, a_ptr, b_ptr, c_ptr, d_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m)
    tl.store(a_ptr + i, x + 1.0, mask=m)
    tl.store(b_ptr + i, x + 2.0, mask=m)
    tl.store(c_ptr + i, x + 3.0, mask=m)
    tl.store(d_ptr + i, x + 4.0, mask=m)


@ascdsl.jit
def five_inputs(a_ptr, b_ptr, c_ptr, d_ptr, e_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    a = tl.load(a_ptr + i, mask=m, other=1.0)
    b = tl.load(b_ptr + i, mask=m)
    c = tl.load(c_ptr + i, mask=m)
    d = tl.load(d_ptr + i, mask=m)
    e = tl.load(e_ptr + i, mask=m)
    cd = c * d  # in place of c, it would lie over a: it gets a buffer of its own
    tl.store(out_ptr + i, a * b + cd - e, mask=m)


@ascdsl.jit
def outputs_per_chunk(x_ptr, out_ptr, total_ptr, n, BLOCK: tl.constexpr):
    """Five stores in every iteration of a loop, then one after it: segments that share the queue."""
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n, BLOCK):
        i = start + tl.arange(0, BLOCK)
        m = i < n
        x = tl.load(x_ptr + i, mask=m)
        for k in tl.static_range(5):
            tl.store(out_ptr + k * n + i, x * (k + 1), mask=m)
        acc += tl.where(m, x, 0.0)
    tl.store(total_ptr + tl.arange(0, BLOCK), acc)


def _vecout(kernel, *types, **consts):
    plan = compile_variant(kernel.specialize(*types, **consts).kernels[0], "Ascend910B3").plan
    return [s for s in plan.slots if s.position is kir.Position.VECOUT or s.bound]  # a bound queue hands to MTE3 too


def test_five_outputs_share_one_queue_of_five_tiles_without_barriers_between_them():
    x = RNG.standard_normal(64).astype(np.float32)
    want, got = both(five_outputs[(1,)], x, *[np.zeros_like(x) for _ in range(5)], 50, BLOCK=64)
    assert np.array_equal(want[5][:50], x[:50] * 0.5) and not want[5][50:].any()
    for w, g in zip(want[1:6], got[1:6]):
        assert np.array_equal(w, g)
    (slot,) = _vecout(five_outputs, *[F32] * 6, dtypes.int32, BLOCK=64)
    assert (slot.num, slot.bytes) == (2, 5 * 256)
    k = compile_variant(five_outputs.specialize(*[F32] * 6, dtypes.int32, BLOCK=64).kernels[0], "Ascend910B3")
    compute = next(s for s in k.stages if s.kind is kir.StageKind.COMPUTE)
    calls = [s for s in compute.body if isinstance(s, (kir.Call, kir.Barrier))]
    # the barrier after the masked load's tail fill (Duplicate) is a true read-after-write; the five
    # writes into disjoint parts of the queue buffer need none between them
    assert [type(s).__name__ for s in calls] == ["Barrier"] + ["Call"] * 5
    assert [k.names.slot(s) for s in k.plan.slots] == ["inQueueX", "outQueue"]


def test_four_double_buffered_output_queues_fit_as_they_are():
    x = np.arange(64, dtype=np.float32)
    want, got = both(four_outputs[(1,)], x, *[np.zeros_like(x) for _ in range(4)], 50, BLOCK=64)
    for w, g in zip(want, got):
        assert np.array_equal(w, g)
    slots = _vecout(four_outputs, *[F32] * 5, dtypes.int32, BLOCK=64)
    assert [(s.num, s.bytes) for s in slots] == [(2, 256)] * 4


def test_five_masked_inputs_share_one_queue():
    n = 300
    arrays = [RNG.standard_normal(n).astype(np.float32) for _ in range(5)]
    want, got = both(five_inputs[(3,)], *arrays, np.zeros(n, np.float32), n, BLOCK=128)
    a, b, c, d, e = (x.astype(np.float32) for x in arrays)
    assert np.array_equal(want[5], a * b + c * d - e)
    assert np.array_equal(got[5], want[5])
    plan = compile_variant(five_inputs.specialize(*[F32] * 6, dtypes.int32, BLOCK=128).kernels[0], "Ascend910B3").plan
    assert [(s.num, s.bytes) for s in plan.slots if s.position is kir.Position.VECIN] == [(2, 5 * 512)]


def test_sixteen_outputs_of_the_math_kernel_fit():
    n = 64
    x = np.linspace(-2.5, 2.5, n).astype(np.float32)
    y = np.linspace(0.25, 4, n).astype(np.float32)
    want, got = both(COMPAT.math_kernel[(1,)], x, y, np.zeros(16 * n, np.float32), N=n)
    testing.assert_close(got[2], want[2], dtypes.float32)
    exact = [0, 1, 4, 5, 6, 10, 15]  # floor ceil fdiv div_rn sqrt_rn clamp abs
    rows = np.arange(16 * n).reshape(16, n)[exact].ravel()
    assert np.array_equal(got[2][rows], want[2][rows])
    assert [(s.num, s.bytes) for s in _vecout(COMPAT.math_kernel, F32, F32, F32, N=n)] == [(2, 16 * 256)]


def test_random_kernels_mixed_outputs_and_strided_stores_fit():
    n, seed = 64, 0x1234_5678_9ABC
    outs = [np.zeros(2 * n, dt) for dt in (np.int32, np.float32, np.float32)] + [np.zeros(8 * n, np.int32)]
    want, got = both(COMPAT.random_kernel[(2,)], *outs, seed, N=n)
    for i in (0, 1, 3):  # integer ops and an exact scaling
        assert got[i].tobytes() == want[i].tobytes(), i
    testing.assert_close(got[2], want[2], dtypes.float32)  # log, sqrt, cos
    assert len(set(want[3].tolist())) == 8 * n


def test_segments_of_a_loop_and_after_it_share_the_queue():
    def check(n, dtype):
        x = (RNG.standard_normal(n) * 3).astype(dtype.np)
        want, got = both(outputs_per_chunk[(1,)], x, np.zeros(5 * n, dtype.np), np.zeros(64, np.float32), n,
                         BLOCK=64)
        assert np.array_equal(want[1][4 * n:], (x.astype(np.float32) * 5).astype(dtype.np))
        assert np.array_equal(got[1], want[1]) and np.array_equal(got[2], want[2])
    each(check, [(200, dtypes.float32), (130, dtypes.float16), (64, dtypes.bfloat16)])
    slots = _vecout(outputs_per_chunk, F32, F32, F32, dtypes.int32, BLOCK=64)
    assert [(s.num, s.bytes) for s in slots] == [(2, 5 * 256)]  # the total's tile fits in the chunks' queue


@CANN
def test_packed_queues_type_check_against_cann(tmp_path):
    f16 = tl.pointer_type(tl.float16)
    kernels = [five_outputs.specialize(*[p] * 6, dtypes.int32, BLOCK=64).kernels[0] for p in (F32, f16)]
    kernels += [five_inputs.specialize(*[F32] * 6, dtypes.int32, BLOCK=128).kernels[0],
                COMPAT.math_kernel.specialize(F32, F32, F32, N=64).kernels[0],
                COMPAT.random_kernel.specialize(tl.pointer_type(tl.int32), F32, F32, tl.pointer_type(tl.int32),
                                                tl.int64, N=64).kernels[0]]
    assert_type_checks("packed_queues", kernels, tmp_path)


@ascdsl.jit
def five_gathers(x_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Five gathers (each a VECIN staging buffer held within the compute stage) and a load."""
    offs = tl.arange(0, BLOCK)
    idx = tl.load(idx_ptr + offs)
    acc = tl.zeros((BLOCK,), tl.float32)
    for k in tl.static_range(5):
        acc += tl.load(x_ptr + (idx + k) % n) * (k + 1)
    tl.store(out_ptr + offs, acc)


def test_gathers_staging_buffers_share_a_queue():
    n = 100
    x = RNG.standard_normal(n).astype(np.float32)
    idx = RNG.integers(0, n, 64).astype(np.int32)
    want, got = both(five_gathers[(1,)], x, idx, np.zeros(64, np.float32), n, BLOCK=64)
    expect = sum(x[(idx + k) % n] * np.float32(k + 1) for k in range(5))
    np.testing.assert_allclose(want[2], expect, rtol=1e-6)
    assert np.array_equal(got[2], want[2])
    plan = compile_variant(five_gathers.specialize(F32, tl.pointer_type(tl.int32), F32, dtypes.int32, BLOCK=64)
                           .kernels[0], "Ascend910B3").plan
    assert [s.num for s in plan.slots if s.position is kir.Position.VECIN] == [2, 2]


def test_no_tile_is_computed_over_a_view_inside_a_packed_queue_buffer():
    """The identity cast of a template's float32 form computes its tile straight in the output's queue
    buffer, at the buffer's start: so only for a view at the packed buffer's start."""
    from ascdsl.backend.plan import ubplan
    from ascdsl.platforms import get_platform
    f32 = dtypes.float32
    stores = kir.Buf(1, kir.Role.OUTPUT, f32, "stores", ("out", "", 1))

    def alias(offset):
        t = kir.Buf(2, kir.Role.TILE, f32, "t")
        body = (kir.Queue(kir.QOp.ALLOC, stores),
                kir.Call("Duplicate", kir.Ref(t, f32, kir.lit(0), 64), (), (kir.Lit(1.0, f32), kir.lit(64))),
                kir.Call("Cast", kir.Ref(stores, f32, kir.lit(offset), offset + 64), (kir.Ref(t, f32, kir.lit(0), 64),),
                         (kir.Const.CAST_NONE, kir.lit(64))),
                kir.Queue(kir.QOp.ENQUE, stores))
        k = kir.Kernel("k", (), (), (kir.Segment(1, (), body, ()),))
        return dict(ubplan.plan(k, get_platform("Ascend910B3")).alias)
    assert alias(0) == {2: stores} and alias(64) == {}
