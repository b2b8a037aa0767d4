"""What instruction selection knows of a kernel before it selects anything: each value's definition and users, the
segment (stage) of each instruction, the broadcasts binary arithmetic reads fused, the scalars computed in ``int64_t``
(GM offsets), and the located errors for tiles the backend cannot lower (:class:`KernelFacts`, the base of
:class:`.selector.Selector`)."""
from __future__ import annotations

from ... import dtypes
from ...ir.core import GroupOp, Instr, Kernel, Op, Value, walk
from ...ir.provenance import STORES
from ...platforms import Platform
from . import isel
from ..legalise_types import limits
from ..legalise_shapes.packed import packed_values
from ..legalise_shapes.ublayout import tile_align
from .support import I64, RANK3_OPS, WIDE_OPS, bool_error, unsupported


class KernelFacts:
    """One kernel's def-use facts, segments, fused broadcasts and wide scalars (read-only after ``__init__``)."""

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
        self.fused = {i.result.id for i in walk(kernel.body) if self._fused(i)}
        self.wide = self._wide_slice()
        self.packed = packed_values(self)  # tiles of rows packed at a pitch of K (:mod:`.packed`)
        self._wide_memo: dict[int, bool] = {}
        for instr in walk(kernel.body):
            rank = max((len(v.type.shape) for v in (*instr.results, *instr.operands)), default=0)
            if rank >= 3 and instr.op not in RANK3_OPS:
                raise unsupported(instr, f"`{instr.op.value}` of tiles of rank {rank}")
        self._check_bool_tiles()

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
                    raise bool_error(instr, f"comparing {dt} tiles (float and int32 tiles are compared)")
                if is_logic and not all(self._is_mask(x) for x in instr.operands):
                    raise bool_error(instr, f"`{instr.op.value}` of bool tiles that are not comparisons of tiles")
                for u in self.users.get(instr.result.id, []):
                    as_cond = u.op is Op.WHERE and all(x.id != instr.result.id for x in u.operands[1:])
                    if not (as_cond or u.op in isel.MASK_API and u.result.type.dtype == dtypes.bool_):
                        raise bool_error(instr, f"a bool tile used by `{u.op.value}` (only a `tl.where` "
                                                 "condition, `& | ^ ~` of bool tiles or a load/store mask)")
            elif instr.op is Op.WHERE:
                if not self._is_mask(instr.operands[0]):
                    raise bool_error(instr, "`tl.where` whose condition is not a comparison of tiles")
                if not (instr.result.type.dtype.is_float or instr.result.type.dtype in (dtypes.int32, dtypes.int64)):
                    raise bool_error(instr, f"`tl.where` of {instr.result.type.dtype} tiles")

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
            counter[0] += self.load_waits(instr) or self.rereads(instr) or instr.op is Op.SYNC_ALL
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

    def hint(self, v: Value, default: str) -> str:
        return self.hints.get(v.id, default)

    def ptr_stem(self, ptr: Value) -> str:
        return self.params[ptr.id][0].removesuffix("_ptr") or "arg"

    def const_of(self, v: Value):
        d = self.defs.get(v.id)
        return d.attr("value") if d is not None and d.op is Op.CONST else None

    def is_wide(self, v: Value) -> bool:
        """``v`` is computed in int64_t: GM offset arithmetic, and integers computed from it."""
        if v.id not in self._wide_memo:
            d = self.defs.get(v.id)
            self._wide_memo[v.id] = v.id in self.wide or (
                d is not None and v.type.is_scalar and v.type.dtype.is_int and d.op in WIDE_OPS
                and any(self.is_wide(x) for x in d.operands))
        return self._wide_memo[v.id]

    def vector_derived(self, v: Value) -> bool:
        """``v`` is computed in a compute stage: from a reduction, or merged by an ``if`` there."""
        d = self.defs.get(v.id)
        return d is not None and (d.op in GroupOp.REDUCE or d.op is Op.IF and not self.cuts(d) or any(
            self.vector_derived(x) for x in d.operands if x.type.is_scalar))

    def rereads(self, instr: Instr) -> bool:
        """``instr`` is a single-element load from a tensor the kernel also stores to."""
        if instr.op is not Op.LOAD or not instr.result.type.is_scalar:
            return False
        base = self.defs[instr.operands[0].id].operands[0]
        return any(i.op in STORES and i.operands[0].id == base.id for i in walk(self.kernel.body))
