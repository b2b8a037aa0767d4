"""The instruction-selection pass: tile IR (after :mod:`.decompose`) -> kernel IR.

The body is cut at its ``for`` loops into :class:`~.kir.Segment` s: the block loads of a segment
(its CopyIn), its compute (DeQue and ``other`` fills, AllocTensor of the stores' queues, the vector
calls, yield copies and the next loop's accumulator initialisation, EnQue/FreeTensor) and its
block stores (CopyOut). Scalars become ``Let`` s of ``Process`` where they are defined; see
:mod:`.selector` for buffers and scalars, :mod:`.compute`, :mod:`.reduce` and :mod:`.memory` for the
calls of each op.
"""
from __future__ import annotations

from .. import dtypes
from ..ir.core import GroupOp, Instr, Kernel, Op
from ..platforms import Platform
from . import compute, debug, gather, kir, memory, philox
from .kir import Call, Lit, Ref, Var, VarKind, lit
from .selector import Selector, _Seg, unsupported


class _Body:
    """Builds ``Process``: scalar definitions, loops and segments, in program order."""

    def __init__(self, sel: Selector):
        self.sel = sel
        self.index = 0

    def region(self, block) -> list:
        sel = self.sel
        out: list = []
        seg = _Seg()
        for instr in block.body:
            if instr.op is Op.FOR:
                if any(a.type.is_scalar for a in instr.regions[0].args[1:]):
                    raise unsupported(instr, "scalars carried by loops")
                seg.tail += self.init_accs(instr)
                out += self.flush(seg)
                seg = _Seg()
                lower, upper, step = instr.operands[:3]
                if not isinstance(sel.const_of(step), int) or sel.const_of(step) <= 0:
                    raise unsupported(instr, "loops without a constant positive step")
                iv = instr.regions[0].args[0]
                var = Var(iv.id, iv.type.dtype, sel.hint(iv, "i"), VarKind.LOOP)
                sel.scalars[iv.id] = var
                body = self.region(instr.regions[0])
                out.append(kir.For(var, sel.expr(lower), sel.expr(upper), sel.expr(step), tuple(body),
                                   loc=instr.loc))
            elif instr.op is Op.YIELD:
                for value, arg in zip(instr.operands, block.args[1:]):
                    if sel.bufs[value.id] != sel.bufs[arg.id]:
                        seg.tail.append(compute.copy(sel, sel.ref(arg), value))
            elif instr.op in (Op.BLOCK_LOAD, Op.STRIDED_LOAD):
                seg.loads.append(instr)
            elif instr.op in (Op.BLOCK_STORE, Op.STRIDED_STORE):
                seg.stores.append(instr)
            elif instr.op is Op.PRINT:
                seg.compute += debug.device_print(sel, instr)
            elif instr.op is Op.GATHER_LOAD:
                seg.compute += gather.gather_load(sel, instr)
            elif instr.op is Op.SCATTER_STORE:
                seg.compute += gather.scatter_store(sel, instr)
            elif instr.op is Op.UMULHI:
                seg.compute += philox.umulhi(sel, instr)
            elif instr.results and instr.result.type.is_scalar and instr.op not in GroupOp.REDUCE:
                sel.define_scalar(instr, seg.compute if sel.vector_derived(instr.result) else out)
            else:
                seg.compute += compute.vector(sel, instr)
        return out + self.flush(seg)

    def init_accs(self, loop: Instr) -> list:
        sel = self.sel
        out = []
        for init, arg in zip(loop.operands[3:], loop.regions[0].args[1:]):
            c = sel.const_of(init)
            if c is not None:
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
        body = [s for i in seg.loads for s in _memory(i).dequeue(sel, i)]
        body += [kir.Queue(kir.QOp.ALLOC, sel.outbuf[id(s)]) for s in seg.stores]
        body += seg.compute
        for s in seg.stores:
            value, buf = s.operands[-1], sel.outbuf[id(s)]
            if s.op is Op.STRIDED_STORE:
                body += gather.spread(sel, s)
            elif value.type.is_scalar:  # a one-element atomic
                body.append(Call("Duplicate", Ref(buf, buf.dtype, lit(0), 1), (), (sel.scalar_as(value, buf.dtype), lit(1)),
                                 loc=s.loc))
            elif sel.bufs[value.id] != buf:
                body.append(compute.copy(sel, Ref(buf, buf.dtype, lit(0), 1), value))
        body += seg.tail
        body += [kir.Queue(kir.QOp.ENQUE, sel.outbuf[id(s)]) for s in seg.stores]
        body += [kir.Queue(kir.QOp.FREE, sel.inbuf.get(i.result.id) or sel.bufs[i.result.id]) for i in seg.loads]
        self.index += 1
        return [kir.Segment(self.index, tuple(copy_in), tuple(body), tuple(copy_out))]


def _memory(access: Instr):
    """The module that selects a load or store: block copies, or bursts through Gather for strided ones."""
    return gather if access.op in (Op.STRIDED_LOAD, Op.STRIDED_STORE) else memory


def select(kernel: Kernel, platform: Platform) -> kir.Kernel:
    """The instruction-selection pass: tile IR (after :mod:`.decompose`) -> kernel IR."""
    sel = Selector(kernel, platform)
    process = _Body(sel).region(kernel.body)
    gms = tuple(kir.GmParam(k, n, p.type.dtype.element_ty) for k, (p, n) in
                enumerate(zip(kernel.params, kernel.param_names)) if not isinstance(p.type.dtype, dtypes.DType))
    return kir.Kernel(kernel.name, kernel.constexprs, gms, tuple(process), tuple(sel.members),
                      loc=kernel.loc)
