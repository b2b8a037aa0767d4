"""A Triton-style op, one row per program: the row kernel batches on the simulator; the kernel that
branches on a loaded value (chosen by the ``gated`` attribute) keeps its form."""
import numpy as np

import ascdsl
import ascdsl.language as tl


@ascdsl.jit
def row_scale_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row * n_cols + cols, x / tl.max(tl.abs(x), axis=0), mask=cols < n_cols)


@ascdsl.jit
def gated_row_scale_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    if tl.load(x_ptr + row * n_cols) != 0.0:  # a branch on a loaded value
        x = x / tl.max(tl.abs(x), axis=0)
    tl.store(out_ptr + row * n_cols + cols, x, mask=cols < n_cols)


@ascdsl.host
def row_scale_host(x, gated, platform):
    n_cols = x.shape[x.ndim - 1]
    kernel = gated_row_scale_kernel if gated else row_scale_kernel
    return ascdsl.Launch(kernel, grid=(x.numel // n_cols,), constexprs={"BLOCK": ascdsl.cdiv(n_cols, 64) * 64},
                         scalars={"n_cols": n_cols})


@ascdsl.entry
def row_scale(x, *, gated=False, platform=None, backend=None):
    out = np.empty_like(x)
    row_scale_host(ascdsl.TensorDesc.of(x), gated, platform)(x, out, backend=backend, platform=platform)
    return out


def reference(x, gated=False):
    scaled = x / np.abs(x).max(axis=-1, keepdims=True)
    return np.where(x[..., :1] != 0, scaled, x) if gated else scaled


OP = ascdsl.Operator(name="row_scale", op_type="RowScale", entry=row_scale, host=row_scale_host,
                     reference=reference, dtypes=("float32",), attrs=(ascdsl.Attr("gated", "Bool", False),),
                     cases=[ascdsl.Case((4000, 100)), ascdsl.Case((4000, 100), gated=True),
                            ascdsl.Case((30, 100))])
