"""Runtime tile extents: which constexprs only size tiles, found by compiling the kernel for them as symbols.

A constexpr such as ``BLOCK`` or ``ROWS`` is *lifted* (it becomes a field of the tiling struct, so
one kernel class serves every value) when the kernel, compiled in the general form
(:mod:`.repeat`: no decision depends on a tile extent) for it as a :class:`~ascdsl.ir.symbol.Symbol`
(:mod:`.symbolic`), decides every choice on a domain of multiples of a *quantum* ``q`` (the smallest power of
two that does), so that its kernel IR at every value is one IR whose integer leaves (literals, view extents,
buffer sizes) are small polynomials in the lifted constexprs (monomials ``1, X, Y, XY``); then every lifted
constexpr jointly, each to the largest value the UB budget allows. Where a domain from ``q`` does not decide
(a unit axis: is ``ROWS`` 1?), one compile at ``q`` asks whether it is the kernel at that value (the one
sample: :func:`_check` fits the symbolic kernel's values at two others through it). A constexpr whose symbolic
compile does not decide stays a specialisation: the lift never guesses, and samples nothing else.

The result, :class:`Lift`, is data: the lifted extents (:class:`~ascdsl.ir.symbol.Symbol`), the UB footprint
as a polynomial of them (exact: the tiling function checks it against the budget) and the lifted
kernel IR, in which each literal leaf is an expression over :class:`~.kir.Field` s, each view
extent and slot size its largest value, and each slot keeps its size expression for ``InitBuffer``.
"""
from __future__ import annotations

import dataclasses
import inspect
import itertools
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from ... import cache, dtypes
from ...errors import CompilationError, Loc
from ...ir.symbol import ZERO, Ceil, Poly, Symbol, Undecided
from ...ir.treemap import TreeMerge, tree_map
from ...jit import JITFunction
from ...platforms import Platform
from .. import kir
from ..cube.cube import is_cube
from ..render.ascendc import planned
from ..kir import Bin, BinOp, Cond, Lit
from .poly import BLOCK, Mismatch, Slots, ceil_block, fit, footprint, unsized
from ..names.naming import FIELD_DTYPE, name as name_pass, to_expr
from ..render.templated import computes_the_same, element_type, float32_form, pointer_dtypes
from ..plan.tiling import Variant
from ..plan.ubplan import Plan, Slot, highs
from .symbolic import decides, evaluated, lifted, named, relabel

QUANTA = (1, 2, 4, 8, 16, 32, 64, 128, 256)


@dataclass(frozen=True)
class Lift:
    extents: tuple[Symbol, ...]  # the lifted constexprs
    slots: Slots  # the UB footprint: per slot, its buffers and the bytes its views reach
    kernel: kir.Kernel = dataclasses.field(compare=False, repr=False)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(e.name for e in self.extents)

    def bytes(self, values: dict) -> int:
        """UB bytes of the plan for ``values`` (exact: each slot rounded up to a block as planned)."""
        return footprint(self.slots, values)

    def problem(self, values: dict, budget: int) -> str | None:
        """Why the lifted kernel cannot run with ``values`` (by name) on a UB of ``budget`` bytes, or None."""
        for e in self.extents:
            refusal = e.refusal(values[e.name])
            if refusal is not None:
                return refusal
        need = self.bytes(values)
        if need > budget:
            vals = ", ".join(f"{n}={values[n]}" for n in self.names)
            return f"{vals} needs {need} bytes of UB, more than the {budget} bytes available"
        return None


# ----------------------------------------------------------------------------- differential compile

@dataclass(frozen=True)
class _Hole:
    """A leaf that differs between samples: its value at each sample."""

    kind: str  # "lit", "extent", "bytes"
    values: tuple
    dtype: object = None


class _Samples(TreeMerge):
    """The kernel IR of the samples merged: a :class:`_Hole` where an integer literal, a view's extent,
    a slot's bytes or the bytes its buffers need differ."""

    refused = Mismatch

    def differ(self, nodes: tuple, where: str):
        first = nodes[0]
        if isinstance(first, Lit):
            if first.dtype.is_int and all(isinstance(n.value, int) and not isinstance(n.value, bool) and
                                          n.dtype == first.dtype for n in nodes):
                return _Hole("lit", tuple(n.value for n in nodes), first.dtype)
            raise Mismatch(f"{where}: literals {[n.value for n in nodes]}")
        return super().differ(nodes, where)

    def field(self, nodes: tuple, name: str, values: tuple, where: str):
        first = nodes[0]
        if isinstance(first, kir.Ref) and name == "extent" or isinstance(first, Slot) and name == "bytes":
            return _Hole(name, values) if len(set(values)) > 1 else values[0]
        if isinstance(first, Slot) and name == "needs":
            if len({len(v) for v in values}) != 1:
                raise Mismatch(f"{where}: slots hold different buffers")
            return tuple(_Hole("need", col) if len(set(col)) > 1 else col[0] for col in zip(*values))
        return super().field(nodes, name, values, where)


def _holes(node) -> list:
    """The holes in ``node``, first-seen order (shared subtrees are walked once)."""
    out: dict = {}

    def seen(x):
        if isinstance(x, _Hole):
            out.setdefault(x, None)
            return x
        return None
    tree_map(node, seen)
    return list(out)


# general-form compilations by (function, types, platform, form, constexprs), shared by the analyses of one
# :func:`analyse` call (a kernel analysed again at other values of its other constexprs repeats many)
_COMPILED: dict = {}
_SAMPLES: Counter = Counter()  # sample compiles by kernel name (:func:`samples`)


def samples() -> Counter:
    """The lift's sample compiles in this process by kernel name (a compile of a kernel at other values of its
    constexprs, each once per :func:`analyse`; the on-disk ``lift`` cache and :func:`analyse`'s lifts already
    found skip them). A copy; subtract two to count what happened between them."""
    return Counter(_SAMPLES)


class _Sampler:
    """Compiles one kernel (general form) for its constexprs as symbols, or at other values of them."""

    def __init__(self, jit_fn, kernel, platform: Platform, form=None):
        self.jit_fn, self.kernel, self.platform, self.form = jit_fn, kernel, platform, form
        self.types = tuple(p.type.dtype for p in kernel.params)
        self.base = dict(kernel.constexprs)
        self.memo = _COMPILED

    def compile(self, values: dict) -> kir.Kernel:
        key = (self.jit_fn, self.types, self.platform, self.form, tuple(sorted({**self.base, **values}.items())))
        if key not in self.memo:
            _SAMPLES[self.kernel.name] += 1
            try:
                k = self.jit_fn.specialize(*self.types, **{**self.base, **values}).kernels[0]
                k = self.form(k) if self.form is not None else k
                self.memo[key] = relabel(dataclasses.replace(planned(k, self.platform, general=True), names=None,
                                                              constexprs=()))
            except CompilationError as e:
                self.memo[key] = Mismatch(f"{values}: {e.message}")
        out = self.memo[key]
        if isinstance(out, Mismatch):
            raise out
        return out

    def symbolic(self, symbols: tuple[Symbol, ...]) -> kir.Kernel:
        """The kernel compiled for ``symbols`` as :meth:`compile` keeps a sample (no sample: :class:`Undecided`
        or a CompilationError where the compile fails)."""
        k = self.jit_fn.specialize(*self.types, **{**self.base, **{x.name: x for x in symbols}}).kernels[0]
        k = planned(self.form(k) if self.form is not None else k, self.platform, general=True)
        return relabel(dataclasses.replace(k, names=None, constexprs=()))


def _check(template, points: list[dict], fit_idx: list[int], names, quanta) -> dict:
    """Fit every hole on the points ``fit_idx`` and check it on all; the polynomials by hole (a slot's
    rounded ``bytes`` follow from its ``need``)."""
    polys = {}
    for h in _holes(template):
        if h in polys or h.kind == "bytes":
            continue
        poly = fit([points[i] for i in fit_idx], [h.values[i] for i in fit_idx], names)
        if any(poly.at(p) != y for p, y in zip(points, h.values)):
            raise Mismatch(f"a {h.kind} leaf {h.values} is not polynomial in {names}")
        if h.kind in ("lit", "need") and not poly.integral(quanta):  # C++ computes it in integers
            raise Mismatch(f"{poly} is not an integer on multiples of the quanta")
        polys[h] = poly
    return polys


def _slots(template, corners: list[dict]) -> Slots:
    """Per slot, its buffers and the needs of its buffers (each an int, or a polynomial of the kernel compiled for
    symbols); with the ``corners`` of the domain (a box: bilinear needs take their extremes there), only those
    that some value makes the largest."""
    out = []
    for s in template.plan.slots:
        needs = list(dict.fromkeys(ZERO + n for n in s.needs))

        def dominated(i: int) -> bool:
            p = needs[i]
            return any(j != i and all(q.at(c) >= p.at(c) for c in corners)
                       and (j < i or any(q.at(c) > p.at(c) for c in corners))
                       for j, q in enumerate(needs))
        out.append((s.num, tuple(p for i, p in enumerate(needs) if not (corners and dominated(i)))))
    return tuple(out)


def _single(s: _Sampler, name: str) -> tuple[int, int] | None:
    """``(quantum, low)`` for lifting ``name`` alone, or None: the smallest quantum on which the kernel compiled for
    ``name`` as a symbol from twice the quantum decides every choice (:func:`.symbolic.decides`); its low the
    quantum where the kernel compiled from it decides too, or the one sample at the quantum is that kernel at its
    value, or fits with it at two values (the three-point check: a unit axis, ``ROWS == 1``, asks that), else
    twice the quantum. A quantum that does not decide (:class:`Undecided`, :class:`Differs`, a CompilationError)
    is passed over: no samples answer it."""
    for q in QUANTA:
        k = decides(s, name, q, 2 * q)  # every value from 2 * q: the symbolic kernel at its value
        if k is None:
            continue
        if decides(s, name, q, q) is not None or s.compile({name: q}) == evaluated(k, {name: q}):
            return q, q
        try:  # the values from 2 * q are the symbolic kernel's at them: only q is compiled
            points = [{name: v} for v in (q, 3 * q, 5 * q)]
            _check(_Samples()((s.compile(points[0]), *(evaluated(k, p) for p in points[1:]))), points, [1, 2],
                   (name,), {name: q})
            return q, q
        except Mismatch:
            return q, 2 * q
    return None


def _joint(s: _Sampler, found: dict, budget: int) -> Lift:
    """The lift of the constexprs ``found`` (by name: quantum, low) jointly (:func:`_from_symbols`); :class:`Mismatch`
    where the kernel compiled for them as symbols does not decide: they do not lift together."""
    try:
        return _from_symbols(s, found, budget)
    except (Undecided, CompilationError) as e:
        raise Mismatch(f"the joint fit does not decide: {e}") from e


def _from_symbols(s: _Sampler, found: dict, budget: int) -> Lift:
    """The joint lift (issue 25, step 6): the kernel compiled for the symbols at the quanta and lows found, each
    to 11 quanta, gives each high by its footprint (:func:`.ubplan.highs`, the others at their low; provisional
    highs: the budget over the kernel's smallest element); then, for each constexpr, the kernel compiled with its
    symbol to its high, so every value up to the highs lies in a domain that decided. Where a low of one quantum
    does not decide (a unit axis: ``ROWS == 1``), the domains start at 2 for the constexprs whose low is 1, else
    at two quanta, and the points below them (the lows, each high with the others at their low) are compiled,
    each the kernel of the domains at its values. Where all these kernels are one, its polynomials
    (:func:`.symbolic.named`) are the lifted kernel's leaves. :class:`Undecided` where a domain does not decide,
    a high reaches the provisional one or the kernels differ; :class:`Mismatch` where a constexpr sizes no
    buffer."""
    names = tuple(found)
    quanta = {n: found[n][0] for n in names}
    lows = {n: found[n][1] for n in names}
    tries = [lows, {n: 2 if v == 1 else v for n, v in lows.items()}, {n: max(lows[n], 2 * quanta[n]) for n in names}]
    tries = [t for i, t in enumerate(tries) if t not in tries[:i]]  # the lows; a unit axis from 2; all from 2 quanta
    for i, starts in enumerate(tries):
        try:
            k = s.symbolic(tuple(Symbol(n, quanta[n], starts[n], 11 * quanta[n]) for n in names))
            break
        except Undecided:
            if i == len(tries) - 1:
                raise
    far = budget // min((d.itemsize for d in pointer_dtypes(s.kernel)), default=1)
    provisional = tuple(Symbol(n, quanta[n], lows[n], max(11 * quanta[n], far // quanta[n] * quanta[n]))
                        for n in names)
    template = named(k, quanta)
    if unsized(_slots(template, []), names):
        raise Mismatch(f"{', '.join(unsized(_slots(template, []), names))} sizes no buffer: no tile extent")
    extents = highs(k.plan, provisional, budget)
    total = ZERO + k.plan.total_bytes
    for e, p in zip(extents, provisional):
        if e.high == p.high and total.at({**lows, e.name: e.high + e.quantum}) <= budget:
            raise Undecided(f"{e.name} fits the budget past the provisional {p.high}")
    if any(named(s.symbolic(tuple(Symbol(n, quanta[n], starts[n], e.high if n == e.name else 11 * quanta[n])
                                  for n in names)), quanta) != template for e in extents if e.high > 11 * e.quantum):
        raise Undecided("the domains' kernels differ")
    for point in [lows] + [{**lows, e.name: e.high} for e in extents]:
        if any(point[n] < starts[n] for n in names) and s.compile(point) != evaluated(template, point):
            raise Undecided(f"the kernel at {point} is not the symbols' at it")
    corners = [dict(zip(names, vs)) for vs in itertools.product(*[(e.low, e.high) for e in extents])]
    foot = _slots(template, corners)
    top = {e.name: e.high for e in extents}
    return Lift(extents, foot, _sized(s, lifted(template, quanta, top, budget), foot, extents, budget))


def _sized(s: _Sampler, k: kir.Kernel, foot: Slots, extents, budget: int) -> kir.Kernel:
    """The lifted kernel of ``k``, whose leaves are filled but for the slots whose bytes vary (a size (`Poly`,
    `Ceil`) of the kernel compiled for symbols): each such slot's size the largest of its needs in ``foot``,
    its bytes that size at the extents' highs."""
    quanta = {e.name: e.quantum for e in extents}
    top = {e.name: e.high for e in extents}
    slots = []
    for sl, (_, needs) in zip(k.plan.slots, foot):
        if isinstance(sl.bytes, (Poly, Ceil)):
            exprs = [to_expr(p, quanta, FIELD_DTYPE) for p in needs]
            size = exprs[0]
            for e in exprs[1:]:
                size = kir.Cond(kir.Bin(BinOp.GT, size, e), size, e)
            bound = min(ceil_block(budget), max(ceil_block(p.at(top)) for p in needs))
            sl = dataclasses.replace(sl, bytes=bound, size=kir.ceil_to(size, BLOCK))
        slots.append(dataclasses.replace(sl, needs=()))
    lows = {e.name: e.low for e in extents}
    plan: Plan = dataclasses.replace(k.plan, slots=tuple(slots), least=footprint(foot, lows), footprint=foot)
    lifted = set(quanta)
    k = dataclasses.replace(k, plan=plan, constexprs=tuple((n, v) for n, v in s.kernel.constexprs if n not in lifted))
    k = _simplify(k)
    return kir.verify(name_pass(k))


def _simplify(node):
    """Fold operations on literals only (constant parts of the general form's expressions)."""
    return tree_map(node, after=_folded)


def _folded(node):
    if isinstance(node, Cond) and isinstance(node.c, Lit):
        return node.a if node.c.value else node.b
    if isinstance(node, Bin) and isinstance(node.a, Lit) and isinstance(node.b, Lit) and node.a.dtype == node.b.dtype \
            and node.a.dtype.is_int:
        return _fold(node)
    return None


_FOLD = {BinOp.ADD: lambda a, b: a + b, BinOp.SUB: lambda a, b: a - b, BinOp.MUL: lambda a, b: a * b,
         BinOp.LT: lambda a, b: a < b, BinOp.LE: lambda a, b: a <= b, BinOp.GT: lambda a, b: a > b,
         BinOp.GE: lambda a, b: a >= b, BinOp.EQ: lambda a, b: a == b, BinOp.NE: lambda a, b: a != b}


def _fold(node: Bin):
    a, b = node.a.value, node.b.value
    if node.op in _FOLD:
        v = _FOLD[node.op](a, b)
        return Lit(v, dtypes.bool_) if isinstance(v, bool) else Lit(v, node.a.dtype)
    if node.op in (BinOp.DIV, BinOp.MOD) and a >= 0 and b > 0:
        return Lit(a // b if node.op is BinOp.DIV else a % b, node.a.dtype)
    return node


# ----------------------------------------------------------------------------- the analysis

CANONICAL = 16  # int constexprs above this are analysed at it (the lift does not depend on extents)


def analyse(jit_fn, kernel, platform: Platform, form=None) -> Lift | None:
    """The lift of ``kernel`` (a specialisation of ``jit_fn``) on ``platform``, or None when no
    constexpr only sizes tiles; with ``form`` (a tile-IR rewrite such as
    :func:`.templated.float32_form`), the lift of ``form`` of its specialisations. The analysis runs
    on ``kernel`` with its large int constexprs at :data:`CANONICAL` (its domains then stay small), shared by every such kernel; a constexpr whose
    value in ``kernel`` the lift would not admit (below its smallest value, off its quantum) stays a
    specialisation. A kernel that multiplies matrices (:func:`.cube.is_cube`) is None without a compile: the
    lifted kernel is the vector pipeline's, which refuses ``tl.dot`` at every value of every constexpr, and the
    cube class (:mod:`.cube`, :mod:`.mix`: its AIC's and a MIX kernel's AIVs') is rendered from the
    specialisation itself."""
    if is_cube(kernel):
        return None
    consts = dict(kernel.constexprs)
    group = (jit_fn, kernel.name, tuple(p.type for p in kernel.params), platform, form)
    for known in _KNOWN.get(group, ()):  # a kernel of a group already lifted: the same lift
        if {k: v for k, v in consts.items() if k not in known.names} == dict(known.kernel.constexprs) and \
                not _refused(known, consts):
            return known
    types = tuple(p.type.dtype for p in kernel.params)
    fixed: frozenset = frozenset()
    try:
        while True:
            found = _canonical(jit_fn, types, consts, fixed, platform, form)
            if found is None:
                return None
            bad = _refused(found, consts)
            if not bad:
                _KNOWN.setdefault(group, []).append(found)
                return found
            fixed |= bad
    finally:
        _COMPILED.clear()


def _refused(found: Lift, consts: dict) -> set:
    """The lifted extents whose values in ``consts`` ``found`` does not admit."""
    return {e.name for e in found.extents if not e.admits(consts[e.name])}


def _canonical(jit_fn, types, consts: dict, fixed: frozenset, platform: Platform, form=None) -> Lift | None:
    """The lift with the liftable int constexprs (not ``fixed``) analysed at distinct small values."""
    def at(values: dict):
        try:
            return jit_fn.specialize(*types, **{**consts, **values}).kernels[0]
        except CompilationError:
            return None
    small = {k: CANONICAL + 8 * i for i, (k, v) in enumerate(consts.items())  # distinct: no shared constants
             if type(v) is int and v > CANONICAL and k not in fixed}
    kernel = at(small) or at({})
    found = _analyse(jit_fn, kernel, platform, fixed, form)
    if found is not None:  # analysed again with the lifted extents at CANONICAL: one lift per group
        canon = at({n: CANONICAL + 8 * i for i, n in enumerate(found.names)})
        again = _analyse(jit_fn, canon, platform, fixed, form) if canon is not None and canon != kernel else found
        found = again if again is not None and again.names == found.names else found
    return found


_KNOWN: dict = {}  # (function, name, parameter types, platform) -> the lifts found for it


@lru_cache(maxsize=256)
def _analyse(jit_fn, kernel, platform: Platform, fixed: frozenset = frozenset(), form=None) -> Lift | None:
    """The lift of ``kernel``, kept in the on-disk cache (a lift is several compiles of the pipeline) under
    what determines it: this ascdsl's sources, the file that defines ``jit_fn``, the kernel's IR text
    and source locations, the platform and the constexprs held fixed."""
    try:
        code, file = _code(jit_fn, set()), inspect.getsourcefile(jit_fn.fn)
    except (OSError, TypeError):  # no source (a kernel made by exec): not cached
        return _sample(jit_fn, kernel, platform, fixed, form)
    # the kernel is its function's specialisation at these types and constexprs (a file of another path
    # with the same code and lines, such as an edited copy, reads the lift with its own path)
    key = cache.digest(cache.package_digest(), code, kernel.name, repr([p.type for p in kernel.params]),
                       repr(kernel.constexprs), repr(platform), repr(sorted(fixed)),
                       "" if form is None else f"{form.__module__}.{form.__qualname__}")
    where, found = cache.stored("lift", key, lambda: (file, _sample(jit_fn, kernel, platform, fixed, form)))
    return found if where == file else _relocate(found, where, file)


def _relocate(node, old: str, new: str):
    """``node`` with every :class:`Loc` in file ``old`` moved to file ``new``."""
    def move(x):
        return (Loc(new, x.line, x.col) if x.file == old else x) if isinstance(x, Loc) else None
    return tree_map(node, move, every=True)


_PLAIN = (int, float, complex, str, bytes, bool, tuple, list, dict, frozenset, set)


def _code(jit_fn, seen: set) -> str:
    """What specialising ``jit_fn`` reads: its first line and source, and every global its code
    names (the same of the ``@jit`` functions it calls, the value of plain constants, modules by
    name). An edit elsewhere in its file leaves its lifts valid."""
    fn = jit_fn.fn
    parts = [str(fn.__code__.co_firstlineno), inspect.getsource(fn)]
    codes, names = [fn.__code__], set()
    while codes:
        c = codes.pop()
        names.update(c.co_names)
        codes += [k for k in c.co_consts if inspect.iscode(k)]
    for name in sorted(names):
        value = fn.__globals__.get(name)
        if isinstance(value, JITFunction):
            if value not in seen:
                seen.add(value)
                parts.append(f"{name}: " + _code(value, seen))
        elif isinstance(value, _PLAIN):
            parts.append(f"{name} = {value!r}")
        elif value is not None:  # modules, functions, classes: by name (a repr may hold an address)
            where = value.__name__ if inspect.ismodule(value) else getattr(value, "__module__", "")
            parts.append(f"{name}: {where}.{getattr(value, '__qualname__', type(value).__qualname__)}")
    return "\n".join(parts)


def _sample(jit_fn, kernel, platform: Platform, fixed: frozenset, form=None) -> Lift | None:
    s = _Sampler(jit_fn, kernel, platform, form)
    names = [n for n, v in kernel.constexprs if type(v) is int and v > 0 and n not in fixed]
    found = {}
    for n in names:
        single = _single(s, n)
        if single is not None:
            found[n] = single
    while found:
        try:
            return _joint(s, found, platform.ub_budget_bytes)
        except Mismatch:
            found.pop(list(found)[-1])
    return None


def declines(jit_fn, kernel, found: Lift | None, platform: Platform) -> list[str]:
    """Why each positive int constexpr of ``kernel`` that ``found`` (its lift, or None) does not lift stays a
    specialisation (``ascdsl build --explain``), at the kernel's location or the line a compile refused: the reason
    its symbolic compile gave at the largest quantum (no quantum decided), else the joint fit's. Compiles for
    symbols only (no sample)."""
    where = kernel.loc
    if is_cube(kernel):
        return [f"{where}: {kernel.name}: no lift: it multiplies matrices (the cube class is the specialisation's)"]
    s = _Sampler(jit_fn, kernel, platform)
    lifted = {e.name: (e.quantum, max(e.low, 2 * e.quantum)) for e in found.extents} if found is not None else {}
    out = []
    for name in (n for n, v in kernel.constexprs if type(v) is int and v > 0 and n not in lifted):
        try:
            q = next(q for q in QUANTA if decides(s, name, q, 2 * q) is not None)
        except StopIteration:
            try:
                s.symbolic((Symbol(name, QUANTA[-1], 2 * QUANTA[-1], 101 * QUANTA[-1]),))
                why = "its symbolic compile decides, but on no polynomial of degree 1"
            except CompilationError as e:
                out.append(f"{e.loc}: {kernel.name}: {name} not lifted: {e.message}")
                continue
            except Undecided as e:
                why = str(e)
            out.append(f"{where}: {kernel.name}: {name} not lifted: on no quantum up to {QUANTA[-1]}: {why}")
            continue
        try:
            _joint(s, {**lifted, name: (q, 2 * q)}, platform.ub_budget_bytes)
            why = "the joint fit decides from two quanta, not from the lows"
        except Mismatch as e:
            why = str(e)
        out.append(f"{where}: {kernel.name}: {name} not lifted: alone on multiples of {q}, but {why}")
    return out


def variants(kernels, jit_fns: dict, platform: Platform) -> tuple:
    """The variants of ``kernels`` (first-seen order, keyed 1, 2, ...): one lifted variant per kernel
    function, dtypes and structural constexprs where :func:`analyse` lifts some constexprs (every
    kernel it admits runs as that variant), a specialisation for every other kernel."""
    out: list = []
    budget = platform.ub_budget_bytes
    for k in kernels:
        if any(v.serves(k) and (v.lift is None or v.lift.problem(v.lifted_values(k), budget) is None) for v in out):
            continue
        fn = jit_fns.get(k.name)
        found = analyse(fn, k, platform) if fn is not None else None
        v = Variant(len(out) + 1, k, found)
        if found is not None and (found.problem(v.lifted_values(k), budget) is not None
                                  or any(w.serves(k) for w in out)):
            v = Variant(len(out) + 1, k)  # this kernel's own extents lie outside the lifted domain
        out.append(v)
    return tuple(_with_form(v, out, jit_fns, platform) for v in out)


def _with_form(v, variants, jit_fns: dict, platform: Platform):
    """``v``, a lifted float32 variant, with the lift of the float32 form (:mod:`.templated`) of a 16-bit
    variant's kernel function specialised at ``v``'s constexprs, when that form computes what ``v``'s
    kernel does and has its extents and footprint: the two may then share one template class."""
    if v.lift is None or pointer_dtypes(v.kernel) != {dtypes.float32}:
        return v
    for w in variants:
        if w.lift is None or w.kernel.name != v.kernel.name or \
                element_type(pointer_dtypes(w.kernel)) not in (dtypes.float16, dtypes.bfloat16) or \
                w.lift.names != v.lift.names:
            continue
        fn = jit_fns[w.kernel.name]
        try:
            narrow = fn.specialize(*(p.type.dtype for p in w.kernel.params), **dict(v.kernel.constexprs)).kernels[0]
        except CompilationError:
            return v
        if not computes_the_same(float32_form(narrow), v.kernel):
            return v
        form = analyse(fn, narrow, platform, float32_form)
        corners = [dict(zip(v.lift.names, vs)) for vs in itertools.product(*[(e.low, e.high, e.low + 7 * e.quantum)
                                                                            for e in v.lift.extents])]
        if form is not None and form.extents == v.lift.extents and all(
                form.bytes(c) == v.lift.bytes(c) for c in corners):
            return dataclasses.replace(v, form=form)
        return v
    return v


__all__ = ["Lift", "Mismatch", "analyse", "declines", "samples", "variants"]

