"""Observe what ascdsl does: ``with record.launches() as seen:`` collects every kernel launch inside
the block; :class:`Channel` is the mechanism (the simulator publishes its runs on one too)."""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Iterator, Sequence, TypeVar

import numpy as np

if TYPE_CHECKING:
    from .ir import Kernel

T = TypeVar("T")


class Channel(Generic[T]):
    """Items published while a ``collect()`` block is open are appended to its list."""

    def __init__(self) -> None:
        self._open: list[list[T]] = []

    @property
    def listening(self) -> bool:
        return bool(self._open)

    @contextmanager
    def collect(self) -> Iterator[list[T]]:
        items: list[T] = []
        self._open.append(items)
        try:
            yield items
        finally:  # by identity: two open lists can be equal (an inner block that saw what the outer saw)
            self._open = [x for x in self._open if x is not items]

    def publish(self, item: T) -> None:
        for items in self._open:
            items.append(item)


@dataclass(frozen=True)
class LaunchRecord:
    """One launch: the specialised kernel, its grid and backend, and copies of its arguments as
    they were before the launch (so it can be replayed)."""

    kernel: "Kernel"
    grid: tuple[int, int, int]
    backend: str
    args: tuple = ()


LAUNCHES: Channel[LaunchRecord] = Channel()
launches = LAUNCHES.collect
KERNELS: Channel["Kernel"] = Channel()
kernels = KERNELS.collect  # the specialised kernel of every launch (no argument copies)


def note(kernel: "Kernel", grid: tuple[int, int, int], backend: str, args: Sequence) -> None:
    """Called by the launcher before every launch (copies arguments only while recording)."""
    KERNELS.publish(kernel)
    if LAUNCHES.listening:
        snapshot = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
        LAUNCHES.publish(LaunchRecord(kernel, grid, backend, snapshot))
