"""What calls to ``tl`` builtins (and the few allowed Python functions) emit.

``BUILTINS`` maps each marker of :mod:`ascdsl.language` to a handler taking the emitter and the
call's arguments, bound against the marker's signature (so arity and keyword errors read alike
for every builtin). ``kernel_object`` decides which Python objects a kernel may refer to.
"""
from __future__ import annotations

import builtins as py
import inspect
import math
import types
from typing import Any, Callable

import numpy as np

from .. import dtypes, language as tl, numerics, semantics
from ..dtypes import DType, PointerType
from ..errors import Error
from ..ir import GroupOp, Op, Type, Value
from ..ir.symbol import Poly, Undecided
from ..language.extra.cann import extension
from ..language.helper import Helper
from ..semantics import Literal, SemanticError, broadcast_shapes, literal_dtype
from . import blockptr, combine, random, shapes
from .emit import Emitter, describe, is_constexpr
from .source import ParsedFunction

# ----------------------------------------------------------------------------- argument checks


def _constexpr(x, what: str, kinds=(int,)):
    if isinstance(x, Value) or not isinstance(x, kinds) or (bool not in kinds and isinstance(x, bool)):
        kind = " or ".join(k.__name__ for k in kinds if k is not Poly)  # a Poly: an int of symbols
        raise SemanticError(f"{what} must be a constexpr {kind}, got {describe(x)}",
                            "use a literal, or a parameter declared as `NAME: tl.constexpr`")
    return x


def _axis(axis) -> int:
    axis = _constexpr(axis, "the grid axis")
    if axis not in (0, 1, 2):
        raise SemanticError(f"the grid axis must be 0, 1 or 2, got {axis}", "grids have at most three axes")
    return axis


def _shape(shape) -> tuple[int, ...]:
    shape = (shape,) if isinstance(shape, (int, Poly)) else shape
    if not isinstance(shape, tuple) or not all(isinstance(s, (int, Poly)) and s > 0 for s in shape):
        raise SemanticError(f"a tile shape must be a constexpr tuple of positive ints, got {describe(shape)}",
                            "e.g. tl.zeros((BLOCK,), tl.float32) with BLOCK a tl.constexpr")
    return shape


def _dtype(dtype) -> DType:
    if not isinstance(dtype, DType):
        raise SemanticError(f"expected a dtype such as tl.float32, got {describe(dtype)}",
                            "dtypes are tl.float32, tl.float16, tl.bfloat16, tl.int32, ... or x.dtype")
    return dtype


def _pointer(ptr, what: str) -> Value:
    if not (isinstance(ptr, Value) and isinstance(ptr.type.dtype, PointerType)):
        raise SemanticError(f"{what} needs a pointer, got {describe(ptr)}",
                            "pass an array argument, offset by a tile of ints: x_ptr + offsets")
    return ptr


def _mask(em: Emitter, ptr: Value, mask) -> tuple[Value, Value | None]:
    """``ptr`` and ``mask`` broadcast to their common shape."""
    if mask is None:
        return ptr, None
    if not isinstance(mask, Value) or mask.type.dtype != dtypes.bool_:
        raise SemanticError(f"a mask must be a bool tile, got {describe(mask)}",
                            "compare to build one, e.g. mask=offsets < n")
    shape = broadcast_shapes(ptr.type.shape, mask.type.shape)
    return em.broadcast(ptr, shape), em.broadcast(mask, shape)


# ----------------------------------------------------------------------------- handlers


def _program_id(em: Emitter, axis):
    return em.op(Op.PROGRAM_ID, Type(dtypes.int32), attrs=[("axis", _axis(axis))])


def _num_programs(em: Emitter, axis):
    return em.op(Op.NUM_PROGRAMS, Type(dtypes.int32), attrs=[("axis", _axis(axis))])


def _arange(em: Emitter, start, end):
    start, end = _constexpr(start, "the start of tl.arange", (int, Poly)), _constexpr(end, "the end of tl.arange", (int, Poly))
    if end <= start:
        raise SemanticError(f"tl.arange(start, end) needs end > start, got ({start}, {end})",
                            "the extent end - start is the tile length; it must be positive")
    return em.op(Op.ARANGE, Type(dtypes.int32, (end - start,)), attrs=[("start", start), ("end", end)])


def _zeros(em: Emitter, shape, dtype):
    return em.const(0, _dtype(dtype), _shape(shape))


def _full(em: Emitter, shape, value, dtype):
    shape, dtype = _shape(shape), _dtype(dtype)
    if isinstance(value, Literal):
        return em.const(value, dtype, shape)
    if not isinstance(value, Value) or not value.type.is_scalar:
        raise SemanticError(f"the value of tl.full must be a number or a scalar, got {describe(value)}",
                            "for a tile, use it directly or tl.where")
    return em.broadcast(em.cast(value, dtype), shape)


def _load(em: Emitter, ptr, mask, other, boundary_check, padding_option, cache_modifier="", eviction_policy="",
          volatile=False, care_padding=True):
    if isinstance(ptr, blockptr.BlockPointer):
        ptr, mask, other = blockptr.load_operands(em, ptr, mask, other, boundary_check, padding_option)
    else:
        blockptr.check_plain_pointer(boundary_check, padding_option)
    ptr, mask = _mask(em, _pointer(ptr, "tl.load"), mask)
    operands = [ptr] + ([mask] if mask is not None else [])
    if other is None and mask is not None and not em.debug and isinstance(ptr.type.dtype.element_ty, DType):  # masked lanes are 0 (numerics: masked lanes)
        other = False if ptr.type.dtype.element_ty == dtypes.bool_ else 0
    if other is not None:
        if mask is None:
            raise SemanticError("tl.load got `other` without `mask`", "other fills masked lanes: add mask=...")
        element = ptr.type.dtype.element_ty
        if isinstance(other, float) and element.is_int:  # other=float("-inf") fills an int load with its
            other = int(numerics.cast(np.array(other), element.np))  # minimum, as Triton's cast does
        other = em.value(other, element)
        _fits(other, ptr.type.shape, "`other`")
        operands.append(other if other.type.is_scalar else em.broadcast(other, ptr.type.shape))
    return em.op(Op.LOAD, Type(ptr.type.dtype.element_ty, ptr.type.shape), operands,
                 [("has_mask", mask is not None), ("has_other", other is not None)])


def _store(em: Emitter, ptr, value, mask, boundary_check, cache_modifier="", eviction_policy=""):
    if isinstance(ptr, blockptr.BlockPointer):
        ptr, mask = blockptr.store_operands(em, ptr, value, mask, boundary_check)
    else:
        blockptr.check_plain_pointer(boundary_check)
    ptr, mask = _mask(em, _pointer(ptr, "tl.store"), mask)
    if isinstance(value, Value) and isinstance(value.type.dtype, PointerType):
        raise SemanticError(f"cannot store pointers ({describe(value)})", "load through them first")
    value = em.value(value, ptr.type.dtype.element_ty) if isinstance(value, (Value, *Literal)) else value
    _fits(value, ptr.type.shape, "the stored value")
    operands = [ptr, em.broadcast(value, ptr.type.shape)] + ([mask] if mask is not None else [])
    em.b.emit(Op.STORE, (), operands, [("has_mask", mask is not None)], loc=em.loc)


def _load_descriptor(em: Emitter, desc, offsets):
    ptr, mask, other = blockptr.descriptor_load(em, desc, offsets)
    return _load(em, ptr, mask, other, (), "")


def _store_descriptor(em: Emitter, desc, offsets, value):
    ptr, mask = blockptr.descriptor_store(em, desc, offsets, value)
    return _store(em, ptr, value, mask, ())


def _atomic(op: Op):
    def handler(em: Emitter, pointer, val, mask=None, sem=None, scope=None, cmp=None):
        ptr = _pointer(pointer, f"tl.{op.value}")
        elem = ptr.type.dtype.element_ty
        values = [em.value(v, elem) if isinstance(v, (Value, *Literal)) else v for v in (cmp, val) if v is not None]
        for v in values:
            if not isinstance(v, Value):
                raise SemanticError(f"tl.{op.value} needs tiles or numbers, got {describe(v)}")
        shapes = [ptr.type.shape, *(v.type.shape for v in values)]
        if mask is not None:
            ptr, mask = _mask(em, ptr, mask)
            shapes.append(mask.type.shape)
        shape = broadcast_shapes(*shapes)
        operands = [em.broadcast(x, shape) for x in (ptr, *values)]
        operands += [em.broadcast(mask, shape)] if mask is not None else []
        attrs = [] if op is Op.ATOMIC_CAS else [("has_mask", mask is not None)]
        return em.op(op, Type(elem, shape), operands, attrs)
    return handler


def _atomic_cas(em: Emitter, pointer, cmp, val, sem=None, scope=None):
    return _atomic(Op.ATOMIC_CAS)(em, pointer, val, cmp=cmp)


def _fits(value, shape, what: str) -> None:
    if not isinstance(value, Value):
        raise SemanticError(f"{what} must be a tile or a number, got {describe(value)}", "store tiles or numbers")
    if broadcast_shapes(shape, value.type.shape) != shape:
        raise SemanticError(f"{what} ({describe(value)}) does not fit pointers of shape {shape}",
                            "the pointer tile decides the shape: index with offsets of the same shape")


def _reduction(op: Op, index_op: Op | None = None):
    def handler(em: Emitter, x, axis, keep_dims, dtype=None, return_indices=False,
                return_indices_tie_break_left=True, tie_break_left=True, propagate_nan=None):
        if propagate_nan is not None and not isinstance(propagate_nan, (bool, tl.PropagateNan)):
            raise SemanticError(f"propagate_nan must be a constexpr bool or tl.PropagateNan, got {describe(propagate_nan)}",
                                "NaN always propagates through tl.max/tl.min here")
        axis = None if axis is None else _constexpr(axis, f"the axis of tl.{op.value}")
        keep_dims = _constexpr(keep_dims, "keep_dims", (bool,))
        result = em.reduce(op, x, axis, keep_dims, None if dtype is None else _dtype(dtype))
        if _constexpr(return_indices, "return_indices", (bool,)):
            return result, em.reduce(index_op, x, axis, keep_dims)
        return result
    return handler


def _unary(op: Op):
    return lambda em, x: em.unary(op, x)


def _rounding(op: Op):
    """``floor``/``ceil``/``trunc``/``round``/``rint``: the identity on ints, as in Triton."""
    return lambda em, x: x if isinstance(x, Value) and x.type.dtype.is_int else em.unary(op, x)


def _binary(op: Op):
    return lambda em, x, y, **options: em.binary(op, x, y)


def _fdiv(em: Emitter, x, y, ieee_rounding=False):
    return em.binary(Op.DIV, x, y)


def _fmod(em: Emitter, x, y):
    """C's fmod (the remainder truncated toward zero), for floats too: ``%`` of ints is the same rule."""
    dtype = semantics.promote(_elem(x), _elem(y))
    return em.elementwise(Op.MOD, [(x, dtype), (y, dtype)], dtype)


def _fma(em: Emitter, x, y, z):
    dtype = semantics.promote(semantics.promote(_elem(x), _elem(y)), _elem(z))
    dtype = dtype if dtype.is_float or dtype.is_int else dtypes.float32
    return em.elementwise(Op.FMA, [(x, dtype), (y, dtype), (z, dtype)], dtype)


def _elem(x) -> DType:
    return x.type.dtype if isinstance(x, Value) else literal_dtype(x)


def _clamp(em: Emitter, x, min, max, propagate_nan=None):
    return em.binary(Op.MINIMUM, em.binary(Op.MAXIMUM, x, min), max)


def _logical(op: Op):
    return lambda em, x, y: em.binary(op, em.to_bool(em.value(x, _elem(x))), em.to_bool(em.value(y, _elem(y))))


def _reciprocal(em: Emitter, x):
    return em.binary(Op.DIV, 1.0, x)


def _relu(em: Emitter, x):
    return em.binary(Op.MAXIMUM, x, 0)


def _softmax(em: Emitter, x, dim=None, keep_dims=False, ieee_rounding=False):
    axis = -1 if dim is None else _constexpr(dim, "the dim of tl.softmax")
    shifted = em.binary(Op.SUB, x, em.reduce(Op.MAX, x, axis, True))
    e = em.unary(Op.EXP, shifted if shifted.type.dtype.is_float else em.cast(shifted, dtypes.float32))
    return em.binary(Op.DIV, e, em.reduce(Op.SUM, e, axis, True))


def _where(em: Emitter, condition, x, y):
    if is_constexpr(condition):
        return x if condition else y
    return em.where(condition, x, y)


def _cast(em: Emitter, x, dtype, fp_downcast_rounding=None, bitcast=False):
    if isinstance(dtype, PointerType):  # ptr.to(tl.pointer_type(...)): the same pointer, or a located error
        if isinstance(x, Value) and x.type.dtype == dtype:
            return x
        raise SemanticError(f"cannot cast {describe(x)} to {dtype}: a pointer keeps the element type of its "
                            "argument", "pass an array of the element type the kernel reads, e.g. x.view(np.int32)")
    if isinstance(dtype, tl.block_type):  # x.to(block_ptr.type.element_ty): casts to its scalar, as Triton
        dtype = dtype.scalar
    dtype = _dtype(dtype)
    x = x if isinstance(x, Value) else em.const(x, literal_dtype(x) if bitcast else dtype)
    if not _constexpr(bitcast, "bitcast", (bool,)) or x.type.dtype == dtype:
        return em.cast(x, dtype)
    if isinstance(x.type.dtype, PointerType) or x.type.dtype.itemsize != dtype.itemsize or dtypes.bool_ in (
            x.type.dtype, dtype):
        raise SemanticError(f"cannot bitcast {describe(x)} to {dtype}: the sizes differ",
                            "bitcast between dtypes of the same size, e.g. float32 <-> int32")
    return em.op(Op.BITCAST, x.type.with_dtype(dtype), [x], [("dtype", dtype)])


def _static_print(em: Emitter, values):
    print(*(describe(v) if isinstance(v, Value) else v for v in values))


def _static_assert(em: Emitter, condition, message):
    if not is_constexpr(condition):
        raise SemanticError("tl.static_assert needs a constexpr condition", "use it on constexprs and shapes")
    if not condition:
        raise SemanticError(f"static_assert failed: {message}" if message else "static_assert failed",
                            "check the constexpr arguments of this specialisation")


def _device_print(em: Emitter, prefix, values, hex=False):
    prefix = _constexpr(prefix, "the prefix of tl.device_print", (str,))
    for v in values:
        if not isinstance(v, (Value, *Literal)):
            raise SemanticError(f"tl.device_print prints tiles, scalars and numbers, got {describe(v)}",
                                "use tl.static_print for compile-time values")
    values = [em.value(v, v.type.dtype if isinstance(v, Value) else literal_dtype(v)) for v in values]
    em.b.emit(Op.PRINT, (), values, [("prefix", prefix)], loc=em.loc)


def _device_assert(em: Emitter, cond, msg="", mask=None):
    msg = _constexpr(msg, "the message of tl.device_assert", (str,))
    if is_constexpr(cond):
        if not cond:
            raise SemanticError(f"device_assert failed: {msg}" if msg else "device_assert failed",
                                "the condition is a constexpr that is False")
        return
    if not em.debug:
        return
    if cond.type.dtype != dtypes.bool_:
        cond = em.binary(Op.NE, cond, 0)
    if mask is not None:
        cond = em.binary(Op.OR, cond, em.unary(Op.NOT, mask))
    em.b.emit(Op.ASSERT, (), [cond], [("message", msg)], loc=em.loc)


def _sync_block_all(em: Emitter, mode, event_id):
    mode = _constexpr(mode, "the mode of sync_block_all", (str,))
    if mode not in extension.MODES:
        raise SemanticError(f"sync_block_all mode {mode!r} is not supported",
                            "the supported modes are 'all_vector' and 'all' (the same in a vector kernel)")
    event_id = _constexpr(event_id, "the event_id of sync_block_all")
    if event_id not in extension.EVENT_IDS:
        raise SemanticError(f"the event_id of sync_block_all must be in 0..15, got {event_id}",
                            "pass a constexpr int from 0 to 15")
    em.b.emit(Op.SYNC_ALL, (), [], [("mode", mode)], loc=em.loc)


def _hint(em: Emitter, input, values):
    return input


def _like(fill):
    def handler(em: Emitter, input, value=fill, dtype=None):
        if not isinstance(input, Value):
            raise SemanticError(f"expected a tile, got {describe(input)}", "pass a tile")
        dtype = input.type.dtype if dtype is None else _dtype(dtype)
        return _full(em, input.type.shape, value, dtype) if input.type.shape else em.value(value, dtype)
    return handler


def _cdiv(em: Emitter, a, b):
    if is_constexpr(a) and is_constexpr(b):
        return fold(tl.cdiv, a, b)
    if semantics.promote(_elem(a), _elem(b)).is_float:  # of floats: the ceiling of the quotient
        return em.unary(Op.CEIL, em.binary(Op.DIV, a, b))
    return em.binary(Op.IDIV, em.binary(Op.SUB, em.binary(Op.ADD, a, b), 1), b)


def _next_power_of_2(em: Emitter, n):
    if is_constexpr(n):
        return tl.next_power_of_2(n)
    n = em.binary(Op.SUB, n, 1)
    shifts = (1, 2, 4, 8, 16, 32) if n.type.dtype.bits == 64 else (1, 2, 4, 8, 16)
    for shift in shifts:  # n |= n >> shift, with >> as // 2**shift (n >= 0)
        n = em.binary(Op.OR, n, em.binary(Op.IDIV, n, 2 ** shift))
    return em.binary(Op.ADD, n, 1)


BUILTINS: dict[Callable, Callable] = {
    tl.program_id: _program_id, tl.num_programs: _num_programs, tl.arange: _arange,
    tl.zeros: _zeros, tl.full: _full, tl.load: _load, tl.store: _store,
    tl.make_block_ptr: blockptr.make_block_ptr, tl.advance: blockptr.advance,
    tl.sum: _reduction(Op.SUM), tl.max: _reduction(Op.MAX, Op.ARGMAX), tl.min: _reduction(Op.MIN, Op.ARGMIN),
    tl.argmax: _reduction(Op.ARGMAX), tl.argmin: _reduction(Op.ARGMIN),
    tl.exp: _unary(Op.EXP), tl.exp2: _unary(Op.EXP2), tl.log: _unary(Op.LOG), tl.sqrt: _unary(Op.SQRT),
    tl.rsqrt: _unary(Op.RSQRT), tl.abs: _unary(Op.ABS), tl.sigmoid: _unary(Op.SIGMOID),
    tl.maximum: _binary(Op.MAXIMUM), tl.minimum: _binary(Op.MINIMUM), tl.where: _where,
    tl.cast: _cast, tl.static_print: _static_print, tl.static_assert: _static_assert,
    tl.device_print: _device_print, tl.cdiv: _cdiv, tl.next_power_of_2: _next_power_of_2,
    tl.device_assert: _device_assert, tl.multiple_of: _hint, tl.max_contiguous: _hint, tl.max_constancy: _hint,
    tl.assume: lambda em, cond: None, tl.debug_barrier: lambda em: None,
    tl.zeros_like: _like(0), tl.ones_like: _like(1), tl.full_like: _like(None),
    tl.fdiv: _fdiv, tl.div_rn: _fdiv, tl.sqrt_rn: _unary(Op.SQRT), tl.fma: _fma, tl.clamp: _clamp,
    tl.logical_and: _logical(Op.AND), tl.logical_or: _logical(Op.OR), tl.reciprocal: _reciprocal, tl.relu: _relu,
    tl.softmax: _softmax, tl.fmod: _fmod, extension.sync_block_all: _sync_block_all,
    **{getattr(tl, op.value): _unary(op) for op in GroupOp.FLOAT_MATH | GroupOp.PREDICATE | GroupOp.TRANSCENDENTAL
       if op not in GroupOp.BINARY_MATH},
    **{getattr(tl, op.value): _rounding(op) for op in GroupOp.ROUNDING},
    **{getattr(tl, op.value): _binary(op) for op in GroupOp.BINARY_MATH | {Op.UMULHI}},
    **{getattr(tl, op.value): _atomic(op) for op in GroupOp.ATOMIC - {Op.ATOMIC_CAS}},
    tl.atomic_cas: _atomic_cas, tl.make_tensor_descriptor: blockptr.make_tensor_descriptor,
    tl.load_tensor_descriptor: _load_descriptor, tl.store_tensor_descriptor: _store_descriptor,
    **shapes.BUILTINS, **combine.BUILTINS, **random.BUILTINS,
}

# Tile methods: ``x.to(tl.float16)``, ``x.sum(axis=0)``... call the builtin with ``x`` first.
METHODS = {"to": tl.cast, **{f.__name__: f for f in (
    tl.sum, tl.max, tl.min, tl.argmax, tl.argmin, tl.exp, tl.log, tl.sqrt, tl.rsqrt, tl.abs, tl.sigmoid,
    tl.reshape, tl.view, tl.permute, tl.trans, tl.ravel, tl.expand_dims, tl.broadcast_to, tl.split, tl.reduce,
    tl.associative_scan, tl.cumsum, tl.cumprod, tl.xor_sum, tl.sort, tl.flip, tl.cast, tl.exp2, tl.log2,
    tl.floor, tl.ceil, tl.sin, tl.cos, tl.erf, tl.logical_and, tl.logical_or)}}


def call_builtin(em: Emitter, fn: Callable, args, kwargs) -> Any:
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as e:
        raise SemanticError(f"wrong arguments for tl.{fn.__name__}(): {e}",
                            f"the signature is tl.{fn.__name__}{inspect.signature(fn)}") from None
    bound.apply_defaults()
    return BUILTINS[fn](em, **bound.arguments)


# ----------------------------------------------------------------------------- Python objects

_PY_HINTS = {py.min: "use tl.minimum(a, b)", py.max: "use tl.maximum(a, b)", py.abs: "use tl.abs(x)",
             py.len: "use x.shape[0] for a tile", py.int: "use x.to(tl.int32)",
             py.float: "use x.to(tl.float32)", py.bool: "compare instead, e.g. x != 0"}
PY_BUILTINS = {f.__name__: f for f in (*_PY_HINTS, py.range)}


_RUNTIME = {py.min: Op.MINIMUM, py.max: Op.MAXIMUM}
"""Python's ``min``/``max`` on run-time values are ``tl.minimum``/``tl.maximum``, as in Triton."""


def _py_min_max(em: Emitter, fn: Callable, args, kwargs) -> Any:
    """``min(a, b, ...)`` / ``max(a, b, ...)`` (or of one tuple) with a run-time value among them: the
    constexprs fold first, then the values combine left to right with ``tl.minimum``/``tl.maximum``."""
    if kwargs:
        raise SemanticError(f"{fn.__name__}() on run-time values takes no keyword arguments, got "
                            f"{', '.join(kwargs)}=", f"call tl.{'minimum' if fn is py.min else 'maximum'}(a, b)")
    values = list(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else list(args)
    if len(values) < 2:
        raise SemanticError(f"{fn.__name__}() of {describe(values[0]) if values else 'nothing'}: Python's "
                            f"{fn.__name__} iterates its one argument, and a tile is not iterated in a kernel",
                            f"use tl.{fn.__name__}(x, axis=...) to reduce a tile")
    constants = [v for v in values if is_constexpr(v)]
    folded = [fold(fn, *constants)] if len(constants) > 1 else constants
    result = None
    for v in [v for v in values if not is_constexpr(v)] + folded:
        result = v if result is None else em.binary(_RUNTIME[fn], result, v)
    return result


def fold_call(fn: Callable, args, kwargs, em: Emitter | None = None) -> Any:
    """Call an allowed Python function on constexprs (``min``, ``len``, ``math.log2``...); ``min``,
    ``max`` and ``abs`` of run-time values are ``tl.minimum``, ``tl.maximum`` and ``tl.abs``."""
    if fn is py.len and len(args) == 1 and isinstance(args[0], tuple):
        return len(args[0])  # a tuple's length is known even when it holds tiles
    if em is not None and fn in _RUNTIME and not is_constexpr((*args, *kwargs.values())):
        return _py_min_max(em, fn, args, kwargs)
    if em is not None and fn is py.abs and len(args) == 1 and not kwargs and isinstance(args[0], Value):
        return em.unary(Op.ABS, args[0])
    if not is_constexpr((*args, *kwargs.values())):
        raise SemanticError(f"{fn.__name__}() works only on constexprs in a kernel",
                            _PY_HINTS.get(fn, "compute it with tl builtins instead"))
    return fold(fn, *args, **kwargs)


def fold(fn: Callable, *args, **kwargs) -> Any:
    try:
        return fn(*args, **kwargs)
    except Undecided:  # a symbol's domain does not decide it: whoever passed the symbol compiles with values
        raise
    except Error as e:
        raise SemanticError(str(e)) from None
    except ZeroDivisionError:
        raise SemanticError("division by zero in a constexpr expression") from None
    except Exception as e:
        raise SemanticError(f"cannot evaluate this constexpr expression: {type(e).__name__}: {e}") from None


def is_foldable(fn: Any) -> bool:
    return any(fn is f for f in _PY_HINTS) or (isinstance(fn, types.BuiltinFunctionType)
                                                and fn.__module__ == "math")


_PACKAGE = __name__.split(".")[0]  # ascdsl


def kernel_object(obj: Any, name: str) -> Any:
    """``obj`` (a global or module attribute called ``name``) as a kernel sees it, or an error."""
    if isinstance(obj, tl.constexpr):
        obj = obj.value
    if isinstance(obj, np.generic):
        obj = obj.item()
    if obj is None or isinstance(obj, (*Literal, str, DType, PointerType, tl.block_type)) or is_foldable(obj):
        return obj
    if any(obj is o for o in (math, tl.constexpr, tl.range, tl.static_range, tl.PropagateNan, tl.pointer_type,
                              tl.block_type, *BUILTINS)):
        return obj
    if isinstance(obj, (types.ModuleType, tl.PropagateNan)) and (
            isinstance(obj, tl.PropagateNan) or obj.__name__.split(".")[0] == _PACKAGE):
        return obj  # ascdsl, tl and its submodules (tl.math, tl.extra.libdevice...), however imported
    if isinstance(obj, Helper) or isinstance(getattr(obj, "parsed", None), ParsedFunction):  # written in the DSL
        return obj
    what = f"module `{obj.__name__}`" if isinstance(obj, types.ModuleType) else f"a {type(obj).__name__}"
    raise SemanticError(f"`{name}` is {what}, which kernels cannot use",
                        "kernels can read int/float/bool constants, dtypes, @ascdsl.jit functions and the "
                        "modules ascdsl (tl and its submodules) and math; pass anything else as an argument")
