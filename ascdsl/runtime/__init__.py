"""``triton.runtime`` for ascdsl: the driver (a CPU device), ``libentry``, the autotuner and
heuristics, and :class:`JITFunction`, so Triton code importing them runs unchanged."""
from ..jit import JITFunction
from . import driver, libentry
from .autotuner import Autotuner, Config, Heuristics, autotune, heuristics

__all__ = ["Autotuner", "Config", "Heuristics", "JITFunction", "autotune", "driver", "heuristics", "libentry"]
