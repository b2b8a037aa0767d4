"""Symbols: a run-time tile extent (a constexpr such as ``BLOCK`` or ``ROWS`` that only sizes tiles)
as a name with its domain, the multiples of ``quantum`` from ``low`` up to ``high``.

Today the lift (:mod:`ascdsl.backend.lift.lift`) finds a kernel's symbols by differential
specialisation and every check of a value against them goes through :class:`Symbol`; the plan to
introduce them at specialisation instead ("Symbolic tile extents" in ``docs/design.md``) keeps
this type.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


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


__all__ = ["Symbol", "largest_fitting"]
