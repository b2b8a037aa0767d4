"""What the A2 vector cores cannot do: a located error naming the feature and the hardware reason.

These are not missing rules of the backend but limits of the target: the interpreter runs such
kernels, and the hint says so.
"""
from __future__ import annotations

from ... import dtypes
from ...errors import CompilationError
from ...ir.core import GroupOp, Instr, Kernel, Op, walk
from ...platforms import Platform

CUBE = "matrix products run on the cube unit (Mmad over L0A/L0B/L0C), which the vector cores do not have"
GM_ATOMICS = ("the only GM atomics of A2 are the DMA engine's SetAtomicAdd/SetAtomicMax/SetAtomicMin, which "
              "combine a copy into GM without reading the old values back")

HARDWARE = {
    Op.DOT: ("`tl.dot`", CUBE),
    Op.ATOMIC_AND: ("`tl.atomic_and`", GM_ATOMICS),
    Op.ATOMIC_OR: ("`tl.atomic_or`", GM_ATOMICS),
    Op.ATOMIC_XOR: ("`tl.atomic_xor`", GM_ATOMICS),
    Op.ATOMIC_XCHG: ("`tl.atomic_xchg`", GM_ATOMICS),
    Op.ATOMIC_CAS: ("`tl.atomic_cas`", GM_ATOMICS),
    # add/max/min reach the backend only when their old values are read (else they are block stores)
    Op.ATOMIC_ADD: ("reading the old values `tl.atomic_add` returns", GM_ATOMICS),
    Op.ATOMIC_MAX: ("reading the old values `tl.atomic_max` returns", GM_ATOMICS),
    Op.ATOMIC_MIN: ("reading the old values `tl.atomic_min` returns", GM_ATOMICS),
}
"""Ops the A2 vector cores cannot run: ``(feature, reason)``."""

WIDE = frozenset({dtypes.int64})
"""Element types the vector unit computes nothing with (it moves and converts them; its arithmetic and
comparisons take at most 32-bit elements)."""
WIDE_COMPUTE = (GroupOp.BINARY | GroupOp.UNARY | GroupOp.MATH | GroupOp.REDUCE | {Op.SORT, Op.HISTOGRAM}) - {
    Op.CAST, Op.BITCAST}
"""Tile ops that compute with (rather than move, convert, fill or select: :mod:`.wordviews`) their operands'
elements. CANN 8.1's A2 (``dav_c220``) ``Add``/``Sub``/``Mul``/``Max``/``Min`` take half, float, int16
and int32."""
SCALAR_UNIT = (frozenset({Op.ADD, Op.SUB, Op.MUL, Op.AND, Op.OR, Op.XOR, Op.NOT, Op.NEG, Op.ABS, Op.SHL, Op.SHR,
                          Op.IDIV, Op.MOD, Op.MAXIMUM, Op.MINIMUM, Op.SUM, Op.MAX, Op.MIN}) | GroupOp.COMPARE | GroupOp.COMBINE)
"""Ops of :data:`WIDE_COMPUTE` the core's scalar unit runs instead, element by element (:mod:`.scalarunit`); a
``tl.reduce``/``tl.associative_scan`` whose combine function is not one of these ops is :mod:`.combine`'s error."""

ATOMIC_DTYPES = frozenset({dtypes.float32, dtypes.float16, dtypes.bfloat16, dtypes.int32, dtypes.int16, dtypes.int8})
"""Element types SetAtomicAdd/Max/Min take on A2."""


def hardware_error(instr: Instr) -> CompilationError:
    feature, reason = HARDWARE[instr.op]
    return CompilationError(instr.loc, f"{feature} cannot run on the Ascend A2 vector cores: {reason}",
                            hint="run this kernel on the interpreter (backend='interpreter')")


def check_vector_cores(kernel: Kernel, platform: Platform) -> Kernel:
    """``kernel`` unchanged, or a located error at its first op the vector cores cannot run (atomics
    of other types first: their values are computed in those types too)."""
    for instr in walk(kernel.body):
        dt = instr.operands[-1].type.dtype if instr.attr("atomic") else None
        if dt is not None and dt not in ATOMIC_DTYPES:
            raise CompilationError(instr.loc, f"`tl.{instr.attr('atomic')}` of {dt} cannot run on the Ascend A2 "
                                              "vector cores: SetAtomicAdd/Max/Min take "
                                              + ", ".join(sorted(str(d) for d in ATOMIC_DTYPES)) + " only",
                                   hint="accumulate in one of those types, or run this kernel on the interpreter")
    for instr in walk(kernel.body):
        if instr.op in HARDWARE:
            raise hardware_error(instr)
        wide = [v.type.dtype for v in (*instr.results, *instr.operands) if not v.type.is_scalar and v.type.dtype in WIDE]
        if instr.op in WIDE_COMPUTE and wide and not on_scalar_unit(instr):
            raise wide_error(instr, wide[0])
    return kernel


def on_scalar_unit(instr: Instr) -> bool:
    """``instr`` computes with tiles of a :data:`WIDE` type on the scalar unit (:data:`SCALAR_UNIT`)."""
    return instr.op in SCALAR_UNIT and any(
        not v.type.is_scalar and v.type.dtype in WIDE for v in (*instr.results, *instr.operands))


def wide_error(instr: Instr, dtype) -> CompilationError:
    """The located error of ``instr`` computing with tiles of ``dtype`` (one of :data:`WIDE`) in a way the scalar
    unit does not either (:data:`SCALAR_UNIT`)."""
    return wide_work(instr.loc, f"`{instr.op.value}` of {dtype} tiles",
                     "the scalar unit runs `+ - * // % & | ^ ~ << >>`, `abs`, `maximum`/`minimum`, comparisons, sums, maxima, "
                     f"minima and scans of {dtype} tiles; compute in int32 (`.to(tl.int32)`)")


def wide_work(loc, what: str, instead: str) -> CompilationError:
    """The located error of ``what``, work on 64-bit elements of tiles, with the hint ``instead``."""
    return CompilationError(loc, f"{what} cannot run on the Ascend A2 vector cores: their vector arithmetic and "
                                 "comparisons take at most 32-bit elements",
                            hint=f"{instead}, or run this kernel on the interpreter (backend='interpreter')")
