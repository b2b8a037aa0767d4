"""Ascend C kernel emission: post-pass IR -> render model -> ``templates/kernel.cpp.j2``.

Each kernel variant becomes one class. ``Process`` walks the program ids of its block
(``pid = GetBlockIdx(); pid < programs; pid += GetBlockNum()``) and, per program, runs *stages*:
the kernel body is cut at its ``for`` loops into segments, and each segment gets ``CopyIn<k>``
(block loads: ``DataCopy``/``DataCopyPad`` into a VECIN queue), ``Compute<k>`` (vector ops) and
``CopyOut<k>`` (block stores from a VECOUT queue). Loops stay loops in ``Process``; loop-carried
tiles live in accumulator ``TBuf``s. Scalars (offsets, extents, loop bounds) are recomputed in
each stage from ``pid``, loop variables and tiling fields; scalars a vector reduction produced are
class members. Supported tiles are 1-D; anything else is a located CompilationError.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from .. import dtypes
from ..errors import CompilationError, Loc
from ..ir.core import GroupOp, Instr, Kernel, Op, Value, walk
from ..passes import run_passes
from ..passes.ubplan import UBPlan, align32, plan
from ..platforms import Platform, get_platform
from . import isel
from .render import render
from .tiling import TilingLayout, Variant

F32 = dtypes.float32


def _root_dir() -> Path:
    return Path(__file__).resolve().parents[2]


def _where(loc: Loc) -> str:
    path = Path(loc.file)
    path = path if path.is_absolute() else Path.cwd() / path
    try:
        return f"{path.resolve().relative_to(_root_dir())}:{loc.line}"
    except ValueError:
        return f"{path.name}:{loc.line}"


def literal(value, dtype) -> str:
    """A C++ literal of exactly ``dtype``: ``2.0f``, ``(half)2.0f``, ``-INFINITY``, ``7``."""
    if dtype.is_float:
        v = float(value)
        text = ("-INFINITY" if v < 0 else "INFINITY") if math.isinf(v) else "NAN" if math.isnan(v) else repr(v) + "f"
        if "e" in text and "." not in text.split("e")[0]:
            text = text.replace("e", ".0e")
        return text if dtype == F32 else f"({dtype.cpp}){text}"
    if dtype.kind == "bool":
        return "true" if value else "false"
    return str(int(value))


def _unsupported(instr: Instr, what: str) -> CompilationError:
    return CompilationError(instr.loc, f"the Ascend C backend does not support {what} yet",
                            hint="run this kernel on the interpreter (backend='interpreter')")


@dataclass
class Stmt:
    text: str
    reads: frozenset = frozenset()
    writes: frozenset = frozenset()
    vector: bool = False


@dataclass
class Method:
    name: str
    params: str
    lines: list = field(default_factory=list)


class _Segment:
    def __init__(self, index: int):
        self.index = index
        self.instrs: list[Instr] = []
        self.loop_inits: list[Instr] = []  # loops whose accumulators this segment initialises
        self.yields: tuple[Instr, Block] | None = None


class _Class:
    """The render model of one variant's class."""

    def __init__(self, variant: Variant, layout: TilingLayout, platform: Platform):
        self.variant, self.layout, self.platform = variant, layout, platform
        self.kernel: Kernel = run_passes(variant.kernel, platform)
        self.plan: UBPlan = plan(self.kernel)
        k = self.kernel
        self.names = dict(zip((p.id for p in k.params), k.param_names))
        self.pointers = [(p, n) for p, n in zip(k.params, k.param_names) if not p.type.is_scalar or
                         not isinstance(p.type.dtype, dtypes.DType)]
        self.defs: dict[int, Instr] = {v.id: i for i in walk(k.body) for v in i.results}
        self.order = {id(i): n for n, i in enumerate(walk(k.body))}
        self.members: dict[int, str] = {}  # scalar value id -> member name
        self.segments: list[_Segment] = []
        self.methods: list[Method] = []
        self.single = not any(i.op is Op.FOR for i in walk(k.body))
        self._check()

    # ------------------------------------------------------------------ checks
    def _check(self) -> None:
        for instr in walk(self.kernel.body):
            for v in (*instr.results, *instr.operands):
                if len(v.type.shape) > 1:
                    raise _unsupported(instr, "tiles of rank 2 or more")
            if instr.op is Op.IF:
                raise _unsupported(instr, "`if` statements in kernels")
            if instr.op is Op.PRINT:
                raise _unsupported(instr, "device_print")

    # ------------------------------------------------------------------ names
    def gm(self, ptr: Value) -> str:
        return self.names[ptr.id].removesuffix("_ptr") + "Gm"

    def value(self, v: Value) -> str:
        """The C++ expression of scalar ``v``."""
        instr = self.defs.get(v.id)
        if v.id in self.members:
            return self.members[v.id]
        if instr is None and v.id in self.names:
            return f"tiling_.{self.names[v.id]}"
        if instr is not None and instr.op is Op.CONST:
            return literal(instr.attr("value"), v.type.dtype)
        return f"v{v.id}"

    def tensor(self, v: Value) -> str:
        return self.local(self.plan.homes[v.id], v.type.dtype)

    def local(self, home: str, dtype) -> str:
        if home.startswith("inQueue") or home.startswith("outQueue"):
            stem = home.removeprefix("inQueue").removeprefix("outQueue")
            return stem[0].lower() + stem[1:] + ("In" if home.startswith("in") else "Out")
        stem = home.removesuffix("Buf").replace("Buf", "")
        return stem if dtype == self.home_dtype(home) else f"{stem}{dtype.short.capitalize()}"

    def home_dtype(self, home: str):
        for vid, h in sorted(self.plan.homes.items()):
            if h == home:
                return self._dtype_of(vid)
        return F32

    def _dtype_of(self, vid: int):
        if vid in self.defs:
            return next(v for v in self.defs[vid].results if v.id == vid).type.dtype
        for instr in walk(self.kernel.body):
            for r in instr.regions:
                for a in r.args:
                    if a.id == vid:
                        return a.type.dtype
        return F32

    # ------------------------------------------------------------------ scalars
    def scalar_slice(self, roots: Sequence[Value], known: set[int]) -> list[Stmt]:
        """Definitions of the scalars ``roots`` need, in program order (``known`` are in scope)."""
        need: dict[int, Instr] = {}
        todo = list(roots)
        while todo:
            v = todo.pop()
            if v.id in known or v.id in self.members or v.id in need or v.id in self.names:
                continue
            instr = self.defs.get(v.id)
            if instr is None:
                raise CompilationError(self.kernel.loc, f"internal: scalar %{v.id} is out of scope")
            if instr.op is Op.CONST:
                continue
            if not v.type.is_scalar or instr.op in GroupOp.REDUCE:
                raise _unsupported(instr, "a scalar computed from tiles in another stage")
            need[v.id] = instr
            todo.extend(instr.operands)
        return [self._scalar(i) for i in sorted(need.values(), key=lambda i: self.order[id(i)])]

    def _scalar(self, instr: Instr) -> Stmt:
        v = instr.result
        t = v.type.dtype.cpp
        xs = [self.value(x) for x in instr.operands]
        op = instr.op
        if op is Op.PROGRAM_ID:
            axis = instr.attr("axis")
            expr = ["pid % tiling_.grid0", "pid / tiling_.grid0 % tiling_.grid1",
                    "pid / (tiling_.grid0 * tiling_.grid1)"][axis]
        elif op is Op.NUM_PROGRAMS:
            expr = f"tiling_.grid{instr.attr('axis')}"
        elif op in _C_BINARY:
            expr = f"{xs[0]} {_C_BINARY[op]} {xs[1]}"
        elif op is Op.MAXIMUM:
            expr = f"{xs[0]} > {xs[1]} ? {xs[0]} : {xs[1]}"
        elif op is Op.MINIMUM:
            expr = f"{xs[0]} < {xs[1]} ? {xs[0]} : {xs[1]}"
        elif op is Op.CAST:
            expr = f"static_cast<{t}>({xs[0]})"
        elif op is Op.NEG:
            expr = f"-{xs[0]}"
        else:
            raise _unsupported(instr, f"the scalar op `{op.value}`")
        return Stmt(f"const {t} v{v.id} = {expr};  // {_where(instr.loc)}")

    # ------------------------------------------------------------------ structure
    def build(self) -> None:
        body = self._region(self.kernel.body, [], [])
        self.process = body

    def _region(self, block, ivs: list[Value], enclosing) -> list[str]:
        """``Process`` lines for ``block``: stage calls and loops."""
        lines: list[str] = []
        seg = self._new_segment()
        known = {v.id for v in ivs}
        for instr in block.body:
            if instr.op is Op.FOR:
                seg.loop_inits.append(instr)
                lines += self._emit_segment(seg, ivs)
                lower, upper, step = instr.operands[:3]
                step_instr = self.defs.get(step.id)
                if step_instr is None or step_instr.op is not Op.CONST or step_instr.attr("value") <= 0:
                    raise _unsupported(instr, "loops without a constant positive step")
                if any(a.type.is_scalar for a in instr.regions[0].args[1:]):
                    raise _unsupported(instr, "scalars carried by loops")
                lines += [s.text for s in self.scalar_slice([lower, upper], known)]
                iv = instr.regions[0].args[0]
                inner = self._region(instr.regions[0], ivs + [iv], enclosing + [instr])
                lines.append(f"for (int32_t v{iv.id} = {self.value(lower)}; v{iv.id} < {self.value(upper)}; "
                             f"v{iv.id} += {self.value(step)}) {{  // {_where(instr.loc)}")
                lines += ["    " + line for line in inner]
                lines.append("}")
                seg = self._new_segment()
            elif instr.op is Op.YIELD:
                if instr.operands:
                    seg.yields = (instr, block)
            else:
                seg.instrs.append(instr)
        lines += self._emit_segment(seg, ivs)
        return lines

    def _new_segment(self) -> _Segment:
        return _Segment(len(self.segments))

    def _emit_segment(self, seg: _Segment, ivs: list[Value]) -> list[str]:
        if not seg.instrs and not seg.loop_inits and not seg.yields:
            return []
        self.segments.append(seg)
        seg.index = len(self.segments) - 1
        return [f"{name}({', '.join(['pid'] + [f'v{iv.id}' for iv in ivs])});"
                for name in self._stage_methods(seg, ivs)]

    def _suffix(self, seg: _Segment) -> str:
        return "" if self.single else str(seg.index)

    def _stage_methods(self, seg: _Segment, ivs: list[Value]) -> list[str]:
        params = ", ".join(["int32_t pid"] + [f"int32_t v{iv.id}" for iv in ivs])
        known = {iv.id for iv in ivs}
        loads = [i for i in seg.instrs if i.op is Op.BLOCK_LOAD]
        stores = [i for i in seg.instrs if i.op is Op.BLOCK_STORE]
        names = []
        sfx = self._suffix(seg)
        if loads:
            m = Method("CopyIn" + sfx, params)
            roots = [x for i in loads for x in i.operands[1:] if x.type.is_scalar]
            stmts = self.scalar_slice(roots, known)
            for i in loads:
                stmts += self._copy_in(i)
            m.lines = [s.text for s in stmts]
            self.methods.append(m)
            names.append(m.name)
        m = Method("Compute" + sfx, params)
        m.lines = self._compute(seg, known, loads, stores)
        self.methods.append(m)
        names.append(m.name)
        if stores:
            m = Method("CopyOut" + sfx, params)
            roots = [x for i in stores for x in i.operands[1:-1]]
            stmts = self.scalar_slice(roots, known)
            for i in stores:
                stmts += self._copy_out(i)
            m.lines = [s.text for s in stmts]
            self.methods.append(m)
            names.append(m.name)
        return names

    # ------------------------------------------------------------------ data movement
    def _extent(self, instr: Instr) -> tuple[Value, bool]:
        (size,) = instr.attr("shape")
        e = instr.operands[2]
        d = self.defs.get(e.id)
        full = d is not None and d.op is Op.CONST and d.attr("value") == size
        return e, full

    def _copy_in(self, instr: Instr) -> list[Stmt]:
        v = instr.result
        dt, (size,) = v.type.dtype, instr.attr("shape")
        queue, local = self.plan.homes[v.id], self.tensor(v)
        base, offset = instr.operands[:2]
        e, full = self._extent(instr)
        where = _where(instr.loc)
        out = [Stmt(f"LocalTensor<{dt.cpp}> {local} = {queue}.AllocTensor<{dt.cpp}>();  // {where}")]
        src = f"{self.gm(base)}[{self.value(offset)}]"
        if full and size * dt.itemsize % 32 == 0:
            out.append(Stmt(f"DataCopy({local}, {src}, {size});"))
        else:
            count = str(size) if full else self.value(e)
            per = 32 // dt.itemsize
            pad = "0" if full and size % per == 0 else f"static_cast<uint8_t>(({count} + {per - 1}) / {per} * {per} - {count})"
            other = instr.operands[-1] if instr.attr("has_other") else None
            pad_value = self.value(other) if other is not None else "0"
            if other is not None and other.type.dtype != dt:
                pad_value = f"static_cast<{dt.cpp}>({pad_value})"
            is_pad = "true" if other is not None else "false"
            out.append(Stmt(f"DataCopyExtParams {local}Params{{1, static_cast<uint32_t>({count} * sizeof({dt.cpp})), 0, 0, 0}};"))
            out.append(Stmt(f"DataCopyPadExtParams<{dt.cpp}> {local}Pad{{{is_pad}, 0, {pad if other is not None else '0'}, {pad_value}}};"))
            out.append(Stmt(f"DataCopyPad({local}, {src}, {local}Params, {local}Pad);"))
        out.append(Stmt(f"{queue}.EnQue({local});"))
        return out

    def _copy_out(self, instr: Instr) -> list[Stmt]:
        value = instr.operands[-1]
        dt, (size,) = value.type.dtype, instr.attr("shape")
        queue = self._out_queue(instr)
        local = self.local(queue, dt)
        base, offset = instr.operands[:2]
        e, full = self._extent(instr)
        dst = f"{self.gm(base)}[{self.value(offset)}]"
        out = [Stmt(f"LocalTensor<{dt.cpp}> {local} = {queue}.DeQue<{dt.cpp}>();  // {_where(instr.loc)}")]
        if full and size * dt.itemsize % 32 == 0:
            out.append(Stmt(f"DataCopy({dst}, {local}, {size});"))
        else:
            count = str(size) if full else self.value(e)
            out.append(Stmt(f"DataCopyExtParams {local}Params{{1, static_cast<uint32_t>({count} * sizeof({dt.cpp})), 0, 0, 0}};"))
            out.append(Stmt(f"DataCopyPad({dst}, {local}, {local}Params);"))
        out.append(Stmt(f"{queue}.FreeTensor({local});"))
        return out

    def _out_queue(self, store: Instr) -> str:
        return "outQueue" + _camel(self.names[store.operands[0].id])

    # ------------------------------------------------------------------ compute
    def _compute(self, seg: _Segment, known: set[int], loads, stores) -> list[str]:
        defined_here = {v.id: i for i in seg.instrs for v in i.results}
        late = self._after_reduce(seg)
        needed = self._needed_scalars(seg)
        stmts = self.scalar_slice([self._value_of(vid) for vid in needed if vid not in defined_here], known)
        stmts += [self._scalar(i) for i in seg.instrs if i.results and i.result.id in needed
                  and i.result.id in defined_here and i.result.id not in late and i.op is not Op.CONST]
        for i in loads:
            stmts += self._dequeue(i)
        outs = []
        for s in stores:
            queue = self._out_queue(s)
            dt = s.operands[-1].type.dtype
            local = self.local(queue, dt)
            outs.append((queue, local, s))
            stmts.append(Stmt(f"LocalTensor<{dt.cpp}> {local} = {queue}.AllocTensor<{dt.cpp}>();"))
        stmts[0:0] = self._tbuf_gets(seg)
        for instr in seg.instrs:
            if instr.op in (Op.BLOCK_LOAD, Op.BLOCK_STORE):
                continue
            if instr.results and instr.result.type.is_scalar and instr.op not in GroupOp.REDUCE:
                if instr.result.id in late and instr.result.id in needed and instr.op is not Op.CONST:
                    stmts.append(self._scalar(instr))
                continue
            stmts += self._vector(instr)
        for queue, local, s in outs:
            value = s.operands[-1]
            if self.plan.homes.get(value.id) != queue:
                stmts.append(self._copy(local, value, queue))
        if seg.yields:
            stmts += self._yield_copies(*seg.yields)
        for loop in seg.loop_inits:
            stmts += self._init_accs(loop)
        for queue, local, s in outs:
            stmts.append(Stmt(f"{queue}.EnQue({local});"))
        for i in loads:
            stmts.append(Stmt(f"{self.plan.homes[i.result.id]}.FreeTensor({self.tensor(i.result)});"))
        text = "\n".join(s.text for s in stmts)
        views = [("scalar", "float")] + [(f"scalar{d.short.capitalize()}", d.cpp) for d in dtypes.FLOATS if d != F32]
        stmts[0:0] = [Stmt(f"LocalTensor<{cpp}> {name} = scalarBuf.Get<{cpp}>();") for name, cpp in views
                      if re.search(rf"\b{name}\b", text)]
        return _with_barriers(stmts, {b.name for b in self.plan.buffers if b.position == "VECCALC"})

    def _value_of(self, vid: int) -> Value:
        if vid in self.defs:
            return next(v for v in self.defs[vid].results if v.id == vid)
        return next(p for p in self.kernel.params if p.id == vid) if vid in self.names else Value(vid, None)

    def _needed_scalars(self, seg: _Segment) -> set[int]:
        """Scalar value ids the compute stage reads (vector operands, load extents, loop inits), with
        the scalars they are computed from."""
        roots = [x for i in seg.instrs if i.op not in (Op.BLOCK_LOAD, Op.BLOCK_STORE) and not (
            i.results and i.result.type.is_scalar and i.op not in GroupOp.REDUCE) for x in i.operands]
        roots += [i.operands[2] for i in seg.instrs if i.op is Op.BLOCK_LOAD]
        roots += [i.operands[-1] for i in seg.instrs if i.op is Op.BLOCK_LOAD and i.attr("has_other")]
        for loop in seg.loop_inits:
            roots += list(loop.operands[3:])
        needed: set[int] = set()
        todo = [x for x in roots if x.type.is_scalar]
        while todo:
            v = todo.pop()
            if v.id in needed:
                continue
            needed.add(v.id)
            d = self.defs.get(v.id)
            if d is not None and d.op not in GroupOp.REDUCE:
                todo += [x for x in d.operands if x.type.is_scalar]
        return needed

    def _after_reduce(self, seg: _Segment) -> set[int]:
        late: set[int] = set()
        for i in seg.instrs:
            if i.op in GroupOp.REDUCE or any(x.id in late for x in i.operands):
                late.update(v.id for v in i.results)
        return late

    def _tbuf_gets(self, seg: _Segment) -> list[Stmt]:
        used: dict[str, tuple[str, str]] = {}
        values = [v for i in seg.instrs for v in (*i.results, *i.operands)]
        for loop in seg.loop_inits:
            values += list(loop.regions[0].args[1:])
        if seg.yields:
            values += list(seg.yields[1].args[1:])
        for v in values:
            home = self.plan.homes.get(v.id)
            if home and not home.startswith(("inQueue", "outQueue")):
                used.setdefault(self.local(home, v.type.dtype), (home, v.type.dtype.cpp))
        return [Stmt(f"LocalTensor<{cpp}> {name} = {home}.Get<{cpp}>();")
                for name, (home, cpp) in sorted(used.items())]

    def _dequeue(self, instr: Instr) -> list[Stmt]:
        v = instr.result
        dt, (size,) = v.type.dtype, instr.attr("shape")
        queue, local = self.plan.homes[v.id], self.tensor(v)
        out = [Stmt(f"LocalTensor<{dt.cpp}> {local} = {queue}.DeQue<{dt.cpp}>();")]
        e, full = self._extent(instr)
        if instr.attr("has_other") and not full:
            per = 32 // dt.itemsize
            other = self.value(instr.operands[-1])
            padded = f"{local}Valid"
            out.append(Stmt(f"const int32_t {padded} = ({self.value(e)} + {per - 1}) / {per} * {per};"))
            out.append(Stmt(f"if ({padded} < {size}) {{  // fill the tail with `other`\n"
                            f"    Duplicate({local}[{padded}], {other}, {size} - {padded});\n}}",
                            writes=frozenset({queue}), vector=True))
        return out

    def _copy(self, dst_local: str, value: Value, dst_home: str) -> Stmt:
        src = self.tensor(value)
        count = align32(value.type.numel * value.type.dtype.itemsize) // value.type.dtype.itemsize
        return Stmt(f"DataCopy({dst_local}, {src}, {count});", frozenset({self.plan.homes[value.id]}),
                    frozenset({dst_home}), True)

    def _init_accs(self, loop: Instr) -> list[Stmt]:
        out = []
        for init, arg in zip(loop.operands[3:], loop.regions[0].args[1:]):
            home = self.plan.homes[arg.id]
            dst = self.local(home, arg.type.dtype)
            d = self.defs.get(init.id)
            if d is not None and d.op is Op.CONST:
                out.append(Stmt(f"Duplicate({dst}, {literal(d.attr('value'), arg.type.dtype)}, "
                                f"{arg.type.numel});  // {_where(d.loc)}", frozenset(), frozenset({home}), True))
            elif self.plan.homes.get(init.id) != home:
                out.append(self._copy(dst, init, home))
        return out

    def _yield_copies(self, instr: Instr, block) -> list[Stmt]:
        out = []
        for value, arg in zip(instr.operands, block.args[1:]):
            home = self.plan.homes[arg.id]
            if self.plan.homes.get(value.id) != home:
                out.append(self._copy(self.local(home, arg.type.dtype), value, home))
        return out

    def _vector(self, instr: Instr) -> list[Stmt]:
        op, v = instr.op, instr.result
        where = _where(instr.loc)
        home = self.plan.homes.get(v.id)
        if op is Op.CONST:
            if v.id not in self.plan.homes:
                return []  # a loop's initial value: Duplicate'd into its accumulator
            dst = self.tensor(v)
            return [Stmt(f"Duplicate({dst}, {literal(instr.attr('value'), v.type.dtype)}, {v.type.numel});  // {where}",
                         writes=frozenset({home}), vector=True)]
        if op is Op.BROADCAST:
            (x,) = instr.operands
            if not x.type.is_scalar:
                raise _unsupported(instr, "broadcasting a tile")
            return [Stmt(f"Duplicate({self.tensor(v)}, {self._scalar_as(x, v.type.dtype)}, {v.type.numel});  // {where}",
                         writes=frozenset({home}), vector=True)]
        if op in GroupOp.REDUCE:
            return self._reduce(instr)
        if op is Op.CAST:
            return self._cast(instr)
        if op in isel.BINARY_API or op in isel.UNARY_API or op is Op.NEG:
            return self._arith(instr)
        raise _unsupported(instr, f"the tile op `{op.value}`")

    def _scalar_as(self, x: Value, dtype) -> str:
        d = self.defs.get(x.id)
        if d is not None and d.op is Op.CONST:
            return literal(d.attr("value"), dtype)
        return self.value(x) if x.type.dtype == dtype else f"static_cast<{dtype.cpp}>({self.value(x)})"

    def _arith(self, instr: Instr) -> list[Stmt]:
        op, v = instr.op, instr.result
        dt, n = v.type.dtype, v.type.numel
        where = f"  // {_where(instr.loc)}"
        xs = instr.operands
        native = op in isel.NATIVE.get(dt, ()) or (op is Op.NEG and dt in isel.NATIVE)
        native = native and all(x.type.dtype == dt for x in xs)
        home = self.plan.homes[v.id]
        reads = frozenset(self.plan.homes[x.id] for x in xs if not x.type.is_scalar)
        if not native:
            if not dt.is_float:
                raise _unsupported(instr, f"`{op.value}` on {dt}")
            return self._via_f32(instr)
        dst = self.tensor(v)
        tiles = [x for x in xs if not x.type.is_scalar]
        scalars = [x for x in xs if x.type.is_scalar]
        if op is Op.NEG:
            return [Stmt(f"Muls({dst}, {self.tensor(xs[0])}, {literal(-1.0 if dt.is_float else -1, dt)}, {n});{where}",
                         reads, frozenset({home}), True)]
        if op in isel.UNARY_API:
            return [Stmt(f"{isel.UNARY_API[op]}({dst}, {self.tensor(xs[0])}, {n});{where}", reads, frozenset({home}), True)]
        if not scalars:
            a, b = (self.tensor(x) for x in xs)
            return [Stmt(f"{isel.BINARY_API[op]}({dst}, {a}, {b}, {n});{where}", reads, frozenset({home}), True)]
        (s,) = scalars
        (t,) = tiles
        if op in isel.SCALAR_API:
            return [Stmt(f"{isel.SCALAR_API[op]}({dst}, {self.tensor(t)}, {self._scalar_as(s, dt)}, {n});{where}",
                         reads, frozenset({home}), True)]
        return self._scalar_block_op(isel.BINARY_API[op], dst, self.tensor(t), s, dt, n, xs[0] is s,
                                     reads, home, where)

    def _scalar_block_op(self, api, dst, tile, s, dt, n, scalar_first, reads, home, where) -> list[Stmt]:
        """``dst = tile op s`` (or ``s op tile``): ``s`` fills one 32-byte block that the
        repeat-form op reads with block and repeat stride 0, in chunks of at most 255 repeats."""
        per_rep, per_blk = 256 // dt.itemsize, 32 // dt.itemsize
        blk = "scalar" if dt == F32 else f"scalar{dt.short.capitalize()}"
        out = [Stmt(f"Duplicate({blk}, {self._scalar_as(s, dt)}, {per_blk});{where}", frozenset(),
                    frozenset({"scalarBuf"}), True)]
        params = "{1, 0, 1, 8, 0, 8}" if scalar_first else "{1, 1, 0, 8, 8, 0}"
        full, tail = divmod(n, per_rep)
        start = 0
        while full > 0:
            reps = min(full, 255)
            a, b = (blk, f"{tile}[{start}]") if scalar_first else (f"{tile}[{start}]", blk)
            out.append(Stmt(f"{api}({dst}[{start}], {a}, {b}, {per_rep}, {reps}, {params});",
                            reads | {"scalarBuf"}, frozenset({home}), True))
            start += reps * per_rep
            full -= reps
        if tail:
            a, b = (blk, f"{tile}[{start}]") if scalar_first else (f"{tile}[{start}]", blk)
            out.append(Stmt(f"{api}({dst}[{start}], {a}, {b}, {tail}, 1, {params});",
                            reads | {"scalarBuf"}, frozenset({home}), True))
        for st in out[1:]:
            st.text = st.text.replace("[0]", "") if "[0]" in st.text else st.text
        return out

    def _via_f32(self, instr: Instr) -> list[Stmt]:
        """A 16-bit float op: Cast the tile operands to float32 work buffers, compute, Cast back (RINT)."""
        op, v = instr.op, instr.result
        n, dt = v.type.numel, v.type.dtype
        where = f"  // {_where(instr.loc)}"
        out: list[Stmt] = []
        work = []
        new_operands = []
        for k, x in enumerate(instr.operands):
            if x.type.is_scalar:
                new_operands.append(x)
                continue
            w = f"workBuf.Get<float>()[{k * align32(n * 4) // 4}]" if k else "workBuf.Get<float>()"
            work.append(w)
            home = self.plan.homes[x.id]
            if x.type.dtype == F32:
                out.append(Stmt(f"DataCopy({w}, {self.tensor(x)}, {align32(n * 4) // 4});", frozenset({home}),
                                frozenset({"workBuf"}), True))
            else:
                out.append(Stmt(f"Cast({w}, {self.tensor(x)}, RoundMode::{isel.CAST_MODE[(x.type.dtype, F32)]}, {n});{where}",
                                frozenset({home}), frozenset({"workBuf"}), True))
            new_operands.append(w)
        w0 = work[0]
        tiles = [o for o in new_operands if isinstance(o, str)]
        scalars = [o for o in new_operands if not isinstance(o, str)]
        r = frozenset({"workBuf", "scalarBuf"})
        if op is Op.NEG:
            out.append(Stmt(f"Muls({w0}, {w0}, -1.0f, {n});", r, frozenset({"workBuf"}), True))
        elif op in isel.UNARY_API:
            out.append(Stmt(f"{isel.UNARY_API[op]}({w0}, {w0}, {n});", r, frozenset({"workBuf"}), True))
        elif not scalars:
            out.append(Stmt(f"{isel.BINARY_API[op]}({w0}, {tiles[0]}, {tiles[1]}, {n});", r, frozenset({"workBuf"}), True))
        elif op in isel.SCALAR_API:
            out.append(Stmt(f"{isel.SCALAR_API[op]}({w0}, {w0}, {self._scalar_as(scalars[0], F32)}, {n});", r,
                            frozenset({"workBuf"}), True))
        else:
            out += self._scalar_block_op(isel.BINARY_API[op], w0, w0, scalars[0], F32, n,
                                         instr.operands[0] is scalars[0], r, "workBuf", "")
        home = self.plan.homes[v.id]
        out.append(Stmt(f"Cast({self.tensor(v)}, {w0}, RoundMode::{isel.CAST_MODE[(F32, dt)]}, {n});",
                        frozenset({"workBuf"}), frozenset({home}), True))
        return out

    def _cast(self, instr: Instr) -> list[Stmt]:
        (x,) = instr.operands
        v = instr.result
        src, dst = x.type.dtype, v.type.dtype
        n = v.type.numel
        where = f"  // {_where(instr.loc)}"
        rd, wr = frozenset({self.plan.homes[x.id]}), frozenset({self.plan.homes[v.id]})
        if src == dst:
            return [self._copy(self.tensor(v), x, self.plan.homes[v.id])]
        if (src, dst) in isel.CAST_MODE:
            return [Stmt(f"Cast({self.tensor(v)}, {self.tensor(x)}, RoundMode::{isel.CAST_MODE[(src, dst)]}, {n});{where}",
                         rd, wr, True)]
        if src.is_float and dst.is_float:
            w = "workBuf.Get<float>()"
            return [Stmt(f"Cast({w}, {self.tensor(x)}, RoundMode::CAST_NONE, {n});{where}", rd, frozenset({"workBuf"}), True),
                    Stmt(f"Cast({self.tensor(v)}, {w}, RoundMode::CAST_RINT, {n});", frozenset({"workBuf"}), wr, True)]
        raise _unsupported(instr, f"casting {src} to {dst}")

    def _reduce(self, instr: Instr) -> list[Stmt]:
        op, v = instr.op, instr.result
        (x,) = instr.operands
        if op not in isel.REDUCE_API or not x.type.dtype.is_float:
            raise _unsupported(instr, f"`{op.value}` of {x.type.dtype} tiles")
        n = x.type.numel
        where = f"  // {_where(instr.loc)}"
        out = []
        src, reads = self.tensor(x), frozenset({self.plan.homes[x.id]})
        work_offset = 0
        if x.type.dtype != F32:
            out.append(Stmt(f"Cast(workBuf.Get<float>(), {src}, RoundMode::CAST_NONE, {n});{where}", reads,
                            frozenset({"workBuf"}), True))
            src, reads, work_offset = "workBuf.Get<float>()", frozenset({"workBuf"}), align32(4 * n) // 4
        work = f"workBuf.Get<float>()[{work_offset}]" if work_offset else "workBuf.Get<float>()"
        out.append(Stmt(f"{isel.REDUCE_API[op]}(scalar, {src}, {work}, {n});{where}", reads,
                        frozenset({"scalarBuf", "workBuf"}), True))
        member = f"s{v.id}_"
        self.members[v.id] = member
        self.member_decls.append(f"{v.type.dtype.cpp} {member};")
        if v.type.dtype != F32:
            blk = f"scalar{v.type.dtype.short.capitalize()}"
            out.append(Stmt(f"Cast({blk}[8], scalar, RoundMode::CAST_RINT, 1);", frozenset({"scalarBuf"}),
                            frozenset({"scalarBuf"}), True))
            read = f"{blk}.GetValue(8)"
        else:
            read = "scalar.GetValue(0)"
        out.append(Stmt("SetFlag<HardEvent::V_S>(eventVS_);\nWaitFlag<HardEvent::V_S>(eventVS_);"))
        out.append(Stmt(f"{member} = {read};"))
        return out


_C_BINARY = {Op.ADD: "+", Op.SUB: "-", Op.MUL: "*", Op.IDIV: "/", Op.MOD: "%", Op.DIV: "/",
             Op.LT: "<", Op.LE: "<=", Op.GT: ">", Op.GE: ">=", Op.EQ: "==", Op.NE: "!=",
             Op.AND: "&", Op.OR: "|", Op.XOR: "^"}


def _camel(name: str) -> str:
    parts = [p for p in name.removesuffix("_ptr").split("_") if p]
    return "".join(p.capitalize() for p in parts) or "Arg"


def _with_barriers(stmts: list[Stmt], tbufs: set[str]) -> list[str]:
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


def _class_model(variant: Variant, layout: TilingLayout, platform: Platform) -> dict:
    c = _Class(variant, layout, platform)
    c.member_decls = []
    c.build()
    k = c.kernel
    buffers = c.plan.buffers
    queues = [b for b in buffers if b.position != "VECCALC"]
    tbufs = [b for b in buffers if b.position == "VECCALC"]
    gms = [{"name": c.gm(p), "cpp": p.type.dtype.element_ty.cpp, "param": n} for p, n in c.pointers]
    uses_reduce = any(i.op in GroupOp.REDUCE for i in walk(k.body))
    return {
        "class_name": variant.class_name,
        "kernel_name": k.name,
        "constexprs": ", ".join(f"{n}={v}" for n, v in k.constexprs),
        "where": _where(k.loc),
        "struct": layout.struct_name,
        "gms": gms,
        "queues": [{"name": q.name, "position": q.position, "num": q.num, "bytes": q.bytes} for q in queues],
        "tbufs": [{"name": b.name, "bytes": b.bytes} for b in tbufs],
        "ub_total": c.plan.total_bytes,
        "uses_scalar": any(b.name == "scalarBuf" for b in tbufs),
        "uses_event": uses_reduce,
        "members": c.member_decls,
        "process": c.process,
        "methods": [{"name": m.name, "params": m.params, "lines": m.lines} for m in c.methods],
    }


def render_classes(variants: Sequence[Variant], layout: TilingLayout, platform: Platform | str) -> str:
    """Every variant's class (no includes, no entry)."""
    platform = get_platform(platform) if isinstance(platform, str) else platform
    return render("kernel_classes.cpp.j2", classes=[_class_model(v, layout, platform) for v in variants])


def kernel_source(symbol: str, variants: Sequence[Variant], layout: TilingLayout, platform: Platform | str) -> str:
    """A complete direct-launch kernel file: the tiling struct, the classes and the entry ``symbol``
    (the pointers of every variant in first-seen order, then ``workspace`` and ``tiling``)."""
    pointers: list[str] = []
    calls = []
    for v in variants:
        names = [n for p, n in zip(v.kernel.params, v.kernel.param_names) if not isinstance(p.type.dtype, dtypes.DType)]
        pointers += [n for n in names if n not in pointers]
        calls.append({"key": v.key, "class_name": v.class_name, "args": names})
    return render("kernel.cpp.j2", symbol=symbol, struct=layout.struct_name, struct_source=layout.struct_source(),
                  classes=render_classes(variants, layout, platform), pointers=pointers, calls=calls)


__all__ = ["kernel_source", "literal", "render_classes"]
