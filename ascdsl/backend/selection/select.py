"""The instruction-selection pass: tile IR (after :mod:`.decompose`) -> kernel IR.

The body is cut at its ``for`` loops into :class:`~.kir.Segment` s: the block loads of a segment
(its CopyIn), its compute (DeQue and ``other`` fills, AllocTensor of the stores' queues, the vector
calls, yield copies and the next loop's accumulator initialisation, EnQue/FreeTensor) and its
block stores (CopyOut). Scalars become ``Let`` s of ``Process`` where they are defined; see
:mod:`.selector` for buffers and scalars, :mod:`.compute`, :mod:`.reduce` and :mod:`.memory` for the
calls of each op.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ... import dtypes
from ...ir.core import GroupOp, Instr, Kernel, Op, Value
from ...platforms import Platform
from . import compute, memory, packed_rows
from .. import kir
from ..expand import combine, mathops, reductions, reorder, scan
from ..legalise_shapes import gather, rank3, relayout, shapes
from ..legalise_types import boolmask, intops, scalarunit, wordviews
from ..kir import Bin, BinOp, Call, Cond, Lit, Ref, Var, VarKind, lit
from .selector import Selector
from .support import cpp_dtype

RULES = (scalarunit.select, packed_rows.select, rank3.select, boolmask.select, combine.select, intops.select, mathops.select,
         reductions.select, relayout.select, reorder.select, scan.select, shapes.select, wordviews.select)
"""Selection rules of their own modules, tried before :func:`.compute.vector`: ``rule(sel, instr)`` returns
the calls of ``instr``, or None when it does not lower that instruction."""


def vector(sel: Selector, instr: Instr) -> list:
    """The calls computing tile instruction ``instr``."""
    for rule in RULES:
        calls = rule(sel, instr)
        if calls is not None:
            return calls
    return compute.vector(sel, instr)


def cross_core(access: Instr) -> list:
    """The cross-core flag of a MIX kernel's vector part (:func:`.mix._split_steps`) around a workspace access:
    a wait for the AIC's flag before a load marked ``wait``, the flag to the AIC after a store marked ``signal``
    (set on MTE3, behind the store's copy)."""
    if access.attr("signal") is not None:
        return [Call("CrossCoreSetFlag<2, PIPE_MTE3>", None, (), (lit(access.attr("signal")),), pipe=kir.Pipe.MTE3,
                     loc=access.loc)]
    wait = access.attr("wait")
    return [] if wait is None else [Call("CrossCoreWaitFlag<2, PIPE_S>", None, (), (lit(wait),), pipe=kir.Pipe.S,
                                         loc=access.loc)]


@dataclass
class _Seg:
    loads: list = field(default_factory=list)  # block_load instrs
    stores: list = field(default_factory=list)  # block_store instrs
    compute: list = field(default_factory=list)  # kir statements
    tail: list = field(default_factory=list)  # yield copies and loop initialisations


class _Body:
    """Builds ``Process``: scalar definitions, loops, branches and segments, in program order.

    Loops cut segments: a runtime ``for`` or ``while`` ends the segment before it and its regions
    hold their own. So does an ``if`` that accesses memory or holds a loop: it is a scalar-unit
    branch in ``Process`` around the stage calls of its branches (loads, compute and stores of a
    branch stay in that branch), and no stage holds a queue buffer across it. Any other ``if`` is
    a branch inside its segment's compute stage, around its vector calls. Values merged after an
    ``if`` and carried by a loop live in one place written by every branch and iteration: a TILE
    buffer (the ``yield`` copies into it, when the value is not computed there) or, for scalars, a
    class member (:meth:`.Selector.carry`), set where the branch or iteration ends.
    """

    def __init__(self, sel: Selector):
        self.sel = sel
        self.index = 0

    def region(self, block, targets=()) -> list:
        """The statements of ``block``; its ``yield`` writes ``targets`` (a loop's carried
        arguments, an ``if``'s results)."""
        sel = self.sel
        out: list = []
        seg = _Seg()
        merged: list = []
        for instr in block.body:
            if instr.op is Op.FOR:
                seg.tail += self.init_accs(instr)
                out += self.flush(seg)
                seg = _Seg()
                out += self.loop(instr)
            elif instr.op is Op.IF and not sel.cuts(instr):
                seg.compute += self.compute_branch(instr)
            elif instr.op is Op.IF:
                out += self.flush(seg)
                seg = _Seg()
                out += self.branch(instr)
            elif instr.op is Op.WHILE:
                seg.tail += self.init_carries(instr.operands, instr.regions[1].args)
                out += self.flush(seg)
                seg = _Seg()
                out += self.while_loop(instr)
            elif instr.op is Op.YIELD:
                copies, merged = self.merge(instr, targets)
                seg.tail += copies
            elif instr.op is Op.PTR_ADD:
                continue  # the address of a single-element load, which reads its operands
            elif instr.op in (Op.BLOCK_LOAD, Op.STRIDED_LOAD):
                if sel.load_waits(instr) or instr.attr("wait") is not None:
                    out += self.flush(seg)
                    seg = _Seg()
                    out += cross_core(instr)
                seg.loads.append(instr)
            elif instr.op in (Op.BLOCK_STORE, Op.STRIDED_STORE):
                seg.stores.append(instr)
                if instr.attr("signal") is not None:
                    out += self.flush(seg) + cross_core(instr)
                    seg = _Seg()
            elif instr.op is Op.SYNC_ALL:  # between segments: every copy to GM before it done, none from GM begun
                out += self.flush(seg) + [Call("SyncAll", None, (), pipe=kir.Pipe.S, loc=instr.loc)]
                seg = _Seg()
            elif instr.op is Op.PRINT:
                seg.compute += compute.device_print(sel, instr)
            elif instr.op is Op.GATHER_LOAD:
                seg.compute += gather.gather_load(sel, instr)
            elif instr.op is Op.SCATTER_STORE:
                seg.compute += gather.scatter_store(sel, instr)
            elif instr.op is Op.SPAN_LOAD:
                seg.compute += memory.span_load(sel, instr)
            elif sel.rereads(instr):  # after the stores before it: the segment ends here
                out += self.flush(seg)
                seg = _Seg()
                out += sel.reread(instr)
                sel.define_scalar(instr, out)
            elif len(instr.results) == 1 and instr.result.type.is_scalar and instr.op not in GroupOp.REDUCE:
                sel.define_scalar(instr, seg.compute if sel.vector_derived(instr.result) else out)
            else:
                seg.compute += vector(sel, instr)
        return out + self.flush(seg) + merged

    def merge(self, yld: Instr, targets) -> tuple[list, list]:
        """What a ``yield`` does: copies of tiles into their targets' buffers, sets of members."""
        sel = self.sel
        copies, pairs = [], []
        for value, target in zip(yld.operands, targets):
            if target.type.is_scalar:
                pairs.append((sel.scalars[target.id], sel.scalar_as(value, target.type.dtype)))
            elif sel.bufs[value.id] != sel.bufs[target.id]:
                copies.append(compute.copy(sel, sel.ref(target), value))
        return copies, assign(sel, pairs, yld.loc)

    def loop(self, instr: Instr) -> list:
        """A runtime ``for``: scalar carries set before it, then the loop (see :func:`loop_head`)."""
        sel = self.sel
        region = instr.regions[0]
        carried = [(arg, init, result) for arg, init, result in
                   zip(region.args[1:], instr.operands[3:], instr.results) if arg.type.is_scalar]
        pairs = [(sel.carry((arg, result), sel.hint(result, sel.hint(arg, "carry"))),
                  sel.scalar_as(init, arg.type.dtype)) for arg, init, result in carried]
        out = assign(sel, pairs, instr.loc)
        iv = region.args[0]
        before, head, var_def = loop_head(sel, instr, Var(iv.id, iv.type.dtype, sel.hint(iv, "i"), VarKind.LOOP))
        body = var_def + self.region(region, region.args[1:])
        return out + before + [dataclasses.replace(head, body=tuple(body))]

    def while_loop(self, instr: Instr) -> list:
        """A ``while``: scalar carries set before it; its test region computes the condition."""
        sel = self.sel
        test, body = instr.regions
        pairs = [(sel.carry((a, b, r), sel.hint(r, sel.hint(b, "carry"))), sel.scalar_as(init, a.type.dtype))
                 for init, a, b, r in zip(instr.operands, test.args, body.args, instr.results) if a.type.is_scalar]
        out = assign(sel, pairs, instr.loc)
        cond_stmts = self.region(test)
        cond = sel.expr(test.body[-1].operands[0])
        if cond_stmts and isinstance(cond_stmts[-1], kir.Let) and cond_stmts[-1].var == cond and len(
                sel.users[test.body[-1].operands[0].id]) == 1:
            cond = cond_stmts.pop().expr  # read once: in the loop's head
        return out + [kir.While(tuple(cond_stmts), cond, tuple(self.region(body, body.args)), loc=instr.loc)]

    def compute_branch(self, instr: Instr) -> list:
        """An ``if`` inside a compute stage: its branches' scalars and vector calls, and the copies
        and sets of what it merges, under one ``If``."""
        sel = self.sel
        self.merged_members(instr)
        then, orelse = ([], [])
        for region, body in zip(instr.regions, (then, orelse)):
            for inner in region.body:
                if inner.op is Op.IF:
                    body += self.compute_branch(inner)
                elif inner.op is Op.YIELD:
                    copies, sets = self.merge(inner, instr.results)
                    body += copies + sets
                elif len(inner.results) == 1 and inner.result.type.is_scalar and inner.op not in GroupOp.REDUCE:
                    sel.define_scalar(inner, body)
                else:
                    body += vector(sel, inner)
        return self.if_stmt(instr, then, orelse)

    def merged_members(self, instr: Instr) -> None:
        """The members of the scalars an ``if`` merges, named after what its branches yield."""
        sel = self.sel
        yields = [next(i for i in r.body if i.op is Op.YIELD) for r in instr.regions]
        for k, result in enumerate(instr.results):
            if result.type.is_scalar:
                names = [sel.hints[y.operands[k].id] for y in yields if y.operands[k].id in sel.hints]
                sel.carry((result,), sel.hint(result, (names or ["merged"])[0]))

    def if_stmt(self, instr: Instr, then: list, orelse: list) -> list:
        """One ``If`` (an empty then branch, as an early ``return`` leaves it, is the negated
        condition)."""
        cond = self.sel.expr(instr.operands[0])
        if not then:
            then, orelse, cond = orelse, [], negate(self.sel, instr.operands[0])
        return [kir.If(cond, tuple(then), loc=instr.loc, orelse=tuple(orelse))] if then else []

    def branch(self, instr: Instr) -> list:
        """An ``if`` that accesses memory or holds loops: in ``Process``, around its branches'
        segments."""
        self.merged_members(instr)
        return self.if_stmt(instr, *(self.region(r, instr.results) for r in instr.regions))

    def init_accs(self, loop: Instr) -> list:
        return self.init_carries(loop.operands[3:], loop.regions[0].args[1:])

    def init_carries(self, inits, args) -> list:
        """Calls that set the buffers of the tiles a loop carries to their initial values."""
        sel = self.sel
        out = []
        for init, arg in zip(inits, args):
            if arg.type.is_scalar:
                continue  # a member set before the loop
            c = sel.const_of(init)
            if c is not None and arg.type.dtype == dtypes.int64:  # no int64 Duplicate: its words (:mod:`.wordviews`)
                out += wordviews.words(sel, sel.ref(arg, dtypes.int32), c, None, sel.defs[init.id].loc)
            elif c is not None and arg.type.dtype in (dtypes.int8, dtypes.uint8):
                out += wordviews.repeated_byte(sel.ref(arg), c, sel.defs[init.id].loc)
            elif c is not None:
                out.append(Call("Duplicate", sel.ref(arg), (), (Lit(c, arg.type.dtype), lit(sel.count(arg))),
                                loc=sel.defs[init.id].loc))
            elif sel.bufs[init.id] != sel.bufs[arg.id]:
                out.append(compute.copy(sel, sel.ref(arg), init))
        return out

    def flush(self, seg: _Seg) -> list:
        sel = self.sel
        if not (seg.loads or seg.stores or seg.compute or seg.tail):
            return []
        copy_in = [s for i in seg.loads for s in _memory(i).copy_in(sel, i)]
        copy_out = [s for i in seg.stores for s in _memory(i).copy_out(sel, i)]
        body = [s for i in seg.loads for s in _dequeue(sel, i)]
        body += [kir.Queue(kir.QOp.ALLOC, sel.outbuf[id(s)]) for s in seg.stores]
        body += seg.compute
        for s in seg.stores:
            value, buf = s.operands[-1], sel.outbuf[id(s)]
            if s.op is Op.STRIDED_STORE:
                body += gather.spread(sel, s)
            elif sel.bufs[value.id] != buf:
                body.append(compute.copy(sel, Ref(buf, buf.dtype, lit(0), 1), value))
        body += seg.tail
        body += [kir.Queue(kir.QOp.ENQUE, sel.outbuf[id(s)]) for s in seg.stores]
        body += [kir.Queue(kir.QOp.FREE, sel.inbuf.get(i.result.id) or sel.bufs[i.result.id]) for i in seg.loads
                 if i.result.id not in sel.held]
        self.index += 1
        return [kir.Segment(self.index, tuple(copy_in), tuple(body), tuple(copy_out))]


def _dequeue(sel: Selector, load: Instr) -> list:
    """The compute stage's part of a load: its DeQue, ``other`` filled (an int64 block load whose ``other`` is
    not one 32-bit word twice as a gathered load is, :func:`.gather.fill_block`), a copy to its tile."""
    return gather.fill_block(sel, load) if sel.words_filled(load) else _memory(load).dequeue(sel, load)


def _memory(access: Instr):
    """The module that selects a load or store: block copies, or bursts through Gather for strided ones."""
    return gather if access.op in (Op.STRIDED_LOAD, Op.STRIDED_STORE) else memory


def loop_head(sel: Selector, instr: Instr, var: Var) -> tuple[list, kir.For, list]:
    """The statements before the ``For`` of a runtime loop over ``var``, the ``For`` (its body
    still empty) and the statements that open its body. A step known to be positive (constants, ``tl.num_programs``, their products:
    the grid-stride form) or a negative constant compares the variable with the bound; any other
    runtime step counts trips, as Python's ``range`` does: ``for (k = 0; k < trips; k++)`` with
    ``var = start + k * step`` first in the body (no iteration for a zero step)."""
    lower, upper, step = instr.operands[:3]
    # a bound computed in int64_t for a GM offset (:meth:`.facts.KernelFacts.is_wide`) is narrowed to the variable's
    # dtype, as the interpreter computes it
    start, stop = (sel.scalar_as(x, var.ctype) if sel.is_wide(x) else sel.expr(x) for x in (lower, upper))
    sign = _sign(sel, step)
    sel.scalars[var.key] = var
    if sign:
        return [], kir.For(var, start, stop, sel.expr(step), (), loc=instr.loc,
                           cmp=BinOp.LT if sign > 0 else BinOp.GT), []
    dt = var.ctype
    st = sel.scalar_as(step, dt)
    zero, one = Lit(0, dt), Lit(1, dt)
    up = Bin(BinOp.DIV, Bin(BinOp.SUB, Bin(BinOp.ADD, Bin(BinOp.SUB, stop, start), st), one), st)
    down = Bin(BinOp.DIV, Bin(BinOp.SUB, Bin(BinOp.SUB, Bin(BinOp.SUB, start, stop), st), one),
               Bin(BinOp.SUB, zero, st))
    trips = Var(sel.fresh_key(), dt, var.hint + "Trips")
    count = Cond(Bin(BinOp.GT, st, zero), up, Cond(Bin(BinOp.LT, st, zero), down, zero))
    k = Var(sel.fresh_key(), dt, var.hint + "Trip", VarKind.LOOP)
    local = Var(var.key, dt, var.hint)
    sel.scalars[var.key] = local
    return ([kir.Let(trips, count, instr.loc)], kir.For(k, zero, trips, one, (), loc=instr.loc),
            [kir.Let(local, kir.add(start, kir.mul(k, st)))])


def _sign(sel: Selector, v: Value) -> int:
    """1 or -1 when scalar ``v`` is known positive or negative at compile time, else 0."""
    c = sel.const_of(v)
    if c is not None:
        return (c > 0) - (c < 0)
    d = sel.defs.get(v.id)
    if d is None:
        return 0
    if d.op is Op.NUM_PROGRAMS:
        return 1
    if d.op in (Op.MUL, Op.CAST) and all(_sign(sel, x) > 0 for x in d.operands):
        return 1
    return 0


NEGATED = {BinOp.LT: BinOp.GE, BinOp.GE: BinOp.LT, BinOp.GT: BinOp.LE, BinOp.LE: BinOp.GT,
           BinOp.EQ: BinOp.NE, BinOp.NE: BinOp.EQ}


def negate(sel: Selector, cond: Value) -> kir.Expr:
    """``!cond``: the opposite comparison of ints, else ``Not`` (``!(a < b)`` is not ``a >= b``
    for a NaN)."""
    e, d = sel.expr(cond), sel.defs.get(cond.id)
    if isinstance(e, Bin) and e.op in NEGATED and d is not None and all(x.type.dtype.is_int for x in d.operands):
        return Bin(NEGATED[e.op], e.a, e.b)
    return kir.Not(e)


def assign(sel: Selector, pairs, loc) -> list:
    """``member = expr`` for each pair, as one parallel assignment: when an expression reads a
    member set before it, every expression is first kept in a ``const`` local."""
    targets = {var for var, _ in pairs}
    sets = [kir.Set(var, e, loc) for var, e in pairs]
    reads = [{x for x in kir.sub_exprs(e) if x in targets} for _, e in pairs]
    if not any(r & {v for v, _ in pairs[:i]} for i, r in enumerate(reads)):
        return sets
    temps = [Var(sel.fresh_key(), var.ctype, var.hint + "Next") for var, _ in pairs]
    return ([kir.Let(t, e, loc) for t, (_, e) in zip(temps, pairs)]
            + [kir.Set(var, t, loc) for t, (var, _) in zip(temps, pairs)])


def select(kernel: Kernel, platform: Platform, general: bool = False) -> kir.Kernel:
    """The instruction-selection pass: tile IR (after :mod:`.decompose`) -> kernel IR (``general``:
    in the form whose structure does not depend on tile extents, see :mod:`.repeat`)."""
    sel = Selector(kernel, platform, general)
    process = _Body(sel).region(kernel.body) + [kir.Queue(kir.QOp.FREE, b) for b in sel.held.values()]
    gms = tuple(kir.GmParam(k, n, cpp_dtype(p.type.dtype.element_ty)) for k, (p, n) in
                enumerate(zip(kernel.params, kernel.param_names)) if not isinstance(p.type.dtype, dtypes.DType))
    return kir.Kernel(kernel.name, kernel.constexprs, gms, tuple(process), tuple(sel.members),
                      loc=kernel.loc, held=tuple(sel.held.values()))
