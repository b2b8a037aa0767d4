"""Observe kernel launches: ``with record.launches() as seen:`` collects every launch inside."""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np

from .ir import Kernel

_active: list[list["LaunchRecord"]] = []


@dataclass(frozen=True)
class LaunchRecord:
    """One launch: the specialised kernel, its grid and backend, and copies of its arguments as
    they were before the launch (so it can be replayed)."""

    kernel: Kernel
    grid: tuple[int, int, int]
    backend: str
    args: tuple = ()


@contextmanager
def launches() -> Iterator[list[LaunchRecord]]:
    seen: list[LaunchRecord] = []
    _active.append(seen)
    try:
        yield seen
    finally:
        _active.remove(seen)


def note(kernel: Kernel, grid: tuple[int, int, int], backend: str, args: Sequence) -> None:
    """Called by the launcher before every launch (copies arguments only while recording)."""
    if _active:
        snapshot = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
        for seen in _active:
            seen.append(LaunchRecord(kernel, grid, backend, snapshot))
