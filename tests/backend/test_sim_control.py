"""Control flow on the simulator against the interpreter: runtime ``if``/``elif``/``else`` (tiles and
scalars merged after it, nested, inside loops around loads and stores, conditions from reductions),
early ``return`` guards, loops that carry scalars and tiles, runtime and negative loop steps,
``while`` loops (conditions from scalars and from reductions, around loads and stores)."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from tests import test_interpreter_dsl as dsl
from tests.backend.helpers import CANN, FLOATS, assert_type_checks, both, data, prebuilt


@ascdsl.jit
def branch_kernel(x_ptr, out_ptr, n, t, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    if pid % 3 == 0:
        y = x * 2.0
        s = t + 1.0
    elif pid % 3 == 1:
        if pid > 3:
            y = x - 1.0
        else:
            y = tl.maximum(x, 0.5)
        s = t * 3.0
    else:
        y = tl.abs(x)
        s = t
    tl.store(out_ptr + offs, y + s, mask=mask)


@ascdsl.jit
def branch_in_loop_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.float32)
    count = 0
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        if (start // BLOCK) % 2 == 0:
            x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
            acc += x
            tl.store(out_ptr + offs, (x * 2.0).to(out_ptr.dtype.element_ty), mask=mask)
            count += 1
        else:
            tl.store(out_ptr + offs, tl.zeros((BLOCK,), out_ptr.dtype.element_ty), mask=mask)
    tl.store(out_ptr + n + tl.arange(0, BLOCK), (acc * count).to(out_ptr.dtype.element_ty))


@ascdsl.jit
def reduced_condition_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * BLOCK + tl.arange(0, BLOCK))
    total = tl.sum(x, axis=0)
    if total > 0:
        y = x / total
    else:
        y = -x
    tl.store(out_ptr + row * BLOCK + tl.arange(0, BLOCK), y)


@ascdsl.jit
def guard_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid * BLOCK >= n:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, x + 1.0, mask=offs < n)


@ascdsl.jit
def carry_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.float32)
    total = 0.0
    k = 0
    a = 1
    b = 2
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        acc += x
        total += tl.sum(x, axis=0)
        k += 1
        a, b = b, a + b  # a parallel assignment of carried scalars
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, acc * total)  # `+ k` here would cancel the sum's rounding into large relative errors
    tl.store(out_ptr + BLOCK + offs, tl.zeros((BLOCK,), tl.float32) + (a * 10 + b + k * 1000))


@ascdsl.jit
def step_kernel(x_ptr, out_ptr, lo, hi, step, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in range(lo, hi, step):
        acc = acc * 0.5 + tl.load(x_ptr + i * BLOCK + tl.arange(0, BLOCK))
    for j in range(hi - 1, lo - 1, -2):
        acc = acc + tl.load(x_ptr + j * BLOCK + tl.arange(0, BLOCK)) * 0.25
    tl.store(out_ptr + tl.arange(0, BLOCK), acc)


def _ulps(dtype):
    return dict(rtol=dtype.rtol, atol=dtype.atol)


def _check_branch(dtype):
    n = 1000
    x = data(n, dtype)
    want, got = both(branch_kernel[(8,)], x, np.zeros(n, dtype.np), n, 0.5, BLOCK=128)
    assert got[1].tobytes() == want[1].tobytes()  # mul, sub, max, abs, add: exact


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_if_elif_else_merges_tiles_and_scalars(dtype):
    prebuilt(_check_branch, [(d,) for d in FLOATS])
    _check_branch(dtype)


def _check_branch_in_loop(dtype, n):
    x = data(n, dtype)
    want, got = both(branch_in_loop_kernel[(1,)], x, np.zeros(n + 64, dtype.np), n, BLOCK=64)
    assert got[1].tobytes() == want[1].tobytes(), f"n={n}"


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_if_around_loads_and_stores_inside_a_loop(dtype):
    cases = [(d, n) for d in FLOATS for n in (1, 64, 300)]
    prebuilt(_check_branch_in_loop, cases)
    for d, n in cases:
        if d == dtype:
            _check_branch_in_loop(d, n)


def test_if_on_a_reduced_scalar():
    x = data((6, 64), dtypes.float32)
    x[::2], x[1::2] = np.abs(x[::2]), -np.abs(x[1::2])  # sums of both signs
    want, got = both(reduced_condition_kernel[(6,)], x, np.zeros_like(x), BLOCK=64)
    assert np.array_equal(got[1][1::2], -x[1::2])  # the else branch: exact
    np.testing.assert_allclose(got[1], want[1], **_ulps(dtypes.float32))  # the sum's order differs


def test_early_return_guard():
    n = 1000
    x = data(n, dtypes.float32)
    want, got = both(guard_kernel[(12,)], x, np.full(n, 7.0, np.float32), n, BLOCK=128)  # 4 programs return
    assert got[1].tobytes() == want[1].tobytes()


def test_early_returns_in_nested_ifs_and_else_branches():
    x = data(300, dtypes.float32)
    want, got = both(dsl.early_exit_kernel[(5,)], x, np.zeros_like(x), 300, BLOCK=64)
    assert np.array_equal(want[1], dsl.early_exit_reference(x, 64))
    assert got[1].tobytes() == want[1].tobytes()


def test_loops_carry_scalars_and_tiles():
    for n in (0, 1, 1000):
        x = data(max(n, 1), dtypes.float32)
        want, got = both(carry_kernel[(1,)], x, np.zeros(256, np.float32), n, BLOCK=128)
        np.testing.assert_allclose(got[1], want[1], **_ulps(dtypes.float32), err_msg=f"n={n}")
        assert got[1][128:].tobytes() == want[1][128:].tobytes()


@pytest.mark.parametrize("lo,hi,step", [(0, 7, 2), (1, 8, 3), (6, 0, -2), (2, 2, 1), (5, 1, 1)])
def test_runtime_and_negative_loop_steps(lo, hi, step):
    x = data(8 * 32, dtypes.float32)
    want, got = both(step_kernel[(1,)], x, np.zeros(32, np.float32), lo, hi, step, BLOCK=32)
    assert got[1].tobytes() == want[1].tobytes(), (lo, hi, step)


@ascdsl.jit
def halve_until_kernel(x_ptr, out_ptr, tol, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * BLOCK + tl.arange(0, BLOCK))
    while tl.sum(x * x, axis=0) > tol:
        x = x * 0.5
    tl.store(out_ptr + row * BLOCK + tl.arange(0, BLOCK), x)


@ascdsl.jit
def while_copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    off = tl.program_id(0) * BLOCK
    while off < n:
        offs = off + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3.0, mask=offs < n)
        off += BLOCK * tl.num_programs(0)


def test_while_with_scalar_and_tile_carries():
    ns = np.array([1, 2, 3, 7, 27, 6], np.int32)
    want, got = both(dsl.collatz_kernel[(6,)], ns, np.zeros(6, np.int32), np.zeros(6 * 16, np.float32), BLOCK=16)
    assert np.array_equal(want[1], [0, 1, 7, 16, 111, 8])
    assert got[1].tobytes() == want[1].tobytes() and got[2].tobytes() == want[2].tobytes()


def test_while_on_a_reduced_condition():
    x = (data((5, 32), dtypes.float32) * np.array([1, 10, 100, 0.01, 3], np.float32)[:, None]).astype(np.float32)
    want, got = both(halve_until_kernel[(5,)], x, np.zeros_like(x), 1.0, BLOCK=32)
    assert got[1].tobytes() == want[1].tobytes()  # halving is exact; the sums compare alike here


def test_while_around_loads_and_stores():
    for n in (0, 5, 1000):
        x = data(max(n, 1), dtypes.float32)
        want, got = both(while_copy_kernel[(3,)], x, np.zeros(max(n, 1), np.float32), n, BLOCK=64)
        assert got[1].tobytes() == want[1].tobytes(), f"n={n}"


@ascdsl.jit
def center_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    total = tl.zeros((BLOCK,), tl.float32)
    off = 0
    while off < n:
        total += tl.load(x_ptr + row * n + off + tl.arange(0, BLOCK), mask=off + tl.arange(0, BLOCK) < n, other=0.0)
        off += BLOCK
    mean = tl.sum(total, axis=0) / n  # a reduced scalar, read by the next loop's compute stages
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        tl.store(out_ptr + row * n + cols, tl.load(x_ptr + row * n + cols, mask=cols < n) - mean, mask=cols < n)


def test_a_reduced_scalar_used_by_a_later_loop():
    x = data((3, 300), dtypes.float32)
    want, got = both(center_kernel[(3,)], x, np.zeros_like(x), 300, BLOCK=128)
    np.testing.assert_allclose(got[1], want[1], **_ulps(dtypes.float32))


@ascdsl.jit
def swap_in_branch_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    a = tl.zeros((BLOCK,), tl.float32)
    b = tl.zeros((BLOCK,), tl.float32) + 1.0
    for i in range(0, n):
        x = tl.load(x_ptr + i * BLOCK + tl.arange(0, BLOCK))
        if i % 3 == 0:
            a_next = x * 2.0  # computed before `a` is read again: not into a's buffer
            b_next = a + 1.0
        elif i % 3 == 1:
            a_next = a + x  # updates a in place
            b_next = b
        else:
            a_next = b
            b_next = a
        a, b = a_next, b_next
    tl.store(out_ptr + tl.arange(0, BLOCK), a)
    tl.store(out_ptr + BLOCK + tl.arange(0, BLOCK), b)


def test_branches_that_update_and_swap_loop_carried_tiles():
    x = data(7 * 32, dtypes.float32)
    want, got = both(swap_in_branch_kernel[(1,)], x, np.zeros(64, np.float32), 7, BLOCK=32)
    assert got[1].tobytes() == want[1].tobytes()


@ascdsl.jit
def nested_control_kernel(x_ptr, out_ptr, count_ptr, rows, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid >= rows:
        return
    for row in tl.range(pid, rows, tl.num_programs(0)):
        s = tl.load(x_ptr + row * n)  # a scalar of the rows' dtype, carried below
        k = 0
        acc = tl.zeros((BLOCK,), tl.float32)
        off = 0
        while off < n:
            cols = off + tl.arange(0, BLOCK)
            if row % 2 == 0:
                x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=0.0)
                acc += x.to(tl.float32)
                s = s * 0.5 + tl.max(x, axis=0).to(s.dtype)
            else:
                k += 2
            off += BLOCK
        tl.store(out_ptr + row * BLOCK + tl.arange(0, BLOCK), (acc + s.to(tl.float32)).to(out_ptr.dtype.element_ty))
        tl.store(count_ptr + row, k)


def _check_nested(dtype):
    x = data((9, 100), dtype)
    for programs in (4, 12):  # rows strided over programs; programs past the rows return at once
        want, got = both(nested_control_kernel[(programs,)], x, np.zeros((9, 64), dtype.np), np.zeros(9, np.int32),
                          9, 100, BLOCK=64)
        assert got[1].tobytes() == want[1].tobytes() and got[2].tobytes() == want[2].tobytes(), programs


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_a_guard_grid_stride_loop_while_and_branch_together(dtype):
    """16-bit scalars carried by a while inside a grid-stride loop, updated in a branch that loads."""
    prebuilt(_check_nested, [(d,) for d in FLOATS])
    _check_nested(dtype)


@ascdsl.jit
def computed_offsets_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid % 2 == 0:  # merged in the compute stage
        off = 0
    else:
        off = BLOCK
    x = tl.load(x_ptr + off + tl.arange(0, BLOCK))
    k = tl.max(x, axis=0).to(tl.int32)  # a reduction
    y = tl.load(x_ptr + k + tl.arange(0, BLOCK))
    tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), x + y)


def test_loads_addressed_by_scalars_the_compute_stage_sets():
    """Their CopyIn runs in a later segment than the stage that sets the scalar (was: a stale offset)."""
    x = np.concatenate([np.full(16, 3.0), np.full(16, 7.0), np.arange(32)]).astype(np.float32)
    want, got = both(computed_offsets_kernel[(4,)], x, np.zeros(4 * 16, np.float32), BLOCK=16)
    assert np.array_equal(want[1][:16], x[:16] + x[3:19]) and np.array_equal(want[1][16:32], x[16:32] + x[7:23])
    assert got[1].tobytes() == want[1].tobytes()


@CANN
def test_lowered_control_flow_type_checks_against_cann(tmp_path):
    """Branches (in Process and in a compute stage), while loops, trip-count loops, members, GetValue
    on GM and one-element stores, in the three float dtypes, against the real CANN headers."""
    from tests.backend import test_sim_single as single
    p = {d: tl.pointer_type(d) for d in FLOATS}
    i32, i64, f32 = tl.pointer_type(dtypes.int32), tl.pointer_type(dtypes.int64), p[dtypes.float32]
    kernels = [k.kernels[0] for k in (
        *(branch_kernel.specialize(p[d], p[d], 1000, 0.5, BLOCK=128) for d in FLOATS),
        *(nested_control_kernel.specialize(p[d], p[d], i32, 9, 100, BLOCK=64) for d in FLOATS),
        *(single.row_stats_kernel.specialize(p[d], f32, p[d], p[d], p[d], 100, 1e-5, BLOCK=128) for d in FLOATS),
        dsl.collatz_kernel.specialize(i32, i32, f32, BLOCK=16),
        halve_until_kernel.specialize(f32, f32, 1.0, BLOCK=32),
        step_kernel.specialize(f32, f32, 0, 7, 2, BLOCK=32),
        single.narrow_and_wide_stores_kernel.specialize(i64, tl.pointer_type(dtypes.int8),
                                                        tl.pointer_type(dtypes.uint8), 2**33),
        single.masked_single_kernel.specialize(p[dtypes.float16], p[dtypes.float16], 5),
        single.ragged_rows_kernel.specialize(f32, i32, i32, f32, f32, BLOCK=64),
        swap_in_branch_kernel.specialize(f32, f32, 7, BLOCK=32),
        computed_offsets_kernel.specialize(f32, f32, BLOCK=16),
        dsl.early_exit_kernel.specialize(f32, f32, 300, BLOCK=64))]
    assert_type_checks("control_kernel", kernels, tmp_path)
