"""`ascdsl build` of ops whose `tl.dot` runs on the cube cores (issue 26): ops/matmul.py (a pure-cube variant
and a MIX one, chosen by an attribute), opfiles/linear.py (relu(x @ w + bias), MIX) and opfiles/scaled_operands.py
((2 a) @ (b - 1), a MIX kernel computing its operands before the product) and opfiles/attention.py (a MIX
kernel whose cores take turns at each step of a loop): the kernel type of
every tiling key in the op project, the block dim and the user workspace the generated host code computes,
verification passing, report.html with the cube pipes, the generated C++ against CANN 8.1's headers, and
located errors for what the cube lowering does not cover."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import ascdsl
from ascdsl import build, verify
from ascdsl.backend.host import cores, host
from ascdsl.cli import main as cli_main
from ascdsl.op import load_operators
from ascdsl.platforms import get_platform
from ascdsl.report import _timeline as report_timeline
from ascdsl.sim.cost import CUBE_PIPES
from ascdsl.verify import sample_cases
from tests.backend import cube_kernels
from tests.cann.headers import host_flags, needs_host_headers, needs_kernel_headers, type_check
from tests.product.test_report_html import Page
from tests.sim.test_cann_headers import cann_flags

ROOT = Path(__file__).resolve().parents[2]
LINEAR = Path(__file__).parent / "opfiles" / "linear.py"
OPERANDS = Path(__file__).parent / "opfiles" / "scaled_operands.py"
ATTENTION = Path(__file__).parent / "opfiles" / "attention.py"
B3 = get_platform("Ascend910B3")
AIC, MIX = "KERNEL_TYPE_AIC_ONLY", "KERNEL_TYPE_MIX_AIC_1_2"


def planned(path: Path, platform=B3) -> build.OpBuild:
    op, = load_operators([path])
    return build.plan(op, platform)


def branches(op_kernel: str) -> dict[int, str]:
    """The body of every ``TILING_KEY_IS(key)`` branch of an op kernel's entry."""
    parts = re.split(r"TILING_KEY_IS\((\d+)\)", op_kernel)
    return {int(key): body for key, body in zip(parts[1::2], parts[2::2])}


def test_matmul_op_project_declares_each_keys_kernel_type_and_workspace():
    b = planned(ROOT / "ops" / "matmul.py")
    files = build.render_files(b)
    relu = {v.key: dict(v.kernel.constexprs)["RELU"] for v in b.variants}
    assert sorted(relu.values()) == [False, False, True, True] and not b.failed
    kernel = files["op_project/op_kernel/mat_mul_custom.cpp"]
    # the default is the pure-cube kernels' type; each MIX key declares its own
    assert re.findall(r"KERNEL_TASK_TYPE_DEFAULT\((\w+)\);", kernel) == [AIC]
    assert dict(re.findall(r"KERNEL_TASK_TYPE\((\d+), (\w+)\);", kernel)) == {str(k): MIX for k, r in relu.items() if r}
    body = branches(kernel)
    assert set(body) == {0, *relu}
    for key, r in relu.items():  # a MIX branch: the AIC's class then a flag, the AIVs wait, on the user workspace
        assert ("CrossCoreSetFlag<2, PIPE_FIX>(0);" in body[key]) == r
        assert body[key].count("GetUserWorkspace(workspace), tilingData);") == (2 if r else 0)
        assert (f"MatmulKernelV{key}Vector op;" in body[key]) == r
    manifest = b.manifest
    assert {row["key"]: row["kernel_type"] for row in manifest["variants"]} == \
        {k: MIX if r else AIC for k, r in relu.items()}
    # the footprint: a MIX epilogue's UB slots, constants (a specialisation); none for a pure-cube kernel
    footprints = {row["key"]: [(s["num"], [[(t["fields"], t["num"], t["den"]) for t in n] for n in s["needs"]])
                               for s in row["footprint"]] for row in manifest["variants"]}
    assert footprints == {row["key"]: [(u["num"], [[([], u["bytes"], 1)]]) for u in row["ub_plan"]["buffers"]]
                          if relu[row["key"]] else [] for row in manifest["variants"]}
    assert all(footprints[k] for k, r in relu.items() if r)
    # op_host: the system workspace plus the products'; main.cpp launches each key in its CPU-debug mode
    op_host = files["op_project/op_host/mat_mul_custom.cpp"]
    assert ("workspaces[0] = ascendcPlatform.GetLibApiWorkSpaceSize() + "
            "static_cast<size_t>(MatMulWorkspaceSize(plain));") in op_host
    tiling = files["kernel/mat_mul_tiling.h"]
    size = tiling[tiling.index("inline uint64_t MatMulWorkspaceSize("):]
    assert dict(re.findall(r"case (\d+):  // matmul_kernel: a 64 x 64 float32 product a program\n\s+return programs \* "
                           r"(\d+);", size)) == {str(k): "16384" for k, r in relu.items() if r}
    main = files["kernel/main.cpp"]
    mix_keys = [k for k, r in relu.items() if r]
    assert (f"AscendC::SetKernelMode(tilingData.tilingKey == {mix_keys[0]} ? KernelMode::MIX_MODE : "
            f"tilingData.tilingKey == {mix_keys[1]} ? KernelMode::MIX_MODE : KernelMode::AIC_MODE);") in main
    assert "std::max<size_t>(static_cast<size_t>(MatMulWorkspaceSize(tilingData)), 32)" in main
    # the tiling function: a pure-cube launch and a MIX one both run a block a cube core
    assert "blockDim = static_cast<uint32_t>(std::min<int64_t>(programs, platform.aiCoreNum));" in tiling
    assert "blocks = " not in tiling


def test_a_vector_op_keeps_its_aiv_only_project():
    b = planned(ROOT / "ops" / "scale_add.py")
    files = build.render_files(b)
    kernel = files["op_project/op_kernel/scale_add_custom.cpp"]
    assert re.findall(r"KERNEL_TASK_TYPE(?:_DEFAULT)?\(([^)]*)\);", kernel) == ["KERNEL_TYPE_AIV_ONLY"]
    assert "WorkspaceSize" not in files["kernel/scale_add_tiling.h"] + files["kernel/main.cpp"]
    assert "AscendC::SetKernelMode(KernelMode::AIV_MODE);" in files["kernel/main.cpp"]
    assert {row["kernel_type"] for row in b.manifest["variants"]} == {"KERNEL_TYPE_AIV_ONLY"}


def test_python_tiling_sizes_blocks_and_workspace_as_the_sim_runner():
    b = planned(LINEAR)
    x, w, bias = (ascdsl.TensorDesc(s, ascdsl.dtypes.float16) for s in ((1000, 64), (64, 300), (300,)))
    got = host.python_tiling(b.op, b.layout, b.variants, B3, (x, w, bias), {})
    programs = ascdsl.cdiv(1000, 32) * ascdsl.cdiv(300, 64)
    assert (got.status, got.block_dim, got.workspace_bytes) == (0, B3.ai_core_count, programs * 32 * 64 * 4)
    key = dict(got.fields)["tilingKey"]
    kernel = next(v.kernel for v in b.variants if v.key == key)
    assert cores.of(kernel, B3) is cores.MIX and cores.workspace_bytes(kernel, B3, programs) == got.workspace_bytes


def test_a_mix_blocks_timeline_is_its_cube_core_then_its_slower_vector_core():
    b = planned(LINEAR)
    case = b.op.cases[0]  # 70 x 100 in 32 x 64 tiles: 6 programs, one a block (AIV 0 works, AIV 1 idles)
    ((key, (sample,)),) = sample_cases(b, [case]).items()
    intervals = sample.stats.trace.intervals
    cube = [i for i in intervals if i.pipe in CUBE_PIPES and not i.wait]
    vector = [i for i in intervals if i.pipe == "V" and not i.wait]
    assert cube and vector  # the AIC's products and the working AIV's epilogue, not the idle AIV's nothing
    assert max(i.end for i in cube) <= min(i.start for i in vector)
    assert max(i.end for i in intervals) <= sample.stats.est_cycles
    # each interval names its core, and the report gives each pipe of each core its own row
    assert {i.core for i in cube} == {"AIC"} and {i.core for i in vector} == {"AIV"}
    assert {i.core for i in intervals} == {"AIC", "AIV"}
    lanes = [(lane["core"], lane["name"]) for lane in report_timeline(sample.stats.trace, 6)["lanes"]]
    assert len(lanes) == len(set(lanes)) and {("AIC", "M"), ("AIC", "MTE1"), ("AIV", "V")} <= set(lanes)
    assert lanes.index(("AIC", "M")) < lanes.index(("AIV", "V"))  # the cube core's rows, then the vector core's
    assert all(core == "AIC" for core, pipe in lanes if pipe in CUBE_PIPES)


@pytest.mark.slow
def test_cube_and_mix_ops_build_verify_and_report_their_cube_pipes(tmp_path):
    assert cli_main(["build", str(ROOT / "ops" / "matmul.py"), str(LINEAR), "-o", str(tmp_path)]) == 0
    for name, project in (("matmul", "mat_mul_custom"), ("linear", "linear_relu_custom")):
        folder = tmp_path / name
        for rel in (f"op_project/op_kernel/{project}.cpp", f"op_project/op_host/{project}.cpp", "kernel/main.cpp",
                    "manifest.json", "report.html"):
            assert (folder / rel).is_file(), rel
        text = (folder / "report.html").read_text()
        page = Page(text)
        assert page.urls == []
        sections = text.split('<section class="variant"')[1:]
        for section in sections:
            kind = re.search(r'data-kernel-type="(\w+)"', section).group(1)
            lanes = set(re.findall(r'<g class="pipe" data-pipe="(\w+)"', section))
            assert {"MTE2", "MTE1", "M"} <= lanes, (name, kind, lanes)   # the cube pipes of a verified case
            busy = {r["class"] for r in page.bars if r["panel"] and section.count(f'id="{r["panel"]}"')}
            assert {"busy pipe-M", "busy pipe-MTE1"} <= busy
            if kind == MIX:  # the epilogue's vector work after the products, and the workspace of the shape
                assert "busy pipe-V" in busy and re.search(r'class="workspace">\d+<', section)
            else:
                assert "no UB" in section and 'class="workspace"' not in section
    linear = (tmp_path / "linear" / "op_project" / "op_kernel" / "linear_relu_custom.cpp").read_text()
    assert re.findall(r"KERNEL_TASK_TYPE(?:_DEFAULT)?\(([^)]*)\);", linear) == [MIX]


def test_a_cube_op_on_a_platform_without_separate_cube_cores_is_a_located_error():
    b = planned(ROOT / "ops" / "matmul.py", get_platform("Ascend310P3"))
    assert not b.variants and b.failed
    message = str(b.failed[0][1])
    assert message.startswith("ops/matmul.py:28:15: error: `tl.dot` runs on the cube cores of the Ascend A2/A3")
    assert "acc = tl.dot(a, b, acc)" in message


@ascdsl.host
def scaled_host(a, b, platform):
    return ascdsl.Launch(cube_kernels.matmul_scaled_operand, grid=(ascdsl.cdiv(a.shape[0], 32),),
                         constexprs={"BLOCK": 32}, scalars={"M": a.shape[0], "N": b.shape[1], "K": a.shape[1]})


def _entry(host_function):
    def entry(a, b, *, platform=None, backend=None):
        out = np.empty((a.shape[0], b.shape[1]), np.float32)
        host_function(ascdsl.TensorDesc.of(a), ascdsl.TensorDesc.of(b), platform)(a, b, out, backend=backend,
                                                                                  platform=platform)
        return out
    return entry


scaled = _entry(scaled_host)


def test_vector_work_before_the_product_fails_the_build_at_the_users_line(tmp_path):
    op = ascdsl.Operator(name="scaled", op_type="ScaledMatmul", entry=scaled, host=scaled_host,
                         reference=lambda a, b: np.maximum((2 * a) @ b, 0), inputs=("a", "b"),
                         outputs=(ascdsl.Output("out", dtype="float32"),), dtypes=("float16",),
                         cases=[ascdsl.Case((32, 32), (32, 32), dtype="float16")])
    b = build.plan(op, B3)
    assert not b.variants and len(b.failed) == 1
    message = str(b.failed[0][1])
    assert "cube_kernels.py:" in message.splitlines()[0] and "acc = tl.dot(x * 2.0, w, acc)" in message
    assert "the cube lowering of `tl.dot` does not support" in message
    folder = build.write(b, tmp_path)  # the files are written; the README names the variant
    readme = (folder / "op_project" / "README.md").read_text()
    assert "**Incomplete build**" in readme and "- key 1, `matmul_scaled_operand`" in readme


def test_a_mix_kernel_computing_its_operands_builds_and_verifies_three_ways(tmp_path):
    """The AIVs compute both operands and flag their AIC, which waits for both before its product: the
    interpreter, the op-project kernel on the simulator and the direct-launch program (whose CPU run interleaves
    each block's cores, so the AIC's wait is met) all match the reference."""
    b = planned(OPERANDS)
    assert not b.failed and {cores.of(v.kernel, B3) for v in b.variants} == {cores.MIX}
    assert "CrossCoreWaitFlag<2, PIPE_S>(1);" in build.render_files(b)["op_project/op_kernel/scaled_operands_custom.cpp"]
    rows, _ = verify.verify_build(b, build.write(b, tmp_path))
    assert [r for r in rows if not r.ok] == []
    assert {"interpreter", "sim", "main.cpp"} <= {r.backend for r in rows}, rows


TILING_PRELUDE = """#include <cstdint>
#include "kernel_operator.h"
{struct_source}
template <class T>
__aicore__ inline void LoadTiling(T* dst, GM_ADDR src)
{{
    for (uint32_t i = 0; i < sizeof(T); i++) {{
        reinterpret_cast<uint8_t*>(dst)[i] = reinterpret_cast<__gm__ uint8_t*>(src)[i];
    }}
}}
#define GET_TILING_DATA(var, tiling) {struct} var; LoadTiling(&var, tiling)
"""
"""What CANN's project build puts before the op kernel: the struct and the GET_TILING_DATA of the header it
generates from BEGIN_TILING_DATA_DEF (a copy of the tiling bytes into a local struct)."""


def kernel_with_tiling(b: build.OpBuild, folder: Path) -> Path:
    """The op kernel as CANN's project build compiles it (:data:`TILING_PRELUDE` first)."""
    source = folder / "op_kernel_with_tiling.cpp"
    source.write_text(TILING_PRELUDE.format(struct_source=b.layout.struct_source(), struct=b.layout.struct_name)
                      + b.files[f"op_project/op_kernel/{b.project_name}.cpp"])
    return source


@needs_kernel_headers
@needs_host_headers
@pytest.mark.parametrize("path", [ROOT / "ops" / "matmul.py", LINEAR, ATTENTION], ids=lambda p: p.stem)
def test_cube_op_projects_type_check_against_cann(path, tmp_path):
    b = planned(path)
    folder = build.write(b, tmp_path)
    type_check(cann_flags(), kernel_with_tiling(b, tmp_path))
    op_host = folder / "op_project" / "op_host"
    type_check(host_flags(), op_host / f"{b.project_name}.cpp", op_host)


def test_attention_builds_and_verifies_three_ways(tmp_path):
    """A loop of steps (attention forward, 2 heads x 40 keys in 32-key blocks: 2 steps): the op kernel's
    classes take the user workspace as both their float32 and 16-bit views, as the direct-launch entry's do; the
    interpreter, the op-project kernel on the simulator and the direct-launch program match the reference."""
    b = planned(ATTENTION)
    assert not b.failed and {cores.of(v.kernel, B3) for v in b.variants} == {cores.MIX}
    kernel = build.render_files(b)["op_project/op_kernel/attention_custom.cpp"]
    assert kernel.count("op.Init(q, k, v, out, GetUserWorkspace(workspace), GetUserWorkspace(workspace), "
                        "tilingData);") == 2
    rows, _ = verify.verify_build(b, build.write(b, tmp_path))
    assert [r for r in rows if not r.ok] == []
    assert {"interpreter", "sim", "main.cpp"} <= {r.backend for r in rows}, rows
