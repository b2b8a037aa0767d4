"""An op whose OP.name (square) differs from its file name and from its op type (SquareEach): it builds to DIR/square."""
import numpy as np

import ascdsl
import ascdsl.language as tl


@ascdsl.jit
def square_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x * x, mask=offs < n)


@ascdsl.host
def square_host(x, platform):
    return ascdsl.Launch(square_kernel, grid=(ascdsl.cdiv(x.numel, 64),), constexprs={"BLOCK": 64},
                         scalars={"n": x.numel})


@ascdsl.entry
def square(x, *, platform=None, backend=None):
    out = np.empty_like(x)
    square_host(ascdsl.TensorDesc.of(x), platform)(x, out, backend=backend, platform=platform)
    return out


OP = ascdsl.Operator(name="square", op_type="SquareEach", entry=square, host=square_host,
                     reference=lambda x: x * x, cases=[ascdsl.Case((100,))], dtypes=("float32",))
