"""``tl.where`` on a comparison of float tiles: ``Compare`` into a bit mask, then ``Select``.

A comparison of tiles is only lowered as a ``where`` condition (load/store masks are gone after the
access pass). ``Compare`` writes one bit per element into a ``maskBuf`` and covers whole 256-byte
repeats, so it reads the padding lanes of its operands (the planner sizes their buffers for it):
count form for two tiles, repeat form against a scalar block at stride 0 for a tile and a scalar.
``Select`` then takes the first branch where the bit is set (``VSEL_TENSOR_TENSOR_MODE``, or
``VSEL_TENSOR_SCALAR_MODE`` for a scalar second branch; a scalar first branch is Duplicate'd into
the result first). bfloat16 is compared and selected in float32 (exact) and Cast back.
"""
from __future__ import annotations

from ..errors import CompilationError
from ..ir.core import GroupOp, Instr, Op, walk
from ..passes.ubplan import align32, compare_count, compare_dtype
from . import isel, repeat
from .model import F32, KernelModel, Stmt, vec, where

HINT = ("compare float tiles directly in the condition of tl.where (nest tl.where instead of `&`/`|`), "
        "or run this kernel on the interpreter (backend='interpreter')")


def check(m: KernelModel) -> None:
    """A located error for bool tiles the backend cannot lower: comparisons used other than as a
    ``where`` condition, ``where`` on other conditions, comparisons or ``where`` of non-float tiles."""
    users: dict[int, list[Instr]] = {}
    for instr in walk(m.kernel.body):
        for x in instr.operands:
            users.setdefault(x.id, []).append(instr)
    for instr in walk(m.kernel.body):
        if len(instr.results) != 1 or instr.result.type.is_scalar:
            continue
        if instr.op in GroupOp.COMPARE:
            dt = instr.operands[0].type.dtype
            if not dt.is_float:
                raise _error(instr, f"comparing {dt} tiles (only float tiles are compared)")
            for u in users.get(instr.result.id, []):
                if u.op is not Op.WHERE or any(x.id == instr.result.id for x in u.operands[1:]):
                    raise _error(instr, f"a comparison of tiles used by `{u.op.value}` (only a `tl.where` "
                                        "condition or a load/store mask)")
        elif instr.op is Op.WHERE:
            cond = m.defs.get(instr.operands[0].id)
            if cond is None or cond.op not in GroupOp.COMPARE or cond.result.type.is_scalar:
                raise _error(instr, "`tl.where` whose condition is not a comparison of float tiles")
            if not instr.result.type.dtype.is_float:
                raise _error(instr, f"`tl.where` of {instr.result.type.dtype} tiles")


def _error(instr: Instr, what: str) -> CompilationError:
    return CompilationError(instr.loc, f"the Ascend C backend does not support {what}", hint=HINT)


def _work(k: int, n: int) -> str:
    """Region ``k`` of ``n`` float32 lanes in ``workBuf``."""
    return f"workBuf.Get<float>()[{k * align32(4 * n) // 4}]" if k else "workBuf.Get<float>()"


def compare(m: KernelModel, instr: Instr) -> list[Stmt]:
    """``Compare`` of two tiles, or of a tile and a scalar, into the condition's bit mask."""
    mode = isel.COMPARE_MODE[instr.op]
    tile = next(x for x in instr.operands if not x.type.is_scalar)
    dt, n = compare_dtype(tile.type), compare_count(tile.type, m.plan.align)
    comment = f"  // {where(instr.loc)}"
    out: list[Stmt] = []
    srcs, reads = [], set()
    for x in instr.operands:
        if x.type.is_scalar:
            srcs.append(None)
        elif x.type.dtype == dt:
            srcs.append(m.tensor(x))
            reads.add(m.home(x))
        else:  # bfloat16 in float32; the padding lanes up to n stay unwritten (read, never used)
            srcs.append(_work(len(out), n))
            out.append(vec(f"Cast({srcs[-1]}, {m.tensor(x)}, RoundMode::{isel.CAST_MODE[(x.type.dtype, dt)]}, "
                           f"{m.count(x)});", {m.home(x)}, {"workBuf"}))
            reads.add("workBuf")
    mask, home = m.tensor(instr.result), m.home(instr.result)
    if None not in srcs:
        out.append(vec(f"Compare({mask}, {srcs[0]}, {srcs[1]}, CMPMODE::{mode}, {n});", reads, {home}))
    else:
        first = srcs[0] is None
        scalar = m.scalar_as(instr.operands[0 if first else 1], dt)
        out += repeat.scalar_block("Compare", mask, srcs[1 if first else 0], scalar, dt, n, first, reads, home, "",
                                   mode=mode)
    out[0].text += comment
    return out


def select(m: KernelModel, instr: Instr) -> list[Stmt]:
    """``Select`` of the branches by the condition's bit mask (see the module docstring)."""
    cond, *branches = instr.operands
    v = instr.result
    dt, n = v.type.dtype, m.count(v)
    wd = dt if dt in isel.SELECT else F32
    native = wd == dt
    dst, home = (m.tensor(v), m.home(v)) if native else (_work(0, n), "workBuf")
    out: list[Stmt] = []
    srcs, reads = [], {m.home(cond)}
    for k, x in enumerate(branches):
        if x.type.is_scalar:
            srcs.append(m.scalar_as(x, wd))
            continue
        if native:
            srcs.append(m.tensor(x))
            reads.add(m.home(x))
            continue
        srcs.append(_work(k, n))
        out.append(vec(f"Cast({srcs[-1]}, {m.tensor(x)}, RoundMode::{isel.CAST_MODE[(x.type.dtype, wd)]}, {n});",
                       {m.home(x)}, {"workBuf"}))
        reads.add("workBuf")
    if branches[0].type.is_scalar:  # Select reads its first branch from a tensor: the result itself
        out.append(vec(f"Duplicate({dst}, {srcs[0]}, {n});", (), {home}))
        srcs[0] = dst
        reads.add(home)
    sel = "VSEL_TENSOR_SCALAR_MODE" if branches[1].type.is_scalar else "VSEL_TENSOR_TENSOR_MODE"
    out.append(vec(f"Select({dst}, {m.tensor(cond)}, {srcs[0]}, {srcs[1]}, SELMODE::{sel}, {n});", reads, {home}))
    if not native:
        out.append(vec(f"Cast({m.tensor(v)}, {dst}, RoundMode::{isel.CAST_MODE[(wd, dt)]}, {n});", {home},
                       {m.home(v)}))
    out[0].text += f"  // {where(instr.loc)}"
    return out
