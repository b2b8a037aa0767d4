"""DSL kernels for the memory, debugging and random-number tests of the Ascend C backend."""
import ascdsl
import ascdsl.language as tl


@ascdsl.jit
def atomic_kernel(x_ptr, sum_ptr, max_ptr, min_ptr, n, BLOCK: tl.constexpr):
    """Every program combines its block of ``x`` into the same BLOCK outputs."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    lanes = tl.arange(0, BLOCK)
    tl.atomic_add(sum_ptr + lanes, x)
    tl.atomic_max(max_ptr + lanes, x, mask=lanes < n - pid * BLOCK)
    tl.atomic_min(min_ptr + lanes, x, mask=lanes < n - pid * BLOCK)


@ascdsl.jit
def atomic_rows_kernel(x_ptr, out_ptr, m, n, stride, ROWS: tl.constexpr, COLS: tl.constexpr):
    """Column sums of an ``m x n`` matrix: each program adds its rows' block into ``out``."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, COLS)
    mask = (rows[:, None] < m) & (cols[None, :] < n)
    x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=mask, other=0.0)
    tl.atomic_add(out_ptr + cols, tl.sum(x, axis=0), mask=cols < n)


@ascdsl.jit
def atomic_then_store_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr, SWAP: tl.constexpr):
    """Two programs each accumulate their block of ``out`` atomically, then store plainly over their own block
    (``SWAP`` false: program order decides) or over the other program's (``SWAP``: a race between cores)."""
    pid = tl.program_id(0)
    lanes = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + pid * BLOCK + lanes)
    tl.atomic_add(out_ptr + pid * BLOCK + lanes, x)
    if SWAP:
        row = 1 - pid
    else:
        row = pid
    tl.store(out_ptr + row * BLOCK + lanes, x * 3.0)


@ascdsl.jit
def atomic_old_kernel(x_ptr, old_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    old = tl.atomic_add(x_ptr + offs, 1.0)
    tl.store(old_ptr + offs, old)


@ascdsl.jit
def atomic_xchg_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.atomic_xchg(x_ptr + offs, 1.0)


@ascdsl.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    a = tl.load(a_ptr + i[:, None] * N + i[None, :])
    b = tl.load(b_ptr + i[:, None] * N + i[None, :])
    tl.store(c_ptr + i[:, None] * N + i[None, :], tl.dot(a, b))


@ascdsl.jit
def atomic_scalar_kernel(x_ptr, total_ptr, rows_ptr, n, BLOCK: tl.constexpr):
    """The sum of ``x`` into ``total[0]``, and each program's sum into ``rows[pid % 4]``."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    s = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0)
    tl.atomic_add(total_ptr, s)
    tl.atomic_max(rows_ptr + pid % 4, s)


@ascdsl.jit
def atomic_int64_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.atomic_add(x_ptr + offs, 1)


@ascdsl.jit
def print_kernel(x_ptr, m_ptr, i_ptr, n, BLOCK: tl.constexpr, ROWS: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=-1.0)
    tl.device_print("x", x)
    tl.device_print("sum, n, pid:", tl.sum(x, axis=0), n, pid)
    rows = tl.arange(0, ROWS)
    m = tl.load(m_ptr + rows[:, None] * BLOCK + tl.arange(0, BLOCK)[None, :])
    tl.device_print("m%", m * 2.0)
    tl.device_print("", tl.load(i_ptr + tl.arange(0, BLOCK)))


@ascdsl.jit
def strided_load_kernel(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr, STEP: tl.constexpr):
    """``out[i] = x[i * stride] + x[i * STEP + 1]``: a runtime and a constant innermost stride."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x_ptr + offs * stride, mask=mask, other=0.5)
    b = tl.load(x_ptr + offs * STEP + 1, mask=mask, other=0.0)
    tl.store(out_ptr + offs, a + b, mask=mask)


@ascdsl.jit
def column_load_kernel(x_ptr, out_ptr, m, n, stride, ROWS: tl.constexpr, COLS: tl.constexpr):
    """The transpose of an ``m x n`` block: rows of ``out`` are columns of ``x`` (inner stride ``stride``)."""
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    c = tl.arange(0, COLS)
    t = tl.load(x_ptr + r[:, None] + c[None, :] * stride, mask=(r[:, None] < n) & (c[None, :] < m), other=-1.0)
    tl.store(out_ptr + r[:, None] * m + c[None, :], t, mask=(r[:, None] < n) & (c[None, :] < m))


@ascdsl.jit
def umulhi_kernel(a_ptr, b_ptr, out_ptr, s, BLOCK: tl.constexpr):
    """``umulhi`` of two tiles, of a tile and Philox's round constant, of a tile and a runtime scalar, and of
    two constants (plus scalar shifts of the runtime scalar)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(out_ptr + offs, tl.umulhi(a, b))
    tl.store(out_ptr + 2 * BLOCK * tl.num_programs(0) + offs, tl.umulhi(-766435501, a))  # 0xD2511F53
    tl.store(out_ptr + BLOCK * tl.num_programs(0) + offs, tl.umulhi(a, s))
    hi = tl.umulhi(tl.full((BLOCK,), -7, tl.int32), 12345) + ((s >> 3) ^ (s << 2))  # constants; scalar shifts
    tl.store(out_ptr + 3 * BLOCK * tl.num_programs(0) + offs, hi)


@ascdsl.jit
def rand_kernel(bits_ptr, u_ptr, seed, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(bits_ptr + offs, tl.randint(seed, offs), mask=offs < n)
    tl.store(u_ptr + offs, tl.rand(seed, offs), mask=offs < n)


@ascdsl.jit
def strided_store_kernel(x_ptr, out_ptr, t_ptr, acc_ptr, n, stride, M: tl.constexpr, N: tl.constexpr):
    """``out[i * stride] = x[i] + 1``; ``x[:M * N]`` as ``M x N`` stored transposed by every program; atomic
    adds at stride 2."""
    offs = tl.program_id(0) * N + tl.arange(0, N)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs * stride, x + 1.0, mask=offs < n)
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    block = tl.load(x_ptr + rows * N + cols)
    tl.store(t_ptr + tl.program_id(0) * M * N + cols * M + rows, block)
    tl.atomic_add(acc_ptr + tl.arange(0, N) * 2, x)


@ascdsl.jit
def gather_kernel(x_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """``out[i] = x[idx[i]] + x[n - 1 - idx[i]]`` (indices loaded, and computed from loaded ones)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask=mask, other=0)
    a = tl.load(x_ptr + idx, mask=mask, other=-1.0)
    b = tl.load(x_ptr + (n - 1 - idx))
    tl.store(out_ptr + offs, a + b, mask=mask)


@ascdsl.jit
def scatter_kernel(x_ptr, idx_ptr, bin_ptr, out_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    """``out[idx[i]] = 2 * x[i]``, and a histogram of ``bin`` weighted by ``x`` (atomic adds)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask=mask, other=0)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + idx, x * 2.0, mask=mask)
    tl.atomic_add(hist_ptr + tl.load(bin_ptr + offs, mask=mask, other=0), x, mask=mask)


@ascdsl.jit
def column_kernel(x_ptr, out_ptr, m, stride, M: tl.constexpr):
    """An ``[M, 1]`` column of ``x`` (row stride ``stride``) stored as a column at row stride 2."""
    rows = tl.program_id(0) * M + tl.arange(0, M)[:, None]
    col = tl.load(x_ptr + rows * stride + 1, mask=rows < m, other=0.0)
    tl.store(out_ptr + rows * 2, col * 3.0, mask=rows < m)


@ascdsl.jit
def int64_add_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)


@ascdsl.jit
def random_kernel(bits_ptr, uniform_ptr, normal_ptr, seed, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(bits_ptr + offs, tl.randint(seed, offs), mask=mask)
    tl.store(uniform_ptr + offs, tl.rand(seed, offs), mask=mask)
    tl.store(normal_ptr + offs, tl.randn(seed, offs), mask=mask)


@ascdsl.jit
def scalar_random_kernel(bits_ptr, uniform_ptr, seed, n, PER_PROGRAM: tl.constexpr):
    """One number per loop iteration: Philox on scalars (its mixing constants wrap int32)."""
    for i in range(PER_PROGRAM):
        off = tl.program_id(0) * PER_PROGRAM + i
        if off < n:
            tl.store(bits_ptr + off, tl.randint(seed, 10 + off))
            tl.store(uniform_ptr + off, tl.rand(5, off, 10))


@ascdsl.jit
def random4x_kernel(four_ptr, seed, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    r0, r1, r2, r3 = tl.randint4x(seed, offs, n_rounds=7)
    tl.store(four_ptr + offs * 4, r0, mask=mask)
    tl.store(four_ptr + offs * 4 + 1, r1, mask=mask)
    tl.store(four_ptr + offs * 4 + 2, r2, mask=mask)
    tl.store(four_ptr + offs * 4 + 3, r3, mask=mask)


@ascdsl.jit
def row_gather_kernel(x_ptr, idx_ptr, out_ptr, stride, n_rows, n_cols, M: tl.constexpr, N: tl.constexpr):
    """Rows picked by loaded indices (an embedding lookup): ``x + idx[:, None] * stride + cols``."""
    m = tl.program_id(0) * M + tl.arange(0, M)
    idx = tl.load(idx_ptr + m, mask=m < n_rows, other=0)
    cols = tl.arange(0, N)
    inside = (m[:, None] < n_rows) & (cols[None, :] < n_cols)
    rows = tl.load(x_ptr + idx[:, None] * stride + cols[None, :], mask=inside, other=-1.0)
    tl.store(out_ptr + m[:, None] * n_cols + cols[None, :], rows * 2, mask=inside)


@ascdsl.jit
def wrapped_kernel(x_ptr, out_ptr, n, period, BLOCK: tl.constexpr):
    """Offsets through ``%``: a load that wraps around a period, a store that permutes."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs % period)
    tl.store(out_ptr + (offs * 7) % n, v, mask=offs < n)


@ascdsl.jit
def repeated_rows_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    """An address that does not change along the columns: each row's one element, N times."""
    rows = tl.arange(0, M)
    v = tl.load(x_ptr + rows[:, None] * 2 + tl.zeros((M, N), tl.int32))
    tl.store(out_ptr + rows[:, None] * N + tl.arange(0, N)[None, :], v)


@ascdsl.jit
def column_per_program_kernel(x_ptr, out_ptr, C, D, BLOCK_C: tl.constexpr, BLOCK_D: tl.constexpr):
    """One column of a [C, D] matrix per program (BLOCK_D = 1), the column masked by ``offset_d < D``."""
    offset_d = tl.program_id(0) * BLOCK_D + tl.arange(0, BLOCK_D)
    offset_c = tl.arange(0, BLOCK_C)
    inside = (offset_c[:, None] < C) & (offset_d[None, :] < D)
    x = tl.load(x_ptr + offset_c[:, None] * D + offset_d[None, :], mask=inside, other=-1.0)
    tl.store(out_ptr + offset_c[:, None] * D + offset_d[None, :], x * 2, mask=inside)


@ascdsl.jit
def every_program_stores_all_kernel(x_ptr, out_ptr, N: tl.constexpr, SHIFT: tl.constexpr):
    """Each program computes and stores the whole result (as Triton tests of a histogram do with two
    programs): the programs' stores overlap, with equal values where SHIFT is 0."""
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 3 + tl.program_id(0) * SHIFT)
