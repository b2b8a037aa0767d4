"""The simulator's cost model: how long a launch would take on the NPU, estimated from the API calls
it actually executed, and the floor it is compared with.

Per block, the simulator (``include/ascdsl_sim/cost.h``) keeps a timeline of the four pipes of a
vector core. The scalar unit dispatches every API call in program order (``scalar_issue`` cycles
each). MTE2 (GM -> UB), V (vector) and MTE3 (UB -> GM) each run their instructions in order, no
earlier than their dispatch:

* a DataCopy/DataCopyPad costs ``copy_setup + bursts * burst_cycles`` on its pipe, then its bytes at
  the core's share of GM bandwidth over a link MTE2 and MTE3 share;
* a vector instruction costs ``vector_issue + repeats * cycles_per_repeat[api]`` (a repeat is 256
  bytes of lanes; a repeat with any active lane costs a full one, so masks and short rows show; the
  count form runs ``ceil(bytes / 256)`` repeats); high-level APIs add ``extra_passes`` internal
  instructions, each with its issue and a barrier drain, once per round (a math API whose temporary
  buffer holds less than its input runs several); a UB -> UB DataCopy is one repeat per 256 B;
* ``PipeBarrier<p>`` makes pipe ``p`` drain (``barrier_drain``); ``PIPE_ALL`` waits for every pipe;
* the scalar unit's own reads and writes of UB (``LocalTensor::GetValue``/``SetValue``, the int64 loops of
  :mod:`ascdsl.backend.legalise_types.scalarunit`) hold it for ``scalar_ub_access`` each after their dispatch,
  and its GM accesses (``GlobalTensor::GetValue``/``SetValue``) for ``scalar_gm_latency``;
* ``SetFlag``/``WaitFlag`` hold the waiting pipe until the setting pipe has reached the flag (plus
  ``flag_latency``); a ``WaitFlag`` on the scalar unit stalls dispatch;
* queues are these flags on their buffers: ``EnQue``/``DeQue`` hand a buffer from producer to
  consumer, ``FreeTensor``/``AllocTensor`` hand it back, so CopyIn overlaps Compute only when a
  second buffer is free (double buffering) and waits for FreeTensor otherwise.

A block's span is when its last pipe finishes. Blocks run on the platform's vector cores in turn
(block ``b`` on core ``b % cores``); the estimate is the slowest core, and all cores that run at the
same time share HBM bandwidth evenly: the simulator runs every block at the share of all the cores
the launch occupies, then :func:`estimate` lets the cores still running move their bytes at the
share of fewer once others have finished (up to the core's own link rate), so 64 equal rows on 40
cores cost one row at a 40th of HBM and one at the link rate, not two at a 40th.

The L2 (``l2_bytes`` of the platform, shared by all cores) serves a read of GM bytes the launch has read or
written before, at ``l2_bytes_per_cycle`` on the core's link with each burst one segment at that rate
(:func:`l2_burst_cycles`), as long as the launch's bytes so far fit the L2; the launch's first read of a byte
comes from HBM. The simulator runs the blocks one after another, so it charges that first read to the first
block it runs that copies the byte; after the run, the blocks that run at the same time on a device share it
(``share_first_reads`` in ``include/ascdsl_sim/launch_run.h``): block ``b`` starts on core ``b % cores`` when
that core's earlier blocks are done, and the readers of a byte range that start before its earliest-starting
reader ends each pay an even share of its HBM fetch (the others read it from the L2). A block's span moves by
its change in HBM bytes at its copies' mean cost difference between HBM and the L2, and no lower than any of its
pipes' busy cycles.

A write goes through the L2 too, while the launch's bytes so far fit it: it lands there at
``l2_write_bytes_per_cycle`` on the core's link (each burst one segment at that rate), and from its start the L2
writes it back to HBM at the core's share of HBM (``cost.h`` ``count_copy``). Each core has a timeline of that
share beside its link's: its reads that miss the L2 hold both at once; the write-backs, in turn, take the gaps
the reads leave (a read goes first: the L2 holds a write, a read's core waits). A block ends when its last write
has reached HBM (``block_cost``), so a core's span carries every byte it moves to or from HBM at its share, one
after another: a streaming kernel, whose every byte the floor counts, stays at or over the floor. A launch whose
bytes outgrow the L2 writes at the link's GM rate, as it reads.

The **floor** is the larger of the GM bytes HBM must move (every byte written, each byte read once) over HBM
bandwidth, all vector work at peak (full repeats, no issue overhead) spread over every vector core, and all
cube multiply-adds at ``cube_macs_per_cycle`` spread over every cube core: no kernel doing the same copies and
vector work can beat it, so ``est_cycles >= floor_cycles``.

The cube core (``include/ascdsl_sim/cube.h``) adds the pipes MTE1 and M: a kernel with cube work runs its
blocks on the AI cube cores; ``DataCopy`` GM -> L1 is a copy on MTE2, ``LoadData`` L1 -> L0A/L0B runs on MTE1
(its 512-byte fractals at ``l1_to_l0a_bytes_per_cycle`` or ``l1_to_l0b_bytes_per_cycle``), ``Mmad`` on M for
its whole fractals (16 x 16 x 32 bytes of K) at ``cube_macs_per_cycle``, ``Fixpipe`` L0C -> GM on the GM link
as MTE3, and the queues between them hand buffers over as the vector queues do (L1 to MTE1, L0A/L0B to M,
L0C to MTE3).

Left out: the L2's own bandwidth limit (every core gets ``l2_bytes_per_cycle`` at once), its replacement policy
(re-reads stop hitting once a launch has moved more than it holds, whatever it evicted, and then no first read
is shared, nor does a write land in it), when the L2 writes back (as soon as the write starts; a device may keep
dirty lines until they are evicted, so the rule that a block ends when HBM has its writes is the pessimistic
end), the ini's ``ub_to_l2_rate`` and ``ub_to_ddr_rate`` (64; a UB write is priced as every write), when within a block a shared read happens (a
block's reads are taken as spread over its span, the spans as run before the sharing), the sharing of a MIX
launch's reads and of bytes a write or a scalar read touched (each left as run), the instruction and data caches, UB bank conflicts and strides, the
MTE's segment rounding beyond the flat per-burst cost, scalar-unit stalls beyond the flat dispatch
cost (address arithmetic, loops, branches) but for the UB element accesses that carry them, bounded instruction queues (the scalar unit may run
arbitrarily far ahead of the pipes), contention for the same GM address, and the kernel launch.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from ..platforms import PLATFORMS, Platform

PIPES = ("MTE2", "V", "MTE3", "S", "M", "MTE1")
CUBE_PIPES = frozenset({"M", "MTE1"})
"""The pipes only a cube core has (a report leaves them out of a vector kernel's)."""


@dataclass(frozen=True)
class Constant:
    """One constant of the model and where its value comes from."""

    value: float
    source: str


def _c(value: float, source: str) -> Constant:
    return Constant(value, source)


_INI = "CANN 8.1 data/platform_config/Ascend910B3.ini (see /work/shared/reference/ascendc-api.md section 4)"
_REVIEW = (
    "assumed: the review model of issue 11 (no public per-instruction cycle table for the 910B vector "
    "unit was found)"
)


@dataclass(frozen=True)
class CostConstants:
    """The model's constants for one family of platforms (cycles are vector-core cycles)."""

    clock_mhz: Constant
    hbm_gb_per_s: Constant
    core_gm_bytes_per_cycle: Constant
    scalar_issue: Constant
    vector_issue: Constant
    barrier_drain: Constant
    flag_latency: Constant
    sync_all_latency: Constant
    copy_setup: Constant
    burst_cycles: Constant
    scalar_gm_latency: Constant
    cube_macs_per_cycle: Constant
    scalar_ub_access: Constant
    l2_bytes_per_cycle: Constant
    l2_write_bytes_per_cycle: Constant
    l1_to_l0a_bytes_per_cycle: Constant
    l1_to_l0b_bytes_per_cycle: Constant
    cycles_per_repeat: Mapping[str, float] = field(default_factory=dict)  # by API; 1 when absent
    extra_passes: Mapping[str, float] = field(default_factory=dict)  # internal instructions of high-level APIs
    repeat_source: str = ""

    def table(self) -> list[tuple[str, float, str]]:
        """(name, value, source) for every scalar constant, for documentation and ``ascdsl bench``."""
        return [(name, c.value, c.source) for name, c in vars(self).items() if isinstance(c, Constant)]


A2 = CostConstants(
    clock_mhz=_c(1800, f"cube_freq=1800 in {_INI}"),
    hbm_gb_per_s=_c(
        1600,
        "assumed 1.6 TB/s shared by all cores (the review model of issue 11); no primary source: third-party "
        "pages give 0.4-2 TB/s (boardor.com/blog/huawei-ascend-910b-outperforms-h20-910c-approaches-h100: "
        "400 GB/s; oryoy.com 910B parameter article: 1.2 TB/s; orientdeck.com/tech-trend/ai-robotics/9209.html: 2 TB/s)",
    ),
    core_gm_bytes_per_cycle=_c(32, f"[AICoreMemoryRates] ddr_rate=32 in {_INI} (units undocumented: read as bytes/cycle)"),
    scalar_issue=_c(2, "assumed: dispatch of one API call by the scalar unit (flat; loops and address math left out)"),
    vector_issue=_c(
        4,
        f"{_REVIEW}: 'a few cycles to issue each vector instruction'; hiascend best practice 'Using the Counter "
        "Mode for Vector Operators' (canncommercial 800, atlas_ascendc_best_practices_10_0030) counts fewer "
        "instructions as faster",
    ),
    barrier_drain=_c(
        30,
        f"{_REVIEW}: 'some tens of cycles to drain a PipeBarrier'; PipeBarrier semantics: hiascend API "
        "atlasascendc_api_07_0271 (blocks the pipe until the previous instructions complete)",
    ),
    flag_latency=_c(10, "assumed: SetFlag to WaitFlag hand-over (no public figure)"),
    sync_all_latency=_c(
        410,
        "assumed (no public figure for the FFTS all-core sync): from the last block's arrival at SyncAll until every "
        "block goes on, two trips off the core, each block's set to the FFTS and the FFTS's release back to every "
        "core, each priced as scalar_gm_latency (200, itself assumed), plus flag_latency (10) for the wait's own "
        "hand-over",
    ),
    copy_setup=_c(
        64,
        "assumed so that one copy of 16 KiB at a 40-core share of HBM runs at >= 90% of bandwidth, the size "
        "from which the guide says GM transfers reach best bandwidth (ASC docs NPU架构版本2201.md, reference "
        "section 2.6)",
    ),
    burst_cycles=_c(
        4,
        "assumed: one 128-byte segment at 32 B/cycle per burst (GM transfers are split into 128/256/512-byte "
        "segments with round-up: ASC docs NPU架构版本2201.md, reference section 2.6)",
    ),
    scalar_gm_latency=_c(200, "assumed: a scalar GM access that misses the data cache (no public figure)"),
    cube_macs_per_cycle=_c(
        4096,
        "assumed: one 16 x 16 x 16 fractal product of half (or bfloat16) operands per cycle (the cube's fractal "
        "shape, reference section 5); float at a quarter of that (reference section 4: 'float Cube throughput "
        "is 1/4 of half'), int8 at twice (16 x 16 x 32 fractals); no public per-cycle figure was found",
    ),
    scalar_ub_access=_c(
        8,
        "assumed: one scalar load or store of UB with its share of the loop around it (index arithmetic, the "
        "compare or add, the branch), on top of scalar_issue; no public cycle figure was found, the guide only "
        "warns that many SetValue calls on a LocalTensor are slow (hiascend LocalTensor API page, CANN 7.0: "
        "'不要大量使用SetValue对LocalTensor进行赋值,会使性能下降')",
    ),
    l2_bytes_per_cycle=_c(
        110,
        f"[AICoreMemoryRates] l2_read_rate=110 in {_INI} (units undocumented: read as bytes/cycle, as ddr_rate); "
        "the capacity is each platform's l2_size",
    ),
    l2_write_bytes_per_cycle=_c(
        86,
        f"[AICoreMemoryRates] l2_write_rate=86 in {_INI} (reference line 685: 'l2_rate=110 (read 110 / write 86)'; "
        "the field AiCoreMemoryRates::l2_write_rate of CANN 8.1's include/experiment/platform/platform/"
        "platform_info_def.h:85; units undocumented: read as bytes/cycle, as ddr_rate)",
    ),
    l1_to_l0a_bytes_per_cycle=_c(512, f"[AICoreMemoryRates] l1_to_l0_a_rate=512 in {_INI} (read as bytes/cycle)"),
    l1_to_l0b_bytes_per_cycle=_c(256, f"[AICoreMemoryRates] l1_to_l0_b_rate=256 in {_INI} (read as bytes/cycle)"),
    cycles_per_repeat=MappingProxyType(
        {"Exp": 2, "Ln": 2, "Sqrt": 2, "Rsqrt": 2, "Reciprocal": 2, "Div": 2, "SoftmaxGrad": 4, "SoftmaxGradFront": 2}
    ),
    extra_passes=MappingProxyType(
        {"ReduceSum": 2, "ReduceMax": 2, "ReduceMin": 2, "Sum": 1, "SoftmaxGrad": 4, "SoftmaxGradFront": 2,
         # per round of a math API: the vector calls in CANN 8.1's impl/math/<api>/<api>_common_impl.h
         # (both its half and float paths, so an upper bound; Acos is Asin's, Log2/Log10 an Ln and a Muls)
         "Tanh": 9, "Erf": 27, "Erfc": 42, "Sin": 27, "Cos": 34, "Tan": 34, "Sinh": 14, "Cosh": 11, "Asin": 58,
         "Acos": 58, "Atan": 34, "Asinh": 21, "Acosh": 16, "Atanh": 14, "Log2": 2, "Log10": 2}
    ),
    repeat_source=(
        "one repeat (256 B: 8 blocks of 32 B) per cycle: the vector datapath of reference section 4 and the hiascend "
        "guide (one iteration processes 8 datablocks); Exp about 2 cycles per repeat and the other "
        f"transcendentals and Div likewise: {_REVIEW}; high-level APIs as the passes they are built from"
    ),
)

# Every A2/A3 SoC shares one row. The 310P's vector core has the same datapath; its clock and memory
# differ, but we have no better public numbers for it, so it shares the row too.
COSTS: dict[str, CostConstants] = {name: A2 for name in PLATFORMS}


def constants(platform: Platform) -> CostConstants:
    """The cost constants of ``platform``."""
    return COSTS[platform.name]


def core_share(platform: Platform, block_dim: int, cube: bool = False) -> float:
    """GM bytes per cycle one core gets when ``block_dim`` blocks run on ``platform`` at once: on its vector cores,
    or with ``cube`` on its AI cube cores (a kernel with cube work; the vector cores of a MIX block share its
    cube core's block)."""
    k = constants(platform)
    running = min(block_dim, cores(platform, cube))
    return min(k.core_gm_bytes_per_cycle.value, hbm_bytes_per_cycle(k) / running)


def cores(platform: Platform, cube: bool = False) -> int:
    """The cores a launch's blocks run on: the AI cube cores for a kernel with cube work, else the vector cores
    (block ``b`` on core ``b % cores``)."""
    return platform.ai_core_count if cube else platform.vector_core_count


def l2_burst_cycles(k: CostConstants, write: bool = False) -> float:
    """A burst of a read the L2 serves (with ``write``, of a write it takes): ``burst_cycles`` is one 128-byte
    segment at the link's GM rate, so this is that segment at the L2's read (write) rate."""
    rate = k.l2_write_bytes_per_cycle if write else k.l2_bytes_per_cycle
    return k.burst_cycles.value * k.core_gm_bytes_per_cycle.value / rate.value


def hbm_bytes_per_cycle(k: CostConstants) -> float:
    return k.hbm_gb_per_s.value * 1e3 / k.clock_mhz.value


@dataclass(frozen=True)
class BlockCost:
    """What one block cost, as the simulator reports it."""

    cycles: float
    busy: Mapping[str, float]
    vector_ideal: float
    copy_bytes: float
    cube_ideal: float = 0.0  # cycles of the cube's multiply-adds at peak (a kernel of the cube cores)
    l2_bytes: float = 0.0  # bytes of copy_bytes the L2 served (read before in the launch)
    floor_bytes: float = 0.0  # bytes the floor counts: every byte written, each byte read the first time only

    @staticmethod
    def from_report(d: dict) -> BlockCost:
        return BlockCost(d["cycles"], MappingProxyType(dict(d["busy"])), d["vector_ideal"], d["copy_bytes"],
                         d["cube_ideal"], d["l2_bytes"], d["floor_bytes"])


@dataclass(frozen=True)
class Estimate:
    """A launch's estimate: the slowest core's cycles and pipe busy cycles, and the floor."""

    cycles: int
    us: float
    floor_cycles: int
    busy: Mapping[str, int]
    critical_pipe: str


def estimate(blocks: list[BlockCost], platform: Platform) -> Estimate:
    """Blocks in index order onto the vector cores in turn; the slowest core is the estimate, after
    :func:`shared_link` gives the cores still running the HBM bandwidth of those that finished."""
    k = constants(platform)
    cube = any(c.cube_ideal for c in blocks)  # a cube kernel runs on the AI cube cores
    n = cores(platform, cube)
    span = [0.0] * min(n, max(len(blocks), 1))
    busy = [dict.fromkeys(PIPES, 0.0) for _ in span]
    moved = [0.0] * len(span)
    for b, cost in enumerate(blocks):
        span[b % n] += cost.cycles
        moved[b % n] += cost.copy_bytes - cost.l2_bytes
        for pipe, cycles in cost.busy.items():
            busy[b % n][pipe] += cycles
    finish = shared_link(span, moved, k, core_share(platform, len(blocks), cube))
    ends = [max(f, busy[c]["V"], busy[c]["S"], busy[c]["M"], busy[c]["MTE1"]) for c, f in enumerate(finish)]
    slowest = max(range(len(span)), key=ends.__getitem__)
    floor = max(
        sum(c.floor_bytes for c in blocks) / min(hbm_bytes_per_cycle(k), n * k.core_gm_bytes_per_cycle.value),
        sum(c.vector_ideal for c in blocks) / n,
        sum(c.cube_ideal for c in blocks) / n,
    )
    cycles = int(-(-ends[slowest] // 1))
    pipes = {p: round(v) for p, v in busy[slowest].items()}
    return Estimate(cycles, cycles / k.clock_mhz.value, int(floor), MappingProxyType(pipes), max(pipes, key=pipes.__getitem__))


def shared_link(span: list[float], moved: list[float], k: CostConstants, share: float) -> list[float]:
    """When each core finishes once the cores that finish early leave their HBM share to the others.

    The simulator ran every core's transfers at ``share`` (HBM over every core of the launch). Here
    the cores run side by side: while ``n`` of them are still running, each moves its bytes at
    ``min(link, HBM / n)``; a core's transfers are taken as spread evenly over its span, so the rest
    of its span (set-ups, vector work not hidden behind them) runs at its own pace. With equal cores
    nothing changes; with ``64`` rows on ``40`` cores the second row runs at the link's rate.
    """
    remaining = list(span)
    gm = [min(1.0, m / share / s) if s else 0.0 for m, s in zip(moved, span)]  # span fraction on the link
    finish = [0.0] * len(span)
    running = [c for c, s in enumerate(span) if s > 0]
    now = 0.0
    while running:
        rate = min(k.core_gm_bytes_per_cycle.value, hbm_bytes_per_cycle(k) / len(running))
        pace = {c: 1.0 / (gm[c] * share / rate + 1.0 - gm[c]) for c in running}  # span cycles per cycle
        first = min(running, key=lambda c: remaining[c] / pace[c])
        step = remaining[first] / pace[first]
        now += step
        for c in running:
            remaining[c] -= step * pace[c]
        done = [c for c in running if c == first or remaining[c] <= 1e-9 * span[c]]
        for c in done:
            finish[c] = now
        running = [c for c in running if c not in done]
    return finish
