"""Which scalar expression each scalar value has (:class:`ScalarSelection`, part of :class:`.selector.Selector`).

Scalars become ``Let`` s of ``Process`` where they are defined (unnamed single-use ones are inlined into their scalar
user), except scalars read from UB after a vector op, which are class members set in the compute stage. GM offsets,
strides and the integers computed from them are ``int64_t``. Names are hints from the DSL's variable names
(``Kernel.names``) or from what a scalar is used for (``gradOffset``, ``gradRows``); :mod:`.naming` makes them
unique."""
from __future__ import annotations

import numpy as np

from ... import dtypes, numerics
from ...ir.core import Instr, Op, Value
from .. import kir
from ..kir import BinOp, Lit, Var, VarKind
from ..legalise_types import scalarunit
from ..names import naming
from .facts import KernelFacts
from .support import C_BINARY, F32, I64, camel_join, program_id, unsupported


class ScalarSelection(KernelFacts):
    """The scalar methods of :class:`.selector.Selector` (which sets ``scalars``, ``members`` and ``next_var``)."""

    scalars: dict[int, kir.Expr]
    members: list[Var]
    next_var: int

    def fresh_key(self) -> int:
        """A variable key no tile value uses (value ids are >= 0; ``pid`` is -1)."""
        self.next_var -= 1
        return self.next_var

    def fresh(self, hint: str) -> Var:
        """A fresh int32 loop variable of a chunk loop."""
        return Var(self.fresh_key(), dtypes.int32, hint, VarKind.LOOP)

    def expr(self, v: Value) -> kir.Expr:
        """The expression of scalar ``v``."""
        if v.id in self.params:
            return kir.Field(naming.field_name(self.params[v.id][0]), v.type.dtype)
        d = self.defs.get(v.id)
        if d is not None and d.op is Op.CONST:
            return Lit(d.attr("value"), v.type.dtype)
        return self.scalars[v.id]

    def wide_expr(self, v: Value) -> kir.Expr:
        """``v`` as an int64_t expression (GM offsets)."""
        e = self.expr(v)
        if self.is_wide(v) or isinstance(e, Lit) or not v.type.dtype.is_int:
            return e
        return kir.Conv(I64, e)

    def scalar_as(self, x: Value, dtype) -> kir.Expr:
        """Scalar ``x`` as an expression of ``dtype`` (a 16-bit float constant rounded to its own
        dtype first, as the interpreter holds it)."""
        c = self.const_of(x)
        if c is not None:
            if x.type.dtype != dtype and x.type.dtype.is_float and x.type.dtype.itemsize == 2:
                c = float(numerics.cast(np.array(c, F32.np), x.type.dtype.np))
            return Lit(c, dtype)
        e = self.expr(x)
        narrowed = self.is_wide(x) and dtype != I64  # computed in int64_t for GM offsets
        return e if x.type.dtype == dtype and not narrowed else kir.Conv(dtype, e)

    def scalar_expr(self, instr: Instr) -> kir.Expr:
        if instr.op is Op.LOAD:
            return self.single_load(instr)
        v = instr.result
        wide = self.is_wide(v) or instr.op in C_BINARY and any(self.is_wide(x) for x in instr.operands)
        xs = [self.wide_expr(x) if wide else self.expr(x) for x in instr.operands]
        op = instr.op
        if op is Op.PROGRAM_ID:
            return program_id(instr.attr("axis"))
        if op is Op.NUM_PROGRAMS:
            return kir.Field(f"grid{instr.attr('axis')}", dtypes.int32)
        if op in scalarunit.WRAPPING and v.type.dtype == dtypes.int32 and not wide and self._mixes_bits(instr):
            a, b = (kir.Conv(kir.CInt.UINT32, x) for x in xs)
            return kir.Conv(dtypes.int32, kir.Bin(C_BINARY[op], a, b))
        if op in (Op.IDIV, Op.MOD) and v.type.dtype.is_int:
            return kir.int_division(op is Op.IDIV, *xs, I64 if wide else v.type.dtype)
        if op in C_BINARY:
            return kir.Bin(C_BINARY[op], *xs)
        if op in (Op.MAXIMUM, Op.MINIMUM):
            return kir.Cond(kir.Bin(BinOp.GT if op is Op.MAXIMUM else BinOp.LT, *xs), *xs)
        if op is Op.CAST:
            return xs[0] if self.is_wide(v) else kir.Conv(v.type.dtype, xs[0])
        if op is Op.NEG:
            return kir.Bin(BinOp.MUL, xs[0], Lit(-1.0 if v.type.dtype.is_float else -1, v.type.dtype))
        return self.exact_scalar(instr, xs)

    def _mixes_bits(self, instr: Instr) -> bool:
        """An int32 ``+ - *`` with a constant outside int16's range (a hash's or a generator's mixing
        constant, as in ``tl.rand``): meant to wrap, so rendered on ``uint32_t`` (a signed overflow is
        undefined in C++; the interpreter wraps)."""
        return any(c is not None and not -(1 << 15) <= c < 1 << 15 for c in map(self.const_of, instr.operands))

    def exact_scalar(self, instr: Instr, xs: list) -> kir.Expr:
        """Scalar ops that are a C expression and exact: ``where``, ``~``/``not``, int ``abs``
        (float math runs on a one-element tile: :mod:`.decompose`)."""
        op, dt = instr.op, instr.result.type.dtype
        if op is Op.WHERE:
            c, a, b = instr.operands
            return kir.Cond(xs[0], self.scalar_as(a, dt), self.scalar_as(b, dt))
        if op is Op.NOT:  # ~x is x ^ -1
            return kir.Not(xs[0]) if dt == dtypes.bool_ else kir.Bin(BinOp.XOR, xs[0], Lit(-1, dt))
        if op is Op.ABS and dt.is_int:
            return kir.Cond(kir.Bin(BinOp.LT, xs[0], Lit(0, dt)), kir.Bin(BinOp.SUB, Lit(0, dt), xs[0]), xs[0])
        if op is Op.UMULHI and dt == dtypes.int32:  # the unsigned 64-bit product's high half
            a, b = (kir.Conv(kir.CInt.UINT64, kir.Conv(kir.CInt.UINT32, x)) for x in xs)
            return kir.Conv(dt, kir.Bin(BinOp.SHR, kir.Bin(BinOp.MUL, a, b), Lit(32, dt)))
        x, xt = xs[0], instr.operands[0].type.dtype
        if op is Op.ISNAN:
            return kir.Bin(BinOp.NE, x, x)
        if op is Op.ISINF:
            return kir.Bin(BinOp.OR, kir.Bin(BinOp.EQ, x, Lit(float("inf"), xt)), kir.Bin(BinOp.EQ, x, Lit(float("-inf"), xt)))
        if op is Op.ISFINITE:  # x - x is 0 but for NaN and infinities
            return kir.Bin(BinOp.EQ, kir.Bin(BinOp.SUB, x, x), Lit(0.0, xt))
        raise unsupported(instr, f"the scalar op `{op.value}`")

    def _role_hint(self, v: Value) -> str:
        """A name for an unnamed scalar: what its user does with it."""
        users = self.users.get(v.id, [])
        for u in users:
            if u.op in (Op.BLOCK_LOAD, Op.BLOCK_STORE, Op.STRIDED_LOAD, Op.STRIDED_STORE):
                rank = len(u.attr("shape"))
                stem = self.ptr_stem(u.operands[0])
                strides = rank if u.op in (Op.STRIDED_LOAD, Op.STRIDED_STORE) else rank - 1
                extents = {1: ["Count"], 2: ["Rows", "Cols"]}.get(rank, ["Planes"] * (rank - 2) + ["Rows", "Cols"])
                planes = max(rank - 2, 0)
                outer = ["PlaneStride"] * planes + ["Stride"] * (strides - planes)
                roles = ["Offset"] + outer + extents
                for role, x in zip(roles, u.operands[1:]):
                    if x.id == v.id:
                        return camel_join(stem, role)
        if len(users) == 1 and len(users[0].results) == 1 and users[0].result.type.is_scalar:
            d = self.defs[v.id]
            return camel_join(self.hint(users[0].result, self._role_hint(users[0].result)), d.op.value)
        return "value"

    def define_scalar(self, instr: Instr, out: list) -> None:
        """Bind scalar ``instr``'s result: inlined, a ``Let`` appended to ``out``, or a member."""
        v = instr.result
        if instr.op is Op.CONST:
            return
        e = self.scalar_expr(instr)
        users = self.users.get(v.id, [])
        if (v.id not in self.hints and len(users) == 1 and not self.vector_derived(v) and instr.op is not Op.LOAD
                and (users[0].op in (Op.FOR, Op.WHILE, Op.IF)
                     or len(users[0].results) == 1 and users[0].result.type.is_scalar)
                and (users[0].op not in (Op.MAXIMUM, Op.MINIMUM) or isinstance(e, (Var, kir.Field)))):
            self.scalars[v.id] = e  # inlined into its only user (a min/max would repeat it)
            return
        ctype = I64 if self.is_wide(v) else v.type.dtype
        if self.vector_derived(v):
            var = Var(v.id, ctype, self.hint(v, "value"), VarKind.MEMBER)
            self.members.append(var)
            out.append(kir.Set(var, e, instr.loc))
        else:
            var = Var(v.id, ctype, self.hint(v, self._role_hint(v)))
            out.append(kir.Let(var, e, instr.loc))
        self.scalars[v.id] = var

    def single_load(self, instr: Instr) -> kir.Expr:
        """A single-element load (``x = tl.load(ptr + i)``): ``GetValue`` on the GM tensor, read on
        the scalar unit; under a mask ``mask ? GetValue : other`` (no read where it is false). From a
        tensor the kernel also stores to, :meth:`reread` goes first."""
        base, offset = self.defs[instr.operands[0].id].operands
        name, param = self.params[base.id]
        v = instr.result
        e = kir.GmValue(kir.Gm(param, v.type.dtype, self.wide_expr(offset)))
        if not instr.attr("has_mask"):
            return e
        other = self.scalar_as(instr.operands[2], v.type.dtype) if instr.attr("has_other") else Lit(0, v.type.dtype)
        return kir.Cond(self.expr(instr.operands[1]), e, other)

    def reread(self, instr: Instr) -> list:
        """What orders single-element load ``instr`` after the stores before it (their DMA, on MTE3, may
        still run, and the scalar unit's data cache may hold the line from before them):
        ``DataCacheCleanAndInvalid`` of the element's cache line, after a wait for MTE3 (:mod:`.sync`)."""
        base, offset = self.defs[instr.operands[0].id].operands
        gm = kir.Gm(self.params[base.id][1], instr.result.type.dtype, self.wide_expr(offset))
        return [kir.Call("DataCacheCleanAndInvalid", gm, (), template=instr.result.type.dtype,
                         mode=kir.Const.SINGLE_CACHE_LINE, pipe=kir.Pipe.S, loc=instr.loc)]

    def carry(self, values, hint: str) -> Var:
        """The class member holding a scalar carried by a loop or merged after an ``if`` (``values``:
        the tile-IR values it stands for). A member, not a local: stages read and set it too."""
        var = Var(self.fresh_key(), I64 if any(self.is_wide(v) for v in values) else values[0].type.dtype,
                  hint, VarKind.MEMBER)
        self.members.append(var)
        for v in values:
            self.scalars[v.id] = var
        return var
