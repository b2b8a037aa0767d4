"""Instruction selection for tile ops: which vector API computes each one, over the padded tile.

Count-form ops cover a tile's whole UB footprint (rows times pitch for 2-D tiles). 16-bit ops the
vector unit lacks go through float32 work buffers (Cast CAST_NONE in, CAST_RINT out); tile-scalar
ops without a scalar API read the scalar from one 32-byte block at stride 0. Reductions and
broadcasts between tile shapes are in :mod:`.reduce`.
"""
from __future__ import annotations

from ..ir.core import GroupOp, Instr, Op, Value
from ..passes.ubplan import align32
from . import cmpsel, isel, reduce, repeat
from .model import F32, KernelModel, Stmt, literal, unsupported, vec, where


def vector(m: KernelModel, instr: Instr) -> list[Stmt]:
    """The statements computing tile instruction ``instr``."""
    op, v = instr.op, instr.result
    if op is Op.CONST:
        if v.id not in m.plan.homes:
            return []  # a loop's initial value: Duplicate'd into its accumulator
        return [vec(f"Duplicate({m.tensor(v)}, {literal(instr.attr('value'), v.type.dtype)}, {m.count(v)});  "
                    f"// {where(instr.loc)}", (), {m.home(v)})]
    if op is Op.BROADCAST:
        (x,) = instr.operands
        if v.id in m.plan.fused:
            return []  # read through strides by its users
        if not x.type.is_scalar:
            raise unsupported(instr, "broadcasting a tile into a buffer (only arithmetic can read a broadcast)")
        return [vec(f"Duplicate({m.tensor(v)}, {m.scalar_as(x, v.type.dtype)}, {m.count(v)});  // {where(instr.loc)}",
                    (), {m.home(v)})]
    if op is Op.EXPAND_DIMS:
        (x,) = instr.operands
        return [] if m.home(x) == m.home(v) else [copy(m, m.tensor(v), x, m.home(v))]
    if op in GroupOp.REDUCE:
        return reduce.reduce(m, instr)
    if op is Op.CAST:
        return _cast(m, instr)
    if op in isel.COMPARE_MODE:
        return cmpsel.compare(m, instr)
    if op is Op.WHERE:
        return cmpsel.select(m, instr)
    if op in isel.CHAINS:
        return _chain(m, instr)
    if op in isel.BINARY_API or op in isel.UNARY_API or op is Op.NEG:
        if any(x.id in m.plan.fused for x in instr.operands):
            return reduce.broadcast_binary(m, instr)
        return _arith(m, instr)
    raise unsupported(instr, f"the tile op `{op.value}`")


def copy(m: KernelModel, dst_local: str, value: Value, dst_home: str) -> Stmt:
    """UB -> UB copy of ``value`` (its padded footprint, in whole 32-byte blocks)."""
    count = align32(m.count(value) * value.type.dtype.itemsize) // value.type.dtype.itemsize
    return vec(f"DataCopy({dst_local}, {m.tensor(value)}, {count});", {m.home(value)}, {dst_home})


def init_accs(m: KernelModel, loop: Instr) -> list[Stmt]:
    out = []
    for init, arg in zip(loop.operands[3:], loop.regions[0].args[1:]):
        home = m.home(arg)
        dst = m.local(home, arg.type.dtype)
        c = m.const_of(init)
        if c is not None:
            out.append(vec(f"Duplicate({dst}, {literal(c, arg.type.dtype)}, {m.count(arg)});  "
                           f"// {where(m.defs[init.id].loc)}", (), {home}))
        elif m.plan.homes.get(init.id) != home:
            out.append(copy(m, dst, init, home))
    return out


def yield_copies(m: KernelModel, instr: Instr, block) -> list[Stmt]:
    out = []
    for value, arg in zip(instr.operands, block.args[1:]):
        home = m.home(arg)
        if m.plan.homes.get(value.id) != home:
            out.append(copy(m, m.local(home, arg.type.dtype), value, home))
    return out


def _apply(op: Op, dst: str, tiles: list[str], scalar: str | None, n: int, dt) -> str | None:
    """One count-form statement for ``op`` (None when the tile-scalar op has no scalar API)."""
    if op is Op.NEG:
        return f"Muls({dst}, {tiles[0]}, {literal(-1.0 if dt.is_float else -1, dt)}, {n});"
    if op in isel.UNARY_API:
        return f"{isel.UNARY_API[op]}({dst}, {tiles[0]}, {n});"
    if scalar is None:
        return f"{isel.BINARY_API[op]}({dst}, {tiles[0]}, {tiles[1]}, {n});"
    if op in isel.SCALAR_API:
        return f"{isel.SCALAR_API[op]}({dst}, {tiles[0]}, {scalar}, {n});"
    return None


def _arith(m: KernelModel, instr: Instr) -> list[Stmt]:
    op, v = instr.op, instr.result
    dt, n = v.type.dtype, m.count(v)
    xs = instr.operands
    native = op in isel.NATIVE.get(dt, ()) or (op is Op.NEG and dt in isel.NATIVE)
    if not (native and all(x.type.dtype == dt for x in xs)):
        if not dt.is_float:
            raise unsupported(instr, f"`{op.value}` on {dt}")
        return _via_f32(m, instr)
    reads = {m.home(x) for x in xs if not x.type.is_scalar}
    tiles = [m.tensor(x) for x in xs if not x.type.is_scalar]
    scalars = [x for x in xs if x.type.is_scalar]
    text = _apply(op, m.tensor(v), tiles, m.scalar_as(scalars[0], dt) if scalars else None, n, dt)
    if text is not None:
        return [vec(f"{text}  // {where(instr.loc)}", reads, {m.home(v)})]
    return repeat.scalar_block(isel.BINARY_API[op], m.tensor(v), tiles[0], m.scalar_as(scalars[0], dt), dt, n,
                               xs[0] is scalars[0], reads, m.home(v), f"  // {where(instr.loc)}")


def _via_f32(m: KernelModel, instr: Instr) -> list[Stmt]:
    """A 16-bit float op: Cast the tile operands to float32 work buffers, compute, Cast back (RINT)."""
    op, v = instr.op, instr.result
    n, dt = m.count(v), v.type.dtype
    comment = f"  // {where(instr.loc)}"
    out: list[Stmt] = []
    work, scalars = [], []
    for k, x in enumerate(instr.operands):
        if x.type.is_scalar:
            scalars.append(x)
            continue
        w = f"workBuf.Get<float>()[{k * align32(n * 4) // 4}]" if k else "workBuf.Get<float>()"
        work.append(w)
        if x.type.dtype == F32:
            out.append(vec(f"DataCopy({w}, {m.tensor(x)}, {align32(n * 4) // 4});", {m.home(x)}, {"workBuf"}))
        else:
            out.append(vec(f"Cast({w}, {m.tensor(x)}, RoundMode::{isel.CAST_MODE[(x.type.dtype, F32)]}, {n});{comment}",
                           {m.home(x)}, {"workBuf"}))
    r = {"workBuf", "scalarBuf"}
    text = _apply(op, work[0], work, m.scalar_as(scalars[0], F32) if scalars else None, n, F32)
    if text is not None:
        out.append(vec(text, r, {"workBuf"}))
    else:
        out += repeat.scalar_block(isel.BINARY_API[op], work[0], work[0], m.scalar_as(scalars[0], F32), F32, n,
                                   instr.operands[0] is scalars[0], r, "workBuf", "")
    out.append(vec(f"Cast({m.tensor(v)}, {work[0]}, RoundMode::{isel.CAST_MODE[(F32, dt)]}, {n});",
                   {"workBuf"}, {m.home(v)}))
    return out


def _chain(m: KernelModel, instr: Instr) -> list[Stmt]:
    """An op of :data:`.isel.CHAINS`, in float32 (a 16-bit tile through ``workBuf``), rounded once."""
    (x,) = instr.operands
    v = instr.result
    dt, n = v.type.dtype, m.count(v)
    comment = f"  // {where(instr.loc)}"
    if dt == F32:
        out, src, dst, home = [], m.tensor(x), m.tensor(v), m.home(v)
    else:
        src = dst = "workBuf.Get<float>()"
        home = "workBuf"
        out = [vec(f"Cast({dst}, {m.tensor(x)}, RoundMode::{isel.CAST_MODE[(dt, F32)]}, {n});", {m.home(x)}, {home})]
    reads = {m.home(x)}
    for op, s in isel.CHAINS[instr.op]:
        scalar = None if s is None else literal(s, F32)
        text = _apply(op, dst, [src], scalar, n, F32)
        if text is None:
            out += repeat.scalar_block(isel.BINARY_API[op], dst, src, scalar, F32, n, True, reads, home, "")
        else:
            out.append(vec(text, reads, {home}))
        src, reads = dst, {home}
    if dt != F32:
        out.append(vec(f"Cast({m.tensor(v)}, {dst}, RoundMode::{isel.CAST_MODE[(F32, dt)]}, {n});", {home},
                       {m.home(v)}))
    out[0].text += comment
    return out


def _cast(m: KernelModel, instr: Instr) -> list[Stmt]:
    (x,) = instr.operands
    v = instr.result
    src, dst = x.type.dtype, v.type.dtype
    n = m.count(v)
    comment = f"  // {where(instr.loc)}"
    rd, wr = {m.home(x)}, {m.home(v)}
    if src == dst:
        return [copy(m, m.tensor(v), x, m.home(v))]
    if (src, dst) in isel.CAST_MODE:
        return [vec(f"Cast({m.tensor(v)}, {m.tensor(x)}, RoundMode::{isel.CAST_MODE[(src, dst)]}, {n});{comment}", rd, wr)]
    if src.is_float and dst.is_float:
        w = "workBuf.Get<float>()"
        return [vec(f"Cast({w}, {m.tensor(x)}, RoundMode::CAST_NONE, {n});{comment}", rd, {"workBuf"}),
                vec(f"Cast({m.tensor(v)}, {w}, RoundMode::CAST_RINT, {n});", {"workBuf"}, wr)]
    raise unsupported(instr, f"casting {src} to {dst}")
