"""``triton.language.extra.cann.extension``: what the Ascend Triton compiler adds to the language, as its
kernels call it (``import triton.language.extra.cann.extension as al``).
"""
from __future__ import annotations

from ...builtin import builtin

__all__ = ["sync_block_all"]

MODES = ("all_vector", "all")
"""The modes :func:`sync_block_all` supports (``"all"`` is ``"all_vector"`` in a vector-only kernel)."""
EVENT_IDS = range(16)


@builtin
def sync_block_all(mode, event_id):
    """A grid barrier: every program of the launch waits here until all have reached it; the stores each
    made before it are then visible to the loads any makes after it (the partial results of a row split
    over programs, exchanged through a GM scratch buffer).

    Args:
        mode: a constexpr str: ``"all_vector"`` (the programs of a vector kernel, ``AscendC::SyncAll()``), or
            ``"all"``, the same in a kernel without ``tl.dot`` (the only kernels it is supported in);
            ``"all_cube"`` and ``"all_sub_vector"`` are not supported.
        event_id: a constexpr int in ``0..15`` (accepted for compatibility; the barrier does not depend on it).

    Every program must reach the barrier the same number of times: a barrier under a branch or in a loop whose
    bounds depend on ``tl.program_id`` is a compile error; one under control flow that depends on loaded values
    is checked when the interpreter runs it. The launch's programs must all be resident at once: on the device
    backends a grid of more programs than the platform's vector cores is an error at the barrier. A kernel with a
    barrier is not batched nor folded into persistent programs.
    """
