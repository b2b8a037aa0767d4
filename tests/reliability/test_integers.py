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
