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


@jit
def load_flat_rows(ptr, row0, end, ROWS: tl.constexpr, K: tl.constexpr):
    """Rows ``row0 .. row0 + ROWS`` (those before ``end``; masked ones 0) of a row-major ``[.., K]`` tensor as
    a float32 ``[ROWS, K]`` tile, read flat: one burst, where a ``[ROWS, K]`` load whose rows are not whole
    32-byte blocks is a burst a row. The float32 tile's rows follow each other in UB when ``K`` is a
    multiple of 8 (the reshape moves nothing); any other ``K`` is a Gather."""
    offsets = row0 * K + tl.arange(0, ROWS * K)
    return tl.reshape(tl.load(ptr + offsets, mask=offsets < end * K, other=0.0).to(tl.float32), (ROWS, K))


@jit
def store_flat_rows(ptr, row0, end, value):
    """``value`` (``[ROWS, K]``) into rows ``row0 .. row0 + ROWS`` (those before ``end``) of a row-major
    ``[.., K]`` tensor of ``ptr``'s type, written flat (see :func:`load_flat_rows`)."""
    rows, k = value.shape
    offsets = row0 * k + tl.arange(0, rows * k)
    tl.store(ptr + offsets, tl.reshape(value, (rows * k,)).to(ptr.dtype.element_ty), mask=offsets < end * k)
