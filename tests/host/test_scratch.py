"""GM scratch a launch plan owns (``ascdsl.Launch(scratch=...)``): the Python entry allocates it poisoned per launch
on the interpreter and the simulator; ``ascdsl build`` carves it out of the op project's user workspace (the tiling
function sizes it, op_host asks for it, the kernel entries pass offsets of it, main.cpp allocates it) and verifies
opfiles/row_sum_scratch.py three ways; what is wrong with a scratch is a located error at the host line."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import build, dtypes, report, verify
from ascdsl.backend.host import host
from ascdsl.op import load_operators
from ascdsl.platforms import get_platform
from tests.cann.headers import host_flags, needs_host_headers, needs_kernel_headers, type_check
from tests.host.test_build_cube import kernel_with_tiling
from tests.host.test_tiling_function import PLATFORMS, check_equivalence
from tests.sim.test_cann_headers import cann_flags

ROW_SUM = Path(__file__).parent / "opfiles" / "row_sum_scratch.py"
B3 = get_platform("Ascend910B3")


def row_sum():
    op, = load_operators([ROW_SUM])
    return op


@pytest.mark.parametrize("backend", ["interpreter", "sim"])
def test_a_two_phase_row_sum_through_scratch_matches_numpy(backend):
    op = row_sum()
    for shape in [(3, 700), (1, 1), (4, 4096), (2, 257)]:
        x = np.random.default_rng(len(shape) + shape[1]).standard_normal(shape).astype(np.float32)
        got = op.entry(x, backend=backend)
        np.testing.assert_allclose(got, x.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-5)


@ascdsl.jit
def read_unwritten(out_ptr, scratch_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.load(scratch_ptr + i) + 1)


@pytest.mark.parametrize("backend", ["interpreter", "sim"])
def test_scratch_read_before_written_is_poison(backend):
    out = np.zeros(64, np.float32)
    ascdsl.Launch(read_unwritten, grid=(1,), constexprs={"BLOCK": 64},
                  scratch={"scratch_ptr": (tl.float32, 64)})(out, backend=backend)
    assert not np.isfinite(out).any()
    ints = np.zeros(64, np.int32)
    ascdsl.Launch(read_unwritten, grid=(1,), constexprs={"BLOCK": 64},
                  scratch={"scratch_ptr": (tl.int32, 64)})(ints, backend=backend)
    assert (ints == np.frombuffer(b"\xab" * 4, np.int32)[0] + 1).all()


def test_the_build_verifies_three_ways_on_the_user_workspace(tmp_path):
    b = build.plan(row_sum(), B3)
    assert not b.failed and [f.name for f in b.layout.fields][:2] == ["tilingKey", "partials_ptr_bytes"]
    files = build.render_files(b)
    assert "op.Init(x, out, GetUserWorkspace(workspace), tilingData);" in files["op_project/op_kernel/row_sum_custom.cpp"]
    assert "op.Init(x_ptr, out_ptr, workspace, tilingData);" in files["kernel/row_sum_kernel.cpp"]
    assert ("workspaces[0] = ascendcPlatform.GetLibApiWorkSpaceSize() + static_cast<size_t>(RowSumWorkspaceSize(plain));"
            in files["op_project/op_host/row_sum_custom.cpp"])
    assert "static_cast<size_t>(RowSumWorkspaceSize(tilingData)), 32);  // the launch plan's scratch" in files["kernel/main.cpp"]
    folder = build.write(b, tmp_path)
    rows, _ = verify.verify_build(b, folder)
    assert [r for r in rows if not r.ok] == []
    assert {"interpreter", "sim", "op_kernel", "main.cpp"} <= {r.backend for r in rows}, rows
    report.write(b, folder)
    assert ("user workspace <span class=\"workspace\">64</span> B (the launch plan's scratch, past the system "
            "workspace)") in (folder / "report.html").read_text()  # 3x700: 3 rows of 3 float32 parts


def test_the_tiling_functions_workspace_is_the_python_hosts(tmp_path):
    op = row_sum()
    b = build.plan(op, B3)
    sweep = [((host_desc(s),), {}) for s in [(1, 1), (3, 700), (40, 4096), (1000, 257), (0, 5), (7, 0), (2, 4097), (5,)]]
    assert check_equivalence(tmp_path, op, None, sweep, built=b) == {0, 1}
    got = host.python_tiling(op, b.layout, b.variants, B3, (host_desc((1000, 257)),), {})
    assert got.workspace_bytes == 1000 * 2 * 4 == dict(got.fields)["partials_ptr_bytes"]
    odd = host.python_tiling(op, b.layout, b.variants, B3, (host_desc((3, 700)),), {})
    assert odd.workspace_bytes == 64  # 9 float32, rounded up to 32 bytes


def host_desc(shape, dtype="float32"):
    return ascdsl.TensorDesc(tuple(shape), dtypes.lookup(dtype))


@needs_kernel_headers
@needs_host_headers
def test_the_op_project_type_checks_against_cann(tmp_path):
    b = build.plan(row_sum(), B3)
    folder = build.write(b, tmp_path)
    type_check(cann_flags(), kernel_with_tiling(b, tmp_path))
    op_host = folder / "op_project" / "op_host"
    type_check(host_flags(), op_host / f"{b.project_name}.cpp", op_host)


# ---------------------------------------------------------------------- located errors

@ascdsl.jit
def two_phase(x_ptr, out_ptr, partials_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(partials_ptr + i, tl.load(x_ptr + i, mask=i < n, other=0.0))
    tl.store(out_ptr + i, tl.load(partials_ptr + i), mask=i < n)


def bad_launch(scratch, *arrays):
    """A Launch of ``two_phase`` with ``scratch``, called on ``arrays`` if any (the line after this docstring)."""
    plan = ascdsl.Launch(two_phase, grid=(1,), constexprs={"BLOCK": 64}, scalars={"n": 8}, scratch=scratch)
    return plan(*arrays, backend="interpreter") if arrays else plan


LAUNCH_LINE = bad_launch.__code__.co_firstlineno + 2


@pytest.mark.parametrize("scratch, message", [
    ({"nope": (tl.float32, 8)}, "scratch 'nope': `two_phase` has no pointer parameter 'nope'"),
    ({"BLOCK": (tl.float32, 8)}, "has no pointer parameter 'BLOCK' (it is a constexpr)"),
    ({"n": (tl.float32, 8)}, "has no pointer parameter 'n' (it is a runtime scalar)"),
    ({"partials_ptr": (np.float32, 8)}, "is not a language dtype"),
    ({"partials_ptr": ("float32", 8)}, "is not a language dtype"),
    ({"partials_ptr": (tl.float32, 2.5)}, "the element count must be an int, got 2.5"),
    ({"partials_ptr": (tl.float32, -3)}, "scratch 'partials_ptr': -3 elements, a negative size"),
    ({"partials_ptr": tl.float32}, "is a (dtype, element count) pair"),
])
def test_a_bad_scratch_is_located_at_the_launch(scratch, message):
    with pytest.raises(ascdsl.CompilationError) as info:
        bad_launch(scratch)
    e = info.value
    assert (e.loc.file, e.loc.line) == (__file__, LAUNCH_LINE) and message in e.message, str(e)


def test_a_scratch_the_arrays_fill_too_is_located_at_the_launch():
    x, out = np.zeros(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(ascdsl.CompilationError) as info:
        bad_launch({"partials_ptr": (tl.float32, 64)}, x, out, out)
    assert (info.value.loc.file, info.value.loc.line) == (__file__, LAUNCH_LINE), str(info.value)
    assert "scratch 'partials_ptr' is also given as an array" in info.value.message
    bad_launch({"partials_ptr": (tl.float32, 64)}, x + 2, out)
    assert (out == 2).all()


OP_FILE = '''\
import ascdsl
import ascdsl.language as tl
from tests.host.test_scratch import two_phase


@ascdsl.host
def h(x):
    if x.ndim > 5:
        {launch}  #<
    return ascdsl.Launch(two_phase, grid=(1,), constexprs={{"BLOCK": 64}}, scalars={{"n": x.numel}},
                         scratch={{"partials_ptr": (tl.float32, 64)}})


OP = ascdsl.Operator(name="t", op_type="T", entry=lambda x: x, reference=lambda x: x, host=h, dtypes=("float32",),
                     cases=[ascdsl.Case((8,))])
'''


@pytest.mark.parametrize("scratch, message", [
    ('{"x_ptr": (tl.float32, 8)}', "two_phase has no pointer parameter 'x_ptr' past the op's 2 tensors"),
    ('{"partials_ptr": ("float32", 8)}', "scratch 'partials_ptr': the dtype must be a language dtype"),
    ('{"partials_ptr": (tl.float32, 2.5)}', "scratch 'partials_ptr': the element count must be an int, got a float"),
    ('{"partials_ptr": tl.float32}', "scratch 'partials_ptr' is a (dtype, element count) pair"),
    ("tl.float32", "constexprs, scalars and scratch are dict literals with string keys"),
])
def test_a_bad_scratch_in_host_code_the_cases_miss_is_located_by_the_build(tmp_path, scratch, message):
    launch = (f'return ascdsl.Launch(two_phase, grid=(1,), constexprs={{"BLOCK": 64}}, scalars={{"n": 8}}, '
              f'scratch={scratch})')
    path = tmp_path / "bad_scratch.py"
    path.write_text(OP_FILE.format(launch=launch))
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "#<" in t)
    op, = load_operators([path])
    with pytest.raises(ascdsl.CompilationError) as info:
        build.check_host(op, B3)
    assert (info.value.loc.file, info.value.loc.line) == (str(path), line), str(info.value)
    assert message in info.value.message, str(info.value)


def test_a_negative_size_is_the_same_value_error_in_cpp(tmp_path):
    path = tmp_path / "negative.py"
    path.write_text(OP_FILE.format(launch="pass").replace('(tl.float32, 64)', '(x.dtype, x.shape[0] - 4)'))
    op, = load_operators([path])
    b = build.plan(op, B3)
    assert "* DTypeSize(x.dtype) + 31) / 32 * 32;" in build.render_files(b)["kernel/t_tiling.h"]  # the tensor's dtype
    sweep = [((host_desc((n,)),), {}) for n in (0, 3, 4, 9)]
    assert check_equivalence(tmp_path, op, None, sweep, built=b, platforms=PLATFORMS[:1]) == {0, 1}
    got = host.python_tiling(op, b.layout, b.variants, B3, (host_desc((1,)),), {})
    assert (got.status, got.message) == (1, "scratch 'partials_ptr': -3 elements, a negative size")


@ascdsl.jit
def dot_with_scratch(a_ptr, b_ptr, c_ptr, scratch_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + i[:, None] * BLOCK + i[None, :])
    b = tl.load(b_ptr + i[:, None] * BLOCK + i[None, :])
    tl.store(c_ptr + i[:, None] * BLOCK + i[None, :], tl.dot(a, b))


CUBE_FILE = '''\
import ascdsl
import ascdsl.language as tl
from tests.host.test_scratch import dot_with_scratch


@ascdsl.host
def h(a, b):
    return ascdsl.Launch(dot_with_scratch, grid=(1,), constexprs={"BLOCK": 16},  #<
                         scratch={"scratch_ptr": (tl.float32, 16)})


OP = ascdsl.Operator(name="t", op_type="T", entry=lambda a, b: a, reference=lambda a, b: a, host=h,
                     outputs=(ascdsl.Output("c", dtype="float32"),), dtypes=(("float16", "float16", "float32"),),
                     cases=[ascdsl.Case((16, 16), (16, 16), dtype="float16")])
'''


def test_scratch_of_a_cube_kernel_in_a_build_is_located(tmp_path):
    path = tmp_path / "cube_scratch.py"
    path.write_text(CUBE_FILE)
    op, = load_operators([path])
    with pytest.raises(ascdsl.CompilationError) as info:
        build.check_host(op, B3)
    line = next(i for i, t in enumerate(CUBE_FILE.splitlines(), 1) if "#<" in t)
    assert (info.value.loc.file, info.value.loc.line) == (str(path), line), str(info.value)
    assert "an op project gives scratch only to kernels on the vector cores" in info.value.message


def test_only_a_negative_count_depends_on_the_inputs():
    """A negative count is an input's problem (an InputValueError too: the tiling function's VALUE_ERROR, a probe
    shape skipped); a bad name is the code's, which no input makes good."""
    with pytest.raises(ascdsl.InputValueError):
        bad_launch({"partials_ptr": (tl.float32, -1)})
    with pytest.raises(ascdsl.CompilationError) as info:
        bad_launch({"nope": (tl.float32, 8)})
    assert not isinstance(info.value, ascdsl.InputValueError)
