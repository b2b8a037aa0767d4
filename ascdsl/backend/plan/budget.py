"""The budget pass: a planned kernel's UB plan (:mod:`.ubplan`) fits the platform, its queues the hardware's
event ids; the last pass of :data:`ascdsl.backend.render.ascendc.PIPELINE`."""
from __future__ import annotations

import dataclasses

from ...errors import CompilationError, UBOverflowError
from ...platforms import Platform
from .. import kir
from ..kir import Position
from .ubplan import Plan


def check_budget(k: kir.Kernel, platform: Platform) -> kir.Kernel:
    """The budget pass: ``k`` as it is when its plan fits the platform's UB; with single-buffered queues
    when only that fits (a tile too large to double-buffer still runs, its copies no longer overlapping
    the compute; not for runtime tile extents, whose planner picks extents that fit); else a located
    CompilationError listing every slot. Also a located error when a queue position holds more buffers
    than the hardware has event ids for."""
    p: Plan = k.plan
    _check_queue_events(k, platform)
    if (p.total_bytes if p.least is None else p.least) <= platform.ub_budget_bytes:
        return k
    if p.least is None:
        single = dataclasses.replace(p, slots=tuple(dataclasses.replace(s, num=1) if s.num and s.position is not
                                                    Position.VECCALC else s for s in p.slots))
        if single.total_bytes <= platform.ub_budget_bytes:
            return dataclasses.replace(k, plan=single)
    worst = max(p.slots, key=lambda s: s.total)
    names = k.names
    rows = "; ".join(f"{names.slot(s)} ({s.position.value}, {s.num} x {s.bytes} B = {s.total} B)" for s in p.slots)
    raise UBOverflowError(
        worst.loc or k.loc, f"the kernel needs {p.total_bytes} bytes of UB, more than the "
        f"{platform.ub_budget_bytes} bytes {platform.name} allows: {rows}",
        hint="use a smaller block (ascdsl.planner.largest_block finds the largest that fits)",
        needed=p.total_bytes, budget=platform.ub_budget_bytes, platform=platform.name, buffers=rows)


def _check_queue_events(k: kir.Kernel, platform: Platform) -> None:
    for position in (Position.VECIN, Position.VECOUT):
        slots = [s for s in k.plan.slots if s.position is position or s.bound and position is Position.VECOUT]
        used = 0
        for s in slots:
            used += s.num
            if used > platform.queue_events:
                total = sum(x.num for x in slots)
                rows = "; ".join(f"{k.names.slot(x)} ({x.num} buffers)" for x in slots)
                raise CompilationError(
                    s.loc or k.loc, f"the kernel needs {total} {position.value} queue buffers, more than the "
                    f"{platform.queue_events} hardware event ids {platform.name} has for them: {rows}",
                    hint="each tile loaded or stored at once takes a double-buffered queue: store fewer "
                         "tiles per kernel (compute them into one tile) or split the kernel")
