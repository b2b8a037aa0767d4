"""Rows centred on their mean, each row split over PARTS programs that exchange their partial sums through the
``part`` output between two sides of a grid barrier: every program of a launch must hold a vector core at once.
Used by tests/host/test_tiling_function.py."""
import numpy as np

import ascdsl
import ascdsl.language as tl
import ascdsl.language.extra.cann.extension as al

PARTS = 4


@ascdsl.jit
def centred_kernel(x_ptr, out_ptr, part_ptr, n, PARTS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    row = pid // PARTS
    part = pid % PARTS
    cols = part * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=0.0)
    tl.store(part_ptr + row * PARTS + part, tl.sum(x, axis=0))
    al.sync_block_all("all_vector", 0)
    mean = tl.sum(tl.load(part_ptr + row * PARTS + tl.arange(0, PARTS)), axis=0) / n
    tl.store(out_ptr + row * n + cols, x - mean, mask=cols < n)


@ascdsl.host
def centred_host(x):
    if x.ndim != 2:
        raise ValueError(f"centred needs x (M, N), got {x.shape}")
    m = x.shape[0]
    n = x.shape[1]
    return ascdsl.Launch(centred_kernel, grid=(m * PARTS,), constexprs={"PARTS": PARTS, "BLOCK": 64},
                         scalars={"n": n})


@ascdsl.host
def part_shape(x):
    return (x.shape[0], PARTS)


@ascdsl.entry
def centred(x, *, platform=None, backend=None):
    x = np.ascontiguousarray(x)
    plan = centred_host(ascdsl.TensorDesc.of(x))
    out, part = np.empty_like(x), np.empty((x.shape[0], PARTS), x.dtype)
    plan(x, out, part, backend=backend, platform=platform)
    return out, part


def reference(x):
    padded = np.pad(x, ((0, 0), (0, PARTS * 64 - x.shape[1])))  # (rows of at most PARTS * BLOCK)
    return x - x.mean(axis=1, keepdims=True), padded.reshape(x.shape[0], PARTS, 64).sum(axis=2)


OP = ascdsl.Operator(name="centred", op_type="CentredRows", entry=centred, host=centred_host, reference=reference,
                     cases=[ascdsl.Case((5, 200), dtype="float32")], inputs=("x",),
                     outputs=(ascdsl.Output("out"), ascdsl.Output("part", shape=part_shape)), dtypes=("float32",))
