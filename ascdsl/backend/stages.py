"""Pipeline staging: the kernel body becomes ``Process`` plus CopyIn/Compute/CopyOut methods.

The body is cut at its ``for`` loops into segments; each segment gets ``CopyIn<k>`` (block loads
into VECIN queues), ``Compute<k>`` (vector ops) and ``CopyOut<k>`` (block stores from VECOUT
queues). Loops stay loops in ``Process``; loop-carried tiles live in accumulator ``TBuf``s.
``PipeBarrier<PIPE_V>`` goes between dependent vector ops (:func:`with_barriers`).
"""
from __future__ import annotations

import re

from .. import dtypes
from ..ir.core import GroupOp, Instr, Op, Value
from . import cmpsel, compute, memory
from .model import KernelModel, Method, Stmt, cpp, unsupported, where


class _Segment:
    def __init__(self):
        self.index = 0
        self.instrs: list[Instr] = []
        self.loop_inits: list[Instr] = []  # loops whose accumulators this segment initialises
        self.yields: tuple | None = None


def build(m: KernelModel) -> None:
    """Fill ``m.process`` and ``m.methods``."""
    cmpsel.check(m)
    m.segments = []
    m.process = _region(m, m.kernel.body, [])


def _region(m: KernelModel, block, ivs: list[Value]) -> list[str]:
    """``Process`` lines for ``block``: stage calls and loops."""
    lines: list[str] = []
    seg = _Segment()
    known = {v.id for v in ivs}
    for instr in block.body:
        if instr.op is Op.FOR:
            seg.loop_inits.append(instr)
            lines += _emit_segment(m, seg, ivs)
            lower, upper, step = instr.operands[:3]
            if not isinstance(m.const_of(step), int) or m.const_of(step) <= 0:
                raise unsupported(instr, "loops without a constant positive step")
            if any(a.type.is_scalar for a in instr.regions[0].args[1:]):
                raise unsupported(instr, "scalars carried by loops")
            lines += [s.text for s in m.scalar_slice([lower, upper], known)]
            iv = instr.regions[0].args[0]
            inner = _region(m, instr.regions[0], ivs + [iv])
            lines.append(f"for (int32_t v{iv.id} = {m.value(lower)}; v{iv.id} < {m.value(upper)}; "
                         f"v{iv.id} += {m.value(step)}) {{  // {where(instr.loc)}")
            lines += ["    " + line for line in inner]
            lines.append("}")
            seg = _Segment()
        elif instr.op is Op.YIELD:
            if instr.operands:
                seg.yields = (instr, block)
        else:
            seg.instrs.append(instr)
    return lines + _emit_segment(m, seg, ivs)


def _emit_segment(m: KernelModel, seg: _Segment, ivs: list[Value]) -> list[str]:
    if not seg.instrs and not seg.loop_inits and not seg.yields:
        return []
    m.segments.append(seg)
    seg.index = len(m.segments) - 1
    return [f"{name}({', '.join(['pid'] + [f'v{iv.id}' for iv in ivs])});" for name in _stage_methods(m, seg, ivs)]


def _stage_methods(m: KernelModel, seg: _Segment, ivs: list[Value]) -> list[str]:
    params = ", ".join(["int32_t pid"] + [f"int32_t v{iv.id}" for iv in ivs])
    known = {iv.id for iv in ivs}
    loads = [i for i in seg.instrs if i.op is Op.BLOCK_LOAD]
    stores = [i for i in seg.instrs if i.op is Op.BLOCK_STORE]
    sfx = "" if m.single else str(seg.index)
    stages = [("CopyIn", loads and (lambda: _copy_stage(m, loads, known, memory.copy_in, 1, None))),
              ("Compute", lambda: _compute(m, seg, known, loads, stores)),
              ("CopyOut", stores and (lambda: _copy_stage(m, stores, known, memory.copy_out, 1, -1)))]
    names = []
    for name, make in stages:
        lines = make() if make else []
        if lines:  # a segment of scalars only (recomputed where they are read) has no stage
            m.methods.append(Method(name + sfx, params, lines))
            names.append(name + sfx)
    return names


def _copy_stage(m: KernelModel, accesses, known, emit, first: int, last) -> list[str]:
    roots = [x for i in accesses for x in i.operands[first:last] if x.type.is_scalar]
    stmts = m.scalar_slice(roots, known)
    for i in accesses:
        stmts += emit(m, i)
    return [s.text for s in stmts]


def _compute(m: KernelModel, seg: _Segment, known: set[int], loads, stores) -> list[str]:
    defined_here = {v.id: i for i in seg.instrs for v in i.results}
    late = _after_reduce(seg)
    needed = _needed_scalars(m, seg)
    stmts = m.scalar_slice([_value_of(m, vid) for vid in needed if vid not in defined_here], known)
    stmts += [m.scalar(i) for i in seg.instrs if i.results and i.result.id in needed
              and i.result.id in defined_here and i.result.id not in late and i.op is not Op.CONST]
    for i in loads:
        stmts += memory.dequeue(m, i)
    outs = []
    for s in stores:
        queue = m.plan.store_queues[id(s)]
        dt = s.operands[-1].type.dtype
        local = m.local(queue, dt)
        outs.append((queue, local, s))
        stmts.append(Stmt(f"LocalTensor<{dt.cpp}> {local} = {queue}.AllocTensor<{dt.cpp}>();"))
    for instr in seg.instrs:
        if instr.op in (Op.BLOCK_LOAD, Op.BLOCK_STORE):
            continue
        if instr.results and instr.result.type.is_scalar and instr.op not in GroupOp.REDUCE:
            if instr.result.id in late and instr.result.id in needed and instr.op is not Op.CONST:
                stmts.append(m.scalar(instr))
            continue
        stmts += compute.vector(m, instr)
    for queue, local, s in outs:
        value = s.operands[-1]
        if m.plan.homes.get(value.id) != queue:
            stmts.append(compute.copy(m, local, value, queue))
    if seg.yields:
        stmts += compute.yield_copies(m, *seg.yields)
    for loop in seg.loop_inits:
        stmts += compute.init_accs(m, loop)
    for queue, local, s in outs:
        stmts.append(Stmt(f"{queue}.EnQue({local});"))
    for i in loads:
        queue = memory.in_queue(m, i.result)
        stmts.append(Stmt(f"{queue}.FreeTensor({m.local(queue, i.result.type.dtype)});"))
    if not any(s.vector or not s.text.startswith("const ") for s in stmts):
        return []
    stmts[0:0] = _views(stmts) + _tbuf_gets(m, seg)
    return with_barriers(stmts, {b.name for b in m.plan.buffers if b.position == "VECCALC"})


def _views(stmts: list[Stmt]) -> list[Stmt]:
    """``LocalTensor`` views of the scalar block and the Brcb buffer the statements use."""
    text = "\n".join(s.text for s in stmts)
    out = []
    for buf in ("scalar", "brcb"):
        for d in (dtypes.float32, *(d for d in dtypes.FLOATS if d != dtypes.float32)):
            name = buf if d == dtypes.float32 else f"{buf}{d.short.capitalize()}"
            if re.search(rf"\b{name}\b", text):
                out.append(Stmt(f"LocalTensor<{d.cpp}> {name} = {buf}Buf.Get<{d.cpp}>();"))
    return out


def _value_of(m: KernelModel, vid: int) -> Value:
    if vid in m.defs:
        return next(v for v in m.defs[vid].results if v.id == vid)
    return next(p for p in m.kernel.params if p.id == vid) if vid in m.names else Value(vid, None)


def _needed_scalars(m: KernelModel, seg: _Segment) -> set[int]:
    """Scalar value ids the compute stage reads (vector operands, load extents, loop inits), with
    the scalars they are computed from."""
    roots = [x for i in seg.instrs if i.op not in (Op.BLOCK_LOAD, Op.BLOCK_STORE) and not (
        i.results and i.result.type.is_scalar and i.op not in GroupOp.REDUCE) for x in i.operands]
    roots += [x for i in seg.instrs if i.op is Op.BLOCK_LOAD for x in memory.fill_operands(i)]
    for loop in seg.loop_inits:
        roots += list(loop.operands[3:])
    needed: set[int] = set()
    todo = [x for x in roots if x.type.is_scalar]
    while todo:
        v = todo.pop()
        if v.id in needed:
            continue
        needed.add(v.id)
        d = m.defs.get(v.id)
        if d is not None and d.op not in GroupOp.REDUCE:
            todo += [x for x in d.operands if x.type.is_scalar]
    return needed


def _after_reduce(seg: _Segment) -> set[int]:
    late: set[int] = set()
    for i in seg.instrs:
        if i.op in GroupOp.REDUCE or any(x.id in late for x in i.operands):
            late.update(v.id for v in i.results)
    return late


def _tbuf_gets(m: KernelModel, seg: _Segment) -> list[Stmt]:
    used: dict[str, tuple[str, str]] = {}
    values = [v for i in seg.instrs for v in (*i.results, *i.operands)]
    values += [i.operands[0] for i in seg.instrs if i.op is Op.BROADCAST and i.result.id in m.plan.fused]
    for loop in seg.loop_inits:
        values += list(loop.regions[0].args[1:])
    if seg.yields:
        values += list(seg.yields[1].args[1:])
    for v in values:
        home = m.plan.homes.get(v.id)
        if home and not home.startswith(("inQueue", "outQueue")):
            used.setdefault(m.local(home, v.type.dtype), (home, cpp(v.type.dtype)))
    return [Stmt(f"LocalTensor<{cpp}> {name} = {home}.Get<{cpp}>();") for name, (home, cpp) in sorted(used.items())]


def with_barriers(stmts: list[Stmt], tbufs: set[str]) -> list[str]:
    """Statement lines with ``PipeBarrier<PIPE_V>()`` before each vector op that depends on an
    earlier one (read after write, or write after read/write) since the last barrier. TBufs may
    hold results of earlier stages, so they count as freshly written at the start."""
    written, read = set(tbufs), set()
    lines = []
    for s in stmts:
        if s.vector:
            if (s.reads & written) or (s.writes & (written | read)):
                lines.append("PipeBarrier<PIPE_V>();")
                written, read = set(), set()
            written |= s.writes
            read |= s.reads
        lines += s.text.split("\n")
    return lines
