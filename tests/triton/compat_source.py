"""Typical Triton test kernels, written once for either ``triton`` module.

Not imported directly: :func:`tests.triton.compat_kernels.build` executes this file with the globals
``triton``, ``tl`` and ``libdevice`` bound to upstream Triton's modules or to ascdsl's, so both
compile the same source (upstream Triton's interpreter resolves only globals, not closure cells).
"""
# ruff: noqa: F821  (triton, tl and libdevice are provided by build())

SCALE = 2  # a module constant the kernels read


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, cache_modifier=".ca", eviction_policy="evict_last", volatile=False)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask, cache_modifier=".wb", eviction_policy="evict_first")


@triton.jit
def scaled(x):
    return x * SCALE


@triton.jit
def closure_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, scaled(tl.load(x_ptr + offs)) + later(1.0))


@triton.jit
def later(x):  # defined after the kernel that calls it: found when the kernel compiles
    return x + 1


@triton.jit
def assert_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.device_assert(x >= 0, "x must be non-negative")
    tl.store(x_ptr + offs, tl.sqrt(x), mask=offs < n)


# ------------------------------------------------------------------ reductions and scans
@triton.jit
def max_fn(a, b):
    return tl.maximum(a, b)


@triton.jit
def add_fn(a, b):
    return a + b


@triton.jit
def argmax_fn(value1, index1, value2, index2):
    pick = (value1 > value2) | ((value1 == value2) & (index1 < index2))
    return tl.where(pick, value1, value2), tl.where(pick, index1, index2)


@triton.jit
def reduce_kernel(x_ptr, max_ptr, sum_ptr, arg_ptr, xor_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    tl.store(max_ptr + tl.arange(0, M), tl.reduce(x, 1, max_fn))
    tl.store(sum_ptr + tl.arange(0, N), tl.reduce(x, 0, add_fn))
    index = tl.broadcast_to(cols, (M, N))
    _, arg = tl.reduce((x, index), 1, argmax_fn)
    tl.store(arg_ptr + tl.arange(0, M), arg)
    bits = x.to(tl.int32, bitcast=True)
    tl.store(xor_ptr + tl.arange(0, M), tl.xor_sum(bits, 1))


@triton.jit
def scan_kernel(x_ptr, cumsum_ptr, cumprod_ptr, scan_ptr, rev_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(cumsum_ptr + offs, tl.cumsum(x, 0))
    tl.store(cumprod_ptr + offs, tl.cumprod(x, axis=0))
    tl.store(scan_ptr + offs, tl.associative_scan(x, 0, max_fn))
    tl.store(rev_ptr + offs, tl.cumsum(x, 0, reverse=True))


@triton.jit
def minmax_kernel(x_ptr, out_ptr, idx_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs, mask=offs < N - 3, other=float("-inf"))
    value, index = tl.max(x, 0, return_indices=True)
    tl.store(out_ptr, value)
    tl.store(idx_ptr, index)
    tl.store(idx_ptr + 1, tl.argmin(x, 0))


# ------------------------------------------------------------------ shapes
@triton.jit
def shape_kernel(x_ptr, t_ptr, r_ptr, p_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    tl.store(t_ptr + cols * M + rows, tl.trans(tl.trans(x)))  # x^T^T = x, stored transposed
    r = tl.reshape(x, (N, M))
    tl.store(r_ptr + tl.arange(0, N)[:, None] * M + tl.arange(0, M)[None, :], r)
    flat = tl.ravel(tl.permute(x, (1, 0)))
    tl.store(p_ptr + tl.arange(0, M * N), flat)


@triton.jit
def join_kernel(a_ptr, b_ptr, j_ptr, s_ptr, i_ptr, c_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    j = tl.join(a, b)  # (N, 2)
    tl.store(j_ptr + offs[:, None] * 2 + tl.arange(0, 2)[None, :], j)
    lo, hi = tl.split(j)
    tl.store(s_ptr + offs, hi - lo)
    tl.store(i_ptr + tl.arange(0, 2 * N), tl.interleave(a, b))
    tl.store(c_ptr + tl.arange(0, 2 * N), tl.cat(a, b, can_reorder=True))


@triton.jit
def like_kernel(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    z = tl.zeros_like(x) + 3
    e = tl.expand_dims(x, 0) + tl.zeros((2, N), x.dtype)  # (2, N)
    tl.store(out_ptr + offs, z + tl.sum(e, axis=0))


# ------------------------------------------------------------------ math
@triton.jit
def math_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    results = (tl.floor(x), tl.ceil(x), tl.exp2(x), tl.log2(y), tl.fdiv(x, y), tl.div_rn(x, y),
               tl.sqrt_rn(y), tl.erf(x), tl.sin(x), tl.cos(x), tl.clamp(x, -1.0, 1.0), tl.fma(x, y, x),
               tl.math.exp(x), tl.math.log(y), tl.math.rsqrt(y), tl.abs(x))
    for i in tl.static_range(len(results)):
        tl.store(out_ptr + i * N + offs, results[i])


@triton.jit
def libdevice_kernel(x_ptr, out_ptr, flags_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    results = (libdevice.tanh(x), libdevice.round(x), libdevice.trunc(x), libdevice.log1p(tl.abs(x)), libdevice.pow(tl.abs(x), 1.5),
               libdevice.atan(x), libdevice.rint(x))
    for i in tl.static_range(len(results)):
        tl.store(out_ptr + i * N + offs, results[i])
    tl.store(flags_ptr + offs, libdevice.isnan(x / x) | libdevice.isinf(1.0 / x))


@triton.jit
def int_math_kernel(a_ptr, b_ptr, hi_ptr, shift_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(hi_ptr + offs, tl.umulhi(a, b))
    tl.store(shift_ptr + offs, (a >> 3) ^ (b << 2))


# ------------------------------------------------------------------ random numbers
@triton.jit
def random_kernel(bits_ptr, uniform_ptr, normal_ptr, four_ptr, seed, N: tl.constexpr):
    offs = tl.program_id(0) * N + tl.arange(0, N)
    tl.store(bits_ptr + offs, tl.randint(seed, offs))
    tl.store(uniform_ptr + offs, tl.rand(seed, offs))
    tl.store(normal_ptr + offs, tl.randn(seed, offs))
    r0, r1, r2, r3 = tl.randint4x(seed, offs)
    tl.store(four_ptr + offs * 4, r0)
    tl.store(four_ptr + offs * 4 + 1, r1)
    tl.store(four_ptr + offs * 4 + 2, r2)
    tl.store(four_ptr + offs * 4 + 3, r3)


# ------------------------------------------------------------------ hints, loops, pointers
@triton.jit
def hints_kernel(x_ptr, out_ptr, n, step, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK % 16 == 0, "BLOCK must be a multiple of 16")
    offs = tl.multiple_of(tl.arange(0, BLOCK), 16)
    offs = tl.max_contiguous(offs, BLOCK)
    tl.assume(n > 0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in tl.range(0, n, step, num_stages=3, loop_unroll_factor=2, disallow_acc_multi_buffer=True,
                          flatten=False, warp_specialize=False):
        acc += tl.load(x_ptr + start + offs, mask=start + offs < n, other=0.0)
    tl.debug_barrier()
    tl.store(out_ptr + offs, acc)


@triton.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)[:, None]
    rn = tl.arange(0, N)[None, :]
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn)
    acc = tl.zeros((M, N), tl.float32)
    acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm * N + rn, acc)


@triton.jit
def descriptor_kernel(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    src = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    dst = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    block = src.load([pid_m * BM, pid_n * BN])
    dst.store([pid_m * BM, pid_n * BN], block * 2)


@triton.jit
def optional_kernel(x_ptr, bias_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if bias_ptr is not None:
        x += tl.load(bias_ptr + offs)
    tl.store(out_ptr + offs, x)


@triton.jit
def mask_kernel(x_ptr, flags_ptr, small_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(flags_ptr + offs, x > 0)
    tl.store(small_ptr + offs, tl.load(small_ptr + offs) + 1)


@triton.jit
def big_int_kernel(out_ptr, big):
    tl.store(out_ptr, big + 1)


@triton.jit
def strided_kernel(x_ptr, out_ptr, stride_m, stride_n, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * stride_m + cols * stride_n)
    tl.store(out_ptr + rows * N + cols, x + 1)
