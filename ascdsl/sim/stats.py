"""What a simulated launch reports: counters per block and in total."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..platforms import Platform
from ..record import Channel


@dataclass(frozen=True)
class SimStats:
    """Counters of a launch (``per_block`` holds one SimStats per block index; totals sum them).

    ``gm_read_bytes``/``gm_write_bytes`` count requested bytes, ``gm_copies`` GM<->UB copy calls,
    ``ub_copies`` UB->UB copies, ``ub_peak_bytes`` the InitBuffer total (max over blocks), and
    ``vector_calls``/``vector_elements`` the calls and active lanes per vector API.
    """

    gm_read_bytes: int = 0
    gm_write_bytes: int = 0
    gm_copies: int = 0
    ub_copies: int = 0
    ub_peak_bytes: int = 0
    vector_calls: dict[str, int] = field(default_factory=dict)
    vector_elements: dict[str, int] = field(default_factory=dict)
    per_block: tuple[SimStats, ...] = ()

    @staticmethod
    def from_report(blocks: list[dict]) -> SimStats:
        per_block = tuple(
            SimStats(
                b["gm_read_bytes"], b["gm_write_bytes"], b["gm_copies"], b["ub_copies"], b["ub_peak_bytes"],
                {api: n[0] for api, n in b["vector"].items()}, {api: n[1] for api, n in b["vector"].items()},
            )
            for b in blocks
        )
        calls: Counter = Counter()
        elements: Counter = Counter()
        for b in per_block:
            calls.update(b.vector_calls)
            elements.update(b.vector_elements)
        return SimStats(
            sum(b.gm_read_bytes for b in per_block), sum(b.gm_write_bytes for b in per_block),
            sum(b.gm_copies for b in per_block), sum(b.ub_copies for b in per_block),
            max((b.ub_peak_bytes for b in per_block), default=0), dict(calls), dict(elements), per_block,
        )


@dataclass(frozen=True)
class SimResult:
    """One run_kernel launch: counters, launch shape and what the kernel printed."""

    kernel: str
    stats: SimStats
    block_dim: int
    platform: Platform
    stdout: str


RUNS: Channel[SimResult] = Channel()
publish = RUNS.publish


def record():
    """Collects every SimResult produced inside the ``with`` block::

        with ascdsl.sim.record() as runs:
            ops.softmax_grad(...)
        print(runs[0].stats.gm_read_bytes)
    """
    return RUNS.collect()
