"""Persistent programs: the programs of a launch as a loop on fewer of them, loads they all make loaded once.

rms norm's ``gamma = tl.load(gamma_ptr + cols, ...)`` reads the same bytes in every program of a launch of one
row per program: each core reads it again for each of its rows. :func:`persistent_programs` rewrites a kernel
whose top-level loads include such a load as Triton's persistent form::

    <the program-invariant prefix: scalars, offsets, masks and the loads no write of the kernel may reach>
    for pid in tl.range(tl.program_id(0), PERSISTENT, tl.num_programs(0)):
        <the rest, tl.program_id(0) as pid>

``PERSISTENT`` (:data:`PERSISTENT`, a scalar parameter the rewrite appends) is the launch's program count, so a
launch of any grid up to it runs each original program once, in the loop of the program ``pid %`` grid: the
same instructions on the same values, so its results are the original's bit for bit. A load is invariant where
its address, mask and ``other`` are computed from the kernel's arguments and constants alone (not from the
program id, nor from another load) and no write of the kernel may reach its bytes (the aliasing rule of
:mod:`.reuse`); a kernel with no such load, or whose program id does not enter as the rows form batches it
(:func:`.batching.refusal`), or that counts its programs itself (``tl.num_programs``), is returned as it is.
Program batching then runs the loop P rows a trip (:mod:`.batching`: a grid-stride loop), the invariant loads
once per batched program.
"""
from __future__ import annotations

from dataclasses import replace

from .. import dtypes
from ..ir.builder import Fresh
from ..ir.core import Block, Instr, Kernel, Op, Type, Value, walk
from ..ir.treemap import tree_map
from .batching import refusal, varying
from .reuse import PURE, Aliasing

PERSISTENT = "persistent_programs"
"""The scalar parameter a persistent kernel takes: the program count of the launch it stands for."""


def invariant_loads(kernel: Kernel) -> tuple[list[Instr], list[Instr]]:
    """``(prefix, rest)``: the top-level instructions of ``kernel`` computed from its arguments and constants
    alone, the loads among them no write of the kernel may reach (the module docstring), and the others in
    order; no load in ``prefix`` where none qualifies."""
    var, alias = varying(kernel), Aliasing(kernel)
    writes = alias.writes(kernel.body.body)
    ready = {a.id for a in kernel.body.args}
    prefix, rest = [], []
    for instr in kernel.body.body:
        pure = instr.op in PURE and not instr.regions and len(instr.results) == 1
        load = instr.op is Op.LOAD and not any(alias.may_reach(alias.of(instr.operands[0]), w) for w in writes)
        if ((pure or load) and instr.op is not Op.PROGRAM_ID and instr.result.id not in var
                and all(v.id in ready for v in instr.operands)):
            prefix.append(instr)
            ready.add(instr.result.id)
        else:
            rest.append(instr)
    return (prefix, rest) if any(i.op is Op.LOAD for i in prefix) else ([], list(kernel.body.body))


def persistent_programs(kernel: Kernel) -> Kernel:
    """``kernel`` as the persistent loop of the module docstring, its invariant loads before the loop; ``kernel``
    where it has none or the rows form does not batch it."""
    if refusal(kernel) is not None or any(i.op is Op.NUM_PROGRAMS for i in walk(kernel.body)):
        return kernel
    prefix, rest = invariant_loads(kernel)
    if not prefix:
        return kernel
    emit = Fresh(kernel)
    i32 = Type(dtypes.int32)
    programs = emit.value(i32)
    loc = next(i.loc for i in rest if i.op is Op.PROGRAM_ID) if any(i.op is Op.PROGRAM_ID for i in rest) else kernel.loc
    head = list(prefix)
    first = emit.instr(head, Op.PROGRAM_ID, i32, (), (("axis", 0),), loc)
    step = emit.instr(head, Op.NUM_PROGRAMS, i32, (), (("axis", 0),), loc)
    pid = emit.value(i32)
    subst = {i.result.id: pid for i in walk(kernel.body) if i.op is Op.PROGRAM_ID}
    body = _with_pid(rest, subst)
    loop = Instr(Op.FOR, (), (first, programs, step), (),
                 (replace(kernel.body, args=(pid,), body=(*body, Instr(Op.YIELD, loc=loc))),), loc)
    names = set(kernel.param_names)
    name = PERSISTENT
    while name in names:
        name += "_"
    return replace(kernel, param_names=(*kernel.param_names, name),
                   body=replace(kernel.body, args=(*kernel.body.args, programs), body=(*head, loop)))


def _with_pid(body, subst: dict[int, Value]) -> tuple[Instr, ...]:
    """``body`` with each ``tl.program_id(0)`` dropped and its uses (``subst``) the loop's index, in regions too."""
    def used(x):
        return subst.get(x.id) if isinstance(x, Value) else None

    def dropped(x):
        return replace(x, body=tuple(i for i in x.body if i.op is not Op.PROGRAM_ID)) if isinstance(x, Block) else None

    return tree_map(Block((), tuple(body)), before=used, after=dropped).body


__all__ = ["PERSISTENT", "invariant_loads", "persistent_programs"]
