"""``tl.device_print`` on the Ascend C backend: ``printf`` in the compute stage, as the interpreter prints.

One line per program: ``pid (x, y, z) prefix v1 v2 ...``, a scalar as itself and a tile as
``[a b c]`` (a 2-D tile row by row, ``[[a b]`` then `` [c d]]``), numbers in ``%g`` (the interpreter
prints NumPy's text of the same values). Tile elements are read on the scalar unit (``GetValue`` after the V_S flag
the sync pass adds) in a loop over the tile. CANN's CPU-debug build and the simulator print to
stdout; on the NPU ``printf`` goes to the device log.
"""
from __future__ import annotations

from ... import dtypes
from ...ir.core import Instr, Value
from ..kir import Bin, BinOp, Call, Cond, Conv, Elem, For, If, Pipe, Text, add, lit
from .selector import Selector, program_id
from ..legalise_shapes.ublayout import has_rows, numel


def _format(dtype) -> str:
    if dtype.is_float:
        return "%g"
    return "%lld" if dtype.itemsize == 8 else "%u" if dtype == dtypes.uint8 else "%d"


def _word(e, is_bool: bool) -> tuple[str, object]:
    """``(format, argument)`` printing value ``e``: a bool as NumPy's ``True``/``False``."""
    return ("%s", Cond(Bin(BinOp.NE, e, lit(0)), Text("True"), Text("False"))) if is_bool else (None, e)


def _printf(fmt: str, *args, loc=None) -> Call:
    return Call("printf", None, (), (Text(fmt), *args), pipe=Pipe.S, loc=loc)


def device_print(sel: Selector, instr: Instr) -> list:
    """The ``printf`` calls of one ``tl.device_print``."""
    prefix = instr.attr("prefix", "").replace("%", "%%")
    head = "pid (%d, %d, %d)" + (" " + prefix if prefix else "")
    out = [_printf(head, *(Conv(dtypes.int32, program_id(a)) for a in range(3)), loc=instr.loc)]
    bools = instr.attr("bools", ())  # operands that were bool tiles, printed as their 0/1 values (boolmask)
    for i, v in enumerate(instr.operands):
        is_bool = v.type.dtype == dtypes.bool_ or i in bools
        if v.type.is_scalar:
            fmt, arg = _word(sel.expr(v), is_bool)
            out.append(_printf(" " + (fmt or _format(v.type.dtype)), arg))
        else:
            out += _tile(sel, v, is_bool)
    return out + [_printf("\n")]


def _tile(sel: Selector, v: Value, is_bool: bool = False) -> list:
    """`` [a b c]`` (or `` [[a b]\n [c d]]``; a tile of rank 3 or more nested as NumPy prints it, one
    more blank line per level a block closes) of tile ``v``, element by element, UB row by UB row."""
    fmt = "%s" if is_bool else _format(v.type.dtype)
    ref = sel.ref(v)
    shape = v.type.shape if has_rows(v.type.shape) else (v.type.numel,)
    rank, cols, rows = len(shape), shape[-1], numel(shape[:-1])
    c = sel.fresh("c")

    def row(first: str, start) -> list:
        return [_printf(first + fmt, _word(Elem(ref, start), is_bool)[1]),
                For(c, lit(1), lit(cols), lit(1), (_printf(" " + fmt, _word(Elem(ref, add(start, c)), is_bool)[1]),)),
                _printf("]")]
    if rows == 1 and rank <= 2:
        return row(" [", lit(0))
    blocks = [numel(shape[j:-1]) for j in range(1, rank - 1)]  # rows per block of each inner level, outermost first
    r = sel.fresh("r")

    def levels(at, text) -> tuple:
        """``text(z)`` printed for the number ``z`` of levels whose blocks start at row ``at``."""
        out: tuple = (_printf(text(0)),) if text(0) else ()
        for z, size in enumerate(reversed(blocks), 1):
            out = (If(Bin(BinOp.EQ, Bin(BinOp.MOD, at, lit(size)), lit(0)), (_printf(text(z)),), orelse=out),)
        return out
    opening = levels(r, lambda z: "\n" * (z + 1) + " " * (rank - 1 - z) + "[" * z)
    closing = levels(add(r, lit(1)), lambda z: "]" * z)
    body = (If(Bin(BinOp.GT, r, lit(0)), opening), *row("[", Bin(BinOp.MUL, r, lit(sel.pitch(v)))), *closing)
    return [_printf(" " + "[" * (rank - 1)), For(r, lit(0), lit(rows), lit(1), body), _printf("]")]
