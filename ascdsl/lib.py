"""Reusable ``@ascdsl.jit`` helpers for kernels (call them from your own kernels)."""
import ascdsl.language as tl

from .jit import jit

FLAT_ROW_BYTES = 1024
"""Rows of this many bytes or more are not read flat (:func:`reads_flat`): ``K`` is a constexpr, so each row length
is a kernel of its own, and longer rows gain little (softmax_grad's under 5%, log_softmax_grad's 3000x1000 3%)."""
FLAT_ELEMENTS = 1 << 30
"""The most elements :func:`reads_flat` reads flat: the offsets ``row * K + lane`` stay far inside int32."""


def reads_flat(itemsize: int, rows: int, k: int) -> bool:
    """Whether ``rows`` rows of ``k`` elements of ``itemsize`` bytes are read flat (:func:`load_flat_rows`):
    16-bit rows of whole 32-byte blocks in float32 but not in their own type (``k = 8 mod 16``) lie in UB padded
    to a block, a burst each; read flat, a tile of them is one burst and their float32 rows follow each other
    (the reshape moves nothing). A host function calls it only after a flag the Python entry sets (an ``and``
    after softmax_grad's ``packed``): the op project's tiling function, whose C++ cannot call it, has it False."""
    return itemsize == 2 and k % 16 == 8 and k * 2 < FLAT_ROW_BYTES and rows * k <= FLAT_ELEMENTS


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
