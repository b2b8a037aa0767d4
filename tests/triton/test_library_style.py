"""Kernels in the style of public Triton kernel libraries (``library_kernels.py``), run unchanged on
both backends (the interpreter and ``backend="sim"``, which compiles and runs the generated Ascend C)
against NumPy references, and from ``torch.autograd.Function``s where torch is installed. Every launch
goes through :func:`launch`, which turns any exception that is not a located ``CompilationError`` into a
test failure naming it an internal error."""
from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl.language.extra.cann import libdevice
from tests.triton import library_kernels as lib

pytestmark = pytest.mark.usefixtures("prebuilt_module")
BACKENDS = ("interpreter", "sim")
RNG = np.random.default_rng(23)
TOL = dict(rtol=2e-5, atol=2e-6)  # float32 kernels against float64 references (exp, log, rsqrt, sums)


def launch(kernel, grid, *args, **kwargs):
    """``kernel[grid](*args, **kwargs)``; an exception other than a located CompilationError is internal."""
    try:
        return kernel[grid](*args, **kwargs)
    except ascdsl.CompilationError:
        raise
    except Exception as e:  # noqa: BLE001 - any other exception is an internal error of ascdsl
        pytest.fail(f"internal error launching {getattr(kernel, '__name__', kernel)} on "
                    f"{kwargs.get('backend')}: {type(e).__name__}: {e}")


def pow2(n: int) -> int:
    return 1 << (n - 1).bit_length()


# ----------------------------------------------------------------------------- references

def rms_ref(x, w, eps, offset):
    x64 = x.astype(np.float64)
    rstd = 1 / np.sqrt((x64 * x64).mean(axis=1) + eps)
    return x64 * rstd[:, None] * (offset + w), rstd


def rms_bwd_ref(dy, x, w, rstd, offset):
    x64, dy64, w64 = (a.astype(np.float64) for a in (x, dy, w + offset))
    m = dy64 * w64
    n = x.shape[1]
    dx = rstd[:, None] * m - (rstd ** 3 / n)[:, None] * (m * x64).sum(axis=1, keepdims=True) * x64
    dw = (dy64 * x64 * rstd[:, None]).sum(axis=0)
    return dx, dw


def ce_ref(x, y, ignore_index, smoothing, z_scale, mean):
    x = x.astype(np.float64)
    rows, cols = x.shape
    n_non_ignore = int((y != ignore_index).sum())
    loss, grad = np.zeros(rows), np.zeros_like(x)
    for r in range(rows):
        if y[r] == ignore_index:
            continue
        top = x[r].max()
        lse = top + np.log(np.exp(x[r] - top).sum())
        p = np.exp(x[r] - lse)
        eps = smoothing / cols
        g = p - eps + 2 * z_scale * lse * p
        l = lse - x[r, y[r]]
        if smoothing > 0:
            l = l * (1 - smoothing) + (-eps * x[r].sum() + smoothing * lse)
        l += z_scale * lse * lse
        if mean:
            g, l = g / n_non_ignore, l / n_non_ignore
        g[y[r]] -= (1 - smoothing) / (n_non_ignore if mean else 1)
        loss[r], grad[r] = l, g
    return loss, grad


def sigmoid(a):
    return 1 / (1 + np.exp(-a))


# ----------------------------------------------------------------------------- norms

@pytest.mark.parametrize("backend", BACKENDS)
def test_rms_norm_forward_and_backward_with_python_min_rows(backend):
    rows, cols, eps, offset = 10, 50, 1e-6, 1.0
    x = RNG.standard_normal((rows, cols)).astype(np.float32)
    w = RNG.standard_normal(cols).astype(np.float32)
    y, rstd = np.zeros_like(x), np.zeros(rows, np.float32)
    launch(lib.rms_norm_fwd, (rows,), y, cols, x, cols, w, rstd, cols, eps, offset, BLOCK_SIZE=64, backend=backend)
    want_y, want_rstd = rms_ref(x, w, eps, offset)
    np.testing.assert_allclose(y, want_y, **TOL)
    np.testing.assert_allclose(rstd, want_rstd, **TOL)

    dy = RNG.standard_normal((rows, cols)).astype(np.float32)
    want_dx, want_dw = rms_bwd_ref(dy, x, w, rstd.astype(np.float64), offset)
    programs, per_program = 4, 3  # rows 9..11 of the last program: row_end = min(12, 10)
    dw = np.zeros((programs, cols), np.float32)
    launch(lib.rms_norm_bwd, (programs,), dy, cols, dy, cols, x, cols, w, rstd, dw, cols, rows, cols, offset,
           per_program, BLOCK_SIZE=64, backend=backend)  # dX written over dY, as libraries do
    np.testing.assert_allclose(dy, want_dx, **TOL)
    np.testing.assert_allclose(dw.sum(axis=0), want_dw, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_layer_norm_of_a_strided_view(backend):
    """A view of every other row and the first columns: the kernel gets the allocation and the row
    stride, on the simulator as on the interpreter, and writes only the view's elements."""
    rows, cols, eps = 6, 40, 1e-5
    whole = RNG.standard_normal((2 * rows, cols + 9)).astype(np.float32)
    x = whole[::2, :cols]
    out_whole = np.full_like(whole, 7.0)
    y = out_whole[::2, :cols]
    w, b = RNG.standard_normal(cols).astype(np.float32), RNG.standard_normal(cols).astype(np.float32)
    mean, rstd = np.zeros(rows, np.float32), np.zeros(rows, np.float32)
    assert not x.flags.c_contiguous
    launch(lib.layer_norm_fwd, (rows,), y, x, w, b, mean, rstd, x.strides[0] // 4, cols, eps, BLOCK_SIZE=64,
           backend=backend)
    x64 = x.astype(np.float64)
    want_rstd = 1 / np.sqrt(x64.var(axis=1) + eps)
    np.testing.assert_allclose(mean, x64.mean(axis=1), **TOL)
    np.testing.assert_allclose(rstd, want_rstd, **TOL)
    np.testing.assert_allclose(y, (x64 - x64.mean(axis=1, keepdims=True)) * want_rstd[:, None] * w + b, rtol=2e-5,
                               atol=1e-5)
    untouched = np.ones(whole.shape, bool)
    untouched[::2, :cols] = False
    assert (out_whole[untouched] == 7.0).all()


# ----------------------------------------------------------------------------- losses

@pytest.mark.parametrize("backend", BACKENDS)
def test_cross_entropy_writes_its_gradient_into_the_logits(backend):
    rows, cols, ignore = 6, 45, -100
    x0 = RNG.standard_normal((rows, cols)).astype(np.float32) * 3
    y = np.array([3, ignore, 44, 0, 17, ignore], np.int64)
    n_non_ignore = int((y != ignore).sum())
    for smoothing, z_scale, reduction in ((0.1, 0.0, "mean"), (0.0, 1e-4, "sum")):
        x, loss = x0.copy(), np.zeros(rows, np.float32)
        launch(lib.cross_entropy_fwd_bwd, (rows,), x, cols, y, loss, cols, n_non_ignore, ignore, smoothing, z_scale,
               reduction=reduction, BLOCK_SIZE=16, HAS_SOFTCAPPING=False, softcap=0.0, HAS_GRADIENTS=True,
               backend=backend)
        want_loss, want_grad = ce_ref(x0, y, ignore, smoothing, z_scale, reduction == "mean")
        np.testing.assert_allclose(loss, want_loss, **TOL)
        np.testing.assert_allclose(x, want_grad, **TOL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_cross_entropy_without_gradients_merges_scalars_out_of_constexpr_branches(backend):
    """reduction "mean", no softcapping, no gradients: the constexpr flags leave runtime ``if``s whose
    merged scalars the Ascend C backend must still define."""
    rows, cols, ignore = 4, 30, -1
    x0 = RNG.standard_normal((rows, cols)).astype(np.float32)
    y = np.array([5, ignore, 29, 0], np.int64)
    x, loss = x0.copy(), np.zeros(rows, np.float32)
    launch(lib.cross_entropy_fwd_bwd, (rows,), x, cols, y, loss, cols, 3, ignore, 0.0, 0.0, reduction="mean",
           BLOCK_SIZE=32, HAS_SOFTCAPPING=False, softcap=0.0, HAS_GRADIENTS=False, backend=backend)
    np.testing.assert_allclose(loss, ce_ref(x0, y, ignore, 0.0, 0.0, True)[0], **TOL)
    assert (x[y != ignore] == x0[y != ignore]).all()  # no gradient written (ignored rows are zeroed)


# ----------------------------------------------------------------------------- gated activations, rotary

@pytest.mark.parametrize("backend", BACKENDS)
def test_swiglu_and_geglu_backward_write_into_their_inputs(backend):
    rows, cols = 5, 70
    a0 = RNG.standard_normal((rows, cols)).astype(np.float32)
    b0 = RNG.standard_normal((rows, cols)).astype(np.float32)
    dc = RNG.standard_normal((rows, cols)).astype(np.float32)
    c = np.zeros_like(a0)
    launch(lib.swiglu_fwd, (rows,), a0, b0, c, cols, n_cols=cols, BLOCK_SIZE=128, backend=backend)
    a64, b64, dc64 = (v.astype(np.float64) for v in (a0, b0, dc))
    np.testing.assert_allclose(c, a64 * sigmoid(a64) * b64, **TOL)

    a, b = a0.copy(), b0.copy()
    launch(lib.swiglu_bwd, (rows,), dc, a, b, cols, n_cols=cols, BLOCK_SIZE=128, backend=backend)
    sig = sigmoid(a64)
    np.testing.assert_allclose(b, dc64 * a64 * sig, **TOL)
    np.testing.assert_allclose(a, dc64 * (a64 * sig * (1 - sig) + sig) * b64, **TOL)

    a, b = a0.copy(), b0.copy()
    launch(lib.geglu_bwd, (rows,), dc, a, b, cols, n_cols=cols, BLOCK_SIZE=128, backend=backend)
    k = np.sqrt(2 / np.pi)
    t = np.tanh(k * (a64 + 0.044715 * a64 ** 3))
    np.testing.assert_allclose(b, dc64 * 0.5 * a64 * (1 + t), rtol=1e-5, atol=1e-5)
    da = dc64 * b64 * (0.5 * (1 + t) + 0.5 * a64 * (1 - t * t) * k * (1 + 3 * 0.044715 * a64 * a64))
    np.testing.assert_allclose(a, da, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_rotary_embedding_in_place_forward_and_backward(backend):
    batch, seq, heads, hd = 2, 3, 3, 16
    q0 = RNG.standard_normal((batch, seq, heads, hd)).astype(np.float32)
    angles = RNG.standard_normal((seq, hd // 2)).astype(np.float32)
    cos = np.concatenate([np.cos(angles)] * 2, axis=1).astype(np.float32)
    sin = np.concatenate([np.sin(angles)] * 2, axis=1).astype(np.float32)
    q = q0.copy()
    args = (cos, cos.shape[1], sin, sin.shape[1], seq)
    launch(lib.rope_fwd, (batch * seq,), q, heads * hd, *args, n_qh=heads, hd=hd, pad_n_qh=4, pad_hd=hd,
           backend=backend)
    c, s = cos[None, :, None, : hd // 2].astype(np.float64), sin[None, :, None, : hd // 2].astype(np.float64)
    q1, q2 = q0[..., : hd // 2].astype(np.float64), q0[..., hd // 2:].astype(np.float64)
    np.testing.assert_allclose(q, np.concatenate([q1 * c - q2 * s, q2 * c + q1 * s], axis=-1), **TOL)
    launch(lib.rope_fwd, (batch * seq,), q, heads * hd, *args, n_qh=heads, hd=hd, pad_n_qh=4, pad_hd=hd,
           BACKWARD_PASS=True, backend=backend)
    np.testing.assert_allclose(q, q0, **TOL)  # the backward rotation undoes the forward one


# ----------------------------------------------------------------------------- decorators, names, masks

@pytest.mark.parametrize("backend", BACKENDS)
def test_autotuned_heuristic_kernel_with_python_abs_max_min(backend):
    scale = 1.5
    for n in (96, 100):  # EVEN for BLOCK 32 only / never
        x = RNG.standard_normal(n).astype(np.float32)
        y = np.zeros_like(x)
        launch(lib.leaky_abs, lambda meta: (ascdsl.cdiv(n, meta["BLOCK"]),), x, y, n, scale, backend=backend)
        want = np.abs(x) * scale + np.maximum(x, 0.0) - np.minimum(np.minimum(x, np.float32(0.5 * scale)), 1)
        np.testing.assert_array_equal(y, want.astype(np.float32))


@pytest.mark.parametrize("backend", BACKENDS)
def test_keyword_named_parameters_loop_carried_mask_and_masked_lanes_read_zero(backend):
    n = 21
    x = RNG.standard_normal(n).astype(np.float32)
    out = np.zeros(8, np.float32)
    launch(lib.masked_row_sum, (1,), x, out, n, 0.5, 2.0, 3, BLOCK=8, backend=backend)
    padded = np.concatenate([x, np.zeros(3, np.float32)]).reshape(3, 8).astype(np.float64)
    np.testing.assert_allclose(out, (padded * 2.0).sum(axis=0) + 1.5, **TOL)


@ascdsl.jit
def min_max_scalars(x_ptr, out_ptr, n, lo, hi, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i, mask=i < n)
    first = max(lo, min(hi, n - 1))  # run-time scalars, nested
    top = tl.load(x_ptr + first)
    y = min(max(x, lo, -2.0), hi, 3) + abs(top) + max((lo, 1))  # a tuple argument, constexprs mixed in
    tl.store(out_ptr + i, y, mask=i < n)
    tl.store(out_ptr + BLOCK, abs(lo - hi) * 1.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_python_min_max_abs_on_runtime_scalars_and_tiles(backend):
    x = RNG.standard_normal(16).astype(np.float32) * 4
    out = np.zeros(17, np.float32)
    launch(min_max_scalars, (1,), x, out, 13, -1, 5, BLOCK=16, backend=backend)
    want = np.minimum(np.minimum(np.maximum(np.maximum(x, -1), -2.0), 5), 3) + abs(x[5]) + 1
    np.testing.assert_array_equal(out[:13], want[:13].astype(np.float32))
    assert out[16] == 6.0 and (out[13:16] == 0).all()


@ascdsl.jit
def no_other_times_zero(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i, mask=i < n)
    tl.store(out_ptr + i, x * 0.0 + tl.sum(x, axis=0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_masked_load_without_other_reads_zero_on_both_backends(backend):
    for dtype in (np.float32, np.float16, np.int32):
        x = np.arange(1, 9).astype(dtype)
        out = np.full(8, 9, dtype)
        launch(no_other_times_zero, (1,), x, out, 5, BLOCK=8, backend=backend)
        assert out.tolist() == [15] * 8


def test_debug_mode_reports_a_masked_lane_reaching_a_store():
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    with pytest.raises(ascdsl.PoisonError, match="masked-off lane of a tl.load without `other`") as info:
        no_other_times_zero[(1,)](x, out, 5, BLOCK=8, debug=True)
    assert info.value.loc.file.endswith("test_library_style.py") and "tl.store(out_ptr + i" in str(info.value)
    no_other_times_zero[(1,)](x, out, 8, BLOCK=8, debug=True)  # no masked lane: no error
    assert (out == 28).all()

    @ascdsl.jit(debug=True)
    def masked_store(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        i = tl.arange(0, BLOCK)
        tl.store(out_ptr + i, tl.exp(tl.load(x_ptr + i, mask=i < n)), mask=i < n)

    masked_store[(1,)](x, out, 5, BLOCK=8)  # the masked lanes never reach memory
    np.testing.assert_allclose(out[:5], np.exp(x[:5]), rtol=1e-6)


# ----------------------------------------------------------------------------- aliases

def test_version_and_hand_alias_share_ascdsl_modules(monkeypatch):
    for name in [m for m in sys.modules if m == "triton" or m.startswith("triton.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "triton", ascdsl)
    triton = importlib.import_module("triton")
    libdevice = importlib.import_module("triton.language.extra.cann.libdevice")
    language = importlib.import_module("triton.language")
    assert triton.__version__ == ascdsl.__version__ and tuple(map(int, triton.__version__.split("."))) >= (3, 0)
    assert libdevice is sys.modules["ascdsl.language.extra.cann.libdevice"]
    assert language is ascdsl.language and language.__name__ == "ascdsl.language"

    @triton.jit
    def tanh_kernel(x_ptr, y_ptr, BLOCK: language.constexpr):
        i = language.arange(0, BLOCK)
        language.store(y_ptr + i, libdevice.tanh(language.load(x_ptr + i)))

    x = np.linspace(-2, 2, 8).astype(np.float32)
    y = np.zeros_like(x)
    tanh_kernel[(1,)](x, y, BLOCK=8)
    np.testing.assert_allclose(y, np.tanh(x), rtol=1e-6, atol=1e-6)


# ----------------------------------------------------------------------------- torch

def _rms_norm_function(torch, backend):
    class RMSNorm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, eps):
            rows, cols = x.shape
            y, rstd = torch.empty_like(x), torch.empty(rows, dtype=torch.float32)
            lib.rms_norm_fwd[(rows,)](y, y.stride(0), x, x.stride(0), w, rstd, cols, eps, 0.0,
                                      BLOCK_SIZE=pow2(cols), backend=backend)
            ctx.save_for_backward(x, w, rstd)
            return y

        @staticmethod
        def backward(ctx, dy):
            x, w, rstd = ctx.saved_tensors
            rows, cols = x.shape
            dy = dy.contiguous().clone()
            programs = 2
            per_program = -(-rows // programs)
            dw = torch.empty((programs, cols), dtype=torch.float32)
            lib.rms_norm_bwd[(programs,)](dy, dy.stride(0), dy, dy.stride(0), x, x.stride(0), w, rstd, dw, dw.stride(0),
                                          rows, cols, 0.0, per_program, BLOCK_SIZE=pow2(cols), backend=backend)
            return dy, dw.sum(0), None
    return RMSNorm


def _cross_entropy_function(torch, backend):
    class CrossEntropy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, logits, target, ignore_index, smoothing):
            rows, cols = logits.shape
            loss = torch.zeros(rows, dtype=torch.float32)
            n = int((target != ignore_index).sum())
            # the gradient is written over the logits, which require grad (as public libraries do)
            lib.cross_entropy_fwd_bwd[(rows,)](logits, logits.stride(0), target, loss, cols, n, ignore_index, smoothing,
                                               0.0, reduction="mean", BLOCK_SIZE=32, HAS_SOFTCAPPING=False, softcap=0.0,
                                               HAS_GRADIENTS=True, backend=backend)
            ctx.save_for_backward(logits.detach())
            return loss.sum()

        @staticmethod
        def backward(ctx, grad):
            (logits,) = ctx.saved_tensors
            return logits * grad, None, None, None
    return CrossEntropy


@pytest.mark.parametrize("backend", BACKENDS)
def test_kernels_called_from_torch_autograd_functions(backend):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    x = torch.randn(6, 40, dtype=torch.float32, requires_grad=True)
    w = torch.randn(40, dtype=torch.float32, requires_grad=True)
    y = _rms_norm_function(torch, backend).apply(x, w, 1e-6)
    dy = torch.randn(6, 40)
    y.backward(dy)
    xr, wr = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    ref = xr * torch.rsqrt(xr.pow(2).mean(-1, keepdim=True) + 1e-6) * wr
    ref.backward(dy)
    torch.testing.assert_close(y.detach(), ref.detach(), rtol=2e-5, atol=2e-5)
    torch.testing.assert_close(x.grad, xr.grad, rtol=2e-5, atol=2e-5)
    torch.testing.assert_close(w.grad, wr.grad, rtol=2e-5, atol=2e-5)

    logits0 = torch.randn(5, 50) * 2
    target = torch.tensor([1, -100, 49, 0, 7])
    logits = logits0.clone().requires_grad_()
    loss = _cross_entropy_function(torch, backend).apply(logits, target, -100, 0.1)
    loss.backward()
    ref_logits = logits0.clone().requires_grad_()
    ref = torch.nn.functional.cross_entropy(ref_logits, target, ignore_index=-100, label_smoothing=0.1)
    ref.backward()
    torch.testing.assert_close(loss.detach(), ref.detach(), rtol=2e-5, atol=2e-6)
    torch.testing.assert_close(logits.grad, ref_logits.grad, rtol=2e-5, atol=2e-6)


# ----------------------------------------------------------------------------- the rest of Triton's surface

@ascdsl.jit
def triton_surface(x_ptr, bits_ptr, out_ptr, special_ptr, n, BLOCK: tl.constexpr):
    """``%``/``//`` of floats, ``+``/``*`` of bool tiles, ``propagate_nan=``, ``x.type``,
    ``tl.pointer_type``, int literals wider than the tile, libdevice's special functions."""
    i = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i, mask=i < n)
    tl.static_assert(x_ptr.type == tl.pointer_type(tl.float32) and x.type.element_ty == tl.float32)
    tl.static_assert(x.type.is_block() and x.type.shape == (BLOCK,) and not x_ptr.dtype.is_block())
    z = tl.zeros(x.shape, x.type.scalar)
    r = x % 3.0 + x // 2.0 + z
    either = (x > 0) + (x > 1)
    both = (x > 0) * (x < 2)
    top = tl.max(x, axis=0, propagate_nan=True) + tl.min(x, 0, propagate_nan=tl.PropagateNan.ALL)
    tl.store(out_ptr + i, r + either.to(tl.float32) * 10 + both.to(tl.float32) * 100 + top, mask=i < n)
    b = tl.load(bits_ptr + i)
    tl.store(bits_ptr + i, (b ^ 0xFFFFFFFF) & 0x7FFFFFF0)  # an int32 bit pattern written as uint32
    u = x / 4.0
    tl.store(special_ptr + i, libdevice.erfinv(u * 0.9))
    tl.store(special_ptr + BLOCK + i, libdevice.lgamma(x + 3.0))
    tl.store(special_ptr + 2 * BLOCK + i, libdevice.gamma(x * 0.5))
    tl.store(special_ptr + 3 * BLOCK + i, libdevice.cyl_bessel_i0(x * 2.0))


def test_triton_surface_on_both_backends():
    import math
    n, block = 14, 16
    x = np.linspace(-3.7, 3.9, block).astype(np.float32)
    x[7] = 0.37  # gamma away from its poles
    bits0 = np.arange(-3, 13, dtype=np.int32) * 7919
    results = {}
    for backend in BACKENDS:
        out, bits, special = np.zeros(block, np.float32), bits0.copy(), np.zeros(4 * block, np.float32)
        launch(triton_surface, (1,), x, bits, out, special, n, BLOCK=block, backend=backend)
        results[backend] = out, bits, special
        xs = x[:n].astype(np.float64)
        r = np.fmod(xs, 3) + np.floor(xs / 2)
        want = r + ((xs > 0) | (xs > 1)) * 10 + ((xs > 0) & (xs < 2)) * 100 + xs.max() + xs.min()
        np.testing.assert_allclose(out[:n], want, rtol=1e-6, atol=1e-5)
        assert bits.tolist() == ((bits0 ^ -1) & 0x7FFFFFF0).tolist()
        e, lg, g, i0 = special.reshape(4, block).astype(np.float64)
        loaded = np.where(np.arange(block) < n, x, np.float32(0))  # the masked lanes read 0
        u = (loaded / np.float32(4)).astype(np.float32) * np.float32(0.9)
        np.testing.assert_allclose([math.erf(v) for v in e], u, rtol=0, atol=2e-6)
        loaded = loaded.astype(np.float64)
        np.testing.assert_allclose(lg, [math.lgamma(v + 3.0) for v in loaded], rtol=1e-5, atol=2e-6)
        g_ok = loaded != 0  # gamma(0) is a pole
        np.testing.assert_allclose(g[g_ok], [math.gamma(v * 0.5) for v in loaded[g_ok]], rtol=1e-5)
        assert np.isinf(g[~g_ok]).all()
        np.testing.assert_allclose(i0, np.i0(2.0 * loaded), rtol=1e-6)
    for got, want in zip(results["sim"], results["interpreter"]):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@ascdsl.jit
def wide_literals(x_ptr, out_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i)
    tl.store(out_ptr + i, tl.where(x * 3 < 2 ** 40, x.to(tl.uint8) + 300, x - 2 ** 33))


def test_int_literals_wider_than_the_tile_widen_the_operation():
    x = np.array([-5, 0, 7, 2 ** 31 - 1], np.int32)
    out = np.zeros(4, np.int64)
    wide_literals[(1,)](x, out, BLOCK=4)
    x64 = x.astype(np.int64)
    assert out.tolist() == np.where(x64 * 3 < 2 ** 40, (x64 & 0xFF) + 300, x64 - 2 ** 33).tolist()
    on_sim = np.zeros(4, np.int64)  # int64 on the scalar unit; a 4-lane compare fills half a mask byte
    wide_literals[(1,)](x, on_sim, BLOCK=4, backend="sim")
    assert on_sim.tolist() == out.tolist()


def test_a_launch_returns_its_compiled_kernel_with_asm():
    x = np.zeros(16, np.float32)
    compiled = no_other_times_zero[(1,)](x, x.copy(), 5, BLOCK=16)
    assert compiled.name == "no_other_times_zero" and set(compiled.asm) == {"ttir", "ir", "ascendc"}
    assert compiled.asm["ttir"].startswith("kernel @no_other_times_zero")
    assert "__aicore__" in compiled.asm["ascendc"]


@ascdsl.jit
def nested_returns(out_ptr, bs, limit, B: tl.constexpr):
    b = tl.program_id(0)
    if b >= bs:
        return
    first = tl.program_id(1) == 0
    start = tl.program_id(1) * B
    if first:  # an early return nested in the code after another one
        if start >= limit:
            return
        tl.store(out_ptr + b * 2 * B + tl.arange(0, B), 1.0)
    else:
        tl.store(out_ptr + b * 2 * B + B + tl.arange(0, B), 2.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_early_return_nested_after_an_early_return(backend):
    out = np.zeros(16, np.float32)
    launch(nested_returns, (4, 2), out, 3, 1, B=2, backend=backend)
    assert out.tolist() == [1, 1, 2, 2] * 3 + [0] * 4


@ascdsl.jit
def unmasked_tail(out_ptr, R: tl.constexpr):
    cols = tl.arange(0, R)
    for i in range(2):
        for j in range(3):
            tl.store(out_ptr + j * R + cols[None, :], tl.zeros((1, R), tl.float32))


def test_out_of_bounds_in_batched_loops_is_located():
    """The loops' iterations run as copies of one program: the error names that program."""
    with pytest.raises(ascdsl.OutOfBoundsError, match=r"program \(0, 0, 0\) accesses element 65 of an array of 65"):
        launch(unmasked_tail, (1,), np.zeros(65, np.float32), R=32, backend="interpreter")


# ----------------------------------------------------------------------------- sweep: no internal error

def _sweep_launches(dtype):
    """Every corpus kernel once more in a 16-bit dtype: each must run or be a located CompilationError."""
    rows, cols = 3, 24
    x = RNG.standard_normal((rows, cols)).astype(dtype)
    w = RNG.standard_normal(cols).astype(dtype)
    f32 = np.float32
    return [
        (lib.rms_norm_fwd, (rows,), (np.zeros_like(x), cols, x, cols, w, np.zeros(rows, f32), cols, 1e-6, 0.0),
         dict(BLOCK_SIZE=32)),
        (lib.rms_norm_bwd, (2,), (x.copy(), cols, np.zeros_like(x), cols, x, cols, w, np.ones(rows, f32),
                                  np.zeros((2, cols), f32), cols, rows, cols, 0.0, 2), dict(BLOCK_SIZE=32)),
        (lib.layer_norm_fwd, (rows,), (np.zeros_like(x), x, w, w, np.zeros(rows, f32), np.zeros(rows, f32), cols,
                                       cols, 1e-5), dict(BLOCK_SIZE=32)),
        (lib.cross_entropy_fwd_bwd, (rows,), (x.copy(), cols, np.array([1, -100, 3], np.int64), np.zeros(rows, f32),
                                              cols, 2, -100, 0.1, 0.0),
         dict(reduction="mean", BLOCK_SIZE=16, HAS_SOFTCAPPING=True, softcap=30.0, HAS_GRADIENTS=True)),
        (lib.swiglu_fwd, (rows,), (x, x.copy(), np.zeros_like(x), cols), dict(n_cols=cols, BLOCK_SIZE=32)),
        (lib.swiglu_bwd, (rows,), (x, x.copy(), x.copy(), cols), dict(n_cols=cols, BLOCK_SIZE=32)),
        (lib.geglu_bwd, (rows,), (x, x.copy(), x.copy(), cols), dict(n_cols=cols, BLOCK_SIZE=32)),
        (lib.rope_fwd, (rows,), (x.copy(), cols, w[None, :12].copy(), 12, w[None, :12].copy(), 12, 1),
         dict(n_qh=1, hd=24, pad_n_qh=1, pad_hd=32)),
    ]


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_corpus_sweep_has_no_internal_error(backend, dtype):
    import ml_dtypes
    np_dtype = np.float16 if dtype == "float16" else ml_dtypes.bfloat16
    for kernel, grid, args, kwargs in _sweep_launches(np_dtype):
        try:
            launch(kernel, grid, *args, **kwargs, backend=backend)
        except ascdsl.CompilationError:
            pass  # a located error (a documented limit) is allowed; anything else fails in launch()


@ascdsl.jit
def cdiv_swizzle(x_ptr, out_ptr, ij_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i)
    tl.store(out_ptr + i, tl.cdiv(x, 0.75))  # of floats: ceil(x / 0.75)
    si, sj = tl.swizzle2d(i // 4, i % 4, 4, 4, 2)
    tl.store(ij_ptr + i, si * 4 + sj)


@pytest.mark.parametrize("backend", BACKENDS)
def test_float_cdiv_and_swizzle2d(backend):
    x = np.linspace(-3, 3, 16).astype(np.float32)
    out, ij = np.zeros(16, np.float32), np.zeros(16, np.int32)
    launch(cdiv_swizzle, (1,), x, out, ij, BLOCK=16, backend=backend)
    assert out.tolist() == np.ceil(x / np.float32(0.75)).tolist()
    want = []
    for k in range(16):  # Triton's swizzle2d: column-major groups of 2 rows
        i, j = divmod(k, 4)
        group, rest = divmod(i * 4 + j, 8)
        want.append((group * 2 + rest % 2) * 4 + rest // 2)
    assert ij.tolist() == want


@ascdsl.jit
def scalar_tiles(out_ptr, x_ptr, stride, BLOCK: tl.constexpr):
    c = tl.program_id(0)
    rows = tl.arange(0, BLOCK)
    offs = c[None, None] * stride + rows[:, None] * BLOCK + rows[None, :]  # a scalar as a 1x1 tile
    tl.store(out_ptr + offs, offs.to(tl.float32))
    tl.store(x_ptr + c * BLOCK + rows, libdevice.erfinv(tl.load(x_ptr + c * BLOCK + rows)))


@ascdsl.jit
def empty_kernel():
    pass


@pytest.mark.parametrize("backend", BACKENDS)
def test_scalar_as_tile_empty_kernel_and_erfinv_outside_its_domain(backend):
    out = np.zeros(2 * 16, np.float32)
    x = np.array([0.5, -0.25, 1.5, -2.0] * 2, np.float32)
    launch(scalar_tiles, (2,), out, x, 16, BLOCK=4, backend=backend)
    assert out.tolist() == list(range(32))
    assert np.isnan(x[[2, 3, 6, 7]]).all() and not np.isnan(x[[0, 1, 4, 5]]).any()
    launch(empty_kernel, (3,), backend=backend)


@ascdsl.jit
def masks_through_while_and_if(x_ptr, y_ptr, n, B: tl.constexpr):
    offs = tl.arange(0, B)
    mask = offs < n
    acc = tl.zeros((B,), tl.float32)
    i = 0
    while i < n:  # a bool tile carried by a while loop
        acc += tl.load(x_ptr + offs, mask=mask, other=0.0)
        offs += B
        mask = offs < n
        i += B
    if n > 10:  # and merged out of a runtime if
        mask = acc > 20.0
    tl.store(y_ptr + tl.arange(0, B), tl.where(mask, acc, -1.0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_bool_tiles_carried_by_while_and_if(backend):
    x = np.arange(20, dtype=np.float32)
    for n, want in ((20, [24, 27, 30, 33, -1, -1, -1, 22]), (6, [-1] * 8)):
        y = np.zeros(8, np.float32)
        launch(masks_through_while_and_if, (1,), x, y, n, B=8, backend=backend)
        assert y.tolist() == want
