"""Optional: the test kernels also type-check against a real CANN install's headers (reference §1.2).

Runs only when ``ASCEND_HOME_PATH`` points at a CANN 8.x toolkit (the directory holding ``tools/`` and
``<arch>-linux/``); skipped otherwise.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ascdsl.sim import INCLUDE_DIR

KERNELS = Path(__file__).parent / "kernels"
CHECKED = [
    "add.cpp", "elementwise.cpp", "reduce.cpp", "datacopy.cpp", "faults.cpp", "intops.cpp", "atomics.cpp", "gather.cpp",
    "math.cpp", "api_faults.cpp", "param_types.cpp", "cube.cpp", "mix.cpp", "packed_rows.cpp", "sync_all.cpp",
]
COMPILERS = ("g++", "clang++") if shutil.which("clang++") else ("g++",)


def cann_flags() -> list[str] | None:
    home = os.environ.get("ASCEND_HOME_PATH")
    if not home:
        return None
    root = Path(home)
    arch = sorted(root.glob("*-linux/ascendc/include"))
    if not arch or not (root / "tools/tikicpulib/lib/include").is_dir():
        return None
    a = arch[0]
    return [
        "-std=c++17", "-fsyntax-only", "-D__CCE_AICORE__=220", "-D__DAV_C220__", "-D_GLIBCXX_USE_CXX11_ABI=0",
        "-D__CCE_KT_TEST__=1", "-DASCENDC_CPU_DEBUG=1", "-DASCENDC_DEBUG=1",
        f"-I{root / 'tools/tikicpulib/lib/include'}", f"-I{a / 'basic_api'}", f"-I{a / 'basic_api/interface'}",
        f"-I{a / 'basic_api/impl'}", f"-I{a / 'highlevel_api'}", f"-I{a / 'highlevel_api/lib'}",
        f"-I{a / 'highlevel_api/impl'}", f"-I{a.parent.parent / 'include'}", f"-I{KERNELS}",
    ]


@pytest.mark.skipif(cann_flags() is None, reason="ASCEND_HOME_PATH does not point at a CANN toolkit")
@pytest.mark.parametrize("source", CHECKED)
def test_kernel_type_checks_against_cann(source):
    system = [f"-isystem{f[2:]}" if f.startswith("-I") and f != f"-I{KERNELS}" else f for f in cann_flags()]
    for cxx in COMPILERS:
        proc = subprocess.run([cxx, *system, str(KERNELS / source)], capture_output=True, text=True, check=False)
        assert proc.returncode == 0, f"{cxx}: {proc.stderr[:4000]}"


@pytest.mark.parametrize("cxx", COMPILERS)
def test_parameter_structs_have_cann_field_types(cxx):
    """The simulator declares every parameter struct's fields with CANN 8.1's types (the same file
    passes against the real headers above), so a narrowing initialiser fails in its builds too."""
    proc = subprocess.run([cxx, "-std=c++17", "-fsyntax-only", "-isystem", str(INCLUDE_DIR),
                           str(KERNELS / "param_types.cpp")], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[:4000]
