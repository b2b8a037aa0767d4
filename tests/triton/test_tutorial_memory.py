"""Ports of Triton's tutorial vector add and low-memory dropout (rewritten for ascdsl, in Triton's
style), and one kernel per memory construct the Ascend C backend lowers (atomics, gathers, scatters,
strided rows and columns, ``device_print``), each run on the interpreter against NumPy and as
generated Ascend C on the simulator against the interpreter."""
from __future__ import annotations

import numpy as np
import pytest

import ascdsl as triton
import ascdsl.language as tl
from ascdsl import dtypes
from tests.backend.helpers import FLOATS, both, data, each

pytestmark = pytest.mark.usefixtures("prebuilt_module")

RNG = np.random.default_rng(2024)


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


def add(x: np.ndarray, y: np.ndarray, backend: str) -> np.ndarray:
    output = np.empty_like(x)
    n_elements = output.size
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)  # noqa: E731 (as the tutorial)
    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=1024, backend=backend)
    return output


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_vector_add(dtype):
    for size in (98432, 1000, 1):
        x, y = data(size, dtype), data(size, dtype)
        want = add(x, y, "interpreter")
        assert np.array_equal(want, (x.astype(np.float32) + y.astype(np.float32)).astype(dtype.np))
        got = add(x, y, "sim")
        assert got.shape == want.shape and bool((got.view(np.uint8) == want.view(np.uint8)).all()), f"size={size}"


@triton.jit
def _seeded_dropout(x_ptr, output_ptr, n_elements, p, seed, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    # randomly prune it: the same seed and offsets always give the same mask
    random = tl.rand(seed, offsets)
    x_keep = random > p
    output = tl.where(x_keep, x / (1 - p), 0.0)
    tl.store(output_ptr + offsets, output, mask=mask)


def seeded_dropout(x, p, seed, backend):
    output = np.empty_like(x)
    n_elements = x.size
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)  # noqa: E731
    _seeded_dropout[grid](x, output, n_elements, p, seed, BLOCK_SIZE=1024, backend=backend)
    return output


def test_low_memory_dropout_on_the_interpreter():
    x = RNG.standard_normal(10000).astype(np.float32)
    a, b = seeded_dropout(x, 0.5, 123, "interpreter"), seeded_dropout(x, 0.5, 123, "interpreter")
    c = seeded_dropout(x, 0.5, 512, "interpreter")
    assert np.array_equal(a, b) and not np.array_equal(a, c)  # the seed decides the mask
    kept = a != 0
    assert 0.45 < kept.mean() < 0.55
    np.testing.assert_allclose(a[kept], x[kept] * 2, rtol=1e-6)


def test_low_memory_dropout_on_the_simulator():
    for n, seed in ((3000, 7), (1024, 2**40 + 3), (5, 0)):
        x = RNG.standard_normal(n).astype(np.float32)
        want = seeded_dropout(x, 0.3, seed, "interpreter")
        assert seeded_dropout(x, 0.3, seed, "sim").tobytes() == want.tobytes(), f"n={n} seed={seed}"


# ------------------------------------------------------------------ one kernel per memory construct
@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """A grid-wide sum: each program adds its block's sum into out[0]."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(out_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0))


@triton.jit
def index_select_kernel(x_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out[i] = x[idx[i]] (a gather), and x[idx[i]] += 1 at once for every i (an atomic scatter)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, tl.load(x_ptr + idx, mask=mask), mask=mask)


@triton.jit
def transpose_kernel(x_ptr, y_ptr, M, N, stride_xm, stride_ym, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """y = x^T, loading rows of x and storing them as columns of y (a non-unit innermost stride)."""
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * stride_xm + rn[None, :], mask=mask)
    tl.store(y_ptr + rn[None, :] * stride_ym + rm[:, None], x, mask=mask)


@triton.jit
def histogram_kernel(bins_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    bins = tl.load(bins_ptr + offs, mask=mask, other=0)
    tl.atomic_add(hist_ptr + bins, tl.full((BLOCK,), 1, tl.int32), mask=mask)


def test_atomic_sum_over_the_grid():
    x = RNG.integers(-100, 100, 50000).astype(np.float32)  # exact in any order of the cores' adds
    want, got = both(sum_kernel[(triton.cdiv(x.size, 512),)], x, np.zeros(1, np.float32), x.size, BLOCK=512)
    assert want[1][0] == x.sum() and got[1][0] == want[1][0]


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.float16, dtypes.bfloat16], ids=str)
def test_index_select_gathers(dtype):
    n = 3000
    x, idx = data(n, dtype), RNG.integers(0, n, n).astype(np.int32)
    want, got = both(index_select_kernel[(triton.cdiv(n, 256),)], x, idx, np.zeros(n, dtype.np), n, BLOCK=256)
    assert np.array_equal(want[2], x[idx]) and got[2].tobytes() == want[2].tobytes()


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.float16], ids=str)
def test_transpose_by_strided_stores(dtype):
    def check(m, n, bm, bn):
        x = data((m, n), dtype)
        grid = (triton.cdiv(m, bm), triton.cdiv(n, bn))
        want, got = both(transpose_kernel[grid], x, np.zeros((n, m), dtype.np), m, n, n, m, BLOCK_M=bm, BLOCK_N=bn)
        assert np.array_equal(want[1], x.T) and got[1].tobytes() == want[1].tobytes(), f"{m}x{n}"
    cases = [(100, 37, 16, 32), (8, 8, 8, 8)]
    each(check, cases)


def test_histogram_by_atomic_scatters():
    n, bins = 5000, 10
    b = RNG.integers(0, bins, n).astype(np.int32)
    want, got = both(histogram_kernel[(triton.cdiv(n, 512),)], b, np.zeros(bins, np.int32), n, BLOCK=512)
    assert np.array_equal(want[1], np.bincount(b, minlength=bins)) and np.array_equal(got[1], want[1])


@triton.jit
def print_kernel(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK))
    tl.device_print("x=", x)
    tl.device_print("max", tl.max(x, axis=0))


def test_device_print_on_both_backends(capsys):
    x = np.arange(16, dtype=np.float32) - 4.5
    lines = {}
    for backend in ("interpreter", "sim"):
        print_kernel[(2,)](x, BLOCK=8, backend=backend)
        lines[backend] = sorted(capsys.readouterr().out.splitlines())
    assert lines["interpreter"][0] == "pid (0, 0, 0) max 2.5"
    assert "pid (1, 0, 0) x= [ 3.5  4.5  5.5  6.5  7.5  8.5  9.5 10.5]" in lines["interpreter"]
    assert lines["sim"] == ["pid (0, 0, 0) max 2.5", "pid (0, 0, 0) x= [-4.5 -3.5 -2.5 -1.5 -0.5 0.5 1.5 2.5]",
                            "pid (1, 0, 0) max 10.5", "pid (1, 0, 0) x= [3.5 4.5 5.5 6.5 7.5 8.5 9.5 10.5]"]
