"""Findings of the red-team pass that live in the Ascend C backend (the kernel-IR rewrite fixes
them): each kernel runs on the interpreter, so the simulator must run it too and agree.
The ones the kernel-IR backend does not fix yet are marked xfail(strict)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from ascdsl.ir import Op, walk
from ascdsl.platforms import DEFAULT_PLATFORM, get_platform

KIR_ISSUE = pytest.mark.xfail(strict=True, reason="kernel-IR issue")
OPS = Path(__file__).parents[2] / "ops"


def both(kernel, grid, make_args, **constexprs):
    """Run on the interpreter and the simulator; the outputs (every array argument) must agree."""
    ref, got = make_args(), make_args()
    kernel[grid](*ref, **constexprs)
    kernel[grid](*got, **constexprs, backend="sim")
    for r, g in zip(ref, got):
        if isinstance(r, np.ndarray):
            np.testing.assert_allclose(g.astype(np.float64), r.astype(np.float64), rtol=1e-2, atol=1e-2)


@ascdsl.jit
def names_x(x, x_ptr, out_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.load(x_ptr + i) + tl.load(x + i))


@ascdsl.jit
def names_tiling(tiling, out_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.load(tiling + i))


@ascdsl.jit
def names_workspace(workspace, out_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.load(workspace + i))


@ascdsl.jit
def names_macros(NULL, EOF, out_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.load(NULL + i) + EOF)


def vec(n=64, dtype=np.float32):
    return np.arange(n, dtype=np.float32).astype(dtype)


def test_pointer_x_beside_x_ptr():
    both(names_x, (1,), lambda: (vec(), vec(), np.zeros(64, np.float32)), BLOCK=64)


@pytest.mark.parametrize("kernel", [names_tiling, names_workspace], ids=["tiling", "workspace"])
def test_pointers_named_like_generated_names(kernel):
    both(kernel, (1,), lambda: (vec(), np.zeros(64, np.float32)), BLOCK=64)


@KIR_ISSUE  # scalar parameters become tiling-struct fields under their DSL names (tiling_.NULL)
def test_parameters_named_like_c_macros():
    both(names_macros, (1,), lambda: (vec(), 3.0, np.zeros(64, np.float32)), BLOCK=64)


@ascdsl.jit
def two_loops_one_accumulator(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n, BLOCK):
        acc += tl.load(x_ptr + start + tl.arange(0, BLOCK))
    for start in range(0, n, BLOCK):
        acc += 2.0 * tl.load(x_ptr + start + tl.arange(0, BLOCK))
    tl.store(out_ptr + tl.arange(0, BLOCK), acc)


def test_two_loops_accumulating_into_one_tile():
    both(two_loops_one_accumulator, (1,), lambda: (vec(256), np.zeros(64, np.float32), 256), BLOCK=64)


@ascdsl.jit
def first_block_only(out_ptr, BLOCK: tl.constexpr):
    offs = (tl.program_id(0) + tl.program_id(1) * tl.num_programs(0)) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.full((BLOCK,), 1.0, tl.float32), mask=offs < BLOCK)


def test_a_grid_of_2_to_the_31_programs_is_refused_or_runs_all():
    out = np.zeros(8, np.float32)
    first_block_only[(3, 2)](out, BLOCK=8, backend="sim")
    assert (out == 1).all()
    out[:] = 0
    try:
        first_block_only[(65536, 32768)](out, BLOCK=8, backend="sim")  # programs_ wraps to 0
    except ascdsl.Error as e:
        assert "programs" in str(e)
        return
    assert (out == 1).all()


def load_op(name: str):
    spec = importlib.util.spec_from_file_location(f"ops_{name}", OPS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.OP


@KIR_ISSUE  # the kernel IR computes GM offsets in int64_t; the tile IR's offsets stay int32
@pytest.mark.parametrize("name", ["softmax", "softmax_grad", "log_softmax_grad", "scale_add"])
def test_shapes_past_int32_offsets_are_refused_or_use_int64(name):
    """[70000, 40000] has 2.8e9 elements: int32 offsets wrap (row 60000 starts at -1894967296)."""
    op = load_op(name)
    desc = ascdsl.TensorDesc((70000, 40000), dtypes.float16)
    attrs = {a.name: (-1 if a.name == "dim" else a.default) for a in op.attrs}
    try:
        launch = op.host(*[desc] * len(op.inputs), **attrs, platform=get_platform(DEFAULT_PLATFORM))
    except ascdsl.InputValueError as e:
        assert "2^31" in str(e) or "int32" in str(e) or "2147483647" in str(e)
        return
    pointers = [tl.pointer_type(dtypes.float16)] * (len(op.inputs) + len(op.outputs))
    kernel = launch.kernel.specialize(*pointers, **launch.scalars, **launch.constexprs).kernels[0]
    offsets = [i.operands[1].type.dtype for i in walk(kernel.body) if i.op is Op.PTR_ADD]
    assert offsets and all(d == dtypes.int64 for d in offsets)
