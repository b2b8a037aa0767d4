"""Launching kernels: grid forms, specialisation and its cache, argument conversion (NumPy,
bfloat16, PyTorch), backend and platform selection."""
import importlib
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import record
from ascdsl.ir import Op, Type, walk
from tests.kernels.basic import add_kernel, scale_add_kernel, softmax_kernel

jit_module = importlib.import_module("ascdsl.jit")  # (ascdsl.jit is the decorator)


@pytest.fixture
def recorded(monkeypatch):
    """A backend that records what it is given instead of running."""
    calls = []
    monkeypatch.setitem(jit_module.BACKENDS, "recorded", jit_module.Backend("recorded", lambda *call: calls.append(call)))
    return calls


def test_a_backend_value_runs_the_launch_without_registering():
    """``backend=`` takes a :class:`ascdsl.jit.Backend` as well as a name (verification runs cases
    through its own "sim" this way, leaving the registry alone); records name it by its name."""
    calls = []
    before = dict(jit_module.BACKENDS)
    out = np.zeros(8, np.int32)
    with record.launches() as seen:
        grid_kernel[(4,)](out, SCALE=2, backend=jit_module.Backend("sim", lambda *call: calls.append(call)))
    assert [c[2] for c in calls] == [(4, 1, 1)] and calls[0][1][0] is out
    assert [launch.backend for launch in seen] == ["sim"] and jit_module.BACKENDS == before
    assert not out.any()  # the value's runner ran, not the registered simulator


@pytest.fixture
def interpreter():
    return pytest.importorskip("ascdsl.interpreter")


@ascdsl.jit
def grid_kernel(out_ptr, SCALE: tl.constexpr = 1):
    pid = tl.program_id(0) + tl.program_id(1) * tl.num_programs(0) + \
        tl.program_id(2) * tl.num_programs(0) * tl.num_programs(1)
    tl.store(out_ptr + pid, pid * SCALE)


@pytest.mark.parametrize("grid, expected", [((3,), (3, 1, 1)), ([2, 3], (2, 3, 1)), ((2, 2, np.int64(2)), (2, 2, 2)),
                                            (lambda meta: (meta["out_ptr"].size // meta["SCALE"],), (4, 1, 1))])
def test_grid_forms(recorded, grid, expected):
    out = np.zeros(8, np.int32)
    grid_kernel[grid](out, SCALE=2, backend="recorded")
    ((kernel, args, grid_seen, platform),) = recorded
    assert grid_seen == expected and platform == "Ascend910B3"
    assert kernel.constexprs == (("SCALE", 2),) and args[0] is out


def test_lambda_grid_sees_every_argument_by_name_with_defaults(recorded):
    seen = {}
    grid_kernel[lambda meta: seen.update(meta) or (1,)](np.zeros(1, np.int32), backend="recorded")
    assert set(seen) == {"out_ptr", "SCALE"} and seen["SCALE"] == 1


def test_an_empty_grid_runs_nothing(recorded):
    grid_kernel[(0,)](np.zeros(1, np.int32), backend="recorded")
    assert recorded == []


def test_grid_kernel_runs_every_program(interpreter):
    out = np.zeros(8, np.int32)
    grid_kernel[(2, 2, 2)](out, SCALE=3)
    assert out.tolist() == [3 * i for i in range(8)]


@ascdsl.jit
def ids_kernel(out_ptr):
    pid = tl.program_id(0) + tl.program_id(1) * tl.num_programs(0) + \
        tl.program_id(2) * tl.num_programs(0) * tl.num_programs(1)
    for axis in tl.static_range(3):
        tl.store(out_ptr + pid * 3 + axis, tl.program_id(axis))


@pytest.mark.parametrize("grid", [(7,), (3, 2), (2, 1, 3), (1, 3, 2)])
def test_program_ids_in_chunks_of_programs(interpreter, monkeypatch, grid):
    monkeypatch.setattr(interpreter.state, "CHUNK_ELEMENTS", 8)  # two programs per chunk: chunks start past 0
    full = tuple(grid) + (1,) * (3 - len(grid))
    out = np.full(3 * np.prod(full), -9, np.int32)
    ids_kernel[grid](out)
    expected = [[x, y, z] for z in range(full[2]) for y in range(full[1]) for x in range(full[0])]
    assert out.reshape(-1, 3).tolist() == expected


# ----------------------------------------------------------------------------- results

@pytest.mark.parametrize("n", [1, 31, 32, 33, 1000])
def test_vector_add(interpreter, n):
    x, y = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
    out = np.full_like(x, -1)
    add_kernel[(ascdsl.cdiv(n, 32),)](x, y, out, n, BLOCK=32)
    assert np.array_equal(out, x + y)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
def test_scale_add_with_masks(interpreter, dtype):
    n = 77
    x, y = (np.random.rand(n).astype(dtype) for _ in range(2))
    out = np.zeros_like(x)
    scale_add_kernel[lambda meta: (ascdsl.cdiv(n, meta["BLOCK"]),)](x, y, out, 0.5, n, BLOCK=16)
    # alpha is a float32 scalar: the product is computed in float32, then stored as the array dtype
    expected = (np.float32(0.5) * x.astype(np.float32) + y.astype(np.float32)).astype(dtype)
    assert np.array_equal(out, expected)


def test_row_softmax(interpreter):
    x = np.random.randn(5, 37).astype(np.float32)
    out = np.zeros_like(x)
    softmax_kernel[(5,)](out, x, x.shape[1], x.shape[1], BLOCK=64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-6)


# ----------------------------------------------------------------------------- specialisation

def test_specialisation_cache(monkeypatch, recorded):
    compiled = []
    original = jit_module.compile_kernel
    monkeypatch.setattr(jit_module, "compile_kernel", lambda *a: compiled.append(a[1]) or original(*a))
    x, kernel = np.zeros(64, np.float32), ascdsl.jit(add_kernel.fn)  # a fresh cache
    for n in (10, 20):  # runtime values do not specialise
        kernel[(1,)](x, x, x, n, BLOCK=64, backend="recorded")
    kernel[(1,)](x, x, x, 10, BLOCK=32, backend="recorded")
    kernel[(1,)](x.astype(np.float16), x.astype(np.float16), x.astype(np.float16), 10, BLOCK=32,
                 backend="recorded")
    assert len(compiled) == 3
    assert recorded[0][0] is recorded[1][0] and recorded[2][0] is not recorded[0][0]


@ascdsl.jit
def fill_kernel(out_ptr, VALUE: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, 4), tl.full((4,), VALUE, tl.float32))


def test_signed_zero_and_nan_constexprs_specialise_by_their_bits(interpreter):
    outs = {}
    for value in (0.0, -0.0, float("nan"), float("nan"), 0.0):
        outs[repr(value)] = out = np.ones(4, np.float32)
        fill_kernel[(1,)](out, VALUE=value)
    assert not np.signbit(outs["0.0"]).any() and np.signbit(outs["-0.0"]).all() and np.isnan(outs["nan"]).all()
    assert len({k for k in fill_kernel._cache}) == 3  # NaN, however many NaN objects, is one specialisation


@pytest.mark.parametrize("value, dtype", [(3, tl.int32), (2**31, tl.int64), (-2**31, tl.int32), (1.5, tl.float32),
                                          (True, tl.int1), (np.float16(1), tl.float16), (np.int64(1), tl.int64),
                                          (np.uint8(1), tl.uint8)])
def test_scalar_argument_dtypes(recorded, value, dtype):
    (kernel,) = scalar_kernel.specialize(np.zeros(1, np.float32), value).kernels
    assert kernel.params[1].type == Type(dtype)
    scalar_kernel[(1,)](np.zeros(1, np.float32), value, backend="recorded")
    ((_, args, _, _),) = recorded
    assert args[1].dtype == dtype.np and args[1] == value  # scalars reach the backend as NumPy scalars


@ascdsl.jit
def scalar_kernel(out_ptr, s):
    tl.store(out_ptr, s)


def test_array_dtypes_become_pointer_types():
    for np_dtype, dtype in [(np.float32, tl.float32), (np.float16, tl.float16), (ml_dtypes.bfloat16, tl.bfloat16),
                            (np.int8, tl.int8), (np.bool_, tl.int1)]:
        (kernel,) = scalar_kernel.specialize(np.zeros(2, np_dtype), 1).kernels
        assert kernel.params[0].type == Type(tl.pointer_type(dtype))


def test_specialize_accepts_types_and_returns_a_cached_module():
    module = add_kernel.specialize(tl.pointer_type(tl.float32), tl.pointer_type(tl.float32),
                                   tl.pointer_type(tl.float32), tl.int32, BLOCK=8)
    (kernel,) = module.kernels
    again = add_kernel.specialize(*(np.zeros(1, np.float32) for _ in range(3)), 5, BLOCK=8)
    assert again.kernels[0] is kernel and Op.LOAD in [i.op for i in walk(kernel.body)]


def test_constexpr_wrappers_and_numpy_scalars_are_unwrapped():
    a = add_kernel.specialize(*(tl.pointer_type(tl.float32),) * 3, 1, BLOCK=tl.constexpr(16)).kernels[0]
    b = add_kernel.specialize(*(tl.pointer_type(tl.float32),) * 3, 1, BLOCK=np.int64(16)).kernels[0]
    assert a is b and a.constexprs == (("BLOCK", 16),)


def test_launches_are_recorded(recorded):
    x = np.zeros(4, np.int32)
    with record.launches() as seen:
        grid_kernel[(4,)](x, backend="recorded")
    assert [(r.grid, r.backend) for r in seen] == [((4, 1, 1), "recorded")]


# ----------------------------------------------------------------------------- backends and platforms

def test_unknown_backend_lists_the_valid_ones(monkeypatch):
    with pytest.raises(ascdsl.Error, match=r"unknown backend 'gpu'; valid backends: .*interpreter"):
        grid_kernel[(1,)](np.zeros(1, np.int32), backend="gpu")
    monkeypatch.setenv("ASCDSL_BACKEND", "nope")
    with pytest.raises(ascdsl.Error, match="unknown backend 'nope'"):
        grid_kernel[(1,)](np.zeros(1, np.int32))


def test_backend_from_the_environment(monkeypatch, recorded):
    monkeypatch.setenv("ASCDSL_BACKEND", "recorded")
    grid_kernel[(1,)](np.zeros(1, np.int32))
    assert len(recorded) == 1


def test_platform_selection(monkeypatch, recorded):
    pytest.importorskip("ascdsl.platforms")
    with pytest.raises(ascdsl.Error, match="Ascend910B3"):  # the message lists the valid platforms
        grid_kernel[(1,)](np.zeros(1, np.int32), backend="recorded", platform="Ascend000")
    monkeypatch.setenv("ASCDSL_PLATFORM", "NotAChip")
    with pytest.raises(ascdsl.Error, match="NotAChip"):
        grid_kernel[(1,)](np.zeros(1, np.int32), backend="recorded")
    grid_kernel[(1,)](np.zeros(1, np.int32), backend="recorded", platform="Ascend910B3")
    assert recorded[-1][3] == "Ascend910B3"


def test_jit_functions_and_builtins_cannot_be_called_directly():
    with pytest.raises(ascdsl.Error, match=r"launch it with grid_kernel\[grid\]"):
        grid_kernel(np.zeros(1))
    with pytest.raises(ascdsl.Error, match=r"tl.load\(\) can only be called inside an @ascdsl.jit function"):
        tl.load(None)
    assert ascdsl.cdiv(10, 4) == 3 and ascdsl.next_power_of_2(33) == 64 and ascdsl.next_power_of_2(1) == 1


def test_source_must_be_available():
    namespace = {"ascdsl": ascdsl}
    exec("def k(x):\n    pass\n", namespace)
    with pytest.raises(ascdsl.Error, match="cannot read the source of `k`"):
        ascdsl.jit(namespace["k"])


# ----------------------------------------------------------------------------- PyTorch

def test_numpy_launches_do_not_import_torch():
    code = ("import sys, numpy as np; from tests.kernels.basic import add_kernel; x = np.zeros(4, np.float32);"
            "add_kernel.specialize(x, x, x, 4, BLOCK=4); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_torch_tensors_are_written_in_place(interpreter, dtype):
    torch = pytest.importorskip("torch")
    x = torch.rand(50, dtype=getattr(torch, dtype))
    y = torch.rand(50, dtype=getattr(torch, dtype))
    out = torch.zeros(50, dtype=getattr(torch, dtype))
    add_kernel[(4,)](x, y, out, 50, BLOCK=16)
    assert torch.equal(out, x + y)


@ascdsl.jit
def strided_double(x_ptr, out_ptr, n, x_stride, out_stride, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(out_ptr + i * out_stride, tl.load(x_ptr + i * x_stride, mask=i < n) * 2, mask=i < n)


def test_strided_torch_views_are_read_and_written_through_their_strides(interpreter):
    torch = pytest.importorskip("torch")
    base = torch.arange(16, dtype=torch.float32).reshape(8, 2)
    x, out = base[:, 1], torch.zeros(8, 3)[:, 2]
    strided_double[(1,)](x, out, 8, x.stride(0), out.stride(0), BLOCK=8)
    assert torch.equal(out, x * 2)
    flipped = np.arange(8, dtype=np.float32)[::-1]
    out = np.zeros(8, np.float32)
    strided_double[(1,)](flipped, out, 8, flipped.strides[0] // 4, 1, BLOCK=8)  # a negative stride
    assert np.array_equal(out, flipped * 2)


# ----------------------------------------------------------------------------- control flow runs

@ascdsl.jit
def row_sums(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    total = tl.sum(acc)
    if row % 2 == 1:
        total = -total
    tl.store(out_ptr + row, total)


def test_loops_and_branches_run(interpreter):
    x = np.random.rand(6, 45).astype(np.float32)
    out = np.zeros(6, np.float32)
    row_sums[(6,)](x, out, 45, BLOCK=16)
    expected = x.sum(axis=1) * np.array([1, -1] * 3)
    np.testing.assert_allclose(out, expected, rtol=1e-5)


@ascdsl.jit
def outer_add(x_ptr, y_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + rows)
    y = tl.load(y_ptr + cols)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], x[:, None] + y[None, :])


def test_two_dimensional_broadcast_runs(interpreter):
    x, y = np.arange(3, dtype=np.float32), np.arange(5, dtype=np.float32) * 10
    out = np.zeros((3, 5), np.float32)
    outer_add[(1,)](x, y, out, M=3, N=5)
    assert np.array_equal(out, x[:, None] + y[None, :])


@ascdsl.jit
def scaled(out_ptr, SCALE: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, 4), tl.arange(0, 4) * SCALE)


def test_constexprs_equal_in_python_but_of_other_types_specialise_apart():
    int_kernel, float_kernel, bool_kernel = (scaled.specialize(tl.pointer_type(tl.float32), SCALE=s).kernels[0]
                                             for s in (1, 1.0, True))
    stored = [[i for i in walk(k.body) if i.op == Op.MUL][0].result.type.dtype
              for k in (int_kernel, float_kernel)]
    assert stored == [tl.int32, tl.float32]
    assert len({id(int_kernel), id(float_kernel), id(bool_kernel)}) == 3
