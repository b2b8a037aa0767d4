"""Index tiles, broadcasts into buffers, reshapes and column accesses.

* ``tl.arange(start, end)`` computed in the kernel (not an address) is ``CreateVecIndex`` (int32);
* a one-element tile broadcast to a 1-D tile is ``Brcb``'d (its element fills a block on the vector
  unit, so the scalar unit reads it after a V_S flag, whichever pipe wrote the tile) and ``Duplicate`` d;
  an int64 one is its two words ``Brcb``'d and gathered alternately (:func:`.wordviews.element`);
* a ``[M, 1]`` or ``[1, N]`` tile broadcast to ``[M, N]`` is read through repeat strides by the binary
  arithmetic that uses it (:func:`.reduce.broadcast_binary`); when anything else reads it (a
  comparison, ``tl.where``, a store, a cast, an op computed in float32), :func:`rewrite` (a
  :data:`.decompose.REWRITES` rule) spreads it into a buffer first as ``-0.0 + x`` (``0 + x`` for
  integers), which is ``x`` exactly, signed zeros, infinities and NaN included;
* ``tl.reshape``/``tl.view`` between shapes that lie alike in UB (1-D, ``[M, 1]``, ``[1, N]``, rows that
  fill whole 32-byte blocks, ``[A, B, C]`` and ``[A * B, C]``) is free: the result is the operand's
  buffer; other reshapes are a ``Gather`` (:mod:`.relayout`), or a located error for 8-bit tiles;
* a block load or store of ``[M, 1]`` at row stride 1 (``ptr + rows[:, None]``) is the 1-D access of
  its ``M`` elements, since the tile is stored as ``[M]``.
"""
from __future__ import annotations

from ... import dtypes
from ...ir.core import Instr, Op, Type
from ...ir.symbol import equal
from ..selection import isel
from ..legalise_types import wordviews
from ..kir import Brace, Call, Elem, Lit, Ref, Set, Var, VarKind, lit
from .relayout import int32_view
from ..selection.support import unsupported

F32 = dtypes.float32


def _read_through_strides(u: Instr) -> bool:
    """``u`` reads a broadcast operand through repeat strides (see :mod:`.reduce`): native binary
    arithmetic of two tiles."""
    return (u.op in isel.BINARY_API and u.op in isel.NATIVE.get(u.result.type.dtype, ())
            and not any(x.type.is_scalar for x in u.operands))


def rewrite(r, instr: Instr) -> bool:
    """A 2-D broadcast that not only native binary arithmetic reads becomes ``-0.0 + x`` in a buffer; a
    block access of ``[M, 1]`` with row stride 1 becomes the 1-D access of its ``M`` elements."""
    if instr.op in (Op.BLOCK_LOAD, Op.BLOCK_STORE) and _column(r, instr):
        return True
    if instr.op is not Op.BROADCAST or instr.operands[0].type.is_scalar or len(instr.result.type.shape) != 2:
        return False
    (x,) = instr.operands
    v, loc = instr.result, instr.loc
    if equal(v.type.shape[1], 1) and equal(x.type.numel, 1):  # the columns first: ``[ROWS, 1]`` rows to ``[ROWS, K]``
        # one element to an [M, 1] column, which lies as M elements (not as rows): the 1-D broadcast, reshaped
        dt = dtypes.float16 if x.type.dtype.itemsize == 1 else x.type.dtype  # 8-bit values in float16, exact
        wide = x if dt == x.type.dtype else r.op(Op.CAST, x.type.with_dtype(dt), (x,), (("dtype", dt),), loc)
        t = v.type.with_shape(v.type.shape[:1]).with_dtype(dt)
        one = r.op(Op.RESHAPE, t.with_shape((1,)), (wide,), (), loc)
        line = r.emit(Op.BROADCAST, t, (one,), (), loc)
        if dt != dtypes.int64:  # A2 has no int64 Add; the int64 broadcast is a buffer of its own (wordviews.element)
            zero = r.emit(Op.CONST, t, (), (("value", -0.0 if dt.is_float else 0),), loc)
            line = r.op(Op.ADD, t, (zero, line), (), loc)
        same = dt == v.type.dtype
        column = r.op(Op.RESHAPE, v.type.with_dtype(dt), (line,), (), loc, result=v if same else None)
        if not same:
            r.op(Op.CAST, v.type, (column,), (("dtype", v.type.dtype),), loc, result=v)
        return True
    users = r.users.get(v.id, [])
    if all(_read_through_strides(u) for u in users) or x.type.dtype not in (*isel.NATIVE, dtypes.bfloat16):
        return False
    spread(r, x, v, loc)
    return True


def spread(r, x, v, loc) -> None:
    """``v``, the broadcast of ``[M, 1]`` or ``[1, N]`` tile ``x``, in a buffer of its own: ``-0.0 + x``."""
    dt = x.type.dtype if x.type.dtype in isel.NATIVE else F32
    zero = r.emit(Op.CONST, v.type.with_dtype(dt), (), (("value", -0.0 if dt.is_float else 0),), loc)
    wide = r.emit(Op.BROADCAST, v.type.with_dtype(dt), (r.cast(x, dt, loc),), (), loc)
    if dt == x.type.dtype:
        r.emit(Op.ADD, v.type, (zero, wide), (), loc, result=v)
    else:
        r.cast(r.emit(Op.ADD, v.type.with_dtype(dt), (zero, wide), (), loc), v.type.dtype, loc, result=v)


def _column(r, instr: Instr) -> bool:
    """``[M, 1]`` at row stride 1 is ``M`` consecutive elements (one burst, not ``M`` padded ones): the
    access becomes 1-D, its tile an ``expand_dims`` (the same UB layout)."""
    shape = instr.attr("shape")
    if len(shape) != 2 or not equal(shape[1], 1):
        return False
    ptr, offset, stride, rows, cols, *rest = instr.operands
    if r.consts.get(stride.id) != 1 or r.consts.get(cols.id) != 1:
        return False
    attrs = tuple((k, (shape[0],) if k == "shape" else a) for k, a in instr.attrs)
    loc = instr.loc
    if instr.op is Op.BLOCK_LOAD:
        v = instr.result
        flat = r.value(Type(v.type.dtype, (shape[0],)))
        r.out.append(Instr(Op.BLOCK_LOAD, (flat,), (ptr, offset, rows, *rest), attrs, (), loc))
        r.op(Op.EXPAND_DIMS, v.type, (flat,), (("axis", 1),), loc, result=v)
    else:
        value = rest[0]
        flat = r.op(Op.RESHAPE, Type(value.type.dtype, (shape[0],)), (value,), (), loc)
        r.out.append(Instr(Op.BLOCK_STORE, (), (ptr, offset, rows, flat), attrs, (), loc))
    return True


def select(sel, instr: Instr) -> list | None:
    """The calls of ``instr`` if this module lowers it (a :data:`.select.RULES` rule), else None."""
    v = instr.result if len(instr.results) == 1 else None
    if instr.op is Op.ARANGE:
        if v.type.dtype != dtypes.int32:
            raise unsupported(instr, f"`tl.arange` of {v.type.dtype}")
        return [Call("CreateVecIndex", sel.ref(v), (), (Lit(instr.attr("start"), dtypes.int32), lit(sel.count(v))),
                     loc=instr.loc)]
    if (instr.op is Op.BROADCAST and len(v.type.shape) == 1 and not instr.operands[0].type.is_scalar
            and instr.operands[0].type.numel == 1 and v.type.dtype != dtypes.bool_):
        (x,) = instr.operands
        dt = v.type.dtype
        if dt == dtypes.int64:  # Brcb and Duplicate have no 64-bit form: the element's words, gathered
            return wordviews.element(sel, int32_view(sel.ref(v)), int32_view(sel.ref(x)), instr.loc)
        per_blk = sel.platform.block_bytes // dt.itemsize
        blocks = sel.scratch("brcb", dt, 8 * per_blk, instr.loc)
        element = Var(sel.fresh_key(), dt, sel.hint(x, "element"), VarKind.MEMBER)
        sel.members.append(element)
        return [Call("Brcb", blocks, (Ref(sel.bufs[x.id], dt, lit(0), 8),), (lit(1), Brace((lit(1), lit(8)))),
                     loc=instr.loc),
                Set(element, Elem(blocks, 0)),
                Call("Duplicate", sel.ref(v), (), (element, lit(sel.count(v))))]
    if instr.op is Op.RESHAPE:
        if not sel.free_reshape(instr):
            raise unsupported(instr, f"reshaping {v.type.dtype} tiles {instr.operands[0].type.shape} to "
                                     f"{v.type.shape} (UB rows are padded to 32-byte blocks and Gather moves only 16- "
                                     "and 32-bit elements between them; reshape between shapes whose last axis fills "
                                     "whole blocks)")
        return []
    return None


__all__ = ["rewrite", "select"]
