"""What a simulated launch reports: counters per block and in total."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from typing import Mapping

from ..platforms import Platform
from ..record import Channel
from . import cost


@dataclass(frozen=True)
class Interval:
    """One interval of a pipe's timeline in the cost model: an instruction running on it (``wait``
    False; ``api`` the instruction) or the pipe held by a flag, a queue buffer or a barrier past the
    time it was free (``wait`` True; ``api`` what it waited for). Cycles from the block's start. ``core``: in
    a MIX block, the core whose pipe it is (``AIC``, or ``AIV`` for the slower vector core); else empty."""

    pipe: str
    start: float
    end: float
    api: str
    wait: bool = False
    core: str = ""


@dataclass(frozen=True)
class Trace:
    """The cost model's timeline of the block with the longest span (``block``): every interval of
    every pipe in the order the model placed them; ``dropped`` intervals past the simulator's limit
    per block (``kTraceEvents``) are not kept."""

    block: int
    intervals: tuple[Interval, ...]
    dropped: int = 0

    @staticmethod
    def from_report(d: dict) -> Trace | None:
        if d.get("block", -1) < 0:
            return None
        names, cores = d["names"], ("AIC", "AIV") if d["mix"] else ("", "")
        return Trace(d["block"], tuple(Interval(cost.PIPES[p], start, end, names[api], bool(wait), cores[core])
                                       for p, wait, start, end, api, core in d["events"]), d["dropped"])


@dataclass(frozen=True)
class SimStats:
    """Counters of a launch (``per_block`` holds one SimStats per block index; totals sum them).

    ``gm_read_bytes``/``gm_write_bytes`` count requested bytes, ``gm_copies`` GM<->UB copy calls,
    ``ub_copies`` UB->UB copies, ``ub_peak_bytes`` the InitBuffer total (max over blocks),
    ``vector_calls``/``vector_elements`` the calls and active lanes per vector API, and
    ``vector_rounds`` the rounds its calls ran (a high-level math API runs one per temporary-buffer-full
    of its input; every other call, one).

    The cost model (:mod:`ascdsl.sim.cost`) adds ``est_cycles``/``est_us`` (the slowest core; for a
    block, its own span), ``floor_cycles`` (the GM bytes HBM must move at its bandwidth, vector work or
    cube work at peak, whichever is largest; 0 for a block), ``pipe_busy`` (busy cycles of MTE2, V, MTE3, S and M on the slowest core)
    and ``critical_pipe`` (the busiest of them), ``l2_read_bytes`` (the GM reads the model's L2 served: bytes the
    launch had moved before); ``trace`` is the timeline of the block with the
    longest span (:class:`Trace`; None for a block).
    """

    gm_read_bytes: int = 0
    gm_write_bytes: int = 0
    gm_copies: int = 0
    ub_copies: int = 0
    ub_peak_bytes: int = 0
    vector_calls: dict[str, int] = field(default_factory=dict)
    vector_elements: dict[str, int] = field(default_factory=dict)
    per_block: tuple[SimStats, ...] = ()
    est_cycles: int = 0
    est_us: float = 0.0
    floor_cycles: int = 0
    pipe_busy: Mapping[str, int] = field(default_factory=dict)
    critical_pipe: str = ""
    vector_rounds: dict[str, int] = field(default_factory=dict)
    l2_read_bytes: int = 0
    trace: Trace | None = field(default=None, compare=False, repr=False)

    @property
    def limit_ratio(self) -> float:
        """Estimated time over the floor (1.0 = at the limit)."""
        return self.est_cycles / self.floor_cycles if self.floor_cycles else float("inf")

    @staticmethod
    def from_report(blocks: list[dict], platform: Platform, trace: dict | None = None) -> SimStats:
        costs = [cost.BlockCost.from_report(b["cost"]) for b in blocks]
        per_block = tuple(
            SimStats(
                b["gm_read_bytes"], b["gm_write_bytes"], b["gm_copies"], b["ub_copies"], b["ub_peak_bytes"],
                {api: n[0] for api, n in b["vector"].items()}, {api: n[1] for api, n in b["vector"].items()},
                (), est.cycles, est.us, 0, est.busy, est.critical_pipe, {api: n[2] for api, n in b["vector"].items()},
                round(c.l2_bytes),
            )
            for b, c, est in ((b, c, cost.estimate([c], platform)) for b, c in zip(blocks, costs))
        )
        total = cost.estimate(costs, platform)
        calls: Counter = Counter()
        elements: Counter = Counter()
        rounds: Counter = Counter()
        for b in per_block:
            calls.update(b.vector_calls)
            elements.update(b.vector_elements)
            rounds.update(b.vector_rounds)
        return SimStats(
            sum(b.gm_read_bytes for b in per_block), sum(b.gm_write_bytes for b in per_block),
            sum(b.gm_copies for b in per_block), sum(b.ub_copies for b in per_block),
            max((b.ub_peak_bytes for b in per_block), default=0), dict(calls), dict(elements), per_block,
            total.cycles, total.us, total.floor_cycles, total.busy, total.critical_pipe, dict(rounds),
            sum(b.l2_read_bytes for b in per_block), Trace.from_report(trace) if trace else None,
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
