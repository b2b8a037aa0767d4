"""The render model's core: one variant's post-pass kernel, its UB plan, and C++ names for its values.

Every other emission module (:mod:`.stages`, :mod:`.memory`, :mod:`.compute`, :mod:`.reduce`) reads
a :class:`KernelModel` and returns :class:`Stmt` lists; this module only names things: global
tensors, local tensors of UB homes, scalar expressions (of ``pid``, loop variables, tiling fields
and the scalars ``Process`` passes the stages) and literals of exact element types.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from .. import dtypes, numerics
from ..errors import CompilationError, Loc, source_path
from ..ir.core import GroupOp, Instr, Kernel, Op, Value, walk
from ..passes import run_passes
from ..passes.ubplan import UBPlan, padded_numel, pitch, plan
from ..platforms import Platform
from .tiling import TilingLayout, Variant

F32 = dtypes.float32
C_BINARY = {Op.ADD: "+", Op.SUB: "-", Op.MUL: "*", Op.IDIV: "/", Op.MOD: "%", Op.DIV: "/",
            Op.LT: "<", Op.LE: "<=", Op.GT: ">", Op.GE: ">=", Op.EQ: "==", Op.NE: "!=",
            Op.AND: "&", Op.OR: "|", Op.XOR: "^"}
"""Scalar ops that are one C++ infix operator."""


def cpp(dtype) -> str:
    """The C++ element type of a tile of ``dtype`` in UB: a bool tile is ``Compare``'s bit mask."""
    return "uint8_t" if dtype == dtypes.bool_ else dtype.cpp


def where(loc: Loc) -> str:
    """``path:LINE`` of ``loc``, the path as generated files name it (:func:`ascdsl.errors.source_path`)."""
    return f"{source_path(loc.file)}:{loc.line}"


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


def unsupported(instr: Instr, what: str) -> CompilationError:
    return CompilationError(instr.loc, f"the Ascend C backend does not support {what} yet",
                            hint="run this kernel on the interpreter (backend='interpreter')")


@dataclass
class Stmt:
    """One C++ statement (maybe several lines) and the UB homes a vector op reads and writes."""

    text: str
    reads: frozenset = frozenset()
    writes: frozenset = frozenset()
    vector: bool = False


def vec(text: str, reads=(), writes=()) -> Stmt:
    return Stmt(text, frozenset(reads), frozenset(writes), True)


@dataclass
class Method:
    name: str
    params: str
    lines: list = field(default_factory=list)


class KernelModel:
    """One variant: its kernel after the passes, its UB plan, and the names of its values."""

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
        self.member_decls: list[str] = []
        self.from_vector: dict[int, bool] = {}  # scalar value id -> computed from a vector result
        self.methods: list[Method] = []
        self.process: list[str] = []
        self.single = not any(i.op is Op.FOR for i in walk(k.body))
        for instr in walk(k.body):
            if any(len(v.type.shape) > 2 for v in (*instr.results, *instr.operands)):
                raise unsupported(instr, "tiles of rank 3 or more")
            if instr.op is Op.IF:
                raise unsupported(instr, "`if` statements in kernels")
            if instr.op is Op.PRINT:
                raise unsupported(instr, "device_print")

    # ------------------------------------------------------------------ layout
    def pitch(self, v: Value) -> int:
        """Elements per UB row of tile ``v``."""
        return pitch(v.type.shape, self.plan.align)

    def count(self, v: Value) -> int:
        """Elements tile ``v`` occupies in UB (count-form ops cover them all)."""
        return padded_numel(v.type.shape, self.plan.align)

    def is_2d(self, v: Value) -> bool:
        return len(v.type.shape) == 2 and v.type.shape[1] > 1

    # ------------------------------------------------------------------ names
    def gm(self, ptr: Value) -> str:
        return self.names[ptr.id].removesuffix("_ptr") + "Gm"

    def home(self, v: Value) -> str:
        return self.plan.homes[v.id]

    def tensor(self, v: Value) -> str:
        return self.local(self.plan.homes[v.id], v.type.dtype)

    def local(self, home: str, dtype) -> str:
        if home.startswith(("inQueue", "outQueue")):
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

    def const_of(self, v: Value):
        """The value of ``v`` when it is a constant, else None."""
        d = self.defs.get(v.id)
        return d.attr("value") if d is not None and d.op is Op.CONST else None

    def scalar_as(self, x: Value, dtype) -> str:
        """Scalar ``x`` as a C++ expression of ``dtype`` (a 16-bit float constant rounded to its own dtype
        first, as the interpreter holds it)."""
        c = self.const_of(x)
        if c is not None:
            if x.type.dtype != dtype and x.type.dtype.is_float and x.type.dtype.itemsize == 2:
                c = float(numerics.cast(np.array(c, F32.np), x.type.dtype.np))
            return literal(c, dtype)
        return self.value(x) if x.type.dtype == dtype else f"static_cast<{dtype.cpp}>({self.value(x)})"

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
                raise unsupported(instr, "a scalar computed from tiles in another stage")
            need[v.id] = instr
            todo.extend(instr.operands)
        return [self.scalar(i) for i in sorted(need.values(), key=lambda i: self.order[id(i)])]

    def scalar(self, instr: Instr) -> Stmt:
        v = instr.result
        t = v.type.dtype.cpp
        xs = [self.value(x) for x in instr.operands]
        op = instr.op
        if op is Op.PROGRAM_ID:
            expr = ["pid % tiling_.grid0", "pid / tiling_.grid0 % tiling_.grid1",
                    "pid / (tiling_.grid0 * tiling_.grid1)"][instr.attr("axis")]
        elif op is Op.NUM_PROGRAMS:
            expr = f"tiling_.grid{instr.attr('axis')}"
        elif op in C_BINARY:
            expr = f"{xs[0]} {C_BINARY[op]} {xs[1]}"
        elif op in (Op.MAXIMUM, Op.MINIMUM):
            expr = f"{xs[0]} {'>' if op is Op.MAXIMUM else '<'} {xs[1]} ? {xs[0]} : {xs[1]}"
        elif op is Op.CAST:
            expr = f"static_cast<{t}>({xs[0]})"
        elif op is Op.NEG:
            expr = f"-{xs[0]}"
        else:
            raise unsupported(instr, f"the scalar op `{op.value}`")
        return Stmt(f"const {t} v{v.id} = {expr};  // {where(instr.loc)}")
