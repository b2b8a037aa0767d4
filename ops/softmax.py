"""Softmax over the last axis, any row length: one tile per row when the row fits the UB,
otherwise a looped three-pass variant (max, sum of exponentials, normalise) over the largest chunk
that fits. Both tile extents are runtime tiling fields sized from the kernels' exact UB footprints."""
import numpy as np

import ascdsl
import ascdsl.language as tl


@ascdsl.jit
def softmax_row_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    out = e / tl.sum(e, axis=0)
    tl.store(out_ptr + row * n_cols + cols, out.to(out_ptr.dtype.element_ty), mask=mask)


@ascdsl.jit
def softmax_looped_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    base = tl.program_id(0) * n_cols
    cols = tl.arange(0, BLOCK)
    row_max = tl.full((BLOCK,), -float("inf"), tl.float32)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + base + start + cols, mask=mask, other=-float("inf")).to(tl.float32)
        row_max = tl.maximum(row_max, x)
    m = tl.max(row_max, axis=0)
    total = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + base + start + cols, mask=mask, other=-float("inf")).to(tl.float32)
        total += tl.exp(x - m)
    s = tl.sum(total, axis=0)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + base + start + cols, mask=mask, other=0.0).to(tl.float32)
        out = tl.exp(x - m) / s
        tl.store(out_ptr + base + start + cols, out.to(out_ptr.dtype.element_ty), mask=mask)


@ascdsl.host
def softmax_host(x, platform):
    if x.ndim < 1:
        raise ValueError("softmax needs a tensor of rank >= 1")
    if x.dtype.name not in ("float32", "float16", "bfloat16"):
        raise TypeError(f"softmax supports float32, float16 and bfloat16, not {x.dtype}")
    n_cols = x.shape[x.ndim - 1]
    rows = x.numel // max(n_cols, 1)
    block = max(64, ascdsl.cdiv(n_cols, 64) * 64)  # the row in whole 64-float repeats
    if block <= ascdsl.planner.largest_extent(softmax_row_kernel, "BLOCK", x, x, platform=platform):
        return ascdsl.Launch(softmax_row_kernel, grid=(rows,), variant="single_tile",
                             constexprs={"BLOCK": block}, scalars={"n_cols": n_cols})
    largest = ascdsl.planner.largest_extent(softmax_looped_kernel, "BLOCK", x, x, platform=platform)
    chunk = ascdsl.cdiv(ascdsl.cdiv(n_cols, ascdsl.cdiv(n_cols, largest)), 64) * 64  # equal chunks that fit
    return ascdsl.Launch(softmax_looped_kernel, grid=(rows,), variant="looped",
                         constexprs={"BLOCK": chunk}, scalars={"n_cols": n_cols})


@ascdsl.entry
def softmax(x, *, platform=None, backend=None):
    """Softmax of ``x`` over its last axis (same shape and dtype)."""
    x = np.ascontiguousarray(x)
    plan = softmax_host(ascdsl.TensorDesc.of(x), platform)
    out = np.empty_like(x)
    plan(x, out, backend=backend, platform=platform)
    return out


def reference(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True)) if x.size else x
    return e / e.sum(axis=-1, keepdims=True) if x.size else x


CASES = [ascdsl.Case(shape, dtype=dt) for dt in ("float32", "float16", "bfloat16")
         for shape in ((1, 1), (4, 31), (3, 32), (5, 33), (64, 1000), (2, 3, 7))]
CASES += [ascdsl.Case((3, 30000)), ascdsl.Case((2, 8193), dtype="float16"), ascdsl.Case((2, 12000), dtype="float16"),
          ascdsl.Case((0, 5))]

OP = ascdsl.Operator(name="softmax", op_type="Softmax", entry=softmax, host=softmax_host,
                     reference=reference, cases=CASES, inputs=("x",), outputs=("out",),
                     dtypes=("float32", "float16", "bfloat16"))
