"""A CANN CPU-debug main.cpp (GmAlloc, ICPU_RUN_KF) builds and runs unchanged on the simulator."""
from __future__ import annotations

from pathlib import Path

import pytest

from ascdsl import sim
from ascdsl.platforms import DEFAULT_PLATFORM, get_platform
from ascdsl.sim import build
from ascdsl.sim.main import cpu_debug_defines

KERNELS = Path(__file__).parent / "kernels"
SOURCES = [KERNELS / "add.cpp", KERNELS / "faults.cpp"]


def test_main_cpp_runs_the_kernel():
    res = sim.run_main(KERNELS / "main.cpp", SOURCES, shuffle_seed=5)
    assert (res.returncode, res.stdout) == (0, "mismatches: 0\n")


def test_main_cpp_reports_checks_as_sim_error():
    with pytest.raises(sim.SimError) as info:
        sim.run_main(KERNELS / "main.cpp", SOURCES, argv=["fault"])
    assert (info.value.api, info.value.block) == ("DataCopy", 1)
    assert "outside every GM buffer passed to the kernel" in info.value.reason


def test_main_cpp_builds_with_the_header_precompiled_for_its_defines(tmp_path, monkeypatch):
    """``kernel_operator.h`` comes precompiled with the CPU-debug build's macros (a header precompiled
    without them is not used: GCC requires the same macros), and the main built so runs right."""
    main = tmp_path / "main.cpp"
    main.write_text((KERNELS / "main.cpp").read_text().replace('#include "', f'// {tmp_path}\n#include "', 1))
    commands = []
    real = build.subprocess.run
    monkeypatch.setattr(build.subprocess, "run", lambda args, **kw: commands.append(args) or real(args, **kw))
    res = sim.run_main(main, SOURCES, shuffle_seed=5)
    assert (res.returncode, res.stdout) == (0, "mismatches: 0\n")
    (exe,) = [c for c in commands if str(main) in c]
    assert "-include" in exe and exe[exe.index("-include") + 1] == "kernel_operator.h"
    pch = Path(exe[exe.index("-I") + 1])
    assert (pch / "kernel_operator.h.gch").is_file()
    defines = [f"-D{d}" for d in cpu_debug_defines(get_platform(DEFAULT_PLATFORM))]
    assert all(d in exe for d in defines)
