"""Integer overflow and bounds on the interpreter and at launch: big offsets are caught against the
right array, big values are typed or refused, nothing allocates gigabytes by accident."""
from __future__ import annotations

import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl

HERE = "test_integers.py"


@ascdsl.jit
def offset_load(x_ptr, y_ptr, out_ptr, OFF: tl.constexpr):
    i = tl.arange(0, 4)
    tl.store(out_ptr + i, tl.load(x_ptr + OFF + i))


@ascdsl.jit
def runtime_offset_load(dy_ptr, x_ptr, out_ptr, off):
    i = tl.arange(0, 4)
    tl.store(out_ptr + i, tl.load(dy_ptr + off + i))


@ascdsl.jit
def add_scalar(out_ptr, n):
    tl.store(out_ptr + tl.arange(0, 4), tl.zeros((4,), tl.int64) + n)


@ascdsl.jit
def full_int(out_ptr, VALUE: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, 4), tl.full((4,), VALUE, tl.int32))


@ascdsl.jit
def count_trips(out_ptr, N: tl.constexpr):
    acc = 0
    for i in range(N - 3, N):
        acc += 1
    tl.store(out_ptr, acc)


@ascdsl.jit
def unused_arange(out_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    tl.store(out_ptr, 1)


def arrays():
    return np.zeros(8, np.float32), np.ones(8, np.float32), np.zeros(8, np.float32)


@pytest.mark.parametrize("off", [2**40, 2**40 - 2, 2**41 + 3, -2**40, 2**62])
def test_a_far_offset_is_out_of_bounds_of_its_own_array(off):
    x, y, out = arrays()
    with pytest.raises(ascdsl.OutOfBoundsError, match=f"load from x_ptr out of bounds.*element {off}"):
        offset_load[(1,)](x, y, out, OFF=off)
    assert (out == 0).all()


@pytest.mark.parametrize("off", [2**40 - 100, -(2**40) + 2, -5])
def test_the_out_of_bounds_message_names_the_loaded_pointer(off):
    dy, x, out = arrays()
    with pytest.raises(ascdsl.OutOfBoundsError) as info:
        runtime_offset_load[(1,)](dy, x, out, off)
    assert "load from dy_ptr" in str(info.value) and f"{HERE}:" in str(info.value)


@pytest.mark.parametrize("n", [2**63, -2**63 - 1, 2**100])
def test_scalars_past_int64_are_located_errors(n):
    with pytest.raises(ascdsl.CompilationError, match=f"argument `n` = {n} does not fit int64") as info:
        add_scalar[(1,)](np.zeros(4, np.int64), n)
    assert info.value.loc.file.endswith(HERE)


def test_int64_scalars_still_run():
    out = np.zeros(4, np.int64)
    add_scalar[(1,)](out, 2**62)
    assert (out == 2**62).all()


@pytest.mark.parametrize("value, message", [(2**100, "does not fit int32"), (2**31, "does not fit int32"),
                                            (float("nan"), "nan has no int32 value"),
                                            (float("inf"), "inf has no int32 value")])
def test_constants_that_do_not_fit_their_dtype_are_located_errors(value, message):
    with pytest.raises(ascdsl.CompilationError, match=message) as info:
        full_int[(1,)](np.zeros(4, np.int32), VALUE=value)
    assert info.value.loc.file.endswith(HERE) and "internal compiler error" not in str(info.value)


@pytest.mark.parametrize("n", [2**31 + 5, 2**32 + 1, 2**40])
def test_constexpr_loop_bounds_past_int32_count_right(n):
    out = np.zeros(1, np.int32)
    count_trips[(1,)](out, N=n)
    assert out[0] == 3
    loop = next(i for i in count_trips.specialize(out, N=n).kernels[0].body.body if i.op.value == "for")
    assert loop.regions[0].args[0].type.dtype == tl.int64


def test_an_unused_huge_arange_is_an_error_not_an_allocation():
    with pytest.raises(ascdsl.CompilationError, match="2147483648 elements, more than the") as info:
        unused_arange[(1,)](np.zeros(1, np.int32), N=2**31)
    assert info.value.loc.file.endswith(HERE)


@ascdsl.jit
def unrolled(out_ptr, N: tl.constexpr):
    acc = 0
    for i in tl.static_range(N):
        acc += 1
    tl.store(out_ptr, acc)


def test_a_huge_static_range_is_an_error_not_a_hang():
    with pytest.raises(ascdsl.CompilationError, match="would unroll 1099511627776 iterations") as info:
        unrolled[(1,)](np.zeros(1, np.int32), N=2**40)
    assert info.value.loc.file.endswith(HERE)
    out = np.zeros(1, np.int32)
    unrolled[(1,)](out, N=4096)
    assert out[0] == 4096


@ascdsl.jit
def scalar_quotients(out_ptr, a, b):
    """Scalar `//` and `%` of run-time values (in C a zero divisor, or -1 under the minimum, traps)."""
    tl.store(out_ptr, a // b)
    tl.store(out_ptr + 1, a % b)
    tl.store(out_ptr + 2, (a + tl.program_id(0)) % (b - tl.program_id(0)))


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("a, b", [(7, 0), (-7, 0), (7, -1), ("min", -1), (-7, 2), (7, -3), (0, 5)])
def test_scalar_division_by_zero_or_minus_one_gives_the_interpreters_results_not_a_trap(dtype, a, b):
    """The simulator runs the kernel in this process: a trap would kill it (SIGFPE)."""
    a = np.iinfo(dtype).min if a == "min" else a
    want, got = np.zeros(3, dtype), np.zeros(3, dtype)
    scalar_quotients[(1,)](want, dtype(a), dtype(b))
    scalar_quotients[(1,)](got, dtype(a), dtype(b), backend="sim")
    np.testing.assert_array_equal(got, want)
