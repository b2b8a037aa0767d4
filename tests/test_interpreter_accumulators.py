"""A ``for`` loop's float32 accumulator that starts at +0.0 and only ``tl.sum`` reads takes its first
term as it is (:func:`ascdsl.runner._accumulators`): the results keep the spec's bits, -0.0
and NaN included, whatever else reads the terms."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl.interpreter import compute, runner, state

BLOCK = 32


@ascdsl.jit
def row_sums_kernel(x_ptr, lengths_ptr, sums_ptr, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    n = tl.load(lengths_ptr + row)  # a trip count per program: the loop runs masked
    acc = tl.zeros((BLOCK,), tl.float32)
    for off in range(0, n, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < n, other=0.0)
    tl.store(sums_ptr + row, tl.sum(acc, axis=0))


@ascdsl.jit
def squares_and_doubles_kernel(x_ptr, sums_ptr, out_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for off in range(0, n, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        a = tl.load(x_ptr + row * n + cols, mask=cols < n, other=0.0) * 1.0
        acc += a
        tl.store(out_ptr + row * n + cols, a * 2.0, mask=cols < n)  # the term lives on after the add
    tl.store(sums_ptr + row, tl.sum(acc, axis=0))


@ascdsl.jit
def kept_kernel(x_ptr, acc_ptr, sums_ptr, n, START: tl.constexpr, KEEP: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.full((BLOCK,), START, tl.float32)
    for off in range(0, n, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * n + cols, mask=cols < n, other=-0.0)
    if KEEP:  # read by a store too
        tl.store(acc_ptr + row * BLOCK + tl.arange(0, BLOCK), acc)
    tl.store(sums_ptr + row, tl.sum(acc, axis=0))


def signed_zeros(rows: int, cols: int) -> np.ndarray:
    """Rows that tell -0.0 from +0.0 and carry NaNs: all -0.0, mixed zeros, values with -0.0 lanes,
    a NaN, infinities that cancel to NaN, all +0.0, then random rows."""
    x = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    x[0] = -0.0
    x[1] = np.where(np.arange(cols) % 3 == 0, np.float32(0.0), np.float32(-0.0))
    x[2, ::2] = -0.0
    x[3, 5] = np.nan
    x[4, 1], x[4, 7] = np.inf, -np.inf
    x[5] = 0.0
    return x


def spec_sums(x: np.ndarray, lengths, start=0.0, pad=0.0) -> tuple[np.ndarray, np.ndarray]:
    """The kernels' accumulator and its sums as the elementwise semantics compute them, with NumPy."""
    rows, cols = x.shape
    chunks = -(-cols // BLOCK)
    padded = np.full((rows, chunks * BLOCK), np.float32(pad))
    padded[:, :cols] = x
    acc = np.full((rows, BLOCK), np.float32(start))
    for k in range(chunks):
        live = (k * BLOCK < np.asarray(lengths))[:, None]
        acc = np.where(live, acc + padded[:, k * BLOCK:(k + 1) * BLOCK], acc)
    return acc, acc.sum(axis=1)


def assert_same_bits(a: np.ndarray, b: np.ndarray) -> None:
    np.testing.assert_array_equal(a, b)  # NaN where NaN
    np.testing.assert_array_equal(np.signbit(a), np.signbit(b))  # -0.0 where -0.0


@pytest.fixture
def shortcuts(monkeypatch):
    """How many ``+0.0 + x`` the interpreter took as ``x``."""
    taken = []
    found = compute._plus_zero
    monkeypatch.setattr(compute, "_plus_zero", lambda xs: (taken.append(r := found(xs)), r)[1])
    monkeypatch.setattr(runner, "_prepared", {})
    return taken


def without_shortcut(monkeypatch) -> None:
    monkeypatch.setattr(runner, "_accumulators", lambda body: (frozenset(), frozenset()))
    monkeypatch.setattr(runner, "_prepared", {})


@pytest.mark.parametrize("cols", [BLOCK, 100])
def test_a_summed_accumulator_keeps_the_bits_of_the_sums(monkeypatch, shortcuts, cols):
    rows = 9
    x = signed_zeros(rows, cols)
    lengths = np.array([cols] * 6 + [1, 0, cols // 2], np.int32)
    x[lengths[:, None] <= np.arange(cols)] = 0.0  # (the kernel does not read past a row's length)
    sums = np.empty(rows, np.float32)
    row_sums_kernel[(rows,)](x, lengths, sums, cols, BLOCK=BLOCK)
    assert any(t is not None for t in shortcuts)
    assert_same_bits(sums, spec_sums(x, lengths)[1])
    assert sums[0] == 0 and not np.signbit(sums[0])  # +0.0 + -0.0 + ... is +0.0, though sum(-0.0, ...) is -0.0
    without_shortcut(monkeypatch)
    plain = np.empty(rows, np.float32)
    row_sums_kernel[(rows,)](x, lengths, plain, cols, BLOCK=BLOCK)
    assert_same_bits(sums, plain)


def test_a_term_read_after_the_add_is_not_overwritten(monkeypatch, shortcuts):
    monkeypatch.setattr(state, "DONATED_BYTES", 0)  # any dying operand may receive a result
    rows, cols = 6, 100
    x = signed_zeros(rows, cols)
    sums, out = np.empty(rows, np.float32), np.empty((rows, cols), np.float32)
    squares_and_doubles_kernel[(rows,)](x, sums, out, cols, BLOCK=BLOCK)
    assert any(t is not None for t in shortcuts)
    assert_same_bits(out, x * np.float32(2))
    assert_same_bits(sums, spec_sums(x * np.float32(1), [cols] * rows)[1])


@pytest.mark.parametrize("start, keep", [(0.0, True), (-0.0, False)])
def test_an_accumulator_read_otherwise_or_started_elsewhere_keeps_its_lanes(shortcuts, start, keep):
    rows, cols = 6, 100
    x = signed_zeros(rows, cols)
    acc, sums = np.zeros((rows, BLOCK), np.float32), np.empty(rows, np.float32)
    kept_kernel[(rows,)](x, acc, sums, cols, START=start, KEEP=keep, BLOCK=BLOCK)
    assert not any(t is not None for t in shortcuts)
    spec_acc, spec = spec_sums(x, [cols] * rows, start, pad=-0.0)
    assert_same_bits(sums, spec)
    if keep:
        assert_same_bits(acc, spec_acc)
        assert not np.signbit(acc[0]).any()  # +0.0 + -0.0 is +0.0


def test_only_float32_sums_of_an_accumulator_from_plus_zero_are_candidates():
    found = runner._accumulators
    x = np.zeros((2, 8), np.float32)
    cases = ((row_sums_kernel, (x, np.zeros(2, np.int32), x[0], 8), {}, (1, 1)),
             (kept_kernel, (x, x, x[0], 8), {"START": 0.0, "KEEP": True}, (0, 0)),
             (kept_kernel, (x, x, x[0], 8), {"START": -0.0, "KEEP": False}, (0, 0)),
             (kept_kernel, (x, x, x[0], 8), {"START": 0.0, "KEEP": False}, (1, 1)))
    for kernel, args, constexprs, expected in cases:
        (ir,) = kernel.specialize(*args, BLOCK=BLOCK, **constexprs).kernels
        assert tuple(map(len, found(ir.body))) == expected
