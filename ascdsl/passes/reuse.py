"""Single-trip loops and reused loads: a row that fits one block is read once, however many loops read it.

Triton's tutorial layer norm reads its row in three loops ``for off in range(0, N, BLOCK_SIZE)``; where
``N <= BLOCK_SIZE`` each runs once and the three loads of ``X + cols`` read the same bytes.

- :func:`single_trip_loops` versions the kernel on its top-level loops of a run-time trip count and a
  constant positive step, as early as their bounds are known: ``if <every such loop runs exactly once>:
  <the rest, each loop's body inlined once> else: <the rest as it was>``. The condition is one uniform scalar (``lower < upper`` and ``upper -
  lower <= step`` for each loop, from bounds computed before the branch: parameters, constants and scalar
  arithmetic), so the branch is not per-program control flow and batching applies to it. It versions only
  where the straight-line branch then reuses more loads than the loops did (:func:`reused_loads`).
- :func:`reused_loads` replaces a load by an earlier one it is dominated by with the same address, mask
  and ``other`` (equal pure expressions compare equal) where no write between them may reach its bytes.

The aliasing rule: a write (a store or an atomic, in between or anywhere in a loop around the later load)
through a pointer derived from the same pointer parameter as the load, or of unknown provenance, may reach
its bytes; one through another parameter may too (a caller may pass overlapping arrays), unless the kernel
is specialised for disjoint pointer arguments (:data:`DISJOINT`, set by a launch whose arrays stored
through overlap no other argument: :func:`ascdsl.backend.batching.batchrun.specialised`). Nothing is reordered.
"""
from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

import numpy as np

from .. import dtypes
from ..ir.builder import Fresh
from ..ir.core import Block, GroupOp, Instr, Kernel, Op, Type, Value, walk
from ..ir.provenance import STORES, pointer_roots
from ..ir.treemap import tree_map
from .loops import constant_step, fresh_values
from .peel import Peel

DISJOINT = "DISJOINT_POINTERS"
"""The constexpr a kernel specialised for disjoint pointer arguments records (its IR dump shows it): every
pointer argument it stores through overlaps no other pointer argument in memory."""

PURE = GroupOp.ELEMENTWISE | GroupOp.LEAF | GroupOp.SHAPE
"""The ops whose value is a function of their operands alone (two with equal operands compute one value)."""
_WRITES = STORES | GroupOp.ATOMIC | {Op.SYNC_ALL}


def assume_disjoint(kernel: Kernel) -> Kernel:
    """``kernel`` specialised for launches whose stored-through pointer arguments overlap no other one."""
    return kernel if assumes_disjoint(kernel) else replace(kernel, constexprs=(*kernel.constexprs, (DISJOINT, True)))


def assumes_disjoint(kernel: Kernel) -> bool:
    return dict(kernel.constexprs).get(DISJOINT) is True


class Aliasing:
    """The aliasing rule of the module docstring over one kernel's pointers: which writes may reach which loads."""

    def __init__(self, kernel: Kernel):
        self.roots = pointer_roots(kernel)
        self.disjoint = assumes_disjoint(kernel)

    def of(self, pointer: Value) -> frozenset:
        """The pointer parameters ``pointer`` derives from (empty: unknown provenance)."""
        return self.roots.get(pointer.id, frozenset())

    def writes(self, instrs) -> list[frozenset]:
        """The roots of every write (a store or an atomic) in ``instrs`` and their regions; a grid barrier is a
        write of unknown provenance (what the other programs stored before it)."""
        return [frozenset() if i.op is Op.SYNC_ALL else self.of(i.operands[0])
                for i in walk(Block((), tuple(instrs))) if i.op in _WRITES]

    def may_reach(self, load: frozenset, write: frozenset) -> bool:
        """Whether a write through a pointer of roots ``write`` may change bytes a load of roots ``load`` reads."""
        return not load or not write or bool(load & write) or not self.disjoint


def _attrs_key(attrs) -> tuple:
    # repr keeps -0.0 apart from 0.0 (a masked lane's `other`)
    return tuple((k, repr(v) if isinstance(v, float) else v) for k, v in attrs)


class _Reuse:
    """The rewrite of :func:`reused_loads` over one kernel; ``count`` the loads it replaced."""

    def __init__(self, kernel: Kernel, values: bool = False, recompute: bool = False):
        self.values = values  # pure values too: one computation of each, splat constants as scalars, x + 0 as x
        self.recompute = recompute  # but float tile arithmetic computed where it is written (not held for later)
        self.emit = Fresh(kernel)
        self.splats: dict[int, tuple] = {}  # a splat constant tile's id -> its const attrs
        for i in walk(kernel.body):
            if i.op is Op.CONST and not i.result.type.is_scalar:
                self.splats[i.result.id] = i.attrs
            elif i.op in GroupOp.SHAPE and i.operands[0].id in self.splats:
                self.splats[i.result.id] = self.splats[i.operands[0].id]
        self.alias = Aliasing(kernel)
        self.keys: dict[int, object] = {}  # a pure value's id -> its expression over such keys and other ids
        for i in walk(kernel.body):  # (values defined outside a region walked alone)
            self.note(i)
        self.subst: dict[int, Value] = {}
        self.plus_zero: dict[int, Value] = {}  # the id of a float x + 0.0 -> x
        self.count = 0

    def note(self, instr: Instr):
        """The key of a pure ``instr``'s value (None for any other instruction), noted."""
        if instr.op not in PURE or len(instr.results) != 1:
            return None
        key = (instr.op, _attrs_key(instr.attrs), tuple(self.key(v) for v in instr.operands), instr.result.type)
        self.keys[instr.result.id] = key
        return key

    def key(self, v: Value):
        return self.keys.get(v.id, v.id)

    def kill(self, avail: dict, instr: Instr) -> dict:
        """``avail`` without the loads a write in ``instr`` (or its regions) may reach."""
        writes = self.alias.writes((instr,))
        return {k: (v, r) for k, (v, r) in avail.items()
                if r is None or not any(self.alias.may_reach(r, w) for w in writes)}

    def scalar_operands(self, instr: Instr, out: list, avail: dict) -> Instr:
        """``instr`` with its splat constant tiles (``tl.zeros`` a loop's accumulator started from, run once) as
        scalar constants where it is arithmetic on a tile of its shape."""
        if instr.op in GroupOp.ARITH and any(v.type == instr.result.type and v.id not in self.splats
                                               for v in instr.operands):
            ops = []
            for v in instr.operands:
                if v.id in self.splats:
                    key = (Op.CONST, _attrs_key(self.splats[v.id]), (), Type(v.type.dtype))
                    if key not in avail:
                        avail[key] = (self.emit.instr(out, Op.CONST, key[3], (), self.splats[v.id], instr.loc), None)
                        self.keys[avail[key][0].id] = key
                    v = avail[key][0]
                ops.append(v)
            instr = replace(instr, operands=tuple(ops))
        return instr

    def recomputed(self, instr: Instr) -> bool:
        """``instr`` is float tile arithmetic computed again where the kernel computes it again (``recompute``)."""
        t = instr.result.type
        return self.recompute and instr.op in GroupOp.ARITH and not t.is_scalar and t.dtype.is_float

    def unchanged(self, instr: Instr) -> Value | None:
        """The operand an addition of zero leaves as it is (None: none): an integer plus 0, or a float that is
        never -0.0 (a square) plus +0.0 (which makes -0.0 +0.0). Notes any other float plus +0.0 for
        :meth:`summed`."""
        if instr.op is not Op.ADD:
            return None
        for zero, x in (instr.operands, instr.operands[::-1]):
            kz, kx = self.key(zero), self.key(x)
            if x.type != instr.result.type or not (isinstance(kz, tuple) and kz[0] is Op.CONST):
                continue
            if kz[1] == (("value", 0),) and x.type.dtype.kind == "int":
                return x
            if kz[1] == (("value", "0.0"),):
                if isinstance(kx, tuple) and kx[0] is Op.MUL and kx[2][0] == kx[2][1]:
                    return x
                self.plus_zero[instr.result.id] = x
        return None

    def summed(self, instr: Instr) -> Instr:
        """A sum of ``x + 0.0`` as the sum of ``x``: a float sum starts from +0.0 (NumPy's, the interpreter's),
        so a lane's -0.0 and +0.0 add alike."""
        if instr.op is Op.SUM and instr.operands[0].id in self.plus_zero:
            return replace(instr, operands=(self.plus_zero[instr.operands[0].id],))
        return instr

    def block(self, block: Block, avail: dict) -> Block:
        avail = dict(avail)  # loads of enclosing blocks dominate this one
        out = []
        for instr in block.body:
            instr = replace(instr, operands=tuple(self.subst.get(v.id, v) for v in instr.operands))
            if self.values:
                instr = self.summed(self.scalar_operands(instr, out, avail))
                same = self.unchanged(instr)
                if same is not None:
                    self.subst[instr.result.id] = same
                    continue
            if instr.regions:
                # a loop's writes may come before any of its iterations' reads
                inner = self.kill(avail, instr) if instr.op in (Op.FOR, Op.WHILE) else avail
                instr = replace(instr, regions=tuple(self.block(r, inner) for r in instr.regions))
                avail = self.kill(avail, instr)
            elif instr.op is Op.LOAD:
                key = (_attrs_key(instr.attrs), tuple(self.key(v) for v in instr.operands), instr.result.type)
                if key in avail:
                    self.subst[instr.result.id] = avail[key][0]
                    self.count += 1
                    continue
                avail[key] = (instr.result, self.alias.of(instr.operands[0]))
            elif instr.op in _WRITES:
                avail = self.kill(avail, instr)
            key = self.note(instr)
            if self.values and key is not None and not self.recomputed(instr):
                if key in avail:
                    self.subst[instr.result.id] = avail[key][0]
                    continue
                avail[key] = (instr.result, None)  # no write changes a pure value
            out.append(instr)
        return Block(block.args, tuple(out))


def reused_loads(kernel: Kernel, platform=None) -> Kernel:
    """A load whose address, mask and ``other`` equal a dominating load's, with no write between them that
    may reach its bytes (the module's aliasing rule), is that load's value."""
    r = _Reuse(kernel)
    body = r.block(kernel.body, {})
    return kernel.with_body(body) if r.count else kernel


# ---------------------------------------------------------------- single-trip loops


class _Version:
    """The rewrite of :func:`unrolled_loops`: ``trips`` runs of each qualifying loop."""

    def __init__(self, kernel: Kernel, trips: int = 1):
        self.kernel = kernel
        self.trips = trips
        self.emit = Fresh(kernel)
        self.defs = _definitions(kernel)
        self.copies: dict[int, int] = {}  # a value of a copied region -> the value it copies (for its name)
        self.peel = Peel(kernel)

    def step(self, loop: Instr) -> int | None:
        """The constant positive step of ``loop`` whose ``trips`` runs span a range of its bounds' dtype,
        None where it has none."""
        step = constant_step(self.defs, loop)
        return step if step is not None and step * self.trips <= np.iinfo(loop.operands[2].type.dtype.np).max else None

    def qualifies(self, instr: Instr, ready: set) -> bool:
        """Whether ``instr`` is a loop of a constant positive step whose bounds (of one dtype) are computed
        from the values ``ready`` alone."""
        if instr.op is not Op.FOR or len({v.type for v in instr.operands[:3]}) != 1:
            return False
        return (self.step(instr) is not None
                and all(self.hoisted(v, ready, [], {}) is not None for v in instr.operands[:2]))

    def hoisted(self, v: Value, ready: set, out: list, memo: dict) -> Value | None:
        """``v`` computed from the values ``ready`` (a clone of its pure scalar definition appended to
        ``out``), None where it depends on anything else."""
        if v.id in ready:
            return v
        if v.id not in memo:
            d = self.defs.get(v.id)
            if d is None or d.op not in PURE or d.regions or not d.result.type.is_scalar:
                return None
            ops = [self.hoisted(o, ready, out, memo) for o in d.operands]
            if None in ops:
                return None
            memo[v.id] = self.emit.instr(out, d.op, d.result.type, ops, d.attrs, d.loc)
        return memo[v.id]

    def const(self, out: list, like: Value, value: int, loc) -> Value:
        return self.emit.instr(out, Op.CONST, like.type, (), (("value", value),), loc)

    def condition(self, loops: list[Instr], ready: set, out: list) -> Value:
        """Every loop of ``loops`` runs exactly ``trips`` times: ``lower < upper``, ``upper - lower <= trips *
        step`` and, for more than one trip, ``upper - lower > (trips - 1) * step`` (the difference in the
        bounds' dtype: a range of 2^31 or more int32 steps wraps, as the loop's own counter would)."""
        memo: dict = {}
        b = Type(dtypes.bool_)
        cond = None
        keys, seen = _Reuse(self.kernel), set()
        for loop in loops:
            bounds = tuple(keys.key(v) for v in loop.operands[:3])
            if bounds in seen:  # loops over the same range: one test
                continue
            seen.add(bounds)
            lower, upper, step = (self.hoisted(v, ready, out, memo) for v in loop.operands[:3])
            loc = loop.loc
            span = step if self.trips == 1 else self.const(out, step, self.trips * self.step(loop), loc)
            runs = self.emit.instr(out, Op.LT, b, (lower, upper), (), loc)
            length = self.emit.instr(out, Op.SUB, lower.type, (upper, lower), (), loc)
            once = self.emit.instr(out, Op.AND, b, (runs, self.emit.instr(out, Op.LE, b, (length, span), (), loc)),
                                   (), loc)
            if self.trips > 1:
                fewer = self.const(out, step, (self.trips - 1) * self.step(loop), loc)
                once = self.emit.instr(out, Op.AND, b, (once, self.emit.instr(out, Op.LT, b, (fewer, length), (), loc)),
                                       (), loc)
            cond = once if cond is None else self.emit.instr(out, Op.AND, b, (cond, once), (), loc)
        return cond

    def fresh(self, instrs) -> dict[int, Value]:
        """:func:`.loops.fresh_values` of ``instrs``, each copy noted for its name."""
        fresh = fresh_values(self.emit, instrs)
        self.copies.update((new.id, old) for old, new in fresh.items())
        return fresh

    def inlined(self, tail: tuple, loops: list[Instr]) -> list[Instr]:
        """``tail`` with each loop of ``loops`` its body ``trips`` times (the induction variable its lower
        bound plus the run's multiple of the step, the carried values their inits, then what the previous
        run yields; the results what the last yields), each run after the first on values of its own."""
        subst: dict[int, Value] = {}
        rule = lambda x: subst.get(x.id) if isinstance(x, Value) else None  # noqa: E731
        out: list[Instr] = []
        for instr in tail:
            if not any(instr is loop for loop in loops):
                out.append(tree_map(instr, before=rule))
                continue
            region = instr.regions[0]
            *body, yld = region.body
            lower = subst.get(instr.operands[0].id, instr.operands[0])
            carried = [subst.get(v.id, v) for v in instr.operands[3:]]
            masks, step = self.peel.masks(instr), self.step(instr)
            for run in range(self.trips):
                index = lower if run == 0 else self.emit.instr(
                    out, Op.ADD, lower.type, (lower, self.const(out, lower, run * step, instr.loc)), (), instr.loc)
                subst.update(self.fresh(body) if run else {})
                subst.update((a.id, v) for a, v in zip(region.args, (index, *carried)))
                # a run before the last has every lane of a mask `index + tl.arange(s, e) < upper` below upper
                # where e - 1 <= (trips - 1 - run) * step: the last run's index is below upper
                full = {subst[m].id if m in subst else m for m, e in masks.items()
                        if e - 1 <= (self.trips - 1 - run) * step}
                kept: dict[int, Value] = {}
                out += self.peel.unmasked(Block((), tuple(tree_map(i, before=rule) for i in body)), full, kept).body
                carried = [kept.get(v.id, v) for v in (tree_map(v, before=rule) for v in yld.operands)]
            subst.update((r.id, v) for r, v in zip(instr.results, carried))
        return out

    def rewrite(self) -> Kernel | None:
        """The versioned kernel, None where no loop qualifies."""
        body = self.kernel.body.body
        ready = {a.id for a in self.kernel.body.args}
        first, loops, out = None, [], []
        for n, instr in enumerate(body):
            if self.qualifies(instr, ready):
                first = n if first is None else first
                loops.append(instr)
            elif first is None:
                ready.update(r.id for r in instr.results)
        if first is None:
            return None
        # the branch as early as its condition can be computed: what comes before it runs in both branches'
        # stead once, and the straight-line branch is the program's one step
        ready = {a.id for a in self.kernel.body.args}
        for first, instr in enumerate(body):
            if all(self.hoisted(v, ready, [], {}) is not None for loop in loops for v in loop.operands[:3]):
                break
            ready.update(r.id for r in instr.results)
        cond = self.condition(loops, ready, out)
        tail = body[first:]
        once = self.inlined(tail, loops)
        fresh = self.fresh(tail)  # the branch that keeps the loops
        kept = [tree_map(i, before=lambda x: fresh.get(x.id) if isinstance(x, Value) else None) for i in tail]
        y = Instr(Op.YIELD, loc=loops[0].loc)
        branch = Instr(Op.IF, (), (cond,), (), (Block((), (*once, y)), Block((), (*kept, y))), loops[0].loc)
        names = dict(self.kernel.names)
        names.update((new, names[old]) for new, old in self.copies.items() if old in names)
        return replace(self.kernel, body=Block(self.kernel.body.args, (*body[:first], *out, branch)),
                       names=tuple(sorted(names.items())))


def unrolled_loops(kernel: Kernel, trips: int, recompute: bool = False) -> Kernel:
    """The kernel versioned on its top-level loops of run-time trip counts each running exactly ``trips`` times
    (see the module docstring), where that branch, straight-line, reuses more loads than the loops do; else
    ``kernel``. A run before the last drops the masks ``index + tl.arange(s, e) < upper`` of its loop's own bound
    whose lanes the branch's condition puts below ``upper`` (as :func:`.peel.full_blocks` does in its main loop:
    a row of whole blocks then selects nothing but in its last block). ``recompute``: the branch computes its float
    tile arithmetic where each loop did (loads still once), holding less in UB across its steps."""
    versioned = _Version(kernel, trips).rewrite()
    if versioned is None:
        return kernel
    *head, branch = versioned.body.body
    once, before = _Reuse(versioned, values=True, recompute=recompute), _Reuse(versioned)
    straight = once.block(branch.regions[0], {})
    before.block(branch.regions[1], {})
    if once.count <= before.count:
        return kernel
    return versioned.with_body(Block(versioned.body.args, (*head, replace(branch, regions=(straight, branch.regions[1])))))


def single_trip_loops(kernel: Kernel, platform=None) -> Kernel:
    """:func:`unrolled_loops` of one trip: a row that fits one block read once."""
    return unrolled_loops(kernel, 1)


# ---------------------------------------------------------------- branches a launch decides

TAKEN = "TAKEN_BRANCHES"
"""The constexpr a kernel specialised for the branches its launch takes records them under (its IR dump
shows them): ``then`` or ``else`` for each top-level ``if`` dropped, in order."""

_SCALAR_OPS = {Op.ADD: np.add, Op.SUB: np.subtract, Op.MUL: np.multiply, Op.MINIMUM: np.minimum,
               Op.MAXIMUM: np.maximum, Op.LT: np.less, Op.LE: np.less_equal, Op.GT: np.greater,
               Op.GE: np.greater_equal, Op.EQ: np.equal, Op.NE: np.not_equal, Op.AND: np.bitwise_and,
               Op.OR: np.bitwise_or, Op.XOR: np.bitwise_xor}


@lru_cache(maxsize=256)
def _definitions(kernel: Kernel) -> dict[int, Instr]:
    """The instruction defining each value of ``kernel`` (by result id; the cached map is read, never changed)."""
    return {r.id: i for i in walk(kernel.body) for r in i.results}


def _evaluator(kernel: Kernel, scalars: dict[int, object]):
    """The value of a scalar of ``kernel`` at a launch whose scalar parameters are ``scalars`` (by value id),
    or None where it is not integer arithmetic and comparisons of those and constants (computed in the
    values' dtypes, as the kernel computes them)."""
    defs = _definitions(kernel)
    memo: dict[int, object] = {}

    def value(v: Value):
        if v.id in scalars:
            return v.type.dtype.np.type(scalars[v.id])
        if v.id not in memo:
            d = defs.get(v.id)
            memo[v.id] = None
            if d is not None and d.op is Op.CONST and v.type.is_scalar and v.type.dtype.kind in ("int", "bool"):
                memo[v.id] = v.type.dtype.np.type(d.attr("value"))
            elif d is not None and d.op in _SCALAR_OPS and v.type.is_scalar and v.type.dtype.kind in ("int", "bool"):
                ops = [value(o) for o in d.operands]
                if None not in ops:
                    with np.errstate(over="ignore"):
                        memo[v.id] = _SCALAR_OPS[d.op](*ops).astype(v.type.dtype.np)
        return memo[v.id]

    return value


def _scalars(kernel: Kernel, args: list) -> dict[int, object]:
    return {p.id: a for p, a in zip(kernel.params, args) if p.type.is_scalar and isinstance(p.type.dtype, dtypes.DType)
            and np.ndim(a) == 0 and not isinstance(a, np.ndarray)}


def _decided(kernel: Kernel, scalars: dict[int, object]) -> tuple[bool | None, ...]:
    """For each top-level ``if`` of ``kernel``, whether its condition holds at a launch whose scalar parameters
    are ``scalars`` (by value id), or None where :func:`_evaluator` cannot compute it."""
    value = _evaluator(kernel, scalars)
    return tuple(None if (c := value(i.operands[0])) is None else bool(c) for i in kernel.body.body if i.op is Op.IF)


def decided_branches(kernel: Kernel, args: list) -> tuple[bool | None, ...]:
    """:func:`_decided` at a launch of ``kernel`` on ``args`` (its runtime arguments in order)."""
    return _decided(kernel, _scalars(kernel, args))


@lru_cache(maxsize=256)
def _unrolled_bounds(kernel: Kernel) -> tuple[tuple[Value, Value, int], ...]:
    """``(lower, upper, step)`` of each top-level loop :func:`unrolled_loops` would unroll (a kernel's, once for
    all its launches)."""
    version = _Version(kernel)
    ready = {a.id for a in kernel.body.args}
    bounds = []
    for instr in kernel.body.body:
        if version.qualifies(instr, ready):
            bounds.append((*instr.operands[:2], version.step(instr)))
        elif not bounds:
            ready.update(r.id for r in instr.results)
    return tuple(bounds)


def launch_trips(kernel: Kernel, args: list) -> int | None:
    """The trip count every top-level loop :func:`unrolled_loops` would unroll runs at a launch of ``kernel`` on
    ``args`` (its runtime arguments in order), None where they run different counts, one not computed from the
    launch's scalars, or none."""
    bounds = _unrolled_bounds(kernel)
    if not bounds:
        return None
    value = _evaluator(kernel, _scalars(kernel, args))
    trips = set()
    for lower, upper, step in bounds:
        lower, upper = value(lower), value(upper)
        if lower is None or upper is None:
            return None
        trips.add(max(0, -(-(int(upper) - int(lower)) // step)))
    return trips.pop() if len(trips) == 1 else None


def taken_branches(kernel: Kernel, decided: tuple[bool | None, ...]) -> Kernel:
    """``kernel`` with each top-level ``if`` whose condition ``decided`` holds (or not) at a launch replaced by the
    branch it takes there (:func:`decided_branches`), its results by what that branch yields; ``kernel`` where no
    branch is decided. A kernel versioned by :func:`single_trip_loops` runs one of its two versions, not both:
    its UB plan holds one version's tiles."""
    if all(d is None for d in decided):
        return kernel
    subst: dict[int, Value] = {}
    rule = lambda x: subst.get(x.id) if isinstance(x, Value) else None  # noqa: E731
    out, taken, ifs = [], [], iter(decided)
    for instr in kernel.body.body:
        instr = tree_map(instr, before=rule)
        d = next(ifs) if instr.op is Op.IF else None
        if d is None:
            out.append(instr)
            continue
        *body, yld = instr.regions[0 if d else 1].body
        out += body
        subst.update((r.id, subst.get(v.id, v)) for r, v in zip(instr.results, yld.operands))
        taken.append("then" if d else "else")
    return replace(kernel, body=Block(kernel.body.args, tuple(out)),
                   constexprs=(*kernel.constexprs, (TAKEN, ",".join(taken))))


__all__ = ["DISJOINT", "PURE", "TAKEN", "Aliasing", "assume_disjoint", "assumes_disjoint", "decided_branches",
           "launch_trips", "reused_loads", "single_trip_loops", "taken_branches", "unrolled_loops"]
