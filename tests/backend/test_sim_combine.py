"""`tl.reduce` and `tl.associative_scan` with general `@jit` combine functions on the simulator against
the interpreter (bit-exact: the folds combine the same pairs in the same tree, the scans the same
Hillis-Steele steps; a single float `+` or `*` folds in the same tree on both): tuples of tiles
(argmax-style `(value, index)`, the composition of affine maps,
which is not commutative), products and xor, along either axis of 2-D tiles, of 1-D tiles and of 2-D
tiles to a scalar, odd lengths included, reversed scans, bodies with branches (if-converted), loops of
per-lane, long constant and `while` trip counts (loops in the kernel); what stays unsupported is a located error."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from tests.backend.helpers import CANN, assert_type_checks, bits, both, data, each


@ascdsl.jit
def first_max(v1, i1, v2, i2):
    pick = (v1 > v2) | ((v1 == v2) & (i1 < i2))
    return tl.where(pick, v1, v2), tl.where(pick, i1, i2)


@ascdsl.jit
def compose(m1, c1, m2, c2):  # x -> m1*x + c1, then m2*x + c2
    return m1 * m2, c1 * m2 + c2


@ascdsl.jit
def times(a, b):
    return a * b


@ascdsl.jit
def plus(a, b):
    return a + b


@ascdsl.jit
def xor(a, b):
    return a ^ b


@ascdsl.jit
def argmax_rows_kernel(x_ptr, v_ptr, i_ptr, p_ptr, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    index = tl.broadcast_to(rows * N + cols, (M, N))
    value, arg = tl.reduce((x, index), AXIS, first_max)
    out = tl.arange(0, N if AXIS == 0 else M)
    tl.store(v_ptr + out, value)
    tl.store(i_ptr + out, arg)
    tl.store(p_ptr + out, tl.reduce(x, AXIS, times))


@ascdsl.jit
def argmax_flat_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    value, arg = tl.reduce((x, rows * N + cols + tl.zeros((M, N), tl.int32)), None, first_max)
    tl.store(out_ptr + tl.arange(0, 2), tl.where(tl.arange(0, 2) == 0, value.to(tl.float32), arg.to(tl.float32)))


@ascdsl.jit
def compose_kernel(m_ptr, c_ptr, r_ptr, sm_ptr, sc_ptr, N: tl.constexpr, REVERSE: tl.constexpr):
    offs = tl.arange(0, N)
    pair = (tl.load(m_ptr + offs), tl.load(c_ptr + offs))
    rm, rc = tl.reduce(pair, 0, compose)
    two = tl.arange(0, 2)
    tl.store(r_ptr + two, tl.where(two == 0, rm, rc))  # the composition of all the maps
    sm, sc = tl.associative_scan(pair, 0, compose, reverse=REVERSE)
    tl.store(sm_ptr + offs, sm)
    tl.store(sc_ptr + offs, sc)


@ascdsl.jit
def compose_2d_kernel(m_ptr, c_ptr, sm_ptr, sc_ptr, xor_ptr, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr,
                      REVERSE: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    c = tl.load(c_ptr + offs)
    sm, sc = tl.associative_scan((tl.load(m_ptr + offs), c), AXIS, compose, reverse=REVERSE)
    tl.store(sm_ptr + offs, sm)
    tl.store(sc_ptr + offs, sc)
    tl.store(xor_ptr + offs, tl.associative_scan(c, AXIS, xor, reverse=REVERSE))


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.float16], ids=str)
def test_argmax_tuples_and_products_along_either_axis(dtype):
    def check(m, n, axis):
        x = np.round(data((m, n), dtype).astype(np.float32)).astype(dtype.np)  # ties everywhere
        k = n if axis == 0 else m
        outs = np.zeros(k, dtype.np), np.zeros(k, np.int32), np.zeros(k, dtype.np)
        want, got = both(argmax_rows_kernel[(1,)], x, *outs,
                         M=m, N=n, AXIS=axis)
        first = np.argmax(x.astype(np.float32), axis=axis)  # the lowest index of a maximum
        flat = np.arange(k) * n + first if axis == 1 else first * n + np.arange(k)
        np.testing.assert_array_equal(want[2], flat)
        for a, b in zip(want[1:3], got[1:3]):
            np.testing.assert_array_equal(bits(a), bits(b), err_msg=f"{m}x{n} axis {axis}")
        np.testing.assert_array_equal(bits(got[3]), bits(want[3]))  # one `*`: the same tree on both
    each(check, [(4, 8, 1), (4, 8, 0), (5, 37, 1), (7, 3, 0), (1, 8, 0)])


@ascdsl.jit
def float_sums_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    tl.store(out_ptr + tl.arange(0, N), tl.reduce(x, 0, plus))
    tl.store(out_ptr + N + tl.arange(0, M), tl.reduce(x, 1, plus))
    tl.store(out_ptr + N + M + tl.arange(0, N), tl.zeros((N,), x.dtype) + tl.reduce(x, None, plus))
    tl.store(out_ptr + 2 * N + M + tl.arange(0, N), tl.zeros((N,), x.dtype) + tl.reduce(tl.reduce(x, 0, plus), 0, plus))


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.float16, dtypes.bfloat16], ids=str)
def test_float_sum_combines_fold_the_interpreters_tree_bit_exact(dtype):
    def check(m, n):
        x = data((m, n), dtype)
        want, got = both(float_sums_kernel[(1,)], x, np.zeros(3 * n + m, dtype.np), M=m, N=n)
        np.testing.assert_array_equal(bits(got[1]), bits(want[1]), err_msg=f"{m}x{n}")
        ascdsl.testing.assert_close(want[1][:n], x.astype(np.float32).sum(axis=0), dtype)  # a sum, in a tree
    each(check, [(5, 24), (16, 8)])


def test_argmax_tuple_of_a_2d_tile_to_a_scalar():
    x = np.round(data((6, 10), dtypes.float32))
    x.ravel()[[13, 40]] = 50.0
    want, got = both(argmax_flat_kernel[(1,)], x, np.zeros(2, np.float32), M=6, N=10)
    np.testing.assert_array_equal(want[1], [50.0, 13.0])
    np.testing.assert_array_equal(got[1], want[1])


def test_composition_reduce_and_scan_keep_the_order():
    rng = np.random.default_rng(3)

    def check(n, reverse):
        m = rng.integers(-3, 4, n).astype(np.int32)
        c = rng.integers(-5, 6, n).astype(np.int32)
        outs = [np.zeros(k, np.int32) for k in (2, n, n)]
        want, got = both(compose_kernel[(1,)], m, c, *outs, N=n, REVERSE=reverse)
        wm, wc = 1, 0
        for i in range(n):
            wm, wc = wm * int(m[i]), wc * int(m[i]) + int(c[i])
        assert list(want[2]) == [np.int32(wm), np.int32(wc)]
        for a, b in zip(want[2:], got[2:]):
            np.testing.assert_array_equal(a, b, err_msg=f"n={n} reverse={reverse}")
    each(check, [(8, False), (13, False), (13, True), (64, True)])


def test_composition_scans_of_2d_tiles():
    rng = np.random.default_rng(4)

    def check(m, n, axis, reverse):
        a = rng.integers(-2, 3, (m, n)).astype(np.int32)
        c = rng.integers(-5, 6, (m, n)).astype(np.int32)
        want, got = both(compose_2d_kernel[(1,)], a, c, *(np.zeros_like(c) for _ in range(3)), M=m, N=n, AXIS=axis,
                         REVERSE=reverse)
        for x, y in zip(want[2:], got[2:]):
            np.testing.assert_array_equal(x, y, err_msg=f"{m}x{n} axis {axis} reverse={reverse}")
    each(check, [(4, 8, 0, False), (5, 16, 1, False), (6, 8, 1, True), (3, 24, 0, True)])


@ascdsl.jit
def either(a, b):
    return a | b


@ascdsl.jit
def narrow_kernel(x_ptr, p_ptr, s_ptr, h_ptr, b_ptr, bs_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(p_ptr + offs, tl.zeros((N,), tl.int32) + tl.reduce(x.to(tl.int8), 0, times))  # wraps in int8
    tl.store(s_ptr + offs, tl.associative_scan(x.to(tl.uint8), 0, times).to(tl.int32))
    tl.store(h_ptr + offs, tl.associative_scan(x.to(tl.int16) * 300, 0, times, reverse=True).to(tl.int32))
    m = x > 3
    tl.store(b_ptr + offs, tl.zeros((N,), tl.int32) + tl.reduce(m, 0, either).to(tl.int32))
    tl.store(bs_ptr + offs, tl.associative_scan(m, 0, xor).to(tl.int32))


def test_combines_over_8_bit_16_bit_and_bool_tiles_wrap_as_the_interpreter():
    rng = np.random.default_rng(6)

    def check(n):
        x = rng.choice(np.array([-5, -3, -1, 1, 2, 3, 5, 7], np.int32), n)
        want, got = both(narrow_kernel[(1,)], x, *(np.zeros(n, np.int32) for _ in range(5)), N=n)
        wrapped = [np.multiply.reduce(x.astype(dt), dtype=dt) for dt in (np.int8, np.uint8)]
        assert want[1][0] == wrapped[0] and want[2][-1] == wrapped[1]
        assert want[4][0] == (x > 3).any() and want[5][-1] == np.logical_xor.reduce(x > 3)
        for a, b in zip(want[1:], got[1:]):
            np.testing.assert_array_equal(a, b, err_msg=f"n={n}")
    each(check, [(40,), (13,)])


@ascdsl.jit
def rank3_kernel(x_ptr, m_ptr, v_ptr, i_ptr, sm_ptr, sc_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr,
                 AXIS: tl.constexpr, K: tl.constexpr, REVERSE: tl.constexpr):
    offs = tl.arange(0, A)[:, None, None] * B * C + tl.arange(0, B)[None, :, None] * C + tl.arange(0, C)[None, None, :]
    x = tl.load(x_ptr + offs)
    value, arg = tl.reduce((x, tl.broadcast_to(offs, (A, B, C))), AXIS, first_max)
    k = tl.arange(0, K)
    tl.store(v_ptr + k, tl.reshape(value, (K,)))
    tl.store(i_ptr + k, tl.reshape(arg, (K,)))
    sm, sc = tl.associative_scan((tl.load(m_ptr + offs), x), AXIS, compose, reverse=REVERSE)
    tl.store(sm_ptr + offs, sm)
    tl.store(sc_ptr + offs, sc)


def test_combines_over_rank_3_tiles_along_every_axis():
    rng = np.random.default_rng(7)

    def check(shape, axis, reverse):
        x = rng.integers(-4, 5, shape).astype(np.int32)
        m = rng.choice(np.array([-1, 1, 2], np.int32), shape)
        k = x.size // shape[axis]
        outs = np.zeros(k, np.int32), np.zeros(k, np.int32), np.zeros(shape, np.int32), np.zeros(shape, np.int32)
        want, got = both(rank3_kernel[(1,)], x, m, *outs, A=shape[0], B=shape[1], C=shape[2], AXIS=axis, K=k,
                         REVERSE=reverse)
        np.testing.assert_array_equal(want[2], x.max(axis=axis).ravel())
        for a, b in zip(want[2:], got[2:]):
            np.testing.assert_array_equal(a, b, err_msg=f"{shape} axis {axis} reverse={reverse}")
    each(check, [((2, 3, 8), 0, False), ((2, 3, 8), 1, True), ((3, 4, 16), 2, False), ((3, 5, 8), 1, False)])


@ascdsl.jit
def horner(a, b):  # a loop of constant trip count: unrolled
    acc = a
    for i in range(3):
        acc = acc * 2 + b - i
    return acc


@ascdsl.jit
def smooth_max(a, b):
    m = tl.maximum(a, b)
    for _ in range(1, 4, 2):
        m = m + 0.25 * tl.minimum(a, b)
    return m


@ascdsl.jit
def looped_kernel(x_ptr, f_ptr, r_ptr, s_ptr, fr_ptr, fs_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(r_ptr + offs, tl.zeros((N,), tl.int32) + tl.reduce(x, 0, horner))
    tl.store(s_ptr + offs, tl.associative_scan(x, 0, horner, reverse=True))
    f = tl.load(f_ptr + offs)
    tl.store(fr_ptr + offs, tl.zeros((N,), tl.float32) + tl.reduce(f, 0, smooth_max))
    tl.store(fs_ptr + offs, tl.associative_scan(f, 0, smooth_max))


def test_combines_with_loops_of_constant_trip_counts_unroll():
    rng = np.random.default_rng(8)

    def check(n):
        x = rng.integers(-3, 4, n).astype(np.int32)
        f = data(n, dtypes.float32)
        want, got = both(looped_kernel[(1,)], x, f, *(np.zeros(n, t) for t in (np.int32, np.int32, np.float32,
                                                                                np.float32)), N=n)
        v = [int(e) for e in x]
        while len(v) > 1:  # the interpreter's tree: evens with odds, an odd one out carried
            v = [8 * a + 7 * b - 4 for a, b in zip(v[0:len(v) - 1:2], v[1::2])] + v[2 * (len(v) // 2):]
        assert want[2][0] == np.int64(v[0]).astype(np.int32)  # horner unrolled, wrapped
        for a, b in zip(want[2:], got[2:]):
            np.testing.assert_array_equal(bits(a), bits(b), err_msg=f"n={n}")
    each(check, [(16,), (13,)])


@ascdsl.jit
def first_max_if(v1, i1, v2, i2):  # branches: if-converted, both sides on whole tiles
    if v1 > v2:
        v, i = v1, i1
    elif v1 == v2:
        if i1 < i2:
            v, i = v1, i1
        else:
            v, i = v2, i2
    else:
        v, i = v2, i2
    return v, i


@ascdsl.jit
def guarded(a, b):  # the untaken branch divides by zero and takes logs of negatives
    if b != 0:
        r = a // b + a % b
    else:
        r = a - 1
    return r


@ascdsl.jit
def runtime_loop(a, b):  # a trip count per lane
    acc = a
    for i in range(b % 5):
        acc = acc * 3 + i
    return acc


@ascdsl.jit
def long_loop(a, b):  # over the unroll limit: a loop in the kernel
    for _ in range(100):
        a = a + b
    return a


@ascdsl.jit
def doubling(a, b):
    while a < b:
        a = a * 2 + 1
    return a


@ascdsl.jit
def branchy_kernel(x_ptr, v_ptr, i_ptr, sv_ptr, si_ptr, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr,
                   REVERSE: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs)
    index = tl.broadcast_to(offs, (M, N))
    value, arg = tl.reduce((x, index), AXIS, first_max_if)
    out = tl.arange(0, N if AXIS == 0 else M)
    tl.store(v_ptr + out, value)
    tl.store(i_ptr + out, arg)
    sv, si = tl.associative_scan((x, index), AXIS, first_max_if, reverse=REVERSE)
    tl.store(sv_ptr + offs, sv)
    tl.store(si_ptr + offs, si)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.float16, dtypes.int32], ids=str)
def test_combines_with_branches_are_if_converted(dtype):
    def check(m, n, axis, reverse):
        x = np.round(data((m, n), dtype).astype(np.float32)).astype(dtype.np)  # ties everywhere
        k = n if axis == 0 else m
        outs = np.zeros(k, dtype.np), np.zeros(k, np.int32), np.zeros((m, n), dtype.np), np.zeros((m, n), np.int32)
        want, got = both(branchy_kernel[(1,)], x, *outs, M=m, N=n, AXIS=axis, REVERSE=reverse)
        first = np.argmax(x.astype(np.float32), axis=axis)
        np.testing.assert_array_equal(want[2], np.arange(k) * n + first if axis == 1 else first * n + np.arange(k))
        for a, b in zip(want[1:], got[1:]):
            np.testing.assert_array_equal(bits(a), bits(b), err_msg=f"{m}x{n} axis {axis} reverse={reverse}")
    each(check, [(4, 8, 1, False), (5, 16, 0, True)])


@ascdsl.jit
def looping_kernel(x_ptr, y_ptr, g_ptr, r_ptr, l_ptr, w_ptr, sg_ptr, sr_ptr, sl_ptr, sw_ptr, N: tl.constexpr,
                   REVERSE: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    zero = tl.zeros((N,), tl.int32)
    tl.store(g_ptr + offs, zero + tl.reduce(x, 0, guarded))
    tl.store(r_ptr + offs, zero + tl.reduce(x, 0, runtime_loop))
    tl.store(l_ptr + offs, zero + tl.reduce(x, 0, long_loop))
    tl.store(w_ptr + offs, zero + tl.reduce(y, 0, doubling))
    tl.store(sg_ptr + offs, tl.associative_scan(x, 0, guarded, reverse=REVERSE))
    tl.store(sr_ptr + offs, tl.associative_scan(x, 0, runtime_loop, reverse=REVERSE))
    tl.store(sl_ptr + offs, tl.associative_scan(x, 0, long_loop, reverse=REVERSE))
    tl.store(sw_ptr + offs, tl.associative_scan(y, 0, doubling, reverse=REVERSE))


@pytest.mark.slow
def test_combines_with_runtime_and_long_loops_run_as_loops_over_whole_tiles():
    rng = np.random.default_rng(9)

    def check(n, reverse):
        x = rng.integers(-4, 5, n).astype(np.int32)
        y = rng.integers(0, 40, n).astype(np.int32)
        want, got = both(looping_kernel[(1,)], x, y, *(np.zeros(n, np.int32) for _ in range(8)), N=n,
                         REVERSE=reverse)
        for a, b in zip(want[2:], got[2:]):
            np.testing.assert_array_equal(a, b, err_msg=f"n={n} reverse={reverse}")
    each(check, [(16, False), (13, True)])


@ascdsl.jit
def strided(a, b):
    for i in range(0, 8, tl.abs(b) % 3 + 1):
        a = a + i
    return a


@ascdsl.jit
def strided_down(a, b):
    for i in range(9, a % 4, -(tl.abs(b) % 3 + 1)):
        a = a * 2 - i
    return a


@ascdsl.jit
def damped(a, b):  # a branch in a loop over the unroll limit
    for _ in range(70):
        if a > b:
            a = a * 0.5
        else:
            a = a + b * 0.25
    return a


@ascdsl.jit
def strided_kernel(x_ptr, out_ptr, f_ptr, fout_ptr, BLOCK: tl.constexpr, ROWS: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.associative_scan(x, 0, strided))
    tl.store(out_ptr + BLOCK + offs, tl.associative_scan(x, 0, strided_down, reverse=True))
    tl.store(out_ptr + 2 * BLOCK + offs, tl.zeros((BLOCK,), tl.int32) + tl.reduce(x, 0, strided_down))
    f = tl.load(f_ptr + tl.arange(0, ROWS)[:, None] * BLOCK + offs[None, :])
    tl.store(fout_ptr + tl.arange(0, ROWS), tl.reduce(f, 1, damped))


@pytest.mark.slow
def test_combine_loops_with_runtime_steps_and_branches_in_long_loops():
    """A step read per lane (either sign; ``range`` semantics), and a branch inside a loop run in the kernel."""
    rng = np.random.default_rng(10)
    x = rng.integers(-20, 20, 16).astype(np.int32)
    f = rng.standard_normal((4, 16)).astype(np.float32)
    want, got = both(strided_kernel[(1,)], x, np.zeros(48, np.int32), f, np.zeros(4, np.float32), BLOCK=16, ROWS=4)
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[3].view(np.uint32), want[3].view(np.uint32))


@ascdsl.jit
def int64_sum_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p = tl.reduce(tl.load(x_ptr + offs).to(tl.int64), 0, times)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), tl.int32) + p.to(tl.int32))


def test_combine_functions_over_int64_tiles_are_located_errors():
    with pytest.raises(ascdsl.CompilationError,
                       match="combine function over int64 tiles cannot run on the Ascend A2 vector cores") as err:
        int64_sum_kernel[(1,)](np.ones(8, np.int32), np.zeros(8, np.int32), BLOCK=8, backend="sim")
    assert "test_sim_combine.py:" in str(err.value) and "tl.reduce" in str(err.value)


@ascdsl.jit
def wide_bounds(a, b):  # int64 bounds that differ per lane (3e9 apart from lane to lane)
    low = a.to(tl.int64) * 3000000000
    for _ in range(low, low + b % 5):
        a = a * 3 + 1
    return a


@ascdsl.jit
def wide_bounds_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.associative_scan(tl.load(x_ptr + offs), 0, wide_bounds))


def test_combine_loops_over_per_lane_int64_bounds_are_located_errors():
    """A lane's trip count would be computed from its int64 bounds on whole tiles, which A2 cannot do: a located
    error at the loop (the interpreter runs it)."""
    x = np.arange(8, dtype=np.int32) - 3
    with pytest.raises(ascdsl.CompilationError,
                       match="`for` loop over int64 bounds .* cannot run on the Ascend A2 vector cores") as err:
        wide_bounds_kernel[(1,)](x, np.zeros(8, np.int32), BLOCK=8, backend="sim")
    assert "test_sim_combine.py:" in str(err.value) and "for _ in range(low, low + b % 5)" in str(err.value)
    out = np.zeros(8, np.int32)
    wide_bounds_kernel[(1,)](x, out, BLOCK=8, backend="interpreter")
    assert out[0] == x[0] and out[-1] != x[-1]  # the last lane ran its loop


@CANN
def test_narrow_rank_3_and_looped_combines_type_check_against_cann(tmp_path):
    """The combines over 8-bit, 16-bit, bool and rank-3 tiles and with unrolled loops, in one kernel file,
    against the real CANN headers."""
    i32, f32 = tl.pointer_type(dtypes.int32), tl.pointer_type(dtypes.float32)
    kernels = [k.kernels[0] for k in (
        narrow_kernel.specialize(*(i32,) * 6, N=40),
        rank3_kernel.specialize(*(i32,) * 6, A=3, B=5, C=8, AXIS=1, K=24, REVERSE=False),
        looped_kernel.specialize(i32, f32, i32, i32, f32, f32, N=13))]
    assert_type_checks("narrow_and_looped_combines", kernels, tmp_path)
