"""Row sums in two phases through GM scratch the launch owns (``Launch(scratch=...)``): each program sums its row
chunk by chunk into its part of the scratch, then reads the parts back and sums them. Built and verified by
tests/host/test_scratch.py."""
import numpy as np

import ascdsl
import ascdsl.language as tl

BLOCK = 256
PARTS = 16


@ascdsl.jit
def row_sum_kernel(x_ptr, out_ptr, partials_ptr, n, parts, BLOCK: tl.constexpr, PARTS: tl.constexpr):
    row = tl.program_id(0)
    for c in range(parts):
        cols = c * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=0.0)
        tl.store(partials_ptr + row * parts + c + tl.arange(0, 1), tl.sum(x, axis=0, keep_dims=True))
    i = tl.arange(0, PARTS)
    p = tl.load(partials_ptr + row * parts + i, mask=i < parts, other=0.0)
    tl.store(out_ptr + row + tl.arange(0, 1), tl.sum(p, axis=0, keep_dims=True))


@ascdsl.host
def out_shape(x):
    return (x.shape[0],)


@ascdsl.host
def row_sum_host(x, platform):
    if x.ndim != 2:
        raise ValueError(f"row_sum needs a matrix, got shape {x.shape}")
    parts = ascdsl.cdiv(x.shape[1], BLOCK)
    if parts > PARTS:
        raise ValueError(f"row_sum takes rows of at most {PARTS * BLOCK} elements, got {x.shape[1]}")
    return ascdsl.Launch(row_sum_kernel, grid=(x.shape[0],), constexprs={"BLOCK": BLOCK, "PARTS": PARTS},
                         scalars={"n": x.shape[1], "parts": parts},
                         scratch={"partials_ptr": (tl.float32, x.shape[0] * parts)})


@ascdsl.entry
def row_sum(x, *, platform=None, backend=None):
    x = np.ascontiguousarray(x)
    out = np.empty((x.shape[0],), np.float32)
    row_sum_host(ascdsl.TensorDesc.of(x), platform)(x, out, backend=backend, platform=platform)
    return out


def reference(x):
    return x.sum(axis=1)


OP = ascdsl.Operator(name="row_sum", op_type="RowSum", entry=row_sum, host=row_sum_host, reference=reference,
                     outputs=(ascdsl.Output("out", shape=out_shape),), dtypes=("float32",),
                     cases=[ascdsl.Case((3, 700)), ascdsl.Case((5, 256)), ascdsl.Case((2, 4096))])
