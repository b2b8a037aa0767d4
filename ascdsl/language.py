"""The ascdsl language: what ``import ascdsl.language as tl`` gives a kernel author.

The builtins here are *markers*: the frontend recognises them by identity inside an
``@ascdsl.jit`` function and emits IR for them; called anywhere else they raise
:class:`ascdsl.Error` (except :func:`cdiv` and :func:`next_power_of_2`, which also work on host
ints). Their signatures and docstrings are the contract (the frontend binds calls
against them). Tiles are immutable values with a static shape and a dtype; a shape of ``()`` is a
scalar. Elementwise operations broadcast as in NumPy and promote dtypes as in Triton (see
:mod:`ascdsl.semantics`).
"""
from __future__ import annotations

import functools

from .dtypes import PointerType as pointer_type
from .dtypes import bfloat16, float16, float32, int8, int16, int32, int64, uint8
from .dtypes import bool_ as int1
from .errors import Error, InputValueError

__all__ = [
    "constexpr", "pointer_type", "float32", "float16", "bfloat16", "int8", "int16", "int32", "int64",
    "uint8", "int1", "program_id", "num_programs", "arange", "zeros", "full", "load", "store",
    "make_block_ptr", "advance",
    "range", "static_range", "sum", "max", "min", "argmax", "argmin", "exp", "exp2", "log", "sqrt", "rsqrt",
    "abs", "sigmoid", "maximum", "minimum", "where", "cast", "static_print", "static_assert",
    "device_print", "cdiv", "next_power_of_2",
]


class constexpr:
    """Annotate a kernel parameter as a compile-time constant: ``BLOCK: tl.constexpr``.

    Each distinct value compiles a separate specialisation. ``tl.constexpr(128)`` also wraps a
    module-level constant so kernels can read it.
    """

    def __init__(self, value=None):
        self.value = value

    def __repr__(self) -> str:
        return f"constexpr({self.value!r})"


def builtin(fn):
    """Mark ``fn`` as a DSL builtin: its body never runs; outside a kernel calling it is an error."""

    @functools.wraps(fn)
    def marker(*args, **kwargs):
        raise Error(f"tl.{fn.__name__}() can only be called inside an @ascdsl.jit function")

    return marker


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
def load(ptr, mask=None, other=None, boundary_check=(), padding_option=""):
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

    Returns:
        A tile of ``ptr.dtype.element_ty``.
    """


@builtin
def store(ptr, value, mask=None, boundary_check=()):
    """Store ``value`` (cast to the element type, broadcast to the pointers' shape) to ``ptr``.

    Args:
        ptr: a pointer, a tile of pointers, or a block pointer (then a tile ``value`` must have
            exactly its ``block_shape``).
        value: a tile or scalar.
        mask: optional bool tile; lanes where it is False are not written.
        boundary_check: block pointers only: the dims whose lanes past ``shape[d]`` are not written.
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
def range(start, end=None, step=None):
    """A runtime loop, ``for i in tl.range(lo, hi, step)``; the same as Python's ``range`` in a
    kernel. Bounds may be runtime int scalars; ``step`` must be positive."""


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
def max(x, axis=None, keep_dims=False):
    """Maximum of ``x`` along ``axis`` (None: all axes); float16/bfloat16 give float32."""


@builtin
def min(x, axis=None, keep_dims=False):
    """Minimum of ``x`` along ``axis`` (None: all axes); float16/bfloat16 give float32."""


@builtin
def argmax(x, axis=None, keep_dims=False):
    """Index (int32) of the maximum along ``axis``; ties give the lowest index."""


@builtin
def argmin(x, axis=None, keep_dims=False):
    """Index (int32) of the minimum along ``axis``; ties give the lowest index."""


@builtin
def exp(x):
    """Elementwise e**x of a float tile."""


@builtin
def exp2(x):
    """Elementwise 2**x of a float tile."""


@builtin
def log(x):
    """Elementwise natural logarithm of a float tile."""


@builtin
def sqrt(x):
    """Elementwise square root of a float tile."""


@builtin
def rsqrt(x):
    """Elementwise 1 / sqrt(x) of a float tile."""


@builtin
def abs(x):
    """Elementwise absolute value."""


@builtin
def sigmoid(x):
    """Elementwise 1 / (1 + exp(-x)) of a float tile."""


@builtin
def maximum(x, y):
    """Elementwise maximum, with broadcasting and promotion."""


@builtin
def minimum(x, y):
    """Elementwise minimum, with broadcasting and promotion."""


@builtin
def where(condition, x, y):
    """Elementwise ``x`` where the bool ``condition`` holds, else ``y`` (broadcast, promoted)."""


@builtin
def cast(x, dtype):
    """``x`` converted to ``dtype``; the same as ``x.to(dtype)``."""


@builtin
def static_print(*values):
    """Print constexprs and the types of tiles while compiling (not at run time)."""


@builtin
def static_assert(condition, message=""):
    """Fail compilation with ``message`` unless the constexpr ``condition`` holds."""


@builtin
def device_print(prefix, *values):
    """Print ``prefix`` and runtime ``values`` from every program instance when the kernel runs."""


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
