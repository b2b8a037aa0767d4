"""Reductions and broadcasts between tile shapes.

* A 1-D reduction is one count-form ``ReduceSum``/``ReduceMax``/``ReduceMin`` into the scalar
  block, read back on the scalar unit after a V_S flag (a class member holds it).
* Along axis 1 of ``[M, N]``: ``WholeReduce*`` per row (one repeat per row); rows longer than one
  repeat are first folded onto their first repeat with repeat-form ``Add``/``Max``/``Min``.
* Along axis 0: the rows are accumulated in order with count-form ``Add``/``Max``/``Min``.
* ``[M, 1] -> [M, N]`` read by arithmetic: ``Brcb`` puts each row's value in a 32-byte block that
  the repeat-form op reads at block stride 0; ``[1, N] -> [M, N]``: repeat stride 0.
16-bit inputs are reduced in float32 (``workBuf``), sums rounded once to their dtype.
"""
from __future__ import annotations

from ..ir.core import Instr, Op
from ..passes.ubplan import align32, reduce_scratch
from . import isel, repeat
from .model import F32, KernelModel, Stmt, unsupported, vec, where

WHOLE = {Op.SUM: "WholeReduceSum", Op.MAX: "WholeReduceMax", Op.MIN: "WholeReduceMin"}
FOLD = {Op.SUM: "Add", Op.MAX: "Max", Op.MIN: "Min"}
ORDER = {Op.SUM: "", Op.MAX: ", ReduceOrder::ORDER_ONLY_VALUE", Op.MIN: ", ReduceOrder::ORDER_ONLY_VALUE"}


def reduce(m: KernelModel, instr: Instr) -> list[Stmt]:
    (x,) = instr.operands
    if instr.op not in isel.REDUCE_API or not x.type.dtype.is_float:
        raise unsupported(instr, f"`{instr.op.value}` of {x.type.dtype} tiles")
    if len(x.type.shape) == 2 and not instr.result.type.is_scalar:
        return _rows(m, instr) if instr.attr("axis") == 1 else _columns(m, instr)
    if len(x.type.shape) == 2:
        raise unsupported(instr, "reducing a 2-D tile to a scalar (reduce along one axis)")
    return _to_scalar(m, instr)


def _work(offset: int) -> str:
    return f"workBuf.Get<float>()[{offset}]" if offset else "workBuf.Get<float>()"


def _float_source(m: KernelModel, instr: Instr, regions) -> tuple[list[Stmt], str, set]:
    """The input as float32: the tile itself or a Cast into the ``cast`` region."""
    (x,) = instr.operands
    if x.type.dtype == F32:
        return [], m.tensor(x), {m.home(x)}
    return ([vec(f"Cast({_work(regions['cast'])}, {m.tensor(x)}, RoundMode::CAST_NONE, {m.count(x)});",
                 {m.home(x)}, {"workBuf"})], _work(regions["cast"]), {"workBuf"})


def _round_back(m: KernelModel, instr: Instr, acc: str, n: int) -> list[Stmt]:
    v = instr.result
    if v.type.dtype == F32:
        return []
    return [vec(f"Cast({m.tensor(v)}, {acc}, RoundMode::CAST_RINT, {n});", {"workBuf"}, {m.home(v)})]


def _rows(m: KernelModel, instr: Instr) -> list[Stmt]:
    """Per-row reduction of ``[M, N]`` to ``[M]`` (or ``[M, 1]``)."""
    (x,) = instr.operands
    v, (rows, cols) = instr.result, x.type.shape
    regions = reduce_scratch(x.type, v.type.dtype, 1, m.plan.align)
    out, src, reads = _float_source(m, instr, regions)
    out[:0] = [Stmt(f"// {where(instr.loc)}: {instr.op.value} along axis 1")]
    pb, per_rep = m.pitch(x) // 8, 64
    acc = m.tensor(v) if v.type.dtype == F32 else _work(regions["acc"])
    acc_home = m.home(v) if v.type.dtype == F32 else "workBuf"
    if cols > per_rep:
        fold = _work(regions["fold"])
        first = repeat.over_rows(rows, str(rows), pb, lambda r, n, s: [
            f"Muls({repeat.at(fold, f'{r} * {per_rep}')}, {repeat.at(src, f'{r} * {m.pitch(x)}')}, 1.0f, {per_rep}, "
            f"{n}, {{1, 1, 8, {s}}});"])
        rest = repeat.over_columns(str(per_rep), cols, per_rep, lambda c: ["PipeBarrier<PIPE_V>();", *repeat.over_rows(
            rows, str(rows), pb, lambda r, n, s: [
                f"{FOLD[instr.op]}({repeat.at(fold, f'{r} * {per_rep}')}, {repeat.at(fold, f'{r} * {per_rep}')}, "
                f"{repeat.at(src, f'{r} * {m.pitch(x)}', c)}, {repeat.mask(cols, per_rep, c)}, {n}, "
                f"{{1, 1, 1, 8, 8, {s}}});"])])
        out += [vec("\n".join(first), reads, {"workBuf"}), vec("\n".join(rest), reads | {"workBuf"}, {"workBuf"})]
        src, reads, lanes, pb = fold, {"workBuf"}, per_rep, 8
    else:
        lanes = cols
    whole = repeat.over_rows(rows, str(rows), pb, lambda r, n, s: [
        f"{WHOLE[instr.op]}({repeat.at(acc, r)}, {repeat.at(src, f'{r} * {pb * 8}')}, {lanes}, {n}, 1, 1, {s}"
        f"{ORDER[instr.op]});"])
    out.append(vec("\n".join(whole), reads, {acc_home}))
    return out + _round_back(m, instr, acc, rows)


def _columns(m: KernelModel, instr: Instr) -> list[Stmt]:
    """Reduction of ``[M, N]`` along axis 0 to ``[N]`` (or ``[1, N]``), row by row in order."""
    (x,) = instr.operands
    v, (rows, cols) = instr.result, x.type.shape
    regions = reduce_scratch(x.type, v.type.dtype, 0, m.plan.align)
    out, src, reads = _float_source(m, instr, regions)
    p = m.pitch(x)
    acc = m.tensor(v) if v.type.dtype == F32 else _work(regions["acc"])
    acc_home = m.home(v) if v.type.dtype == F32 else "workBuf"
    text = f"DataCopy({acc}, {src}, {align32(4 * cols) // 4});  // {where(instr.loc)}: {instr.op.value} along axis 0"
    if rows > 1:  # the loop's barrier also orders the first row's copy before the first fold
        text += (f"\nfor (int32_t r = 1; r < {rows}; r++) {{\n    PipeBarrier<PIPE_V>();\n"
                 f"    {FOLD[instr.op]}({acc}, {acc}, {src}[r * {p}], {cols});\n}}")
    out.append(vec(text, reads, {acc_home}))
    return out + _round_back(m, instr, acc, cols)


def _to_scalar(m: KernelModel, instr: Instr) -> list[Stmt]:
    """A 1-D tile reduced to a scalar member (count-form Reduce*, then a V_S flag)."""
    op, v = instr.op, instr.result
    (x,) = instr.operands
    n = x.type.numel
    comment = f"  // {where(instr.loc)}"
    out = []
    src, reads = m.tensor(x), {m.home(x)}
    work_offset = 0
    if x.type.dtype != F32:
        out.append(vec(f"Cast(workBuf.Get<float>(), {src}, RoundMode::CAST_NONE, {n});{comment}", reads, {"workBuf"}))
        src, reads, work_offset = "workBuf.Get<float>()", {"workBuf"}, align32(4 * n) // 4
    out.append(vec(f"{isel.REDUCE_API[op]}(scalar, {src}, {_work(work_offset)}, {n});{comment}", reads,
                   {"scalarBuf", "workBuf"}))
    member = f"s{v.id}_"
    m.members[v.id] = member
    m.member_decls.append(f"{v.type.dtype.cpp} {member};")
    if v.type.dtype != F32:
        blk = f"scalar{v.type.dtype.short.capitalize()}"
        out.append(vec(f"Cast({blk}[8], scalar, RoundMode::CAST_RINT, 1);", {"scalarBuf"}, {"scalarBuf"}))
        read = f"{blk}.GetValue(8)"
    else:
        read = "scalar.GetValue(0)"
    out.append(Stmt("SetFlag<HardEvent::V_S>(eventVS_);\nWaitFlag<HardEvent::V_S>(eventVS_);"))
    out.append(Stmt(f"{member} = {read};"))
    return out


def broadcast_binary(m: KernelModel, instr: Instr) -> list[Stmt]:
    """``dst[M, N] = a op b`` where an operand is a fused broadcast of ``[M, 1]`` or ``[1, N]``:
    one repeat per row, column chunk by column chunk."""
    op, v = instr.op, instr.result
    dt, (rows, cols) = v.type.dtype, v.type.shape
    if op not in isel.BINARY_API or dt not in isel.NATIVE or any(x.type.dtype != dt for x in instr.operands):
        raise unsupported(instr, f"`{op.value}` of a broadcast {dt} tile (compute it in float32)")
    per_blk, per_rep = 32 // dt.itemsize, 256 // dt.itemsize
    p = m.pitch(v)
    pb = p // per_blk
    out: list[Stmt] = []
    operands, reads = [], set()
    brcb = "brcb" if dt == F32 else f"brcb{dt.short.capitalize()}"
    for x in instr.operands:
        if x.id not in m.plan.fused:
            operands.append((m.tensor(x), lambda r, c: (f"{r} * {p}", c), 1, None))
            reads.add(m.home(x))
            continue
        src = m.defs[x.id].operands[0]
        reads.add(m.home(src))
        if src.type.shape[-1] != 1:  # [1, N]: every row reads the same row
            operands.append((m.tensor(src), lambda r, c: ("0", c), 1, 0))
            continue
        blocks = -(-src.type.shape[0] // 8)
        out.append(vec(f"Brcb({brcb}, {m.tensor(src)}, {blocks}, {{1, 8}});  // one block per row",
                       {m.home(src)}, {"brcbBuf"}))
        operands.append((brcb, lambda r, c: (f"{r} * {per_blk}", "0"), 0, 1))
        reads.add("brcbBuf")

    def call(r, n, s, c):
        args = [repeat.at(name, *offset(r, c)) for name, offset, _, _ in operands]
        blk = ", ".join(str(b) for _, _, b, _ in operands)
        rep = ", ".join(str(s if q is None else q) for _, _, _, q in operands)
        return [f"{isel.BINARY_API[op]}({repeat.at(m.tensor(v), f'{r} * {p}', c)}, {', '.join(args)}, "
                f"{repeat.mask(cols, per_rep, c)}, {n}, {{1, {blk}, {s}, {rep}}});"]
    lines = repeat.over_columns("0", cols, per_rep, lambda c: repeat.over_rows(
        rows, str(rows), pb, lambda r, n, s: call(r, n, s, c)))
    out.append(vec(f"// {where(instr.loc)}\n" + "\n".join(lines), reads, {m.home(v)}))
    return out
