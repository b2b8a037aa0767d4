"""``triton.runtime.driver``: ``driver.active`` describes the device kernels run on.

ascdsl runs kernels on the CPU (the interpreter or the simulator), as device 0; its properties are
the target platform's (``ASCDSL_PLATFORM``, default Ascend910B3), under the names the Ascend
Triton backend uses (``num_vectorcore``, ``num_aicore``) and CUDA's (``multiprocessor_count``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from ..platforms import DEFAULT_PLATFORM, get_platform


@dataclass(frozen=True)
class Target:
    """What ``driver.active.get_current_target()`` returns."""

    backend: str
    arch: str
    warp_size: int = 1


def _platform():
    return get_platform(os.environ.get("ASCDSL_PLATFORM") or DEFAULT_PLATFORM)


class Utils:
    def get_device_properties(self, device=0) -> dict:
        p = _platform()
        return {"num_vectorcore": p.vector_core_count, "num_aicore": p.ai_core_count,
                "multiprocessor_count": p.vector_core_count, "max_shared_mem": p.ub_bytes,
                "ub_size": p.ub_bytes, "warpSize": 1}


class CPUDriver:
    """The active driver: one CPU device, no streams."""

    utils = Utils()

    def get_current_device(self) -> int:
        return 0

    def set_current_device(self, device) -> None:
        if device not in (0, "cpu"):
            raise ValueError(f"ascdsl runs kernels on the CPU (device 0), not on device {device!r}")

    def get_current_stream(self, device=None) -> int:
        return 0

    def get_current_target(self) -> Target:
        return Target("cpu", _platform().name)

    def get_device_interface(self):
        return None

    def is_active(self) -> bool:
        return True


active = CPUDriver()

__all__ = ["CPUDriver", "Target", "Utils", "active"]
