"""MatMul: c = a @ b, or relu(a @ b), for float16 and bfloat16 matrices (float32 accumulation).

The Triton tutorial's kernel: one program per 64 x 64 output tile, a loop over K in steps of 64. Its product
runs on the AI cube cores (``activation="none"``: a pure-cube kernel, ``KERNEL_TYPE_AIC_ONLY``); the relu of
``activation="relu"`` runs on their vector cores, which makes it a MIX kernel (``KERNEL_TYPE_MIX_AIC_1_2``:
the product goes through a float32 GM workspace, which the tiling sizes for the shape).
"""
import numpy as np

import ascdsl
import ascdsl.language as tl

BLOCK = 64


@ascdsl.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, RELU: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    rows = (pid // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = (pid % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    if RELU:
        acc = tl.maximum(acc, 0.0)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


@ascdsl.host
def matmul_out_shape(a, b, activation):
    return (a.shape[0], b.shape[1])


@ascdsl.host
def matmul_host(a, b, activation, platform):
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul needs a of shape (M, K) and b of shape (K, N), got {a.shape} and {b.shape}")
    if a.dtype != b.dtype:
        raise TypeError(f"a and b must have the same dtype, got {a.dtype} and {b.dtype}")
    if a.dtype.name not in ("float16", "bfloat16"):
        raise TypeError(f"matmul supports float16 and bfloat16 (the cube cores' operands), not {a.dtype}")
    if activation != "none" and activation != "relu":
        raise ValueError(f"activation must be 'none' or 'relu', got '{activation}'")
    m = a.shape[0]
    n = b.shape[1]
    if n > 65535 or a.shape[1] > 65535:  # the cube's GM -> L1 copies take row strides of up to 65535 elements
        raise ValueError(f"matmul takes K and N of at most 65535, got K={a.shape[1]} and N={n}")
    return ascdsl.Launch(matmul_kernel, grid=(ascdsl.cdiv(m, BLOCK) * ascdsl.cdiv(n, BLOCK),),
                         constexprs={"BLOCK_M": BLOCK, "BLOCK_N": BLOCK, "BLOCK_K": BLOCK,
                                     "RELU": activation == "relu"},
                         scalars={"M": m, "N": n, "K": a.shape[1]})


@ascdsl.entry
def matmul(a, b, activation="none", *, platform=None, backend=None):
    """``a @ b`` (``activation="relu"``: its relu), of ``a``'s dtype."""
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    plan = matmul_host(ascdsl.TensorDesc.of(a), ascdsl.TensorDesc.of(b), activation, platform)
    out = np.empty((a.shape[0], b.shape[1]), a.dtype)
    plan(a, b, out, backend=backend, platform=platform)
    return out


def reference(a, b, activation="none"):
    c = a @ b
    return np.maximum(c, 0.0) if activation == "relu" else c


CASES = [ascdsl.Case((m, k), (k, n), dtype=dt, activation=act)
         for dt in ("float16", "bfloat16") for act in ("none", "relu")
         for m, k, n in ((64, 64, 64), (100, 70, 130))]
CASES += [ascdsl.Case((256, 256), (256, 256), dtype="float16"), ascdsl.Case((0, 32), (32, 16), dtype="float16")]

OP = ascdsl.Operator(name="matmul", op_type="MatMul", entry=matmul, host=matmul_host, reference=reference,
                     cases=CASES, inputs=("a", "b"), outputs=(ascdsl.Output("c", shape=matmul_out_shape),),
                     attrs=(ascdsl.Attr("activation", "String", "none"),), dtypes=("float16", "bfloat16"))
