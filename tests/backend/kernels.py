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
