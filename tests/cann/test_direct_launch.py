"""kernel/main.cpp and kernel/CMakeLists.txt as CANN's direct-launch samples build them.

* the NPU half of main.cpp (no ASCENDC_CPU_DEBUG) is plain host code: no kernel qualifiers, no
  ``<<<>>>``, the kernel launched through ``ACLRT_LAUNCH_KERNEL`` of ``aclrtlaunch_<kernel>.h``;
  with ``ASCEND_HOME_PATH`` it type-checks against CANN 8.1's ``acl/`` headers (the launch header
  stubbed as ``ascendc_library`` generates it) and its CPU half against tikicpulib's headers;
* ``ascdsl.sim.run_main`` defines what CANN's CPU-debug build defines for the platform;
* the CMakeLists' ``RUN_MODE=cpu`` build, given a tikicpulib package, builds and runs the op.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from ascdsl import build, sim
from ascdsl.op import load_operators
from ascdsl.platforms import get_platform
from ascdsl.sim.build import INCLUDE_DIR
from ascdsl.sim.main import cpu_debug_defines
from ascdsl.testing import assert_close, expected_outputs
from tests.cann.headers import host_flags, launch_header, needs_host_headers, needs_kernel_headers, type_check
from tests.sim.test_cann_headers import cann_flags

ROOT = Path(__file__).resolve().parents[2]
OPS = load_operators([ROOT / "ops"])
PLATFORM = get_platform("Ascend910B3")


def built(op, tmp_path: Path) -> tuple[build.OpBuild, Path]:
    b = build.plan(op, PLATFORM)
    return b, build.write(b, tmp_path) / "kernel"


def stub_launch_header(b: build.OpBuild, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"aclrtlaunch_{b.name}.h").write_text(launch_header(b.name, [*b.pointers, "workspace", "tiling"]))
    return folder


def test_the_npu_half_of_main_cpp_is_plain_host_code(tmp_path):
    b, kernel = built(OPS[[op.name for op in OPS].index("scale_add")], tmp_path)
    stubs = stub_launch_header(b, tmp_path / "stubs")
    (stubs / "acl").mkdir()
    for header in ("acl.h", "acl_base.h"):  # empty: preprocessing only
        (stubs / "acl" / header).write_text("")
    proc = subprocess.run(["g++", "-std=c++17", "-E", "-P", f"-I{stubs}", str(kernel / "main.cpp")],
                          capture_output=True, text=True, check=True)
    host = proc.stdout[proc.stdout.index("int main("):]
    for kernel_only in ("__global__", "__aicore__", "GM_ADDR", "<<<", "aclrtGetDeviceInfo", "ACL_DEV_ATTR"):
        assert kernel_only not in host, kernel_only
    assert "aclGetDeviceCapability(deviceId, ACL_DEVICE_INFO_VECTOR_CORE_NUM, &vectorCores)" in host
    assert "aclrtlaunch_scale_add(blockDim, stream, device[0], device[1], device[2], workspace, tiling)" in host


@needs_host_headers
@needs_kernel_headers
@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_main_cpp_type_checks_against_cann(op, tmp_path):
    b, kernel = built(op, tmp_path)
    type_check(host_flags(), kernel / "main.cpp", kernel, stub_launch_header(b, tmp_path / "stubs"))
    type_check(cann_flags(), kernel / "main.cpp", kernel)  # RUN_MODE=cpu: tikicpulib's ASCENDC_CPU_DEBUG


PROBE = r"""
#include <cstdio>
#include "tikicpulib.h"
int main()
{
#if defined(ASCENDC_CPU_DEBUG) && defined(__CCE_KT_TEST__) && defined(ASCENDC_DEBUG)
    std::printf("cpu-debug %d %d %d\n", __CCE_AICORE__, __CCE_KT_TEST__, _GLIBCXX_USE_CXX11_ABI);
#endif
#ifdef __DAV_C220__
    std::printf("dav-c220\n");
#endif
#ifdef __DAV_M200__
    std::printf("dav-m200\n");
#endif
    return 0;
}
"""


@pytest.mark.parametrize("platform,expected", [("Ascend910B3", "cpu-debug 220 1 0\ndav-c220\n"),
                                               ("Ascend910_9391", "cpu-debug 220 1 0\ndav-c220\n"),
                                               ("Ascend310P3", "cpu-debug 200 1 0\ndav-m200\n")])
def test_run_main_defines_what_cann_cpu_debug_builds_define(platform, expected, tmp_path):
    main = tmp_path / "probe.cpp"
    main.write_text(PROBE)
    res = sim.run_main(main, platform=platform)
    assert (res.returncode, res.stdout) == (0, expected)


def test_tikicpulib_needs_the_cpu_debug_definitions(tmp_path):
    from ascdsl.sim.build import build_executable
    from ascdsl.sim.errors import SimCompileError
    main = tmp_path / "probe.cpp"
    main.write_text(PROBE)
    with pytest.raises(SimCompileError, match="needs the CPU-debug build's definitions"):
        build_executable([main])


def fake_tikicpulib(root: Path, platform) -> Path:
    """A toolkit folder whose ``tools/tikicpulib/lib/cmake`` package provides ``tikicpulib::<SoC>`` as
    CANN's does (the CPU-debug defines, the headers), backed by the ascdsl simulator."""
    package = root / "tools" / "tikicpulib" / "lib" / "cmake"
    package.mkdir(parents=True)
    defines = ";".join(cpu_debug_defines(platform))
    (package / "tikicpulib-config.cmake").write_text(
        "find_package(Threads REQUIRED)\n"
        f"add_library(tikicpulib::{platform.name} INTERFACE IMPORTED)\n"
        f"set_target_properties(tikicpulib::{platform.name} PROPERTIES\n"
        f"    INTERFACE_INCLUDE_DIRECTORIES \"{INCLUDE_DIR}\"\n"
        f"    INTERFACE_COMPILE_DEFINITIONS \"{defines}\"\n"
        "    INTERFACE_LINK_LIBRARIES Threads::Threads)\n")
    return root


def cmake(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["cmake", *args], cwd=cwd, capture_output=True, text=True, check=False)


needs_cmake = pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")


@needs_cmake
@pytest.mark.slow
def test_cmake_cpu_mode_builds_and_runs_the_op(tmp_path):
    op = OPS[[op.name for op in OPS].index("scale_add")]
    b, kernel = built(op, tmp_path)
    toolkit = fake_tikicpulib(tmp_path / "toolkit", PLATFORM)
    configure = cmake("-S", ".", "-B", "build", "-G", "Ninja", "-DRUN_MODE=cpu",
                      f"-DASCEND_CANN_PACKAGE_PATH={toolkit}", cwd=kernel)
    assert configure.returncode == 0, configure.stderr
    compiled = cmake("--build", "build", cwd=kernel)
    assert compiled.returncode == 0, compiled.stdout[-4000:]
    x, y = (np.random.default_rng(i).standard_normal((3, 5, 7)).astype(np.float32) for i in (1, 2))
    data = tmp_path / "data"
    data.mkdir()
    x.tofile(data / "x.bin")
    y.tofile(data / "y.bin")
    run = subprocess.run([str(kernel / "build" / f"{b.name}_main"), str(data), "x=float32:3,5,7", "y=float32:3,5,7",
                          "alpha=-2.0"], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "out=float32:3,5,7\n"
    out = np.fromfile(data / "out.bin", np.float32).reshape(3, 5, 7)
    assert_close(out, expected_outputs(op, (x, y), {"alpha": -2.0})[0])


@needs_cmake
def test_cmake_rejects_an_unknown_run_mode(tmp_path):
    _, kernel = built(OPS[0], tmp_path)
    configure = cmake("-S", ".", "-B", "build", "-DRUN_MODE=gpu", cwd=kernel)
    assert configure.returncode != 0
    assert "RUN_MODE must be cpu, sim or npu, not 'gpu'" in configure.stderr
