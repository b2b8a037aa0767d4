"""An op whose host code calls NumPy: Python runs it, the C++ tiling function cannot."""
import numpy as np

import ascdsl
import ascdsl.language as tl


@ascdsl.jit
def negate_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, -tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@ascdsl.host
def negate_host(x, platform):
    n = int(np.prod(x.shape))
    return ascdsl.Launch(negate_kernel, grid=(ascdsl.cdiv(n, 64),), constexprs={"BLOCK": 64}, scalars={"n": n})


@ascdsl.entry
def negate(x, *, platform=None, backend=None):
    out = np.empty_like(x)
    negate_host(ascdsl.TensorDesc.of(x), platform)(x, out, backend=backend, platform=platform)
    return out


OP = ascdsl.Operator(name="negate", op_type="Negate", entry=negate, host=negate_host, reference=lambda x: -x,
                     cases=[ascdsl.Case((100,))], dtypes=("float32",))
