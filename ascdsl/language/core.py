"""The core of the ascdsl language (``tl``): program ids, tiles, memory, loops, reductions, shapes.

Every builtin here is a marker (:mod:`.builtin`): its signature and docstring are the contract, and the
frontend emits IR for it. The types are :mod:`.types`' and the elementwise math :mod:`.math`'s; the
types are named here too, as in Triton's ``triton.language.core``.
"""
from __future__ import annotations

from ..errors import InputValueError
from .builtin import builtin
from .types import (PropagateNan, bfloat16, block_type, constexpr, float16, float32, int1, int8, int16, int32, int64,
                    pointer_type, tensor, uint8)


__all__ = [
    'pointer_type', 'block_type', 'float32', 'float16', 'bfloat16', 'int8', 'int16', 'int32', 'int64', 'uint8', 'int1',
    'constexpr', 'program_id', 'num_programs', 'arange', 'zeros', 'full', 'load', 'store', 'make_block_ptr',
    'advance', 'range', 'static_range', 'sum', 'max', 'min', 'argmax', 'argmin',
    'maximum', 'minimum', 'where', 'cast', 'static_print', 'static_assert',
    'device_print', 'PropagateNan', 'tensor', 'reduce', 'associative_scan', 'cumsum', 'cumprod', 'xor_sum',
    'sort', 'topk', 'histogram', 'flip', 'dot', 'reshape', 'view', 'permute', 'trans', 'ravel', 'expand_dims', 'broadcast_to',
    'broadcast', 'join', 'split', 'cat', 'interleave', 'zeros_like', 'ones_like', 'full_like', 'multiple_of',
    'max_contiguous', 'max_constancy', 'assume', 'debug_barrier', 'device_assert', 'make_tensor_descriptor',
    'atomic_add', 'atomic_max', 'atomic_min', 'atomic_and', 'atomic_or', 'atomic_xor', 'atomic_xchg',
    'atomic_cas', 'load_tensor_descriptor', 'store_tensor_descriptor', 'cdiv', 'next_power_of_2',
]


@builtin
def program_id(axis):
    """The index of this program instance along grid axis ``axis`` (0, 1 or 2), an int32 scalar."""


@builtin
def num_programs(axis):
    """The number of program instances along grid axis ``axis`` (0, 1 or 2), an int32 scalar."""


@builtin
def arange(start, end):
    """The int32 tile ``[start, start + 1, ..., end - 1]``.

    Args:
        start: constexpr int.
        end: constexpr int greater than ``start``; any extent is allowed (not only powers of 2).
    """


@builtin
def zeros(shape, dtype):
    """A tile of ``shape`` (constexpr int or tuple of ints) filled with zeros of ``dtype``."""


@builtin
def full(shape, value, dtype):
    """A tile of ``shape`` filled with ``value`` (a constexpr or a runtime scalar) cast to ``dtype``."""


@builtin
def load(ptr, mask=None, other=None, boundary_check=(), padding_option="", cache_modifier="",
         eviction_policy="", volatile=False, care_padding=True):
    """Load a tile from global memory.

    Args:
        ptr: a pointer or a tile of pointers (``x_ptr + offsets``); the result has its shape. Or a
            block pointer (:func:`make_block_ptr`): the result is its ``block_shape`` block.
        mask: optional bool tile; lanes where it is False do not touch memory.
        other: value of the masked lanes (cast to the element type); without it they are undefined.
        boundary_check: block pointers only: the dims whose lanes past ``shape[d]`` are masked,
            e.g. ``(0, 1)``.
        padding_option: block pointers only: what masked lanes read, ``"zero"``, ``"nan"`` (floats)
            or ``""`` (undefined).
        cache_modifier, eviction_policy, volatile, care_padding: accepted for Triton
            compatibility; they do not change what is loaded.

    Returns:
        A tile of ``ptr.dtype.element_ty``.
    """


@builtin
def store(ptr, value, mask=None, boundary_check=(), cache_modifier="", eviction_policy=""):
    """Store ``value`` (cast to the element type, broadcast to the pointers' shape) to ``ptr``.

    Args:
        ptr: a pointer, a tile of pointers, or a block pointer (then a tile ``value`` must have
            exactly its ``block_shape``).
        value: a tile or scalar.
        mask: optional bool tile; lanes where it is False are not written.
        boundary_check: block pointers only: the dims whose lanes past ``shape[d]`` are not written.
        cache_modifier, eviction_policy: accepted for Triton compatibility; no effect.
    """


@builtin
def make_block_ptr(base, shape, strides, offsets, block_shape, order):
    """A block pointer: the ``block_shape`` block at ``offsets`` of the tensor ``base[shape]``.

    Load and store it with :func:`load`/:func:`store` (``boundary_check=`` masks the lanes with
    ``offsets[d] + i >= shape[d]``; offsets should be non-negative, as only this upper bound is
    checked), move it with :func:`advance`. It may be carried through loops and if/else as long as
    only its offsets change.

    Args:
        base: a pointer argument (the tensor's first element).
        shape: the tensor's size per dim, int scalars or constexprs.
        strides: the tensor's stride per dim in elements, int scalars or constexprs (the backend
            needs a constexpr 1 for the innermost dim).
        offsets: the block's first element per dim, int scalars or constexprs.
        block_shape: constexpr ints, the tile shape loads return and stores expect.
        order: constexpr permutation of the dims, fastest-varying first, e.g. ``(1, 0)``; checked
            but it does not change what loads and stores do.
    """


@builtin
def advance(base, offsets):
    """The block pointer ``base`` moved by ``offsets`` (one int scalar or constexpr per dim)."""


@builtin
def range(start, end=None, step=None, num_stages=None, loop_unroll_factor=None,
          disallow_acc_multi_buffer=False, flatten=False, warp_specialize=False, disable_licm=False):
    """A runtime loop, ``for i in tl.range(lo, hi, step)``; the same as Python's ``range`` in a
    kernel. Bounds and the step may be runtime int scalars (a constexpr step must not be 0).
    The pipelining hints (``num_stages``, ``loop_unroll_factor``, ``disallow_acc_multi_buffer``,
    ``flatten``, ``warp_specialize``, ``disable_licm``) are accepted and have no effect."""


@builtin
def static_range(start, end=None, step=None):
    """A loop unrolled at compile time: ``for i in tl.static_range(4)``; bounds must be constexpr
    and ``i`` is a constexpr in the body."""


@builtin
def sum(x, axis=None, keep_dims=False, dtype=None):
    """Sum of ``x`` along ``axis`` (None: all axes).

    Floats keep their dtype (accumulated in float32, rounded once); integers narrower than 32 bits
    sum in int32. With ``dtype=``, ``x`` is cast to it first.
    """


@builtin
def max(x, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False,
        propagate_nan=None):
    """Maximum of ``x`` along ``axis`` (None: all axes); float16/bfloat16 give float32.
    ``return_indices=True`` gives ``(max, argmax)``. NaN always propagates (``propagate_nan`` is
    accepted, as Triton-for-Ascend's signature has it)."""


@builtin
def min(x, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False,
        propagate_nan=None):
    """Minimum of ``x`` along ``axis`` (None: all axes); float16/bfloat16 give float32.
    ``return_indices=True`` gives ``(min, argmin)``. NaN always propagates (``propagate_nan`` is
    accepted, as Triton-for-Ascend's signature has it)."""


@builtin
def argmax(x, axis=None, tie_break_left=True, keep_dims=False):
    """Index (int32) of the maximum along ``axis``; ties give the lowest index."""


@builtin
def argmin(x, axis=None, tie_break_left=True, keep_dims=False):
    """Index (int32) of the minimum along ``axis``; ties give the lowest index."""


@builtin
def maximum(x, y, propagate_nan=None):
    """Elementwise maximum, with broadcasting and promotion; NaN propagates (``propagate_nan``
    is accepted for Triton compatibility)."""


@builtin
def minimum(x, y, propagate_nan=None):
    """Elementwise minimum, with broadcasting and promotion; NaN propagates (``propagate_nan``
    is accepted for Triton compatibility)."""


@builtin
def where(condition, x, y):
    """Elementwise ``x`` where the bool ``condition`` holds, else ``y`` (broadcast, promoted)."""


@builtin
def cast(x, dtype, fp_downcast_rounding=None, bitcast=False):
    """``x`` converted to ``dtype``; the same as ``x.to(dtype)``. ``bitcast=True`` reinterprets
    the bits (the dtypes must have the same size); ``fp_downcast_rounding`` is accepted and
    ignored (casts round to nearest even)."""


@builtin
def static_print(*values):
    """Print constexprs and the types of tiles while compiling (not at run time)."""


@builtin
def static_assert(condition, message=""):
    """Fail compilation with ``message`` unless the constexpr ``condition`` holds."""


@builtin
def device_print(prefix, *values, hex=False):
    """Print ``prefix`` and runtime ``values`` from every program instance when the kernel runs."""


# ----------------------------------------------------------------------------- reductions and scans


@builtin
def reduce(input, axis, combine_fn, keep_dims=False):
    """Reduce ``input`` (a tile or a tuple of tiles of one shape) along ``axis`` (None: all axes)
    with ``combine_fn``, an ``@jit`` function of two values (or two tuples) returning one (or a
    tuple). It must be associative: elements are combined pairwise in log depth, neighbours first."""


@builtin
def associative_scan(input, axis, combine_fn, reverse=False):
    """Inclusive scan of ``input`` (a tile or tuple of tiles) along ``axis`` with the associative
    ``@jit`` function ``combine_fn(earlier, later)``; ``reverse=True`` scans from the end."""


@builtin
def cumsum(input, axis=0, reverse=False, dtype=None):
    """Inclusive prefix sum along ``axis`` (ints narrower than 32 bits sum in int32)."""


@builtin
def cumprod(input, axis=0, reverse=False):
    """Inclusive prefix product along ``axis``."""


@builtin
def xor_sum(input, axis=None, keep_dims=False):
    """Bitwise xor of the elements of an int tile along ``axis``."""


@builtin
def sort(x, dim=None, descending=False):
    """``x`` sorted along ``dim`` (default: the last axis)."""


@builtin
def topk(x, k, dim=None):
    """The ``k`` largest elements of ``x`` along ``dim`` (default and only: the last axis), largest
    first: ``tl.sort(x, descending=True)`` cut to its first ``k`` (the axis and ``k`` powers of two)."""


@builtin
def histogram(input, num_bins, mask=None):
    """The int32 tile of ``num_bins`` counts of the values ``0 .. num_bins - 1`` in the int tile
    ``input`` (where ``mask`` holds); other values are not counted."""


@builtin
def flip(x, dim=None):
    """``x`` reversed along ``dim`` (default: the last axis)."""


@builtin
def dot(input, other, acc=None, input_precision=None, allow_tf32=None, max_num_imprecise_acc=None,
        out_dtype=None):
    """Matrix product of 2-D (or batched 3-D) tiles, plus ``acc`` when given. Floats accumulate in
    float32 (the result is float32 unless ``out_dtype``), int8 in int32. ``input_precision``,
    ``allow_tf32`` and ``max_num_imprecise_acc`` are accepted (products are exact float32)."""


# ----------------------------------------------------------------------------- shapes


@builtin
def reshape(input, *shape, can_reorder=False):
    """``input`` with the same elements in row-major order and a new shape (a tuple or ints)."""


@builtin
def view(input, *shape):
    """The same as :func:`reshape`."""


@builtin
def permute(input, *dims):
    """``input`` with its axes reordered: axis ``i`` of the result is axis ``dims[i]``."""


@builtin
def trans(input, *dims):
    """:func:`permute`; without ``dims`` the axes are reversed (a 2-D transpose)."""


@builtin
def ravel(x, can_reorder=False):
    """``x`` as a 1-D tile (row-major)."""


@builtin
def expand_dims(input, axis):
    """``input`` with a unit axis inserted at ``axis`` (an int or a tuple of ints)."""


@builtin
def broadcast_to(input, *shape):
    """``input`` broadcast to ``shape``."""


@builtin
def broadcast(input, other):
    """``input`` and ``other`` broadcast to their common shape (a tuple of two tiles)."""


@builtin
def join(a, b):
    """The tiles ``a`` and ``b`` (broadcast to one shape) stacked along a new last axis of size 2."""


@builtin
def split(a):
    """The two halves of a tile whose last axis has size 2: ``(a[..., 0], a[..., 1])``."""


@builtin
def cat(input, other, can_reorder=False):
    """``input`` and ``other`` concatenated along axis 0."""


@builtin
def interleave(a, b):
    """``a`` and ``b`` interleaved along their last axis: ``[a0, b0, a1, b1, ...]``."""


@builtin
def zeros_like(input, dtype=None):
    """A tile of zeros with the shape (and, without ``dtype``, the dtype) of ``input``."""


@builtin
def ones_like(input, dtype=None):
    """A tile of ones with the shape (and, without ``dtype``, the dtype) of ``input``."""


@builtin
def full_like(input, value, dtype=None):
    """A tile filled with ``value`` with the shape (and, without ``dtype``, the dtype) of ``input``."""


# ----------------------------------------------------------------------------- hints and checks


@builtin
def multiple_of(input, values):
    """A compiler hint (each value is a multiple of ``values``); returns ``input`` unchanged."""


@builtin
def max_contiguous(input, values):
    """A compiler hint (runs of ``values`` contiguous elements); returns ``input`` unchanged."""


@builtin
def max_constancy(input, values):
    """A compiler hint (runs of ``values`` equal elements); returns ``input`` unchanged."""


@builtin
def assume(cond):
    """A compiler hint that ``cond`` holds; no effect."""


@builtin
def debug_barrier():
    """A barrier between program threads in Triton; a no-op here (a program is one instance)."""


@builtin
def device_assert(cond, msg="", mask=None):
    """When the kernel is compiled with ``debug=True`` (or ``TRITON_DEBUG=1``), fail the launch with
    :class:`ascdsl.DeviceAssertionError` where ``cond`` is False (and ``mask``, if given, is True);
    without debug it compiles to nothing, as in Triton."""


# ----------------------------------------------------------------------------- atomics


@builtin
def atomic_add(pointer, val, mask=None, sem=None, scope=None):
    """Atomically add ``val`` at ``pointer`` (broadcast together); returns the old values. Lanes
    that hit the same address apply in order (program order, then lane order); ``sem`` and
    ``scope`` are accepted (every access is sequentially consistent here)."""


@builtin
def atomic_max(pointer, val, mask=None, sem=None, scope=None):
    """Atomically ``maximum`` with ``val`` at ``pointer``; returns the old values (see :func:`atomic_add`)."""


@builtin
def atomic_min(pointer, val, mask=None, sem=None, scope=None):
    """Atomically ``minimum`` with ``val`` at ``pointer``; returns the old values (see :func:`atomic_add`)."""


@builtin
def atomic_and(pointer, val, mask=None, sem=None, scope=None):
    """Atomically ``&`` ``val`` into ``pointer``; returns the old values (see :func:`atomic_add`)."""


@builtin
def atomic_or(pointer, val, mask=None, sem=None, scope=None):
    """Atomically ``|`` ``val`` into ``pointer``; returns the old values (see :func:`atomic_add`)."""


@builtin
def atomic_xor(pointer, val, mask=None, sem=None, scope=None):
    """Atomically ``^`` ``val`` into ``pointer``; returns the old values (see :func:`atomic_add`)."""


@builtin
def atomic_xchg(pointer, val, mask=None, sem=None, scope=None):
    """Atomically write ``val`` at ``pointer``; returns the old values (see :func:`atomic_add`)."""


@builtin
def atomic_cas(pointer, cmp, val, sem=None, scope=None):
    """Atomically write ``val`` where ``pointer`` holds ``cmp``; returns the old values."""


# ----------------------------------------------------------------------------- tensor descriptors


@builtin
def make_tensor_descriptor(base, shape, strides, block_shape):
    """A tensor descriptor: the tensor ``base[shape]`` with ``strides`` (the last one 1), read and
    written in ``block_shape`` blocks with ``desc.load(offsets)`` / ``desc.store(offsets, value)``.
    Lanes past ``shape[d]`` read 0 and are not written (offsets must be non-negative)."""


@builtin
def load_tensor_descriptor(desc, offsets):
    """``desc.load(offsets)``: the block at ``offsets`` (out-of-range lanes read 0)."""


@builtin
def store_tensor_descriptor(desc, offsets, value):
    """``desc.store(offsets, value)``: write the block at ``offsets`` (out-of-range lanes skipped)."""



def cdiv(a, b):
    """``ceil(a / b)`` for ints: the number of blocks of size ``b`` that cover ``a`` elements.

    Works on host ints (grids) and in kernels: folded on constexprs, emitted on runtime ints.
    """
    if isinstance(b, int) and b == 0:
        raise InputValueError(f"cdiv({a}, 0): the block size must not be zero")
    return -(-a // b)


def next_power_of_2(n):
    """The smallest power of two ``>= n`` (for ``n >= 1``); host ints or kernel ints like :func:`cdiv`."""
    n -= 1
    for shift in (1, 2, 4, 8, 16, 32):
        n |= n >> shift
    return n + 1
