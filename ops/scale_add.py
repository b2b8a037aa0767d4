"""ScaleAdd: out = alpha * x + y over tensors of any shape (computed in float32)."""
import numpy as np

import ascdsl
import ascdsl.language as tl


@ascdsl.jit
def scale_add_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    out = alpha * x + y
    tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


@ascdsl.host
def scale_add_host(x, y, alpha, platform):
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same shape, got {x.shape} and {y.shape}")
    if x.dtype != y.dtype:
        raise TypeError(f"x and y must have the same dtype, got {x.dtype} and {y.dtype}")
    if x.dtype.name not in ("float32", "float16", "bfloat16"):
        raise TypeError(f"scale_add supports float32, float16 and bfloat16, not {x.dtype}")
    n = x.numel
    if n > 2147483647:  # 2^31-1: the kernel's offsets are int32, as the Triton kernel it mirrors
        raise ValueError(f"scale_add takes at most 2^31-1 elements per call, got {n}: split the tensor")
    block = min(4096, max(32, ascdsl.next_power_of_2(n)))
    return ascdsl.Launch(scale_add_kernel, grid=(ascdsl.cdiv(n, block),),
                         constexprs={"BLOCK": block}, scalars={"alpha": float(alpha), "n": n})


@ascdsl.entry
def scale_add(x, y, alpha=1.0, *, platform=None, backend=None):
    """Return ``alpha * x + y`` (same shape and dtype as ``x``)."""
    x, y = np.ascontiguousarray(x), np.ascontiguousarray(y)
    plan = scale_add_host(ascdsl.TensorDesc.of(x), ascdsl.TensorDesc.of(y), alpha, platform)
    out = np.empty_like(x)
    plan(x, y, out, backend=backend, platform=platform)
    return out


def reference(x, y, alpha=1.0):
    return alpha * x + y


CASES = [ascdsl.Case((n,), (n,), dtype=dt, alpha=0.5)
         for dt in ("float32", "float16", "bfloat16") for n in (1, 31, 32, 33, 4096, 10007)]
CASES += [ascdsl.Case((3, 5, 7), (3, 5, 7), alpha=-2.0), ascdsl.Case((0,), (0,))]

OP = ascdsl.Operator(name="scale_add", op_type="ScaleAdd", entry=scale_add, host=scale_add_host,
                     reference=reference, cases=CASES, inputs=("x", "y"), outputs=("out",),
                     attrs=(ascdsl.Attr("alpha", "Float", 1.0),),
                     dtypes=("float32", "float16", "bfloat16"))
