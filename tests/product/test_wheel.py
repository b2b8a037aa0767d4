"""The wheel as a pip user gets it: built from a copy of the checkout, installed into a fresh venv,
used from another working directory (templates and simulator headers must come from the wheel)."""
import importlib.util
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEPENDENCIES = ("numpy", "jinja2", "lark", "ml_dtypes", "tqdm")

SIM_SCRIPT = """
import numpy as np, ascdsl, ascdsl.language as tl
from ascdsl.backend.render import jinja as render
from ascdsl.sim import build

@ascdsl.jit
def double(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)

x = np.arange(100, dtype=np.float32)
out = np.empty_like(x)
double[(2,)](x, out, 100, BLOCK=64, backend="sim")
assert np.array_equal(out, 2 * x), out
print(ascdsl.__file__)
print(render.TEMPLATES)
print(build.INCLUDE_DIR)
"""


def _copy_checkout(dest: Path) -> Path:
    skip = shutil.ignore_patterns("build", ".venv", "*.egg-info", "__pycache__", ".pytest_cache",
                                  ".hypothesis", ".git")
    shutil.copytree(ROOT, dest, ignore=skip)
    return dest


def _wheel(src: Path, out: Path) -> Path:
    # build in this interpreter when it can make wheels (setuptools >= 70.1 has bdist_wheel, older
    # ones need the `wheel` package); otherwise pip's isolated build fetches setuptools
    can = importlib.util.find_spec("setuptools.command.bdist_wheel") or importlib.util.find_spec("wheel")
    isolation = ["--no-build-isolation"] if can else []
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "-q", "-w", str(out), str(src)],
                   check=True, capture_output=True, text=True)
    (wheel,) = out.glob("ascdsl-*.whl")
    return wheel


def _fresh_venv(path: Path) -> Path:
    """A venv whose only ascdsl is the wheel; the dependencies come from this interpreter's
    site-packages through a plain path entry (its ``.pth`` files, the editable install among them,
    are not processed)."""
    venv.create(path, with_pip=False)
    site = next(path.glob("lib/python*/site-packages"))
    deps = sorted({str(Path(importlib.util.find_spec(d).origin).parents[1]) for d in DEPENDENCIES})
    (site / "ascdsl_test_deps.pth").write_text("\n".join(deps) + "\n")
    return path / "bin" / "python"


@pytest.mark.slow
def test_wheel_builds_and_simulates_from_another_folder(tmp_path):
    wheel = _wheel(_copy_checkout(tmp_path / "src"), tmp_path / "dist")
    python = _fresh_venv(tmp_path / "venv")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(wheel)],
                   check=True, capture_output=True, text=True)
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(ROOT / "ops" / "scale_add.py", work / "scale_add.py")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ASCDSL_TEMPLATES")}
    # a g++ cache of its own: the installed headers are compiled from scratch, as a new user's are
    env["ASCDSL_CACHE_DIR"] = str(tmp_path / "cache")

    (work / "double.py").write_text(SIM_SCRIPT)
    run = subprocess.run([str(python), "double.py"], cwd=work, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    package, templates, include = run.stdout.split()
    installed = tmp_path / "venv"
    for path in (package, templates, include):
        assert Path(path).resolve().is_relative_to(installed.resolve()), path
    assert (Path(templates) / "kernel.cpp.j2").is_file()
    assert (Path(package).parent / "schema" / "manifest.schema.json").is_file()  # the manifest's schema too

    built = subprocess.run([str(tmp_path / "venv" / "bin" / "ascdsl"), "build", "scale_add.py", "-o", "out"],
                           cwd=work, env=env, capture_output=True, text=True)
    assert built.returncode == 0, built.stdout + built.stderr
    assert len(list((work / "out" / "scale_add" / "kernel").glob("*_kernel.cpp"))) == 1
    assert "FAIL" not in built.stdout and " sim " in built.stdout, built.stdout
