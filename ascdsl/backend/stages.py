"""Pipeline staging: the kernel body becomes ``Process`` plus CopyIn/Compute/CopyOut methods.

The body is cut at its ``for`` loops into segments; each segment gets ``CopyIn<k>`` (block loads
into VECIN queues), ``Compute<k>`` (vector ops) and ``CopyOut<k>`` (block stores from VECOUT
queues). Loops stay loops in ``Process``; loop-carried tiles live in accumulator ``TBuf``s.
``Process`` computes each scalar once per program or loop iteration, where it is defined, and
passes the stages the ones they read as ``const`` parameters; scalars computed from a vector result
(read after a V_S flag) stay in the stage that reads them.
``PipeBarrier<PIPE_V>`` goes between dependent vector ops (:func:`with_barriers`).
"""
from __future__ import annotations

import re

from .. import dtypes
from ..ir.core import GroupOp, Instr, Op, Value, walk
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
    m.process = _region(m, m.kernel.body, [], set())


class _Scope:
    """The scalars ``Process`` has in scope where a segment runs: loop variables and the scalars
    computed once per program or loop iteration, in program order."""

    def __init__(self, values: list[Value], known: set[int]):
        self.values, self.known = values, known

    def add(self, m: KernelModel, stmts: list[Stmt]) -> list[str]:
        for s in stmts:
            vid = int(re.match(r"const \S+ v(\d+) ", s.text).group(1))
            self.values.append(_value_of(m, vid))
            self.known.add(vid)
        return [s.text for s in stmts]


def _region(m: KernelModel, block, ivs: list[Value], known: set[int]) -> list[str]:
    """``Process`` lines for ``block``: per-iteration scalars, stage calls and loops."""
    lines: list[str] = []
    seg = _Segment()
    scope = _Scope(list(ivs), set(known) | {v.id for v in ivs})
    for instr in block.body:
        if instr.op is Op.FOR:
            seg.loop_inits.append(instr)
            lines += _emit_segment(m, seg, scope)
            lower, upper, step = instr.operands[:3]
            if not isinstance(m.const_of(step), int) or m.const_of(step) <= 0:
                raise unsupported(instr, "loops without a constant positive step")
            if any(a.type.is_scalar for a in instr.regions[0].args[1:]):
                raise unsupported(instr, "scalars carried by loops")
            roots = [lower, upper] + _free_scalars(m, instr, scope.known)
            lines += scope.add(m, m.scalar_slice(roots, scope.known))
            iv = instr.regions[0].args[0]
            inner = _region(m, instr.regions[0], scope.values + [iv], scope.known)
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
    return lines + _emit_segment(m, seg, scope)


def _emit_segment(m: KernelModel, seg: _Segment, scope: _Scope) -> list[str]:
    if not seg.instrs and not seg.loop_inits and not seg.yields:
        return []
    m.segments.append(seg)
    seg.index = len(m.segments) - 1
    roots = [v for v in _segment_roots(m, seg) if not _from_vector(m, v)]
    lines = scope.add(m, m.scalar_slice(roots, scope.known))
    return lines + [f"{name}({', '.join(args)});" for name, args in _stage_methods(m, seg, scope)]


def _segment_roots(m: KernelModel, seg: _Segment) -> list[Value]:
    """Scalars the stages of ``seg`` read: block access offsets and extents, and what Compute reads."""
    roots = [x for i in seg.instrs if i.op is Op.BLOCK_LOAD for x in i.operands[1:]]
    roots += [x for i in seg.instrs if i.op is Op.BLOCK_STORE for x in i.operands[1:-1]]
    return [x for x in roots if x.type.is_scalar] + [_value_of(m, vid) for vid in sorted(_needed_scalars(m, seg))]


def _from_vector(m: KernelModel, v: Value) -> bool:
    """Whether scalar ``v`` is (computed from) a vector result read after a V_S flag; such scalars
    stay in the stage that reads them."""
    memo = m.from_vector
    if v.id not in memo:
        d = m.defs.get(v.id)
        memo[v.id] = v.id in m.members or (d is not None and (
            d.op in GroupOp.REDUCE or any(_from_vector(m, x) for x in d.operands if x.type.is_scalar)))
    return memo[v.id]


def _free_scalars(m: KernelModel, loop: Instr, known: set[int]) -> list[Value]:
    """Scalars defined outside ``loop`` that its body's stages read (computed once, before the loop)."""
    body = list(walk(loop.regions[0]))
    inside = {v.id for i in body for v in i.results} | {
        a.id for i in [loop, *body] for r in i.regions for a in r.args}
    roots: list[Value] = []
    for i in body:
        if i.op is Op.FOR:
            roots += list(i.operands[:3])
        seg = _Segment()
        seg.instrs = [i] if i.op not in (Op.FOR, Op.YIELD) else []
        seg.loop_inits = [i] if i.op is Op.FOR else []
        roots += _segment_roots(m, seg)
    out, seen = [], set()
    while roots:
        v = roots.pop()
        if v.id in seen or v.id in known or v.id in m.names or not v.type.is_scalar or _from_vector(m, v):
            continue
        seen.add(v.id)
        d = m.defs.get(v.id)
        if d is None or d.op is Op.CONST:
            continue
        if v.id in inside:
            roots += d.operands
        else:
            out.append(v)
    return out


def _stage_methods(m: KernelModel, seg: _Segment, scope: _Scope) -> list[tuple[str, list[str]]]:
    """``(name, call arguments)`` of the stages of ``seg``; each takes the ``Process`` scalars it reads."""
    known = scope.known
    loads = [i for i in seg.instrs if i.op is Op.BLOCK_LOAD]
    stores = [i for i in seg.instrs if i.op is Op.BLOCK_STORE]
    sfx = "" if m.single else str(seg.index)
    stages = [("CopyIn", loads and (lambda: _copy_stage(m, loads, known, memory.copy_in, 1, None))),
              ("Compute", lambda: _compute(m, seg, known, loads, stores)),
              ("CopyOut", stores and (lambda: _copy_stage(m, stores, known, memory.copy_out, 1, -1)))]
    calls = []
    for name, make in stages:
        lines = make() if make else []
        if lines:  # a segment of scalars only (computed where they are read) has no stage
            used = set(re.findall(r"\b(pid|v\d+)\b", "\n".join(re.sub(r"//.*", "", x) for x in lines)))
            args = (["pid"] if "pid" in used else []) + [f"v{v.id}" for v in scope.values if f"v{v.id}" in used]
            params = ["const int32_t pid"] if "pid" in used else []
            params += [f"const {v.type.dtype.cpp} v{v.id}" for v in scope.values if f"v{v.id}" in used]
            m.methods.append(Method(name + sfx, ", ".join(params), lines))
            calls.append((name + sfx, args))
    return calls


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
    stmts += [m.scalar(i) for i in seg.instrs if i.results and i.result.id in needed and i.result.id not in known
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
