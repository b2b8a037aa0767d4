"""Builds are byte-identical from any working directory: generated files name sources relative to
the op file's folder (or a root the caller names), never the working directory."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import ascdsl
from ascdsl import build
from ascdsl.errors import Loc
from ascdsl.platforms import get_platform

REPO = Path(__file__).parents[2]


def files_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_builds_match_from_any_working_directory(tmp_path):
    ops = tmp_path / "project" / "ops"
    ops.mkdir(parents=True)
    shutil.copy(REPO / "ops" / "softmax.py", ops)
    outputs = []
    for i, cwd in enumerate([tmp_path / "project", ops, tmp_path]):
        out = tmp_path / f"out{i}"
        subprocess.run([sys.executable, "-m", "ascdsl", "build", str(ops / "softmax.py"), "-o", str(out), "--no-verify"],
                       cwd=cwd, check=True, capture_output=True, env=dict(os.environ, PYTHONPATH=str(REPO)))
        outputs.append(files_of(out))
    assert outputs[0] == outputs[1] == outputs[2]
    kernel = outputs[0]["softmax/kernel/softmax_kernel.cpp"].decode()
    assert "// softmax.py:" in kernel and str(tmp_path) not in kernel
    assert all(str(tmp_path).encode() not in text for text in outputs[0].values())


def test_a_build_after_chdir_names_the_same_files(tmp_path, monkeypatch):
    sys.path.insert(0, str(REPO / "ops"))
    try:
        import scale_add
    finally:
        sys.path.pop(0)
    platform = get_platform("Ascend910B3")
    first = build.render_files(build.plan(scale_add.OP, platform))
    monkeypatch.chdir(tmp_path)  # the JIT cache still holds kernels compiled before
    second = build.render_files(build.plan(scale_add.OP, platform))
    assert first == second
    assert '"scale_add.py"' in next(t for p, t in first.items() if p.startswith("ir/"))
    named = build.render_files(build.plan(scale_add.OP, platform, root=REPO))
    assert "// ops/scale_add.py:" in named["kernel/scale_add_kernel.cpp"]


def test_locations_survive_a_chdir(tmp_path, monkeypatch):
    expected = os.path.abspath("ops/x.py")
    loc = Loc(ascdsl.errors.source_file("ops/x.py"), 3, 5)
    monkeypatch.chdir(tmp_path)
    assert loc.file == expected and str(loc) == f"{expected}:3:5"
