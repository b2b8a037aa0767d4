"""Triton-style kernels on rank-3 tiles (rewritten for ascdsl), each run on the interpreter against
NumPy and as generated Ascend C on the simulator against the interpreter: a batched softmax over the
last axis of a strided [Z, M, N] tensor (3-D masks, keep_dims reductions broadcast back), a small
matrix product by broadcasting (`x[:, :, None] * w[None, :, :]` summed over the middle axis, the way
Triton kernels do it without `tl.dot`), and mean pooling over a sequence in a loop (sums along axis 1
accumulated in a 2-D tile)."""
from __future__ import annotations

import numpy as np
import pytest

import ascdsl as triton
import ascdsl.language as tl
from tests.backend.helpers import FLOATS, data, prebuilt, softmax

pytestmark = pytest.mark.usefixtures("prebuilt_module")


@triton.jit
def batched_softmax_kernel(out_ptr, in_ptr, Z, M, N, stride_z, stride_m, out_stride_z, out_stride_m,
                           BLOCK_Z: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    z = tl.program_id(0) * BLOCK_Z + tl.arange(0, BLOCK_Z)[:, None, None]
    m = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)[None, :, None]
    n = tl.arange(0, BLOCK_N)[None, None, :]
    mask = (z < Z) & (m < M) & (n < N)
    x = tl.load(in_ptr + z * stride_z + m * stride_m + n, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=2, keep_dims=True)
    num = tl.exp(x)
    out = num / tl.sum(num, axis=2)[:, :, None]
    tl.store(out_ptr + z * out_stride_z + m * out_stride_m + n, out.to(out_ptr.dtype.element_ty), mask=mask)


def _softmax(backend, x, block=(2, 4)):
    z, m, n = x.shape
    out = np.zeros((z, m + 1, n), x.dtype)  # rows of the output strided further apart than the input's
    grid = (triton.cdiv(z, block[0]), triton.cdiv(m, block[1]))
    batched_softmax_kernel[grid](out, x, z, m, n, m * n, n, (m + 1) * n, n, BLOCK_Z=block[0], BLOCK_M=block[1],
                                 BLOCK_N=triton.next_power_of_2(n), backend=backend)
    return out[:, :m]


SOFTMAX = [(d, data(shape, d)) for d in FLOATS for shape in ((3, 5, 20), (4, 8, 32))]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_batched_softmax(dtype):
    prebuilt(lambda x: _softmax("sim", x), [(x,) for _, x in SOFTMAX])
    for x in (x for d, x in SOFTMAX if d == dtype):
        want = _softmax("interpreter", x)
        np.testing.assert_allclose(want.astype(np.float64), softmax(x, 2), rtol=dtype.rtol, atol=dtype.atol)
        np.testing.assert_allclose(_softmax("sim", x).astype(np.float64), want.astype(np.float64), rtol=dtype.rtol,
                                   atol=dtype.atol)


@triton.jit
def small_matmul_kernel(x_ptr, w_ptr, out_ptr, M, K, N, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr,
                        BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    ks = tl.arange(0, BLOCK_K)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
    w = tl.load(w_ptr + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
    acc = tl.sum(x[:, :, None] * w[None, :, :], axis=1)  # (BLOCK_M, BLOCK_N)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


def test_matrix_product_by_broadcasting():
    rng = np.random.default_rng(3)
    m, k, n = 10, 12, 20
    x, w = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    outs = []
    for backend in ("interpreter", "sim"):
        out = np.zeros((m, n), np.float32)
        small_matmul_kernel[(triton.cdiv(m, 4),)](x, w, out, m, k, n, BLOCK_M=4, BLOCK_K=16, BLOCK_N=32,
                                                  backend=backend)
        outs.append(out)
    np.testing.assert_allclose(outs[0], x.astype(np.float64) @ w, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-5)


@triton.jit
def mean_pool_kernel(x_ptr, out_ptr, B, S, D, BLOCK_B: tl.constexpr, BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr):
    b = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    d = tl.arange(0, BLOCK_D)
    acc = tl.zeros((BLOCK_B, BLOCK_D), dtype=tl.float32)
    for s0 in range(0, S, BLOCK_S):
        s = s0 + tl.arange(0, BLOCK_S)
        mask = (b[:, None, None] < B) & (s[None, :, None] < S) & (d[None, None, :] < D)
        x = tl.load(x_ptr + b[:, None, None] * S * D + s[None, :, None] * D + d[None, None, :], mask=mask, other=0.0)
        acc += tl.sum(x.to(tl.float32), axis=1)
    tl.store(out_ptr + b[:, None] * D + d[None, :], (acc / S).to(out_ptr.dtype.element_ty),
             mask=(b[:, None] < B) & (d[None, :] < D))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_mean_pooling_over_a_sequence(dtype):
    x = data((5, 19, 24), dtype)
    outs = []
    for backend in ("interpreter", "sim"):
        out = np.zeros((5, 24), dtype.np)
        mean_pool_kernel[(triton.cdiv(5, 2),)](x, out, 5, 19, 24, BLOCK_B=2, BLOCK_S=8, BLOCK_D=32, backend=backend)
        outs.append(out.astype(np.float64))
    np.testing.assert_allclose(outs[0], x.astype(np.float64).mean(axis=1), rtol=dtype.rtol, atol=dtype.atol)
    np.testing.assert_allclose(outs[1], outs[0], rtol=dtype.rtol, atol=dtype.atol)
