"""Reusable ``@ascdsl.jit`` helpers for kernels (call them from your own kernels)."""
import ascdsl.language as tl

from .jit import jit


@jit
def core_span(per_core, big_cores):
    """The work units ``[start, end)`` of this program when units are split over programs with
    ``per_core`` each and one more on the first ``big_cores`` (CANN's big/small-core split).
    The host computes ``per_core = units // programs`` and ``big_cores = units % programs``."""
    pid = tl.program_id(0)
    start = pid * per_core + tl.minimum(pid, big_cores)
    return start, start + per_core + (pid < big_cores).to(tl.int32)
