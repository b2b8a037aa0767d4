"""The generated C++ tiling function, compiled with g++, gives the same fields, tiling key, block dim,
output shapes and errors as the Python host function, over sweeps of shapes, dtypes and attributes."""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from ascdsl.backend.host import host
from ascdsl.backend.plan import tiling
from ascdsl.op import specializations
from ascdsl.op import load_operators
from ascdsl.platforms import get_platform

from .harness import case_line, compile_and_run, harness_source

ROOT = Path(__file__).resolve().parents[2]
PLATFORMS = [get_platform("Ascend910B3"), get_platform("Ascend910B1"), get_platform("Ascend310P3")]


def check_equivalence(tmp_path, op, kernels, sweep, built=None, platforms=PLATFORMS):
    """Run every (inputs, attrs) of ``sweep`` on each of ``platforms`` through Python and the compiled C++
    and compare (``built``: an ``OpBuild`` whose variants, runtime tile extents included, and layout to use)."""
    variants = built.variants if built is not None else tiling.variants(kernels)
    if built is not None:
        layout = built.layout
    else:
        layout = tiling.layout(f"{op.op_type}TilingData", kernels, (), tiling.scratch_names(kernels, op.tensor_count))
    code = host.lower(op, layout, variants, PLATFORMS[0])
    header = host.tiling_header(code, "test")
    fn, shapes, workspace = code.tiling, code.shapes, code.workspace
    cases = [(inputs, attrs, plat) for inputs, attrs in sweep for plat in platforms]
    lines = [case_line(fn, dict(zip(op.inputs, inputs)), attrs, plat) for inputs, attrs, plat in cases]
    got = compile_and_run(tmp_path, header, harness_source("tiling.h", fn, shapes, layout.struct_name, len(op.outputs),
                                                           workspace), lines)
    assert len(got) == len(cases)
    statuses = set()
    for (inputs, attrs, plat), line in zip(cases, got):
        want = host.python_tiling(op, layout, variants, plat, inputs, attrs)
        head, message = line.split("|", 1)
        status, block_dim, workspace_bytes, raw, rest = head.split(" ", 4)
        shape_status, *out_shapes = rest.split(";")
        label = f"{[(d.shape, d.dtype.name) for d in inputs]} {attrs} {plat.name}"
        assert (int(status), message) == (want.status, want.message), label
        statuses.add(want.status)
        if want.status == 0:
            assert (int(block_dim), int(workspace_bytes)) == (want.block_dim, want.workspace_bytes), label
            assert raw == layout.pack(dict(want.fields)).tobytes().hex(), label
            want_shapes = [str(op.output_shape(o, tuple(inputs), attrs)) for o in op.outputs]
            assert (int(shape_status), out_shapes) == (0, want_shapes), label
    return statuses


def desc(shape, dtype="float32"):
    return ascdsl.TensorDesc(tuple(shape), dtypes.lookup(dtype))


def load(name):
    op, = load_operators([ROOT / "ops" / f"{name}.py"])
    return op, specializations(op).kernels


def test_scale_add_matches_python(tmp_path):
    op, kernels = load("scale_add")
    sweep = []
    for dt in ("float32", "float16", "bfloat16", "int32"):
        for n in (0, 1, 31, 32, 33, 64, 100, 4096, 4097, 10007, 1 << 20):
            sweep.append(((desc((n,), dt), desc((n,), dt)), {"alpha": 0.5}))
    sweep += [((desc((3, 5, 7)), desc((3, 5, 7))), {"alpha": -2.0}),
              ((desc((4,)), desc((5,))), {"alpha": 1.0}),
              ((desc((4,)), desc((4,), "float16")), {"alpha": 1.0}),
              ((desc(()), desc(())), {"alpha": 3.25})]
    assert check_equivalence(tmp_path, op, kernels, sweep) == {0, 1, 2, 4}


def test_softmax_matches_python(tmp_path):
    op, kernels = load("softmax")
    shapes = [(1, 1), (4, 31), (3, 32), (5, 33), (64, 1000), (2, 3, 7), (3, 20000), (2, 8193), (0, 5),
              (5, 0), (7,), (), (100, 64), (1, 8192), (3, 2, 2048)]
    sweep = [((desc(s, dt),), {}) for s in shapes for dt in ("float32", "float16", "bfloat16", "int8")]
    assert check_equivalence(tmp_path, op, kernels, sweep) == {0, 1, 2, 4}


def test_matmul_matches_python(tmp_path):
    # a pure-cube variant (a block a cube core) and a MIX one (the cube cores, a workspace of the
    # products, refused past int32 tile offsets), chosen by a String attribute; on the A2 platforms (the 310P
    # has no separate cube cores: test_build_cube)
    op, kernels = load("matmul")
    sweep = [((desc((m, k), dt), desc((k, n), dt)), {"activation": act}) for dt in ("float16", "bfloat16", "float32")
             for act in ("none", "relu") for m, k, n in ((64, 64, 64), (100, 70, 130), (0, 32, 16), (5000, 64, 5000),
                                                         (64 * 600000, 16, 64), (8, 70000, 8))]
    sweep += [((desc((4, 8), "float16"), desc((9, 4), "float16")), {"activation": "none"}),
              ((desc((4, 8), "float16"), desc((8, 4), "float16")), {"activation": "gelu"})]
    assert check_equivalence(tmp_path, op, kernels, sweep, platforms=PLATFORMS[:2]) == {0, 1, 2}
    b3 = PLATFORMS[0]
    relu = host.python_tiling(op, tiling.layout("MatMulTilingData", kernels), tiling.variants(kernels), b3,
                              (desc((5000, 64), "float16"), desc((64, 5000), "float16")), {"activation": "relu"})
    assert (relu.block_dim, relu.workspace_bytes) == (b3.ai_core_count, 79 * 79 * 64 * 64 * 4)
    huge = host.python_tiling(op, tiling.layout("MatMulTilingData", kernels), tiling.variants(kernels), b3,
                              (desc((64 * 600000, 16), "float16"), desc((16, 64), "float16")), {"activation": "relu"})
    assert huge.status == 1 and huge.message.startswith("600000 programs of 64 x 64 float32 products need a workspace")


# A host function that uses the rest of the subset: negative floor division and modulo, loops,
# elif chains, conditional expressions, slices, negative indices, index errors, bools and floats.

@ascdsl.jit
def probe_kernel(x_ptr, out_ptr, extra_ptr, a, b, f, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.load(x_ptr + i) * f + a)
    tl.store(extra_ptr + i, i + b)


LIMIT = 64


@ascdsl.host
def probe_host(x, shift, scale, flag, platform):
    if x.ndim == 0:
        raise ValueError("x must not be a scalar")
    last = x.shape[-1]
    lead = x.shape[:-1]
    if flag and x.shape[shift] < 0:
        raise ValueError("unreachable")
    total = 0
    for i in range(len(lead)):
        total += lead[i] * (i + 1)
    for j in range(10, 0, -3):
        total = total - j
    q = (total - shift) // 7
    r = (shift - total) % 5
    if q < -3:
        block = 16
    elif q < 3:
        block = 32
    else:
        block = min(LIMIT, max(16, ascdsl.next_power_of_2(last)))
    ratio = scale / 2 if scale > 0 else -scale
    if x.dtype.name == "bfloat16" and not platform.has_bf16:
        raise TypeError(f"{platform.name} has no bfloat16 casts ({platform.vector_core_count} cores)")
    if ratio > 100.0:
        raise TypeError(f"scale {scale} is too large for {x.dtype} {x.shape} (shift={shift}, flag={flag})")
    scalars = {"a": q, "b": r * x.dtype.itemsize, "f": ratio * 1.5}
    q = q + 1000  # the launch gets the values from when the dict was built
    return ascdsl.Launch(probe_kernel, grid=(ascdsl.cdiv(x.numel, block), r + 1, 1 if flag else 2),
                         constexprs={"BLOCK": block, "EVEN": last % 2 == 0}, scalars=scalars)


def probe_shape(x, shift, scale, flag):
    return x.shape[:-1] + (x.shape[-1] // 2 + 1, 3)


PROBE = ascdsl.Operator(
    name="probe", op_type="ProbeOp", entry=None, host=probe_host, reference=None, inputs=("x",),
    outputs=(ascdsl.Output("out"), ascdsl.Output("extra", shape=ascdsl.host(probe_shape), dtype="int32")),
    attrs=(ascdsl.Attr("shift", "Int", 0), ascdsl.Attr("scale", "Float", 1.0), ascdsl.Attr("flag", "Bool", False)),
    dtypes=(("float32", "float32", "int32"), ("float16", "float16", "int32")))


def test_the_whole_host_subset_matches_python(tmp_path):
    kernels = []
    for dt in ("float32", "float16"):
        for block in (16, 32, 64):
            for even in (False, True):
                ptr = tl.pointer_type(dtypes.lookup(dt))
                kernels += probe_kernel.specialize(ptr, ptr, tl.pointer_type(dtypes.int32), 1, 2, 0.5,
                                                   BLOCK=block, EVEN=even).kernels
    rng = np.random.default_rng(0)
    sweep = []
    for _ in range(150):
        shape = tuple(int(d) for d in rng.integers(1, 90, size=int(rng.integers(0, 4))))
        attrs = {"shift": int(rng.integers(-4, 4)), "scale": float(rng.choice([0.5, -3.0, 250.0, 1e-3])),
                 "flag": bool(rng.integers(0, 2))}
        sweep.append(((desc(shape, str(rng.choice(["float32", "float16", "bfloat16"]))),), attrs))
    assert check_equivalence(tmp_path, PROBE, kernels, sweep) == {0, 1, 2, 3, 4}


def test_unsupported_constructs_are_located_errors():
    @ascdsl.host
    def bad_host(x, platform):
        n = x.numel
        return ascdsl.Launch(probe_kernel, grid=(n.bit_length(),))

    op = ascdsl.Operator(name="bad", op_type="Bad", entry=None, host=bad_host, reference=None, inputs=("x",))
    layout = tiling.layout("BadTilingData", [])
    with pytest.raises(ascdsl.CompilationError) as info:
        host.lower_tiling(op, layout, (), PLATFORMS[0], "BadTiling")
    assert f"test_tiling_function.py:{bad_host.__wrapped__.__code__.co_firstlineno + 3}:50:" in str(info.value)
    assert "cannot be called in host code" in str(info.value)


def test_log_softmax_backward_matches_python(tmp_path):
    # a kernel chosen through a variable (reduce-middle full-load or recompute), an Int dim
    op, kernels = load("log_softmax_grad")
    sweep = [((desc(s, dt), desc(s, dt)), {"dim": d}) for dt in ("float32", "float16", "bfloat16")
             for s, d in (((4, 33), -1), ((3, 5, 7), 1), ((6, 1, 9), 1), ((3, 5000), 1), ((2, 700, 3), 1),
                          ((3, 2000, 5), 1), ((3, 5, 70), 1), ((2, 700, 70), 1), ((0, 4), 0), ((), -1), ((), 0), ((2, 3), 2), ((2, 3), -3),
                          ((2,) * 8, 3), ((50, 3), -1), ((31, 5), 0), ((1073741823, 2), 1), ((2415919104, 2), 1))]
    sweep.append(((desc((2, 3)), desc((2, 4))), {"dim": 1}))
    assert check_equivalence(tmp_path, op, kernels, sweep) >= {0, 1, 2, 4}


def test_softmax_grad_matches_python(tmp_path):
    # `nz` has a default and is no attribute: the C++ is the ND function (nz=False)
    op, kernels = load("softmax_grad")
    sweep = [((desc(s, dt), desc(s, dt)), {"is_front": f}) for dt in ("float32", "float16", "bfloat16")
             for f in (False, True) for s in ((1,), (4, 31), (5, 33), (2, 9000), (2, 5000), (0, 8), (3, 0), (),
                                              (1000, 17), (1073741823, 2), (2415919104, 2))]
    sweep.append(((desc((2, 3)), desc((2, 3), "float16")), {"is_front": False}))
    assert check_equivalence(tmp_path, op, kernels, sweep) >= {0, 1, 2, 4}


@pytest.mark.parametrize("name, attrs, message", [
    ("softmax_grad", {"is_front": False}, "softmax_grad indexes rows in int32: 2415919104 rows are more than "
     "1073741824; split the tensor along its leading axes"),
    ("log_softmax_grad", {"dim": 1}, "log_softmax_backward indexes rows in int32: 2415919104 rows are more than "
     "1073741824; split the tensor along an axis it does not reduce")])
def test_seed_ops_refuse_tensors_past_int32_indexing(name, attrs, message):
    """A tensor of 2415919104 x 2 (the last core's first row index past INT32_MAX) is refused by the
    tiling function, in Python and in the generated C++ (the sweeps above), not indexed wrongly; a
    tensor past 2^31 elements with fewer rows (32768 x 152064, test_runtime_extents) is served: its GM
    offsets are int64."""
    op, kernels = load(name)
    layout = tiling.layout(f"{op.op_type}TilingData", kernels)
    big = desc((2415919104, 2), "float16")  # dim 1 reduces the 2 columns: 2415919104 rows
    want = host.python_tiling(op, layout, tiling.variants(kernels), PLATFORMS[0], (big, big), attrs)
    assert (want.status, want.message) == (1, message)


# An op whose host function takes one of its two inputs, and whose output shape is a lambda inside the
# multi-line Operator call: the C++ tiling function still takes (and selects by) every tensor.

@ascdsl.jit
def first_kernel(x_ptr, y_ptr, out_ptr, rows_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.load(x_ptr + i, mask=i < n) + tl.load(y_ptr + i, mask=i < n), mask=i < n)
    tl.store(rows_ptr + i, i, mask=i < 2)


@ascdsl.host
def first_host(x):
    return ascdsl.Launch(first_kernel, grid=(ascdsl.cdiv(x.numel, 64),), scalars={"n": x.numel},
                         constexprs={"BLOCK": 64})


FIRST = ascdsl.Operator(
    name="first", op_type="FirstOp", entry=None, host=first_host, reference=None, inputs=("x", "y"),
    outputs=(ascdsl.Output("out", shape=lambda x: (x.numel,)),
             ascdsl.Output("rows",
                           shape=lambda y, x: (y.shape[0], x.ndim), dtype="int32")),
    dtypes=(("float32", "float32", "float32", "int32"),))


def test_a_host_taking_some_inputs_and_lambda_shapes_match_python(tmp_path):
    ptr = tl.pointer_type(dtypes.float32)
    kernels = first_kernel.specialize(ptr, ptr, ptr, tl.pointer_type(dtypes.int32), 1, BLOCK=64).kernels
    sweep = [((desc(s), desc(s, dt)), {}) for s in ((1,), (100,), (3, 5)) for dt in ("float32", "float16")]
    assert check_equivalence(tmp_path, FIRST, kernels, sweep, platforms=PLATFORMS[:1]) == {0, 4}
    assert FIRST.output_shape(FIRST.outputs[1], (desc((3, 5)), desc((4, 2))), {}) == (4, 2)


# Names the generated code does not read once build-time values fold: module constants (a `constexpr`
# declared only if read), an attribute and a local (then `[[maybe_unused]]`). Warnings are errors.

@ascdsl.jit
def folded_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.load(x_ptr + i, mask=i < n) * 2, mask=i < n)


LANES = 32
WIDE = True
HALF = 0.5
FLOOR = 16  # the one constant read at run time


@ascdsl.host
def folded_host(x, shift, platform):
    block = min(LANES, 64) * 2 if WIDE else LANES
    total = x.numel
    if shift > HALF and total > 0 or WIDE:  # shift and total are read only here, and the test folds
        block = max(block, LANES // 2)
    return ascdsl.Launch(folded_kernel, grid=(ascdsl.cdiv(max(x.numel, FLOOR), block),), constexprs={"BLOCK": block},
                         scalars={"n": x.numel})


FOLDED = ascdsl.Operator(
    name="folded", op_type="FoldedOp", entry=None, host=folded_host, reference=None, inputs=("x",),
    outputs=(ascdsl.Output("out", shape=ascdsl.host(lambda x, shift: x.shape[:-1] + (LANES * 2 if WIDE else 1,))),),
    attrs=(ascdsl.Attr("shift", "Int", 0),), dtypes=(("float32", "float32"),))


@pytest.mark.parametrize("compiler", ["g++", "clang++"])
def test_names_read_only_by_folded_expressions_are_not_declared_unused(tmp_path, compiler):
    ptr = tl.pointer_type(dtypes.float32)
    kernels = folded_kernel.specialize(ptr, ptr, 1, BLOCK=64).kernels
    layout = tiling.layout("FoldedOpTilingData", kernels)
    header = tmp_path / "folded.h"
    header.write_text(host.tiling_header(host.lower(FOLDED, layout, tiling.variants(kernels), PLATFORMS[0]), "test"))
    build = subprocess.run([compiler, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-x", "c++",
                            str(header)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    fn = host.lower_tiling(FOLDED, layout, tiling.variants(kernels), PLATFORMS[0], "FoldedOpTiling")
    assert fn.constant_lines == ("enum class Kernel { folded_kernel };", "constexpr int64_t FLOOR = 16;")
    assert fn.local_lines == ("int64_t block{};", "[[maybe_unused]] int64_t total{};")
    assert "[[maybe_unused]] int64_t shift" in fn.arguments
    sweep = [((desc(s),), {"shift": k}) for s in ((1,), (100,), (3, 50)) for k in (-1, 2)]
    assert check_equivalence(tmp_path, FOLDED, kernels, sweep, platforms=PLATFORMS[:1]) == {0}


# Conditions on module constants fold (comparisons, `and`/`or`/`not`, arithmetic and calls on them): only the
# branch Python takes is lowered, so a launch in the dead branch, of a kernel no case compiles, is no error.

@ascdsl.jit
def unreached_kernel(x_ptr, out_ptr, m, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.load(x_ptr + i, mask=i < m), mask=i < m)


STEPS = 4


@ascdsl.host
def dead_branch_host(x, platform):
    if STEPS < 3 or not STEPS >= 2 or 1 < STEPS < 2 or STEPS in (1, 2):
        return ascdsl.Launch(unreached_kernel, grid=(1,), constexprs={"BLOCK": 8}, scalars={"m": x.numel})
    if STEPS * 2 == 8 and ascdsl.cdiv(STEPS, 3) == 2 and abs(-STEPS) > int(3.5) and STEPS != 5:
        block = 64
    else:
        block = 32
    return ascdsl.Launch(folded_kernel, grid=(ascdsl.cdiv(x.numel, block),), constexprs={"BLOCK": block},
                         scalars={"n": x.numel})


DEAD_BRANCH = ascdsl.Operator(
    name="dead_branch", op_type="DeadBranchOp", entry=None, host=dead_branch_host, reference=None, inputs=("x",),
    outputs=(ascdsl.Output("out"),), dtypes=(("float32", "float32"),))


@pytest.mark.parametrize("compiler", ["g++", "clang++"])
def test_conditions_on_module_constants_fold(tmp_path, compiler):
    ptr = tl.pointer_type(dtypes.float32)
    kernels = folded_kernel.specialize(ptr, ptr, 1, BLOCK=64).kernels
    layout = tiling.layout("DeadBranchOpTilingData", kernels)
    fn = host.lower_tiling(DEAD_BRANCH, layout, tiling.variants(kernels), PLATFORMS[0], "DeadBranchOpTiling")
    body = "\n".join(fn.body_lines)
    assert "unreached_kernel" not in body and "STEPS" not in body and "if (" not in body.split("// folded_kernel")[0]
    assert fn.constant_lines == ("enum class Kernel { folded_kernel };",)
    assert "block = 64;" in body and "block = 32;" not in body
    header = tmp_path / "dead_branch.h"
    header.write_text(host.tiling_header(host.lower(DEAD_BRANCH, layout, tiling.variants(kernels), PLATFORMS[0]), "test"))
    build = subprocess.run([compiler, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-x", "c++",
                            str(header)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    sweep = [((desc(s),), {}) for s in ((1,), (100,), (3, 50))]
    assert check_equivalence(tmp_path, DEAD_BRANCH, kernels, sweep, platforms=PLATFORMS[:1]) == {0}


def test_a_grid_barrier_launch_past_the_vector_cores_is_refused_as_in_python(tmp_path):
    """A kernel with a grid barrier needs a vector core per program: the tiling function refuses a launch of more
    (44 programs on an Ascend910B3's 40 cores, not on an Ascend910B1's 48; 52 on both) with Python's message."""
    op, = load_operators([Path(__file__).parent / "opfiles" / "split_rows.py"])
    sweep = [((desc((m, 200)),), {}) for m in (1, 10, 11, 12, 13)]  # 4 programs a row
    assert check_equivalence(tmp_path, op, specializations(op).kernels, sweep) == {0, host.STATUS["VALUE_ERROR"]}
    want = host.python_tiling(op, tiling.layout("T", specializations(op).kernels),
                              tiling.variants(specializations(op).kernels), PLATFORMS[0], (desc((11, 200)),), {})
    assert want.message.startswith("44 programs with a grid barrier (sync_block_all) on 40 vector cores")
