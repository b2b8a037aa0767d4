"""Block pointers (``tl.make_block_ptr``/``tl.advance``) and tensor descriptors
(``tl.make_tensor_descriptor``): frontend sugar, no IR of their own.

A :class:`BlockPointer` is a compile-time record of a base pointer, the tensor's shape and strides,
the block's offsets, block shape and order. ``tl.load``/``tl.store`` on one lower it to what the
rest of the compiler already understands: the pointer tile ``base + sum_d (offsets[d] + i_d) *
strides[d]`` and, for each dim of ``boundary_check``, the mask term ``0 <= offsets[d] + i_d < shape[d]``
joined with ``&`` (so the Ascend C backend copies it as one rectangular block), as upstream Triton.
The lower bound is left out where the offset is a constant known to be non-negative (the common
block walking a tensor from its start), so those masks stay the simple ``index < shape``.
A :class:`TensorDescriptor` is the same record without offsets: ``desc.load(offsets)`` is the load of
the block pointer at ``offsets`` with every dim checked and zero padding.

In loops and ifs a block pointer's runtime parts are its offsets; its base, shape, strides, block
shape and order must stay the same (see :func:`ascdsl.frontend.control`).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from .. import dtypes
from ..dtypes import PointerType
from ..ir import Op, Type, Value
from ..ir.symbol import Poly, Undecided
from ..semantics import SemanticError
from .emit import Emitter, describe

PADDING = {"": None, "zero": 0, "nan": math.nan}
_LOAD_HINT = "e.g. tl.load(block_ptr, boundary_check=(0, 1), padding_option=\"zero\")"


@dataclass(frozen=True, eq=False)
class BlockPointer:
    """A block of ``block_shape`` at ``offsets`` in the tensor ``base[shape]`` with ``strides``.

    ``shape``, ``strides`` and ``offsets`` hold int scalars (IR values) or constexpr ints.
    """

    base: Value
    shape: tuple
    strides: tuple
    offsets: tuple
    block_shape: tuple[int, ...]
    order: tuple[int, ...]

    def __repr__(self) -> str:
        block = "x".join(map(str, self.block_shape))
        return f"block pointer<{block}x{self.base.type.dtype.element_ty}>"

    def moved(self, offsets) -> "BlockPointer":
        return dataclasses.replace(self, offsets=tuple(offsets))

    def same_layout(self, other: "BlockPointer") -> bool:
        """Whether ``other`` differs from this one at most in its offsets."""
        def same(a, b):
            return len(a) == len(b) and all(x is y or (not isinstance(x, Value) and not isinstance(y, Value)
                                                        and x == y) for x, y in zip(a, b))
        return (self.base is other.base and same(self.shape, other.shape) and same(self.strides, other.strides)
                and self.block_shape == other.block_shape and self.order == other.order)


@dataclass(frozen=True, eq=False)
class TensorDescriptor:
    """``tl.make_tensor_descriptor(base, shape, strides, block_shape)``: blocks of ``block_shape``."""

    base: Value
    shape: tuple
    strides: tuple
    block_shape: tuple[int, ...]

    def __repr__(self) -> str:
        return f"tensor descriptor<{'x'.join(map(str, self.block_shape))}x{self.base.type.dtype.element_ty}>"

    @property
    def dtype(self):
        return self.base.type.dtype.element_ty

    def at(self, offsets) -> BlockPointer:
        rank = len(self.block_shape)
        return BlockPointer(self.base, self.shape, self.strides, _ints(offsets, "offsets", rank), self.block_shape,
                            tuple(reversed(range(rank))))


def make_tensor_descriptor(em: Emitter, base, shape, strides, block_shape) -> TensorDescriptor:
    rank = len(block_shape) if isinstance(block_shape, (tuple, list)) else 1
    bp = make_block_ptr(em, base, shape, strides, (0,) * rank, block_shape, tuple(reversed(range(rank))))
    return TensorDescriptor(bp.base, bp.shape, bp.strides, bp.block_shape)


def descriptor_load(em: Emitter, desc, offsets) -> tuple[Value, Value, Any]:
    """``(pointer tile, mask, 0)`` of ``desc.load(offsets)``."""
    bp = _descriptor(desc).at(offsets)
    return load_operands(em, bp, None, None, tuple(range(len(bp.block_shape))), "zero")


def descriptor_store(em: Emitter, desc, offsets, value) -> tuple[Value, Value]:
    """``(pointer tile, mask)`` of ``desc.store(offsets, value)``."""
    bp = _descriptor(desc).at(offsets)
    return store_operands(em, bp, value, None, tuple(range(len(bp.block_shape))))


def _descriptor(desc) -> TensorDescriptor:
    if not isinstance(desc, TensorDescriptor):
        raise SemanticError(f"expected a tensor descriptor, got {describe(desc)}",
                            "create one with tl.make_tensor_descriptor(base, shape, strides, block_shape)")
    return desc


def reject_operators(*operands) -> None:
    """Operators are not defined on block pointers (a located error, not a Python TypeError)."""
    if any(isinstance(x, (BlockPointer, TensorDescriptor)) for x in operands):
        raise SemanticError("operators are not defined on block pointers",
                            "move a block pointer with tl.advance(ptr, offsets), or build a pointer tile "
                            "as x_ptr + offsets for pointer arithmetic")


# ----------------------------------------------------------------------------- checks


def _no_symbol(values: tuple, what: str) -> tuple:
    """``values``; :class:`Undecided` where one is of a run-time tile extent (a block pointer's are ints)."""
    if any(isinstance(x, Poly) for x in values):
        raise Undecided(f"a run-time tile extent in the {what}: compile with values")
    return values


def _ints(values, what: str, rank: int | None = None) -> tuple:
    """``values`` as a tuple of int scalars / constexpr ints of length ``rank``."""
    values = _no_symbol(tuple(values) if isinstance(values, (tuple, list)) else (values,), f"{what} of a block pointer")
    for x in values:
        runtime = isinstance(x, Value) and x.type.is_scalar and x.type.dtype.is_int
        if not (runtime or (isinstance(x, int) and not isinstance(x, bool))):
            raise SemanticError(f"the {what} of a block pointer must be int scalars or constexpr ints, "
                                f"got {describe(x)}", "pass a tuple with one int per dim, e.g. (M, N)")
    if rank is not None and len(values) != rank:
        raise SemanticError(f"the {what} of a block pointer need one entry per dim of block_shape ({rank}), "
                            f"got {len(values)}", "give shape, strides, offsets and block_shape one entry per dim")
    return values


def _constexprs(values, what: str, hint: str) -> tuple[int, ...]:
    values = _no_symbol(tuple(values) if isinstance(values, (tuple, list)) else (values,), what)
    if not values or not all(isinstance(x, int) and not isinstance(x, bool) for x in values):
        raise SemanticError(f"the {what} must be a tuple of constexpr ints, got {describe(values)}", hint)
    return values


def _block_pointer(ptr, what: str) -> BlockPointer:
    if not isinstance(ptr, BlockPointer):
        raise SemanticError(f"{what} needs a block pointer, got {describe(ptr)}",
                            "create one with tl.make_block_ptr(base, shape, strides, offsets, block_shape, order)")
    return ptr


def _boundary_check(bp: BlockPointer, dims) -> tuple[int, ...]:
    if dims is None or dims == ():
        return ()
    rank = len(bp.block_shape)
    dims = _constexprs(dims, "boundary_check", "list the dims to check, e.g. boundary_check=(0, 1)")
    bad = [d for d in dims if not 0 <= d < rank]
    if bad:
        raise SemanticError(f"boundary_check dim {bad[0]} is out of range for a block pointer of rank {rank}",
                            f"use dims in [0, {rank - 1}]")
    return tuple(sorted(set(dims)))


# ----------------------------------------------------------------------------- builtins


def make_block_ptr(em: Emitter, base, shape, strides, offsets, block_shape, order) -> BlockPointer:
    if not (isinstance(base, Value) and base.type.is_scalar and isinstance(base.type.dtype, PointerType)):
        raise SemanticError(f"the base of a block pointer must be a pointer argument, got {describe(base)}",
                            "pass the array argument itself, e.g. tl.make_block_ptr(x_ptr, ...)")
    block_shape = _constexprs(block_shape, "block_shape of a block pointer",
                              "declare the block sizes as `NAME: tl.constexpr` parameters")
    if not all(b > 0 for b in block_shape):
        raise SemanticError(f"the block_shape of a block pointer must be positive, got {block_shape}")
    rank = len(block_shape)
    order = _constexprs(order, "order of a block pointer", f"a permutation of 0..{rank - 1}, e.g. (1, 0)")
    if sorted(order) != list(range(rank)):
        raise SemanticError(f"the order of a block pointer must be a permutation of 0..{rank - 1}, got {order}",
                            "order lists the dims from fastest- to slowest-varying, e.g. (1, 0) for row-major")
    return BlockPointer(base, _ints(shape, "shape", rank), _ints(strides, "strides", rank),
                        _ints(offsets, "offsets", rank), block_shape, order)


def advance(em: Emitter, base, offsets) -> BlockPointer:
    bp = _block_pointer(base, "tl.advance")
    deltas = _ints(offsets, "advance offsets", len(bp.block_shape))
    return bp.moved(a + b if not isinstance(a, Value) and not isinstance(b, Value) else em.binary(Op.ADD, a, b)
                    for a, b in zip(bp.offsets, deltas))


def _access(em: Emitter, bp: BlockPointer, boundary_check) -> tuple[Value, Value | None]:
    """The pointer tile of ``bp``'s block and the mask of its ``boundary_check`` dims (or None)."""
    rank, total, mask = len(bp.block_shape), None, None
    checked = _boundary_check(bp, boundary_check)
    for d, size in enumerate(bp.block_shape):
        index = em.op(Op.ARANGE, Type(dtypes.int32, (size,)), attrs=[("start", 0), ("end", size)])
        if not (isinstance(bp.offsets[d], int) and bp.offsets[d] == 0):
            index = em.binary(Op.ADD, bp.offsets[d], index)
        for axis in range(rank):  # index[:, None] for dim 0 of 2, index[None, :] for dim 1 ...
            if axis != d:
                index = em.expand_dims(index, axis)
        if d in checked:
            inside = em.binary(Op.LT, index, bp.shape[d])
            if not (isinstance(bp.offsets[d], int) and bp.offsets[d] >= 0):  # a lane may lie before the start
                inside = em.binary(Op.AND, em.binary(Op.GE, index, 0), inside)
            mask = inside if mask is None else em.binary(Op.AND, mask, inside)
        stride = bp.strides[d]
        term = index if isinstance(stride, int) and stride == 1 else em.binary(Op.MUL, index, stride)
        total = term if total is None else em.binary(Op.ADD, total, term)
    ptr = em.broadcast(em.ptr_add(bp.base, total), bp.block_shape)
    return ptr, None if mask is None else em.broadcast(mask, bp.block_shape)


def load_operands(em: Emitter, bp: BlockPointer, mask, other, boundary_check, padding_option):
    """``(pointer tile, mask, other)`` of ``tl.load(bp, boundary_check=..., padding_option=...)``."""
    if mask is not None or other is not None:
        raise SemanticError("tl.load of a block pointer takes no `mask` or `other`",
                            "bounds come from boundary_check and the fill from padding_option; " + _LOAD_HINT)
    if not isinstance(padding_option, str) or padding_option not in PADDING:
        raise SemanticError(f"unknown padding_option {padding_option!r}",
                            "padding_option is \"zero\", \"nan\" or \"\" (masked lanes undefined)")
    if padding_option == "nan" and not bp.base.type.dtype.element_ty.is_float:
        raise SemanticError(f"padding_option=\"nan\" needs a float block, not {bp.base.type.dtype.element_ty}",
                            "use padding_option=\"zero\"")
    ptr, mask = _access(em, bp, boundary_check)
    return ptr, mask, None if mask is None else PADDING[padding_option]


def store_operands(em: Emitter, bp: BlockPointer, value, mask, boundary_check) -> tuple[Value, Value | None]:
    """``(pointer tile, mask)`` of ``tl.store(bp, value, boundary_check=...)``."""
    if mask is not None:
        raise SemanticError("tl.store to a block pointer takes no `mask`",
                            "bounds come from boundary_check, e.g. tl.store(block_ptr, x, boundary_check=(0,))")
    if isinstance(value, Value) and not value.type.is_scalar and value.type.shape != bp.block_shape:
        raise SemanticError(f"the stored tile {describe(value)} does not have the block shape "
                            f"{bp.block_shape} of the block pointer",
                            "store a tile of exactly block_shape (scalars are broadcast)")
    return _access(em, bp, boundary_check)


def check_plain_pointer(boundary_check, padding_option: Any = "") -> None:
    """``boundary_check``/``padding_option`` are for block pointers only."""
    if boundary_check not in (None, ()) or padding_option not in (None, ""):
        raise SemanticError("boundary_check and padding_option work only with block pointers",
                            "mask plain pointers with mask=... and other=..., or create a block pointer "
                            "with tl.make_block_ptr")


def runtime_parts(value) -> tuple:
    """What control flow carries for ``value``: a block pointer's offsets, anything else itself."""
    return value.offsets if isinstance(value, BlockPointer) else (value,)


def with_parts(template, parts) -> Any:
    """``template`` rebuilt from the carried ``parts`` (the inverse of :func:`runtime_parts`)."""
    return template.moved(parts) if isinstance(template, BlockPointer) else parts[0]


_PY_OPS = {Op.ADD: lambda a, b: a + b, Op.SUB: lambda a, b: a - b, Op.MUL: lambda a, b: a * b,
           Op.IDIV: lambda a, b: a // b, Op.MAXIMUM: lambda a, b: a if a > b else b}


def fold(em: Emitter, op: Op, a, b):
    """``a op b`` on int scalars: folded in Python when both are constexprs, emitted otherwise."""
    if not isinstance(a, Value) and not isinstance(b, Value):
        return _PY_OPS[op](a, b)
    return em.binary(op, a, b)


def stepped(em: Emitter, bp: BlockPointer, span, step: int, deltas: tuple[int, ...]) -> BlockPointer:
    """``bp`` advanced by the constexpr ``deltas`` once per ``step`` of ``span`` (a multiple of
    ``step``): a loop's block pointer at induction variable ``start + span``, without carrying it."""
    def offset(o, d):
        if d == 0:
            return o
        moved = fold(em, Op.MUL, span, d // step) if d % step == 0 else \
            fold(em, Op.MUL, fold(em, Op.IDIV, span, step), d)
        return fold(em, Op.ADD, o, moved)
    return bp.moved(offset(o, d) for o, d in zip(bp.offsets, deltas))
