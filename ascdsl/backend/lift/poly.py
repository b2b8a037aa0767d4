"""The lift's polynomials (:mod:`.lift`): fit through samples, and UB footprints made of them.

The polynomials are :class:`ascdsl.ir.symbol.Poly` over the extents' names: fitted ones have
monomials of the names, each at most once (``1, X, Y, XY``), with rational coefficients.
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

from ...ir.symbol import ZERO, Poly, ceiling

BLOCK = 32  # UB slots are whole 32-byte blocks (every platform's block_bytes)
Slots = tuple  # ((buffers, (bytes the views of a buffer in it reach: Poly, ...)), ...): a UB footprint


class Mismatch(Exception):
    """The samples differ in structure, or a leaf fits no polynomial: the constexpr stays a
    specialisation (internal to the backend; never reaches users)."""


def fit(points: list[dict], ys: list[int], names: tuple[str, ...]) -> Poly:
    """The polynomial in the monomials of ``names`` (each name at most once) through the points (a
    full grid of two values per name, solved exactly)."""
    monos = [m for r in range(len(names) + 1) for m in itertools.combinations(names, r)]
    rows = [[Fraction(math.prod(p[n] for n in m)) for m in monos] + [Fraction(y)] for p, y in zip(points, ys)]
    n = len(monos)
    for col in range(n):
        pivot = next((r for r in range(col, len(rows)) if rows[r][col] != 0), None)
        if pivot is None:
            raise Mismatch("singular sample grid")
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(len(rows)):
            if r != col and rows[r][col] != 0:
                f = rows[r][col] / rows[col][col]
                rows[r] = [a - f * b for a, b in zip(rows[r], rows[col])]
    coefs = [rows[i][n] / rows[i][i] for i in range(n)]
    if any(row[n] != 0 for row in rows[n:]):
        raise Mismatch("no polynomial through the samples")
    return Poly(tuple(zip(monos, coefs)))


def ceil_block(n) -> int:
    return -(-int(n) // BLOCK) * BLOCK


def footprint(slots: Slots, values: dict) -> int:
    """UB bytes of ``slots`` at ``values``: each slot's largest need rounded up to a block, times its
    buffers."""
    return sum(num * ceil_block(max((p.at(values) for p in needs), default=0)) for num, needs in slots)


def unsized(slots: Slots, names) -> list[str]:
    """The constexprs of ``names`` that size no buffer of ``slots``: no tile extent."""
    return [n for n in names if all(n not in mono for _, needs in slots for p in needs for mono, _ in p)]


def describe_slots(slots: Slots) -> str:
    """A footprint for people: ``2 x (4 * BLOCK) + max(4 * ROWS, 1024)``, each slot rounded up to 32 bytes."""
    if all(len(needs) <= 1 for _, needs in slots):
        summed = sum((needs[0] * num for num, needs in slots if needs), ZERO)
        return f"{summed} bytes, each buffer rounded up to {BLOCK}"
    terms = []
    for num, needs in slots:
        inner = str(needs[0]) if len(needs) == 1 else f"max({', '.join(map(str, needs))})"
        terms.append(f"{num} x ({inner})" if num != 1 else inner)
    return " + ".join(terms) + f" bytes, each buffer rounded up to {BLOCK}"


def _block_multiple(poly: Poly, quanta: dict) -> bool:
    """Whether ``poly`` is a multiple of :data:`BLOCK` at every multiple of the quanta (each term is)."""
    return (poly * Poly.const(Fraction(1, BLOCK))).integral(quanta)


def exact_expression(slots: Slots, quanta: dict) -> str:
    """The UB bytes of ``slots`` as one exact expression of the extents (``quanta``: by name):
    ``20 * ROWS * BLOCK_K + 256 * ROWS``; a slot whose need is not a whole number of blocks at every
    admitted value, or that takes the largest of several, is ``num x ceil32(max(...))``."""
    summed = ZERO
    rest = []
    for num, needs in slots:
        if not needs or not num:
            continue
        if all(mono == () for p in needs for mono, _ in p):  # a constant slot: its bytes
            summed += num * ceil_block(max(p.at({}) for p in needs))
            continue
        if len(needs) == 1 and _block_multiple(needs[0], quanta):
            summed += needs[0] * num
            continue
        rest.append(f"{num} x {ceiling(needs, BLOCK)}" if num != 1 else ceiling(needs, BLOCK))
    head = [str(summed)] if summed or not rest else []
    return " + ".join(head + rest)


def as_json(poly: Poly) -> list[dict]:
    """``poly`` as the manifest records it: ``[{"fields": [...], "num": n, "den": d}, ...]``."""
    return [{"fields": list(mono), "num": coef.numerator, "den": coef.denominator} for mono, coef in poly]


def from_json(terms: list[dict]) -> Poly:
    return Poly(tuple((tuple(t["fields"]), Fraction(t["num"], t["den"])) for t in terms))


__all__ = ["BLOCK", "Mismatch", "Slots", "as_json", "ceil_block", "describe_slots", "exact_expression", "fit", "footprint",
           "from_json", "unsized"]
