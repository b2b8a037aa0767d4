"""Mistakes that used to surface as internal errors, or located in ascdsl's own files, are
located errors at the user's line; read-only and autograd arguments are handled on both backends."""
from __future__ import annotations

import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl.lib import core_span

HERE = "test_located_errors.py"


def line_of(fn, text: str) -> int:
    import inspect
    lines, first = inspect.getsourcelines(getattr(fn, "fn", fn))  # a kernel, or a host function
    return first + next(i for i, t in enumerate(lines) if text in t)


@ascdsl.jit
def cdiv_zero(out_ptr, B: tl.constexpr):
    tl.store(out_ptr, ascdsl.cdiv(B, 0))


@ascdsl.jit
def floor_div_zero(out_ptr, B: tl.constexpr):
    tl.store(out_ptr, B // (B - B))


@ascdsl.jit
def other_string(x_ptr, out_ptr):
    i = tl.arange(0, 4)
    tl.store(out_ptr + i, tl.load(x_ptr + i, mask=i < 2, other="s"))


@ascdsl.jit
def span_of_pointer(x_ptr, out_ptr):
    start, end = core_span(x_ptr, 1)
    tl.store(out_ptr, end)


@ascdsl.jit
def copy(x_ptr, out_ptr):
    i = tl.arange(0, 8)
    tl.store(out_ptr + i, tl.load(x_ptr + i) + 1.0)


@ascdsl.jit
def infinite_unroll(out_ptr, B: tl.constexpr):
    for i in tl.static_range(int(B * float("inf"))):
        tl.store(out_ptr, i)


def test_an_infinite_constexpr_is_located():
    with pytest.raises(ascdsl.CompilationError, match="cannot convert float infinity to integer") as info:
        infinite_unroll[(1,)](np.zeros(1, np.int32), B=4)
    assert info.value.loc.line == line_of(infinite_unroll, "static_range")
    assert "internal compiler error" not in str(info.value)


def test_cdiv_by_zero_in_a_kernel_is_located():
    with pytest.raises(ascdsl.CompilationError, match="must not be zero") as info:
        cdiv_zero[(1,)](np.zeros(1, np.int32), B=4)
    assert (info.value.loc.file.endswith(HERE), info.value.loc.line) == (True, line_of(cdiv_zero, "cdiv(B, 0)"))
    assert "internal compiler error" not in str(info.value)


def test_cdiv_by_zero_on_the_host_is_a_value_error():
    with pytest.raises(ValueError, match=r"cdiv\(4, 0\)"):
        ascdsl.cdiv(4, 0)
    assert ascdsl.cdiv(9, 4) == 3


def test_constexpr_division_by_zero_is_located():
    with pytest.raises(ascdsl.CompilationError, match="division by zero in a constexpr expression"):
        floor_div_zero[(1,)](np.zeros(1, np.int32), B=4)


def test_a_string_as_other_is_located():
    with pytest.raises(ascdsl.CompilationError, match="expected a number for a float32 constant, got 's'") as info:
        other_string[(1,)](np.zeros(4, np.float32), np.zeros(4, np.float32))
    assert info.value.loc.line == line_of(other_string, 'other="s"')


def test_errors_inside_ascdsl_lib_are_located_at_the_users_call():
    with pytest.raises(ascdsl.CompilationError) as info:
        span_of_pointer[(1,)](np.zeros(4, np.float32), np.zeros(1, np.int32))
    assert info.value.loc.file.endswith(HERE) and info.value.loc.line == line_of(span_of_pointer, "core_span(")
    assert any("inside ascdsl's `core_span`" in n for n in info.value.notes)


def test_ir_of_ascdsl_lib_helpers_carries_the_users_line():
    @ascdsl.jit
    def spans(out_ptr, per_core, big):
        start, end = core_span(per_core, big)
        tl.store(out_ptr + tl.program_id(0), end - start)

    kernel = spans.specialize(np.zeros(4, np.int32), 2, 1).kernels[0]
    from ascdsl.ir import walk
    assert {i.loc.file.rsplit("/", 1)[-1] for i in walk(kernel.body)} == {HERE}
    out = np.zeros(4, np.int32)
    spans[(4,)](out, 2, 1)
    assert list(out) == [3, 2, 2, 2]


@pytest.mark.parametrize("backend", ["interpreter", "sim"])
def test_read_only_inputs_run_on_both_backends(backend):
    x = np.arange(8, dtype=np.float32)
    x.flags.writeable = False
    out = np.zeros(8, np.float32)
    copy[(1,)](x, out, backend=backend)
    np.testing.assert_array_equal(out, x + 1)


@pytest.mark.parametrize("backend", ["interpreter", "sim"])
def test_a_read_only_output_is_a_located_error(backend):
    x, out = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    out.flags.writeable = False
    with pytest.raises(ascdsl.CompilationError, match="`out_ptr` is read-only, and the kernel stores to it") as info:
        copy[(1,)](x, out, backend=backend)
    assert info.value.loc.file.endswith(HERE)


def test_a_torch_output_that_requires_grad_is_written_in_place():
    torch = pytest.importorskip("torch")  # as Triton: a kernel writes the memory it is given, autograd or not
    x = torch.arange(8, dtype=torch.float32, requires_grad=True)
    out = torch.zeros(8, requires_grad=True)
    copy[(1,)](x, out)
    assert torch.equal(out.detach(), x.detach() + 1)


@ascdsl.jit
def int_row_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    tl.store(out_ptr, tl.sum(tl.load(x_ptr + cols, mask=cols < n, other=0), axis=0))


def test_an_int32_sum_over_a_runtime_extent_is_no_runtime_extent_not_an_internal_error():
    """The int32 sum's tail lanes are one scalar each, as many as BLOCK says: the kernel compiled for BLOCK
    as a symbol is undecided (it was a TypeError in the backend's fold; the fuzz, seed 46, ``ops/rmsnorm.py``
    with ``mask = cols >= n_cols``), and the lift says BLOCK is no runtime tile extent."""
    x = np.arange(100, dtype=np.int32)
    with pytest.raises(ascdsl.Error, match="BLOCK of int_row_sum is not a runtime tile extent"):
        ascdsl.planner.largest_extent(int_row_sum, "BLOCK", x, x)


def test_a_constexpr_that_is_no_runtime_extent_is_located_at_the_host_line():
    """Asking ``largest_extent`` for a constexpr that changes the kernel's code is the host code's
    mistake: a located error at its call, with a hint, not an unlocated ``Error``."""
    @ascdsl.host
    def host(x, platform):
        block = ascdsl.planner.largest_extent(int_row_sum, "BLOCK", x, x, platform=platform)
        return ascdsl.Launch(int_row_sum, grid=(1,), constexprs={"BLOCK": block})

    with pytest.raises(ascdsl.CompilationError, match="BLOCK of int_row_sum is not a runtime tile extent") as info:
        host(ascdsl.TensorDesc.of(np.zeros(100, np.int32)), None)
    assert info.value.loc.file.endswith(HERE) and info.value.loc.line == line_of(host, "largest_extent(")
    assert "largest_block" in info.value.hint


def test_an_internal_type_error_in_host_code_is_not_the_inputs_fault(monkeypatch):
    """A host function's own ``TypeError`` is the caller's :class:`ascdsl.InputTypeError`; one raised
    inside ascdsl (an internal error) reaches the caller as itself, not as a mistake of the inputs."""
    @ascdsl.host
    def host(x, platform):
        if x.ndim > 1:
            raise TypeError("x must be 1-D")
        return ascdsl.Launch(int_row_sum, grid=(ascdsl.planner.largest_extent(int_row_sum, "BLOCK", x, x),))

    with pytest.raises(ascdsl.InputTypeError, match="x must be 1-D"):
        host(ascdsl.TensorDesc.of(np.zeros((2, 2), np.float32)), None)
    monkeypatch.setattr(ascdsl.planner, "_largest_extent", lambda *key: ascdsl.next_power_of_2(key[0]))
    with pytest.raises(TypeError) as info:
        host(ascdsl.TensorDesc.of(np.zeros(8, np.float32)), None)
    assert not isinstance(info.value, ascdsl.Error)
