"""Linear: relu(x @ w + bias), the product on the cube cores, the bias and the relu on their vector cores (a
MIX kernel). Small cases: one built and verified by tests/host/test_build_cube.py."""
import numpy as np

import ascdsl
from tests.backend.cube_kernels import matmul_bias_relu as linear_kernel


@ascdsl.host
def linear_out_shape(x, w, bias):
    return (x.shape[0], w.shape[1])


@ascdsl.host
def linear_host(x, w, bias, platform):
    if x.ndim != 2 or w.ndim != 2 or x.shape[1] != w.shape[0] or bias.ndim != 1 or bias.shape[0] != w.shape[1]:
        raise ValueError(f"linear needs x (M, K), w (K, N) and bias (N,), got {x.shape}, {w.shape} and {bias.shape}")
    if x.dtype.name not in ("float16", "bfloat16"):
        raise TypeError(f"linear supports float16 and bfloat16, not {x.dtype}")
    m = x.shape[0]
    n = w.shape[1]
    return ascdsl.Launch(linear_kernel, grid=(ascdsl.cdiv(m, 32) * ascdsl.cdiv(n, 64),),
                         constexprs={"BLOCK_M": 32, "BLOCK_N": 64, "BLOCK_K": 32},
                         scalars={"M": m, "N": n, "K": x.shape[1]})


@ascdsl.entry
def linear(x, w, bias, *, platform=None, backend=None):
    x, w, bias = np.ascontiguousarray(x), np.ascontiguousarray(w), np.ascontiguousarray(bias)
    plan = linear_host(ascdsl.TensorDesc.of(x), ascdsl.TensorDesc.of(w), ascdsl.TensorDesc.of(bias), platform)
    out = np.empty((x.shape[0], w.shape[1]), x.dtype)
    plan(x, w, bias, out, backend=backend, platform=platform)
    return out


def reference(x, w, bias):
    return np.maximum(x @ w + bias, 0.0)


CASES = [ascdsl.Case((70, 45), (45, 100), (100,), dtype="float16"),
         ascdsl.Case((32, 64), (64, 64), (64,), dtype="bfloat16")]

OP = ascdsl.Operator(name="linear", op_type="LinearRelu", entry=linear, host=linear_host, reference=reference,
                     cases=CASES, inputs=("x", "w", "bias"), outputs=(ascdsl.Output("out", shape=linear_out_shape),),
                     dtypes=("float16", "bfloat16"))
