"""A CANN CPU-debug main.cpp (GmAlloc, ICPU_RUN_KF) builds and runs unchanged on the simulator."""
from __future__ import annotations

from pathlib import Path

import pytest

from ascdsl import sim

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
