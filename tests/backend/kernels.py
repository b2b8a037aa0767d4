"""DSL kernels for the backend tests (accepted and rejected ones)."""
import ascdsl
import ascdsl.language as tl


@ascdsl.jit
def tile_other_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < 4, other=y))  # `other` a tile


@ascdsl.jit
def reversed_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + (BLOCK - 1 - offs)))  # a negative innermost stride


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


@ascdsl.jit
def where_kernel(x_ptr, y_ptr, relu_ptr, low_ptr, clamp_ptr, sign_ptr, n, lo, hi, BLOCK: tl.constexpr):
    """`tl.where` on comparisons: tile-scalar (either side), tile-tile, nested (a clamp), scalar branches."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    tl.store(relu_ptr + offs, tl.where(x > 0, x, 0.0), mask=mask)
    tl.store(low_ptr + offs, tl.where(x < y, x, -y), mask=mask)
    tl.store(clamp_ptr + offs, tl.where(x < lo, lo, tl.where(x >= hi, hi, x)), mask=mask)
    tl.store(sign_ptr + offs, tl.where(0.5 <= x, 1.0, tl.where(x != y, -1.0, 0.0)), mask=mask)


@ascdsl.jit
def sigmoid_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.sigmoid(tl.load(x_ptr + offs, mask=mask, other=0.0)), mask=mask)


@ascdsl.jit
def where2d_kernel(x_ptr, y_ptr, out_ptr, m, n, ROWS: tl.constexpr, COLS: tl.constexpr):
    """`tl.where` on a masked 2-D tile (compared over its row padding too)."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, COLS)
    mask = (rows[:, None] < m) & (cols[None, :] < n)
    x = tl.load(x_ptr + rows[:, None] * n + cols[None, :], mask=mask, other=0.0)
    y = tl.load(y_ptr + rows[:, None] * n + cols[None, :], mask=mask, other=0.0)
    tl.store(out_ptr + rows[:, None] * n + cols[None, :], tl.where(x >= y, x, y * 0.5), mask=mask)


@ascdsl.jit
def stored_compare_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, (tl.load(x_ptr + offs) > 0).to(tl.float32))


@ascdsl.jit
def int_where_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.where(x > 0, x, 0))


@ascdsl.jit
def where_loop_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """A running maximum through `tl.where` on a loop-carried tile; 0.1 is no float16/bfloat16 value,
    so the constants must be rounded to the tile's dtype as the interpreter does."""
    offs = tl.arange(0, BLOCK)
    acc = tl.full((BLOCK,), -1.0, tl.float32)
    for i in range(0, 3):
        x = tl.load(x_ptr + i * n + offs, mask=offs < n, other=0.0)
        acc = tl.where(acc > x.to(tl.float32), acc, tl.where(x > 0.1, x * 0.1, 0.1).to(tl.float32))
    tl.store(out_ptr + offs, acc, mask=offs < n)


@ascdsl.jit
def positive_lanes_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, x, mask=(offs < n) & (x > 0))  # a per-lane mask: its lanes are copied alone
