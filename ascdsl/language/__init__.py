"""The ascdsl language: what ``import ascdsl.language as tl`` gives a kernel author.

The builtins here are *markers*: the frontend recognises them by identity inside an
``@ascdsl.jit`` function and emits IR for them; called anywhere else they raise
:class:`ascdsl.Error` (except :func:`cdiv` and :func:`next_power_of_2`, which also work on host
ints). Their signatures and docstrings are the contract (the frontend binds calls
against them). Tiles are immutable values with a static shape and a dtype; a shape of ``()`` is a
scalar. Elementwise operations broadcast as in NumPy and promote dtypes as in Triton (see
:mod:`ascdsl.semantics`).

The names follow Triton's ``triton.language``: :mod:`.core` (tiles, memory, loops, reductions,
shapes), :mod:`.math` (elementwise math, also ``tl.math``), :mod:`.random` (Philox) and
:mod:`.extra` (``libdevice`` and ``cann.libdevice``); ``tl.swizzle2d`` is written in the language itself
(:mod:`.extra.special`).
"""
from __future__ import annotations

from ..dtypes import DType as dtype
from . import core, extra, math, random
from .core import *  # noqa: F403
from .core import __all__ as _core
from .extra.special import swizzle2d
from .math import *  # noqa: F403
from .math import __all__ as _math
from .random import *  # noqa: F403
from .random import __all__ as _random

__all__ = [*_core, *_math, *_random, "core", "dtype", "extra", "math", "random", "swizzle2d"]

