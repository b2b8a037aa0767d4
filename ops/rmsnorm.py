"""RMSNorm over the last axis: out = x / sqrt(mean(x * x) + eps) * gamma (computed in float32).

The op the tutorial (docs/tutorial.md) writes from scratch: one program per row, the row in one
tile of BLOCK columns, gamma loaded once per row.
"""
import numpy as np

import ascdsl
import ascdsl.language as tl


@ascdsl.jit
def rms_norm_kernel(x_ptr, gamma_ptr, out_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    mean_square = tl.sum(x * x, axis=0) / n_cols
    inv_rms = tl.rsqrt(mean_square + eps)
    out = x * inv_rms * gamma
    tl.store(out_ptr + row * n_cols + cols, out.to(out_ptr.dtype.element_ty), mask=mask)


@ascdsl.host
def rms_norm_host(x, gamma, eps, platform):
    if x.ndim < 1:
        raise ValueError("rms_norm needs x of rank >= 1")
    if gamma.ndim != 1 or gamma.shape[0] != x.shape[x.ndim - 1]:
        raise ValueError(f"gamma must have shape ({x.shape[x.ndim - 1]},), got {gamma.shape}")
    if x.dtype != gamma.dtype:
        raise TypeError(f"x and gamma must have the same dtype, got {x.dtype} and {gamma.dtype}")
    if x.dtype.name not in ("float32", "float16", "bfloat16"):
        raise TypeError(f"rms_norm supports float32, float16 and bfloat16, not {x.dtype}")
    n_cols = x.shape[x.ndim - 1]
    block = max(64, ascdsl.cdiv(n_cols, 64) * 64)  # the row in whole 64-float repeats
    largest = ascdsl.planner.largest_extent(rms_norm_kernel, "BLOCK", x, gamma, x, platform=platform)
    if block > largest:
        raise ValueError(f"rms_norm supports rows of up to {largest} elements, got {n_cols}")
    return ascdsl.Launch(rms_norm_kernel, grid=(x.numel // max(n_cols, 1),), constexprs={"BLOCK": block},
                         scalars={"n_cols": n_cols, "eps": float(eps)})


@ascdsl.entry
def rms_norm(x, gamma, eps=1e-6, *, platform=None, backend=None):
    """RMSNorm of ``x`` over its last axis, scaled by ``gamma`` (same shape and dtype as ``x``)."""
    plan = rms_norm_host(ascdsl.TensorDesc.of(x), ascdsl.TensorDesc.of(gamma), eps, platform)
    out = np.empty_like(x)
    plan(x, gamma, out, backend=backend, platform=platform)
    return out


def reference(x, gamma, eps=1e-6):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * gamma


CASES = [ascdsl.Case((rows, n), (n,), dtype=dt, eps=1e-6) for dt in ("float32", "float16", "bfloat16")
         for rows, n in ((1, 1), (4, 31), (3, 32), (2, 100), (8, 1000))]
CASES += [ascdsl.Case((2, 3, 64), (64,), eps=1e-5), ascdsl.Case((0, 16), (16,))]

OP = ascdsl.Operator(name="rms_norm", op_type="RmsNorm", entry=rms_norm, host=rms_norm_host,
                     reference=reference, cases=CASES, inputs=("x", "gamma"), outputs=("out",),
                     attrs=(ascdsl.Attr("eps", "Float", 1e-6),),
                     dtypes=("float32", "float16", "bfloat16"))
