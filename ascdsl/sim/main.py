"""run_main: build and run a CANN CPU-debug ``main.cpp`` (GmAlloc, ICPU_RUN_KF) against the simulator.

The sources are compiled with what CANN's CPU-debug build defines for the SoC (tikicpulib's CMake
target, which ``RUN_MODE=cpu`` links): :func:`cpu_debug_defines`.
"""
from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..platforms import DEFAULT_PLATFORM, Platform, get_platform
from .build import build_executable
from .errors import SimError

_ERROR_PREFIX = "ASCDSL_SIM_ERROR "


@dataclass(frozen=True)
class MainResult:
    returncode: int
    stdout: str
    stderr: str


def cpu_debug_defines(platform: Platform) -> tuple[str, ...]:
    """The macros of CANN's CPU-debug build for ``platform`` (``tikicpulib::<SoC>``'s compile
    definitions): the kernel architecture, ``__CCE_KT_TEST__``, ``ASCENDC_CPU_DEBUG`` and friends."""
    return (f"__CCE_AICORE__={platform.arch}", platform.arch_macro, "_GLIBCXX_USE_CXX11_ABI=0",
            "__CCE_KT_TEST__=1", "ASCENDC_CPU_DEBUG=1", "ASCENDC_DEBUG=1")


def run_main(
    main_cpp: str | os.PathLike,
    kernel_sources: Sequence[str | os.PathLike] = (),
    *,
    platform: str = DEFAULT_PLATFORM,
    argv: Sequence[str] = (),
    cwd: str | os.PathLike | None = None,
    hazards: bool = True,
    vv_hazards: bool = True,
    shuffle_seed: int | None = None,
    timeout: float = 120.0,
) -> MainResult:
    """Links ``main_cpp`` with ``kernel_sources`` (each including ``kernel_operator.h``) and runs it.

    The sources build unchanged, with :func:`cpu_debug_defines` of ``platform`` defined (as CANN's
    CPU-debug build defines them; ``kernel_operator.h``, included first in each, comes precompiled): our ``tikicpulib.h`` provides GmAlloc/GmFree, SetKernelMode,
    ICPU_SET_TILING_KEY and ICPU_RUN_KF, which runs the blocks in this process one after another.
    A failed check raises SimError (API, block, reason); any other non-zero exit is returned as is.
    """
    plat = get_platform(platform)
    exe = build_executable([Path(main_cpp), *map(Path, kernel_sources)], cpu_debug_defines(plat), precompiled=True)
    env = dict(
        os.environ,
        ASCDSL_SIM_PLATFORM=plat.name,
        ASCDSL_SIM_UB_BYTES=str(plat.ub_bytes),
        ASCDSL_SIM_UB_BUDGET=str(plat.ub_budget_bytes),
        ASCDSL_SIM_BF16=str(int(plat.has_bf16)),
        ASCDSL_SIM_HAZARDS=str(int(hazards)),
        ASCDSL_SIM_VV=str(int(vv_hazards)),
        ASCDSL_SIM_CORES=str(plat.vector_core_count),
    )
    if shuffle_seed is not None:
        env["ASCDSL_SIM_SHUFFLE_SEED"] = str(shuffle_seed)
    proc = subprocess.run([str(exe), *argv], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout, check=False)
    for line in proc.stderr.splitlines():
        if line.startswith(_ERROR_PREFIX):
            e = json.loads(line[len(_ERROR_PREFIX):])
            raise SimError(e["reason"], e["api"], e["block"])
    return MainResult(proc.returncode, proc.stdout, proc.stderr)
