"""Polynomials of runtime tile extents (:mod:`.lift`): fit through samples, evaluate, print.

A polynomial is a sorted tuple of ``(monomial, coefficient)``: a monomial is a tuple of extent names
(each at most once: ``1, X, Y, XY``), a coefficient a :class:`~fractions.Fraction`.
"""
from __future__ import annotations

import itertools
from fractions import Fraction

from ... import dtypes
from .. import kir
from ..kir import Bin, BinOp, Field, lit
from ..names.naming import field_name

FIELD_DTYPE = dtypes.int32
BLOCK = 32  # UB slots are whole 32-byte blocks (every platform's block_bytes)
Poly = tuple
Slots = tuple  # ((buffers, (bytes the views of a buffer in it reach: Poly, ...)), ...): a UB footprint


class Mismatch(Exception):
    """The samples differ in structure, or a leaf fits no polynomial: the constexpr stays a
    specialisation (internal to the backend; never reaches users)."""


def evaluate(poly: Poly, values: dict) -> Fraction:
    total = Fraction(0)
    for mono, coef in poly:
        term = coef
        for n in mono:
            term *= values[n]
        total += term
    return total


def fit(points: list[dict], ys: list[int], names: tuple[str, ...]) -> Poly:
    """The polynomial in the monomials of ``names`` (each name at most once) through the points (a
    full grid of two values per name, solved exactly)."""
    monos = [m for r in range(len(names) + 1) for m in itertools.combinations(names, r)]
    rows = [[Fraction(_prod(p, m)) for m in monos] + [Fraction(y)] for p, y in zip(points, ys)]
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
    return tuple((m, c) for m, c in zip(monos, coefs) if c != 0)


def _prod(values: dict, mono) -> int:
    out = 1
    for n in mono:
        out *= values[n]
    return out


def to_expr(poly: Poly, quanta: dict, dtype) -> kir.Expr:
    """``poly`` over tiling fields, exact in integer C++ for every multiple of the quanta (a
    :class:`Mismatch` otherwise)."""
    out = None
    for mono, coef in sorted(poly, key=lambda mc: (-len(mc[0]), mc[0])):
        if (coef * _prod(quanta, mono)).denominator != 1:
            raise Mismatch(f"{coef} * {'*'.join(mono)} is not an integer on multiples of the quanta")
        mag = abs(coef)
        if mono:
            term = Field(field_name(mono[0]), FIELD_DTYPE)
            for n in mono[1:]:
                term = Bin(BinOp.MUL, term, Field(field_name(n), FIELD_DTYPE))
            if mag.numerator != 1:
                term = Bin(BinOp.MUL, term, lit(mag.numerator))
            if mag.denominator != 1:
                term = Bin(BinOp.DIV, term, lit(mag.denominator))
        else:
            term = lit(int(mag))
        if out is None:
            out = term if coef > 0 else Bin(BinOp.SUB, lit(0), term)
        else:
            out = Bin(BinOp.ADD if coef > 0 else BinOp.SUB, out, term)
    out = lit(0) if out is None else out
    return out if dtype == FIELD_DTYPE else kir.Conv(dtype, out)


def describe(poly: Poly) -> str:
    """``poly`` for people: ``24 * BLOCK + 96``."""
    terms = []
    for mono, coef in sorted(poly, key=lambda mc: (-len(mc[0]), mc[0])):
        mag = abs(coef)
        factor = [str(mag)] if mag != 1 or not mono else []
        text = " * ".join(factor + list(mono))
        terms.append(("- " if coef < 0 else "+ " if terms else "") + text)
    return " ".join(terms) or "0"


def ceil_block(n) -> int:
    return -(-int(n) // BLOCK) * BLOCK


def footprint(slots: Slots, values: dict) -> int:
    """UB bytes of ``slots`` at ``values``: each slot's largest need rounded up to a block, times its
    buffers."""
    return sum(num * ceil_block(max((evaluate(p, values) for p in needs), default=0)) for num, needs in slots)


def describe_slots(slots: Slots) -> str:
    """A footprint for people: ``2 x (4 * BLOCK) + max(4 * ROWS, 1024)``, each slot rounded up to 32 bytes."""
    if all(len(needs) <= 1 for _, needs in slots):
        summed: dict = {}
        for num, needs in slots:
            for mono, coef in (needs[0] if needs else ()):
                summed[mono] = summed.get(mono, 0) + num * coef
        return f"{describe(tuple(summed.items()))} bytes, each buffer rounded up to {BLOCK}"
    terms = []
    for num, needs in slots:
        inner = describe(needs[0]) if len(needs) == 1 else f"max({', '.join(describe(p) for p in needs)})"
        terms.append(f"{num} x ({inner})" if num != 1 else inner)
    return " + ".join(terms) + f" bytes, each buffer rounded up to {BLOCK}"


def _block_multiple(poly: Poly, quanta: dict) -> bool:
    """Whether ``poly`` is a multiple of :data:`BLOCK` at every multiple of the quanta (each term is)."""
    return all((coef * _prod(quanta, mono)) % BLOCK == 0 for mono, coef in poly)


def exact_expression(slots: Slots, quanta: dict) -> str:
    """The UB bytes of ``slots`` as one exact expression of the extents (``quanta``: by name):
    ``20 * ROWS * BLOCK_K + 256 * ROWS``; a slot whose need is not a whole number of blocks at every
    admitted value, or that takes the largest of several, is ``num x ceil32(max(...))``."""
    summed: dict = {}
    rest = []
    for num, needs in slots:
        if not needs or not num:
            continue
        if all(mono == () for p in needs for mono, _ in p):  # a constant slot: its bytes
            summed[()] = summed.get((), 0) + num * ceil_block(max(evaluate(p, {}) for p in needs))
            continue
        if len(needs) == 1 and _block_multiple(needs[0], quanta):
            for mono, coef in needs[0]:
                summed[mono] = summed.get(mono, 0) + num * coef
            continue
        inner = describe(needs[0]) if len(needs) == 1 else f"max({', '.join(describe(p) for p in needs)})"
        rest.append(f"{num} x ceil{BLOCK}({inner})" if num != 1 else f"ceil{BLOCK}({inner})")
    head = [describe(tuple((m, c) for m, c in summed.items() if c))] if any(summed.values()) or not rest else []
    return " + ".join(head + rest)


def as_json(poly: Poly) -> list[dict]:
    """``poly`` as the manifest records it: ``[{"fields": [...], "num": n, "den": d}, ...]``."""
    return [{"fields": list(mono), "num": coef.numerator, "den": coef.denominator} for mono, coef in poly]


def from_json(terms: list[dict]) -> Poly:
    return tuple((tuple(t["fields"]), Fraction(t["num"], t["den"])) for t in terms)


__all__ = ["as_json", "exact_expression", "from_json","BLOCK", "Slots", "ceil_block", "describe_slots", "footprint", "FIELD_DTYPE", "Mismatch", "Poly", "describe", "evaluate", "fit", "to_expr"]
