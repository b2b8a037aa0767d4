"""Bool tiles as values: casts and stores of comparison masks, bool loads, and ``tl.where`` on int32 data.

A bool tile is ``Compare``'s bit mask in UB (one bit per lane); only ``tl.where`` and ``& | ^ ~`` read
it. Everything else a kernel does with one is rewritten on the tile IR (:func:`rewrite`, a
:data:`.decompose.REWRITES` rule) into those:

* ``mask.to(dt)`` is ``tl.where(mask, 1, 0)`` in ``dt``; to int8/uint8 the ``Select`` runs in float16
  and ``Cast`` (exact for 0 and 1) narrows it, since ``Select`` has no 8-bit form;
* storing a bool tile stores those 0/1 bytes (int8/uint8 in GM, as Triton stores ``int1``);
* loading a bool tile loads its bytes, widens them to float16 and compares them ``!= 0`` (with
  ``other`` it is a located error: A2 has no 8-bit ``Duplicate`` to fill the masked lanes).

``tl.where`` on int32 tiles (:func:`select_int`) is ``Select`` on the float32 view of the same bits:
``Select`` moves lanes without arithmetic, so every int32 value, NaN patterns included, comes out
unchanged. Scalar branches are ``Duplicate`` d as int32 first (a float literal cannot carry every
int32 bit pattern).
"""
from __future__ import annotations

from .. import dtypes
from ..errors import CompilationError
from ..ir.core import Instr, Op
from .kir import Call, Const, Ref, lit

F16, F32, I32, U8 = dtypes.float16, dtypes.float32, dtypes.int32, dtypes.uint8
NARROW_INTS = frozenset({dtypes.int8, dtypes.uint8})
"""Integer dtypes a mask is cast to through float16 (``Select`` has no 8-bit form)."""


def _is_bool_tile(v) -> bool:
    return not v.type.is_scalar and v.type.dtype == dtypes.bool_


def rewrite(r, instr: Instr) -> bool:
    """The tile-IR rewrites of the module docstring (a :data:`.decompose.REWRITES` rule)."""
    if instr.op is Op.CAST and _is_bool_tile(instr.operands[0]) and instr.result.type.dtype != dtypes.bool_:
        as_number(r, instr.operands[0], instr.result.type.dtype, instr.loc, result=instr.result)
        return True
    if instr.op is Op.BLOCK_STORE and _is_bool_tile(instr.operands[-1]):
        value = as_number(r, instr.operands[-1], U8, instr.loc)
        r.out.append(Instr(Op.BLOCK_STORE, (), instr.operands[:-1] + (value,), instr.attrs, (), instr.loc))
        return True
    if instr.op is Op.BLOCK_LOAD and _is_bool_tile(instr.result):
        v, loc = instr.result, instr.loc
        if instr.attr("has_other"):
            raise CompilationError(loc, "the Ascend C backend does not support a masked load of a bool tile with "
                                   "`other` (A2 has no 8-bit Duplicate to fill the masked lanes)",
                                   hint="load it without `other` and combine the mask into the condition, "
                                        "e.g. `flags & mask`")
        raw = r.value(v.type.with_dtype(U8))
        r.out.append(Instr(Op.BLOCK_LOAD, (raw,), instr.operands, instr.attrs, (), loc))
        wide = r.op(Op.CAST, v.type.with_dtype(F16), (raw,), (("dtype", F16),), loc)
        r.op(Op.NE, v.type, (wide, r.const(0.0, F16, loc)), (), loc, result=v)
        return True
    return False


def as_number(r, mask, dt, loc, result=None):
    """``tl.where(mask, 1, 0)`` in ``dt`` (through float16 for 8-bit integers)."""
    via = F16 if dt in NARROW_INTS else dt
    one, zero = (r.const(c if via.is_float else int(c), via, loc) for c in (1.0, 0.0))
    t = mask.type.with_dtype(via)
    if via == dt:
        return r.op(Op.WHERE, t, (mask, one, zero), (), loc, result=result)
    w = r.op(Op.WHERE, t, (mask, one, zero), (), loc)
    return r.op(Op.CAST, mask.type.with_dtype(dt), (w,), (("dtype", dt),), loc, result=result)


def select_int(sel, instr: Instr) -> list:
    """``tl.where`` of int32 tiles: ``Select`` on float32 views of the branches' bits."""
    cond, a, b = instr.operands
    v = instr.result
    n = sel.count(v)
    dst = sel.ref(v, F32)
    out = []
    if a.type.is_scalar:
        out.append(Call("Duplicate", sel.ref(v), (), (sel.scalar_as(a, I32), lit(n)), loc=instr.loc))
        first = dst
    else:
        first = sel.ref(a, F32)
    if b.type.is_scalar:
        other = sel.scratch("otherBranch", I32, n, instr.loc)
        out.append(Call("Duplicate", other, (), (sel.scalar_as(b, I32), lit(n)), loc=None if out else instr.loc))
        second = Ref(other.buf, F32, lit(0), n)
    else:
        second = sel.ref(b, F32)
    out.append(Call("Select", dst, (sel.ref(cond), first, second), (Const.SEL_TT, lit(n)),
                    loc=None if out else instr.loc))
    return out


def select(sel, instr: Instr) -> list | None:
    """The calls of ``instr`` if this module lowers it (a :data:`.select.RULES` rule), else None."""
    if instr.op is Op.WHERE and instr.result.type.dtype == I32:
        return select_int(sel, instr)
    return None


__all__ = ["as_number", "rewrite", "select"]
