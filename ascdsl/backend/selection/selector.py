"""Instruction selection state: which buffer and which scalar expression each tile-IR value has.

Every tile value gets a logical :class:`~.kir.Buf` (the UB planner maps them to slots): a block
load's result arrives in an INPUT buffer (and is copied to a TILE buffer when a later stage reads
it), a stored value is computed straight into its OUTPUT buffer when it can be, a loop-carried tile
lives in one accumulator buffer, ``expand_dims`` shares its operand's buffer, and a broadcast that
only binary arithmetic reads has no buffer (its users read the source through repeat strides;
a column's ``Brcb`` blocks made once for users all in its stage: :attr:`Selector.brcbs`).

Scalars become ``Let`` s of ``Process`` where they are defined (unnamed single-use ones are
inlined into their scalar user), except scalars read from UB after a vector op, which are class
members set in the compute stage. GM offsets, strides and the integers computed from them are
``int64_t``. Names are hints from the DSL's variable names (``Kernel.names``) or from what a scalar
is used for (``gradOffset``, ``gradRows``); :mod:`.naming` makes them unique.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ... import dtypes, numerics
from ...errors import CompilationError
from ...ir.core import GroupOp, Instr, Kernel, Op, Value, walk
from ...ir.provenance import STORES
from ...platforms import Platform
from . import isel
from .. import kir
from ..names import naming
from ..legalise_types import limits, scalarunit
from ..kir import BinOp, Buf, Lit, Ref, Role, Var, VarKind, lit
from ..legalise_shapes.ublayout import count, held_count, pitch, same_layout, tile_align

F32 = dtypes.float32
I64 = dtypes.int64
C_BINARY = {Op.ADD: BinOp.ADD, Op.SUB: BinOp.SUB, Op.MUL: BinOp.MUL, Op.IDIV: BinOp.DIV, Op.MOD: BinOp.MOD,
            Op.DIV: BinOp.DIV, Op.LT: BinOp.LT, Op.LE: BinOp.LE, Op.GT: BinOp.GT, Op.GE: BinOp.GE,
            Op.EQ: BinOp.EQ, Op.NE: BinOp.NE, Op.AND: BinOp.AND, Op.OR: BinOp.OR, Op.XOR: BinOp.XOR,
            Op.SHL: BinOp.SHL, Op.SHR: BinOp.SHR}
"""Scalar ops that are one C++ infix operator."""
PID = Var(-1, dtypes.int64, "program", VarKind.PID)
WIDE_OPS = frozenset({Op.ADD, Op.SUB, Op.MUL, Op.MAXIMUM, Op.MINIMUM, Op.CAST, Op.NEG})
"""Scalar ops that GM offset arithmetic is made of (computed in int64_t)."""


RANK3_OPS = frozenset({Op.BLOCK_LOAD, Op.BLOCK_STORE, Op.STRIDED_LOAD, Op.STRIDED_STORE, Op.RESHAPE, Op.PERMUTE,
                       Op.BROADCAST, Op.CONST, Op.CAST, Op.SUM, Op.MAX, Op.MIN, Op.FOR, Op.IF, Op.WHILE, Op.YIELD,
                       Op.PRINT, Op.JOIN, Op.SPLIT})
"""Ops that still see tiles of rank 3 or more after :mod:`.rank3` rewrote the others to their flat views (casts other
rewrites emit run count-form over the footprint, which is that of the flat view)."""


BOOL_HINT = ("use comparisons of float or int32 tiles (combined with `& | ^ ~`) as tl.where conditions, "
             "or run this kernel on the interpreter (backend='interpreter')")


def _bool_error(instr: Instr, what: str) -> CompilationError:
    return CompilationError(instr.loc, f"the Ascend C backend does not support {what}", hint=BOOL_HINT)


def unsupported(instr: Instr, what: str) -> CompilationError:
    return CompilationError(instr.loc, f"the Ascend C backend does not support {what} yet",
                            hint="run this kernel on the interpreter (backend='interpreter')")


@dataclass
class _Seg:
    loads: list = field(default_factory=list)  # block_load instrs
    stores: list = field(default_factory=list)  # block_store instrs
    compute: list = field(default_factory=list)  # kir statements
    tail: list = field(default_factory=list)  # yield copies and loop initialisations


class Selector:
    """One kernel's selection state: value -> buffer and value -> scalar expression."""

    def __init__(self, kernel: Kernel, platform: Platform, general: bool = False):
        self.kernel, self.platform = kernel, platform
        self.general = general  # no decision depends on a tile extent (:mod:`.repeat`, :mod:`.lift`)
        self.align = tile_align(kernel, platform)
        self.hints = dict(kernel.names)
        self.defs: dict[int, Instr] = {v.id: i for i in walk(kernel.body) for v in i.results}
        self.users: dict[int, list[Instr]] = {}
        for instr in walk(kernel.body):
            for x in instr.operands:
                self.users.setdefault(x.id, []).append(instr)
        self.params = {p.id: (n, k) for k, (p, n) in enumerate(zip(kernel.params, kernel.param_names))}
        self.segment_of: dict[int, int] = {}  # id(instr) -> segment number
        self._number_segments(kernel.body, [0])
        self.next_key, self.next_var = 0, -1  # the last buffer key and variable key handed out
        self.bufs: dict[int, Buf] = {}  # value id -> buffer its users read
        self.inbuf: dict[int, Buf] = {}  # load value id -> its INPUT buffer (when copied to a TILE buffer)
        self.held: dict[int, Buf] = {}  # load value id -> its queue buffer, held to the program's end (:meth:`holds`)
        self.outbuf: dict[int, Buf] = {}  # id(block_store) -> its OUTPUT buffer
        self.scalars: dict[int, kir.Expr] = {}
        self.members: list[Var] = []
        self.brcbs: dict[int, Ref] = {}  # a fused [M, 1] broadcast -> its Brcb blocks (:func:`.reduce.brcb`)
        self.fused = {i.result.id for i in walk(kernel.body) if self._fused(i)}
        self.wide = self._wide_slice()
        self._wide_memo: dict[int, bool] = {}
        self.segments = 0
        for instr in walk(kernel.body):
            rank = max((len(v.type.shape) for v in (*instr.results, *instr.operands)), default=0)
            if rank >= 3 and instr.op not in RANK3_OPS:
                raise unsupported(instr, f"`{instr.op.value}` of tiles of rank {rank}")
        self._check_bool_tiles()
        self._assign_buffers()

    # ------------------------------------------------------------------ analysis
    def _check_bool_tiles(self) -> None:
        """A located error for bool tiles the backend cannot lower. Bool tiles are bit masks: comparisons
        of float, int32 (``==``) and int64 tiles (:mod:`.scalarunit`) and ``& | ^ ~`` of masks, read only by
        ``where`` conditions and other masks."""
        for instr in walk(self.kernel.body):
            if len(instr.results) != 1 or instr.result.type.is_scalar:
                continue
            is_logic = instr.op in isel.MASK_API and instr.result.type.dtype == dtypes.bool_
            if instr.op in GroupOp.COMPARE or is_logic:
                dt = instr.operands[0].type.dtype
                if instr.op in GroupOp.COMPARE and not (dt.is_float or dt == dtypes.int32 and instr.op is Op.EQ
                                                        or dt in limits.WIDE):
                    raise _bool_error(instr, f"comparing {dt} tiles (float and int32 tiles are compared)")
                if is_logic and not all(self._is_mask(x) for x in instr.operands):
                    raise _bool_error(instr, f"`{instr.op.value}` of bool tiles that are not comparisons of tiles")
                for u in self.users.get(instr.result.id, []):
                    as_cond = u.op is Op.WHERE and all(x.id != instr.result.id for x in u.operands[1:])
                    if not (as_cond or u.op in isel.MASK_API and u.result.type.dtype == dtypes.bool_):
                        raise _bool_error(instr, f"a bool tile used by `{u.op.value}` (only a `tl.where` "
                                                 "condition, `& | ^ ~` of bool tiles or a load/store mask)")
            elif instr.op is Op.WHERE:
                if not self._is_mask(instr.operands[0]):
                    raise _bool_error(instr, "`tl.where` whose condition is not a comparison of tiles")
                if not (instr.result.type.dtype.is_float or instr.result.type.dtype in (dtypes.int32, dtypes.int64)):
                    raise _bool_error(instr, f"`tl.where` of {instr.result.type.dtype} tiles")

    def words_filled(self, load: Instr) -> bool:
        """``load`` is a masked int64 block load whose ``other`` is not one 32-bit word twice (a runtime one
        included): its masked lanes are ``other``'s words filled first, the loaded lanes gathered over them
        (:func:`.gather.fill_block`), from its INPUT buffer into its TILE one."""
        if load.op is not Op.BLOCK_LOAD or load.result.type.dtype != I64 or not load.attr("has_other"):
            return False
        other = self.const_of(load.operands[-1])
        return other is None or (int(other) & 0xFFFFFFFF) != ((int(other) >> 32) & 0xFFFFFFFF)

    def _is_mask(self, v: Value) -> bool:
        """``v`` is a bool tile held as a bit mask: a comparison of tiles or logic of such masks."""
        d = self.defs.get(v.id)
        return d is not None and not v.type.is_scalar and (
            d.op in GroupOp.COMPARE or d.op in isel.MASK_API and v.type.dtype == dtypes.bool_)

    def _number_segments(self, block, counter) -> None:
        for instr in block.body:
            counter[0] += self.load_waits(instr) or self.rereads(instr)
            self.segment_of[id(instr)] = counter[0]
            if self.cuts(instr):  # see select.py
                counter[0] += 1
                for r in instr.regions:
                    self._number_segments(r, counter)
                    counter[0] += 1
            else:
                for r in instr.regions:
                    self._number_segments(r, counter)

    def load_waits(self, instr: Instr) -> bool:
        """A block load addressed by a scalar the compute stage sets (from a reduction, or merged
        by an ``if`` there) starts a new segment: its CopyIn must run after that stage."""
        return instr.op in (Op.BLOCK_LOAD, Op.STRIDED_LOAD) and any(
            self.vector_derived(x) for x in instr.operands[1:] if x.type.is_scalar)

    @staticmethod
    def cuts(instr: Instr) -> bool:
        """Control flow that cuts segments: loops, and ``if`` s that access memory or hold loops
        (any other ``if`` is a branch inside its segment's compute stage)."""
        return instr.op in (Op.FOR, Op.WHILE) or instr.op is Op.IF and any(
            i.op in GroupOp.MEMORY or i.op in (Op.FOR, Op.WHILE) for r in instr.regions for i in walk(r))

    def _fused(self, instr: Instr) -> bool:
        """A tile broadcast to a 2-D tile that only binary arithmetic of two tiles reads."""
        users = self.users.get(instr.results[0].id, []) if instr.results else []
        return (instr.op is Op.BROADCAST and not instr.operands[0].type.is_scalar
                and len(instr.result.type.shape) == 2 and bool(users)
                and all(u.op in isel.BINARY_API and not any(x.type.is_scalar for x in u.operands) for u in users))

    def _wide_slice(self) -> set[int]:
        """Scalar values GM offsets and strides are computed from (int64_t)."""
        todo = []
        for instr in walk(self.kernel.body):
            if instr.op in (Op.BLOCK_LOAD, Op.BLOCK_STORE):
                rank = len(instr.attr("shape"))
                todo += list(instr.operands[1:rank + 1])
            elif instr.op is Op.LOAD and instr.result.type.is_scalar:  # base + offset (passes/access.py)
                todo.append(self.defs[instr.operands[0].id].operands[1])
        out: set[int] = set()
        while todo:
            v = todo.pop()
            d = self.defs.get(v.id)
            if v.id in out or d is None or d.op not in WIDE_OPS or not v.type.dtype.is_int:
                continue
            out.add(v.id)
            todo += [x for x in d.operands if x.type.is_scalar]
        return out

    def stage_users(self, v: Value) -> set[int]:
        """The segments (stages) of ``v``'s users."""
        return {self.segment_of[id(u)] for u in self.users.get(v.id, [])}

    # ------------------------------------------------------------------ buffers
    def fresh_key(self) -> int:
        """A variable key no tile value uses (value ids are >= 0; ``pid`` is -1)."""
        self.next_var -= 1
        return self.next_var

    def fresh(self, hint: str) -> Var:
        """A fresh int32 loop variable of a chunk loop."""
        return Var(self.fresh_key(), dtypes.int32, hint, VarKind.LOOP)

    def new_buf(self, role: Role, dtype, hint: str, loc, queue=()) -> Buf:
        self.next_key += 1
        return Buf(self.next_key, role, dtype, hint, queue, loc)

    def hint(self, v: Value, default: str) -> str:
        return self.hints.get(v.id, default)

    def ptr_stem(self, ptr: Value) -> str:
        return self.params[ptr.id][0].removesuffix("_ptr") or "arg"

    def _assign_buffers(self) -> None:
        occurrences: dict[tuple, int] = {}

        def queue_id(kind: str, instr: Instr) -> tuple:
            key = (kind, self.params[instr.operands[0].id][1], self.segment_of[id(instr)])
            occurrences[key] = occurrences.get(key, 0) + 1
            return key[:2] + (occurrences[key],)

        stored: dict[int, int] = {}
        looped = {id(i) for top in self.kernel.body.body if top.op in (Op.FOR, Op.WHILE)
                  for r in top.regions for i in walk(r)}
        for instr in walk(self.kernel.body):
            if instr.op in (Op.BLOCK_STORE, Op.STRIDED_STORE):
                stored[instr.operands[-1].id] = stored.get(instr.operands[-1].id, 0) + 1
        for instr in walk(self.kernel.body):
            dt = cpp_dtype(instr.results[0].type.dtype) if instr.results else None
            if instr.op is Op.BLOCK_LOAD:
                v = instr.result
                stem = self.ptr_stem(instr.operands[0])
                escapes = bool(self.stage_users(v) - {self.segment_of[id(instr)]})
                hint = stem + "In" if escapes else self.hint(v, stem + "In")
                b = self.new_buf(Role.INPUT, dt, hint, instr.loc, queue_id("in", instr))
                if escapes and self.holds(instr, looped):
                    self.held[v.id] = b
                elif escapes or self.words_filled(instr):
                    self.inbuf[v.id] = b
                    b = self.new_buf(Role.TILE, dt, self.hint(v, stem), instr.loc)
                self.bufs[v.id] = b
            elif instr.op in (Op.BLOCK_STORE, Op.STRIDED_STORE, Op.SCATTER_STORE):
                value = instr.operands[-1]
                stem = self.ptr_stem(instr.operands[0])
                b = self.new_buf(Role.OUTPUT, cpp_dtype(value.type.dtype), stem + "Out", instr.loc,
                                 queue_id("out", instr))
                self.outbuf[id(instr)] = b
                producer = self.defs.get(value.id)
                if (instr.op is Op.BLOCK_STORE and value.id not in self.bufs and stored[value.id] == 1
                        and producer is not None
                        and producer.op not in (Op.FOR, Op.BLOCK_LOAD, Op.STRIDED_LOAD, Op.EXPAND_DIMS, Op.CONST)
                        and not self.free_reshape(producer)
                        and producer.op not in GroupOp.COMPARE
                        and not limits.on_scalar_unit(producer)  # its SetValue would need an S_MTE3 flag
                        and not (producer.op is Op.BROADCAST and cpp_dtype(value.type.dtype) not in isel.DUPLICATE)
                        and self.stage_users(value) == {self.segment_of[id(instr)]}
                        and self.segment_of[id(producer)] == self.segment_of[id(instr)]):
                    self.bufs[value.id] = b
            elif instr.op is Op.FOR:
                for arg, result in zip(instr.regions[0].args[1:], instr.results):
                    if not arg.type.is_scalar:
                        b = self.new_buf(Role.TILE, cpp_dtype(arg.type.dtype), self.hint(result, self.hint(arg, "acc")),
                                         instr.loc)
                        self.bufs[arg.id] = self.bufs[result.id] = b
                self._accumulate_in_place(instr.regions[0], instr.regions[0].args[1:])
            elif instr.op is Op.IF:
                self._merge_in_place(instr)
            elif instr.op is Op.WHILE:  # one buffer per carried tile: both regions' arguments, the result
                test, body = instr.regions
                for arg, body_arg, result in zip(test.args, body.args, instr.results):
                    if not arg.type.is_scalar:
                        self.bufs[arg.id] = self.bufs[body_arg.id] = self.bufs[result.id] = self.new_buf(
                            Role.TILE, cpp_dtype(arg.type.dtype), self.hint(result, self.hint(body_arg, "acc")),
                            instr.loc)
                self._accumulate_in_place(body, body.args)
        for instr in walk(self.kernel.body):
            for v in instr.results:
                if v.type.is_scalar or v.id in self.bufs or v.id in self.fused or self.only_inits(v):
                    continue
                if instr.op is Op.EXPAND_DIMS or self.free_reshape(instr):
                    self.bufs[v.id] = self.bufs[instr.operands[0].id]
                    continue
                hint = self.hint(v, "mask" if v.type.dtype == dtypes.bool_ else "tmp")
                self.bufs[v.id] = self.new_buf(Role.TILE, cpp_dtype(v.type.dtype), hint, instr.loc)

    def holds(self, load: Instr, looped: set[int]) -> bool:
        """A block load made once (a statement of the kernel's body, outside every loop and branch) whose value a
        loop after it reads (``looped``: the ids of the instructions in the body's loops) stays in its queue buffer
        from its DeQue to the program's end, read there by the later stages (a member of the class), where a load
        read by a later stage is otherwise copied to a ``TBuf``: rms norm's ``gamma`` before the persistent form's
        loop over rows, in UB once where it was twice."""
        return (any(load is top for top in self.kernel.body.body) and not self.words_filled(load)
                and any(id(u) in looped for u in self.users.get(load.result.id, ())))

    def free_reshape(self, instr: Instr) -> bool:
        """``instr`` is a reshape (or a transpose with a unit axis) between shapes that lie alike in UB
        (:func:`.ublayout.same_layout`): its result is its operand's buffer."""
        unit = instr.op is Op.PERMUTE and 1 in instr.result.type.shape
        return (instr.op is Op.RESHAPE or unit) and instr.result.type.dtype != dtypes.bool_ and same_layout(
            instr.operands[0].type.shape, instr.result.type.shape, self.align)

    def only_inits(self, v: Value) -> bool:
        """``v`` is a constant tile that only initialises loop accumulators (Duplicate'd there)."""
        d, users = self.defs.get(v.id), self.users.get(v.id, [])
        return (d is not None and d.op is Op.CONST and bool(users)
                and all(u.op is Op.FOR and v in u.operands[3:] and v not in u.operands[:3] for u in users))

    def _accumulate_in_place(self, region, args) -> None:
        """``acc = acc op x`` yielded from a loop body is computed straight into the accumulator."""
        (yld,) = [i for i in region.body if i.op is Op.YIELD] or [None]
        if yld is None:
            return
        for value, arg in zip(yld.operands, args):
            d = self.defs.get(value.id)
            if (arg.type.is_scalar or d is None or d not in region.body or d.op not in isel.BINARY_API
                    or arg not in d.operands or len(self.users.get(arg.id, [])) != 1
                    or len(self.users.get(value.id, [])) != 1 or value.type != arg.type
                    or any(x.id in self.fused for x in d.operands)):
                continue
            self.bufs[value.id] = self.bufs[arg.id]

    # ------------------------------------------------------------------ views and scalars
    def count(self, v: Value) -> int:
        return count(v, self.align)

    def pitch(self, v: Value) -> int:
        return pitch(v.type.shape, self.align)

    def ref(self, v: Value, dtype=None) -> Ref:
        """The whole UB footprint of tile ``v`` (in ``dtype`` when given): its extent, which the kernel holds, is
        :func:`.held_count`'s."""
        b = self.bufs[v.id]
        dt = dtype or b.dtype
        return Ref(b, dt, lit(0), held_count(v, self.align) * cpp_dtype(v.type.dtype).itemsize // dt.itemsize)

    def scratch(self, hint: str, dtype, elements: int, loc) -> Ref:
        return Ref(self.new_buf(Role.SCRATCH, dtype, hint, loc), dtype, lit(0), elements)

    def expr(self, v: Value) -> kir.Expr:
        """The expression of scalar ``v``."""
        if v.id in self.params:
            return kir.Field(naming.field_name(self.params[v.id][0]), v.type.dtype)
        d = self.defs.get(v.id)
        if d is not None and d.op is Op.CONST:
            return Lit(d.attr("value"), v.type.dtype)
        return self.scalars[v.id]

    def is_wide(self, v: Value) -> bool:
        """``v`` is computed in int64_t: GM offset arithmetic, and integers computed from it."""
        if v.id not in self._wide_memo:
            d = self.defs.get(v.id)
            self._wide_memo[v.id] = v.id in self.wide or (
                d is not None and v.type.is_scalar and v.type.dtype.is_int and d.op in WIDE_OPS
                and any(self.is_wide(x) for x in d.operands))
        return self._wide_memo[v.id]

    def wide_expr(self, v: Value) -> kir.Expr:
        """``v`` as an int64_t expression (GM offsets)."""
        e = self.expr(v)
        if self.is_wide(v) or isinstance(e, Lit) or not v.type.dtype.is_int:
            return e
        return kir.Conv(I64, e)

    def const_of(self, v: Value):
        d = self.defs.get(v.id)
        return d.attr("value") if d is not None and d.op is Op.CONST else None

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

    def vector_derived(self, v: Value) -> bool:
        """``v`` is computed in a compute stage: from a reduction, or merged by an ``if`` there."""
        d = self.defs.get(v.id)
        return d is not None and (d.op in GroupOp.REDUCE or d.op is Op.IF and not self.cuts(d) or any(
            self.vector_derived(x) for x in d.operands if x.type.is_scalar))

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


    def _merge_in_place(self, branch: Instr) -> None:
        """Each tile result of ``if`` gets a TILE buffer; a value computed in a branch only to be
        yielded is computed straight into it (otherwise the branch copies it there)."""
        yields = [next(i for i in r.body if i.op is Op.YIELD) for r in branch.regions]
        for k, result in enumerate(branch.results):
            if result.type.is_scalar:
                continue
            names = [self.hints[y.operands[k].id] for y in yields if y.operands[k].id in self.hints]
            b = self.bufs.get(result.id) or self._carried_buffer(branch, k) or self.new_buf(
                Role.TILE, cpp_dtype(result.type.dtype), self.hint(result, (names or ["merged"])[0]), branch.loc)
            self.bufs[result.id] = b
            for region, y in zip(branch.regions, yields):
                value = y.operands[k]
                d = self.defs.get(value.id)
                if (d in region.body and value.id not in self.bufs and len(self.users.get(value.id, [])) == 1
                        and value.type == result.type and value.id not in self.fused
                        and (d.op in isel.BINARY_API or d.op in isel.UNARY_API or d.op in isel.MATH_API
                             or d.op is Op.IF)):
                    self.bufs[value.id] = b

    def _carried_buffer(self, branch: Instr, k: int) -> Buf | None:
        """The accumulator buffer of the loop-carried tile ``acc`` when result ``k`` of ``branch`` is
        the next ``acc`` and each branch yields ``acc`` itself or an elementwise value computed
        after its last read of ``acc`` (so the branch updates the accumulator in place)."""
        result = branch.results[k]
        users = self.users.get(result.id, [])
        loops = [(i.regions[0], i.regions[0].args[1:]) if i.op is Op.FOR else (i.regions[1], i.regions[1].args)
                 for i in walk(self.kernel.body) if i.op in (Op.FOR, Op.WHILE)]
        targets = [args for body, args in loops if users and body.body and body.body[-1] is users[0]]
        if len(users) != 1 or not targets or list(users[0].operands).count(result) != 1:
            return None
        acc = targets[0][list(users[0].operands).index(result)]
        inside = {id(i) for r in branch.regions for i in walk(r)} | {id(branch)}
        if acc.type != result.type or acc.id not in self.bufs or any(
                id(u) not in inside for u in self.users.get(acc.id, [])):
            return None
        for region in branch.regions:
            value = region.body[-1].operands[k]
            if value == acc:
                continue
            d = self.defs.get(value.id)
            if d not in region.body or not (d.op in isel.BINARY_API or d.op in isel.UNARY_API) or len(
                    self.users.get(value.id, [])) != 1 or value.id in self.fused or value.type != acc.type:
                return None
            later = region.body[region.body.index(d) + 1:]
            if any(acc in i.operands for j in later for i in (j, *(x for r in j.regions for x in walk(r)))):
                return None
        return self.bufs[acc.id]

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

    def rereads(self, instr: Instr) -> bool:
        """``instr`` is a single-element load from a tensor the kernel also stores to."""
        if instr.op is not Op.LOAD or not instr.result.type.is_scalar:
            return False
        base = self.defs[instr.operands[0].id].operands[0]
        return any(i.op in STORES and i.operands[0].id == base.id for i in walk(self.kernel.body))

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


def program_id(axis: int) -> kir.Expr:
    """``tl.program_id(axis)`` from the linear program id ``Process`` walks."""
    g0, g1 = kir.Field("grid0", dtypes.int32), kir.Field("grid1", dtypes.int32)
    return [kir.Bin(BinOp.MOD, PID, g0), kir.Bin(BinOp.MOD, kir.Bin(BinOp.DIV, PID, g0), g1),
            kir.Bin(BinOp.DIV, PID, kir.Bin(BinOp.MUL, g0, g1))][axis]


def camel_join(stem: str, role: str) -> str:
    return stem + role[:1].upper() + role[1:]


def cpp_dtype(dtype):
    """The element type of a tile of ``dtype`` in UB: a bool tile is ``Compare``'s bit mask."""
    return dtypes.uint8 if dtype == dtypes.bool_ else dtype

