"""Data movement: block loads and stores as ``DataCopy``/``DataCopyPad``, and ``other`` fills.

A 1-D block is one burst. A 2-D ``[M, N]`` block is ``DataCopyPad`` with one burst per valid row
(``blockCount`` at most 4095 per call), ``blockLen`` the valid columns in bytes, the GM gap
``(row stride - valid columns) * itemsize`` bytes and the UB gap in 32-byte blocks up to the tile's
row pitch. ``DataCopyPad`` pads each burst to 32 bytes; where the kernel gave ``other``, the rest of
a partial tile (masked rows, columns past the padded burst) is filled with ``Duplicate(other)``
after the load; without ``other`` those lanes are undefined, as on the interpreter.
"""
from __future__ import annotations

from ..ir.core import Instr, Value
from . import repeat
from .model import KernelModel, Stmt, vec, where

MAX_BURSTS = 4095


def in_queue(m: KernelModel, v: Value) -> str:
    """The VECIN queue load result ``v`` arrives through."""
    return m.plan.staged.get(v.id) or m.plan.homes[v.id]


def _parts(instr: Instr):
    """``(base, offset, row stride or None, extents, other or None)`` of a block access."""
    rank = len(instr.attr("shape"))
    xs = instr.operands
    other = xs[-1] if instr.attr("has_other") else None
    stride = xs[2] if rank == 2 else None
    return xs[0], xs[1], stride, xs[1 + rank: 1 + 2 * rank], other


def fill_operands(instr: Instr) -> list[Value]:
    """Scalars the compute stage reads to fill a load's masked lanes."""
    _, _, _, extents, other = _parts(instr)
    return [*extents, other] if other is not None else list(extents)


def _full(m: KernelModel, e: Value, size: int) -> bool:
    return m.const_of(e) == size


def _params(m: KernelModel, local: str, dt, rows: str, cols: str, gm_gap: str, ub_gap: str) -> Stmt:
    return Stmt(f"DataCopyExtParams {local}Params{{static_cast<uint16_t>({rows}), static_cast<uint32_t>({cols} * "
                f"sizeof({dt.cpp})), static_cast<uint32_t>({gm_gap}), static_cast<uint32_t>({ub_gap}), 0}};"
                if (rows, gm_gap, ub_gap) != ("1", "0", "0") else
                f"DataCopyExtParams {local}Params{{1, static_cast<uint32_t>({cols} * sizeof({dt.cpp})), 0, 0, 0}};")


def _gaps(m: KernelModel, instr: Instr, v_pitch: int, dt, to_ub: bool) -> tuple[str, str, str, str]:
    """``(rows, cols, gm gap bytes, ub gap blocks)`` of a block access."""
    shape = instr.attr("shape")
    _, _, stride, extents, _ = _parts(instr)
    per = 32 // dt.itemsize
    cols = str(shape[-1]) if _full(m, extents[-1], shape[-1]) else m.value(extents[-1])
    if len(shape) == 1 or shape[0] == 1:
        rows = "1" if len(shape) == 1 or _full(m, extents[0], 1) else m.value(extents[0])
        return rows, cols, "0", "0"
    rows = str(shape[0]) if _full(m, extents[0], shape[0]) else m.value(extents[0])
    s = m.value(stride)
    gm_gap = "0" if (m.const_of(stride) == shape[1] and cols == str(shape[1])) else f"({s} - {cols}) * sizeof({dt.cpp})"
    if cols.isdigit():
        ub_gap = str(v_pitch // per - -(-int(cols) // per))
    else:
        ub_gap = f"{v_pitch // per} - ({cols} + {per - 1}) / {per}"
    return rows, cols, gm_gap, ub_gap


def _bursts(m: KernelModel, instr: Instr, local: str, row_pitch: int, rows: str, to_ub: bool) -> list[Stmt]:
    """The ``DataCopyPad`` call(s) of a block access, in chunks of at most 4095 bursts."""
    base, offset, stride, _, _ = _parts(instr)

    def call(r: str, n: str) -> str:
        ub = local if r == "0" else f"{local}[{r} * {row_pitch}]"
        gm = f"{m.gm(base)}[{m.value(offset)}" + ("" if r == "0" else f" + {r} * {m.value(stride)}") + "]"
        args = f"{ub}, {gm}, {local}Params, {local}Pad" if to_ub else f"{gm}, {ub}, {local}Params"
        count = "" if r == "0" else f"{local}Params.blockCount = static_cast<uint16_t>({n});\n    "
        return f"{count}DataCopyPad({args});"
    if instr.attr("shape")[0] <= MAX_BURSTS or len(instr.attr("shape")) == 1:
        return [Stmt(call("0", rows))]
    return [Stmt(f"for (int32_t r = 0; r < {rows}; r += {MAX_BURSTS}) {{\n    "
                 f"{call('r', f'{rows} - r < {MAX_BURSTS} ? {rows} - r : {MAX_BURSTS}')}\n}}")]


def copy_in(m: KernelModel, instr: Instr) -> list[Stmt]:
    v = instr.result
    dt, shape = v.type.dtype, instr.attr("shape")
    queue = in_queue(m, v)
    local = m.local(queue, dt)
    base, offset, stride, extents, other = _parts(instr)
    out = [Stmt(f"LocalTensor<{dt.cpp}> {local} = {queue}.AllocTensor<{dt.cpp}>();  // {where(instr.loc)}")]
    src = f"{m.gm(base)}[{m.value(offset)}]"
    full = all(_full(m, e, n) for e, n in zip(extents, shape))
    if len(shape) == 1 and full and shape[0] * dt.itemsize % 32 == 0:
        return out + [Stmt(f"DataCopy({local}, {src}, {shape[0]});"), Stmt(f"{queue}.EnQue({local});")]
    rows, cols, gm_gap, ub_gap = _gaps(m, instr, m.pitch(v), dt, True)
    per = 32 // dt.itemsize
    aligned = cols.isdigit() and int(cols) % per == 0
    pad = "0" if aligned else f"static_cast<uint8_t>(({cols} + {per - 1}) / {per} * {per} - {cols})"
    pad_value = m.scalar_as(other, dt) if other is not None else "0"
    is_pad = "true" if other is not None else "false"
    out.append(_params(m, local, dt, rows, cols, gm_gap, ub_gap))
    out.append(Stmt(f"DataCopyPadExtParams<{dt.cpp}> {local}Pad{{{is_pad}, 0, {pad if other is not None else '0'}, "
                    f"{pad_value}}};"))
    out += _bursts(m, instr, local, m.pitch(v), rows, True)
    out.append(Stmt(f"{queue}.EnQue({local});"))
    return out


def copy_out(m: KernelModel, instr: Instr) -> list[Stmt]:
    value = instr.operands[-1]
    dt, shape = value.type.dtype, instr.attr("shape")
    queue = m.plan.store_queues[id(instr)]
    local = m.local(queue, dt)
    base, offset, stride, extents, _ = _parts(instr)
    dst = f"{m.gm(base)}[{m.value(offset)}]"
    out = [Stmt(f"LocalTensor<{dt.cpp}> {local} = {queue}.DeQue<{dt.cpp}>();  // {where(instr.loc)}")]
    full = all(_full(m, e, n) for e, n in zip(extents, shape))
    if len(shape) == 1 and full and shape[0] * dt.itemsize % 32 == 0:
        out.append(Stmt(f"DataCopy({dst}, {local}, {shape[0]});"))
    else:
        rows, cols, gm_gap, ub_gap = _gaps(m, instr, m.pitch(value), dt, False)
        out.append(_params(m, local, dt, rows, cols, ub_gap, gm_gap))
        out += _bursts(m, instr, local, m.pitch(value), rows, False)
    out.append(Stmt(f"{queue}.FreeTensor({local});"))
    return out


def dequeue(m: KernelModel, instr: Instr) -> list[Stmt]:
    """DeQue a load; fill its masked lanes with ``other``; copy it to its TBuf if it outlives its stage."""
    v = instr.result
    dt = v.type.dtype
    queue = in_queue(m, v)
    local = m.local(queue, dt)
    out = [Stmt(f"LocalTensor<{dt.cpp}> {local} = {queue}.DeQue<{dt.cpp}>();")]
    _, _, _, extents, other = _parts(instr)
    if other is not None:
        out += _fill(m, instr, local, queue, m.scalar_as(other, dt))
    if v.id in m.plan.staged:
        out.append(vec(f"DataCopy({m.tensor(v)}, {local}, {m.count(v) + (-m.count(v)) % (32 // dt.itemsize)});",
                       {queue}, {m.home(v)}))
    return out


def _fill(m: KernelModel, instr: Instr, local: str, queue: str, other: str) -> list[Stmt]:
    v = instr.result
    dt, shape = v.type.dtype, instr.attr("shape")
    _, _, _, extents, _ = _parts(instr)
    per, per_rep = 32 // dt.itemsize, 256 // dt.itemsize
    cols, size = extents[-1], shape[-1]
    out = []
    if not (_full(m, cols, size) or (m.const_of(cols) is not None and -(-m.const_of(cols) // per) * per >= size)):
        valid = f"{local}Valid"
        out.append(Stmt(f"const int32_t {valid} = ({m.value(cols)} + {per - 1}) / {per} * {per};"))
        if len(shape) == 1 or shape[0] == 1:
            out.append(vec(f"if ({valid} < {size}) {{  // fill the tail with `other`\n"
                           f"    Duplicate({local}[{valid}], {other}, {size} - {valid});\n}}", (), {queue}))
        else:
            rows = str(shape[0]) if _full(m, extents[0], shape[0]) else m.value(extents[0])
            pb = m.pitch(v) // per
            lines = repeat.over_columns(valid, size, per_rep, lambda c: repeat.over_rows(
                shape[0], rows, pb, lambda r, n, s: [
                    f"Duplicate({repeat.at(local, f'{r} * {m.pitch(v)}', c)}, {other}, "
                    f"static_cast<uint64_t>({repeat.mask(size, per_rep, c, aligned=False)}), static_cast<uint8_t>({n}), 1, {s});"]))
            out.append(vec("// fill the masked columns with `other`\n" + "\n".join(lines), (), {queue}))
    if len(shape) == 2 and shape[0] > 1 and not _full(m, extents[0], shape[0]):
        e0, p = m.value(extents[0]), m.pitch(v)
        rows = (f"if ({e0} < {shape[0]}) {{  // fill the masked rows with `other`\n"
                f"    Duplicate({local}[{e0} * {p}], {other}, ({shape[0]} - {e0}) * {p});\n}}")
        if out and out[-1].vector:  # the column fill covers rows [0, e0), this one rows [e0, M): no barrier
            out[-1] = vec(f"{out[-1].text}\n{rows}", (), {queue})
        else:
            out.append(vec(rows, (), {queue}))
    return out
