"""Counter-based random numbers (Philox 4x32, 10 rounds by default), bit for bit as in Triton.

``seed`` is an int scalar (int32 or int64: its low and high 32 bits are the Philox key) and
``offset`` an int32 tile of counters; the same ``(seed, offset)`` always gives the same numbers,
so each lane should use its own offset (``pid * BLOCK + tl.arange(0, BLOCK)``).
"""
from __future__ import annotations

from .builtin import builtin

__all__ = [
    'randint4x', 'randint', 'rand', 'rand4x', 'randn', 'randn4x',
]

N_ROUNDS_DEFAULT = 10


@builtin
def randint4x(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """Four int32 tiles of random bits (Triton's uint32 values, bit for bit) per offset."""


@builtin
def randint(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """The first tile of :func:`randint4x`."""


@builtin
def rand(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """Uniform float32 values in ``[0, 1)``."""


@builtin
def rand4x(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """Four tiles of uniform float32 values in ``[0, 1)``."""


@builtin
def randn(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """Standard normal float32 values (Box-Muller on the first two tiles of :func:`randint4x`)."""


@builtin
def randn4x(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """Four tiles of standard normal float32 values."""
