"""Scaled operands: (2 a) @ (b - 1), float32 out, both operands computed on the vector cores and multiplied on
their cube core (a MIX kernel whose vector work comes before its product). One case, built and verified by
tests/host/test_build_cube.py."""
import numpy as np

import ascdsl
from tests.backend.cube_kernels import scaled_operands as scaled_kernel


@ascdsl.host
def out_shape(a, b):
    return (a.shape[0], b.shape[1])


@ascdsl.host
def scaled_host(a, b, platform):
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"scaled_operands needs a (M, K) and b (K, N), got {a.shape} and {b.shape}")
    return ascdsl.Launch(scaled_kernel, grid=(ascdsl.cdiv(a.shape[0], 16), ascdsl.cdiv(b.shape[1], 16)),
                         constexprs={"BLOCK": 16, "K": a.shape[1]}, scalars={"M": a.shape[0], "N": b.shape[1]})


@ascdsl.entry
def scaled_operands(a, b, *, platform=None, backend=None):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    out = np.empty((a.shape[0], b.shape[1]), np.float32)
    scaled_host(ascdsl.TensorDesc.of(a), ascdsl.TensorDesc.of(b), platform)(a, b, out, backend=backend,
                                                                            platform=platform)
    return out


def reference(a, b):
    """The operands as the kernel computes them, rounded to float16, their product in float64."""
    x, w = (a * 2).astype(np.float16), (b - 1).astype(np.float16)
    return (x.astype(np.float64) @ w.astype(np.float64)).astype(np.float32)


OP = ascdsl.Operator(name="scaled_operands", op_type="ScaledOperands", entry=scaled_operands, host=scaled_host,
                     reference=reference, inputs=("a", "b"), outputs=(ascdsl.Output("out", shape=out_shape, dtype="float32"),),
                     dtypes=("float16",), cases=[ascdsl.Case((40, 32), (32, 24), dtype="float16")])
