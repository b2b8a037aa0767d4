"""Attention forward (softmax(q k^T / 8) v, 64-element heads over batch x heads): a MIX kernel whose cores take turns at each
step of its loop over keys (tests/host/test_build_cube.py)."""
import numpy as np

import ascdsl
from ascdsl.bench_kernels import attention_fwd


@ascdsl.host
def attention_host(q, k, v, platform):
    if q.ndim != 3 or q.shape[2] != 64:
        raise ValueError(f"attention needs q, k and v of (batch x heads, N, D), got {q.shape} (D = 64)")
    return ascdsl.Launch(attention_fwd, grid=(ascdsl.cdiv(q.shape[1], 16), q.shape[0]),
                         constexprs={"D": 64, "BLOCK_M": 16, "BLOCK_N": 32, "CAUSAL": False},
                         scalars={"sm_scale": 0.125, "N_CTX": q.shape[1]})


@ascdsl.entry
def attention(q, k, v, *, platform=None, backend=None):
    q, k, v = (np.ascontiguousarray(x) for x in (q, k, v))
    out = np.empty_like(q)
    descs = (ascdsl.TensorDesc.of(x) for x in (q, k, v))
    attention_host(*descs, platform)(q, k, v, out, backend=backend, platform=platform)
    return out


def reference(q, k, v):
    s = q.astype(np.float64) @ np.swapaxes(k.astype(np.float64), -1, -2) * 0.125
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True) @ v.astype(np.float64)).astype(q.dtype)


OP = ascdsl.Operator(name="attention", op_type="Attention", entry=attention, host=attention_host,
                     reference=reference, inputs=("q", "k", "v"),
                     outputs=(ascdsl.Output("out", shape="q"),),
                     dtypes=("float16",), cases=[ascdsl.Case((2, 40, 64), (2, 40, 64), (2, 40, 64), dtype="float16")])
