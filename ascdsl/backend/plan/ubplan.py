"""UB planning over the kernel IR: logical buffers -> physical slots, computed once per variant.

* INPUT and OUTPUT buffers of one queue identity (pointer, occurrence in its segment) share one
  double-buffered ``TQue`` slot; a load made once before a loop (:func:`_once`: rms norm's ``gamma``
  before the persistent form's loop over rows) gets a single-buffered one, the second buffer overlapping
  nothing;
* TILE and SCRATCH buffers share ``TBuf`` slots by live range (program order over the calls that
  touch them; a buffer used inside a loop it was defined before, or computed on the loop's first trip
  only (:attr:`.kir.If.first`), stays live to the loop's end); a
  call marked ``inplace`` writes its result over a source of the same element size that dies at
  that call, or whose other uses are all such calls in the else-branch of an If (the other schedule
  of one operation, picked at run time); otherwise the best-fitting free slot is reused, or a new
  one is made. In the plan :func:`spread_out` makes where it fits the budget (sizes known), a
  slot a call of the last :data:`SPREAD` statements touched is not free, and of equals the least recently
  used is taken: independent calls then write apart, and :mod:`.order` lays them between fewer barriers
  (:func:`ascdsl.backend.render.ascendc.planned` takes it where it leaves fewer, outside the general form the
  lift compares with the kernel compiled for symbols). A result written over a dying load in its queue
  buffer (same dtype) is an *alias* of it: it must die before the queue buffer is freed, and the generated
  code names it by the load's local tensor. An identity
  ``Cast`` (:attr:`.kir.Call.is_identity_cast`) is such an in-place call, and the tile an identity cast
  stores is computed straight in its output's queue buffer (an alias of the output): a template's
  float32 form is packed as the float32 kernel is (:mod:`.templated` places each instance's buffers
  by its own plan). No tile is computed over a view that starts inside a queue buffer packing several
  tiles (:func:`.queues.packed`): it would lie at the buffer's start;
* a store whose data begins where a load of its segment (same element type) and everything computed
  in the load's queue buffer are dead is computed in that buffer and stored from it, as CANN's
  kernels do with a ``TQueBind<VECIN, VECOUT>`` (:attr:`Plan.bound`, :func:`.queues.bind_queues`):
  one double-buffered queue less, so tiles of rows that fit three queues once fit twice;
* every slot's size is the largest extent any view of its buffers reaches (so scratch is sized by
  the calls that use it, and ``Compare``'s whole repeats pad its operands), rounded up to a block;
* on a kernel compiled for symbols (run-time tile extents, docs/design.md "Symbolic tile extents")
  the needs are polynomials of them and a slot's size their largest rounded up to a block
  (:func:`ascdsl.ir.symbol.rounded`): a polynomial where one need is the largest from the symbols' lows up,
  whatever their highs, else a :class:`~ascdsl.ir.symbol.Ceil` (``ceil32(1/8 * BLOCK)``;
  ``ceil32(max(4 * BLOCK_K, 256))`` for needs whose order flips from the lows up, inside the domain or past it:
  a slot's size is the same on every domain of the lift's); each choice above holds on the whole domain
  (:func:`ascdsl.ir.symbol.less`; a best fit where each way a comparison may go gives the one slot), else
  :class:`~ascdsl.ir.symbol.Undecided`: the plan is the plan of the kernel compiled for any of their values,
  :attr:`Plan.footprint` the lift's form of it and :attr:`Plan.total_bytes` one expression.

The :class:`Plan` is data on the kernel (:attr:`.kir.Kernel.plan`); the manifest, the report and
the budget check read it.
"""
from __future__ import annotations

import dataclasses
import itertools
from collections import Counter
from dataclasses import dataclass, field

from ...errors import Loc
from ...ir.symbol import (ZERO, Ceil, Differs, Poly, Symbol, Undecided, domain_points, dominant, larger, less,
                          rounded, value_at)
from ...platforms import Platform
from .. import kir
from ..kir import Buf, Call, Position, Queue, Role
from ..lift.poly import as_json, describe_slots, exact_expression
from .queues import BUFFERS, held_across, packed


@dataclass(frozen=True)
class Slot:
    """One UB allocation: a queue (``num`` buffers of ``bytes``) or a ``TBuf`` (num 1)."""

    index: int
    position: Position
    num: int
    bytes: int
    first: Buf  # the buffer that opened it (its name derives from it)
    loc: Loc = field(default=None, compare=False)
    needs: tuple[int, ...] = ()  # the bytes the views of each of its buffers reach (``bytes``: their
    # largest, rounded up to a block)
    size: object = None  # runtime tile extents (:mod:`.lift`): bytes as an expression of tiling fields,
    # ``bytes`` being its largest value; a kernel compiled for symbols has ``needs`` of polynomials
    # (:class:`~ascdsl.ir.symbol.Poly`) and ``bytes`` of a polynomial or a :class:`~ascdsl.ir.symbol.Ceil` instead
    bound: bool = False  # a VECIN queue whose buffers are stored from too (``TQueBind<VECIN, VECOUT>``)
    once: bool = False  # a queue single-buffered by design (:func:`_once`), not by :func:`.budget.check_budget`

    @property
    def size_expr(self):
        """The bytes of each buffer as the generated code computes them."""
        return self.size if self.size is not None else kir.lit(self.bytes)

    @property
    def total(self) -> int:
        return self.num * self.bytes


@dataclass(frozen=True)
class Plan:
    slots: tuple[Slot, ...]
    home: tuple[tuple[int, int], ...]  # (buffer key, slot index)
    alias: tuple[tuple[int, Buf], ...] = ()  # (buffer key, the queue buffer it is computed in)
    least: int | None = None  # runtime tile extents: the bytes at their smallest values (``.lift``)
    footprint: tuple = ()  # runtime tile extents: the bytes slot by slot as polynomials of them (``.poly.Slots``;
    # a kernel compiled for symbols: each slot's :func:`~ascdsl.ir.symbol.dominant` needs, the lift's form of them,
    # :attr:`total_bytes` their sum: a polynomial, or a :class:`~ascdsl.ir.symbol.Ceil`)
    bound: tuple[tuple[Buf, Buf], ...] = ()  # (output, input): the store computed in the load's queue buffer

    def root(self, buf: Buf) -> Buf:
        """The queue buffer ``buf`` is computed in, or ``buf`` itself."""
        return dict(self.alias).get(buf.key, buf)

    @property
    def total_bytes(self) -> int:
        return sum(s.total for s in self.slots)

    @property
    def single_buffered(self) -> bool:
        """Whether its queues have one buffer each (:func:`.budget.check_budget`'s fallback; not the queues
        :func:`_once` gives one by design)."""
        return any(s.num == 1 and not s.once and s.position is not Position.VECCALC for s in self.slots)

    def slot(self, buf: Buf) -> Slot:
        return self.slots[dict(self.home)[buf.key]]


class _Order:
    """Program-order positions of the calls and queue operations; loop spans."""

    def __init__(self, body):
        self.n = 0
        self.first: dict[Buf, int] = {}
        self.last: dict[Buf, int] = {}
        self.bytes: dict[Buf, int] = {}
        self.loops: list[tuple[int, int]] = []
        self.calls: list[tuple[int, Call]] = []
        self.last_call: dict[Buf, int] = {}
        self.first_call: dict[Buf, int] = {}
        self.touches: dict[Buf, list[int]] = {}
        self.freed: dict[Buf, int] = {}
        self.dequed: dict[Buf, int] = {}
        self.branches: list[tuple[int, int, int]] = []  # If statements: start, else, end
        self.firsts: list[tuple[int, int]] = []  # first-trip Ifs (:attr:`.kir.If.first`): start, end
        self.visit(body)
        self.call_at = dict(self.calls)
        for at, stop in self.firsts:  # computed on a loop's first trip, read on every trip: live for all the loop
            start, end = max(((s, e) for s, e in self.loops if s < at <= e), default=(at, stop))
            for b in [b for b in self.first if at < self.first[b] <= stop]:
                self.first[b], self.last[b] = start, max(self.last[b], end)
        for start, end in sorted(self.loops, key=lambda se: se[1] - se[0]):
            for b in self.last:
                if self.first[b] < start <= self.last[b]:
                    self.last[b] = max(self.last[b], end)

    def touch(self, b: Buf) -> None:
        self.first.setdefault(b, self.n)
        self.last[b] = self.n

    def use(self, b: Buf) -> None:
        """A call (or GetValue) reads or writes ``b``'s data."""
        self.touch(b)
        self.last_call[b] = self.n
        self.first_call.setdefault(b, self.n)
        self.touches.setdefault(b, []).append(self.n)

    def visit(self, body) -> None:
        for s in body:
            self.n += 1
            if isinstance(s, Call):
                self.calls.append((self.n, s))
                for r in s.refs:
                    self.use(r.buf)
                    self.bytes[r.buf] = larger(self.bytes.get(r.buf, 0), r.extent * r.dtype.itemsize)
                for b in s.reads:
                    self.use(b)
            elif isinstance(s, Queue):
                self.touch(s.buf)
                if s.op is kir.QOp.FREE:
                    self.freed[s.buf] = self.n
                elif s.op is kir.QOp.DEQUE:
                    self.dequed[s.buf] = self.n
            for e in kir.exprs(s):
                for x in kir.sub_exprs(e):
                    if isinstance(x, kir.Elem):  # a GetValue: a read of the data, as a call's
                        self.use(x.ref.buf)
            if isinstance(s, (kir.For, kir.While)):
                start = self.n
                self.visit(kir.children(s))
                self.loops.append((start, self.n))
            elif isinstance(s, kir.If):
                start = self.n
                self.visit(s.body)
                middle = self.n
                self.visit(s.orelse)
                self.branches.append((start, middle, self.n))
                if s.first:
                    self.firsts.append((start, self.n))
            elif kir.children(s):
                self.visit(kir.children(s))


def plan(k: kir.Kernel, platform: Platform, spread: int = 0) -> Plan:
    order = _Order(k.process)
    block = platform.block_bytes

    def need(b: Buf) -> int | Poly:
        return order.bytes.get(b, block)

    def hold(s: dict, b: Buf) -> None:
        s["needs"].append(need(b))
        s["bytes"] = rounded(s["needs"], block)

    slots: list[dict] = []
    home: dict[int, int] = {}
    queues: dict[tuple, int] = {}
    once = _once(order, frozenset(k.held))
    for b in sorted(order.first, key=lambda b: (order.first[b], b.key)):
        if b.role in (Role.INPUT, Role.OUTPUT):
            if b.queue not in queues:
                queues[b.queue] = len(slots)
                pos = Position.VECIN if b.role is Role.INPUT else Position.VECOUT
                num = 1 if b.queue in once else BUFFERS
                slots.append({"position": pos, "num": num, "needs": [], "first": b, "busy": 0,
                              "once": b.queue in once})
            hold(slots[queues[b.queue]], b)
            home[b.key] = queues[b.queue]
    donors = _donors(order, frozenset(k.held))
    alias: dict[int, Buf] = {}
    into = _into_outputs(order)
    for b in sorted(order.first, key=lambda b: (order.first[b], b.key)):
        if b.key in home:
            continue
        start, end, nbytes = order.first[b], order.last[b], rounded([need(b)], block)
        donor = donors.get(b)
        root = alias.get(donor.key, donor) if donor is not None else None
        if root is not None and root.role is Role.INPUT:
            if root.dtype != b.dtype or end >= order.freed.get(root, 0):
                donor = None
        if b in into:
            root = into[b]
        elif donor is None or root.role is not Role.INPUT:
            root = None
        where = None if donor is None else home.get(donor.key)
        if root is not None:
            index = home[root.key]
        elif where is not None and slots[where]["position"] is Position.VECCALC and slots[where]["busy"] in (start, order.last[donor]):
            index = where
        else:
            free = [i for i, s in enumerate(slots) if s["position"] is Position.VECCALC and s["busy"] < start - spread]
            if spread:  # of equals, the least recently used
                free.sort(key=lambda i: slots[i]["busy"])
            index = _best_fit(free, [slots[i]["bytes"] for i in free], nbytes)
            if index is None:
                index = len(slots)
                slots.append({"position": Position.VECCALC, "num": 1, "needs": [], "first": b, "busy": 0})
        s = slots[index]
        if s["position"] is Position.VECCALC:
            s["busy"] = max(s["busy"], end)
        hold(s, b)
        if root is not None:
            alias[b.key] = root
        home[b.key] = index
    bound = _bind_outputs(k, order, alias)
    for o, i in bound:
        old, new = home[o.key], home[i.key]
        home.update({key: new for key, index in home.items() if index == old})
        alias.update({key: i for key, root in alias.items() if root == o})
        alias[o.key] = i
        slots[new]["needs"] += slots[old]["needs"]
        slots[new]["bytes"] = rounded(slots[new]["needs"], block)
        slots[new]["bound"] = True
        slots[new].update(num=BUFFERS, once=False)  # stored from after the compute: held across it
        slots[old] = None
    rank = {Position.VECIN: 0, Position.VECOUT: 1, Position.VECCALC: 2}
    order_slots = sorted((i for i, s in enumerate(slots) if s is not None), key=lambda i: (rank[slots[i]["position"]], i))
    renumber = {old: new for new, old in enumerate(order_slots)}
    out = tuple(Slot(renumber[i], slots[i]["position"], slots[i]["num"], slots[i]["bytes"], slots[i]["first"],
                     slots[i]["first"].loc, tuple(slots[i]["needs"]), bound=slots[i].get("bound", False),
                     once=slots[i].get("once", False))
                for i in order_slots)
    symbolic = any(isinstance(s.bytes, (Poly, Ceil)) for s in out)
    return Plan(out, tuple(sorted((key, renumber[i]) for key, i in home.items())), tuple(sorted(alias.items())),
                footprint=tuple((s.num, dominant(s.needs)) for s in out) if symbolic else (), bound=tuple(bound))


def _best_fit(free: list[int], fits: list, nbytes) -> int | None:
    """The free slot for a buffer of ``nbytes``: of those that hold it, the smallest; else the largest; the
    first of equals. Sizes may be polynomials or rounded sizes (:class:`~ascdsl.ir.symbol.Ceil`): the slots'
    order holds on the whole domain of the symbols (:func:`ascdsl.ir.symbol.less`), and where whether a slot
    holds the buffer changes inside it, each way it may go gives the one slot (a 32-byte slot that holds
    ``ceil32(1/8 * BLOCK)`` bytes up to 256 lanes only, the one free slot: taken either way, and grown); else
    the slot taken at each point of a domain of at most :data:`_POINTS` points, where it is the one slot
    (``256`` against ``4 * BLOCK_R`` bytes, whose order flips where no buffer's pick does); else
    :class:`~ascdsl.ir.symbol.Differs` with the slot taken at each point (-1: a new one), the buffer's home in the
    kernel compiled for those values."""
    try:
        holds = []
        for f in fits:
            try:
                holds.append((not less(f, nbytes),))
            except Undecided:
                holds.append((True, False))
        picks = {_pick(list(zip(free, fits)), held) for held in itertools.product(*holds)}
        if len(picks) > 1:
            raise Undecided(f"the symbols' domains do not decide which free slot holds {nbytes} bytes")
        return picks.pop()
    except Undecided as e:
        def picked(values) -> int:
            sizes = [value_at(f, values) for f in fits]
            index = _pick(list(zip(free, sizes)), tuple(f >= value_at(nbytes, values) for f in sizes))
            return -1 if index is None else index
        picks = {picked(p) for p in domain_points([*fits, nbytes], _POINTS) or ()}
        if len(picks) == 1:
            index = picks.pop()
            return None if index == -1 else index
        raise Differs(str(e), picked) from e


_POINTS = 4096  # the most points of the symbols' domains :func:`_best_fit` asks one by one


def _pick(slots: list[tuple], held: tuple) -> int | None:
    """:func:`_best_fit` where ``held`` says which of ``slots`` hold the buffer."""
    holding = [s for s, h in zip(slots, held) if h]
    best = None
    for i, f in holding or slots:
        if best is None or (less(f, best[1]) if holding else less(best[1], f)):
            best = (i, f)
    return None if best is None else best[0]


def _once(order: _Order, held: frozenset) -> set[tuple]:
    """The load queues (identities) whose every buffer is allocated, loaded and freed outside every loop
    and before one starts: a load a program makes once, before the loop it spends its time in. The next
    program's AllocTensor waits on a FreeTensor issued before that loop's vector work, so a second buffer
    would overlap nothing, and its UB is what rows of 8192 float32 need for x's double buffer. A buffer the
    program holds (``held``: from its DeQue to its end) counts to its DeQue: the loop reads it, and the next
    program's AllocTensor waits for this one's end."""
    spans: dict[tuple, tuple[int, int]] = {}
    for b in order.first:
        if b.role is Role.INPUT and (b in held or not packed(b)):
            end = order.dequed[b] if b in held else order.last[b]
            lo, hi = spans.get(b.queue, (order.first[b], end))
            spans[b.queue] = (min(lo, order.first[b]), max(hi, end))
    return {q for q, (lo, hi) in spans.items()
            if all(end < lo or start > hi for start, end in order.loops)
            and any(start > hi for start, _ in order.loops)}


def _bind_outputs(k: kir.Kernel, order: _Order, alias: dict[int, Buf]) -> list[tuple[Buf, Buf]]:
    """``(output, input)`` pairs whose store is computed in the load's queue buffer, as CANN's kernels
    write a result into the buffer its input came in (``TQueBind<VECIN, VECOUT>``): one queue buffer
    less per pair. In one segment, the load's queue buffer is held from CopyIn to Compute and the
    store's from Compute to CopyOut (:func:`.queues.held_across`), both of one element type, neither
    packed, and the store's slot holds it alone, the load's DeQue before the store's AllocTensor; the
    load and every tile placed in its buffer are dead where the store's data begins
    (:func:`_dead_before`)."""
    pairs: list[tuple[Buf, Buf]] = []
    taken: set[Buf] = set()
    placed: dict[Buf, list[Buf]] = {}  # root -> the buffers computed in it
    for b in order.first:
        if b.key in alias:
            placed.setdefault(alias[b.key], []).append(b)
    stores = Counter(b.queue for b in order.first if b.role is Role.OUTPUT)
    loaded = Counter(b.queue for b in order.first if b.role is Role.INPUT)
    for seg in kir.walk(k.process):
        if not isinstance(seg, kir.Segment):
            continue
        loads = held_across(seg.copy_in, seg.compute, Role.INPUT)
        for o in held_across(seg.compute, seg.copy_out, Role.OUTPUT):
            if stores[o.queue] != 1:
                continue
            into = [o, *placed.get(o, ())]
            starts = [order.first_call[b] for b in into if b in order.first_call]
            if not starts:
                continue
            start = min(starts)
            alloc = _at(seg.compute, kir.QOp.ALLOC, o)
            for i in loads:
                if packed(i) or packed(o):  # tiles packed: byte range by byte range, alone in their queues
                    fits = (loaded[i.queue] == 1 and not placed.get(i) and not placed.get(o)
                            and _apart(order, i, o))
                else:
                    fits = _dead_before(order, [i, *placed.get(i, ())], into, start)
                if i not in taken and i.dtype == o.dtype and _at(seg.compute, kir.QOp.DEQUE, i) < alloc and fits:
                    pairs.append((o, i))
                    taken.add(i)
                    break
    return pairs


def _apart(order: _Order, i: Buf, o: Buf) -> bool:
    """Whether store buffer ``o`` may lie over load buffer ``i`` where either packs several tiles
    (:func:`.queues.packed`): every call touching bytes of ``i`` runs before the first call writing bytes of ``o``
    that overlap them (a loop within ``i``'s life counting as its whole span), or is that call, writing its
    result in place over the same view (layer norm's row of ``Y`` computed chunk by chunk over the chunks of
    ``X`` it no longer reads)."""
    def span(q: int) -> tuple[int, int]:
        inner = [(ls, le) for ls, le in order.loops if order.first[i] <= ls < q <= le]
        return min([ls for ls, _ in inner], default=q), max([le for _, le in inner], default=q)

    def overlap(a: kir.Ref, b: kir.Ref) -> bool:
        size_a, size_b = a.dtype.itemsize, b.dtype.itemsize
        return a.low * size_a < b.extent * size_b and b.low * size_b < a.extent * size_a

    if any(q not in order.call_at for q in order.touches.get(i, ())):  # a GetValue: not by byte range
        return False
    writes = [(t, c.dst) for t, c in order.calls if isinstance(c.dst, kir.Ref) and c.dst.buf == o]
    for q, c in order.calls:
        views = enumerate((c.dst, *c.srcs, *c.work))
        for n, r in ((n, r) for n, r in views if isinstance(r, kir.Ref) and r.buf == i):
            for t, w in writes:
                in_place = (q == t and 0 < n <= len(c.srcs) and c.inplace and (c.inplace is True or n - 1 in c.inplace)
                            and r.offset == w.offset and r.dtype.itemsize == w.dtype.itemsize and span(q) == (q, q))
                if overlap(r, w) and not in_place and span(q)[1] >= span(t)[0]:
                    return False
    return True


def _at(body: tuple, op: kir.QOp, buf: Buf) -> int:
    return next(n for n, s in enumerate(body) if isinstance(s, Queue) and s.op is op and s.buf == buf)


def _dead_before(order: _Order, group: list[Buf], into: list[Buf], start: int) -> bool:
    """Whether ``group`` (a load and the tiles placed in its buffer) is dead from position ``start`` on:
    every use from there (and every use in a loop around ``start`` that does not define it) is a call
    writing ``into`` (the store or a tile computed in it) in place over it at the same offset (one
    operation, possibly split into calls over disjoint parts)."""
    def over(q: int, b: Buf) -> bool:
        c = order.call_at.get(q)
        if c is None or not c.inplace or not isinstance(c.dst, kir.Ref) or c.dst.buf not in into:
            return False
        srcs = [(n, r) for n, r in enumerate(c.srcs) if isinstance(r, kir.Ref) and r.buf == b]
        return bool(srcs) and all((c.inplace is True or n in c.inplace) and r.offset == c.dst.offset
                                  and r.dtype.itemsize == c.dst.dtype.itemsize for n, r in srcs)
    for b in group:
        touches = order.touches.get(b, ())
        spans = [(start, float("inf"))] + [(ls, le) for ls, le in order.loops if order.first[b] <= ls < start <= le]
        for ls, le in spans:
            if not all(q >= start and over(q, b) for q in touches if ls < q <= le or q == ls == start):
                return False
    return True


def _into_outputs(order: _Order) -> dict[Buf, Buf]:
    """``tile -> output queue buffer`` for identity casts into an output: the tile is computed straight
    in the output's queue buffer when it is first written after that buffer is allocated and dies at
    the cast."""
    out: dict[Buf, Buf] = {}
    for at, c in order.calls:
        if not c.is_identity_cast or c.dst.buf.role is not Role.OUTPUT or _inside_packed(c.dst):
            continue
        (src,) = c.srcs
        if src.buf.role is Role.TILE and order.first[c.dst.buf] < order.first[src.buf] and order.last[src.buf] == at:
            out[src.buf] = c.dst.buf
    return out


def _inside_packed(view: kir.Ref) -> bool:
    """Whether ``view`` starts inside a queue buffer that packs several tiles (:func:`.queues.packed`):
    a tile computed in that buffer would lie at its start, not at the view."""
    return packed(view.buf) and view.offset != kir.lit(0)


def _donors(order: _Order, held: frozenset) -> dict[Buf, Buf]:
    """``result buffer -> source buffer`` for in-place calls whose source dies where the result is
    first written (same element size; the result a TILE buffer, the source a TILE or INPUT one; a load the
    program holds, ``held``, lives as a TILE does: to the end of a loop that reads it)."""
    out: dict[Buf, Buf] = {}
    for at, c in order.calls:
        if not c.inplace or not isinstance(c.dst, kir.Ref):
            continue
        d = c.dst.buf
        if d.role is not Role.TILE or order.first[d] != at or d in out:
            continue
        for i, src in enumerate(c.srcs):
            if (not isinstance(src, kir.Ref) or src.buf == d or src.dtype.itemsize != c.dst.dtype.itemsize
                    or _inside_packed(src)):
                continue
            if c.inplace is not True and i not in c.inplace:
                continue
            last = order.last[src.buf] if src.buf.role is Role.TILE or src.buf in held else order.last_call[src.buf]
            if src.buf.role in (Role.TILE, Role.INPUT) and (last == at or _dies_in_place(order, at, last, src.buf, d)):
                out[d] = src.buf
                break
    return out


def _dies_in_place(order: _Order, at: int, last: int, src: Buf, d: Buf) -> bool:
    """Whether every later use of ``src`` is a call writing ``d`` in place over it that is either in
    the else-branch of an If whose then-branch holds ``at`` (the other schedule of one operation,
    picked at run time) or another part of the operation at ``at`` (the same API over the same
    buffers: selection splits one operation into calls over disjoint parts, such as a row's whole
    repeats and its last partial one): on every path ``src`` dies where ``d`` is written over it."""
    first = order.call_at[at]
    branch = next(((m, e) for s, m, e in order.branches if s < at <= m < last <= e), None)

    def over_src(q: int, c) -> bool:
        if not (isinstance(c.dst, kir.Ref) and c.dst.buf == d and c.inplace and any(
                isinstance(r, kir.Ref) and r.buf == src and (c.inplace is True or i in c.inplace)
                for i, r in enumerate(c.srcs))):
            return False
        other = branch is not None and branch[0] < q
        return other or (c.api, [r.buf for r in c.refs]) == (first.api, [r.buf for r in first.refs])
    uses = [(q, c) for q, c in order.calls if at < q <= last and any(r.buf == src for r in c.refs)]
    return bool(uses) and all(over_src(q, c) for q, c in uses)


SPREAD = 4
"""In the spread plan (:func:`spread_out`), a tile placed in a free ``TBuf`` slot takes one no call of
the last ``SPREAD`` statements touched (else a new slot), the least recently used of those: a slot used again at
once ties the next call to the last ones (layer norm's variance over a row kept in UB: each chunk's ``x - mean``
written where the previous chunk's square was just read, a ``PipeBarrier`` between every two calls), so
:mod:`.order` can lay independent chunks' calls side by side. Four: a chunk's chain of calls and one more."""


def plan_ub(k: kir.Kernel, platform: Platform) -> kir.Kernel:
    """The UB-planning pass: the kernel with its :class:`Plan`."""
    return dataclasses.replace(k, plan=plan(k, platform))


def spread_out(k: kir.Kernel, compact: Plan, platform: Platform) -> kir.Kernel | None:
    """The kernel ``k`` (before planning) with its tiles spread over slots (:data:`SPREAD`), beside its
    :func:`plan_ub` plan ``compact``: None where that plan's sizes are symbolic or the spread plan does not fit
    the budget."""
    if not isinstance(compact.total_bytes, int):
        return None
    spread = plan(k, platform, SPREAD)
    return dataclasses.replace(k, plan=spread) if spread.total_bytes <= platform.ub_budget_bytes else None


def highs(p: Plan, symbols: tuple[Symbol, ...], budget: int) -> tuple[Symbol, ...]:
    """``symbols`` (those the plan of a kernel compiled for them is a polynomial of), each with its ``high``
    the largest value of its domain whose footprint (:attr:`Plan.total_bytes`) fits ``budget`` with the other
    symbols at their ``low``: what the lift finds by compiling at values, found without a compile (the plan's
    decisions hold on the domains given, so no high grows). :class:`Undecided` where not even the lows fit."""
    lows, total = {s.name: s.low for s in symbols}, ZERO + p.total_bytes
    out = []
    for s in symbols:
        high = s.largest(lambda v: v <= s.high and total.at({**lows, s.name: v}) <= budget)
        if not high:
            raise Undecided(f"no value of {s.name} fits the {budget} bytes of UB")
        out.append(dataclasses.replace(s, high=high))
    return tuple(out)


def _needs(p: Plan, footprint: tuple) -> list:
    """Per slot of ``p``, its needs in ``footprint`` (which covers every slot, or, for a template's
    float32 instance, the slots it uses), or None where they do not match."""
    used = [s for s in p.slots if s.num] if len(footprint) != len(p.slots) else list(p.slots)
    if len(used) != len(footprint) or any(s.num != num for s, (num, _) in zip(used, footprint)):
        return [None] * len(p.slots)
    by_slot = {s.index: needs for s, (_, needs) in zip(used, footprint)}
    return [by_slot.get(s.index) for s in p.slots]


def as_dict(k: kir.Kernel, plan: Plan | None = None, footprint: tuple = (), quanta: dict | None = None) -> dict:
    """The plan of ``k`` (or ``plan``, over ``k``'s slots: a template's float32 instance, whose
    ``footprint`` is given) as the manifest records it, each buffer named as ``k``'s code names it.
    With runtime tile extents (``quanta``: their quanta by name), ``expression`` is the exact footprint
    (:func:`.poly.exact_expression`) and each buffer's ``needs`` the bytes its views reach as
    polynomials of them (its size at given values: the largest, rounded up to a block)."""
    p: Plan = plan or k.plan
    footprint = footprint or p.footprint
    needs = _needs(p, footprint)
    extra = {"footprint": describe_slots(footprint),
             "expression": exact_expression(footprint, quanta or {})} if footprint else {}
    return {"total_bytes": p.total_bytes, **extra,
            "buffers": [{"name": k.names.slot(s), "position": "VECIN/VECOUT" if s.bound else s.position.value,
                         "num": s.num, "bytes": s.bytes, **({"needs": [as_json(q) for q in n]} if n else {})}
                        for s, n in zip(p.slots, needs) if s.num]}
