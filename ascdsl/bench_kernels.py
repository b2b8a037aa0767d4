"""Triton-style kernels that ``ascdsl bench`` times on the interpreter against NumPy and, where
``triton`` is installed, on upstream Triton's interpreter: one source for both.

:func:`ascdsl.bench.triton_kernels` executes this file with ``triton`` and ``tl`` bound to ascdsl or
to upstream Triton; imported as a module, it binds ascdsl's.
"""
try:
    triton, tl  # bound by whoever executes this source for another triton
except NameError:
    import ascdsl as triton
    import ascdsl.language as tl


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr):
    """The fused softmax of Triton's tutorial: each program takes rows ``pid, pid + num_programs, ...``."""
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        output_ptrs = output_row_start_ptr + col_offsets
        tl.store(output_ptrs, softmax_output, mask=mask)


@triton.jit
def log_softmax_backward_kernel(dy_ptr, y_ptr, dx_ptr, n_rows, n_cols, stride,
                                ROWS: tl.constexpr, BLOCK: tl.constexpr):
    """``dx = dy - exp(y) * sum(dy, -1)`` over a ``[ROWS, BLOCK]`` tile of rows per program."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    offsets = rows[:, None] * stride + cols[None, :]
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    dy = tl.load(dy_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    total = tl.sum(dy, axis=1)
    tl.store(dx_ptr + offsets, dy - tl.exp(y) * total[:, None], mask=mask)


@triton.jit
def layer_norm_kernel(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    """Layer norm forward as in Triton's tutorial: one row per program, in chunks of ``BLOCK_SIZE``."""
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)


@triton.jit
def log_softmax_backward_row_kernel(dy_ptr, y_ptr, dx_ptr, n_cols, stride, BLOCK: tl.constexpr):
    """``dx = dy - exp(y) * sum(dy)`` of one row per program, as Triton users write it."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    dy = tl.load(dy_ptr + row * stride + cols, mask=mask, other=0.0)
    y = tl.load(y_ptr + row * stride + cols, mask=mask, other=0.0)
    total = tl.sum(dy, axis=0)
    tl.store(dx_ptr + row * stride + cols, dy - tl.exp(y) * total, mask=mask)


@triton.jit
def softmax_grad_split_kernel(y_ptr, dy_ptr, out_ptr, part_ptr, n_rows, n_cols, ROWS: tl.constexpr,
                              ROWS_A_TRIP: tl.constexpr, COLS: tl.constexpr, PARTS: tl.constexpr):
    """softmax's backward ``y * (dy - sum(dy * y, -1))`` with each row split over PARTS programs (for few long
    rows): program ``(group, part)`` takes columns ``part * COLS...`` of rows ``group * ROWS...``, stores their
    partial sums to ``part[part, row]``, waits at a grid barrier (the Ascend extension's ``sync_block_all``),
    then reads its rows' PARTS sums and reads its block again to finish it."""
    pid = tl.program_id(0)
    group = pid // PARTS
    part = pid % PARTS
    cols = part * COLS + tl.arange(0, COLS)
    for r0 in range(0, ROWS, ROWS_A_TRIP):
        rows = group * ROWS + r0 + tl.arange(0, ROWS_A_TRIP)
        mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
        y = tl.load(y_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0.0)
        dy = tl.load(dy_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0.0)
        tl.store(part_ptr + part * n_rows + rows, tl.sum(y * dy, axis=1), mask=rows < n_rows)
    tl.extra.cann.extension.sync_block_all("all_vector", 0)
    for r0 in range(0, ROWS, ROWS_A_TRIP):
        rows = group * ROWS + r0 + tl.arange(0, ROWS_A_TRIP)
        mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
        sums = tl.load(part_ptr + tl.arange(0, PARTS)[:, None] * n_rows + rows[None, :],
                       mask=(rows < n_rows)[None, :], other=0.0)
        y = tl.load(y_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0.0)
        dy = tl.load(dy_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0.0)
        tl.store(out_ptr + rows[:, None] * n_cols + cols[None, :], y * (dy - tl.sum(sums, axis=0)[:, None]), mask=mask)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    """Vector add of Triton's tutorial: one block per program."""
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    """GELU (tanh approximation) of one block per program."""
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    tl.store(out_ptr + offsets, 0.5 * x * (1.0 + (2.0 * tl.sigmoid(2.0 * inner) - 1.0)), mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                  GROUP_SIZE_M: tl.constexpr):
    """The matmul of Triton's tutorial: grouped program order, pointers advanced along K, a float32 accumulator
    (masked at every edge, so no size need be a multiple of a block)."""
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_m = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_n = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k * BLOCK_SIZE_K), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < K - k * BLOCK_SIZE_K) & (offs_n[None, :] < N), other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator.to(c_ptr.dtype.element_ty)
    c_ptrs = c_ptr + stride_cm * offs_m[:, None] + stride_cn * offs_n[None, :]
    tl.store(c_ptrs, c, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def attention_fwd(q_ptr, k_ptr, v_ptr, o_ptr, sm_scale, N_CTX, D: tl.constexpr, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    """Attention forward as users write it (Triton's fused-attention tutorial, simplified): programs over (query
    block, batch * head), a loop over key/value blocks with `q @ k^T`, an online softmax (running max and sum)
    and `p @ v` accumulated, an optional causal mask. Two products in one loop: a MIX kernel whose cube and
    vector cores take turns at each step."""
    start_m = tl.program_id(0)
    base = tl.program_id(1) * N_CTX * D
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    q = tl.load(q_ptr + base + offs_m[:, None] * D + offs_d[None, :], mask=offs_m[:, None] < N_CTX, other=0.0)
    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, D), tl.float32)
    hi = N_CTX
    if CAUSAL:
        hi = tl.minimum((start_m + 1) * BLOCK_M, N_CTX)
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(k_ptr + base + cols[:, None] * D + offs_d[None, :], mask=cols[:, None] < N_CTX, other=0.0)
        qk = tl.dot(q, tl.trans(k)) * sm_scale
        keep = cols[None, :] < N_CTX
        if CAUSAL:
            keep = keep & (offs_m[:, None] >= cols[None, :])
        qk = tl.where(keep, qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_ij[:, None])
        alpha = tl.exp(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_ptr + base + cols[:, None] * D + offs_d[None, :], mask=cols[:, None] < N_CTX, other=0.0)
        acc += tl.dot(p.to(v_ptr.dtype.element_ty), v)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * D + offs_d[None, :], acc.to(o_ptr.dtype.element_ty),
             mask=offs_m[:, None] < N_CTX)
