"""Instruction-selection rewrites on the tile IR, before the kernel IR exists (platform-aware).

What the vector unit lacks becomes ordinary tile instructions, so every later pass (selection of
API calls, UB planning) sees only ops with a direct API:

* ops of :data:`.isel.CHAINS` (``sigmoid``) become their chain of float32 ops, rounded once;
* tile ops the vector unit does not compute in their dtype (every bfloat16 op but casts and data
  movement; see :data:`.isel.NATIVE`) run in float32 between casts (``CAST_NONE`` in, ``CAST_RINT``
  out), and so do 16-bit reductions (sums rounded once, as the interpreter does);
* float16 <-> bfloat16 casts go through float32;
* int32 tile comparisons other than ``==`` become ``==`` of a ``max``/``min`` (and ``~``);
* float scalar ops only the vector unit has (``sqrt``, ``rsqrt``, ``exp``, ``log``, ``abs``, the chains,
  the roundings, ``tanh`` and the other high-level math APIs, ``pow`` and the math of :mod:`.mathops`)
  run on a one-element tile broadcast from the scalar and reduced back with ``max``, which is exact;
* the rules of :data:`REWRITES`, each in the module of its feature, run first: rank-3 tiles as their
  2-D flat views (:mod:`.rank3`), int64 ops kept for the scalar unit (:mod:`.scalarunit`), bool tiles as values
  (:mod:`.boolmask`), int32 ``// %``, ``abs``, 8-bit casts and loads (:mod:`.intops`), float predicates and
  math built from other ops (:mod:`.mathops`), 2-D and int32 reductions and ``argmax``/``argmin``
  (:mod:`.reductions`), scans (:mod:`.scan`), sorts along axis 0 (:mod:`.reorder`), ``tl.histogram``
  (:mod:`.reductions`), broadcasts into
  buffers and column accesses (:mod:`.shapes`), int64 casts through int32 or float32 (:mod:`.wordviews`).

A bfloat16 tile on a platform without bfloat16 casts is a located CompilationError. Results on the
interpreter are unchanged (every rewrite is the computation the numerics module specifies).
"""
from __future__ import annotations

import numpy as np

from ... import dtypes, numerics
from ...errors import CompilationError
from ...ir.core import Block, GroupOp, Instr, Kernel, Op, Type, Value, walk
from ...passes.cleanup import dead_code
from ...platforms import Platform
from . import mathops, reductions, reorder, scan
from ..selection import isel
from ..legalise_shapes import rank3, shapes
from ..legalise_types import boolmask, intops, scalarunit, wordviews

F32 = dtypes.float32
INT_COMPARE = {Op.GE: (Op.MAXIMUM, False), Op.LT: (Op.MAXIMUM, True), Op.LE: (Op.MINIMUM, False),
               Op.GT: (Op.MINIMUM, True), Op.NE: (None, True)}
"""int32 tile comparisons as (fold, negate): ``[not] (fold(a, b) == a)``, or ``[not] (a == b)``."""
VECTOR_ONLY = (frozenset(isel.UNARY_API) | frozenset(isel.CHAINS) | frozenset(isel.ROUNDING_MODE)
               | frozenset(isel.MATH_API) | frozenset(mathops.RULES) | {Op.POW})
"""Float ops only the vector unit computes: on scalars they run on one-element tiles."""
KEEP = frozenset({Op.CAST, Op.BITCAST, Op.BLOCK_LOAD, Op.BLOCK_STORE, Op.STRIDED_LOAD, Op.STRIDED_STORE,
                  Op.GATHER_LOAD, Op.SCATTER_STORE, Op.SPAN_LOAD, Op.CONST, Op.BROADCAST, Op.EXPAND_DIMS,
                  Op.RESHAPE, Op.PERMUTE, Op.CAT, Op.JOIN, Op.SPLIT, Op.FLIP, Op.SLICE, Op.FOR, Op.YIELD})
"""Tile ops that run in any dtype (data movement, Duplicate, casts, control)."""


REWRITES = (boolmask.extremes, rank3.rewrite, scalarunit.rewrite, reductions.histogram, boolmask.rewrite,
            intops.rewrite, mathops.rewrite, reductions.rewrite, scan.rewrite, reorder.rewrite, shapes.rewrite,
            wordviews.rewrite)
"""Rewrite rules of their own modules, tried in order: ``rule(rewriter, instr)`` emits the replacement
of ``instr`` (through :meth:`_Rewriter.op`) and returns True, or returns False and emits nothing."""


class _Rewriter:
    def __init__(self, kernel: Kernel, platform: Platform):
        self.platform = platform
        self.block_bytes = platform.block_bytes
        self.next = 1 + max([v.id for i in walk(kernel.body) for v in i.results] +
                            [a.id for i in walk(kernel.body) for r in i.regions for a in r.args] +
                            [p.id for p in kernel.params], default=-1)  # (an empty kernel has no value)
        self.out: list[Instr] = []
        self.flat: dict[int, Value] = {}  # value id -> its flat view (:mod:`.rank3`)
        self.users: dict[int, list[Instr]] = {}  # the input kernel's users of each value
        for instr in walk(kernel.body):
            for x in instr.operands:
                self.users.setdefault(x.id, []).append(instr)

    def value(self, t: Type) -> Value:
        v = Value(self.next, t)
        self.next += 1
        return v

    def emit(self, op: Op, t: Type, operands, attrs=(), loc=None, result: Value | None = None) -> Value:
        v = result or self.value(t)
        self.out.append(Instr(op, (v,), tuple(operands), tuple(attrs), (), loc))
        return v

    def op(self, op: Op, t: Type, operands, attrs=(), loc=None, result: Value | None = None) -> Value:
        """Like :meth:`emit`, but the new instruction is rewritten too (what the rewrite modules build with)."""
        v = result or self.value(t)
        self.instr(Instr(op, (v,), tuple(operands), tuple(attrs), (), loc))
        return v

    def const(self, value, dt, loc) -> Value:
        return self.op(Op.CONST, Type(dt), (), (("value", value),), loc)

    def cast(self, x: Value, dt, loc, result: Value | None = None) -> Value:
        if x.type.dtype == dt and result is None:
            return x
        if x.type.is_scalar and result is None and self.consts.get(x.id) is not None:
            return self.emit(Op.CONST, Type(dt), (), (("value", float(self.consts[x.id])),), loc)
        return self.emit(Op.CAST, x.type.with_dtype(dt), (x,), (("dtype", dt),), loc, result)

    def block(self, block: Block) -> Block:
        saved, self.out = self.out, []
        for instr in block.body:
            self.instr(instr)
        body, self.out = tuple(self.out), saved
        return Block(block.args, body)

    def instr(self, instr: Instr) -> None:
        if instr.op is Op.CONST and instr.result.type.is_scalar:
            v = instr.attr("value")
            dt = instr.result.type.dtype
            if dt.is_float and dt.itemsize == 2:  # the value as the 16-bit scalar holds it
                v = float(numerics.cast(np.array(v, F32.np), dt.np))
            self.consts[instr.result.id] = v
        if any(rewrite(self, instr) for rewrite in REWRITES):
            return
        if instr.regions:
            self.out.append(instr.map_regions(self.block))
            return
        if instr.op in INT_COMPARE and not instr.result.type.is_scalar and all(
                x.type.dtype == dtypes.int32 for x in instr.operands):
            self._int_compare(instr)
            return
        if instr.op in VECTOR_ONLY and instr.result.type.is_scalar and instr.result.type.dtype.is_float:
            self._scalar_on_vector(instr)
            return
        if len(instr.results) != 1 or instr.result.type.is_scalar and instr.op not in GroupOp.REDUCE:
            self.out.append(instr)
            return
        v, loc = instr.result, instr.loc
        if instr.op in isel.CHAINS:
            (x,) = instr.operands
            t = self.cast(x, F32, loc)
            for op, scalar in isel.CHAINS[instr.op]:
                ops = (t,) if scalar is None else (self.emit(Op.CONST, Type(F32), (), (("value", scalar),), loc), t)
                if scalar is not None and op is not Op.DIV:
                    ops = ops[::-1]
                t = self.emit(op, t.type, ops, (), loc)
            self._finish(t, v, loc)
            return
        if instr.op in GroupOp.REDUCE:
            (x,) = instr.operands
            if x.type.dtype.is_float and x.type.dtype != F32:
                xf = self.cast(x, F32, loc)
                if v.type.is_scalar:  # rounded on the vector unit by the reduction itself
                    self.out.append(Instr(instr.op, (v,), (xf,), instr.attrs, (), loc))
                    return
                r = self.emit(instr.op, v.type.with_dtype(F32), (xf,), instr.attrs, loc)
                self._finish(r, v, loc)
                return
            self.out.append(instr)
            return
        if instr.op is Op.CAST:
            (x,) = instr.operands
            src, dst = x.type.dtype, v.type.dtype
            half = any(t.is_float and t.itemsize == 2 for t in (src, dst))  # the interpreter casts those in float32
            if half and F32 not in (src, dst) and (src, dst) not in isel.CAST_MODE and (src, F32) in isel.CAST_MODE \
                    and (F32, dst) in isel.CAST_MODE:  # float16 <-> bfloat16, bfloat16 <-> int32
                self.cast(self.cast(x, F32, loc), dst, loc, result=v)
                return
            self.out.append(instr)
            return
        if instr.op in KEEP or not self._needs_f32(instr):
            self.out.append(instr)
            return
        ops = [self.cast(x, F32, loc) if x.type.dtype.is_float else x for x in instr.operands]
        if instr.op in GroupOp.COMPARE or not v.type.dtype.is_float:
            self.out.append(Instr(instr.op, (v,), tuple(ops), instr.attrs, (), loc))
            return
        r = self.emit(instr.op, v.type.with_dtype(F32), ops, instr.attrs, loc)
        self._finish(r, v, loc)

    def _int_compare(self, instr: Instr) -> None:
        """An int32 comparison other than ``==`` (the only one ``Compare`` has for int32), exactly:
        ``a >= b`` is ``max(a, b) == a``, ``a <= b`` is ``min(a, b) == a``, the others their negations."""
        a, b = instr.operands
        v, loc = instr.result, instr.loc
        fold, negate = INT_COMPARE[instr.op]
        lhs, rhs = (a, b) if fold is None else (self.emit(fold, v.type.with_dtype(dtypes.int32), (a, b), (), loc), a)
        if negate:
            eq = self.emit(Op.EQ, v.type, (lhs, rhs), (), loc)
            self.emit(Op.NOT, v.type, (eq,), (), loc, result=v)
        else:
            self.emit(Op.EQ, v.type, (lhs, rhs), (), loc, result=v)

    def _scalar_on_vector(self, instr: Instr) -> None:
        """A float scalar op the scalar unit cannot compute (``sqrt``, ``exp``, ``atan2``, ...): the same op
        on one-element tiles of the operands, read back as the max of that tile (the element, exactly)."""
        v, loc = instr.result, instr.loc
        ts = tuple(self.emit(Op.BROADCAST, x.type.with_shape((1,)), (x,), (), loc) for x in instr.operands)
        u = self.value(v.type.with_shape((1,)))
        self.instr(Instr(instr.op, (u,), ts, instr.attrs, (), loc))
        self.instr(Instr(Op.MAX, (v,), (u,), (("axis", None), ("keep_dims", False)), (), loc))

    def _needs_f32(self, instr: Instr) -> bool:
        floats = [x.type.dtype for x in (*instr.operands, instr.result) if x.type.dtype.is_float]
        if instr.op is Op.WHERE:
            return any(d not in isel.SELECT for d in floats)
        if instr.op in GroupOp.COMPARE:
            return any(d == dtypes.bfloat16 for d in floats)
        return any(instr.op not in isel.NATIVE.get(d, ()) and not (instr.op is Op.NEG and d in isel.NATIVE)
                   for d in floats)

    def _finish(self, t: Value, v: Value, loc) -> None:
        """Bind ``v`` (the original result) to float32 ``t`` rounded to ``v``'s dtype."""
        if t.type == v.type:  # the last instruction computed ``t``: let it compute ``v`` instead
            last = self.out.pop()
            self.out.append(Instr(last.op, (v,), last.operands, last.attrs, last.regions, last.loc))
            return
        self.cast(t, v.type.dtype, loc, result=v)

    consts: dict = {}


def check_platform(kernel: Kernel, platform: Platform) -> None:
    """A located error for bfloat16 tiles on a platform without bfloat16 casts."""
    if platform.has_bf16:
        return
    for instr in walk(kernel.body):
        for v in (*instr.results, *instr.operands):
            if v.type.dtype == dtypes.bfloat16 or getattr(v.type.dtype, "element_ty", None) == dtypes.bfloat16:
                raise CompilationError(instr.loc, f"{platform.name} has no bfloat16 <-> float32 casts, so it "
                                       "cannot compute on bfloat16 tiles",
                                       hint="use float16 or float32 on this platform")


def decompose(kernel: Kernel, platform: Platform) -> Kernel:
    """The rewrites of the module docstring."""
    check_platform(kernel, platform)
    r = _Rewriter(kernel, platform)
    r.consts = {}
    out = kernel.with_body(r.block(kernel.body))
    return dead_code(out) if r.flat else out  # rank-3 rewrites leave views no op reads
