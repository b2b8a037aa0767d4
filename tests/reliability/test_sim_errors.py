"""Simulator GM errors of DSL kernels name the DSL line, the tensor and the block; errors of
hand-written kernels name the argument."""
from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import sim
from ascdsl.backend import simrun
from ascdsl.sim.errors import KernelSimError
from tests.backend.kernels import reversed_kernel


@ascdsl.jit
def read_past_end(x_ptr, out_ptr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    y = tl.load(x_ptr + i + 64) * 2.0
    tl.store(out_ptr + i, y)


@ascdsl.jit
def read_before_start(x_ptr, out_ptr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.load(x_ptr + i - 1))


@ascdsl.jit
def same_block_twice(x_ptr, out_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    y = tl.load(x_ptr + tl.program_id(0) * BLOCK + i)
    tl.store(out_ptr + i, y)


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn.fn)
    return first + next(i for i, t in enumerate(lines) if text in t)


@pytest.mark.parametrize("kernel, tensor, line, says", [
    (read_past_end, "x_ptr", "tl.load(x_ptr", "GM read"),
    (same_block_twice, "out_ptr", "tl.store(out_ptr", "written by block 0 and by block 1 with another value"),
], ids=["out-of-bounds", "cross-block-write"])
def test_gm_errors_name_the_line_tensor_and_block(kernel, tensor, line, says):
    x, out = np.arange(128, dtype=np.float32), np.zeros(128, np.float32)  # each block its own values
    with pytest.raises(KernelSimError) as info:
        kernel[(2,)](x, out, BLOCK=64, backend="sim")
    e = info.value
    assert (e.tensor, e.block, e.loc.line) == (tensor, 1, line_of(kernel, line))
    assert isinstance(e, ascdsl.CompilationError) and isinstance(e, sim.SimError)
    assert str(e).startswith(f"{e.loc}: error: on the simulator, tensor `{tensor}`: DataCopy") and says in str(e)


@pytest.mark.parametrize("backend", ["interpreter", "sim"])
def test_a_contiguous_view_reaches_its_allocation_on_both_backends(backend):
    """A view's pointer reaches the rest of its allocation (as on a device, and in Triton), on the simulator as
    on the interpreter: reading past ``x = memory[:128]`` reads ``memory`` on both, and reading past the
    allocation's end is an error on both, at the load's line (the simulator bounded a contiguous view to itself)."""
    memory = np.arange(192, dtype=np.float32)
    out = np.zeros(128, np.float32)
    read_past_end[(2,)](memory[:128], out, BLOCK=64, backend=backend)
    np.testing.assert_array_equal(out, (memory[64:] * 2).astype(np.float32))
    with pytest.raises(ascdsl.CompilationError) as info:
        read_past_end[(2,)](memory[32:160], out, BLOCK=64, backend=backend)
    assert info.value.loc.line == line_of(read_past_end, "tl.load(x_ptr")
    assert "x_ptr" in str(info.value)


@pytest.mark.parametrize("backend", ["interpreter", "sim"])
def test_a_views_pointer_reaches_nothing_before_its_first_element_on_both_backends(backend):
    """Memory before a view's first element is out of its pointer's reach on both backends (the simulator's
    pointer starts there; the interpreter reached back to the allocation's start): ``x_ptr - 1`` is an error at
    the load's line, though ``memory[0]`` is in the allocation."""
    memory = np.arange(129, dtype=np.float32)
    with pytest.raises(ascdsl.CompilationError) as info:
        read_before_start[(2,)](memory[1:], np.zeros(128, np.float32), BLOCK=64, backend=backend)
    assert info.value.loc.line == line_of(read_before_start, "tl.load(x_ptr")


def test_hand_written_kernel_errors_name_the_argument():
    source = Path(__file__).parents[1] / "sim" / "kernels" / "add.cpp"
    x, y, z = np.ones(256, np.float32), np.ones(256, np.float32), np.zeros(256, np.float32)
    with pytest.raises(sim.SimError) as info:  # n larger than the arrays: reads past x's end
        sim.run_kernel(source, "add_custom", [x, y, z, np.uint32(512), np.uint32(256)], 1)
    assert info.value.arg in (0, 1, 2) and info.value.block == 0


@ascdsl.jit
def scaled_copy(src, dst, scale, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + i, tl.load(src + i) * scale)


def test_kernels_of_other_pointers_share_a_file_and_name_their_own_tensor(fresh_sim_index):
    """Kernels whose pointer parameters differ share one prebuilt file (its entry takes every kernel's
    pointers); each runs as alone, and a GM error of the second names its own tensor at its line."""
    x, out = np.arange(128, dtype=np.float32), np.zeros(128, np.float32)
    with simrun.recording() as launches:  # recorded launches run on the interpreter: x long enough there
        scaled_copy[(2,)](x, out, np.float32(3.0), BLOCK=64, backend="sim")
        read_past_end[(2,)](np.arange(192, dtype=np.float32), out, BLOCK=64, backend="sim")
    assert simrun.prebuild(launches) == 1
    (first, _), (second, _) = launches
    assert simrun._compiled(first, "Ascend910B3")[0] == simrun._compiled(second, "Ascend910B3")[0]
    scaled_copy[(2,)](x, out, np.float32(3.0), BLOCK=64, backend="sim")
    assert out.tobytes() == (x * np.float32(3.0)).tobytes()
    with pytest.raises(KernelSimError) as info:  # x_ptr is the entry's third pointer, the kernel's first
        read_past_end[(2,)](x, out, BLOCK=64, backend="sim")
    assert (info.value.tensor, info.value.loc.line) == ("x_ptr", line_of(read_past_end, "tl.load(x_ptr"))


def test_prebuild_leaves_out_a_kernel_the_backend_refuses(fresh_sim_index):
    """A recorded launch of a kernel the backend refuses (a negative innermost stride, which the interpreter runs)
    does not stop :func:`~ascdsl.backend.simrun.prebuild` (the fuzz's simulator mutants are built so): the other
    kernels are built, and the refused kernel's own launch raises the refusal at its line (the fuzz, seed 44)."""
    x, out = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    with simrun.recording() as launches:
        reversed_kernel[(1,)](x, out, 64, BLOCK=64, backend="sim")
        scaled_copy[(2,)](x, out, np.float32(3.0), BLOCK=32, backend="sim")
    assert simrun.prebuild(launches) == 1
    assert [simrun.prebuilt(*launch) for launch in launches] == [False, True]
    with pytest.raises(ascdsl.CompilationError) as info:
        reversed_kernel[(1,)](x, out, 64, BLOCK=64, backend="sim")
    loc = info.value.loc
    assert (Path(loc.file), loc.line) == (Path(inspect.getsourcefile(reversed_kernel.fn)),
                                          line_of(reversed_kernel, "tl.load(x_ptr + (BLOCK"))
    scaled_copy[(2,)](x, out, np.float32(3.0), BLOCK=32, backend="sim")
    assert out.tobytes() == (x * np.float32(3.0)).tobytes()
