"""Symbols and the integers made of them.

A :class:`Symbol` is a run-time tile extent (a constexpr such as ``BLOCK`` or ``ROWS`` that only sizes
tiles) as a name with its domain, the multiples of ``quantum`` from ``low`` up to ``high``. A
:class:`Poly` is an integer polynomial of symbols (or of names whose domain is every integer): the one
algebra of symbolic integers, exact where the domains decide and :class:`Undecided` where they do not.
A :class:`Ceil` is a size in whole blocks no polynomial gives (``ceil32(1/8 * BLOCK)``, a UB slot's
``ceil32(max(4 * BLOCK_K, 256))``), ordered by the interval its rounding leaves.

Today the lift (:mod:`ascdsl.backend.lift.lift`) finds a kernel's symbols by differential
specialisation and fits its polynomials through samples; every check of a value against them goes
through :class:`Symbol`. The plan to introduce them at specialisation instead ("Symbolic tile extents"
in ``docs/design.md``) keeps these types. The kernel IR's expression of a polynomial is the backend's
(:func:`ascdsl.backend.names.naming.to_expr`).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Iterator, Mapping, Union


@dataclass(frozen=True)
class Symbol:
    """A run-time tile extent: ``name`` takes the multiples of ``quantum`` that are at least ``low``;
    ``high`` is the largest value the UB budget allows with the kernel's other symbols at their
    ``low`` (the footprint, not the symbol, checks the budget at a given point)."""

    name: str
    quantum: int
    low: int
    high: int

    def __post_init__(self):
        if not (self.quantum >= 1 and self.low >= self.quantum and self.low % self.quantum == 0
                and self.high >= self.low and (self.high - self.low) % self.quantum == 0):
            raise ValueError(f"{self} is no domain: low and high must be multiples of the quantum, "
                             "0 < low <= high")

    def admits(self, value: int) -> bool:
        """Whether a kernel of this symbol serves ``value``."""
        return value % self.quantum == 0 and value >= self.low

    def refusal(self, value: int) -> str | None:
        """Why ``value`` is not admitted, or None."""
        if self.admits(value):
            return None
        return f"{self.name}={value}{self.requirement}"

    @property
    def requirement(self) -> str:
        """What a refused value is not (after ``NAME=VALUE``; the host code's message says it too)."""
        return (f" is not a multiple of {self.quantum} of at least {self.low}, as this kernel's runtime tile extent "
                "must be")

    def largest(self, fits: Callable[[int], bool]) -> int:
        """The largest admitted value with ``fits`` (monotone), or 0 when not even ``low`` fits."""
        return largest_fitting(fits, self.low, self.quantum)


def largest_fitting(fits: Callable[[int], bool], low: int, step: int) -> int:
    """The largest ``low + i * step`` with ``fits`` (monotone), or 0 when ``fits(low)`` is false."""
    if not fits(low):
        return 0
    lo, hi = 0, 1
    while fits(low + hi * step):
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(low + mid * step) else (lo, mid)
    return low + lo * step


Var = Union[Symbol, str, int]
"""A polynomial's variable: a symbol, or a name (a value id) that may be any integer."""
Coef = Union[int, Fraction]
Mono = tuple  # the variables of a term, with repetition (``BLOCK * BLOCK``)


class Undecided(Exception):
    """The symbols' domains do not decide a comparison, or a division is not exact on them: the
    caller falls back (the lift passes the quantum over; the constexpr may stay a specialisation)."""


class Differs(Undecided):
    """A value the kernel holds is no polynomial the symbols' domains make exact (``ceil(BLOCK / 64)`` repeats
    for ``BLOCK`` of multiples of 8): ``value(values)`` is what the kernel compiled for those values holds, so a
    caller that fits samples (the lift) can tell, without compiling them, points through which no polynomial
    goes. Like any :class:`Undecided`, where it is not caught the caller falls back."""

    def __init__(self, message: str, value: Callable[[Mapping], Coef]):
        super().__init__(message)
        self.value = value


def ceil_div(x: Poly | int, d: int) -> Poly | int:
    """``ceil(x / d)`` for a count the kernel holds (a call's repeats, a buffer's blocks): a polynomial where the
    division is exact on the symbols' domains, else :class:`Differs` with its value at each point."""
    try:
        return -(-x // d)
    except Undecided as e:
        raise Differs(str(e), lambda values: -(-value_at(x, values) // d)) from e


def value_at(x: Poly | Ceil | int, values: Mapping) -> Coef:
    """``x`` where each variable takes ``values[name]`` (an int: itself)."""
    return x.at(values) if isinstance(x, Ceil) else _poly(x).at(values)


def domain_points(xs, most: int) -> list[dict] | None:
    """Every point of the domains of the symbols in ``xs`` (numbers, :class:`Poly` s, :class:`Ceil` s), each by
    name, where they are at most ``most`` (else None; None too for a variable that is no symbol: no domain). A
    choice made at each of them is one made on the whole domain."""
    polys = [p for x in xs for p in ([x.base] + [n for _, needs in x.parts for n in needs] if isinstance(x, Ceil)
                                     else [x]) if isinstance(p, Poly)]
    variables = {v for p in polys for mono, _ in p for v in mono}
    if not all(isinstance(v, Symbol) for v in variables):
        return None
    symbols = sorted(variables, key=lambda v: v.name)
    if math.prod((v.high - v.low) // v.quantum + 1 for v in symbols) > most:
        return None
    return [dict(zip((v.name for v in symbols), values))
            for values in itertools.product(*[range(v.low, v.high + 1, v.quantum) for v in symbols])]


def var_name(v: Var) -> str | int:
    """A variable's name: a symbol's, else the variable itself."""
    return v.name if isinstance(v, Symbol) else v


def _order(v: Var) -> tuple:
    """Where a variable sorts: value ids (ints) before names, each kind by itself (a term may have both:
    ``pid * BLOCK`` in an offset of the memory-access analysis)."""
    name = var_name(v)
    return isinstance(name, str), name


def _coef(c: Coef) -> Coef:
    return c.numerator if isinstance(c, Fraction) and c.denominator == 1 else c


def _canonical(mono) -> Mono:
    return tuple(sorted(mono, key=_order))


def _quantum(v: Var) -> int:
    return v.quantum if isinstance(v, Symbol) else 1


@dataclass(frozen=True, eq=False)
class Poly:
    """``sum coef * prod(mono)`` over ``terms``, a tuple of ``(mono, coef)``; iterating yields them.

    Terms and each term's variables keep the order they are given in (the lift's: the kernel's
    constexprs, which generated text follows); a sum appends the terms new to the left operand, a
    product lists the left operand's variables first. Equality and hashing are the polynomial's
    (:attr:`canonical`), whatever the order; ``bool`` is whether it is not the zero polynomial.
    ``< <= > >=`` hold on every point of the symbols' domains or raise :class:`Undecided`."""

    terms: tuple = ()

    def __post_init__(self):
        merged: dict = {}
        shown: dict = {}
        for mono, coef in self.terms:
            key = _canonical(mono)
            merged[key] = merged.get(key, 0) + coef
            shown.setdefault(key, tuple(mono))
        object.__setattr__(self, "terms", tuple((shown[k], _coef(c)) for k, c in merged.items() if c))

    @staticmethod
    def const(value: Coef) -> Poly:
        return Poly((((), value),))

    @staticmethod
    def var(v: Var) -> Poly:
        return Poly((((v,), 1),))

    def __iter__(self) -> Iterator[tuple[Mono, Coef]]:
        return iter(self.terms)

    @property
    def canonical(self) -> tuple:
        """The terms with each one's variables sorted by name, sorted by those names."""
        return tuple(sorted(((_canonical(m), c) for m, c in self.terms), key=lambda mc: tuple(map(_order, mc[0]))))

    def __eq__(self, other) -> bool:
        return isinstance(other, Poly) and self.canonical == other.canonical

    def __hash__(self) -> int:
        return hash(self.canonical)

    def __bool__(self) -> bool:
        return bool(self.terms)

    def __add__(self, other: Poly | int) -> Poly:  # a Ceil: the Ceil's sum
        if isinstance(other, Ceil):
            return other + self
        return Poly(self.terms + _poly(other).terms)

    __radd__ = __add__

    def __neg__(self) -> Poly:
        return Poly(tuple((m, -c) for m, c in self.terms))

    def __sub__(self, other: Poly | int) -> Poly:
        return self + -_poly(other)

    def __rsub__(self, other: int) -> Poly:
        return _poly(other) - self

    def __mul__(self, other: Poly | int) -> Poly:
        return Poly(tuple((ma + mb, ca * cb) for ma, ca in self.terms for mb, cb in _poly(other).terms))

    __rmul__ = __mul__

    def __floordiv__(self, d: int) -> Poly:
        whole, rest = self._divided(d)
        return whole + rest // d

    def __mod__(self, d: int) -> Poly:
        return Poly.const(self._divided(d)[1] % d)

    def _divided(self, d: int) -> tuple[Poly, int]:
        """``(s / d, r)`` with ``self == s + r``, ``s`` a multiple of ``d`` on the domains and ``r`` the
        constant term; :class:`Undecided` where a variable's term is not such a multiple."""
        for mono, coef in self.terms:
            if mono and Fraction(coef * math.prod(_quantum(v) for v in mono), d).denominator != 1:
                raise Undecided(f"{Poly(((mono, coef),))} is not a multiple of {d} on the symbols' domains")
        rest = self.constant_term
        if isinstance(rest, Fraction):
            raise Undecided(f"{self} is not an integer")
        return Poly(tuple((m, Fraction(c, d)) for m, c in self.terms if m)), rest

    @property
    def constant_term(self) -> Coef:
        return next((c for m, c in self.terms if not m), 0)

    def bounds(self) -> tuple[Coef, Coef]:
        """Bounds of the values on the box of the symbols' domains, term by term (each term is monotone
        there: the symbols are positive), so not always the tightest; :class:`Undecided` for a variable
        without a domain."""
        lo = hi = 0
        for mono, coef in self.terms:
            free = [v for v in mono if not isinstance(v, Symbol)]
            if free:
                raise Undecided(f"`{free[0]}` has no domain")
            ends = (coef * math.prod(v.low for v in mono), coef * math.prod(v.high for v in mono))
            lo, hi = lo + min(ends), hi + max(ends)
        return lo, hi

    def _positive(self) -> bool:
        """Whether ``self > 0`` on every point of the domains (False: on none); :class:`Undecided` where
        :meth:`bounds` straddle 0."""
        lo, hi = self.bounds()
        if lo > 0 or hi <= 0:
            return lo > 0
        raise Undecided(f"the symbols' domains do not decide {self} > 0")

    def __gt__(self, other: Poly | int) -> bool:
        return (self - other)._positive()

    def __lt__(self, other: Poly | int) -> bool:
        return (_poly(other) - self)._positive()

    def __ge__(self, other: Poly | int) -> bool:
        return not self < other

    def __le__(self, other: Poly | int) -> bool:
        return not self > other

    def _no_number(self, *_other) -> int:
        """A polynomial is no number (``range``, ``int``, ``float``, ``/``): :class:`Undecided`, so a pass that
        needs a value falls back to the kernel compiled with values, as where a comparison is undecided."""
        raise Undecided(f"{self} is needed as a number: compile with values")

    __index__ = __int__ = __float__ = __truediv__ = __rtruediv__ = _no_number

    def at(self, values: Mapping) -> Coef:
        """The value where each variable takes ``values[name]`` (a symbol's name, else the variable)."""
        return _coef(sum((Fraction(c) * math.prod(values[var_name(v)] for v in m) for m, c in self.terms), Fraction(0)))

    def integral(self, quanta: Mapping) -> bool:
        """Whether every term is an integer at every multiple of the variables' quanta (a symbol's own,
        else ``quanta[name]``, else 1)."""
        return all(Fraction(c * math.prod(quanta.get(var_name(v), _quantum(v)) for v in m)).denominator == 1
                   for m, c in self.terms)

    def __str__(self) -> str:
        """For people, the most variables first: ``24 * BLOCK + 96``."""
        out = []
        for mono, coef in sorted(self.terms, key=lambda mc: (-len(mc[0]), tuple(map(_order, mc[0])))):
            mag = abs(coef)
            text = " * ".join(([str(mag)] if mag != 1 or not mono else []) + [str(var_name(v)) for v in mono])
            out.append(("- " if coef < 0 else "+ " if out else "") + text)
        return " ".join(out) or "0"


ZERO = Poly()
ONE = Poly.const(1)


def equal(x: Poly | int, y: Poly | int) -> bool:
    """Whether ``x == y`` at every point of the symbols' domains (False: at none of them); :class:`Undecided`
    where it holds at some points only (``BLOCK // 8 == 1`` for ``BLOCK`` from 8)."""
    d = x - y
    return not (d > 0 or d < 0)


def multiple(x: Poly | int, d: int) -> bool:
    """Whether ``x`` is a multiple of ``d`` at every point of the symbols' domains (False: at none of them);
    :class:`Undecided` where it is at some points only (``BLOCK`` of quantum 8 and 16)."""
    return not x % d  # an int's remainder, or a constant polynomial's (``Poly.__mod__`` decides it or raises)


def all_of(*tests: Callable[[], bool]) -> bool:
    """Whether every one of ``tests`` holds (each asked in turn): False where one is False at every point of the
    symbols' domains, even where another is :class:`Undecided` there (a masked copy is no whole-block copy
    whether or not its lanes are whole blocks); :class:`Undecided` where none is False and one is undecided."""
    undecided = None
    for test in tests:
        try:
            if not test():
                return False
        except Undecided as e:
            undecided = undecided or e
    if undecided is not None:
        raise undecided
    return True


def less(x: Poly | Ceil | int, y: Poly | Ceil | int) -> bool:
    """Whether ``x < y`` at every point of the symbols' domains (False: at none of them); :class:`Undecided`
    where the order of the two flips inside the domains (or they tie at some points only). Exact where
    ``y - x`` is multilinear in symbols (no symbol twice in a term): its extremes on the box of the domains
    lie at the box's corners, which are points of the domains (``4 * ROWS * BLOCK`` against ``4 * BLOCK``);
    elsewhere the :class:`Poly` order (term-by-term bounds). A rounded size (:class:`Ceil`) is ordered by the
    interval its rounding leaves (:func:`_less_rounded`)."""
    if isinstance(x, Ceil) or isinstance(y, Ceil):
        return _less_rounded(x, y)
    if not isinstance(x, Poly) and not isinstance(y, Poly):
        return x < y
    d = _poly(y) - _poly(x)
    monos = [m for m, _ in d]
    symbols = list(dict.fromkeys(v for m in monos for v in m))
    if not all(isinstance(v, Symbol) for v in symbols) or any(len(set(m)) != len(m) for m in monos):
        return d > 0
    values = [d.at({v.name: end for v, end in zip(symbols, ends)})
              for ends in itertools.product(*[(v.low, v.high) for v in symbols])]
    if all(v > 0 for v in values) or all(v <= 0 for v in values):
        return values[0] > 0
    raise Undecided(f"the symbols' domains do not decide {_poly(x)} < {_poly(y)}")


def larger(x: Poly | Ceil | int, y: Poly | Ceil | int) -> Poly | Ceil | int:
    """``max(x, y)`` on the symbols' domains (``x`` where they tie): the one that is at least the other at
    every point; :class:`Undecided` where neither is (:func:`less`)."""
    return y if less(x, y) else x


def same(x, y: Poly | int) -> bool:
    """:func:`equal` of a number that may be missing (None: not a constant, so never ``y``)."""
    return x is not None and equal(x, y)


def _poly(x: Poly | int) -> Poly:
    return x if isinstance(x, Poly) else Poly.const(x)


def _round_up(n: Coef, block: int) -> int:
    return -(-n // block) * block


@dataclass(frozen=True)
class Ceil:
    """Bytes in whole blocks that no polynomial gives on the symbols' domains: ``base`` plus, for each
    ``(num, needs)`` of ``parts``, ``num`` times the largest of ``needs`` rounded up to a multiple of ``block``.
    A buffer of ``BLOCK / 8`` bytes (a reduction's, ``BLOCK`` of multiples of 64) takes ``ceil32(1/8 * BLOCK)``;
    a UB slot holding buffers whose needs cross inside the domain ``ceil32(max(4 * BLOCK_K, 256))``.
    :func:`rounded` makes one; sums and products by an int stay this form (a plan's total bytes), and
    :func:`less` orders one rounded size against another."""

    parts: tuple  # ((num, (Poly, ...)), ...)
    block: int
    base: Poly = ZERO

    def at(self, values: Mapping) -> int:
        """The bytes where each variable takes ``values[name]`` (:func:`value_at`: a constant may be an int, as
        :func:`.lift.symbolic.named` writes one)."""
        return value_at(self.base, values) + sum(num * _round_up(max(value_at(p, values) for p in needs), self.block)
                                          for num, needs in self.parts)

    def __add__(self, other: Poly | Ceil | int) -> Ceil:
        if isinstance(other, Ceil):
            if other.block != self.block:
                raise ValueError(f"{self} and {other} round to different blocks")
            return Ceil(self.parts + other.parts, self.block, self.base + other.base)
        return Ceil(self.parts, self.block, self.base + other)

    __radd__ = __add__

    def __mul__(self, times: int) -> Ceil:
        return Ceil(tuple((num * times, needs) for num, needs in self.parts), self.block, self.base * times)

    __rmul__ = __mul__

    def __str__(self) -> str:
        """As the lift's footprint expressions write it: ``4 * BLOCK + 2 x ceil32(max(4 * BLOCK_K, 256))``."""
        rest = [f"{num} x {ceiling(needs, self.block)}" if num != 1 else ceiling(needs, self.block)
                for num, needs in self.parts]
        return " + ".join(([str(self.base)] if self.base or not rest else []) + rest)


def ceiling(needs, block: int) -> str:
    """``ceil32(max(a, b))``: the largest of ``needs`` rounded up to a multiple of ``block``, for people."""
    inner = str(needs[0]) if len(needs) == 1 else f"max({', '.join(map(str, needs))})"
    return f"ceil{block}({inner})"


def _holds(test: Callable[[], bool]) -> bool:
    """Whether ``test`` is True (False where it is False or :class:`Undecided`)."""
    try:
        return test()
    except Undecided:
        return False


def at_least_from_lows(x: Poly | int, y: Poly | int) -> bool:
    """Whether ``x >= y`` at every value of the symbols from their lows, whatever their highs: ``x - y`` with each
    symbol ``S`` written ``S.low + S.quantum * s`` (``s`` its steps from its low, any integer from 0) has no
    negative coefficient. Exact where ``x - y`` is multilinear in symbols (a term of a negative coefficient
    outgrows the terms of fewer steps far enough along its own steps, the other steps at 0: ``52 * ROWS`` is not
    at least ``32 * ROWS + 224`` from 1, nor the other way round); elsewhere, and for a variable that is no
    symbol, False where it is not shown."""
    steps = ZERO
    for mono, coef in _poly(x) - _poly(y):
        if not all(isinstance(v, Symbol) for v in mono):
            return False
        steps += math.prod((Poly.const(v.low) + v.quantum * Poly.var(v.name) for v in mono), start=Poly.const(coef))
    return all(coef >= 0 for _, coef in steps)


def dominant(needs) -> tuple[Poly, ...]:
    """``needs`` (numbers or polynomials) as polynomials, each once, but those another is at least at every value
    from the symbols' lows (:func:`at_least_from_lows`; of equal ones, the first): the needs that some value makes
    the largest, or that tie with the largest, as the lift's footprint keeps them. The highs do not enter: a
    domain that ends before two needs cross keeps both, as one past the crossing does (the lift compiles for
    domains of several highs, and finds each kernel the same)."""
    polys = list(dict.fromkeys(map(_poly, needs)))

    def under(i: int, j: int) -> bool:  # needs[j] is at least needs[i] everywhere
        return at_least_from_lows(polys[j], polys[i])
    return tuple(p for i, p in enumerate(polys)
                 if not any(j != i and under(i, j) and (j < i or not under(j, i)) for j in range(len(polys))))


def rounded(needs, block: int) -> int | Poly | Ceil:
    """The largest of ``needs`` (each a buffer's bytes, a number or a polynomial) rounded up to a multiple of
    ``block``: a number for numbers, a polynomial where one need is :func:`dominant` and rounds exactly
    (``4 * BLOCK + 16`` to ``4 * BLOCK + 32`` for ``BLOCK`` of multiples of 8), else a :class:`Ceil` of the
    dominant needs (``ceil32(max(52 * ROWS, 32 * ROWS + 224))``, whether or not the domain reaches their
    crossing)."""
    if not any(isinstance(n, Poly) for n in needs):
        return _round_up(max(needs), block)
    kept = dominant(needs)
    if len(kept) == 1:
        try:
            return (kept[0] + block - 1) // block * block
        except Undecided:
            pass
    return Ceil(((1, kept),), block)


def _sized(x: Poly | Ceil | int, block: int) -> tuple[tuple[Poly, ...], bool]:
    """The needs ``x`` rounds up, and whether each is its own rounding (a number or polynomial: itself, a whole
    number of blocks on the domain)."""
    if isinstance(x, Ceil):
        if x.base or len(x.parts) != 1 or x.parts[0][0] != 1:
            raise Undecided(f"{x} is no one rounded size")
        return x.parts[0][1], False
    if not multiple(x, block):
        raise Undecided(f"{x} is no whole number of {block}-byte blocks")
    return (_poly(x),), True


def _less_rounded(x: Poly | Ceil | int, y: Poly | Ceil | int) -> bool:
    """:func:`less` of two sizes, one of them a :class:`Ceil`, by the interval the rounding leaves: for a whole
    number of blocks ``q``, ``ceil32(p) < q`` iff ``p <= q - 32``, and ``ceil32(p) >= q`` iff ``p > q - 32``.
    ``x < y`` everywhere where each need of ``x`` is at most one of ``y``'s less a block; ``x >= y`` where each
    need of ``y`` is at most one of ``x``'s (plus a block less one, where that need is whole blocks); else
    :class:`Undecided` (the order flips, or the rounding leaves it open)."""
    block = (x if isinstance(x, Ceil) else y).block
    (xs, _), (ys, whole) = _sized(x, block), _sized(y, block)
    if all(any(_holds(lambda: not less(b - block, a)) for b in ys) for a in xs):
        return True
    slack = block - 1 if whole else 0
    if all(any(_holds(lambda: not less(a, b - slack)) for a in xs) for b in ys):
        return False
    raise Undecided(f"the symbols' domains do not decide {x} < {y}")


__all__ = ["ONE", "Ceil", "Differs", "Poly", "Symbol", "Undecided", "Var", "ZERO", "all_of", "at_least_from_lows",
           "ceil_div", "ceiling", "domain_points", "dominant", "equal", "larger", "largest_fitting", "less", "multiple",
           "rounded", "same", "var_name"]
