"""Single-trip loops and reused loads (ascdsl/passes/reuse.py): each pass's output prints, parses and gives
its input's results bit for bit on the interpreter, alone and batched; a load is not reused across a write
that may reach its bytes (the same pointer, a loop's later write, another pointer unless the launch's
arguments are disjoint); batched layer norm on the simulator equals the interpreter."""
from __future__ import annotations

import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes, interpreter, sim
from ascdsl.backend.batching import batchrun
from ascdsl.backend.render.ascendc import compile_variant
from ascdsl.bench_kernels import layer_norm_kernel
from ascdsl.ir import Module, Op, walk
from ascdsl.ir.text import dump, parse
from ascdsl.passes import REUSE, specialise
from ascdsl.passes.batching import batch_programs
from ascdsl.passes.reuse import (DISJOINT, TAKEN, assume_disjoint, decided_branches, reused_loads, single_trip_loops,
                                 taken_branches)
from ascdsl.platforms import get_platform
from ascdsl.testing import assert_close
from tests import test_interpreter_dsl as dsl
from tests.test_batching import softmax_ops

pytestmark = pytest.mark.usefixtures("prebuilt_module")  # the simulator kernels in few g++ runs

PLATFORM = get_platform("Ascend910B3")
rng = np.random.default_rng(11)


def _f(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def _loads(kernel) -> int:
    return sum(i.op is Op.LOAD for i in walk(kernel.body))


def _layer_norm(m, n):
    x, w, b = _f(m, n), _f(n), _f(n)
    return [x, np.zeros((m, n), np.float32), w, b, np.zeros(m, np.float32), np.zeros(m, np.float32), np.int32(n),
            np.int32(n), np.float32(1e-5)]


def _runs_like(kernel, args, m: int, *forms) -> None:
    """Each of ``forms`` (kernel, extra arguments, grid) writes bit for bit what ``kernel`` writes on ``m`` programs."""
    want = [a.copy() for a in args]
    interpreter.run(kernel, want, (m, 1, 1))
    for k, extra, grid in forms:
        got = [a.copy() for a in args]
        interpreter.run(k, got + extra, (grid, 1, 1))
        for g, w in zip(got, want):
            assert g.tobytes() == w.tobytes()


@ascdsl.jit
def accumulate_kernel(x_ptr, sum_ptr, squares_ptr, totals_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0) * n
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, n, BLOCK):
        acc += tl.load(x_ptr + row + off + cols, mask=off + cols < n, other=0.0)
    squares = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, n, BLOCK):
        x = tl.load(x_ptr + row + off + cols, mask=off + cols < n, other=0.0)
        squares += x * x
    tl.store(sum_ptr + row + cols, acc, mask=cols < n)
    tl.store(squares_ptr + row + cols, squares, mask=cols < n)
    tl.store(totals_ptr + 2 * tl.program_id(0), tl.sum(acc, axis=0))  # as the sum of x: it starts from +0.0
    tl.store(totals_ptr + 2 * tl.program_id(0) + 1, tl.max(acc, axis=0))  # not the max of x (-0.0 for -0.0s)


def _signed_zeros():
    x = _f(5, 32)
    x[:, ::2] = -0.0  # 0.0 + -0.0 is 0.0: the accumulator's first addition is not its operand
    x[3] = -0.0
    return [x, np.zeros((5, 32), np.float32), np.zeros((5, 32), np.float32), np.zeros(10, np.float32), np.int32(32)]


# (name, jit kernel, grid, args, constexprs): N within one block (single trip) and over several
CASES = [
    ("accumulators of -0.0", accumulate_kernel, (5,), _signed_zeros(), {"BLOCK": 32}),
    ("layer norm, one block", layer_norm_kernel, (37,), _layer_norm(37, 100), {"BLOCK_SIZE": 128}),
    ("layer norm, four blocks", layer_norm_kernel, (37,), _layer_norm(37, 100), {"BLOCK_SIZE": 32}),
    ("looped softmax, one block", softmax_ops.softmax_looped_kernel, (5,),
     [_f(5, 33), np.zeros((5, 33), np.float32), np.int32(33)], {"BLOCK": 64}),
    ("looped softmax, three blocks", softmax_ops.softmax_looped_kernel, (5,),
     [_f(5, 33), np.zeros((5, 33), np.float32), np.int32(33)], {"BLOCK": 16}),
]


def _copy(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _same(want, got) -> bool:
    return all(a.tobytes() == b.tobytes() for a, b in zip(want, got) if isinstance(a, np.ndarray))


@pytest.mark.parametrize("disjoint", [False, True])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_each_pass_keeps_results_and_round_trips(case, disjoint):
    _, jit, grid, args, constexprs = case
    kernel = jit.specialize(*args, **constexprs).kernels[0]
    want = _copy(args)
    interpreter.run(kernel, want, (*grid, 1, 1))
    k = assume_disjoint(kernel) if disjoint else kernel
    for p in REUSE:
        k = p(k, PLATFORM)
        module = Module((k,))
        assert parse(dump(module)) == module
        got = _copy(args)
        interpreter.run(k, got, (*grid, 1, 1))
        assert _same(want, got), p.__name__
    branch = k.body.body[-1]  # the single-trip branch reuses what the loops read again
    assert branch.op is Op.IF and _loads(k.with_body(branch.regions[0])) < _loads(k.with_body(branch.regions[1]))
    for p in (2, 3):  # the branch on the loops' bounds is uniform: batching applies to the versioned kernel
        got = _copy(args) + [np.int32(grid[0])]
        interpreter.run(batch_programs(k, p), got, (-(-grid[0] // p), 1, 1))
        assert _same(want, got)


def test_layer_norm_reads_its_row_once_where_it_fits_a_block():
    kernel = layer_norm_kernel.specialize(*_layer_norm(4, 100), BLOCK_SIZE=128).kernels[0]
    once = specialise(kernel, True, PLATFORM)
    branch = once.body.body[-1]
    assert branch.op is Op.IF and dict(once.constexprs)[DISJOINT] is True
    # the single-trip branch loads X + cols once (and W and B), the loops three times (as many again in the loops
    # of the last block: ascdsl/passes/peel.py)
    assert [_loads(once.with_body(r)) for r in branch.regions] == [3, 2 * 5]
    # without disjoint arguments the stores to Mean and Rstd, between the second read and the third, keep the third
    kept = specialise(kernel, False, PLATFORM)
    assert _loads(kept.with_body(kept.body.body[-1].regions[0])) == 4


@ascdsl.jit
def store_between_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    a = tl.load(x_ptr + cols, mask=cols < n, other=0.0)
    tl.store(x_ptr + cols, a + 1.0, mask=cols < n)
    b = tl.load(x_ptr + cols, mask=cols < n, other=0.0)
    tl.store(out_ptr + cols, a + b, mask=cols < n)


@ascdsl.jit
def other_pointer_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    a = tl.load(x_ptr + cols, mask=cols < n, other=0.0)
    tl.store(y_ptr + cols, a * 2.0, mask=cols < n)
    b = tl.load(x_ptr + cols, mask=cols < n, other=0.0)
    tl.store(out_ptr + cols, a + b, mask=cols < n)


@ascdsl.jit
def atomic_between_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    a = tl.load(x_ptr + cols, mask=cols < n, other=0.0)
    tl.atomic_add(x_ptr + cols, a, mask=cols < n)
    b = tl.load(x_ptr + cols, mask=cols < n, other=0.0)
    tl.store(out_ptr + cols, a + b, mask=cols < n)


@ascdsl.jit
def loop_store_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    a = tl.load(x_ptr + cols, mask=cols < n, other=0.0)
    for _ in range(0, n, BLOCK):
        b = tl.load(x_ptr + cols, mask=cols < n, other=0.0)  # after the last iteration's store
        tl.store(x_ptr + cols, b + 1.0, mask=cols < n)
    tl.store(out_ptr + cols, a, mask=cols < n)


@ascdsl.jit
def signed_zero_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    a = tl.load(x_ptr + cols, mask=cols < n, other=0.0)
    b = tl.load(x_ptr + cols, mask=cols < n, other=-0.0)
    tl.store(out_ptr + cols, a * b, mask=cols < n)


@ascdsl.jit
def same_load_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    a = tl.load(x_ptr + cols, mask=cols < n, other=0.0)
    tl.store(y_ptr + cols, a, mask=cols < n)
    b = tl.load(x_ptr + cols, mask=cols < n, other=0.0)
    tl.store(out_ptr + cols, b, mask=cols < n)


@pytest.mark.parametrize("jit, args, disjoint", [
    (store_between_kernel, [_f(40), np.zeros(40, np.float32)], True),  # the same pointer: never
    (other_pointer_kernel, [_f(40), np.zeros(40, np.float32), np.zeros(40, np.float32)], False),
    (atomic_between_kernel, [_f(40), np.zeros(40, np.float32)], True),  # an atomic writes too
    (loop_store_kernel, [_f(40), np.zeros(40, np.float32)], True),  # a loop's write reaches its next reads
    (signed_zero_kernel, [_f(40), np.zeros(40, np.float32)], True),  # other=0.0 and other=-0.0 differ
])
def test_a_load_a_write_may_reach_is_not_reused(jit, args, disjoint):
    kernel = jit.specialize(*args, np.int32(33), BLOCK=64).kernels[0]
    k = assume_disjoint(kernel) if disjoint else kernel
    assert reused_loads(k, PLATFORM) == k


def test_another_pointers_write_crosses_a_load_only_on_disjoint_arguments():
    out = np.zeros(40, np.float32)
    kernel = other_pointer_kernel.specialize(_f(40), _f(40), out, np.int32(33), BLOCK=64).kernels[0]
    reused = reused_loads(assume_disjoint(kernel), PLATFORM)
    assert _loads(reused) == 1
    apart = [_f(40), np.zeros(40, np.float32), out, np.int32(33)]
    assert batchrun.disjoint(kernel, apart) and _loads(batchrun.specialised(kernel, apart, PLATFORM)) == 1
    base = _f(41)  # y = x shifted by one: the store to y changes what the second load of x reads
    assert not batchrun.disjoint(kernel, [base[:40], base[1:], out, np.int32(33)])

    def run(k):
        mem, o = base.copy(), out.copy()
        interpreter.run(k, [mem[:40], mem[1:], o, np.int32(33)], (1, 1, 1))
        return mem.tobytes() + o.tobytes()
    launched = batchrun.specialised(kernel, [base[:40], base[1:], out, np.int32(33)], PLATFORM)
    assert _loads(launched) == 2 and run(launched) == run(kernel) != run(reused)


def test_a_write_through_the_same_pointer_between_reads_keeps_the_second():
    x, out = _f(40), np.zeros(40, np.float32)
    kernel = store_between_kernel.specialize(x, out, np.int32(33), BLOCK=64).kernels[0]
    assert _loads(batchrun.specialised(kernel, [x, out, np.int32(33)], PLATFORM)) == 2


@ascdsl.jit
def runtime_step_kernel(x_ptr, out_ptr, n, step, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, n, step):
        acc += tl.load(x_ptr + off + cols, mask=off + cols < n, other=0.0)
    for off in range(0, n, step):
        tl.store(out_ptr + off + cols, tl.load(x_ptr + off + cols, mask=off + cols < n, other=0.0) + acc,
                 mask=off + cols < n)


def test_loops_are_versioned_only_where_the_single_trip_branch_reuses_loads():
    x, out = _f(40), np.zeros(40, np.float32)
    kernel = runtime_step_kernel.specialize(x, out, np.int32(33), np.int32(64), BLOCK=64).kernels[0]
    assert single_trip_loops(kernel, PLATFORM) == kernel  # a run-time step: no trip count known to be one
    one_loop = layer_norm_kernel.specialize(*_layer_norm(4, 100), BLOCK_SIZE=128).kernels[0]
    assert single_trip_loops(one_loop, PLATFORM) != one_loop
    plain = dsl.add_kernel.specialize(x, x, out, np.int32(33), BLOCK=64).kernels[0]
    assert specialise(plain, True, PLATFORM) is plain  # nothing to reuse: the launch keeps the kernel


@pytest.mark.parametrize("shape, block", [((203, 100), 128), ((97, 64), 64), ((203, 100), 32)])
def test_batched_layer_norm_on_the_simulator_equals_the_interpreter(shape, block):
    def arrays():
        r = np.random.default_rng(5)
        m, n = shape
        return [r.standard_normal(shape).astype(np.float32), np.zeros(shape, np.float32),
                r.standard_normal(n).astype(np.float32), r.standard_normal(n).astype(np.float32),
                np.zeros(m, np.float32), np.zeros(m, np.float32)]
    m, n = shape
    want, got = arrays(), arrays()
    layer_norm_kernel[(m,)](*want, n, n, np.float32(1e-5), BLOCK_SIZE=block)
    with sim.record(), ascdsl.record.launches() as seen:
        layer_norm_kernel[(m,)](*got, n, n, np.float32(1e-5), BLOCK_SIZE=block, backend="sim")
    (launched,) = seen
    kernel = batchrun.specialised(launched.kernel, launched.args, PLATFORM)
    assert kernel.body.body[-1].op is Op.IF and batchrun.plan(kernel, m, PLATFORM).p >= 2
    for w, g in zip(want, got):
        assert_close(g, w, dtypes.float32)


@pytest.mark.parametrize("n, priced", [(100, True), (200, False)])
def test_the_cost_model_prices_the_branch_the_launch_takes(n, priced):
    """A launch whose rows fit the block runs the single-trip branch, one step a program, which the model
    prices; one of longer rows runs the loops, several steps, which it does not (the UB rule's P)."""
    args = _layer_norm(400, n)
    kernel = batchrun.specialised(layer_norm_kernel.specialize(*args, BLOCK_SIZE=128).kernels[0], args, PLATFORM)
    choice = batchrun.plan(kernel, 400, PLATFORM, batchrun.scalar_fields(kernel, args))
    assert choice.p >= 2 and (choice.best is not None) == priced


def test_the_model_prices_the_rows_read_once_as_the_simulator_runs_them():
    """W and B, the same bytes every batched program reads, come from the L2 after the first (the model's
    estimate within 3% of the simulator's, as for the other kernels: docs/performance.md)."""
    m, n = 1600, 1024
    args = _layer_norm(m, n)
    with sim.record() as runs, ascdsl.record.launches() as seen:
        layer_norm_kernel[(m,)](*args[:6], n, n, np.float32(1e-5), BLOCK_SIZE=1024, backend="sim")
    kernel = batchrun.specialised(seen[0].kernel, seen[0].args, PLATFORM, m)
    choice = batchrun.plan(kernel, m, PLATFORM, batchrun.scalar_fields(kernel, seen[0].args))
    assert choice.best is not None and abs(choice.run.est_us / runs[0].stats.est_us - 1) < 0.03


def test_a_launch_keeps_the_kernel_where_its_versioned_form_does_not_fit():
    """At BLOCK_SIZE = 7168 the loops fit the UB; the single-trip branch, holding the row across them, does not."""
    args = _layer_norm(64, 100)
    kernel = layer_norm_kernel.specialize(*args, BLOCK_SIZE=7168).kernels[0]
    with pytest.raises(ascdsl.CompilationError, match="bytes of UB"):
        compile_variant(specialise(kernel, True, PLATFORM), PLATFORM)
    compile_variant(kernel, PLATFORM)
    assert batchrun.specialised(kernel, args, PLATFORM) is kernel


@pytest.mark.parametrize("n", [100, 128, 300])
def test_the_branch_a_launch_takes_gives_the_versioned_kernels_results(n):
    """Layer norm versioned on its loops (rows of 100 or 128 fit the block of 128: the single-trip branch; 300
    does not: the loops): the kernel of the branch the launch's scalars take, alone and batched, gives the
    versioned kernel's results bit for bit on the interpreter, and its IR dump names the branch."""
    m = 37
    args = _layer_norm(m, n)
    versioned = specialise(layer_norm_kernel.specialize(*args, BLOCK_SIZE=128).kernels[0], True, PLATFORM)
    decided = decided_branches(versioned, args)
    assert decided == (n <= 128,)
    taken = taken_branches(versioned, decided)
    assert dict(taken.constexprs)[TAKEN] == ("then" if n <= 128 else "else")
    assert not any(i.op is Op.IF for i in taken.body.body) and parse(dump(Module((taken,)))) == Module((taken,))
    _runs_like(versioned, args, m, (taken, [], m), (batch_programs(taken, 4), [np.int32(m)], 10))


@ascdsl.jit
def branch_on_program_kernel(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    """Two branches a launch does not decide (the program id; a float scalar), one it does (``n``)."""
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + pid * BLOCK + cols)
    if pid < 2:
        x = x + 1.0
    if scale > 1.0:
        x = x * scale
    if n > 3:
        x = x - 1.0
    tl.store(out_ptr + pid * BLOCK + cols, x)


def test_only_branches_the_launch_decides_are_taken():
    """A branch on the program id or on a float scalar stays; one on an integer scalar argument is the branch
    taken, whose results equal the kernel's on the interpreter."""
    x, out = _f(4 * 16), np.zeros(4 * 16, np.float32)
    args = [x, out, np.int32(5), np.float32(2.0)]
    kernel = branch_on_program_kernel.specialize(*args, BLOCK=16).kernels[0]
    assert decided_branches(kernel, args) == (None, None, True)
    taken = taken_branches(kernel, decided_branches(kernel, args))
    assert dict(taken.constexprs)[TAKEN] == "then" and sum(i.op is Op.IF for i in taken.body.body) == 2
    assert taken_branches(kernel, (None, None, None)) is kernel
    want, got = [a.copy() for a in args], [a.copy() for a in args]
    interpreter.run(kernel, want, (4, 1, 1))
    interpreter.run(taken, got, (4, 1, 1))
    assert got[1].tobytes() == want[1].tobytes()


@pytest.mark.parametrize("m, n, taken", [(3000, 777, True), (4096, 1024, True), (256, 1024, True), (40, 1024, False)])
def test_a_launch_takes_the_branch_where_the_model_estimates_it_faster(m, n, taken):
    """Layer norm's single-trip branch alone stores its result from its input's queue buffer and fits a larger
    P: at 3000 rows of 777 and 4096 rows of 1024 the model estimates it faster and the launch runs it (4096x1024
    simulated: 22.00 us at P = 12 against 25.48 keeping both versions at P = 6, with writes through the L2). Its
    ``W`` and ``B`` loads are top-level, so it also has a persistent form: at 256 rows of 1024 that runs at P = 4
    (2.976 us simulated against 3.289 keeping both versions at P = 4). At 40 rows of 1024 (a row a core, unbatched
    either way) it gains nothing and the launch keeps both versions (1.009 us simulated either way)."""
    args = _layer_norm(m, n)
    kernel = layer_norm_kernel.specialize(*args, BLOCK_SIZE=1024).kernels[0]
    launched = batchrun.specialised(kernel, args, PLATFORM, m)
    assert (TAKEN in dict(launched.constexprs)) == taken
    assert batchrun.specialised(kernel, args, PLATFORM) is batchrun.specialised(kernel, args, PLATFORM)
    assert TAKEN not in dict(batchrun.specialised(kernel, args, PLATFORM).constexprs)
