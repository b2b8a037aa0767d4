"""Which buffer each tile value has (:class:`BufferAssignment`, part of :class:`.selector.Selector`).

A block load's result arrives in an INPUT buffer (and is copied to a TILE buffer when a later stage reads it), a stored
value is computed straight into its OUTPUT buffer when it can be, a loop-carried tile lives in one accumulator buffer,
``expand_dims`` and a reshape between shapes that lie alike in UB share their operand's buffer, and a broadcast that
only binary arithmetic reads has none (its users read the source through repeat strides)."""
from __future__ import annotations

from ... import dtypes
from ...ir.core import GroupOp, Instr, Op, Value, walk
from . import isel
from ..kir import Buf, Ref, Role, lit
from ..legalise_types import limits
from ..legalise_shapes.ublayout import count, held_count, pitch, same_layout
from .facts import KernelFacts
from .support import cpp_dtype


class BufferAssignment(KernelFacts):
    """The buffer methods of :class:`.selector.Selector` (which sets ``bufs``, ``inbuf``, ``held``, ``outbuf`` and
    ``next_key`` and calls :meth:`_assign_buffers`)."""

    bufs: dict[int, Buf]
    inbuf: dict[int, Buf]
    held: dict[int, Buf]
    outbuf: dict[int, Buf]
    next_key: int

    def new_buf(self, role: Role, dtype, hint: str, loc, queue=()) -> Buf:
        self.next_key += 1
        return Buf(self.next_key, role, dtype, hint, queue, loc)

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
        loop over rows, in UB once where it was twice; and one a stage past a grid barrier after it reads (a program
        a core: its tiles stay in UB across the barrier, single-buffered)."""
        body = self.kernel.body.body
        at = next((k for k, top in enumerate(body) if load is top), None)
        return at is not None and not self.words_filled(load) and (
            any(id(u) in looped for u in self.users.get(load.result.id, ()))
            or any(i.op is Op.SYNC_ALL for i in body[at + 1:]))

    def free_reshape(self, instr: Instr) -> bool:
        """``instr`` is a reshape (or a transpose with a unit axis) between shapes that lie alike in UB
        (:func:`.ublayout.same_layout`): its result is its operand's buffer."""
        unit = instr.op is Op.PERMUTE and 1 in instr.result.type.shape
        if instr.op is Op.RESHAPE and (instr.result.id in self.packed or instr.operands[0].id in self.packed):
            return True  # rows packed at a pitch of K lie as the flat tile
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

    def count(self, v: Value) -> int:
        return v.type.numel if v.id in self.packed else count(v, self.align)

    def pitch(self, v: Value) -> int:
        return pitch(v.type.shape, self.align)

    def ref(self, v: Value, dtype=None) -> Ref:
        """The whole UB footprint of tile ``v`` (in ``dtype`` when given): its extent, which the kernel holds, is
        :func:`.held_count`'s."""
        b = self.bufs[v.id]
        dt = dtype or b.dtype
        lanes = v.type.numel if v.id in self.packed else held_count(v, self.align)
        return Ref(b, dt, lit(0), lanes * cpp_dtype(v.type.dtype).itemsize // dt.itemsize)

    def scratch(self, hint: str, dtype, elements: int, loc) -> Ref:
        return Ref(self.new_buf(Role.SCRATCH, dtype, hint, loc), dtype, lit(0), elements)
