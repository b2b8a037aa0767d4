"""The dispatch table: the handler of every op, and the classes of ops the runner schedules apart."""
from __future__ import annotations

from collections.abc import Callable, Sequence

from ..ir.core import GroupOp, Op
from .compute import (UNIFORM_LEAVES, _assert, _broadcast, _cat, _dot, _elementwise, _expand_dims, _flip, _histogram,
                      _join, _leaf, _num_programs, _permute, _program_id, _reduce, _reduce_with, _reshape, _scan,
                      _slice, _sort, _split)
from .control import _for, _if, _print, _while
from .memory import (_atomic, _block_load, _block_store, _gather_load, _load, _scatter_store, _span_load, _store,
                     _strided_load)
from .values import Array


HANDLERS: dict[Op, Callable[..., Sequence[Array]]] = {
    **{op: _elementwise for op in GroupOp.ELEMENTWISE},
    **{op: _reduce for op in GroupOp.REDUCE},
    **{op: _leaf for op in UNIFORM_LEAVES},
    Op.PROGRAM_ID: _program_id,
    Op.NUM_PROGRAMS: _num_programs,
    Op.BROADCAST: _broadcast,
    Op.EXPAND_DIMS: _expand_dims,
    Op.LOAD: _load,
    Op.STORE: _store,
    Op.BLOCK_LOAD: _block_load,
    Op.BLOCK_STORE: _block_store,
    Op.STRIDED_LOAD: _strided_load,
    Op.STRIDED_STORE: _block_store,
    Op.GATHER_LOAD: _gather_load,
    Op.SCATTER_STORE: _scatter_store,
    Op.SPAN_LOAD: _span_load,
    Op.FOR: _for,
    Op.WHILE: _while,
    Op.IF: _if,
    Op.YIELD: lambda P, instr, *values: values,
    Op.PRINT: _print,
    Op.RESHAPE: _reshape,
    Op.PERMUTE: _permute,
    Op.JOIN: _join,
    Op.SPLIT: _split,
    Op.CAT: _cat,
    Op.FLIP: _flip,
    Op.SLICE: _slice,
    Op.SORT: _sort,
    Op.HISTOGRAM: _histogram,
    Op.REDUCE: _reduce_with,
    Op.SCAN: _scan,
    Op.DOT: _dot,
    Op.ASSERT: _assert,
    **{op: _atomic for op in GroupOp.ATOMIC},
}
"""How each op runs: ``handler(programs, instr, *operand_arrays) -> result arrays``."""

NOT_BATCHED = frozenset({Op.PRINT, Op.ASSERT})
"""Ops whose order of execution shows: loops that contain them run iteration by iteration."""

LOOPS = frozenset({Op.FOR, Op.WHILE})

COMPACT = GroupOp.ELEMENTWISE | GroupOp.LEAF | GroupOp.SHAPE | LOOPS | frozenset({
    Op.LOAD, Op.STORE, Op.BLOCK_LOAD, Op.BLOCK_STORE, Op.IF, Op.YIELD})
"""Ops whose handlers take compact and symbolic operands (:mod:`ascdsl.affine`); the others get whole
tiles."""
