"""Kernels written the way public Triton kernel libraries write theirs (norms, losses, gated activations,
rotary embeddings; forward and backward; gradients written into their inputs; autotuned and
heuristics-decorated launches), for ``test_library_style.py``. Written for these tests from what such
kernels do, in their idioms: Python ``min``/``max``/``abs`` on run-time values, masked loads without
``other``, ``return`` inside a run-time ``if``, constexpr flags choosing branches, int64 row offsets."""
import ascdsl as triton
import ascdsl.language as tl
from ascdsl.language.extra import libdevice


@triton.jit
def rms_norm_fwd(Y_ptr, Y_row_stride, X_ptr, X_row_stride, W_ptr, RSTD_ptr, n_cols, eps, offset,
                 BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(X_ptr + row * X_row_stride + cols, mask=mask)  # no `other`: the masked lanes are 0
    x_dtype = x.dtype
    w = tl.load(W_ptr + cols, mask=mask, other=0)
    x = x.to(tl.float32)
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(RSTD_ptr + row, rstd)
    tl.store(Y_ptr + row * Y_row_stride + cols, (x * rstd * (offset + w)).to(x_dtype), mask=mask)


@triton.jit
def rms_norm_bwd(dY_ptr, dY_row_stride, dX_ptr, dX_row_stride, X_ptr, X_row_stride, W_ptr, RSTD_ptr, dW_ptr,
                 dW_row_stride, n_rows, n_cols, offset, rows_per_program, BLOCK_SIZE: tl.constexpr):
    block = tl.program_id(0).to(tl.int64)
    row_start = block * rows_per_program
    row_end = min((block + 1) * rows_per_program, n_rows)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    dw = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    w = tl.load(W_ptr + cols, mask=mask, other=0.0) + offset
    for row in range(row_start, row_end):
        dy = tl.load(dY_ptr + row * dY_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
        x = tl.load(X_ptr + row * X_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = tl.load(RSTD_ptr + row)
        m = dy * w
        dx = rstd * m - (rstd * rstd * rstd / n_cols) * tl.sum(m * x, axis=0) * x
        dw += dy * (x * rstd)
        tl.store(dX_ptr + row * dX_row_stride + cols, dx.to(X_ptr.dtype.element_ty), mask=mask)
    tl.store(dW_ptr + block * dW_row_stride + cols, dw, mask=mask)


@triton.jit
def layer_norm_fwd(Y_ptr, X_ptr, W_ptr, B_ptr, Mean_ptr, RSTD_ptr, stride, n_cols, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(X_ptr + row * stride + cols, mask=mask).to(tl.float32)
    w = tl.load(W_ptr + cols, mask=mask)
    b = tl.load(B_ptr + cols, mask=mask)
    mean = tl.sum(x, axis=0) / n_cols
    diff = tl.where(mask, x - mean, 0.0)
    rstd = 1 / tl.sqrt(tl.sum(diff * diff, axis=0) / n_cols + eps)
    tl.store(Mean_ptr + row, mean)
    tl.store(RSTD_ptr + row, rstd)
    tl.store(Y_ptr + row * stride + cols, diff * rstd * w + b, mask=mask)


@triton.jit
def cross_entropy_fwd_bwd(X_ptr, X_stride, Y_ptr, loss_ptr, n_cols, n_non_ignore, ignore_index, label_smoothing,
                          lse_square_scale, reduction: tl.constexpr, BLOCK_SIZE: tl.constexpr,
                          HAS_SOFTCAPPING: tl.constexpr, softcap, HAS_GRADIENTS: tl.constexpr):
    """The loss of each row, and its gradient written over the logits."""
    row = tl.program_id(0).to(tl.int64)
    X_ptr += row * X_stride
    y = tl.load(Y_ptr + row)
    if y == ignore_index:
        for i in range(0, n_cols, BLOCK_SIZE):
            offs = i + tl.arange(0, BLOCK_SIZE)
            tl.store(X_ptr + offs, 0.0, mask=offs < n_cols)
        tl.store(loss_ptr + row, 0.0)
        return
    loss_ptr += row  # reassigned after a `return`: the `if` merges it, and nothing reads the merged value
    m = float("-inf")
    d = 0.0
    x_y = tl.load(X_ptr + y).cast(tl.float32)
    if HAS_SOFTCAPPING:
        x_y = softcap * libdevice.tanh(x_y / softcap)
    smooth = 0.0
    eps = label_smoothing / n_cols
    for i in range(0, n_cols, BLOCK_SIZE):
        offs = i + tl.arange(0, BLOCK_SIZE)
        xb = tl.load(X_ptr + offs, mask=offs < n_cols, other=float("-inf")).cast(tl.float32)
        if HAS_SOFTCAPPING:
            xb = softcap * libdevice.tanh(xb / softcap)
        block_max = tl.max(xb)
        if label_smoothing > 0:
            smooth += tl.sum(tl.where(offs < n_cols, -eps * xb, 0.0))
        m_new = max(m, block_max)
        d = d * tl.exp(m - m_new) + tl.sum(tl.exp(xb - m_new))
        m = m_new
    lse = m + tl.log(d)
    if HAS_GRADIENTS:
        for i in range(0, n_cols, BLOCK_SIZE):
            offs = i + tl.arange(0, BLOCK_SIZE)
            xb = tl.load(X_ptr + offs, mask=offs < n_cols, other=float("-inf")).cast(tl.float32)
            if HAS_SOFTCAPPING:
                xb = softcap * libdevice.tanh(xb / softcap)
            p = tl.exp(xb - m) / d
            g = p - eps + 2 * lse_square_scale * lse * p
            if reduction == "mean":
                g = g / n_non_ignore
            tl.store(X_ptr + offs, g, mask=offs < n_cols)
    loss = lse - x_y
    if label_smoothing > 0:
        loss = loss * (1 - label_smoothing) + (smooth + label_smoothing * lse)
    z_loss = lse_square_scale * lse * lse
    loss += z_loss
    if reduction == "mean":
        loss = loss / n_non_ignore
    if HAS_GRADIENTS:
        g_y = tl.load(X_ptr + y)
        if reduction == "mean":
            g_y += -(1 - label_smoothing) / n_non_ignore
        else:
            g_y += -(1 - label_smoothing)
        tl.store(X_ptr + y, g_y)
    tl.store(loss_ptr, loss)


@triton.jit
def silu(x):
    return x * tl.sigmoid(x)


@triton.jit
def swiglu_fwd(a_ptr, b_ptr, c_ptr, stride, n_cols: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    a_ptr += row * stride
    b_ptr += row * stride
    c_ptr += row * stride
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    a = tl.load(a_ptr + cols, mask=mask, other=0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0)
    tl.store(c_ptr + cols, silu(a).cast(b.dtype) * b, mask=mask)


@triton.jit
def swiglu_bwd(dc_ptr, a_ptr, b_ptr, stride, n_cols: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    """da and db written over a and b (the saved inputs)."""
    row = tl.program_id(0).to(tl.int64)
    dc_ptr += row * stride
    a_ptr += row * stride
    b_ptr += row * stride
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    dc = tl.load(dc_ptr + cols, mask=mask, other=0)
    a = tl.load(a_ptr + cols, mask=mask, other=0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0)
    sig = tl.sigmoid(a)
    silu_a = a * sig
    db = dc * silu_a
    da = dc * (silu_a * (1 - sig) + sig) * b
    tl.store(a_ptr + cols, da, mask=mask)
    tl.store(b_ptr + cols, db, mask=mask)


@triton.jit
def geglu_bwd(dc_ptr, a_ptr, b_ptr, stride, n_cols: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    """GELU (tanh approximation) gated; da and db written over a and b."""
    row = tl.program_id(0).to(tl.int64)
    dc_ptr += row * stride
    a_ptr += row * stride
    b_ptr += row * stride
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    dc = tl.load(dc_ptr + cols, mask=mask, other=0)
    a = tl.load(a_ptr + cols, mask=mask, other=0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0)
    sqrt_2_over_pi = 0.7978845608028654
    a_cubed = a * a * a
    t = libdevice.tanh(sqrt_2_over_pi * (a + 0.044715 * a_cubed))
    gelu_a = 0.5 * a * (1 + t)
    db = dc * gelu_a
    term1 = 0.5 * (1 + t)
    term2 = 0.5 * a * (1 - t * t) * sqrt_2_over_pi * (1 + 3 * 0.044715 * a * a)
    da = dc * b * (term1 + term2)
    tl.store(a_ptr + cols, da, mask=mask)
    tl.store(b_ptr + cols, db, mask=mask)


@triton.jit
def rope_fwd(q_ptr, q_row_stride, cos_ptr, cos_row_stride, sin_ptr, sin_row_stride, sl, n_qh: tl.constexpr,
             hd: tl.constexpr, pad_n_qh: tl.constexpr, pad_hd: tl.constexpr, BACKWARD_PASS: tl.constexpr = False):
    """Rotates the two halves of every head of one (batch, position) row of q, in place."""
    pid = tl.program_id(0).to(tl.int64)
    q_ptr = q_ptr + pid * q_row_stride
    pos = pid % sl
    half = tl.arange(0, pad_hd // 2)
    cos = tl.load(cos_ptr + pos * cos_row_stride + half, mask=half < hd // 2, other=0)
    sin = tl.load(sin_ptr + pos * sin_row_stride + half, mask=half < hd // 2, other=0)
    heads = tl.arange(0, pad_n_qh)[:, None]
    first = heads * hd + half[None, :]
    mask = (heads < n_qh) & (half[None, :] < hd // 2)
    q1 = tl.load(q_ptr + first, mask=mask, other=0).to(sin.dtype)
    q2 = tl.load(q_ptr + first + hd // 2, mask=mask, other=0).to(sin.dtype)
    if not BACKWARD_PASS:
        new1 = q1 * cos - q2 * sin
        new2 = q2 * cos + q1 * sin
    else:
        new1 = q1 * cos + q2 * sin
        new2 = q2 * cos - q1 * sin
    tl.store(q_ptr + first, new1, mask=mask)
    tl.store(q_ptr + first + hd // 2, new2, mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})], key=["n"])
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def leaky_abs(x_ptr, y_ptr, n, scale, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    """Autotuned over BLOCK, with EVEN from a heuristic; Python ``abs``/``max``/``min`` on tiles."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        x = tl.load(x_ptr + offs)
    else:
        x = tl.load(x_ptr + offs, mask=offs < n)
    y = abs(x) * scale + max(x, 0.0, -1.0) - min(x, 0.5 * scale, 1)
    if EVEN:
        tl.store(y_ptr + offs, y)
    else:
        tl.store(y_ptr + offs, y, mask=offs < n)


@triton.jit
def masked_row_sum(x_ptr, out_ptr, n, NULL, new, int, BLOCK: tl.constexpr):
    """Parameters named like C/C++ keywords and macros; a mask carried through a loop; a masked load
    without ``other`` multiplied by 0 (0 * 0, never NaN)."""
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in range(0, n, BLOCK):
        x = tl.load(x_ptr + offsets, mask=mask)
        acc += x * new + x * 0.0
        offsets += BLOCK
        mask = offsets < n
    tl.store(out_ptr + tl.arange(0, BLOCK), acc + NULL * int)
