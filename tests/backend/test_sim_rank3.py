"""Rank-3 tiles on the simulator (hazard checks on) against the interpreter: 3-D block loads and stores
(masked in every axis, planes strided or following each other), elementwise math and broadcasts among
[A, B, C], [A, 1, C], [1, B, C], [A, B, 1], [A, 1, 1], [1, B, 1], [1, 1, C], one element and scalars,
reductions along every axis (keep_dims or not) and to a scalar, reshapes to and from 2-D, `expand_dims`
of 2-D tiles, permutes, `tl.cat` and loops carrying rank-3 tiles, 8- and 16-bit extremes along leading axes: bit-exact
where the ops are exact (rank 4: test_sim_rankn.py)."""
import ml_dtypes
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from ascdsl.planner import arg_types
from tests.backend.helpers import CANN, RNG, assert_type_checks, bits, both, data, each
from tests.backend.test_sim_reductions import combine_max
from tests.backend.sweep import ALL_SWEEP, FLOAT_SWEEP


@ascdsl.jit
def _offsets(s0, s1, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    a = tl.arange(0, A)[:, None, None]
    b = tl.arange(0, B)[None, :, None]
    c = tl.arange(0, C)[None, None, :]
    return a * s0 + b * s1 + c


@ascdsl.jit
def copy3_kernel(x_ptr, out_ptr, na, nb, nc, xs0, xs1, os0, os1,
                 A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    a = tl.arange(0, A)[:, None, None]
    b = tl.arange(0, B)[None, :, None]
    c = tl.arange(0, C)[None, None, :]
    mask = (a < na) & (b < nb) & (c < nc)
    x = tl.load(x_ptr + a * xs0 + b * xs1 + c, mask=mask, other=-1)
    tl.store(out_ptr + a * os0 + b * os1 + c, x * 3 + 1)
    tl.store(out_ptr + A * os0 + _offsets(os0, os1, A, B, C), x, mask=mask)


@pytest.mark.parametrize("dtype", ALL_SWEEP)
def test_masked_loads_and_stores_bit_exact(dtype):
    def check(shape, valid, strided):
        a, b, c = shape
        src = data((a + 1, b + 2, c + 3) if strided else shape, dtype)
        xs0, xs1 = src.shape[1] * src.shape[2], src.shape[2]
        os1 = c + 5 if strided else c
        os0 = (b + 1) * os1 if strided else b * os1
        out = np.full(2 * a * os0, 7, dtype.np)
        want, got = both(copy3_kernel[(1,)], src, out, *valid, xs0, xs1, os0, os1, A=a, B=b, C=c)
        np.testing.assert_array_equal(bits(got[1]), bits(want[1]), err_msg=f"{shape} {valid} {strided}")
        na, nb, nc = valid
        expect = np.full(shape, -1, dtype.np)
        expect[:na, :nb, :nc] = src[:na, :nb, :nc]
        first = want[1][:a * os0].reshape(a, os0)[:, :b * os1].reshape(a, b, os1)[:, :, :c]
        assert (first == (expect * 3 + 1).astype(dtype.np)).all()
    cases = [((2, 3, 8), (2, 3, 8), False), ((2, 3, 8), (2, 3, 5), True), ((4, 5, 12), (3, 2, 12), True),
             ((3, 4, 40), (2, 4, 33), False), ((2, 2, 8), (0, 2, 8), True)]
    each(check, cases)


@ascdsl.jit
def broadcast3_kernel(x_ptr, ac_ptr, bc_ptr, ab_ptr, out_ptr, k, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    ia, ib, ic = tl.arange(0, A), tl.arange(0, B), tl.arange(0, C)
    offs = _offsets(B * C, C, A, B, C)
    x = tl.load(x_ptr + offs)
    ac = tl.load(ac_ptr + ia[:, None] * C + ic[None, :])[:, None, :]  # (A, 1, C)
    bc = tl.load(bc_ptr + ib[:, None] * C + ic[None, :])  # (B, C), broadcast as (1, B, C)
    ab = tl.load(ab_ptr + ia[:, None] * B + ib[None, :])[:, :, None]  # (A, B, 1)
    y = (x + ac) * bc - ab
    tl.store(out_ptr + offs, tl.where(x > ab, y, k - y))
    tl.store(out_ptr + A * B * C + offs, tl.broadcast_to(bc[None, :, :], (A, B, C)))
    tl.store(out_ptr + 2 * A * B * C + offs, tl.maximum(tl.broadcast_to(ac, (A, B, C)), ab))


@ascdsl.jit
def vectors3_kernel(a_ptr, b_ptr, c_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    offs = _offsets(B * C, C, A, B, C)
    va = tl.load(a_ptr + tl.arange(0, A))[:, None, None]
    vb = tl.load(b_ptr + tl.arange(0, B))[None, :, None]
    vc = tl.load(c_ptr + tl.arange(0, C))  # (C,), broadcast as (1, 1, C)
    one = tl.load(a_ptr + tl.arange(0, 1))[:, None, None]  # (1, 1, 1)
    tl.store(out_ptr + offs, tl.minimum(va, vb) * vc + one)
    tl.store(out_ptr + A * B * C + offs, tl.broadcast_to(va + vb, (A, B, C)) - one)
    tl.store(out_ptr + 2 * A * B * C + offs, tl.broadcast_to(one, (A, B, C)) + 1)


@pytest.mark.parametrize("dtype", ALL_SWEEP)
def test_broadcasts_among_rank3_shapes_bit_exact(dtype):
    def check(a, b, c):
        x = data((a, b, c), dtype)
        args = [x, data((a, c), dtype), data((b, c), dtype), data((a, b), dtype), np.zeros(3 * a * b * c, dtype.np)]
        want, got = both(broadcast3_kernel[(1,)], *args, 2, A=a, B=b, C=c)
        np.testing.assert_array_equal(bits(got[4]), bits(want[4]), err_msg=f"{a}x{b}x{c}")
        vectors = [data(a, dtype), data(b, dtype), data(c, dtype), np.zeros(3 * a * b * c, dtype.np)]
        want, got = both(vectors3_kernel[(1,)], *vectors, A=a, B=b, C=c)
        np.testing.assert_array_equal(bits(got[3]), bits(want[3]), err_msg=f"{a}x{b}x{c}")
        assert (want[3][2 * a * b * c:] == (vectors[0][0] + 1).astype(dtype.np)).all()
    cases = [(2, 3, 8), (4, 2, 16), (3, 5, 12), (2, 8, 64)]
    each(check, cases)


@ascdsl.jit
def reduce3_kernel(x_ptr, out_ptr, AXIS: tl.constexpr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    offs = _offsets(B * C, C, A, B, C)
    x = tl.load(x_ptr + offs)
    if AXIS == 0:
        M, N = B, C
    elif AXIS == 1:
        M, N = A, C
    else:
        M, N = A, B
    o2 = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(out_ptr + o2, tl.sum(x, axis=AXIS))
    tl.store(out_ptr + M * N + o2, tl.max(x, axis=AXIS))
    tl.store(out_ptr + 2 * M * N + o2, tl.min(x, axis=AXIS - 3))
    y = x - tl.max(x, axis=AXIS, keep_dims=True) + tl.sum(x, AXIS, keep_dims=True)  # broadcast back
    tl.store(out_ptr + 3 * M * N + offs, y)


@ascdsl.jit
def last_axis_kernel(x_ptr, out_ptr, idx_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    offs = _offsets(B * C, C, A, B, C)
    x = tl.load(x_ptr + offs)
    ab = tl.arange(0, A)[:, None] * B + tl.arange(0, B)[None, :]
    tl.store(idx_ptr + ab, tl.argmax(x, axis=2))
    tl.store(idx_ptr + A * B, tl.argmin(x))
    tl.store(out_ptr + offs, x * tl.max(x, axis=2)[:, :, None])  # a 2-D result expanded again
    tl.store(out_ptr + A * B * C, tl.max(x))


@pytest.mark.parametrize("dtype", ALL_SWEEP)
def test_reductions_along_every_axis(dtype):
    def check(a, b, c, axis):
        x = data((a, b, c), dtype)
        size = {0: b * c, 1: a * c, 2: a * b}[axis]
        want, got = both(reduce3_kernel[(1,)], x, np.zeros(3 * size + a * b * c, dtype.np), AXIS=axis,
                          A=a, B=b, C=c)
        tol = dict(rtol=dtype.rtol, atol=dtype.atol * (a + b + c)) if dtype.is_float else dict(rtol=0, atol=0)
        np.testing.assert_allclose(got[1].astype(np.float64), want[1].astype(np.float64), **tol,
                                   err_msg=f"{a}x{b}x{c} axis {axis}")
        assert np.array_equal(got[1][size:3 * size], want[1][size:3 * size])  # max and min are exact
        assert np.array_equal(want[1][size:2 * size], x.max(axis=axis).ravel())
    cases = [(2, 3, 8, 0), (2, 3, 8, 1), (2, 3, 8, 2), (3, 5, 12, 1), (4, 2, 64, 0), (3, 5, 12, 2)]
    each(check, cases)


@pytest.mark.parametrize("dtype", FLOAT_SWEEP)
def test_last_axis_reductions_and_scalars_bit_exact(dtype):
    def check(a, b, c):
        x = data((a, b, c), dtype)
        want, got = both(last_axis_kernel[(1,)], x, np.zeros(a * b * c + 1, dtype.np), np.zeros(a * b + 1, np.int32),
                          A=a, B=b, C=c)
        np.testing.assert_array_equal(bits(got[1]), bits(want[1]), err_msg=f"{a}x{b}x{c}")
        np.testing.assert_array_equal(got[2], want[2])
        assert (want[2][:-1] == x.argmax(axis=2).ravel()).all() and want[2][-1] == x.argmin()
    cases = [(2, 3, 8), (3, 5, 12), (2, 8, 40)]
    each(check, cases)


@ascdsl.jit
def shapes3_kernel(x_ptr, y_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    offs = _offsets(B * C, C, A, B, C)
    x = tl.load(x_ptr + offs)
    rows = tl.arange(0, A * B)[:, None] * C + tl.arange(0, C)[None, :]
    y = tl.reshape(tl.load(y_ptr + tl.arange(0, A * B * C)), (A, B, C))  # 1-D -> padded rows
    tl.store(out_ptr + A * B * C + offs, y * x)
    t = tl.permute(x, (2, 0, 1))  # (C, A, B)
    tl.store(out_ptr + 2 * A * B * C + _offsets(A * B, B, C, A, B), t)
    u = tl.trans(x, (1, 0, 2))  # (B, A, C)
    tl.store(out_ptr + 3 * A * B * C + _offsets(A * C, C, B, A, C), u)
    two = tl.load(y_ptr + tl.arange(0, B)[:, None] * C + tl.arange(0, C)[None, :])
    z = tl.reshape(x, (A * B, C)) * 2 - tl.reshape(tl.expand_dims(two, 0) + x, (A * B, C))  # free reshapes
    tl.store(out_ptr + rows, z)


@pytest.mark.parametrize("dtype", ALL_SWEEP)
def test_reshapes_and_permutes_bit_exact(dtype):
    def check(a, b, c):
        x, y = data((a, b, c), dtype), data(a * b * c, dtype)
        want, got = both(shapes3_kernel[(1,)], x, y, np.zeros(4 * a * b * c, dtype.np), A=a, B=b, C=c)
        np.testing.assert_array_equal(bits(got[2]), bits(want[2]), err_msg=f"{a}x{b}x{c}")
        n = a * b * c
        assert (want[2][2 * n:3 * n] == x.transpose(2, 0, 1).ravel()).all()
        assert (want[2][3 * n:4 * n] == x.transpose(1, 0, 2).ravel()).all()
    cases = [(2, 3, 8), (3, 4, 5), (2, 2, 16)]
    each(check, cases)


@ascdsl.jit
def loop3_kernel(x_ptr, out_ptr, n, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    """Sums ``n`` consecutive [A, B, C] blocks; the accumulator is a rank-3 tile carried by the loop."""
    offs = _offsets(B * C, C, A, B, C)
    acc = tl.zeros((A, B, C), tl.float32)
    top = tl.full((A, B, 1), float("-inf"), tl.float32)
    for i in range(0, n):
        x = tl.load(x_ptr + i * A * B * C + offs).to(tl.float32)
        acc += x
        top = tl.maximum(top, tl.max(x, axis=2, keep_dims=True))
    tl.store(out_ptr + offs, (acc - top).to(out_ptr.dtype.element_ty))


@pytest.mark.parametrize("dtype", FLOAT_SWEEP)
def test_loops_carry_rank3_tiles(dtype):
    x = data((3, 2, 3, 8), dtype)
    want, got = both(loop3_kernel[(1,)], x, np.zeros(48, dtype.np), 3, A=2, B=3, C=8)
    np.testing.assert_allclose(got[1].astype(np.float64), want[1].astype(np.float64), rtol=dtype.rtol,
                               atol=dtype.atol * 4)


@ascdsl.jit
def block_ptr3_kernel(x_ptr, out_ptr, Z, M, N, sz, sm, BZ: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    start = (0, tl.program_id(0) * BM, 0)
    src = tl.make_block_ptr(x_ptr, (Z, M, N), (sz, sm, 1), start, (BZ, BM, BN), (2, 1, 0))
    dst = tl.make_block_ptr(out_ptr, (Z, M, N), (sz, sm, 1), start, (BZ, BM, BN), (2, 1, 0))
    for _ in range(0, N, BN):
        x = tl.load(src, boundary_check=(0, 1, 2), padding_option="zero")
        tl.store(dst, x * 2 - tl.sum(x, axis=0, keep_dims=True), boundary_check=(0, 1, 2))
        src = tl.advance(src, (0, 0, BN))
        dst = tl.advance(dst, (0, 0, BN))


@ascdsl.jit
def descriptor3_kernel(x_ptr, out_ptr, Z, M, N, BZ: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    src = tl.make_tensor_descriptor(x_ptr, [Z, M, N], [M * N, N, 1], [BZ, BM, BN])
    dst = tl.make_tensor_descriptor(out_ptr, [Z, M, N], [M * N, N, 1], [BZ, BM, BN])
    x = src.load([0, tl.program_id(0) * BM, 0])
    dst.store([0, tl.program_id(0) * BM, 0], tl.max(x, axis=1, keep_dims=True) - x)


def test_block_pointers_and_tensor_descriptors_of_rank3():
    x = data((3, 10, 20), dtypes.float32)
    want, got = both(block_ptr3_kernel[(3,)], x, np.zeros_like(x), 3, 10, 20, 200, 20, BZ=4, BM=4, BN=8)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(want[1], x * 2 - x.sum(axis=0, keepdims=True), rtol=1e-6, atol=1e-5)
    want, got = both(descriptor3_kernel[(3,)], x, np.zeros_like(x), 3, 10, 20, BZ=4, BM=4, BN=32)
    np.testing.assert_array_equal(got[1], want[1])


@ascdsl.jit
def bytes3_kernel(flags_ptr, x_ptr, q_ptr, out_ptr, hit_ptr, q_out_ptr, nb,
                  A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    offs = _offsets(B * C, C, A, B, C)
    b = tl.arange(0, B)[None, :, None]
    flags = tl.load(flags_ptr + offs, mask=b < nb, other=True)  # bool, masked rows True
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.where(flags, x, -x))
    tl.store(hit_ptr + offs, x > 0.5)
    q = tl.load(q_ptr + offs, mask=b < nb, other=5)  # int8, masked rows 5
    tl.store(q_out_ptr + offs, (q * 3 + 1).to(tl.int8))


def test_bool_and_int8_tiles_of_rank3():
    x = data((2, 3, 8), dtypes.float32)
    q = RNG.integers(-40, 40, x.shape).astype(np.int8)
    args = [x > 0.3, x, q, np.zeros_like(x), np.zeros(x.shape, np.bool_), np.zeros_like(q), 2]
    want, got = both(bytes3_kernel[(1,)], *args, A=2, B=3, C=8)
    for w, g in zip(want[3:6], got[3:6]):
        np.testing.assert_array_equal(g, w)
    assert (want[3][:, 2] == x[:, 2]).all() and (want[4] == (x > 0.5)).all() and (want[5][:, 2] == 16).all()


@ascdsl.jit
def bool_broadcast3_kernel(x_ptr, z_ptr, y_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    ia, ib, ic = tl.arange(0, A), tl.arange(0, B), tl.arange(0, C)
    x = tl.load(x_ptr + ia[:, None] * C + ic[None, :])
    z = tl.load(z_ptr + ia[:, None] * B + ib[None, :])
    y = tl.load(y_ptr + _offsets(B * C, C, A, B, C))
    x3, z3 = x[:, None, :], z[:, :, None]
    keep = x3 > 0  # a bool [A, 1, C] broadcast along B
    mid = (z3 > 0.5) | (z3 < -2.0)  # a bool [A, B, 1] broadcast along C
    tl.store(out_ptr + _offsets(B * C, C, A, B, C), tl.where(keep & mid, y, -1.0))
    tl.store(out_ptr + A * B * C + _offsets(B * C, C, A, B, C), tl.broadcast_to(keep, (A, B, C)).to(tl.float32))


def test_bool_broadcasts_of_rank3_bit_exact():
    x, z, y = data((2, 8), dtypes.float32), data((2, 3), dtypes.float32), data((2, 3, 8), dtypes.float32)
    want, got = both(bool_broadcast3_kernel[(1,)], x, z, y, np.zeros(2 * y.size, np.float32), A=2, B=3, C=8)
    np.testing.assert_array_equal(got[3], want[3])
    mid = (z > 0.5) | (z < -2.0)
    keep = np.broadcast_to((x > 0)[:, None, :], y.shape)
    assert (want[3][:y.size].reshape(y.shape) == np.where(keep & mid[:, :, None], y, -1)).all()
    assert (want[3][y.size:].reshape(y.shape) == keep).all()


@ascdsl.jit
def atomic3_kernel(x_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    offs = _offsets(B * C, C, A, B, C)
    tl.atomic_add(out_ptr + offs, tl.load(x_ptr + tl.program_id(0) * A * B * C + offs))


def test_atomic_add_of_rank3_tiles_from_every_program():
    x = RNG.integers(-9, 9, (3, 2, 3, 8)).astype(np.float32)  # small ints: exact in any order
    want, got = both(atomic3_kernel[(3,)], x, np.ones((2, 3, 8), np.float32), A=2, B=3, C=8)
    assert (want[1] == 1 + x.sum(axis=0)).all()  # every program adds (the interpreter too)
    np.testing.assert_array_equal(got[1], want[1])


@ascdsl.jit
def leading_axes_kernel(x_ptr, idx_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    offs = _offsets(B * C, C, A, B, C)
    x = tl.load(x_ptr + offs)
    bc = tl.arange(0, B)[:, None] * C + tl.arange(0, C)[None, :]
    ac = tl.arange(0, A)[:, None] * C + tl.arange(0, C)[None, :]
    tl.store(idx_ptr + bc, tl.argmax(x, axis=0))
    tl.store(idx_ptr + B * C + ac, tl.argmin(x, axis=1))
    tl.store(out_ptr + offs, tl.cumsum(x, axis=1))


@ascdsl.jit
def leading_reorders_kernel(x_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    offs = _offsets(B * C, C, A, B, C)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.associative_scan(x, 0, combine_max, reverse=True))
    tl.store(out_ptr + A * B * C + offs, tl.sort(x, 1, descending=True))


@pytest.mark.parametrize("dtype", ALL_SWEEP)
def test_argmax_scans_and_sorts_along_leading_axes(dtype):
    """The axis moved last by a permute, the op along the rows, moved back: bit-exact but for the float
    cumsum (its order differs: the dtype's tolerance)."""
    def check(a, b, c):
        x = data((a, b, c), dtype)
        x[0, 0, :] = x[-1, 0, :]  # ties along axis 0: the lowest index wins
        n = a * b * c
        want, got = both(leading_axes_kernel[(1,)], x, np.zeros(b * c + a * c, np.int32), np.zeros(n, dtype.np),
                         A=a, B=b, C=c)
        np.testing.assert_array_equal(got[1], want[1], err_msg=f"{a}x{b}x{c}")
        assert (want[1] == np.concatenate([x.argmax(0).ravel(), x.argmin(1).ravel()])).all()
        tol = dict(rtol=dtype.rtol, atol=dtype.atol * b) if dtype.is_float else dict(rtol=0, atol=0)
        np.testing.assert_allclose(got[2].astype(np.float64), want[2].astype(np.float64), **tol)
        want, got = both(leading_reorders_kernel[(1,)], x, np.zeros(2 * n, dtype.np), A=a, B=b, C=c)
        np.testing.assert_array_equal(got[1], want[1], err_msg=f"{a}x{b}x{c}")
        assert (want[1][n:] == -np.sort(-x, 1).ravel()).all()
    each(check, [(2, 3, 8), (3, 4, 12)])


@ascdsl.jit
def flip_bytes3_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = _offsets(4 * BLOCK, BLOCK, 2, 4, BLOCK)
    tl.store(out_ptr + offs, tl.flip(tl.load(x_ptr + offs), 0))


def test_flips_of_8_bit_tiles_along_a_leading_axis():
    x = RNG.integers(-128, 128, 64).astype(np.int8)
    want, got = both(flip_bytes3_kernel[(1,)], x, np.zeros_like(x), BLOCK=8)
    assert np.array_equal(want[1], x.reshape(2, 4, 8)[::-1].ravel()) and np.array_equal(got[1], want[1])


@ascdsl.jit
def cat3_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = _offsets(4 * BLOCK, BLOCK, 2, 4, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + _offsets(4 * BLOCK, BLOCK, 4, 4, BLOCK), tl.cat(x, x, can_reorder=True))


def test_cat_of_rank3_tiles_bit_exact():
    x = data(64, dtypes.float32)
    want, got = both(cat3_kernel[(1,)], x, np.zeros(128, np.float32), BLOCK=8)
    assert np.array_equal(bits(got[1]), bits(want[1])) and np.array_equal(want[1], np.concatenate([x, x]))


@ascdsl.jit
def narrow3_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = _offsets(4 * BLOCK, BLOCK, 2, 4, BLOCK)
    q = tl.load(x_ptr + offs)
    hi, lo = tl.max(q, axis=0), tl.min(q, axis=1)
    tl.store(out_ptr + _offsets(0, BLOCK, 1, 4, BLOCK), tl.expand_dims(hi, 0))
    tl.store(out_ptr + 4 * BLOCK + _offsets(BLOCK, 0, 2, 1, BLOCK), tl.expand_dims(lo, 1))


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int16])
def test_narrow_integer_extremes_along_leading_axes_bit_exact(dt):
    """8- and 16-bit tiles of rank 3 reduced along a leading axis (in int32, exact)."""
    info = np.iinfo(dt)
    x = RNG.integers(info.min, info.max + 1, 64).astype(dt)
    want, got = both(narrow3_kernel[(1,)], x, np.zeros(48, dt), BLOCK=8)
    np.testing.assert_array_equal(got[1], want[1])
    q = x.reshape(2, 4, 8)
    assert (want[1][:32] == q.max(0).ravel()).all() and (want[1][32:] == q.min(1).ravel()).all()


@ascdsl.jit
def unit_last_kernel(x_ptr, out_ptr, n, A: tl.constexpr, B: tl.constexpr):
    """Blocks ``[A, B, 1]`` (a tile whose last axis is a unit one lies in UB as a column), masked along axis 0."""
    i = tl.arange(0, A)[:, None, None] * B + tl.arange(0, B)[None, :, None] + tl.arange(0, 1)[None, None, :]
    mask = tl.arange(0, A)[:, None, None] < n
    x = tl.load(x_ptr + i, mask=mask, other=0)
    tl.store(out_ptr + i, x + x, mask=mask)
    spread = tl.broadcast_to(tl.load(x_ptr + tl.arange(0, A))[:, None, None], (A, B, 1))  # [A, 1, 1] -> [A, B, 1]
    tl.store(out_ptr + A * B + i, spread)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int8], ids=lambda d: np.dtype(d).name)
def test_blocks_and_broadcasts_of_rank_3_tiles_with_a_unit_last_axis(dtype):
    def check(a, b, n):
        x = np.arange(1, a * b + 1).astype(dtype)
        want, got = both(unit_last_kernel[(1,)], x, np.zeros(2 * a * b, dtype), n, A=a, B=b)
        np.testing.assert_array_equal(want[1][:n * b], (x + x)[:n * b])
        np.testing.assert_array_equal(want[1][a * b:], np.repeat(x[:a], b))
        np.testing.assert_array_equal(got[1], want[1], err_msg=f"[{a}, {b}, 1] n={n}")
    each(check, [(4, 8, 3), (2, 4, 2), (4, 1, 4), (4, 8, 4)])


@ascdsl.jit
def unit_axes_kernel(x_ptr, out_ptr, n, k, A: tl.constexpr, B: tl.constexpr, S: tl.constexpr):
    """``[A, 1, 1]`` at row stride ``S``, ``[A, B, 1]`` over one run of GM and an ``[A, 1]`` column, masked along
    axis 0 (``n``) and along a unit axis (``k``: 0 or 1), loaded with ``other`` and stored."""
    a = tl.arange(0, A)[:, None, None]
    b = tl.arange(0, B)[None, :, None]
    u1, u2 = tl.arange(0, 1)[None, :, None], tl.arange(0, 1)[None, None, :]
    column = tl.load(x_ptr + a * S + u1 + u2, mask=(a < n) & (u1 < k), other=-1)
    tl.store(out_ptr + a * S + u1 + u2, column, mask=a < n)
    rows = tl.load(x_ptr + a * B + b + u2, mask=a < n, other=-1)
    tl.store(out_ptr + A * S + a * B + b + u2, rows, mask=(a < n) & (u2 < k))
    tl.store(out_ptr + A * S + A * B + a * B + b + u2, rows)
    r, z = tl.arange(0, A)[:, None], tl.arange(0, 1)[None, :]
    pair = tl.load(x_ptr + r + z, mask=(r < n) & (z < k), other=5)  # int64: words filled, lanes gathered over
    tl.store(out_ptr + A * S + 2 * A * B + r + z, pair, mask=z < k)


UNIT_DTYPES = [pytest.param(d, id=str(d)) for d in (dtypes.float32, dtypes.int32)] + [
    pytest.param(d, id=str(d), marks=pytest.mark.slow)
    for d in (dtypes.float16, dtypes.bfloat16, dtypes.int16, dtypes.int8, dtypes.int64)]


@pytest.mark.parametrize("dtype", UNIT_DTYPES)
def test_blocks_with_unit_axes_last_bit_exact(dtype):
    def check(a, b, s, n, k):
        x = (np.arange(1, a * max(s, b) + 1) % 100).astype(dtype.np)
        want, got = both(unit_axes_kernel[(1,)], x, np.full(a * s + 2 * a * b + a, 7, dtype.np), n, k, A=a, B=b, S=s)
        np.testing.assert_array_equal(bits(got[1]), bits(want[1]), err_msg=f"A={a} B={b} S={s} n={n} k={k}")
        column = np.where(np.arange(a) < n, x[:a * s:s] if k else -1, 7).astype(dtype.np)
        assert (want[1][:a * s:s] == column).all()
        assert (want[1][a * s + a * b:-a] == np.where(np.arange(a * b) < n * b, x[:a * b], -1).astype(dtype.np)).all()
        assert (want[1][-a:] == (np.where(np.arange(a) < n, x[:a], 5) if k else np.full(a, 7)).astype(dtype.np)).all()
    each(check, [(64, 3, 1, 64, 1), (16, 5, 1, 11, 1), (16, 5, 3, 16, 0), (8, 4, 2, 5, 1), (40, 2, 1, 40, 0)])


@ascdsl.jit
def unit_copy_kernel(x_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr):
    i = tl.arange(0, A)[:, None, None] * B + tl.arange(0, B)[None, :, None] + tl.arange(0, 1)[None, None, :]
    tl.store(out_ptr + i, tl.load(x_ptr + i))


@pytest.mark.parametrize("b", [1, 3])
def test_blocks_with_a_unit_last_axis_over_one_run_of_gm_are_one_burst(b):
    """``[64, 1, 1]`` and ``[64, 3, 1]`` over consecutive elements: one burst each way and no Gather (they were
    64 one-element bursts and a Gather each way, or 64 rows and a Gather: MTE2 328 -> 76, 344 -> 92 cycles)."""
    from ascdsl import sim
    from ascdsl.sim import cost

    x = data(64 * b, dtypes.float32)
    with sim.record() as runs:
        want, got = both(unit_copy_kernel[(1,)], x, np.zeros(64 * b, np.float32), A=64, B=b)
    np.testing.assert_array_equal(bits(got[1]), bits(want[1]))
    stats, k = runs[-1].stats, cost.A2
    one_burst = k.copy_setup.value + k.burst_cycles.value + 64 * b * 4 / k.core_gm_bytes_per_cycle.value
    into_l2 = k.copy_setup.value + cost.l2_burst_cycles(k, write=True) + 64 * b * 4 / k.l2_write_bytes_per_cycle.value
    assert stats.gm_copies == 2 and "Gather" not in stats.vector_calls
    assert stats.pipe_busy["MTE2"] == pytest.approx(one_burst, abs=1)
    assert stats.pipe_busy["MTE3"] == pytest.approx(into_l2, abs=1)  # the store lands in the L2


@ascdsl.jit
def one_to_column_kernel(x_ptr, out_ptr, M: tl.constexpr):
    column = tl.broadcast_to(tl.load(x_ptr + tl.arange(0, 1))[:, None], (M, 1))  # [1, 1] -> [M, 1]
    tl.store(out_ptr + tl.arange(0, M)[:, None] + tl.arange(0, 1)[None, :], column + column)
    plane = tl.broadcast_to(tl.load(x_ptr + tl.arange(0, 1))[:, None, None], (1, M, 1))  # [1, 1, 1] -> [1, M, 1]
    tl.store(out_ptr + M + tl.arange(0, M)[None, :, None] + tl.arange(0, 1)[None, None, :], plane)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32", "int16", "int8"])
def test_one_element_broadcast_to_a_column(dtype):
    dt = getattr(ml_dtypes, dtype) if dtype == "bfloat16" else np.dtype(dtype)
    x = np.array([3], dt)
    want, got = both(one_to_column_kernel[(1,)], x, np.zeros(16, dt), M=8)
    np.testing.assert_array_equal(want[1].astype(np.float32), [6] * 8 + [3] * 8)
    np.testing.assert_array_equal(got[1].astype(np.float32), want[1].astype(np.float32))


@ascdsl.jit
def middle_fold_kernel(x_ptr, out_ptr, S: tl.constexpr, L: tl.constexpr, W: tl.constexpr, MAX: tl.constexpr):
    flat = tl.arange(0, S * L * W)
    x = tl.reshape(tl.load(x_ptr + flat), (S, L, W))
    folded = tl.max(x, axis=1) if MAX else tl.sum(x, axis=1)
    tl.store(out_ptr + flat, tl.reshape(x - folded[:, None, :], (S * L * W,)))


@pytest.mark.parametrize("dtype,fold", [(dtypes.float32, False), (dtypes.float32, True), (dtypes.int32, False)])
def test_middle_axis_folds_and_broadcasts_take_the_rows_as_repeats(dtype, fold):
    """``[3, 5, 72]`` summed (or maxed) along axis 1 and broadcast back: the rows of each slab are one call's
    repeats (an ``Add`` a 64-lane chunk a slab, the slabs independent) where they were an ``Add`` a row in order
    (a barrier each: 12 calls), and the broadcast a ``Muls`` by 1 a chunk a slab with the rows as repeats where
    it was a ``DataCopy`` a row (15), and no barrier between the slabs' folds; bit-exact against the interpreter."""
    from ascdsl import sim

    x = data(3 * 5 * 72, dtype)
    with sim.record() as runs:
        want, got = both(middle_fold_kernel[(1,)], x, np.zeros_like(x), S=3, L=5, W=72, MAX=fold)
    np.testing.assert_array_equal(bits(got[1]), bits(want[1]))
    stats = runs[-1].stats
    calls = stats.vector_calls
    assert calls["Max" if fold else "Add"] == 3 * 2 and calls["Muls"] == 3 * 2, calls
    barriers = [i for i in stats.trace.intervals if i.api == "PipeBarrier" and not i.wait]
    assert len(barriers) == 5  # none between the slabs' folds (8 with a barrier a slab)


@CANN
def test_middle_axis_folds_and_broadcasts_type_check_against_cann(tmp_path):
    """The repeat-form folds (``Add``/``Max`` with dstRepStride 0) and broadcasts (``Muls`` by 1, float32 and
    int32) against the real CANN headers, with g++ and clang++."""
    kernels = []
    for dtype, fold in [(dtypes.float32, False), (dtypes.float32, True), (dtypes.int32, False)]:
        x = ascdsl.TensorDesc((3 * 5 * 72,), dtype)
        kernels.append(middle_fold_kernel.specialize(*arg_types(middle_fold_kernel, (x, x)), S=3, L=5, W=72,
                                                     MAX=fold).kernels[0])
    assert_type_checks("middle_folds", kernels, tmp_path)
