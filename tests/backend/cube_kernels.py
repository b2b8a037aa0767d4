"""Kernels whose products run on the AI cube core (issue 26), in the forms users write them."""
import ascdsl
import ascdsl.language as tl
from ascdsl.bench_kernels import attention_fwd  # noqa: F401  (the bench times it too)


@ascdsl.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        offs_k = k + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak,
                    mask=(offs_m[:, None] < M) & (offs_k[None, :] < K), other=0.0)
        b = tl.load(b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn,
                    mask=(offs_k[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    c = acc.to(c_ptr.dtype.element_ty)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn, c,
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@ascdsl.jit
def matmul_grid2(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 BLOCK_K: tl.constexpr, WRAP=None):
    """Row-major operands addressed without stride parameters, a 2-D grid, a float32 result. Given `WRAP`, a
    run-time value, program p's rows are block 2p + p % WRAP (`p % 0` is 0 on the interpreter: C's `%` would
    trap)."""
    row_block = tl.program_id(0)
    if WRAP is not None:
        row_block = row_block * 2 + row_block % WRAP
    rows = row_block * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K))
        w = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N))
        acc = tl.dot(x, w, acc)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


@ascdsl.jit
def matmul_relu(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK: tl.constexpr):
    """Vector work after the product: a MIX kernel (relu on the vector cores), stored as float32."""
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k0 in range(0, K, BLOCK):
        ks = k0 + tl.arange(0, BLOCK)
        x = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K))
        w = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N))
        acc = tl.dot(x, w, acc)
    out = tl.maximum(acc, 0.0)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], out, mask=(rows[:, None] < M) & (cols[None, :] < N))


@ascdsl.jit
def small_matmul(x_ptr, w_ptr, out_ptr, M, N, K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """The whole of K in one product (no loop), bf16 rounded out."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, K)
    x = tl.load(x_ptr + rows[:, None] * K + ks[None, :], mask=rows[:, None] < M, other=0.0)
    w = tl.load(w_ptr + ks[:, None] * N + cols[None, :], mask=cols[None, :] < N, other=0.0)
    y = tl.dot(x, w).to(tl.bfloat16)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], y, mask=(rows[:, None] < M) & (cols[None, :] < N))


@ascdsl.jit
def batched_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   BLOCK_K: tl.constexpr):
    """C[z] = A[z] @ B[z]: program id 1 over the batch, 0 over the output tiles of one product."""
    z = tl.program_id(1)
    tiles_n = tl.cdiv(N, BLOCK_N)
    rows = (tl.program_id(0) // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = (tl.program_id(0) % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    a_base = a_ptr + z * M * K
    b_base = b_ptr + z * K * N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(a_base + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        w = tl.load(b_base + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(x, w, acc)
    tl.store(c_ptr + z * M * N + rows[:, None] * N + cols[None, :], acc.to(tl.float16),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


@ascdsl.jit
def matmul_advancing(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """The tutorial's own form: blocks of pointers advanced by ``BLOCK_K`` strides each step of K."""
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    offs_am = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_bn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=(offs_am[:, None] < M) & (offs_k[None, :] < K - k * BLOCK_K), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < K - k * BLOCK_K) & (offs_bn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(tl.float16)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :], c,
             mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@ascdsl.jit
def matmul_bias_relu(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     BLOCK_K: tl.constexpr):
    """A linear layer: relu(A @ B + bias), the bias (one per column) loaded before the loop over K."""
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    rows = (pid // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = (pid % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    bias = tl.load(bias_ptr + cols, mask=cols < N, other=0.0)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        w = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(x, w, acc)
    out = tl.maximum(acc + bias[None, :].to(tl.float32), 0.0)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], out.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


@ascdsl.jit
def matmul_scaled_gelu(a_ptr, b_ptr, c_ptr, M, N, K, scale, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_K: tl.constexpr):
    """gelu(scale * A @ B) by its sigmoid approximation, on a 2-D grid, rounded to the output's dtype."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        w = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(x, w, acc)
    y = acc * scale
    y = y * tl.sigmoid(1.702 * y)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], y.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


@ascdsl.jit
def batched_matmul_residual(a_ptr, b_ptr, r_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                            BLOCK_K: tl.constexpr):
    """C[z] = R[z] + A[z] @ B[z] (a residual added to each batch's product), program id 1 over the batch."""
    z = tl.program_id(1)
    tiles_n = tl.cdiv(N, BLOCK_N)
    rows = (tl.program_id(0) // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = (tl.program_id(0) % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(a_ptr + z * M * K + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K),
                    other=0.0)
        w = tl.load(b_ptr + z * K * N + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N),
                    other=0.0)
        acc = tl.dot(x, w, acc)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offsets = z * M * N + rows[:, None] * N + cols[None, :]
    residual = tl.load(r_ptr + offsets, mask=mask, other=0.0)
    tl.store(c_ptr + offsets, (acc + residual.to(tl.float32)).to(tl.float16), mask=mask)


@ascdsl.jit
def matmul_scaled_operand(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK: tl.constexpr):
    """Vector work before the product in a loop over K (an operand scaled at each step): a located error."""
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k0 in range(0, K, BLOCK):
        ks = k0 + tl.arange(0, BLOCK)
        x = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        w = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(x * 2.0, w, acc)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], tl.maximum(acc, 0.0),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


@ascdsl.jit
def row_softmax_times_v(x_ptr, v_ptr, out_ptr, M, N, K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Vector work before the product (attention's P @ V): each row of a block of x exponentiated past its max
    on the vector cores, then `tl.dot(p.to(v's dtype), v)` on the cube core, stored as out's dtype."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, K)
    x = tl.load(x_ptr + rows[:, None] * K + ks[None, :], mask=rows[:, None] < M, other=0.0).to(tl.float32)
    p = tl.exp(x - tl.max(x, axis=1)[:, None])
    v = tl.load(v_ptr + ks[:, None] * N + cols[None, :], mask=cols[None, :] < N, other=0.0)
    out = tl.dot(p.to(v_ptr.dtype.element_ty), v)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], out.to(out_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


@ascdsl.jit
def scaled_operands(a_ptr, b_ptr, c_ptr, M, N, K: tl.constexpr, BLOCK: tl.constexpr):
    """Both operands computed (`tl.dot(x * 2.0, w - 1.0, acc)` with the whole of K in one product), the float32
    product stored as it is."""
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    ks = tl.arange(0, K)
    x = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=rows[:, None] < M, other=0.0)
    w = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=cols[None, :] < N, other=0.0)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    acc = tl.dot(x * 2.0, w - 1.0, acc)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


@ascdsl.jit
def scaled_operand_relu(a_ptr, b_ptr, c_ptr, M, N, K: tl.constexpr, BLOCK: tl.constexpr):
    """Vector work before the product and after it: a located error."""
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ks = tl.arange(0, K)
    x = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=rows[:, None] < M, other=0.0)
    w = tl.load(b_ptr + ks[:, None] * N + ks[None, :])
    y = tl.dot(x * 2.0, w)
    tl.store(c_ptr + rows[:, None] * N + ks[None, :], tl.maximum(y, 0.0), mask=rows[:, None] < M)


@ascdsl.jit
def steps_of_a_scaled_operand(x_ptr, w_ptr, out_ptr, N, BLOCK: tl.constexpr):
    """Two products a step, the first's operand scaled before the loop: a located error."""
    rows = tl.arange(0, BLOCK)
    x = (tl.load(x_ptr + rows[:, None] * BLOCK + rows[None, :]) * 2.0).to(tl.float16)
    acc = tl.zeros((BLOCK, BLOCK), tl.float32)
    for start in range(0, N, BLOCK):
        w = tl.load(w_ptr + (start + rows)[:, None] * BLOCK + rows[None, :])
        y = tl.dot(x, w)
        acc += tl.dot(y.to(tl.float16), w)
    tl.store(out_ptr + rows[:, None] * BLOCK + rows[None, :], acc)


@ascdsl.jit
def two_products(a_ptr, b_ptr, c_ptr, M, N, K: tl.constexpr, BLOCK: tl.constexpr):
    """(A @ B) @ B: the second product's operand is the first's result, computed in the kernel."""
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ks = tl.arange(0, K)
    x = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=rows[:, None] < M, other=0.0)
    w = tl.load(b_ptr + ks[:, None] * N + ks[None, :])
    y = tl.dot(x, w).to(tl.float16)
    z = tl.dot(y, w)
    tl.store(c_ptr + rows[:, None] * N + ks[None, :], tl.maximum(z, 0.0), mask=rows[:, None] < M)


@ascdsl.jit
def small_linear_leaky(x_ptr, w_ptr, out_ptr, M, N, K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """The whole of K in one product (no loop), then a leaky relu by `tl.where`, bf16 rounded out."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, K)
    x = tl.load(x_ptr + rows[:, None] * K + ks[None, :], mask=rows[:, None] < M, other=0.0)
    w = tl.load(w_ptr + ks[:, None] * N + cols[None, :], mask=cols[None, :] < N, other=0.0)
    y = tl.dot(x, w)
    y = tl.where(y > 0, y, 0.01 * y)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], y.to(tl.bfloat16),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


@ascdsl.jit
def scores_softmax(q_ptr, k_ptr, p_ptr, M, N, D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """softmax(Q @ K^T / 8) along each row (attention probabilities, K^T stored D x N), fp16 out."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    ds = tl.arange(0, D)
    q = tl.load(q_ptr + rows[:, None] * D + ds[None, :], mask=rows[:, None] < M, other=0.0)
    kt = tl.load(k_ptr + ds[:, None] * N + cols[None, :], mask=cols[None, :] < N, other=0.0)
    s = tl.dot(q, kt) * 0.125
    s = tl.where(cols[None, :] < N, s, float("-inf"))
    e = tl.exp(s - tl.max(s, 1)[:, None])
    p = e / tl.sum(e, 1)[:, None]
    tl.store(p_ptr + rows[:, None] * N + cols[None, :], p.to(tl.float16),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


@ascdsl.jit
def matmul_two_outputs(a_ptr, b_ptr, c_ptr, c16_ptr, M, N, K, BLOCK: tl.constexpr):
    """The product stored twice, as float32 and rounded to float16: the second store runs on the vector cores."""
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k0 in range(0, K, BLOCK):
        ks = k0 + tl.arange(0, BLOCK)
        x = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        w = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(x, w, acc)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=mask)
    tl.store(c16_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.float16), mask=mask)


@ascdsl.jit
def matmul_plus_equals(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_K: tl.constexpr):
    """The accumulation written ``acc += tl.dot(a, b)``, as many Triton kernels do."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        w = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc += tl.dot(x, w)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.float16),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


@ascdsl.jit
def matmul_reversed_k(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK: tl.constexpr):
    """The steps of K from the last block to the first: no two steps' blocks follow each other along K."""
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k0 in range(0, K, BLOCK):
        ks = K - BLOCK - k0 + tl.arange(0, BLOCK)
        x = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=rows[:, None] < M)
        w = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=cols[None, :] < N)
        acc = tl.dot(x, w, acc)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


@ascdsl.jit
def matmul_trans_b(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bn, stride_bk,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """C = A @ B^T with B given as N x K blocks (attention's ``q @ k^T``), transposed by ``tl.trans``."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak,
                    mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        w = tl.load(b_ptr + cols[:, None] * stride_bn + ks[None, :] * stride_bk,
                    mask=(cols[:, None] < N) & (ks[None, :] < K), other=0.0)
        acc = tl.dot(x, tl.trans(w), acc)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


@ascdsl.jit
def matmul_column_major_a(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK: tl.constexpr):
    """A column-major by literal strides (element (m, k) at ``m + k * M``), the whole of K in one product."""
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.arange(0, BLOCK)
    ks = tl.arange(0, BLOCK)
    x = tl.load(a_ptr + rows[:, None] + ks[None, :] * M, mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
    w = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], tl.dot(x, w), mask=(rows[:, None] < M) & (cols[None, :] < N))


@ascdsl.jit
def attention_scores(q_ptr, k_ptr, p_ptr, M, N, D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """softmax(Q @ K^T / 8) along each row, K stored N x D as attention keeps it: ``tl.dot(q, tl.trans(k))``."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    ds = tl.arange(0, D)
    q = tl.load(q_ptr + rows[:, None] * D + ds[None, :], mask=rows[:, None] < M, other=0.0)
    k = tl.load(k_ptr + cols[:, None] * D + ds[None, :], mask=cols[:, None] < N, other=0.0)
    s = tl.dot(q, tl.trans(k)) * 0.125
    s = tl.where(cols[None, :] < N, s, float("-inf"))
    e = tl.exp(s - tl.max(s, 1)[:, None])
    p = e / tl.sum(e, 1)[:, None]
    tl.store(p_ptr + rows[:, None] * N + cols[None, :], p.to(tl.float16),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


@ascdsl.jit
def matmul_int8(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """int8 A @ B accumulated exactly in int32 (``out_dtype``), stored as int32, on a 2-D grid."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak,
                    mask=(rows[:, None] < M) & (ks[None, :] < K), other=0)
        w = tl.load(b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn,
                    mask=(ks[:, None] < K) & (cols[None, :] < N), other=0)
        acc = tl.dot(x, w, acc, out_dtype=tl.int32)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


@ascdsl.jit
def matmul_fixed_n(a_ptr, b_ptr, c_ptr, M, N: tl.constexpr, K: tl.constexpr, BLOCK: tl.constexpr):
    """B's row stride a constexpr (a literal in tile IR); the whole of K in one product."""
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.arange(0, N)
    ks = tl.arange(0, K)
    x = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=rows[:, None] < M, other=0.0)
    w = tl.load(b_ptr + ks[:, None] * N + cols[None, :])
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], tl.dot(x, w), mask=rows[:, None] < M)


@ascdsl.jit
def int8_dequantised(a_ptr, b_ptr, c_ptr, M, N, K: tl.constexpr, BLOCK: tl.constexpr):
    """An int8 product scaled to float32 on the vector cores: a MIX kernel of an int32 product."""
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.arange(0, BLOCK)
    ks = tl.arange(0, K)
    x = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=rows[:, None] < M, other=0)
    w = tl.load(b_ptr + cols[:, None] * K + ks[None, :], mask=cols[:, None] < N, other=0)
    y = tl.dot(x, tl.trans(w)).to(tl.float32) * 0.5
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], y, mask=(rows[:, None] < M) & (cols[None, :] < N))


@ascdsl.jit
def matmul_trans_a(at_ptr, b_ptr, c_ptr, M, N, K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """C = A @ B with A given as its K x M transpose: ``tl.dot(tl.trans(xt), w)``, the whole of K in one product."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, K)
    xt = tl.load(at_ptr + ks[:, None] * M + rows[None, :], mask=rows[None, :] < M, other=0)
    w = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=cols[None, :] < N, other=0)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], tl.dot(tl.trans(xt), w),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


@ascdsl.jit
def matmul_k_end(a_ptr, b_ptr, c_ptr, M, N, K, K_END, BLOCK: tl.constexpr):
    """The loop over K runs to ``K_END``: where that is past ``K``, its last steps load blocks of no valid K."""
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k0 in range(0, K_END, BLOCK):
        ks = k0 + tl.arange(0, BLOCK)
        x = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K))
        w = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N))
        acc = tl.dot(x, w, acc)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))
