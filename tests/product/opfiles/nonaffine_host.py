"""An op whose planner query has a UB footprint that is not affine in BLOCK over its candidates."""
import numpy as np
import ascdsl
import ascdsl.language as tl


@ascdsl.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@ascdsl.host
def copy_host(x, platform):
    block = ascdsl.planner.largest_block(copy_kernel, "BLOCK", (1, 2, 16), x, x, platform=platform)
    return ascdsl.Launch(copy_kernel, grid=(ascdsl.cdiv(x.numel, block),), constexprs={"BLOCK": block},
                         scalars={"n": x.numel})


@ascdsl.entry
def copy(x, *, platform=None, backend=None):
    out = np.empty_like(x)
    copy_host(ascdsl.TensorDesc.of(x), ascdsl.platforms.get_platform(platform or "Ascend910B3"))(
        x, out, backend=backend, platform=platform)
    return out


OP = ascdsl.Operator(name="copy", op_type="Copy", entry=copy, host=copy_host, reference=lambda x: x,
                     cases=[ascdsl.Case((40,))], dtypes=("float32",))
