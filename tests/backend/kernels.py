"""DSL kernels for the backend tests (accepted and rejected ones)."""
import ascdsl
import ascdsl.language as tl


@ascdsl.jit
def gather_kernel(x_ptr, idx_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    idx = tl.load(idx_ptr + offs)
    tl.store(out_ptr + offs, tl.load(x_ptr + idx))


@ascdsl.jit
def strided_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + 2 * offs))


@ascdsl.jit
def odd_mask_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs % 2 == 0, other=0.0))


@ascdsl.jit
def unary_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = tl.sqrt(tl.abs(x)) - x / 3.0 + tl.maximum(x, 0.5) * 2.0 - (1.0 - x)
    tl.store(out_ptr + offs, y, mask=mask)


@ascdsl.jit
def grid3_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = (tl.program_id(2) * tl.num_programs(1) + tl.program_id(1)) * tl.num_programs(0) + tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2.0)


@ascdsl.jit
def copy2d_kernel(x_ptr, out_ptr, m, n, x_stride, out_stride, ROWS: tl.constexpr, COLS: tl.constexpr):
    """A masked [ROWS, COLS] block at runtime row strides; masked lanes of the copy read `other`."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, COLS)
    mask = (rows[:, None] < m) & (cols[None, :] < n)
    x = tl.load(x_ptr + rows[:, None] * x_stride + cols[None, :], mask=mask, other=-1.5)
    tl.store(out_ptr + rows[:, None] * out_stride + cols[None, :], x * 2.0,
             mask=(rows[:, None] < m) & (cols[None, :] < out_stride))


@ascdsl.jit
def reduce2d_kernel(x_ptr, rows_ptr, out_ptr, m, n, ROWS: tl.constexpr, COLS: tl.constexpr):
    """Row and column reductions of a masked tile, broadcast back along both axes."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, COLS)
    mask = (rows[:, None] < m) & (cols[None, :] < n)
    x = tl.load(x_ptr + rows[:, None] * n + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    total = tl.sum(x, axis=1)
    peak = tl.max(x, axis=1, keep_dims=True)
    down = tl.sum(x, axis=0)
    tl.store(rows_ptr + rows, total, mask=rows < m)
    out = (x - peak) * 0.5 + down[None, :] - total[:, None]
    tl.store(out_ptr + rows[:, None] * n + cols[None, :], out.to(out_ptr.dtype.element_ty), mask=mask)


@ascdsl.jit
def staged_loads_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """A tile loaded before a loop and read after it; two loads of one pointer in one stage."""
    offs = tl.arange(0, BLOCK)
    first = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    shifted = tl.load(x_ptr + BLOCK + offs, mask=offs < n, other=0.0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in range(0, 3):
        acc += tl.load(x_ptr + i * BLOCK + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, acc * first + shifted, mask=offs < n)
