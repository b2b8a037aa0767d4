"""The types of the language (``tl``): element dtypes, pointer and block types, ``constexpr``, the
``tensor`` annotation and ``PropagateNan``.
"""
from __future__ import annotations

import enum
import functools
import operator

from ..dtypes import PointerType as pointer_type
from ..dtypes import bfloat16, float16, float32, int8, int16, int32, int64, uint8
from ..dtypes import bool_ as int1

__all__ = ['pointer_type', 'block_type', 'float32', 'float16', 'bfloat16', 'int8', 'int16', 'int32', 'int64', 'uint8',
           'int1', 'constexpr', 'PropagateNan', 'tensor']


class block_type:
    """``x.type`` of a tile (Triton's ``tl.block_type``): its ``element_ty`` and ``shape``; ``x.type`` of a
    scalar is its dtype."""

    def __init__(self, element_ty, shape):
        self.element_ty, self.shape = element_ty, tuple(shape)

    @property
    def scalar(self):
        return self.element_ty

    @property
    def numel(self) -> int:
        return functools.reduce(operator.mul, self.shape, 1)

    def is_block(self) -> bool:
        return True

    @property
    def short(self) -> str:  # the name of a pointer to a block, ptr<4x8xf32>
        return "x".join(map(str, self.shape)) + "x" + self.element_ty.short

    def __eq__(self, other) -> bool:
        return isinstance(other, block_type) and (self.element_ty, self.shape) == (other.element_ty, other.shape)

    def __hash__(self) -> int:
        return hash((self.element_ty, self.shape))

    def __repr__(self) -> str:
        return f"<{list(self.shape)}, {self.element_ty}>"


class constexpr:
    """Annotate a kernel parameter as a compile-time constant: ``BLOCK: tl.constexpr``.

    Each distinct value compiles a separate specialisation. ``tl.constexpr(128)`` also wraps a
    module-level constant so kernels can read it; outside kernels wrapped values compute like the
    values themselves (``tl.constexpr(4) * tl.constexpr(8)`` is ``tl.constexpr(32)``).
    """

    def __init__(self, value=None):
        self.value = value.value if isinstance(value, constexpr) else value

    def __repr__(self) -> str:
        return f"constexpr({self.value!r})"

    def __hash__(self) -> int:
        return hash(self.value)

    def __bool__(self) -> bool:
        return bool(self.value)

    def __index__(self) -> int:
        return operator.index(self.value)

    def __int__(self) -> int:
        return int(self.value)

    def __float__(self) -> float:
        return float(self.value)

    def __call__(self, *args, **kwargs):
        return self.value(*args, **kwargs)


def _unwrap(x):
    return x.value if isinstance(x, constexpr) else x


def _constexpr_operator(fn, reflected=False):
    def method(self, *others):
        args = (_unwrap(self), *map(_unwrap, others))
        return constexpr(fn(*(args[::-1] if reflected else args)))
    return method


for _name, _fn in [("add", operator.add), ("sub", operator.sub), ("mul", operator.mul),
                   ("truediv", operator.truediv), ("floordiv", operator.floordiv), ("mod", operator.mod),
                   ("pow", operator.pow), ("lshift", operator.lshift), ("rshift", operator.rshift),
                   ("and", operator.and_), ("or", operator.or_), ("xor", operator.xor)]:
    setattr(constexpr, f"__{_name}__", _constexpr_operator(_fn))
    setattr(constexpr, f"__r{_name}__", _constexpr_operator(_fn, reflected=True))
for _name, _fn in [("eq", operator.eq), ("ne", operator.ne), ("lt", operator.lt), ("le", operator.le),
                   ("gt", operator.gt), ("ge", operator.ge), ("neg", operator.neg), ("pos", operator.pos),
                   ("invert", operator.invert), ("abs", operator.abs)]:
    setattr(constexpr, f"__{_name}__", _constexpr_operator(_fn))


class PropagateNan(enum.Enum):
    """``propagate_nan`` of :func:`maximum`, :func:`minimum` and :func:`clamp` (ascdsl always propagates)."""

    NONE = 0
    ALL = 0xFFFF


class tensor:
    """The type of tiles in annotations (``x: tl.tensor``); tiles are created by builtins only."""
