"""`ascdsl build`: the files, the manifest against its schema, byte-identical rebuilds, and the
generated kernel/main.cpp and op_project/op_kernel/<op>.cpp run on the simulator for every variant."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ascdsl import build, planner, report, sim
from ascdsl.backend.cube.mix import is_mix
from ascdsl.backend.lift import lift
from ascdsl.backend.render import ascendc
from ascdsl.backend.host import host
from ascdsl.cli import main as cli_main
from ascdsl.op import load_operators, specializations
from ascdsl.opbuild import render_sources
from ascdsl.platforms import get_platform
from ascdsl.testing import assert_close, expected_outputs
from ascdsl.verify import case_arguments

ROOT = Path(__file__).resolve().parents[2]
OP_FILES = sorted((ROOT / "ops").glob("*.py"))
PLATFORM = get_platform("Ascend910B3")


def buildable(path: Path):
    """The op's build plan and files, or a skip naming why the backend cannot build it yet."""
    op, = load_operators([path])
    b = build.plan(op, PLATFORM)
    if b.failed:
        pytest.skip(f"{path.name} does not build completely yet: {str(b.failed[0][1]).splitlines()[0]}")
    return b, build.render_files(b)


def test_build_writes_every_file_and_two_builds_are_identical(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    for out in ("a", "b"):
        assert cli_main(["build", "ops/scale_add.py", "-o", str(tmp_path / out), "--no-verify"]) == 0
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    for rel in ("kernel/scale_add_kernel.cpp", "kernel/scale_add_tiling.h", "kernel/main.cpp",
                "kernel/CMakeLists.txt", "op_project/scale_add_custom.json",
                "op_project/op_host/scale_add_custom_tiling.h", "op_project/op_host/scale_add_custom.cpp",
                "op_project/op_kernel/scale_add_custom.cpp", "op_project/README.md",
                "manifest.json", "report.txt", "ir/01_scale_add_kernel.ir"):
        assert Path("scale_add") / rel in files
    for rel in files:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel


@pytest.mark.parametrize("path", OP_FILES, ids=lambda p: p.stem)
def test_manifest_matches_its_schema_and_the_files(path):
    jsonschema = pytest.importorskip("jsonschema")
    b, files = buildable(path)
    manifest = json.loads(files["manifest.json"])
    jsonschema.validate(manifest, json.loads(build.SCHEMA.read_text()))
    assert [v["key"] for v in manifest["variants"]] == list(range(1, len(b.variants) + 1))
    offsets = b.layout.numpy_dtype.fields
    assert [(f["name"], f["offset"]) for f in manifest["tiling"]["fields"]] == \
        [(f.name, offsets[f.name][1]) for f in b.layout.fields]
    assert set(manifest["files"]) == set(files) - {"manifest.json", "report.txt"}
    op_host = files[f"op_project/op_host/{b.project_name}_tiling.h"]
    for f in b.layout.fields:
        assert f"TILING_DATA_FIELD_DEF({f.dtype.cpp}, {f.name});" in op_host
    assert f'"op": "{b.op.op_type}Custom"' in files[f"op_project/{b.project_name}.json"]


@pytest.mark.parametrize("path", OP_FILES, ids=lambda p: p.stem)
def test_main_cpp_runs_every_variant_on_the_simulator(path, tmp_path):
    b, files = buildable(path)
    folder = tmp_path / b.name
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    checks = build.verify_main(b, folder, tmp_path / "work")
    assert len(checks) == len(b.variants)
    assert [c for c in checks if not c.ok] == []


@pytest.mark.parametrize("path", OP_FILES, ids=lambda p: p.stem)
def test_op_kernel_runs_every_variant_on_the_simulator(path, tmp_path):
    b, files = buildable(path)
    # the op project's build prepends the kernel-side struct generated from BEGIN_TILING_DATA_DEF
    source = tmp_path / f"{b.project_name}.cpp"
    source.write_text("#include <cstdint>\n" + b.layout.struct_source() + files[f"op_project/op_kernel/{b.project_name}.cpp"])
    seen = set()
    for case in b.cases:  # the op's cases, then the build's probe cases (variants no case runs)
        args = case_arguments(b.op, case)
        if args is None:  # only the Python entry can express it
            continue
        arrays, descs, attrs = args
        got = host.python_tiling(b.op, b.layout, b.variants, PLATFORM, descs, attrs)
        key = dict(got.fields).get("tilingKey", 0) if got.status == 0 else 0
        if key == 0 or key in seen:
            continue
        seen.add(key)
        outs = [np.zeros(b.op.output_shape(o, descs, attrs), b.op.output_dtype(o, descs).np) for o in b.op.outputs]
        tiling = b.layout.pack(dict(got.fields))
        # a MIX kernel's products and a launch's scratch go through the user workspace its tiling sizes (NaN until
        # written)
        workspace = np.full(got.workspace_bytes // 4, np.nan, np.float32) if got.workspace_bytes else None
        (v,) = [v for v in b.variants if v.key == key]
        sim.run_kernel(source, b.project_name, [*arrays, *outs, workspace, tiling], got.block_dim, PLATFORM.name,
                       tiling_key=key, tiling_type=b.layout.struct_name, mix=is_mix(v.kernel, PLATFORM))
        for out, e in zip(outs, expected_outputs(b.op, arrays, dict(case.attrs))):
            assert_close(out, e, out.dtype and b.op.output_dtype(b.op.outputs[0], descs))
    assert seen == {v.key for v in b.variants}


def test_a_variant_the_backend_rejects_is_reported_and_fails_the_build(tmp_path, monkeypatch, capsys):
    from ascdsl.errors import CompilationError, Loc
    real = ascendc.render_classes

    def reject_second(variants, layout, platform):
        if any(v.key == 2 for v in variants):
            raise CompilationError(Loc("ops/scale_add.py", 7, 5), "not emittable in this test")
        return real(variants, layout, platform)

    monkeypatch.setattr(ascendc, "render_classes", reject_second)
    assert cli_main(["build", str(ROOT / "ops" / "scale_add.py"), "-o", str(tmp_path), "--no-verify"]) == 1
    out, err = capsys.readouterr()
    assert "variant 2 (scale_add_kernel" in err and "ops/scale_add.py:7:5: error: not emittable" in err
    folder = tmp_path / "scale_add"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert [f["key"] for f in manifest["failed_variants"]] == [2]
    assert 2 not in [v["key"] for v in manifest["variants"]]
    assert "ScaleAddKernelV2" not in (folder / "kernel" / "scale_add_kernel.cpp").read_text()
    assert "NOT EMITTED" in (folder / "report.txt").read_text()
    assert "FAIL" in out


def test_two_build_processes_write_byte_identical_trees(tmp_path):
    """Separate interpreters (different hash seeds): nothing in the output depends on process state."""
    import os
    import subprocess
    import sys
    trees = []
    for out, seed in (("a", "1"), ("b", "2")):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-m", "ascdsl", "build", "ops/", "-o", str(tmp_path / out), "--no-verify"],
                       cwd=ROOT, env=env, check=True, capture_output=True)
        trees.append({p.relative_to(tmp_path / out): p.read_bytes()
                      for p in sorted((tmp_path / out).rglob("*")) if p.is_file()})
    assert len(trees[0]) > 40 and trees[0].keys() == trees[1].keys()
    assert [rel for rel in trees[0] if trees[0][rel] != trees[1][rel]] == []


@pytest.mark.parametrize("name", ["softmax_grad.py", "matmul.py"])
def test_a_build_plans_each_kernel_once_and_renders_each_class_once(name):
    """The build's files and report read one rendering of the classes (the kernel file and the op
    project's kernel hold the same text), and no kernel runs through the passes twice."""
    op, = load_operators([ROOT / "ops" / name])
    before = ascendc.work()
    b = build.plan(op, PLATFORM)
    files = build.render_files(b)
    report.html(b, {})
    done = ascendc.work() - before
    renders = {key[1]: n for key, n in done.items() if key[0] == "render"}
    assert {row["class"].partition("<")[0] for row in b.manifest["variants"]} <= set(renders)
    assert {c: n for c, n in renders.items() if n != 1} == {}
    assert [key[1] for key, n in done.items() if key[0] == "plan" and n != 1] == []
    classes = str(b.classes)
    assert classes in files[f"kernel/{b.name}_kernel.cpp"] and classes in files[f"op_project/op_kernel/{b.project_name}.cpp"]


def test_a_build_lowers_the_host_code_once(monkeypatch):
    """The tiling header, main.cpp and the op project's op_host read one lowering of the host function
    (:func:`.host.lower`), and the files it gives are the ones each lowering would give."""
    op, = load_operators([ROOT / "ops" / "scale_add.py"])
    b = build.plan(op, PLATFORM)
    lowerings = []
    lower_tiling = host.lower_tiling
    monkeypatch.setattr(host, "lower_tiling", lambda *a: lowerings.append(a) or lower_tiling(*a))
    files = build.render_files(b)
    assert len(lowerings) == 1
    code = host.lower(op, b.layout, b.variants, b.platform)
    assert files[f"kernel/{b.name}_tiling.h"] == host.tiling_header(code, b.source)
    assert code.tiling.name in files["kernel/main.cpp"] and code.tiling.name in files[
        f"op_project/op_host/{b.project_name}.cpp"]


def test_the_manifest_compiles_no_footprint_sample():
    """The manifest's footprints are the plans' own (the UB planner's expression for a lifted variant): writing it
    plans no kernel the build did not (the sampled footprint planned each int constexpr at two and four times its
    value: softmax_grad's ``ALIGN`` as well, other variants' plans) and compiles no lift sample."""
    ascendc._planned.cache_clear()  # what earlier tests planned counts too
    planner.plan_total.cache_clear()
    op, = load_operators([ROOT / "ops" / "softmax_grad.py"])
    b = build.plan(op, PLATFORM)
    render_sources(b)  # every file but the manifest and report.txt
    plans, samples = ascendc.work(), lift.samples()
    rows = b.manifest["variants"]
    assert [key for key in ascendc.work() - plans if key[0] == "plan"] == [] and lift.samples() == samples
    assert all(row["footprint"] for row in rows)


def test_cube_classes_name_the_op_file_relative_to_the_build_root_whatever_ran_before(monkeypatch):
    """A cube class rendered outside a build (comments relative to the working directory) leaves a later
    build's comments relative to its root: the cube plans' caches key on the root."""
    monkeypatch.chdir(ROOT)
    op, = load_operators([ROOT / "ops" / "matmul.py"])
    first = build.plan(op, PLATFORM)
    assert "// ops/matmul.py:" in ascendc.render_classes(first.variants, first.layout, PLATFORM)
    text = build.render_files(build.plan(op, PLATFORM))["kernel/mat_mul_kernel.cpp"]
    assert "// matmul.py:" in text and "ops/matmul.py" not in text


def test_the_build_command_reports_one_render_per_class(tmp_path, capsys):
    assert cli_main(["build", str(ROOT / "ops" / "scale_add.py"), "-o", str(tmp_path), "--no-verify"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    renders = int(last.rpartition(" kernel plans, ")[2].removesuffix(" class renders"))
    manifest = json.loads((tmp_path / "scale_add" / "manifest.json").read_text())
    assert renders == len({row["class"].partition("<")[0] for row in manifest["variants"]}) > 0


def test_a_build_runs_the_host_code_on_the_probe_shapes_once(monkeypatch):
    """The probe shapes' kernels and the probe cases (what verification runs) come from one run of the
    host code on the probe shapes."""
    op, = load_operators([ROOT / "ops" / "scale_add.py"])
    runs = []
    probe = build.probe_kernels
    monkeypatch.setattr(build, "probe_kernels", lambda *a: runs.append(a) or probe(*a))
    b = build.plan(op, PLATFORM)
    assert len(runs) == 1
    cases = build.case_kernels(op, PLATFORM)
    assert b.probes == build.probe_cases(b.variants, cases, probe(op, PLATFORM))


def test_the_build_compiles_what_the_op_projects_tiling_function_launches():
    """softmax_grad's Python entry takes ``packed_kernel`` (a kernel per row length) for its cases' rows of 31,
    33 and 7 elements; the op project's tiling function (the host function with ``packed=False``) never
    selects it, so the build compiles ``rows_kernel`` for them, and no variant that no case selects."""
    op, = load_operators([ROOT / "ops" / "softmax_grad.py"])
    entry = {k.name for k in specializations(op, opdef_only=True, platform=PLATFORM.name).kernels}
    built = {k.name for k in build.case_kernels(op, PLATFORM)}
    assert "packed_kernel" in entry and "packed_kernel" not in built
    assert built == {"rows_kernel", "two_pass_kernel"}
