"""Program batching at launch (:mod:`ascdsl.passes.batching`): P and the schedule from the cost model.

A launch of G programs on a platform of C vector cores runs batched where the pass applies and
``G // C >= 2``. The batched grid N is a whole number of rounds of the cores (``rounds * C`` batched
programs of ``G // N`` or one more original programs each, so every core runs the same number of
programs within one per batched program; batched program ``q`` runs on core ``q % C``) and P is
``cdiv(G, N)``. Which N (:func:`plan`):

- the candidates are each P that fits on its fewest whole rounds: from the largest P up to ``G // C``
  whose batched kernel compiles, fits the UB budget and keeps every block copy a block copy (a binary
  search over the backend's plans, each compiled once, :func:`choose`) down to P = 2, and the unbatched
  launch;
- the cost model (:mod:`.batchcost`) estimates each without simulating: it prices one step of the
  batched kernel (its loads, compute and stores; the branch the launch's scalar arguments take where the
  kernel branches on them) from the compiled kernels the search made, linearly between them, and lays
  each core's steps on the simulator's timeline (pipes in order, two buffers a queue, loads and
  stores sharing the core's GM link); the best is priced again from its own compiled kernel (at most
  :data:`REFINE` times);
- the model's best is taken where it beats the UB rule's launch (the largest P that fits, capped to
  leave each core :data:`MIN_ROUNDS` batched programs where that keeps P >= 2) by :data:`MARGIN`; else,
  and where the model does not price the kernel (several steps per program, such as a loop over a
  row's chunks), the UB rule's launch runs.

A flat-form launch of fewer than :data:`MIN_ROUNDS` programs a core also tries each program split into
pieces (:data:`SPLITS`, :func:`ascdsl.passes.batching.split_programs`), each split planned as above on its
``s * G`` programs, and runs the split the model estimates :data:`MARGIN` faster than the whole launch.

Where no P of 2 or more fits, a rows-form kernel may run the rows form at P = 1 (:data:`ONE`, :func:`_one`);
and a kernel versioned on its loops' trip counts runs the version its launch's scalars take, alone, where the
model estimates that faster (:func:`specialised`).

No launch simulates anything to choose, and each distinct (kernel, G) compiles a handful of variants
once. A kernel the backend cannot compile batched keeps its form. ``ASCDSL_BATCH=0`` turns batching
off. P is a compile-time extent of the batched kernel, chosen per launch (not a runtime tile extent yet).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from ...dtypes import DType
from ...errors import CompilationError
from ...ir import Kernel, Op, walk
from ...ir.provenance import stored_params
from ...passes import run_passes, specialise
from ...passes.batching import NotBatchable, batch_programs, flat_block, form, refusal, split_programs
from ...passes.persistent import persistent_programs
from ...passes.reuse import assume_disjoint, decided_branches, launch_trips, taken_branches, unrolled_loops
from ...platforms import Platform, get_platform
from . import batchcost
from ..render.ascendc import compile_variant
from ..names.naming import field_name


def enabled() -> bool:
    """Whether launches batch programs (``ASCDSL_BATCH`` unset or not ``0``)."""
    return os.environ.get("ASCDSL_BATCH", "1") not in ("0", "")


_LANE_COPIES = frozenset({Op.GATHER_LOAD, Op.SCATTER_STORE, Op.STRIDED_LOAD, Op.STRIDED_STORE, Op.SPAN_LOAD})


def _copies(kernel: Kernel, platform: Platform) -> frozenset:
    return frozenset(i.op for i in walk(run_passes(kernel, platform).body) if i.op in _LANE_COPIES)


def keeps_block_copies(kernel: Kernel, batched: Kernel, platform: Platform) -> bool:
    """Whether ``batched`` copies by blocks wherever ``kernel`` does (batching must not turn a block
    copy into one of lanes or spans: a mask over two dims of ``[P, ROWS]`` rows is not a block bound)."""
    return _copies(batched, platform) <= _copies(kernel, platform)


@lru_cache(maxsize=1024)
def _variant(kernel: Kernel, p: int, platform: Platform, rows: bool = False):
    """The compiled kernel batched ``p`` to a program (``kernel`` itself for 1, unless ``rows``: the rows form
    at P = 1, :data:`ONE`), or None where it does not compile, fit the UB budget with double-buffered queues
    or copy by blocks wherever ``kernel`` does."""
    try:
        if p == 1 and not rows:
            return compile_variant(kernel, platform)
        batched = batch_programs(kernel, p)
        compiled = compile_variant(batched, platform)
    except (CompilationError, NotBatchable):
        return None
    if compiled.plan.single_buffered:  # fits only without the overlap batching is for
        return None
    return compiled if keeps_block_copies(kernel, batched, platform) else None


def _fits(kernel: Kernel, p: int, platform: Platform, rows: bool = False) -> bool:
    return _variant(kernel, p, platform, rows) is not None


@lru_cache(maxsize=1024)
def _step(kernel: Kernel, p: int, platform: Platform, fields: tuple = (), rows: bool = False,
          persistent: bool = False) -> batchcost.Step | batchcost.Unpriced | None:
    """The cost model's step of the kernel batched ``p`` to a program (:func:`.batchcost.price`; ``fields``: the
    launch's scalars; ``rows``: as :func:`_variant`; ``persistent``: a trip of :data:`PERSISTENT_FORM`'s loop), the
    model's reason where it does not price it, None where ``p`` does not fit."""
    compiled = _variant(kernel, p, platform, rows)
    if compiled is None:
        return None
    try:
        return batchcost.price(compiled, platform, platform.vector_core_count, dict(fields), persistent)
    except batchcost.Unpriced as e:
        return e


MIN_ROUNDS = 8
"""The UB rule's cap: batched programs per core P leaves, where that keeps P >= 2 (a core's first load
and last store overlap nothing, so a few large tiles per core cost more than eight smaller ones: softmax
16384x128 1.16x of the floor at 3 rounds of P = 137, 1.12x at 8 rounds of P = 46). Fewer programs (256
rows of 8192) keep the largest P that fits: layer norm 1.34x at P = 4, 1.63x at 2."""

MARGIN = 0.02
"""How much faster the cost model must estimate its best launch than the UB rule's to take it: the
model is within about 1% of the simulator (gelu 256 blocks at P = 7: 2.850 us for 2.823 simulated;
:mod:`.batchcost`), so nearby candidates can rank either way; within the margin the UB rule's launch,
the one measured before the model, stays."""

REFINE = 4
"""Candidates priced from their own compiled kernel at most, after the first ranking from interpolated
steps (:func:`plan`)."""


@dataclass(frozen=True)
class Launch:
    """One candidate launch: P, the batched grid N, and the cost model's estimate (us; None: unpriced);
    ``rows``: P = 1 in the rows form (:data:`ONE`); ``persistent``: the kernel's persistent form
    (:data:`PERSISTENT_FORM`), P rows a trip."""

    p: int
    grid: int
    est_us: float | None = None
    rows: bool = False
    persistent: bool = False

    @property
    def batched(self) -> bool:
        """Whether the launch runs the batched kernel."""
        return self.p > 1 or self.rows or self.persistent


@dataclass(frozen=True)
class Choice:
    """The launch a plan runs and how it was chosen: ``best`` the cost model's fastest candidate, ``rule``
    the UB rule's launch (each with the model's estimate)."""

    run: Launch
    largest: int  # the largest P that fits (1: none of 2 or more)
    rule: Launch | None = None
    best: Launch | None = None  # None: the model does not price the kernel
    why: str = ""  # why the model does not price the kernel
    capped: bool = False  # the UB rule's P is capped by MIN_ROUNDS
    split: int = 1  # programs each original one is split into (the flat form, :data:`SPLITS`); P counts these

    @property
    def p(self) -> int:
        return self.run.p

    @property
    def label(self) -> str:
        """P, and the split where the launch splits programs (``7 (split 2)``) or the rows form at P = 1 (``1 (rows)``)."""
        return f"{self.p}" + (f" (split {self.split})" if self.split > 1 else " (persistent)" if self.run.persistent
                              else " (rows)" if self.run.rows else "")

    @property
    def grid(self) -> int:
        return self.run.grid


def schedule(kernel: Kernel, programs: int, platform: Platform) -> tuple[int, int]:
    """``(P, N)``: programs per batched program and the batched grid (``(1, programs)`` where batching
    does not apply or pay). N is a whole number of rounds of the vector cores, each batched program
    ``G // N`` or one more of the original programs."""
    c = plan(kernel, programs, platform)
    return c.p, c.grid


def _grid(programs: int, p: int, cores: int) -> int:
    """The batched grid of whole rounds of ``cores`` with at most ``p`` programs per batched program."""
    return -(-(-(-programs // p)) // cores) * cores


def _launch(programs: int, n: int) -> tuple[int, int]:
    return -(-programs // n), n


def rule(programs: int, largest: int, cores: int) -> tuple[int, int]:
    """The UB rule's ``(P, N)``: the largest P that fits, capped by :data:`MIN_ROUNDS` where that keeps
    P >= 2, on whole rounds of the cores."""
    p = largest
    if programs // (cores * MIN_ROUNDS) >= 2:
        p = min(p, programs // (cores * MIN_ROUNDS))
    return _launch(programs, _grid(programs, p, cores))


SPLITS = (2, 4, 8, 16)
"""How finely a launch of few flat-form programs may split each (:func:`.split_programs`): where a core
runs fewer than :data:`MIN_ROUNDS` programs, whole blocks balance badly over the cores (gelu of 256 blocks
of 1024: 7 blocks on the busiest core where the mean is 6.4) and a core's first load and last store
overlap nothing; a split program keeps at least :data:`MIN_SPLIT_BYTES` of each copy."""

MIN_SPLIT_BYTES = 512
"""The smallest block a split leaves, in bytes of its widest element: below two 256-byte vector repeats
a program's fixed cost (vector issue per instruction, copy set-up) outweighs the finer balance."""


@lru_cache(maxsize=512)
def plan(kernel: Kernel, programs: int, platform: Platform, fields: tuple = ()) -> Choice:
    """The launch of ``programs`` programs of ``kernel`` (see the module docstring): batched whole, or,
    for a flat-form kernel of few programs a core, split (:data:`SPLITS`) where the cost model estimates
    that :data:`MARGIN` faster; ``fields``: the launch's scalar arguments (:func:`scalar_fields`), which
    decide the branch the model prices where the kernel branches on them."""
    whole = _plan(kernel, programs, platform, fields)
    best, best_us = whole, _est_us(whole, kernel, programs, platform, fields)
    looped = _persistent(kernel, programs, platform, fields, whole.p)
    if looped is not None and best_us is not None and looped.est_us < best_us * (1 - MARGIN):
        best, best_us = replace(whole, run=looped, best=looped), looped.est_us
    for s in _splits(kernel, programs, platform):
        c = _plan(split_programs(kernel, s), programs * s, platform, fields)
        if c.p >= 2 and c.best is not None and (best_us is None or c.run.est_us < best_us * (1 - MARGIN)):
            best, best_us = replace(c, split=s), c.run.est_us
    return best


PERSISTENT_FORM = "the persistent form"
"""A rows-form kernel whose programs all load the same bytes (rms norm's ``gamma``) may run as a loop on one
batched program a core (:func:`ascdsl.passes.persistent.persistent_programs`), P rows a trip, the invariant loads
once a core before the loop, where the cost model estimates it :data:`MARGIN` faster than the launch planned
without it (a program of a prologue and a loop of one step each trip: :func:`.batchcost.price`)."""


def _persistent(kernel: Kernel, programs: int, platform: Platform, fields: tuple, p: int) -> Launch | None:
    """The fastest launch of :data:`PERSISTENT_FORM` by the cost model, at ``p`` rows a trip (the whole launch's
    P; where that is 1, the largest P of the persistent form that fits, whose invariant loads are held once, not
    in every batched program's step), at the P of at most ``p`` that gives the busiest core fewest rows
    (:func:`_balanced`) or at one; None where ``kernel`` has no invariant load or none fits double-buffered."""
    looped = _looped(kernel)
    if looped is kernel:
        return None
    p = p if p > 1 else choose(looped, programs, platform)
    cores = platform.vector_core_count
    launches = []
    for q in sorted({p, _balanced(programs, p, cores), 1}):
        step = _step(looped, q, platform, fields, rows=True, persistent=True)
        if isinstance(step, batchcost.Step):
            grid = min(cores, -(-programs // q))
            us = batchcost.estimate(step, programs, grid, q, platform, persistent=True)
            launches.append(Launch(q, grid, us / batchcost.clock_mhz(platform), persistent=True))
    return min(launches, key=lambda c: c.est_us, default=None)


def _balanced(programs: int, p: int, cores: int) -> int:
    """The rows a trip, at most ``p``, that leave the busiest core of a persistent launch fewest rows (trip ``k``
    of every core starts at row ``k * cores * P``, so a P that does not spread the rows evenly gives the first
    cores a trip more: 3000 rows at P = 9, 81 on the busiest core; at P = 5, 75), the largest of those."""
    least = -(-programs // (cores * p))
    return min((-(-programs // (cores * t)) for t in range(least, 2 * least + 1)),
               key=lambda q: (sum(batchcost.persistent_trips(programs, q, min(cores, -(-programs // q)))), -q))


@lru_cache(maxsize=256)
def _looped(kernel: Kernel) -> Kernel:
    return persistent_programs(kernel)


def _splits(kernel: Kernel, programs: int, platform: Platform) -> tuple[int, ...]:
    """The split factors a launch tries: none unless ``kernel`` is of the flat form with fewer than
    :data:`MIN_ROUNDS` programs a core; each dividing BLOCK and leaving :data:`MIN_SPLIT_BYTES`."""
    block = flat_block(kernel)
    if programs >= platform.vector_core_count * MIN_ROUNDS or block is None:
        return ()
    width = max((v.type.dtype.itemsize for i in walk(kernel.body)
                 for v in (i.results if i.op is Op.LOAD else i.operands[1:2] if i.op is Op.STORE else ())), default=4)
    return tuple(s for s in SPLITS if block % s == 0 and block // s * width >= MIN_SPLIT_BYTES)


def _est_us(c: Choice, kernel: Kernel, programs: int, platform: Platform, fields: tuple = ()) -> float | None:
    """The model's estimate of ``c``'s launch, unbatched launches included (None: not priced)."""
    if c.run.est_us is not None or c.p > 1:
        return c.run.est_us
    step = _step(kernel, 1, platform, fields)
    if not isinstance(step, batchcost.Step):
        return None
    return batchcost.estimate(step, programs, programs, 1, platform) / batchcost.clock_mhz(platform)


def _plan(kernel: Kernel, programs: int, platform: Platform, fields: tuple = ()) -> Choice:
    """The launch of ``programs`` programs of ``kernel`` batched whole (P and the grid)."""
    largest = choose(kernel, programs, platform)
    cores = platform.vector_core_count
    if largest < 2:
        return _one(kernel, programs, platform, fields, largest)
    ruled = rule(programs, largest, cores)
    capped = largest > programs // (cores * MIN_ROUNDS) >= 2
    steps = {q: _step(kernel, q, platform, fields) for q in sorted(_search(kernel, programs, platform)[1])}
    why = next((s for s in steps.values() if isinstance(s, batchcost.Unpriced)), None)
    if why is not None:
        return Choice(Launch(*ruled), largest, Launch(*ruled), why=str(why), capped=capped)
    candidates = {_launch(programs, _grid(programs, q, cores)) for q in range(2, largest + 1)}
    if isinstance(_step(kernel, 1, platform, fields), batchcost.Step):
        candidates.add((1, programs))
    exact: dict[tuple[int, int], float] = {}

    def est(c, interpolated: bool = True) -> float:
        q, n = c
        if c in exact:
            return exact[c]
        s = _interpolate(steps, q) if interpolated and q > 1 and q not in steps else _step(kernel, q, platform, fields)
        if not isinstance(s, batchcost.Step):
            return float("inf")
        return batchcost.estimate(s, programs, n, q, platform) / batchcost.clock_mhz(platform)

    def fastest():
        return min(candidates, key=lambda c: (est(c), -c[0], c[1]))

    for _ in range(REFINE):  # the best priced from its own compiled kernel, until it stays the best
        best = fastest()
        if best in exact or best[0] in steps or best[0] == 1:
            break
        exact[best] = est(best, interpolated=False)
    best = fastest()
    for c in (ruled, best):
        if c not in exact and c[0] not in steps and c[0] != 1:
            exact[c] = est(c, interpolated=False)
    launch = {c: Launch(*c, est(c)) for c in (ruled, best)}
    run = best if est(best) < est(ruled) * (1 - MARGIN) else ruled
    return Choice(launch[run], largest, launch[ruled], launch[best], capped=capped)


ONE = "the rows form at P = 1"
"""Where no P of 2 or more fits, a launch may still run the rows form of one program a batched program: a
program's scalars are ``[1]`` tiles there, so a reduction's result stays on the vector unit (``Brcb``)
where the unbatched kernel reads it on the scalar unit, which then issues nothing, the next program's loads
included, until the vector pipe has reduced (``batchcost.Step.serial``): rms norm of 256 rows of 8192
float32, 1.51x of the floor unbatched, 1.30x in that form."""


def _one(kernel: Kernel, programs: int, platform: Platform, fields: tuple, largest: int) -> Choice:
    """The launch of ``programs`` programs where no P of 2 or more fits: the unbatched one, or :data:`ONE` where
    the cost model estimates it :data:`MARGIN` faster (a rows-form kernel of 2 programs a core or more)."""
    unbatched = Launch(1, programs)
    if programs // platform.vector_core_count < 2 or form(kernel) != "rows":
        return Choice(unbatched, largest)
    plain, rows = _step(kernel, 1, platform, fields), _step(kernel, 1, platform, fields, rows=True)
    if not (isinstance(plain, batchcost.Step) and isinstance(rows, batchcost.Step)):
        return Choice(unbatched, largest)
    before, after = (batchcost.estimate(s, programs, programs, 1, platform) / batchcost.clock_mhz(platform)
                     for s in (plain, rows))
    if after >= before * (1 - MARGIN):
        return Choice(replace(unbatched, est_us=before), largest)
    one = Launch(1, programs, after, rows=True)
    return Choice(one, largest, replace(unbatched, est_us=before), one)


def _interpolate(steps: dict, q: int) -> batchcost.Step | None:
    """The step at ``q`` linearly between the priced steps either side (a step's parts grow with P by the
    tile's bytes and repeats: affine between samples)."""
    below = max((k for k in steps if k <= q), default=None)
    above = min((k for k in steps if k >= q), default=None)
    if below is None or above is None:
        return None
    if below == above:
        return steps[below]
    a, b = steps[below], steps[above]
    f = (q - below) / (above - below)
    mix = lambda x, y: x + (y - x) * f  # noqa: E731
    return batchcost.Step(mix(a.load_setup, b.load_setup), mix(a.load_move, b.load_move), mix(a.compute, b.compute),
                          mix(a.store_setup, b.store_setup), mix(a.store_move, b.store_move), a.bound, a.serial,
                          mix(a.once, b.once), mix(a.load_l2, b.load_l2))


def choose(kernel: Kernel, programs: int, platform: Platform) -> int:
    """The largest P for a launch of ``programs`` programs of ``kernel`` (1 where batching does not apply)."""
    return _search(kernel, programs, platform)[0]


@lru_cache(maxsize=512)
def _search(kernel: Kernel, programs: int, platform: Platform) -> tuple[int, frozenset]:
    """The largest P up to ``programs // cores`` whose batched kernel fits (1: none of 2 or more; a binary
    search, each P compiled once) and the P it compiled that fit (the model's samples)."""
    cap = programs // platform.vector_core_count
    if cap < 2 or form(kernel) is None or not _fits(kernel, 2, platform):
        return 1, frozenset()
    lo, hi = 2, cap  # lo fits; find the largest that does
    fit = {2}
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _fits(kernel, mid, platform):
            lo = mid
            fit.add(mid)
        else:
            hi = mid - 1
    return lo, frozenset(fit)


def explain(kernel: Kernel, programs: int, platform: Platform, fields: tuple = ()) -> str:
    """Why a launch of ``programs`` programs of ``kernel`` at scalars ``fields`` runs unbatched ("" if it is batched):
    the pass's refusal at its kernel line, too few programs, or no P of 2 or more that fits."""
    why = refusal(kernel)
    if why is not None:
        return str(why)
    c = plan(kernel, programs, platform, fields)
    if c.run.batched:
        return ""
    if programs // platform.vector_core_count < 2:
        split = ("; no split of its programs into pieces is estimated faster"
                 if _splits(kernel, programs, platform) else "")
        return (f"{programs} program{'s' * (programs != 1)} on {platform.vector_core_count} vector cores: "
                f"fewer than 2 per core{split}")
    if c.largest < 2:
        one = ("" if form(kernel) != "rows" else f"; {ONE} is not estimated {MARGIN:.0%} faster"
               if _fits(kernel, 1, platform, rows=True) else f"; nor does {ONE}")
        return (f"{kernel.loc}: no P >= 2 whose batched kernel fits the UB budget of {platform.name} and "
                "copies by blocks where the kernel does" + one)
    return (f"the cost model estimates the unbatched launch fastest: {c.run.est_us:.3g} us, against "
            f"{c.rule.est_us:.3g} us at P = {c.rule.p} (grid {c.rule.grid})")


def reason(c: Choice) -> str:
    """How a batched launch's P was chosen (what :func:`describe` says after it)."""
    ub = f"the largest P that fits ({c.largest})" + (f", capped to leave each core {MIN_ROUNDS} batched programs" * c.capped)
    if c.run.persistent:
        return f"{PERSISTENT_FORM}, the loads every program makes once a core: est {c.run.est_us:.3g} us"
    if c.run.rows:
        return (f"no P >= 2 fits; {ONE} keeps each reduction on the vector unit (est {c.run.est_us:.3g} us, against "
                f"{c.rule.est_us:.3g} us unbatched)")
    if c.best is None:
        return (f"P of the UB rule, {ub}: the cost model prices one load-compute-store step per batched "
                f"program, not this kernel's ({c.why})")
    if c.run == c.best and c.run != c.rule:
        return (f"P by the cost model (ascdsl/backend/batchcost.py): est {c.run.est_us:.3g} us, against "
                f"{c.rule.est_us:.3g} us for the UB rule's P = {c.rule.p} ({ub})")
    if c.run == c.best:
        return f"P by the cost model and the UB rule ({ub}) alike: est {c.run.est_us:.3g} us"
    return (f"P of the UB rule, {ub}: est {c.run.est_us:.3g} us; the cost model's best (P = {c.best.p}, grid "
            f"{c.best.grid}: {c.best.est_us:.3g} us) is not {MARGIN:.0%} faster")


def describe(kernel: Kernel, grid: tuple[int, int, int], platform: Platform, args: list) -> str:
    """``--explain``'s line for a launch on ``grid`` and ``args`` (:func:`launch_plan`): its batched form, P and grid,
    or why it keeps its form."""
    if not enabled():
        return "not batched: ASCDSL_BATCH=0 turns batching off"
    if grid[1] * grid[2] != 1:
        return f"not batched: grid {grid} has program ids along axis 1 or 2 (only 1-D grids batch)"
    kernel, c = launch_plan(kernel, args, grid, platform)
    if not c.run.batched:
        return "not batched: " + explain(kernel, grid[0], platform, scalar_fields(kernel, args))
    split = (f", each program split into {c.split} of {flat_block(kernel) // c.split} lanes" if c.split > 1 else "")
    return (f"batched ({form(kernel)} form{split}): P = {c.p} program{'s' * (c.p != 1)} per batched program, "
            f"grid {c.grid} ({c.grid // platform.vector_core_count} per core); {reason(c)}")


def disjoint(kernel: Kernel, args: list) -> bool:
    """Whether the arrays ``kernel`` may store through overlap no other pointer argument in memory (NumPy's
    bounds test: views that interleave without overlapping count as overlapping)."""
    arrays = {name: a for name, p, a in zip(kernel.param_names, kernel.params, args) if not isinstance(p.type.dtype, DType)}
    if not all(isinstance(a, np.ndarray) for a in arrays.values()):
        return False
    return not any(np.may_share_memory(arrays[s], a) for s in stored_params(kernel) for name, a in arrays.items()
                   if name != s)


@lru_cache(maxsize=1024)
def _specialised(kernel: Kernel, apart: bool, platform: Platform) -> Kernel:
    out = specialise(kernel, apart, platform)
    marked = assume_disjoint(kernel) if apart else kernel
    if out is kernel and _looped(marked) is not marked:
        out = marked  # disjoint arrays let its persistent form load what every program loads once
    # a versioned kernel holds both branches' tiles: where that does not fit (or lower), the kernel as given
    return out if out is kernel or _variant(out, 1, platform) is not None else kernel


@lru_cache(maxsize=1024)
def _taken(kernel: Kernel, decided: tuple) -> Kernel:
    return taken_branches(kernel, decided)


UNROLL = 32
"""The most trips a launch unrolls top-level loops to (:func:`ascdsl.passes.reuse.unrolled_loops`): each trip is a
copy of the loop's body in the kernel's text, and the loads they keep in UB must fit its budget anyway (32
chunks of 256 float32 lanes are 32 KiB a row)."""


@lru_cache(maxsize=1024)
def _unrolled(kernel: Kernel, trips: int, apart: bool, platform: Platform, recompute: bool) -> Kernel | None:
    """``kernel`` unrolled to ``trips`` (``recompute``: its float tile arithmetic computed where each loop computed
    it, not held from the first) and specialised as a launch's kernel is, or None where nothing unrolls."""
    marked = assume_disjoint(kernel) if apart else kernel
    unrolled = unrolled_loops(marked, trips, recompute)
    return None if unrolled is marked else specialise(unrolled, apart, platform)


def _straights(kernel: Kernel, args: list, trips: int, apart: bool, platform: Platform) -> list[Kernel]:
    """The unrolled kernel's straight branches a launch may run (see :func:`specialised`): of the unrolled kernel
    and the one that computes its tile arithmetic again, each whose batched programs fit two or whose persistent
    form (invariant loads held once) fits one row a trip. The model ranks them with the loops: at one row a trip a
    trip's vector calls are a row's chunks and the vector pipe bounds it, computing again adding a call a chunk,
    holding taking UB a second row a trip would need (layer norm 512x6144: 1.08x of the floor holding at one row
    a trip, 1.15x computing again at two; 200x10000, where holding fits no row a trip: 1.26x computing again,
    1.42x looping at P = 5)."""
    out = []
    for recompute in (False, True):
        unrolled = _unrolled(kernel, trips, apart, platform, recompute)
        if unrolled is not None:
            straight = _taken(unrolled, decided_branches(unrolled, args))
            looped = _looped(straight)
            if _fits(straight, 2, platform) or looped is not straight and _fits(looped, 1, platform, rows=True):
                out.append(straight)
    return out


def specialised(kernel: Kernel, args: list, platform: Platform, programs: int | None = None) -> Kernel:
    """The kernel a launch of ``kernel`` on ``args`` runs before batching (:func:`ascdsl.passes.specialise`:
    loads reused, across writes through other pointers where the arguments are :func:`disjoint`), where the
    backend compiles it; else ``kernel``. For a launch of ``programs`` programs (a 1-D grid), each top-level
    branch the launch's scalar arguments decide (a version of :func:`ascdsl.passes.reuse.single_trip_loops`)
    is then the branch taken (:func:`ascdsl.passes.reuse.taken_branches`) where the cost model estimates that
    kernel's launch :data:`MARGIN` faster: its UB plan holds one branch's tiles, not both, so a larger P may
    fit and a store may go out of its load's queue buffer (layer norm 3000x777 at P = 10: 1.63x of the floor
    -> 1.37x), which couples a step's next loads to its stores; with writes through the L2 the branch is faster
    at 4096x1024 too (22.00 us simulated at P = 12, against 25.48 keeping both versions at P = 6).

    Where the launch's scalars give the kernel's top-level loops one trip count of 2 to :data:`UNROLL`
    (:func:`ascdsl.passes.reuse.launch_trips`), the kernel unrolled to that count
    (:func:`ascdsl.passes.reuse.unrolled_loops`: loads of a row the loops read again kept in UB) is a third
    candidate, its straight-line branch taken, run where the model estimates it fastest by the margin, and only
    where two programs of it batched fit UB double-buffered: one program a step reads `W` and `B` (what every row
    shares) for its one row where the loops' batched programs share them over P rows, and the model does not
    price the loops to compare (layer norm 2000x3000 unrolled at P = 1 in the rows form: 2.46x of the floor,
    2.16x looping at P = 6; 256x8192, whose X, W and B are 96 KiB a program, fit only single-buffered: 3.51x,
    2.64x looping). The one that computes its float tile arithmetic where each loop did
    (``unrolled_loops(..., recompute=True)``: layer norm's ``x - mean`` not held from the variance to the output) is
    a candidate beside it (layer norm 512x6144: two rows a trip in 182,656 bytes, 217,216 holding it), and each is
    one also where only its persistent form fits, at one row a trip (:func:`_straights`): it reads a row once where
    the loops read it three times (layer norm 256x8192: X-resident at one row a trip, its copies of a row one
    (:mod:`ascdsl.backend.plan.coalesce`) and its output's chunks issued together (:mod:`ascdsl.backend.plan.order`),
    against the loops at P = 4; 512x6144 holding at one row a trip, 1.08x of the floor, against 1.15x computing
    again at two)."""
    apart = disjoint(kernel, args)
    out = _specialised(kernel, apart, platform)
    if programs is None or not enabled():
        return out
    taken = _taken(out, decided_branches(out, args))
    candidates = [] if taken is out else [taken]
    trips = launch_trips(kernel, args)
    candidates += _straights(kernel, args, trips, apart, platform) if trips is not None and 1 < trips <= UNROLL else []
    if not candidates:
        return out
    fields = scalar_fields(kernel, args)

    def est(k: Kernel) -> float | None:
        return _est_us(plan(k, programs, platform, fields), k, programs, platform, fields)

    best, best_us = out, est(out)
    for k in candidates:
        us = est(k)
        if us is not None and (best_us is None or us < best_us * (1 - MARGIN)):
            best, best_us = k, us
    return best


def scalar_fields(kernel: Kernel, args: list) -> tuple:
    """The launch's scalar arguments as ``(tiling field name, value)`` pairs (what :func:`plan` takes)."""
    return tuple((field_name(name), v.item() if isinstance(v, np.generic) else v)
                 for name, p, v in zip(kernel.param_names, kernel.params, args) if isinstance(p.type.dtype, DType))


def launch_plan(kernel: Kernel, args: list, grid: tuple, platform: Platform) -> tuple[Kernel, Choice | None]:
    """The kernel a launch on ``args`` and ``grid`` runs (:func:`specialised`) and its plan at the launch's scalars
    (None: batching off or a grid not 1-D); one estimate for the launch, ``--explain`` and the bench."""
    flat = grid[1] * grid[2] == 1
    kernel = specialised(kernel, args, platform, grid[0] if flat else None)
    return kernel, plan(kernel, grid[0], platform, scalar_fields(kernel, args)) if flat and enabled() else None


def batch_launch(kernel: Kernel, args: list, grid: tuple[int, int, int], platform: str) -> tuple[Kernel, list, tuple]:
    """``(kernel, args, grid)`` to run: :func:`launch_plan`'s, batched as planned (the program count appended)."""
    kernel, c = launch_plan(kernel, args, grid, get_platform(platform))
    if c is None or not c.run.batched:
        return kernel, args, grid
    if c.run.persistent:  # the persistent kernel's launch of grid * P programs, P rows a trip
        return (batch_programs(_looped(kernel), c.p), [*args, np.int32(grid[0]), np.int32(c.grid * c.p)],
                (c.grid, 1, 1))
    split = split_programs(kernel, c.split) if c.split > 1 else kernel
    return batch_programs(split, c.p), [*args, np.int32(grid[0] * c.split)], (c.grid, 1, 1)
