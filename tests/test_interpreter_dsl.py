"""Kernels written in the DSL, run on the interpreter: results, batching, errors and speed."""
import re
import time

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes

RNG = np.random.default_rng(2)


@ascdsl.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * in_stride + offs, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    out = num / tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_stride + offs, out.to(out_ptr.dtype.element_ty), mask=mask)


@ascdsl.jit
def looped_softmax_kernel(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
    """Row softmax for rows longer than BLOCK: an online max/sum pass, then a normalising pass."""
    row = tl.program_id(0)
    base = in_ptr + row * stride
    m = tl.full((BLOCK,), -1e30, tl.float32)  # finite: lanes that never see data keep s == 0
    s = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(base + offs, mask=offs < n_cols, other=-float("inf")).to(tl.float32)
        new_m = tl.maximum(m, x)
        s = s * tl.exp(m - new_m) + tl.exp(x - new_m)
        m = new_m
    row_max = tl.max(m, axis=0)
    total = tl.sum(s * tl.exp(m - row_max), axis=0)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n_cols
        x = tl.load(base + offs, mask=mask, other=0.0).to(tl.float32)
        y = tl.exp(x - row_max) / total
        tl.store(out_ptr + row * stride + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax_reference(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def assert_close(got, want, dtype):
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=dtype.rtol, atol=dtype.atol)


@pytest.mark.parametrize("dtype", dtypes.FLOATS, ids=str)
@pytest.mark.parametrize("rows, cols, block",
                         [(1, 1, 1), (3, 31, 32), (4, 32, 32), (5, 33, 64), (17, 100, 128)])
def test_single_tile_softmax(rows, cols, block, dtype):
    x = RNG.standard_normal((rows, cols)).astype(dtype.np)
    out = np.zeros_like(x)
    softmax_kernel[(rows,)](out, x, cols, cols, cols, BLOCK=block)
    assert_close(out, softmax_reference(x), dtype)


@pytest.mark.parametrize("dtype", dtypes.FLOATS, ids=str)
@pytest.mark.parametrize("rows, cols, block",
                         [(2, 1, 16), (3, 31, 16), (4, 33, 16), (5, 1000, 64), (2, 4096, 1024)])
def test_looped_softmax_row_longer_than_block(rows, cols, block, dtype):
    x = (3 * RNG.standard_normal((rows, cols))).astype(dtype.np)
    out = np.zeros_like(x)
    looped_softmax_kernel[(rows,)](out, x, cols, cols, BLOCK=block)
    assert_close(out, softmax_reference(x), dtype)


def test_softmax_speed_within_5x_of_numpy():
    x = RNG.standard_normal((4096, 1024)).astype(np.float32)
    out = np.empty_like(x)

    def numpy_softmax():
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def interpreted():
        softmax_kernel[(4096,)](out, x, 1024, 1024, 1024, BLOCK=1024)

    def seconds(fn):
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start

    interpreted()  # compiles the specialisation
    runs = [(seconds(interpreted), seconds(numpy_softmax)) for _ in range(7)]  # interleaved: same load
    ratio = np.median([r[0] for r in runs]) / np.median([r[1] for r in runs])
    print(f"interpreter / numpy softmax time: {ratio:.2f}")
    assert ratio < 5
    np.testing.assert_allclose(out, numpy_softmax(), rtol=1e-5, atol=1e-6)


@ascdsl.jit
def triangle_kernel(out_ptr, BLOCK: tl.constexpr):
    """Program p sums rows 0..p of an implicit matrix whose row i is i + arange; trip count p + 1."""
    pid = tl.program_id(0)
    acc = tl.zeros((BLOCK,), tl.int32)
    for i in range(pid + 1):
        acc += i + tl.arange(0, BLOCK)
    if pid % 2 == 0:
        acc = -acc
    tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), acc)


def test_loops_and_branches_that_differ_by_program():
    out = np.zeros((6, 4), np.int32)
    triangle_kernel[(6,)](out, BLOCK=4)
    want = np.array([[sum(i + j for i in range(p + 1)) for j in range(4)] for p in range(6)])
    want[::2] *= -1
    np.testing.assert_array_equal(out, want)


@ascdsl.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def test_bf16_add_is_exact_in_the_dsl():
    x, y, out = (np.array([v], ml_dtypes.bfloat16) for v in (2.5, 2.0, 0.0))
    add_kernel[(1,)](x, y, out, 1, BLOCK=8)
    assert out[0] == 4.5


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 500), block=st.sampled_from([1, 7, 32, 100, 256]),
       dtype=st.sampled_from([dtypes.float32, dtypes.float16, dtypes.bfloat16, dtypes.int32]))
def test_property_add_any_length_and_block(n, block, dtype):
    x, y = ((RNG.standard_normal(n) * 100).astype(dtype.np) for _ in range(2))
    out = np.zeros(n, dtype.np)
    add_kernel[(ascdsl.cdiv(n, block),)](x, y, out, n, BLOCK=block)
    want = (x.astype(np.float64) + y.astype(np.float64)).astype(dtype.np) if dtype.is_float else x + y
    np.testing.assert_array_equal(out, want)


@ascdsl.jit
def unmasked_copy(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


def test_out_of_bounds_in_the_dsl_points_at_the_kernel_line():
    with pytest.raises(ascdsl.OutOfBoundsError) as info:
        unmasked_copy[(3,)](np.zeros(40, np.float32), np.zeros(48, np.float32), BLOCK=16)
    message = str(info.value)
    line = unmasked_copy.fn.__code__.co_firstlineno + 3
    assert re.match(rf"\S*tests/test_interpreter_dsl\.py:{line}:\d+: error: load from x_ptr out of bounds",
                    message)
    assert "program (2, 0, 0)" in message and "element 40 " in message and "40 elements" in message
    assert "tl.load(x_ptr + offs)" in message  # the source line is quoted


@ascdsl.jit
def print_kernel(x_ptr):
    pid = tl.program_id(0)
    tl.device_print("x =", tl.load(x_ptr + pid))


def test_device_print(capsys):
    print_kernel[(2,)](np.array([1.5, -2.0], np.float32))
    assert capsys.readouterr().out == "pid (0, 0, 0) x = 1.5\npid (1, 0, 0) x = -2.0\n"


@ascdsl.jit
def collatz_kernel(n_ptr, steps_ptr, out_ptr, BLOCK: tl.constexpr):
    """Program p counts the Collatz steps of n[p]: a while loop whose trip count differs by program."""
    pid = tl.program_id(0)
    n = tl.load(n_ptr + pid)
    steps = 0
    acc = tl.zeros((BLOCK,), tl.float32)
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
        acc = acc * 0.5 + n
    tl.store(steps_ptr + pid, steps)
    tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), acc)


def _collatz(n: int) -> tuple[int, np.float32]:
    steps, acc = 0, np.float32(0)
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps, acc = steps + 1, acc * np.float32(0.5) + np.float32(n)
    return steps, acc


def test_while_loops_that_differ_by_program():
    ns = np.array([1, 2, 3, 7, 27, 6], np.int32)
    steps, out = np.zeros(6, np.int32), np.zeros((6, 4), np.float32)
    collatz_kernel[(6,)](ns, steps, out, BLOCK=4)
    want = [_collatz(int(n)) for n in ns]
    np.testing.assert_array_equal(steps, [w[0] for w in want])
    np.testing.assert_array_equal(out, np.repeat([[w[1]] for w in want], 4, axis=1))
    module = collatz_kernel.specialize(ns, steps, out, BLOCK=4)
    assert ascdsl.ir.parse(ascdsl.ir.dump(module)) == module


@ascdsl.jit
def early_exit_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Early returns outside loops, as Triton allows them: in a nested if, in an else branch."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    if pid % 3 == 0:
        tl.store(out_ptr + offs, x, mask=offs < n)
        if pid > 2:
            return
    else:
        if pid % 3 == 1:
            tl.store(out_ptr + offs, -x, mask=offs < n)
            return
        x = x * 2.0
    tl.store(out_ptr + offs, x + 1.0, mask=offs < n)


def early_exit_reference(x: np.ndarray, block: int) -> np.ndarray:
    out = np.empty_like(x)
    for pid in range(-(-len(x) // block)):
        part = x[pid * block:(pid + 1) * block]
        out[pid * block:(pid + 1) * block] = {0: part if pid > 2 else part + 1, 1: -part, 2: part * 2 + 1}[pid % 3]
    return out


def test_early_returns_in_nested_ifs_and_else_branches():
    x = np.random.default_rng(3).standard_normal(300).astype(np.float32)
    out = np.zeros_like(x)
    early_exit_kernel[(5,)](x, out, 300, BLOCK=64)
    np.testing.assert_array_equal(out, early_exit_reference(x, 64))
