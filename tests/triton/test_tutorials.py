"""Ports of Triton's tutorial vector kernels (rewritten for ascdsl, in Triton's style), each run on
the interpreter against NumPy and as generated Ascend C on the simulator against the interpreter:
fused softmax in its persistent (grid-stride) form, layer-norm forward with its Mean/Rstd stores,
layer-norm backward as per-program partial dW/dB and a second kernel that reduces them."""
from __future__ import annotations

import numpy as np
import pytest

import ascdsl as triton
import ascdsl.language as tl
from ascdsl import dtypes
from ascdsl.bench_kernels import layer_norm_kernel as layer_norm_fwd_kernel  # the tutorial's, as `ascdsl bench` times it
from tests.backend.helpers import FLOATS, data, prebuilt, softmax

pytestmark = pytest.mark.usefixtures("prebuilt_module")


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr):
    # each program walks the rows pid, pid + programs, ... (the persistent form)
    for row_idx in tl.range(tl.program_id(0), n_rows, tl.num_programs(0), num_stages=2):
        cols = tl.arange(0, BLOCK_SIZE)
        row = tl.load(input_ptr + row_idx * input_row_stride + cols, mask=cols < n_cols, other=-float("inf"))
        shifted = row - tl.max(row, axis=0)
        numerator = tl.exp(shifted)
        out = numerator / tl.sum(numerator, axis=0)
        tl.store(output_ptr + row_idx * output_row_stride + cols, out, mask=cols < n_cols)


@triton.jit
def layer_norm_bwd_dx_kernel(DX, DY, DW, DB, X, W, Mean, Rstd, M, stride, N, BLOCK_N: tl.constexpr):
    # program g handles rows g, g + G, ... and writes its partial dW/dB as row g of DW/DB
    group = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    partial_dw = tl.zeros((BLOCK_N,), dtype=tl.float32)
    partial_db = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for row in tl.range(group, M, tl.num_programs(0)):
        x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(DY + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        mean = tl.load(Mean + row)
        rstd = tl.load(Rstd + row)
        xhat = (x - mean) * rstd
        wdy = w * dy  # zero past N (w and dy load 0 there), so the sums below see only the row
        c1 = tl.sum(xhat * wdy, axis=0) / N
        c2 = tl.sum(wdy, axis=0) / N
        dx = (wdy - (xhat * c1 + c2)) * rstd
        tl.store(DX + row * stride + cols, dx.to(DX.dtype.element_ty), mask=mask)
        partial_dw += dy * xhat
        partial_db += dy
    tl.store(DW + group * N + cols, partial_dw, mask=mask)
    tl.store(DB + group * N + cols, partial_db, mask=mask)


@triton.jit
def layer_norm_bwd_dwdb_kernel(DW, DB, FINAL_DW, FINAL_DB, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    dw = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_M):
        rows = i + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.0)
        db += tl.load(DB + offs, mask=mask, other=0.0)
    tl.store(FINAL_DW + cols, tl.sum(dw, axis=0), mask=cols < N)
    tl.store(FINAL_DB + cols, tl.sum(db, axis=0), mask=cols < N)


def _close(got, want, dtype, what=""):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=dtype.rtol,
                               atol=dtype.atol, err_msg=what)


def _run(backend, kernel, grid, arrays, *scalars, **constexprs):
    arrays = [a.copy() for a in arrays]
    kernel[grid](*arrays, *scalars, backend=backend, **constexprs)
    return arrays


# ----------------------------------------------------------------------------- fused softmax

def _softmax(backend, x):
    rows, cols = x.shape
    (out, _) = _run(backend, softmax_kernel, (4,), [np.zeros_like(x), x], cols, cols, rows, cols,
                    BLOCK_SIZE=triton.next_power_of_2(cols))
    return out


SOFTMAX = [(d, data(shape, d)) for d in FLOATS for shape in ((9, 100), (3, 256))]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_fused_softmax_persistent(dtype):
    prebuilt(lambda x: _softmax("sim", x), [(x,) for _, x in SOFTMAX])
    for x in (x for d, x in SOFTMAX if d == dtype):
        want = _softmax("interpreter", x)
        _close(want, softmax(x, 1), dtype, "interpreter vs NumPy")
        _close(_softmax("sim", x), want, dtype, "simulator vs interpreter")


# ----------------------------------------------------------------------------- layer norm

def _layer_norm_fwd(backend, x, w, b, block=128):
    m, n = x.shape
    y, mean, rstd = np.zeros_like(x), np.zeros(m, np.float32), np.zeros(m, np.float32)
    _, y, _, _, mean, rstd = _run(backend, layer_norm_fwd_kernel, (m,), [x, y, w, b, mean, rstd], n, n, 1e-5,
                                  BLOCK_SIZE=block)
    return y, mean, rstd


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_layer_norm_forward_with_mean_and_rstd(dtype):
    x, w, b = data((5, 300), dtype), data(300, dtype), data(300, dtype)
    want = _layer_norm_fwd("interpreter", x, w, b)
    xf = x.astype(np.float64)
    mean = xf.mean(axis=1)
    rstd = 1 / np.sqrt(xf.var(axis=1) + 1e-5)
    y = (xf - mean[:, None]) * rstd[:, None] * w.astype(np.float64) + b.astype(np.float64)
    for got, ref, what in zip(want, (y, mean, rstd), ("y", "mean", "rstd")):
        _close(got, ref, dtype, f"interpreter vs NumPy: {what}")
    for g, w_, what in zip(_layer_norm_fwd("sim", x, w, b), want, ("y", "mean", "rstd")):
        _close(g, w_, dtype, f"simulator vs interpreter: {what}")


def _layer_norm_bwd(backend, x, dy, w, mean, rstd, groups=6):
    m, n = x.shape
    dx, dw, db = np.zeros_like(x), np.zeros((groups, n), np.float32), np.zeros((groups, n), np.float32)
    dx, _, dw, db, *_ = _run(backend, layer_norm_bwd_dx_kernel, (groups,), [dx, dy, dw, db, x, w, mean, rstd],
                             m, n, n, BLOCK_N=triton.next_power_of_2(n))
    final_dw, final_db = np.zeros(n, np.float32), np.zeros(n, np.float32)
    *_, final_dw, final_db = _run(backend, layer_norm_bwd_dwdb_kernel, (triton.cdiv(n, 64),),
                                  [dw, db, final_dw, final_db], groups, n, BLOCK_M=4, BLOCK_N=64)
    return dx, final_dw, final_db


def _bwd_inputs(dtype, m=13, n=100):
    x, dy, w = data((m, n), dtype), data((m, n), dtype), data(n, dtype)
    xf = x.astype(np.float32)
    mean = xf.mean(axis=1).astype(np.float32)
    rstd = (1 / np.sqrt(xf.var(axis=1) + 1e-5)).astype(np.float32)
    return x, dy, w, mean, rstd


BACKWARD = {d: _bwd_inputs(d) for d in FLOATS}


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_layer_norm_backward_partial_sums_then_a_reduction(dtype):
    prebuilt(lambda *a: _layer_norm_bwd("sim", *a), list(BACKWARD.values()))
    x, dy, w, mean, rstd = BACKWARD[dtype]
    want = _layer_norm_bwd("interpreter", x, dy, w, mean, rstd)
    xhat = (x.astype(np.float64) - mean[:, None]) * rstd[:, None]
    wdy = w.astype(np.float64) * dy.astype(np.float64)
    c1 = (xhat * wdy).mean(axis=1, keepdims=True)
    c2 = wdy.mean(axis=1, keepdims=True)
    ref = ((wdy - (xhat * c1 + c2)) * rstd[:, None], (dy.astype(np.float64) * xhat).sum(axis=0),
           dy.astype(np.float64).sum(axis=0))
    for got, r, what in zip(want, ref, ("dx", "dw", "db")):
        _close(got, r, dtype, f"interpreter vs NumPy: {what}")
    for got, w_, what in zip(_layer_norm_bwd("sim", x, dy, w, mean, rstd), want, ("dx", "dw", "db")):
        _close(got, w_, dtype, f"simulator vs interpreter: {what}")
