"""The scalars of a cube kernel as C++ text: program ids, offsets and bounds computed from the kernel's parameters
and constexprs (:class:`Scalars`), for the lowering of :mod:`.cube`."""
from __future__ import annotations

from functools import lru_cache

from ... import dtypes
from ...errors import CompilationError, Loc
from ...ir import Kernel, walk
from ...ir.core import Instr, Op, Value
from .. import kir
from ..render.emit import Printer, literal, where
from ..names.naming import Names, field_name, safe
from ..render.jinja import Located

HINT = ("write the Triton tutorial's form: a float32 accumulator carried by a `for` loop over K that loads "
        "two 2-D blocks and yields `tl.dot(a, b, acc)`, then a store of it (vector work on it before the store "
        "runs on the vector cores); or run this kernel on the interpreter (backend='interpreter')")
_BINARY = {Op.ADD: "+", Op.SUB: "-", Op.MUL: "*", Op.IDIV: "/", Op.MOD: "%", Op.LT: "<", Op.LE: "<=", Op.GT: ">",
           Op.GE: ">=", Op.EQ: "==", Op.NE: "!="}


class Scalars:
    """C++ expressions of the kernel's scalars; values the DSL named become ``const`` locals."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self.expr: dict[int, str] = {}
        self.canon: dict[int, str] = {}  # fully inlined: equal texts compute equal values
        self.names = dict(kernel.names)
        self.taken: set[str] = {"program", "programs_", "tiling_", "pipe", "c1", "first", "steps", "kChunk", "kDone",
                                 "bDone", "bStep", "bEnd", "bSum", "end", "step", "adjacent", "aOffsets", "bOffsets",
                                 "aStrides", "bStrides", "mTiles", "nTiles", "kTiles", "a1", "b1", "kSum", "part",
                                 "aKRows_", "bKRows_"}
        for name, p in zip(kernel.param_names, kernel.params):
            if p.type.is_scalar and isinstance(p.type.dtype, dtypes.DType):
                self.expr[p.id] = self.canon[p.id] = f"tiling_.{field_name(name)}"
            self.taken.add(safe(name))

    def fresh(self, base: str) -> str:
        name, n = safe(base), 1
        while name in self.taken:
            n += 1
            name = f"{safe(base)}{n}"
        self.taken.add(name)
        return name

    def of(self, v: Value, loc: Loc) -> str:
        if v.id not in self.expr:
            raise CompilationError(loc, "the cube lowering of `tl.dot` cannot compute this scalar", hint=HINT)
        return self.expr[v.id]

    def define(self, instr: Instr, depth: int) -> list[Located]:
        """The expression of scalar ``instr`` (a ``const`` local where the DSL named it, or where it is
        an operand of a clamp that would repeat it)."""
        (v,) = instr.results
        out: list[Located] = []
        dt = v.type.dtype
        if instr.op in (Op.MAXIMUM, Op.MINIMUM):
            for x in instr.operands:
                if not _atom(self.expr[x.id]):
                    name = self.fresh("rest" if instr.op is Op.MAXIMUM else "clamped")
                    out.append(Located(f"const {x.type.dtype.cpp} {name} = {bare(self.expr[x.id])};  "
                                       f"// {where(instr.loc)}", instr.loc, depth))
                    self.expr[x.id] = name
        ops = [self.of(x, instr.loc) for x in instr.operands]
        canon = [self.canon[x.id] for x in instr.operands]
        self.canon[v.id] = f"{instr.op.value}({', '.join(canon)}{', ' if canon else ''}{dict(instr.attrs)})"
        if instr.op is Op.CONST:
            text = literal(instr.attr("value"), dt)
        elif instr.op is Op.PROGRAM_ID:
            axis = instr.attr("axis")
            text = ("static_cast<int32_t>(program % tiling_.grid0)", "static_cast<int32_t>(program / tiling_.grid0 % "
                    "tiling_.grid1)", "static_cast<int32_t>(program / (static_cast<int64_t>(tiling_.grid0) * "
                    "tiling_.grid1))")[axis]
        elif instr.op is Op.NUM_PROGRAMS:
            text = f"tiling_.grid{instr.attr('axis')}"
        elif instr.op in (Op.IDIV, Op.MOD) and dt.is_int and constant(self.kernel, instr.operands[1]) in (
                None, 0, -1):
            text = f"(({_int_division(instr.op is Op.IDIV, ops, dt)}))"  # parenthesised once bare
        elif instr.op in _BINARY and len(ops) == 2:
            text = f"({ops[0]} {_BINARY[instr.op]} {ops[1]})"
        elif instr.op in (Op.MAXIMUM, Op.MINIMUM):
            text = f"({ops[0]} {'>' if instr.op is Op.MAXIMUM else '<'} {ops[1]} ? {ops[0]} : {ops[1]})"
        elif instr.op is Op.CAST and dt.kind == "int":
            text = f"static_cast<{dt.cpp}>({ops[0]})"
        else:
            raise CompilationError(instr.loc, f"the cube lowering of `tl.dot` does not support the scalar "
                                              f"`{instr.op.value}` yet", hint=HINT)
        name = self.names.get(v.id)
        if name is None or instr.op is Op.CONST:
            self.expr[v.id] = text
            return out
        self.expr[v.id] = self.fresh(name)
        return out + [Located(f"const {dt.cpp} {self.expr[v.id]} = {bare(text)};  // {where(instr.loc)}", instr.loc,
                              depth)]


def _int_division(divide: bool, ops: list[str], dt: dtypes.DType) -> str:
    """The C++ text of :func:`.kir.int_division` of the scalars ``ops`` (C's traps guarded)."""
    a, b = (kir.Var(n, dt, text) for n, text in enumerate(ops))
    return Printer(Names(vars={0: ops[0], 1: ops[1]})).expr(kir.int_division(divide, a, b, dt))


def _atom(text: str) -> bool:
    """Whether C++ expression ``text`` is a name or a number, which needs no parentheses as an operand."""
    return text.replace("_", "").replace(".", "").isalnum()


def grouped(text: str) -> str:
    return text if _atom(text) else f"({text})"


def bare(text: str) -> str:
    return text[1:-1] if text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]) else text


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0



@lru_cache(maxsize=256)
def _definitions(kernel: Kernel) -> dict[int, Instr]:
    return {r.id: i for i in walk(kernel.body) for r in i.results}


def defining(kernel: Kernel, v: Value) -> Instr | None:
    return _definitions(kernel).get(v.id)

def constant(kernel: Kernel, v: Value):
    """The value of scalar ``v`` where it is a literal, else None."""
    d = defining(kernel, v)
    return d.attr("value") if d is not None and d.op is Op.CONST else None
