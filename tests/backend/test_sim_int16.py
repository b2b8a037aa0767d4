"""int16 tiles and shifts by a tile of amounts on the simulator (hazard checks on) against the interpreter,
bit-exact: int16 arithmetic wraps as Triton's C semantics say (computed in int32, wrapped back), int16
casts to and from every other dtype, and ``x << y`` / ``x >> y`` with ``y`` a tile, for int32, int16 and
int8, amounts outside the bit width included (0 for ``<<``, the sign for ``>>``, as NumPy gives)."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from tests.backend.helpers import both, each

I16_MIN, I16_MAX = -32768, 32767


@ascdsl.jit
def int16_result(a, b, I: tl.constexpr):
    results = (a + b, a - b, a * b, -a, a // b, a % b, a // 7, a % -3, tl.abs(a), tl.maximum(a, b),
               tl.minimum(a, 3), a & b, a | b, a ^ b, ~a, a << 3, a >> 2,
               tl.where(a < b, a, b + 1), (a == b).to(tl.int16) + (a >= 5).to(tl.int16), a * 3 - 7)
    return results[I]


RESULTS = 20


@ascdsl.jit
def int16_kernel(a_ptr, b_ptr, out_ptr, n, GROUP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=1)
    b = tl.load(b_ptr + offs, mask=mask, other=1)
    for j in tl.static_range(4):
        tl.store(out_ptr + j * n + offs, int16_result(a, b, GROUP * 4 + j), mask=mask)


def _int16_operands(n, rng):
    a = rng.integers(I16_MIN, I16_MAX, n, endpoint=True).astype(np.int16)
    b = rng.integers(I16_MIN, I16_MAX, n, endpoint=True).astype(np.int16)
    b[n // 2:] = rng.integers(-20, 20, n - n // 2)
    b[b == 0] = 3
    edges = [I16_MIN, I16_MAX, -1, 0, 1, 181, -182]  # 181 * 181 wraps
    a[:len(edges) ** 2] = np.repeat(edges, len(edges))
    b[:len(edges) ** 2] = np.tile([I16_MIN, I16_MAX, -1, 1, 2, 181, -182], len(edges))
    return a, b


def test_int16_arithmetic_bit_exact():
    rng = np.random.default_rng(21)
    n = 300
    a, b = _int16_operands(n, rng)

    def check(group):
        want, got = both(int16_kernel[(ascdsl.cdiv(n, 256),)], a, b, np.zeros(4 * n, np.int16), n, GROUP=group,
                          BLOCK=256)
        np.testing.assert_array_equal(got[2], want[2], err_msg=f"group {group}")
    cases = [(g,) for g in range(RESULTS // 4)]
    each(check, cases)
    want, _ = both(int16_kernel[(2,)], a, b, np.zeros(4 * n, np.int16), n, GROUP=0, BLOCK=256)
    with np.errstate(over="ignore"):
        assert (want[2][2 * n:3 * n] == (a.astype(np.int32) * b).astype(np.int16)).all()  # wraps as C does


@ascdsl.jit
def int16_cast_kernel(a_ptr, i_ptr, f_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0)
    i = tl.load(i_ptr + offs, mask=mask, other=0)
    f = tl.load(f_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, i.to(tl.int16), mask=mask)
    tl.store(out_ptr + n + offs, f.to(tl.int16) + f.to(tl.float16).to(tl.int16), mask=mask)
    tl.store(out_ptr + 2 * n + offs, (a.to(tl.int32) * 5 + a.to(tl.float32).to(tl.int32)).to(tl.int16), mask=mask)
    tl.store(out_ptr + 3 * n + offs, a.to(tl.float16).to(tl.int16) ^ a.to(tl.int8).to(tl.int16), mask=mask)


def test_int16_casts_bit_exact():
    """int32 -> int16 wraps, floats -> int16 truncate and saturate (NaN -> 0), int16 -> float16 rounds."""
    rng = np.random.default_rng(22)
    n = 300
    a = rng.integers(I16_MIN, I16_MAX, n, endpoint=True).astype(np.int16)
    i = rng.integers(-2 ** 31, 2 ** 31 - 1, n).astype(np.int32)
    f = (rng.standard_normal(n) * 3e4).astype(np.float32)
    f[:6] = [np.nan, np.inf, -np.inf, 40000.0, -32768.9, 1e9]
    want, got = both(int16_cast_kernel[(ascdsl.cdiv(n, 128),)], a, i, f, np.zeros(4 * n, np.int16), n, BLOCK=128)
    np.testing.assert_array_equal(got[3], want[3])
    assert (want[3][:n] == i.astype(np.int16)).all()


@ascdsl.jit
def shift_kernel(x_ptr, s_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    s = tl.load(s_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, x << s, mask=mask)
    tl.store(out_ptr + n + offs, x >> s, mask=mask)
    tl.store(out_ptr + 2 * n + offs, (5 << s) ^ (x >> (s & 3)), mask=mask)


def test_shifts_by_a_tile_bit_exact():
    rng = np.random.default_rng(23)
    n = 300
    for dt in (np.int32, np.int16, np.int8):
        info = np.iinfo(dt)
        x = rng.integers(info.min, info.max, n, endpoint=True).astype(dt)
        s = rng.integers(0, 8 * np.dtype(dt).itemsize, n).astype(dt)
        s[:8] = [0, 1, 8 * np.dtype(dt).itemsize - 1, 8 * np.dtype(dt).itemsize, -1, info.max, info.min, 3]
        want, got = both(shift_kernel[(ascdsl.cdiv(n, 128),)], x, s, np.zeros(3 * n, dt), n, BLOCK=128)
        np.testing.assert_array_equal(got[2], want[2], err_msg=str(np.dtype(dt)))
        assert (want[2][n:2 * n] == np.right_shift(x, s)).all()


@ascdsl.jit
def narrow_umulhi_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x, y = tl.load(x_ptr + offs), tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, tl.umulhi(x, y))
    tl.store(out_ptr + BLOCK + offs, tl.umulhi(x, 100))


@pytest.mark.parametrize("dtype", [np.int16, np.int8, np.uint8], ids=lambda d: np.dtype(d).name)
def test_umulhi_of_8_and_16_bit_tiles(dtype):
    """The high half of the unsigned product (in int32: the operands masked to their width, wrapped back)."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(16)
    x, y = (rng.integers(info.min, info.max, 64, endpoint=True).astype(dtype) for _ in range(2))
    x[:2], y[:2] = info.max, info.min
    want, got = both(narrow_umulhi_kernel[(1,)], x, y, np.zeros(128, dtype), BLOCK=64)
    unsigned = np.dtype(f"u{np.dtype(dtype).itemsize}")
    bits = np.dtype(dtype).itemsize * 8
    expect = (x.view(unsigned).astype(np.uint64) * y.view(unsigned).astype(np.uint64) >> np.uint64(bits))
    np.testing.assert_array_equal(want[2][:64].view(unsigned), expect.astype(unsigned))
    np.testing.assert_array_equal(got[2], want[2])
