"""The cost model's estimate of a batched launch, for choosing P (:mod:`.batchrun`), without simulating.

A batched kernel's core runs its batched programs one after another, each one step of CopyIn (MTE2),
Compute (V) and CopyOut (MTE3) that overlaps the steps before and after it through the queue buffers.
:func:`price` prices one step of a compiled batched kernel with the simulator's cost rules
(``ascdsl/sim/include/ascdsl_sim/cost.h``; constants :mod:`ascdsl.sim.cost`): a vector instruction is
``vector_issue + repeats * cycles_per_repeat`` (plus ``extra_passes`` of issue and drain), a
``PipeBarrier`` ``barrier_drain``, a copy ``copy_setup + bursts * burst_cycles`` then its bytes at the
core's share of HBM. The step is priced at whole tiles (every program of the batch present: a copy of a
program-dependent count of rows copies its most, ``min(rows left, P)`` P) and at the columns the launch's
scalar arguments give (a copy's length and the tail fills computed from them): tail fills behind a run-time
test of anything else cost nothing, loops with bounds still unknown run once. :func:`estimate` then lays each
core's steps on the simulator's timeline, as cost.h does:
each pipe runs its work in order; a queue has two buffers, so step ``i``'s load waits for the buffer
step ``i - 2`` frees (after its compute, or after its store where a kernel stores from its input's
queue buffer, ``TQueBind<VECIN, VECOUT>``); each hand-over between pipes costs ``flag_latency``; loads
and stores share the core's GM link, a later transfer filling the gaps earlier ones left (cost.h
``transfer``). A store lands in the L2 at its write rate and the L2 writes it back at the core's share of
HBM in the gaps the loads from HBM leave (a load the L2 serves holds the link only); a core's span ends
when its last write has reached HBM. Where some cores run fewer steps or rows than the busiest (the last
round of fewer programs than cores, a persistent launch's programs of a trip fewer), they finish early and
leave their HBM share to the rest, as the simulator's launch estimate has it
(``cost.shared_link``; add of 64 blocks of 1024 unbatched: 0.6911 us, 0.6922 simulated). A persistent
program's invariant loads run once before its first step, which MTE2 loads after them while V copies them out
of their queue (``Step.once``, ``Step.once_load``).

Against the simulator (est us, model / simulated): gelu of 4M float32 (BLOCK=1024) 21.98 / 21.98 at P = 12,
21.73 / 21.74 at P = 7 (22.04 and 21.79 with the busiest core's rows alone); rms norm of 256 rows of 8192 in the
rows form at P = 1 11.28 / 11.28; rms norm of 100 rows of 5000 persistent at P = 1 2.947 / 2.959 (20 of the 40
cores run a trip fewer: 3.278 with the busiest core's trips alone).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from ...platforms import Platform
from ...sim import cost
from .. import kir
from ..kir import BinOp, Pipe


@dataclass(frozen=True)
class Step:
    """One batched program's step alone, in cycles: its loads on MTE2 and stores on MTE3 (set-up and
    bursts, then the bytes at the core's share of HBM: ``*_move``), its compute on V, and whether its
    store goes out of a loaded tile's queue buffer (``TQueBind<VECIN, VECOUT>``)."""

    load_setup: float
    load_move: float
    compute: float
    store_setup: float
    store_move: float
    bound: bool
    serial: bool = False  # the scalar unit waits for the vector pipe (a UB value read): nothing overlaps
    once: float = 0.0  # what a persistent program runs once before its loop of steps (its invariant loads)
    once_load: float = 0.0  # of ``once``, its loads: MTE2 takes the first step's load after them, while V copies
    load_l2: float = 0.0  # of ``load_move``, the reads the L2 serves: they hold the core's link, not its share of HBM

    @property
    def load(self) -> float:
        return self.load_setup + self.load_move

    @property
    def store(self) -> float:
        return self.store_setup + self.store_move


class Unpriced(Exception):
    """The kernel's steps are not the one CopyIn/Compute/CopyOut step per batched program :func:`estimate` models."""


# ----------------------------------------------------------------------------- pricing

_BIN = {BinOp.ADD: lambda a, b: a + b, BinOp.SUB: lambda a, b: a - b, BinOp.MUL: lambda a, b: a * b,
        BinOp.DIV: lambda a, b: int(a / b) if isinstance(a, int) and isinstance(b, int) else a / b,
        BinOp.MOD: lambda a, b: a - int(a / b) * b, BinOp.LT: lambda a, b: a < b, BinOp.LE: lambda a, b: a <= b,
        BinOp.GT: lambda a, b: a > b, BinOp.GE: lambda a, b: a >= b, BinOp.EQ: lambda a, b: a == b,
        BinOp.NE: lambda a, b: a != b, BinOp.AND: lambda a, b: a & b, BinOp.OR: lambda a, b: a | b,
        BinOp.XOR: lambda a, b: a ^ b, BinOp.SHL: lambda a, b: a << b, BinOp.SHR: lambda a, b: a >> b}


def _value(e, env: dict):
    """The value of a kir expression whose operands are literals or known variables, else None."""
    if isinstance(e, kir.Lit):
        return e.value
    if isinstance(e, kir.Var):
        return env.get(e.key)
    if isinstance(e, kir.Field):  # known only where a launch's scalars seed ``env`` (:class:`_Pricer`.launch)
        return env.get(("field", e.name))
    if isinstance(e, kir.SizeOf):
        return e.dtype.itemsize
    if isinstance(e, kir.ElemsPer):
        return e.bytes // e.dtype.itemsize if e.dtype.itemsize else None
    if isinstance(e, kir.Conv):
        return _value(e.x, env)
    if isinstance(e, kir.Not):
        x = _value(e.x, env)
        return None if x is None else not x
    if isinstance(e, kir.Bin):
        a, b = _value(e.a, env), _value(e.b, env)
        if a is None or b is None or (e.op in (BinOp.DIV, BinOp.MOD) and b == 0):
            return None
        try:
            return _BIN[e.op](a, b)
        except TypeError:
            return None
    if isinstance(e, kir.Cond):
        c = _value(e.c, env)
        return None if c is None else _value(e.a if c else e.b, env)
    return None


def _most(e, env: dict) -> int | None:
    """The largest value of a kir integer expression ``e`` (its value where known), where it is bounded by one
    known here: a minimum ``x < y ? x : y`` is at most ``y`` (the rows of a batched program, ``min(rows left,
    P)``); else None."""
    v = _int(e, env)
    if v is not None:
        return v
    if isinstance(e, kir.Conv):
        return _most(e.x, env)
    if isinstance(e, kir.Var) and ("let", e.key) in env:
        return _most(env[("let", e.key)], env)
    if isinstance(e, kir.Cond) and _value(e.c, env) is not None:
        return _most(e.a if _value(e.c, env) else e.b, env)
    if (isinstance(e, kir.Cond) and isinstance(e.c, kir.Bin) and e.c.op in (BinOp.LT, BinOp.LE)
            and (e.c.a, e.c.b) == (e.a, e.b)):
        return _most(e.b, env)
    return None


def _int(e, env: dict) -> int | None:
    v = _value(e, env)
    return int(v) if isinstance(v, (int, bool)) or (isinstance(v, float) and v.is_integer()) else None


class _Pricer:
    """Walks a compiled kernel's ``Process`` for one batched program, summing each pipe's work."""

    def __init__(self, platform: Platform, blocks: int, fields: Mapping[str, object], prologue: bool = False):
        self.k = cost.constants(platform)
        self.share = cost.core_share(platform, blocks)
        self.pipe = dict.fromkeys(("load_setup", "load_move", "compute", "store_setup", "store_move"), 0.0)
        self.runs = 0
        self.env: dict = {("field", name): v for name, v in fields.items()}  # the launch's columns
        # the launch's scalar fields and Process's scalars over them: which branch of Process a launch takes
        self.launch: dict = {("field", name): v for name, v in fields.items()}
        self.bound = False
        self.serial = False
        self.once = 0.0
        self.once_load = 0.0
        self.load_l2 = 0.0
        self.prologue = prologue  # a persistent kernel: what runs before its grid-stride loop is ``once``

    def body(self, stmts) -> None:
        for s in stmts:
            self.stmt(s)

    def stmt(self, s) -> None:
        if isinstance(s, kir.Let):
            v = _value(s.expr, self.env)
            if v is not None:
                self.env[s.var.key] = v
            else:
                self.env.pop(s.var.key, None)
                self.env[("let", s.var.key)] = s.expr  # (its bound: :func:`_most`)
            if isinstance(s.expr, kir.Brace):
                self.env[("brace", s.var.key)] = s.expr
        elif isinstance(s, kir.For):
            start, stop, step = (_int(x, self.env) for x in (s.start, s.stop, s.step))
            if None in (start, stop, step) or step == 0:
                # a run-time range: in Compute a tail's fill (none at whole tiles), elsewhere once
                if not self._in_compute:
                    self.body(s.body)
                return
            for i in range(start, stop, step):
                self.env[s.var.key] = i
                self.body(s.body)
            self.env.pop(s.var.key, None)
        elif isinstance(s, kir.If):
            c = _value(s.cond, self.env)
            if c is not None:
                self.body(s.body if c else s.orelse)
            elif s.orelse:  # two schedules of one operation picked at run time: the dearer
                saved = dict(self.pipe)
                self.body(s.body)
                first = dict(self.pipe)
                self.pipe = dict(saved)
                self.body(s.orelse)
                self.pipe = {p: max(first[p], self.pipe[p]) for p in self.pipe}
            # else: a run-time test with no else (a tail's fill): not taken at whole tiles
        elif isinstance(s, kir.While):
            raise Unpriced("a while loop")
        elif isinstance(s, kir.Barrier):
            if s.pipe is Pipe.V:
                self.pipe["compute"] += self.k.barrier_drain.value
        elif isinstance(s, kir.Queue):
            self.bound |= s.route is not None
        elif isinstance(s, kir.Flag):
            self.serial = True
        elif isinstance(s, kir.Call):
            self.call(s)
        elif isinstance(s, (kir.Segment,)):
            raise Unpriced("an unstaged segment")

    _in_compute = False  # inside a Compute stage

    def call(self, c: kir.Call) -> None:
        if c.pipe in (Pipe.MTE2, Pipe.MTE3) and c.api.startswith("DataCopy"):
            setup, move = self.copy(c)
            side = "load" if c.pipe is Pipe.MTE2 else "store"
            self.pipe[side + "_setup"] += setup
            self.pipe[side + "_move"] += move
            self.load_l2 += move if c.pipe is Pipe.MTE2 and self.again(c) else 0.0
        elif c.pipe is Pipe.V:
            self.pipe["compute"] += self.vector(c)

    def copy(self, c: kir.Call) -> tuple[float, float]:
        """``copy_setup + bursts * burst_cycles`` and the bytes at the core's share (cost.h count_copy); a load
        whose GM offset is known here (no program id in it: ``W + cols`` of every program) reads the bytes
        every step reads, after the first from the L2 (cost.h's L2: its rate and bursts)."""
        ub = c.dst if c.pipe is Pipe.MTE2 else c.srcs[0]
        bursts, nbytes = 1, None
        params = next((a for a in c.args if isinstance(a, kir.Var) and a.ctype is kir.Struct.COPY_PARAMS
                       and ("brace", a.key) in self.env), None)
        if params is not None:  # DataCopyExtParams{blockCount, blockLen in bytes, srcStride, dstStride, ...}
            items = self.env[("brace", params.key)].items
            count, length = (_int(x, self.env) for x in items[:2])
            if count is None:  # rows of a program-dependent count (the batch's last program's): at most P
                count = _most(items[0], self.env)
            if count is not None and length is not None:
                bursts, nbytes = count, count * length
        elif c.api == "DataCopy" and c.args and isinstance(ub, kir.Ref):  # the count form, in elements
            n = _int(c.args[-1], self.env)
            nbytes = None if n is None else n * ub.dtype.itemsize
        if nbytes is None and isinstance(ub, kir.Ref):
            nbytes = max(0, ub.extent - ub.low) * ub.dtype.itemsize
        k = self.k
        if self.again(c):
            return k.copy_setup.value + bursts * cost.l2_burst_cycles(k), (nbytes or 0) / k.l2_bytes_per_cycle.value
        return k.copy_setup.value + bursts * k.burst_cycles.value, (nbytes or 0) / self.share

    def again(self, c: kir.Call) -> bool:
        """A load whose GM offset is known here (no program id in it): every step reads its bytes."""
        gm = c.srcs[0]
        return c.pipe is Pipe.MTE2 and isinstance(gm, kir.Gm) and _value(gm.offset, self.env) is not None

    def vector(self, c: kir.Call) -> float:
        """``vector_issue + repeats * cycles_per_repeat`` plus the API's extra passes (cost.h count_vector)."""
        k = self.k
        refs = [r for r in (c.dst, *c.srcs) if isinstance(r, kir.Ref)]
        lane = max((r.dtype.itemsize for r in refs), default=4)
        if c.api == "DataCopy":  # UB -> UB: one repeat per 256 B (count_ub_copy)
            n = _int(c.args[-1], self.env) if c.args else None
            nbytes = n * c.dst.dtype.itemsize if n is not None else _span(c.dst)
            return k.vector_issue.value + math.ceil(nbytes / 256)
        repeats = self.repeats(c, lane)
        per = k.cycles_per_repeat.get(c.api, 1.0)
        passes = k.extra_passes.get(c.api, 0.0) * (k.vector_issue.value + k.barrier_drain.value)
        return k.vector_issue.value + passes + repeats * per

    def repeats(self, c: kir.Call, lane: int) -> int:
        args = c.args
        brace = next((i for i, a in enumerate(args) if isinstance(a, kir.Brace)), None)
        if brace is not None and brace >= 1:  # mask, repeat, {params}
            r = _int(args[brace - 1], self.env)
            if r is not None:
                return r
        if c.api.startswith("WholeReduce") or c.api.startswith("BlockReduce") or c.api.startswith("PairReduce"):
            r = _int(args[1], self.env) if len(args) > 1 else None
            if r is not None:
                return r
        if c.api == "Duplicate" and len(args) == 5:  # value, mask, repeat, block stride, repeat stride
            r = _int(args[2], self.env)
            if r is not None:
                return r
        count = _int(args[-1], self.env) if args else None
        if count is not None and not isinstance(args[-1], kir.Const):
            return math.ceil(count * lane / 256)
        return math.ceil(_span(c.dst) / 256) if isinstance(c.dst, kir.Ref) else 1


def _span(r) -> int:
    return max(0, r.extent - r.low) * r.dtype.itemsize if isinstance(r, kir.Ref) else 0


def price(k: kir.Kernel, platform: Platform, blocks: int, fields: Mapping[str, object] = MappingProxyType({}),
          persistent: bool = False) -> Step:
    """One batched program of the compiled kernel ``k`` on a launch of ``blocks`` blocks, at whole tiles; ``fields``:
    the launch's scalar tiling fields by name, which decide the branches of ``Process`` on them (a kernel
    versioned on its loops' trip counts, :func:`ascdsl.passes.reuse.single_trip_loops`); ``persistent``: ``k`` is
    a persistent kernel (:mod:`ascdsl.passes.persistent`), the step one trip of its loop, what comes before the
    loop ``Step.once``."""
    p = _Pricer(platform, blocks, fields, persistent)
    _walk(p, k.process)
    if p.runs != 1:
        raise Unpriced(f"{p.runs} compute steps per program")
    return Step(**p.pipe, bound=p.bound, serial=p.serial, once=p.once, once_load=p.once_load, load_l2=p.load_l2)


def _walk(p: _Pricer, process) -> None:
    """The Process body: stages in program order (Compute's run-time loops are tail fills)."""
    for s in process:
        if isinstance(s, kir.Run) and s.stage.kind is kir.StageKind.COMPUTE:
            p.runs += 1
            p._in_compute = True
            p.body(s.stage.body)
            p._in_compute = False
        elif isinstance(s, kir.Run):
            p.body(s.stage.body)
        elif isinstance(s, kir.For) and (_int(s.start, p.env) is None or _int(s.stop, p.env) is None):
            if p.prologue:  # what ran before a persistent kernel's loop runs once
                p.once, p.prologue = sum(p.pipe.values()), False
                p.once_load = p.pipe["load_setup"] + p.pipe["load_move"]
                p.pipe, p.runs, p.load_l2 = dict.fromkeys(p.pipe, 0.0), 0, 0.0
            _walk(p, s.body)  # a run-time loop of stages (a grid-stride loop): once
        elif isinstance(s, kir.For):
            start, stop, step = (_int(x, p.env) for x in (s.start, s.stop, s.step))
            for i in range(start, stop, step):
                p.env[s.var.key] = i
                _walk(p, s.body)
        elif isinstance(s, kir.If):
            c = _value(s.cond, p.env)
            c = _value(s.cond, p.launch) if c is None else c
            _walk(p, s.body if c is None or c else s.orelse)  # unknown: the body (a guard)
        else:
            if isinstance(s, kir.Let):
                p.launch[s.var.key] = _value(s.expr, p.launch)
            p.stmt(s)


# ----------------------------------------------------------------------------- the pipeline

def clock_mhz(platform: Platform) -> float:
    """Cycles per microsecond."""
    return cost.constants(platform).clock_mhz.value


def core_rows(programs: int, grid: int, cores: int, core: int = 0) -> list[int]:
    """The original programs of each batched program core ``core`` runs, in order, when ``grid`` batched
    programs share ``programs`` in the balanced partition of :func:`ascdsl.passes.batching._span` (``G // N``
    each, one more for the first ``G % N``) and batched program ``q`` runs on core ``q % cores``: core 0 has
    the most."""
    base, rem = divmod(programs, grid)
    return [base + (q < rem) for q in range(core, grid, cores)]


def _transfer(uses: tuple[list[tuple[float, float]], ...], start: float, cycles: float, record: bool = True) -> float:
    """Moves ``cycles`` of bytes over each of ``uses`` at once (the core's GM link, its share of HBM) from
    ``start`` on, in the gaps the earlier transfers (each use's busy spans, extended in place where ``record``)
    left; when the last byte has moved (cost.h ``transfer``: a transfer dispatched later may use them earlier)."""
    t, left, moved = start, cycles, []
    for begin, end in sorted(span for use in uses for span in use):
        if end <= t:
            continue
        if begin > t:
            use = min(left, begin - t)
            moved.append((t, t + use))
            left, t = left - use, t + use
            if left <= 0:
                break
        t = max(t, end)
    if left > 0:
        moved.append((t, t + left))
        t += left
    if record:
        for use in uses:
            use[:] = sorted(use + moved)
    return t


def persistent_trips(programs: int, p: int, grid: int, program: int = 0) -> list[int]:
    """The rows of each trip of ``program``'s loop in a persistent launch (:mod:`ascdsl.passes.persistent`) of
    ``programs`` rows on ``grid`` programs, ``p`` rows a trip: trip ``k`` from row ``(k * grid + program) * p``;
    program 0 has the most."""
    return [min(p, programs - (k * grid + program) * p) for k in range(-(-programs // (grid * p)))
            if (k * grid + program) * p < programs]


def estimate(s: Step, programs: int, grid: int, p: int, platform: Platform, persistent: bool = False) -> float:
    """The slowest core's cycles for a launch of ``programs`` programs batched ``p`` to a program on
    ``grid`` batched programs (``persistent``: the loops of a persistent launch, :func:`persistent_trips`),
    ``s`` the priced step of ``p`` programs: each core's steps (:func:`core_rows`; a batch of fewer than ``p``
    programs moves fewer bytes, its vector work is the whole tile's) on the simulator's timeline, and where
    some cores run fewer steps or rows, the HBM share they leave when they finish to the rest (see the module
    docstring)."""
    cores = platform.vector_core_count
    share = cost.core_share(platform, cores)
    used = min(cores, grid)
    rows = [tuple(persistent_trips(programs, p, grid, c) if persistent else core_rows(programs, grid, cores, c))
            for c in range(used)]
    # the step was priced at the share of every core: a launch of fewer leaves the idle cores' share to the others
    m = share / cost.core_share(platform, used)
    spans = {r: _core_span(s, [x / p * m for x in r], platform) for r in set(rows)}
    if len(spans) == 1:
        return spans[rows[0]]
    moved = (s.load_move - s.load_l2 + s.store_move) * share / p  # a program's bytes to and from HBM
    return max(cost.shared_link([spans[r] for r in rows], [sum(r) * moved for r in rows], cost.constants(platform),
                                cost.core_share(platform, grid)))


def _core_span(s: Step, moves: list[float], platform: Platform) -> float:
    """One core's cycles for steps of ``s`` moving ``moves`` of its bytes each (cost.h's timeline)."""
    if s.serial:
        return s.once + sum(s.load + s.compute + s.store - (1 - m) * (s.load_move + s.store_move) for m in moves)
    cores = platform.vector_core_count
    flag = cost.constants(platform).flag_latency.value
    # a store lands in the L2 at its write rate over the link, and the L2 writes it back at the core's share of
    # HBM (store_move) in the gaps the loads from HBM leave on it (cost.h count_copy and block_cost)
    into_l2 = cost.core_share(platform, cores) / cost.constants(platform).l2_write_bytes_per_cycle.value
    link: list[tuple[float, float]] = []
    hbm: list[tuple[float, float]] = []
    mte3 = v = s.once
    mte2 = s.once_load
    drained = 0.0
    write_backs: list[tuple[float, float]] = []
    computed: list[float] = []
    stored: list[float] = []
    for i, m in enumerate(moves):
        # two buffers a queue: step i's input buffer is step i - 2's, free after its compute, or its
        # store where the store goes out of it; a separate output buffer frees after step i - 2's store
        two_back = (stored[i - 2] if s.bound else computed[i - 2]) if i >= 2 else 0.0
        mte2 = _transfer((link, hbm), max(mte2, two_back) + s.load_setup, (s.load_move - s.load_l2) * m)
        mte2 = _transfer((link,), mte2, s.load_l2 * m)
        out_free = stored[i - 2] + flag if i >= 2 and not s.bound else 0.0
        v = max(v, mte2 + flag, out_free) + s.compute
        start = max(mte3, v + flag) + s.store_setup
        mte3 = _transfer((link,), start, s.store_move * m * into_l2)
        write_backs.append((start, s.store_move * m))
        computed.append(v)
        stored.append(mte3)
        link[:] = [span for span in link if span[1] > min(mte2, mte3)]  # no copy starts earlier (cost.h)
    for start, cycles in write_backs:
        drained = _transfer((hbm,), max(drained, start), cycles, record=False)
    return max(stored[-1], drained)
