"""The CANN op project as a CANN engineer meets it: an OpType that cannot shadow a built-in, an
OpDef whose dtypes, formats and SoC come from the declaration and the platform, op_host written to
CANN's conventions (system workspace, storage shapes, logged status returns), a ``TILING_KEY_IS``
branch for every key the tiling function sets, and (with ``ASCEND_HOME_PATH``) op_host type-checking
against CANN 8.1's headers on every platform family."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import build, sim
from ascdsl.backend.host import host
from ascdsl.op import load_operators, project_op_type
from ascdsl.platforms import get_platform
from tests.cann.headers import host_flags, needs_host_headers, needs_kernel_headers, type_check
from tests.sim.test_cann_headers import cann_flags

ROOT = Path(__file__).resolve().parents[2]
OPS = load_operators([ROOT / "ops"])
B3 = get_platform("Ascend910B3")


@ascdsl.jit
def double_and_widen(x_ptr, out_ptr, wide_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offsets, (x * 2.0).to(out_ptr.dtype.element_ty), mask=mask)
    tl.store(wide_ptr + offsets, x, mask=mask)


@ascdsl.host
def double_host(x, platform):
    if x.dtype.name not in ("float32", "float16", "bfloat16"):
        raise TypeError(f"double supports float32, float16 and bfloat16, not {x.dtype}")
    return ascdsl.Launch(double_and_widen, grid=(ascdsl.cdiv(x.numel, 256),), constexprs={"BLOCK": 256},
                         scalars={"n": x.numel})


def double(x, *, platform=None, backend=None):
    out, wide = np.empty_like(x), np.empty(x.shape, np.float32)
    double_host(ascdsl.TensorDesc.of(x), platform)(x, out, wide, backend=backend, platform=platform)
    return out, wide


def double_op(**overrides) -> ascdsl.Operator:
    """An op with a side output declared float32 (``wide``) next to one that follows the input."""
    fields = dict(name="twice", op_type="Double", entry=double, host=double_host,
                  reference=lambda x: (2 * x, x), inputs=("x",),
                  outputs=(ascdsl.Output("out"), ascdsl.Output("wide", dtype="float32")),
                  cases=[ascdsl.Case((300,), dtype=d) for d in ("float32", "float16", "bfloat16")] + [ascdsl.Case((0,))])
    return ascdsl.Operator(**{**fields, **overrides})


def files_of(op, platform=B3) -> tuple[build.OpBuild, dict[str, str]]:
    b = build.plan(op, platform)
    return b, build.render_files(b)


def test_custom_op_types_never_take_a_builtin_name():
    assert project_op_type("SoftmaxGrad") == "SoftmaxGradCustom"
    assert project_op_type("LogSoftmaxBackward") == "LogSoftmaxBackwardCustom"
    assert project_op_type("AddCustom") == "AddCustom"
    for op in OPS:
        assert op.project_op_type == op.op_type + "Custom"
    b, files = files_of(next(op for op in OPS if op.op_type == "SoftmaxGrad"))
    assert json.loads(files["op_project/softmax_grad_custom.json"])[0]["op"] == "SoftmaxGradCustom"
    assert json.loads(files["manifest.json"])["op"]["project_op_type"] == "SoftmaxGradCustom"
    op_host = files["op_project/op_host/softmax_grad_custom.cpp"]
    assert "class SoftmaxGradCustom : public OpDef" in op_host and "OP_ADD(SoftmaxGradCustom);" in op_host
    assert "REGISTER_TILING_DATA_CLASS(SoftmaxGradCustom, " in files["op_project/op_host/softmax_grad_custom_tiling.h"]
    assert "void softmax_grad_custom(GM_ADDR grad" in files["op_project/op_kernel/softmax_grad_custom.cpp"]
    assert "aclnnSoftmaxGradCustom(workspace" in files["op_project/README.md"]
    assert not any(path.startswith("op_project/") and "/softmax_grad." in path for path in files)


def test_the_declaration_can_name_the_op_type():
    b, files = files_of(double_op(project_op_type="MyDouble"))
    assert b.project_name == "my_double"
    assert json.loads(files["op_project/my_double.json"])[0]["op"] == "MyDouble"
    assert "OP_ADD(MyDouble);" in files["op_project/op_host/my_double.cpp"]
    assert "void my_double(GM_ADDR x, GM_ADDR out, GM_ADDR wide," in files["op_project/op_kernel/my_double.cpp"]


def test_a_side_output_declared_float32_is_registered_as_float32_only():
    b, files = files_of(double_op())
    desc = {d["name"]: d for d in json.loads(files["op_project/double_custom.json"])[0]["output_desc"]}
    assert desc["out"]["type"] == ["float", "float16", "bfloat16"]
    assert desc["wide"]["type"] == ["float", "float", "float"]
    assert desc["wide"]["format"] == ["ND"] * 3
    op_host = files["op_project/op_host/double_custom.cpp"]
    wide = op_host[op_host.index('this->Output("wide")'):]
    assert ".DataType({ ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT })" in wide.split(";")[0]
    assert "context->SetOutputDataType(1, ge::DT_FLOAT);" in op_host


@pytest.mark.parametrize("platform,soc", [("Ascend910B3", "ascend910b"), ("Ascend910_9391", "ascend910_93"),
                                          ("Ascend310P3", "ascend310p")])
def test_opdef_registers_the_chosen_platform(platform, soc):
    plat = get_platform(platform)
    b, files = files_of(double_op(), plat)
    op_host = files["op_project/op_host/double_custom.cpp"]
    assert f'AddConfig("{soc}")' in op_host and op_host.count("AddConfig(") == 1
    columns = json.loads(files["op_project/double_custom.json"])[0]["input_desc"][0]["type"]
    opdef = op_host[op_host.index("class DoubleCustom"):]
    if plat.has_bf16:
        assert columns == ["float", "float16", "bfloat16"] and "DT_BF16" in opdef
    else:
        signature = files["op_project/README.md"].split("format ND")[0]
        assert columns == ["float", "float16"] and "DT_BF16" not in opdef and "bfloat16" not in signature


def test_op_host_follows_cann_conventions():
    for op in OPS:
        b, files = files_of(op)
        op_host = files[f"op_project/op_host/{b.project_name}.cpp"]
        user = host.workspace_function(op, b.layout, b.variants, b.platform)  # a MIX kernel's products
        assert ("workspaces[0] = ascendcPlatform.GetLibApiWorkSpaceSize()" +
                (f" + static_cast<size_t>({user.name}(plain));" if user else ";")) in op_host
        assert "GetStorageShape()" in op_host and "GetOriginShape" not in op_host
        for banned in ("fprintf", "throw", "printf(", "std::cerr"):
            assert banned not in op_host, banned
        failures = op_host.count("return ge::GRAPH_FAILED;") + op_host.count("return GRAPH_FAILED;")
        assert failures == op_host.count("_LOGE(context, ") - 1  # each one logged (and the macro's definition)


def test_op_kernel_has_a_branch_for_every_tiling_key_and_key_0_does_nothing(tmp_path):
    op = double_op()
    b, files = files_of(op)
    kernel = files["op_project/op_kernel/double_custom.cpp"]
    for key in [0, *(v.key for v in b.variants)]:
        assert kernel.count(f"TILING_KEY_IS({key})") == 1
    source = tmp_path / "double_custom.cpp"  # with the struct the project build generates
    source.write_text("#include <cstdint>\n" + b.layout.struct_source() + kernel)
    x = np.zeros(0, np.float32)
    out, wide = np.full(8, 7.0, np.float32), np.full(8, 7.0, np.float32)
    res = sim.run_kernel(source, "double_custom", [x, out, wide, None, b.layout.pack({"tilingKey": 0})], 1, B3.name,
                         tiling_key=0, tiling_type=b.layout.struct_name)
    assert (res.stats.vector_calls, res.stats.gm_write_bytes) == ({}, 0) and (out == 7.0).all() and (wide == 7.0).all()


@needs_host_headers
@pytest.mark.parametrize("platform", ["Ascend910B3", "Ascend910_9391", "Ascend310P3"])
@pytest.mark.parametrize("op", [*OPS, double_op()], ids=lambda op: getattr(op, "name", op))
def test_op_host_type_checks_against_cann(op, platform, tmp_path):
    b = build.plan(op, get_platform(platform))
    folder = build.write(b, tmp_path) / "op_project" / "op_host"
    type_check(host_flags(), folder / f"{b.project_name}.cpp", folder)


def test_a_platform_without_bf16_builds_no_bf16_variant():
    op = next(op for op in OPS if op.name == "scale_add")
    b, files = files_of(op, get_platform("Ascend310P3"))
    assert b.variants and not b.failed
    kernels = [v.kernel for v in b.variants]
    assert all("bfloat16" not in str(p.type.dtype) for k in kernels for p in k.params)
    assert "bfloat16_t" not in files["kernel/scale_add_kernel.cpp"]
    assert {p.type.dtype.element_ty.name for k in kernels for p in k.params[:1]} == {"float32", "float16"}


def m200_flags() -> list[str]:
    """``cann_flags`` for the 310P (dav-m200), as tikicpulib::Ascend310P3 defines them."""
    swap = {"-D__CCE_AICORE__=220": "-D__CCE_AICORE__=200", "-D__DAV_C220__": "-D__DAV_M200__"}
    return [swap.get(f, f) for f in cann_flags()]


@needs_kernel_headers
@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_310p_kernels_type_check_against_cann_m200(op, tmp_path):
    b = build.plan(op, get_platform("Ascend310P3"))
    folder = build.write(b, tmp_path)
    type_check(m200_flags(), folder / "kernel" / f"{b.name}_kernel.cpp")
