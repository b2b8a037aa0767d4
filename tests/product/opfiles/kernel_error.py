"""An op whose kernel does not compile (a broadcast of tiles of different lengths): every case and the
build report the same located kernel error."""
import numpy as np

import ascdsl
import ascdsl.language as tl


@ascdsl.jit
def twice_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x + tl.zeros((2 * BLOCK,), tl.float32), mask=offs < n)


@ascdsl.host
def twice_host(x, platform):
    return ascdsl.Launch(twice_kernel, grid=(ascdsl.cdiv(x.numel, 64),), constexprs={"BLOCK": 64},
                         scalars={"n": x.numel})


@ascdsl.entry
def twice(x, *, platform=None, backend=None):
    out = np.empty_like(x)
    twice_host(ascdsl.TensorDesc.of(x), platform)(x, out, backend=backend, platform=platform)
    return out


OP = ascdsl.Operator(name="twice", op_type="Twice", entry=twice, host=twice_host, reference=lambda x: 2 * x,
                     cases=[ascdsl.Case((100,)), ascdsl.Case((7,)), ascdsl.Case((3, 5)), ascdsl.Case((1000,))],
                     dtypes=("float32",))
