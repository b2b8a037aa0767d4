"""The dispatch table: the handler of every op, and the classes of ops the runner schedules apart."""
from __future__ import annotations

from collections.abc import Callable, Sequence

from ..ir.core import GroupOp, Op
from .compute import (UNIFORM_LEAVES, assert_, broadcast, cat, dot, elementwise, expand_dims, flip, histogram,
                      join, leaf, num_programs, permute, program_id, reduce, reduce_with, reshape, scan,
                      slice_, sort, split)
from .control import for_, if_, print_, sync_all, while_
from .memory import (atomic, block_load, block_store, gather_load, load, scatter_store, span_load, store,
                     strided_load)
from .values import Array


HANDLERS: dict[Op, Callable[..., Sequence[Array]]] = {
    **{op: elementwise for op in GroupOp.ELEMENTWISE},
    **{op: reduce for op in GroupOp.REDUCE},
    **{op: leaf for op in UNIFORM_LEAVES},
    Op.PROGRAM_ID: program_id,
    Op.NUM_PROGRAMS: num_programs,
    Op.BROADCAST: broadcast,
    Op.EXPAND_DIMS: expand_dims,
    Op.LOAD: load,
    Op.STORE: store,
    Op.BLOCK_LOAD: block_load,
    Op.BLOCK_STORE: block_store,
    Op.STRIDED_LOAD: strided_load,
    Op.STRIDED_STORE: block_store,
    Op.GATHER_LOAD: gather_load,
    Op.SCATTER_STORE: scatter_store,
    Op.SPAN_LOAD: span_load,
    Op.FOR: for_,
    Op.WHILE: while_,
    Op.IF: if_,
    Op.YIELD: lambda P, instr, *values: values,
    Op.PRINT: print_,
    Op.RESHAPE: reshape,
    Op.PERMUTE: permute,
    Op.JOIN: join,
    Op.SPLIT: split,
    Op.CAT: cat,
    Op.FLIP: flip,
    Op.SLICE: slice_,
    Op.SORT: sort,
    Op.HISTOGRAM: histogram,
    Op.REDUCE: reduce_with,
    Op.SCAN: scan,
    Op.DOT: dot,
    Op.ASSERT: assert_,
    Op.SYNC_ALL: sync_all,
    **{op: atomic for op in GroupOp.ATOMIC},
}
"""How each op runs: ``handler(programs, instr, *operand_arrays) -> result arrays``."""

NOT_BATCHED = frozenset({Op.PRINT, Op.ASSERT, Op.SYNC_ALL})
"""Ops whose order of execution shows: loops that contain them run iteration by iteration."""

LOOPS = frozenset({Op.FOR, Op.WHILE})

COMPACT = GroupOp.ELEMENTWISE | GroupOp.LEAF | GroupOp.SHAPE | LOOPS | frozenset({
    Op.LOAD, Op.STORE, Op.BLOCK_LOAD, Op.BLOCK_STORE, Op.IF, Op.YIELD})
"""Ops whose handlers take compact and symbolic operands (:mod:`ascdsl.affine`); the others get whole
tiles."""
