"""Loop-invariant Gather offsets are built on their loop's first trip only (ascdsl/backend/plan/hoist.py): the
kernel IR's calls counted under a first-trip test and elsewhere in the loops of ``Process``, and the kernels
on the simulator against the interpreter."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from ascdsl.backend import kir
from ascdsl.backend.render.ascendc import compile_variant
from ascdsl.planner import arg_types
from ascdsl.platforms import get_platform
from ops.log_softmax_grad import (log_softmax_backward, log_softmax_backward_host, reduce_middle_lines_kernel,
                                  reduce_middle_slabs_kernel)
from tests.backend.helpers import CANN, assert_type_checks, bits, both, data

B3 = get_platform("Ascend910B3")


@ascdsl.jit
def looped_moves_kernel(x_ptr, out_ptr, T, M: tl.constexpr, N: tl.constexpr):
    flat = tl.arange(0, M * N)
    half = tl.arange(0, M * N // 2)
    for t in range(T):
        x = tl.load(x_ptr + t * (M * N) + flat)
        moved = tl.reshape(tl.trans(tl.reshape(x, (M, N))), (M * N,))  # two Gathers: offsets invariant
        left, right = tl.split(tl.reshape(x, (M * N // 2, 2)))  # a Gather between two writes of its offsets
        base = out_ptr + t * (2 * M * N)
        tl.store(base + flat, moved)
        tl.store(base + M * N + half, left)
        tl.store(base + M * N + M * N // 2 + half, right)


def counts(k: kir.Kernel, api: str) -> tuple[int, int]:
    """``(once, every trip)``: the calls of ``api`` in the loops of ``Process`` under a first-trip test, and the
    others there."""
    out = [0, 0]

    def visit(body, first: bool) -> None:
        for s in body:
            if isinstance(s, kir.Call) and s.api == api:
                out[not first] += 1
            elif isinstance(s, kir.If) and s.first:
                visit(s.body, True)
            elif isinstance(s, (kir.For, kir.If)):
                visit(kir.children(s), first)
            elif isinstance(s, kir.Run):
                visit(s.stage.body, first)

    for s in k.process:
        if isinstance(s, kir.For):
            visit(s.body, False)
    return out[0], out[1]


def compiled(fn, args, **constexprs) -> kir.Kernel:
    return compile_variant(fn.specialize(*arg_types(fn, args), **constexprs).kernels[0], B3)


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.float16])
def test_offsets_of_a_reshape_and_a_transpose_are_built_before_the_loop(dtype):
    """The reshape's and the transpose's offsets are built on the first trip (one CreateVecIndex each: 3 every
    trip without the pass); the split's every trip, its second Gather reading them after an Adds."""
    m, n, trips = 8, 4, 3
    desc = ascdsl.TensorDesc((trips * m * n,), dtype)
    k = compiled(looped_moves_kernel, (desc, desc, trips), M=m, N=n)
    once, every = counts(k, "CreateVecIndex")
    assert every == 1 and once >= 2
    assert counts(k, "Gather")[0] == 0  # they read the trip's tile
    x = data(trips * m * n, dtype)
    want, got = both(looped_moves_kernel[(1,)], x, np.zeros(2 * trips * m * n, dtype.np), trips, M=m, N=n)
    np.testing.assert_array_equal(bits(got[1]), bits(want[1]))
    tiles = x.reshape(trips, m, n)
    expect = np.concatenate([np.concatenate([t.T.ravel(), t.ravel()[::2], t.ravel()[1::2]]) for t in tiles])
    assert (want[1] == expect).all()


def test_reduce_middle_lines_fold_offsets_are_built_once_a_core():
    """Issue 24: log_softmax_grad's reduce-middle lines fold each slab's line sums into the ``d2`` column sums and
    back (two Gathers a slab); their offsets are the same for every slab, built for a core's first (116 slabs:
    3 a core)."""
    desc = ascdsl.TensorDesc((116, 201, 9), dtypes.float32)
    plan = log_softmax_backward_host(desc, desc, 1, B3, lines=True)
    assert plan.variant == "reduce_middle_lines"
    k = compiled(reduce_middle_lines_kernel, (desc, desc, desc, *plan.scalars.values()), **plan.constexprs)
    assert counts(k, "CreateVecIndex") == (2, 0)
    assert counts(k, "Gather") == (0, 2)
    rng = np.random.default_rng(1)
    grad, out = (rng.standard_normal((116, 201, 9)).astype(np.float32) for _ in range(2))
    want = log_softmax_backward(grad, out, 1)
    got = log_softmax_backward(grad, out, 1, backend="sim")
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@CANN
def test_first_trip_tests_type_check_against_cann(tmp_path):
    """The kernels with a first-trip test (``if (t == 0)``, ``if (unit == start)``) against the real CANN headers,
    with g++ and clang++; and the whole-slab tiles (3-D folds and broadcasts with the rows as repeats)."""
    f32 = ascdsl.TensorDesc((96,), dtypes.float32)
    kernels = [looped_moves_kernel.specialize(*arg_types(looped_moves_kernel, (f32, f32, 3)), M=8, N=4).kernels[0]]
    for shape, kernel in [((116, 201, 9), reduce_middle_lines_kernel), ((251, 158, 3), reduce_middle_slabs_kernel)]:
        desc = ascdsl.TensorDesc(shape, dtypes.float32)
        plan = log_softmax_backward_host(desc, desc, 1, B3, lines=True)
        assert plan.kernel is kernel
        kernels.append(kernel.specialize(*arg_types(kernel, (desc, desc, desc, *plan.scalars.values())),
                                         **plan.constexprs).kernels[0])
    assert_type_checks("first_trip_offsets", kernels, tmp_path)
