"""An op whose host picks a tile larger than UB: the interpreter runs it, the NPU could not. Its UB
overflow is located at the host line that chose BLOCK."""
import numpy as np

import ascdsl
import ascdsl.language as tl


@ascdsl.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x, mask=offs < n)


@ascdsl.host
def copy_host(x, platform):
    block = 65536
    return ascdsl.Launch(copy_kernel, grid=(ascdsl.cdiv(x.numel, block),), constexprs={"BLOCK": block},
                         scalars={"n": x.numel})


@ascdsl.entry
def copy(x, *, platform=None, backend=None):
    out = np.empty_like(x)
    copy_host(ascdsl.TensorDesc.of(x), platform)(x, out, backend=backend, platform=platform)
    return out


OP = ascdsl.Operator(name="copy", op_type="CopyAll", entry=copy, host=copy_host, reference=lambda x: x,
                     cases=[ascdsl.Case((100,)), ascdsl.Case((7,))], dtypes=("float32",))
