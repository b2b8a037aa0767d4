"""What every part of instruction selection shares: its C types and constants, its located errors, the program
id's expressions and the name helpers (:mod:`.selector` holds the state; these are plain functions)."""
from __future__ import annotations

from ... import dtypes
from ...errors import CompilationError
from ...ir.core import Instr, Op
from .. import kir
from ..kir import BinOp, Var, VarKind

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


def bool_error(instr: Instr, what: str) -> CompilationError:
    return CompilationError(instr.loc, f"the Ascend C backend does not support {what}", hint=BOOL_HINT)


def unsupported(instr: Instr, what: str) -> CompilationError:
    return CompilationError(instr.loc, f"the Ascend C backend does not support {what} yet",
                            hint="run this kernel on the interpreter (backend='interpreter')")


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
