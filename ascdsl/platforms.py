"""The Ascend platforms ascdsl targets: one frozen row per SoC, shared by the simulator and the backend.

Numbers come from CANN's ``data/platform_config/<SoC>.ini`` files (``vector_core_cnt``,
``ai_core_cnt``, ``ub_size``): ``Ascend910B1.ini``, ``Ascend910B2.ini``, ``Ascend910B2C.ini``,
``Ascend910B3.ini``, ``Ascend910B4.ini``, ``Ascend910_9362.ini``, ``Ascend910_9372.ini``,
``Ascend910_9381.ini``, ``Ascend910_9382.ini``, ``Ascend910_9391.ini``, ``Ascend910_9392.ini`` and
``Ascend310P3.ini``; ``l2_bytes`` is their ``l2_size``.

``ub_budget_bytes`` is what the UB planner may hand out: the UB below the 8 KiB that Compare/Select
and some other APIs use as a hidden temporary (``TMP_UB_OFFSET`` = 184 KiB on the 910B's 192 KiB).
For the 310P (256 KiB UB) we keep the same 8 KiB reserve, giving 248 KiB.

``soc`` is the SoC series as CANN's op registration names it (``AddConfig("ascend910b")``, msopgen's
``ai_core-<soc>``) and ``arch`` the ``__CCE_AICORE__`` version the kernel is compiled for (220 for
A2/A3, 200 for the 310P), which CANN's CPU-debug build defines for the SoC (``tikicpulib``'s CMake
targets: ``__CCE_AICORE__=220;__DAV_C220__`` or ``__CCE_AICORE__=200;__DAV_M200__``).
"""
from __future__ import annotations

from dataclasses import dataclass

from .errors import Error

KIB = 1024


@dataclass(frozen=True)
class Platform:
    """One SoC as the generated code and the simulator see it."""

    name: str
    vector_core_count: int  # AIV cores: the block_dim a vector-only kernel should use
    ai_core_count: int  # AI (cube) cores
    ub_bytes: int  # Unified Buffer per vector core
    ub_budget_bytes: int  # UB the planner may use (below the reserved temporary area)
    has_bf16: bool  # bfloat16 <-> float conversions exist (there is no bf16 arithmetic anywhere)
    l2_bytes: int  # the L2 cache all cores share (the cost model's re-reads)
    soc: str = "ascend910b"  # the SoC series of AddConfig(...)
    arch: int = 220  # __CCE_AICORE__
    block_bytes: int = 32  # UB addresses and DataCopy lengths are in 32-byte blocks
    repeat_bytes: int = 256  # one vector repeat reads 8 blocks
    max_repeats: int = 255  # repeat counts and repeat strides are 8-bit
    max_bursts: int = 4095  # DataCopyPad blockCount is 12-bit
    queue_events: int = 8  # queue buffers per position (VECIN, VECOUT): one hardware event id each

    @property
    def arch_macro(self) -> str:
        """The ``__DAV_*__`` macro CANN defines next to ``__CCE_AICORE__`` for this SoC."""
        return {220: "__DAV_C220__", 200: "__DAV_M200__"}[self.arch]


def _a2(name: str, aiv: int, aic: int, l2_mib: int, soc: str = "ascend910b") -> Platform:
    return Platform(name, aiv, aic, 192 * KIB, 184 * KIB, True, l2_mib * KIB * KIB, soc)


PLATFORMS: dict[str, Platform] = {
    p.name: p
    for p in (
        _a2("Ascend910B1", 48, 24, 192),
        _a2("Ascend910B2", 48, 24, 192),
        _a2("Ascend910B2C", 48, 24, 192),
        _a2("Ascend910B3", 40, 20, 192),
        _a2("Ascend910B4", 40, 20, 96),
        _a2("Ascend910_9362", 40, 20, 168, "ascend910_93"),
        _a2("Ascend910_9372", 40, 20, 192, "ascend910_93"),
        _a2("Ascend910_9381", 48, 24, 192, "ascend910_93"),
        _a2("Ascend910_9382", 48, 24, 192, "ascend910_93"),
        _a2("Ascend910_9391", 48, 24, 192, "ascend910_93"),
        _a2("Ascend910_9392", 48, 24, 192, "ascend910_93"),
        Platform("Ascend310P3", 8, 8, 256 * KIB, 248 * KIB, False, 16 * KIB * KIB, "ascend310p", 200),
    )
}

DEFAULT_PLATFORM = "Ascend910B3"


class UnknownPlatformError(Error, ValueError):
    """A platform name that is not in :data:`PLATFORMS`."""


def get_platform(name: str = DEFAULT_PLATFORM) -> Platform:
    """The platform row called ``name`` (e.g. ``"Ascend910B3"``)."""
    try:
        return PLATFORMS[name]
    except KeyError:
        raise UnknownPlatformError(
            f"unknown platform {name!r}; valid platforms: {', '.join(PLATFORMS)}"
        ) from None
