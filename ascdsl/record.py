"""Observe kernel launches: ``with record.launches() as seen:`` collects every launch inside."""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from .ir import Kernel

_active: list[list["LaunchRecord"]] = []


@dataclass(frozen=True)
class LaunchRecord:
    kernel: Kernel
    grid: tuple[int, int, int]
    backend: str


@contextmanager
def launches() -> Iterator[list[LaunchRecord]]:
    seen: list[LaunchRecord] = []
    _active.append(seen)
    try:
        yield seen
    finally:
        _active.remove(seen)


def note(kernel: Kernel, grid: tuple[int, int, int], backend: str) -> None:
    """Called by the launcher for every launch."""
    for seen in _active:
        seen.append(LaunchRecord(kernel, grid, backend))
