"""Ports of typical Triton language tests: each runs on ascdsl's interpreter against NumPy, and on
upstream Triton's interpreter (the ``lib`` fixture) where ``triton`` and ``torch`` are installed."""
from __future__ import annotations

import numpy as np
import pytest

import ascdsl

RNG = np.random.default_rng(7)


def size(lib, n: int) -> int:
    """``n`` on ascdsl (any extent), the power of two below it on upstream Triton (powers only)."""
    return n if lib.name == "ascdsl" else 1 << (n.bit_length() - 1)


def test_launch_options_are_accepted(lib):
    x, y = RNG.random(100, dtype=np.float32), RNG.random(100, dtype=np.float32)
    out = lib.arg(np.zeros(100, np.float32))
    lib.k.add_kernel[(4,)](lib.arg(x), lib.arg(y), out, 100, BLOCK=32, num_warps=4, num_stages=3, num_ctas=1,
                           maxnreg=128)
    assert np.array_equal(lib.out(out), x + y)


def test_ascend_launch_options_and_debug_are_accepted():
    k = ascdsl_kernels()
    x, y, out = np.ones(16, np.float32), np.ones(16, np.float32), np.zeros(16, np.float32)
    k.add_kernel[(1,)](x, y, out, 16, BLOCK=16, debug=True, optimize_dynamic_offset=True,
                       enable_sync_block_lock=True, auto_blockify_size=4, multibuffer=False)
    assert np.array_equal(out, x + y)


def test_module_globals_and_helpers_defined_later(lib):
    x = RNG.random(8, dtype=np.float32)
    out = lib.arg(np.zeros(8, np.float32))
    lib.k.closure_kernel[(1,)](lib.arg(x), out, BLOCK=8)
    assert np.array_equal(lib.out(out), x * 2 + 2)


def test_reduce_with_a_combine_function(lib):
    m, n = size(lib, 5), size(lib, 37)
    x = RNG.standard_normal((m, n)).astype(np.float32)
    outs = [lib.arg(np.zeros(k, dt)) for k, dt in ((m, np.float32), (n, np.float32), (m, np.int32), (m, np.int32))]
    lib.k.reduce_kernel[(1,)](lib.arg(x), *outs, M=m, N=n)
    mx, sm, arg, xor = map(lib.out, outs)
    assert np.array_equal(mx, x.max(axis=1))
    np.testing.assert_allclose(sm, x.sum(axis=0), rtol=1e-5, atol=1e-5)
    assert np.array_equal(arg, x.argmax(axis=1))
    assert np.array_equal(xor, np.bitwise_xor.reduce(x.view(np.int32), axis=1))


def test_scans(lib):
    n = size(lib, 45)
    x = (RNG.random(n, dtype=np.float32) + 0.5).astype(np.float32)
    outs = [lib.arg(np.zeros(n, np.float32)) for _ in range(4)]
    lib.k.scan_kernel[(1,)](lib.arg(x), *outs, N=n)
    cs, cp, mx, rev = map(lib.out, outs)
    np.testing.assert_allclose(cs, np.cumsum(x), rtol=1e-5)
    np.testing.assert_allclose(cp, np.cumprod(x), rtol=1e-5)
    assert np.array_equal(mx, np.maximum.accumulate(x))
    np.testing.assert_allclose(rev, np.cumsum(x[::-1])[::-1], rtol=1e-5)


def test_max_with_indices_and_minus_infinity(lib):
    x = RNG.standard_normal(16).astype(np.float32)
    out, idx = lib.arg(np.zeros(1, np.float32)), lib.arg(np.zeros(2, np.int32))
    lib.k.minmax_kernel[(1,)](lib.arg(x), out, idx, N=16)
    padded = np.where(np.arange(16) < 13, x, -np.inf)
    assert lib.out(out)[0] == padded.max()
    assert list(lib.out(idx)) == [padded.argmax(), padded.argmin()]


def test_shape_ops(lib):
    m, n = 4, size(lib, 6)
    x = np.arange(m * n, dtype=np.float32).reshape(m, n)
    t, r, p = (lib.arg(np.zeros(m * n, np.float32)) for _ in range(3))
    lib.k.shape_kernel[(1,)](lib.arg(x), t, r, p, M=m, N=n)
    assert np.array_equal(lib.out(t), x.T.reshape(-1))
    assert np.array_equal(lib.out(r), x.reshape(-1))
    assert np.array_equal(lib.out(p), x.T.reshape(-1))


def test_join_split_interleave_cat(lib):
    a, b = np.arange(8, dtype=np.float32), np.arange(8, dtype=np.float32) * 10
    j, s, i, c = (lib.arg(np.zeros(n, np.float32)) for n in (16, 8, 16, 16))
    lib.k.join_kernel[(1,)](lib.arg(a), lib.arg(b), j, s, i, c, N=8)
    assert np.array_equal(lib.out(j), np.stack([a, b], -1).reshape(-1))
    assert np.array_equal(lib.out(s), b - a)
    assert np.array_equal(lib.out(i), np.stack([a, b], -1).reshape(-1))
    assert np.array_equal(lib.out(c), np.concatenate([a, b]))


def test_like_constructors_and_expand_dims(lib):
    x = RNG.random(8, dtype=np.float32)
    out = lib.arg(np.zeros(8, np.float32))
    lib.k.like_kernel[(1,)](lib.arg(x), out, N=8)
    np.testing.assert_allclose(lib.out(out), 3 + 2 * x, rtol=1e-6)


def test_math(lib):
    n = 64
    x = np.linspace(-2.5, 2.5, n).astype(np.float32)
    y = np.linspace(0.25, 4, n).astype(np.float32)
    out = lib.arg(np.zeros(16 * n, np.float32))
    lib.k.math_kernel[(1,)](lib.arg(x), lib.arg(y), out, N=n)
    got = lib.out(out).reshape(16, n)
    import math
    erf = np.array([math.erf(v) for v in x.astype(np.float64)])
    want = [np.floor(x), np.ceil(x), np.exp2(x), np.log2(y), x / y, x / y, np.sqrt(y), erf, np.sin(x), np.cos(x),
            np.clip(x, -1, 1), x * y + x, np.exp(x), np.log(y), 1 / np.sqrt(y), np.abs(x)]
    exact = {0, 1, 4, 5, 6, 10, 15}
    for i, w in enumerate(want):
        if i in exact:
            assert np.array_equal(got[i], w.astype(np.float32)), i
        else:
            np.testing.assert_allclose(got[i], w, rtol=2e-6, atol=2e-7, err_msg=str(i))


def test_int_math(lib):
    a = RNG.integers(-2**31, 2**31, 32, dtype=np.int64).astype(np.int32)
    b = RNG.integers(-2**31, 2**31, 32, dtype=np.int64).astype(np.int32)
    hi, shifted = lib.arg(np.zeros(32, np.int32)), lib.arg(np.zeros(32, np.int32))
    lib.k.int_math_kernel[(1,)](lib.arg(a), lib.arg(b), hi, shifted, N=32)
    ua, ub = a.view(np.uint32).astype(np.uint64), b.view(np.uint32).astype(np.uint64)
    assert np.array_equal(lib.out(hi).view(np.uint32), ((ua * ub) >> np.uint64(32)).astype(np.uint32))
    assert np.array_equal(lib.out(shifted), (a >> 3) ^ (b << 2))


def test_hints_and_a_runtime_step(lib):
    x = RNG.random(100, dtype=np.float32)
    out = lib.arg(np.zeros(32, np.float32))
    lib.k.hints_kernel[(1,)](lib.arg(x), out, 100, 32, BLOCK=32)
    want = np.zeros(32, np.float32)
    for start in range(0, 100, 32):
        chunk = x[start:start + 32]
        want[:len(chunk)] += chunk
    np.testing.assert_allclose(lib.out(out), want, rtol=1e-6)


def test_dot(lib):
    a = RNG.standard_normal((16, 32)).astype(np.float32)
    b = RNG.standard_normal((32, 16)).astype(np.float32)
    c = lib.arg(np.zeros(256, np.float32))
    lib.k.dot_kernel[(1,)](lib.arg(a), lib.arg(b), c, M=16, N=16, K=32)
    np.testing.assert_allclose(lib.out(c).reshape(16, 16), a @ b, rtol=1e-4, atol=1e-4)


def test_tensor_descriptors(lib):
    if lib.name == "triton":
        lib.triton.set_allocator(lambda size, align, stream: lib.torch.empty(size, dtype=lib.torch.int8))
    x = RNG.random((10, 12), dtype=np.float32)
    out = lib.arg(np.zeros((10, 12), np.float32))
    lib.k.descriptor_kernel[(3, 2)](lib.arg(x), out, 10, 12, BM=4, BN=8)
    assert np.array_equal(lib.out(out), x * 2)


def test_optional_pointers_are_none(lib):
    x, bias = np.ones(8, np.float32), np.arange(8, dtype=np.float32)
    out = lib.arg(np.zeros(8, np.float32))
    lib.k.optional_kernel[(1,)](lib.arg(x), None, out, BLOCK=8)
    assert np.array_equal(lib.out(out), x)
    lib.k.optional_kernel[(1,)](lib.arg(x), lib.arg(bias), out, BLOCK=8)
    assert np.array_equal(lib.out(out), x + bias)


def test_bool_and_int8_pointers(lib):
    x = RNG.standard_normal(16).astype(np.float32)
    flags, small = lib.arg(np.zeros(16, np.bool_)), lib.arg(np.arange(16, dtype=np.int8))
    lib.k.mask_kernel[(1,)](lib.arg(x), flags, small, BLOCK=16)
    assert np.array_equal(lib.out(flags), x > 0)
    assert np.array_equal(lib.out(small), np.arange(1, 17, dtype=np.int8))


def test_python_ints_that_need_int64(lib):
    out = lib.arg(np.zeros(1, np.int64))
    lib.k.big_int_kernel[(1,)](out, 2**40)
    assert lib.out(out)[0] == 2**40 + 1


def test_non_contiguous_views_by_their_strides(lib):
    base = RNG.random((size(lib, 6), 8), dtype=np.float32)
    out = lib.arg(np.zeros(base.shape[0] * 4, np.float32))
    view = lib.arg(base)[:, ::2] if lib.torch else base[:, ::2]
    stride_m, stride_n = (view.stride() if lib.torch else (s // 4 for s in view.strides))
    lib.k.strided_kernel[(1,)](view, out, stride_m, stride_n, M=base.shape[0], N=4)
    assert np.array_equal(lib.out(out).reshape(-1, 4), base[:, ::2] + 1)


def test_random_numbers_match_upstream_bit_for_bit(lib):
    n, seed = 64, 0x1234_5678_9ABC
    outs = [lib.arg(np.zeros(2 * n, dt)) for dt in (np.int32, np.float32, np.float32)]
    four = lib.arg(np.zeros(8 * n, np.int32))
    lib.k.random_kernel[(2,)](*outs, four, seed, N=n)
    got = [lib.out(o).copy() for o in (*outs, four)]
    mine = ascdsl_kernels()
    want = [np.zeros(2 * n, dt) for dt in (np.int32, np.float32, np.float32)] + [np.zeros(8 * n, np.int32)]
    mine.random_kernel[(2,)](*want, seed, N=n)
    for g, w in zip(got, want):
        assert g.tobytes() == w.tobytes()  # the same bits on both (trivially so for lib=ascdsl)
    bits, uniform, normal, _ = want
    assert len(set(bits.tolist())) == 2 * n and 0 <= uniform.min() and uniform.max() < 1
    assert abs(normal.mean()) < 0.5 and 0.5 < normal.std() < 1.5


def test_assertion_only_with_debug():
    k = ascdsl_kernels()
    x = np.array([1, 4, -9, 16], np.float32)
    k.assert_kernel[(1,)](x.copy(), 4, BLOCK=4)  # no debug: device_assert compiles to nothing
    with pytest.raises(ascdsl.DeviceAssertionError, match="x must be non-negative") as info:
        k.assert_kernel[(1,)](x.copy(), 4, BLOCK=4, debug=True)
    assert isinstance(info.value, AssertionError) and "compat_source.py" in str(info.value.loc)
    ok = np.array([1, 4, 9, 16], np.float32)
    k.assert_kernel[(1,)](ok, 4, BLOCK=4, debug=True)
    assert np.array_equal(ok, [1, 2, 3, 4])


def test_libdevice_functions():
    """Upstream's interpreter has no libdevice, so this one runs on ascdsl only, against NumPy."""
    k = ascdsl_kernels()
    x = np.array([-2.5, -1.5, -0.5, -0.2, 0.0, 0.3, 0.5, 1.5, 2.5, 3.7, -3.7, 1e-3, 7.0, -7.0, 0.75, 2.0],
                 np.float32)
    out, flags = np.zeros(7 * 16, np.float32), np.zeros(16, np.bool_)
    k.libdevice_kernel[(1,)](x, out, flags, N=16)
    got = out.reshape(7, 16)
    half_away = np.sign(x) * np.floor(np.abs(x) + 0.5)
    assert np.array_equal(got[1], half_away) and np.array_equal(got[2], np.trunc(x))
    assert np.array_equal(got[6], np.rint(x))
    for row, want in ((0, np.tanh(x)), (3, np.log1p(np.abs(x))), (4, np.abs(x) ** 1.5), (5, np.arctan(x))):
        np.testing.assert_allclose(got[row], want, rtol=2e-6)
    assert np.array_equal(flags, x == 0)  # 0/0 is NaN and 1/0 is inf


def ascdsl_kernels():
    from tests.triton.conftest import _BUILT, Lib
    from tests.triton import compat_kernels
    if "ascdsl" not in _BUILT:
        _BUILT["ascdsl"] = Lib(name="ascdsl", k=compat_kernels.build(ascdsl, ascdsl.language), torch=None,
                               triton=ascdsl)
    return _BUILT["ascdsl"].k
