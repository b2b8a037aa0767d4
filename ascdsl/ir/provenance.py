"""Which pointer parameter each memory access goes through (pointer provenance).

Pointers change only by pointer arithmetic, so each pointer value derives from a set of the
kernel's pointer parameters: one for straight-line code, several only where ``where``, an ``if``
or a loop-carried value mixes pointers.
"""
from __future__ import annotations

from ..dtypes import PointerType
from .core import GroupOp, Instr, Kernel, Op, walk

MEMORY_OPS = frozenset({Op.LOAD, Op.STORE, Op.BLOCK_LOAD, Op.BLOCK_STORE, Op.STRIDED_LOAD, Op.STRIDED_STORE,
                        Op.GATHER_LOAD, Op.SCATTER_STORE, Op.SPAN_LOAD})
STORES = frozenset({Op.STORE, Op.BLOCK_STORE, Op.STRIDED_STORE, Op.SCATTER_STORE})


def access_roots(kernel: Kernel) -> dict[int, frozenset[int]]:
    """For each memory instruction (by ``id``): the pointer parameters (indices among the kernel's
    pointer parameters) its pointer may derive from."""
    roots = pointer_roots(kernel)
    return {id(i): roots.get(i.operands[0].id, frozenset()) for i in walk(kernel.body) if i.op in MEMORY_OPS}


def pointer_roots(kernel: Kernel) -> dict[int, frozenset[int]]:
    """For each pointer value (by value id): the pointer parameters (indices among the kernel's pointer
    parameters) it may derive from."""
    buffers = [p for p in kernel.params if isinstance(p.type.dtype, PointerType)]
    roots: dict[int, frozenset[int]] = {v.id: frozenset({i}) for i, v in enumerate(buffers)}

    def of(values) -> frozenset[int]:
        return frozenset().union(*(roots.get(v.id, frozenset()) for v in values))

    changed = True
    while changed:  # loop-carried pointers take the union of their inits and yields
        changed = False
        for instr in walk(kernel.body):
            for value, sources in _flows(instr):
                if isinstance(value.type.dtype, PointerType):
                    new = roots.get(value.id, frozenset()) | of(sources)
                    if new != roots.get(value.id):
                        roots[value.id], changed = new, True
    return roots


def stored_params(kernel: Kernel) -> frozenset[str]:
    """The names of the pointer parameters the kernel may store through (by a store or an atomic)."""
    names = [n for n, p in zip(kernel.param_names, kernel.params) if isinstance(p.type.dtype, PointerType)]
    roots = pointer_roots(kernel)
    return frozenset(names[k] for i in walk(kernel.body) if i.op in STORES | GroupOp.ATOMIC
                     for k in roots.get(i.operands[0].id, ()))


def _flows(instr: Instr):
    """``(value, sources)``: each value the instruction defines and the values it is computed from."""
    flows = [(r, instr.operands) for r in instr.results]
    if instr.op is Op.WHILE:  # both regions' arguments and the results are the carried values
        test, body = instr.regions
        yields = body.body[-1].operands
        flows += [(r, (y,)) for r, y in zip(instr.results, yields)]
        return flows + [(a, (c, y)) for region in (test, body)
                        for a, c, y in zip(region.args, instr.operands, yields)]
    for region in instr.regions:
        yields = region.body[-1].operands if region.body and region.body[-1].op is Op.YIELD else ()
        carried = instr.operands[3:] if instr.op is Op.FOR else ()
        flows += [(r, (y,)) for r, y in zip(instr.results, yields)]
        flows += [(a, (c, y)) for a, c, y in zip(region.args[1:], carried, yields)]
    return flows
