"""Loops whose start is an int64 value past 2**31 on the simulator against the interpreter: the induction variable
takes the widest dtype of the start, stop and step (Python's semantics, as Triton's), in the generated code too.
Each check reads a value or an address that int32 induction would get wrong (the start wraps to a small or
negative int32)."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from tests.backend.helpers import both, each

PAST_INT32 = 2**32 + 5
"""A start whose low 32 bits are 5: under int32 induction the values stored would be 5, 6, ..."""


@ascdsl.jit
def wide_start_values_kernel(out_ptr, start, stop, step, BLOCK: tl.constexpr):
    k = 0
    for i in range(start, stop, step):
        tl.store(out_ptr + k * BLOCK + tl.arange(0, BLOCK), i + tl.arange(0, BLOCK).to(tl.int64))
        k += 1


@ascdsl.jit
def wide_start_stride_kernel(out_ptr, start, n, STEP: tl.constexpr, BLOCK: tl.constexpr):
    k = 0
    for i in range(start, start + n, STEP):
        tl.store(out_ptr + k * BLOCK + tl.arange(0, BLOCK), i + tl.arange(0, BLOCK).to(tl.int64))
        k += 1


@pytest.mark.parametrize("start, stop, step", [
    (PAST_INT32, PAST_INT32 + 40, 7),  # a run-time step: the loop counts its trips
    (PAST_INT32 + 40, PAST_INT32, -9),
    (2**31 - 3, 2**31 + 3, 1),  # crossing INT32_MAX
    (-(2**33), -(2**33) + 5, 2)], ids=["up", "down", "across", "negative"])
def test_loops_from_int64_starts_count_in_int64(start, stop, step):
    block, trips = 8, len(range(start, stop, step))
    want, got = both(wide_start_values_kernel[(1,)], np.zeros(16 * block, np.int64), start, stop, step, BLOCK=block)
    expected = np.zeros(16 * block, np.int64)
    expected[:trips * block] = (np.array(range(start, stop, step), np.int64)[:, None] + np.arange(block)).ravel()
    np.testing.assert_array_equal(want[0], expected)
    np.testing.assert_array_equal(got[0], want[0])


def test_loops_from_int64_starts_with_constexpr_steps():
    # a constexpr step: the loop compares its variable with the bound
    def check(step):
        block, n = 8, 40
        want, got = both(wide_start_stride_kernel[(1,)], np.zeros(n * block, np.int64), PAST_INT32, n, STEP=step,
                         BLOCK=block)
        values = np.array(range(PAST_INT32, PAST_INT32 + n, step), np.int64)
        np.testing.assert_array_equal(want[0][:values.size * block],
                                      (values[:, None] + np.arange(block)).ravel())
        np.testing.assert_array_equal(got[0], want[0])
    each(check, [(1,), (7,)])


@ascdsl.jit
def program_start_kernel(out_ptr, n, BIG: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    start = pid.to(tl.int64) * BIG
    for i in range(start, start + n):
        offs = (pid * n + (i - start).to(tl.int32)) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, i % 1000003 + tl.zeros((BLOCK,), tl.int64))


def test_loops_from_program_dependent_int64_starts():
    # program p's loop starts at p * (2**31 + 7): from program 1 on, past int32
    programs, n, block, big = 50, 3, 8, 2**31 + 7
    want, got = both(program_start_kernel[(programs,)], np.zeros(programs * n * block, np.int64), n, BIG=big,
                     BLOCK=block)
    values = (np.arange(programs, dtype=np.int64)[:, None] * big + np.arange(n)) % 1000003
    np.testing.assert_array_equal(want[0], np.repeat(values.ravel(), block))
    np.testing.assert_array_equal(got[0], want[0])


@ascdsl.jit
def wide_columns_kernel(x_ptr, out_ptr, start, n, BLOCK: tl.constexpr):
    # columns numbered from an int64 start, addressed relative to it: the tutorial layer norm's loops
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), tl.int32)
    for off in range(start, start + n, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * n + (cols - start), mask=cols < start + n, other=0)
    total = tl.sum(acc, axis=0)
    for off in range(start, start + n, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n + (cols - start), mask=cols < start + n, other=0)
        tl.store(out_ptr + row * n + (cols - start), (x - total) * 1000 + (cols % 1000).to(tl.int32),
                 mask=cols < start + n)


def test_block_loops_from_int64_starts_address_relative_to_them():
    def check(m, n, block):
        x = np.random.default_rng(n).integers(-50, 50, (m, n)).astype(np.int32)
        want, got = both(wide_columns_kernel[(m,)], x, np.zeros((m, n), np.int32), PAST_INT32, n, BLOCK=block)
        columns = ((PAST_INT32 + np.arange(n)) % 1000).astype(np.int32)
        np.testing.assert_array_equal(want[1], (x - x.sum(axis=1, keepdims=True)) * 1000 + columns)
        np.testing.assert_array_equal(got[1], want[1])
    each(check, [(1, 100, 128), (1, 1000, 64), (64, 20, 32), (200, 100, 128)])


@ascdsl.jit
def shared_offset_bound_kernel(x_ptr, out_ptr, parts, part_k, BLOCK: tl.constexpr):
    # `base` is a GM offset (computed in int64_t) and, through `first`, an int32 loop's start and stop
    pid = tl.program_id(0)
    base = pid // parts * parts
    scale = tl.load(x_ptr + base)
    first = (pid - base) * part_k
    for col in range(first, first + part_k, BLOCK):
        lanes = col + tl.arange(0, BLOCK)
        tl.store(out_ptr + pid * part_k + (lanes - first), scale + lanes.to(tl.float32))


def test_int32_loops_bounded_by_values_computed_for_offsets():
    # clang's front end refused the generated `int32_t col = first;` of an int64_t `first` (-Wshorten-64-to-32)
    parts, part_k, block = 4, 64, 16
    x = np.arange(8, dtype=np.float32) * 100
    want, got = both(shared_offset_bound_kernel[(8,)], x, np.zeros(8 * part_k, np.float32), parts, part_k,
                     BLOCK=block)
    pid = np.arange(8)
    expected = x[pid // parts * parts, None] + (pid % parts * part_k)[:, None] + np.arange(part_k)
    np.testing.assert_array_equal(want[1], expected.astype(np.float32).ravel())
    np.testing.assert_array_equal(got[1], want[1])
