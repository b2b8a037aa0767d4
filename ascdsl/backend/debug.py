"""``tl.device_print`` on the Ascend C backend: ``printf`` in the compute stage, as the interpreter prints.

One line per program: ``pid (x, y, z) prefix v1 v2 ...``, a scalar as itself and a tile as
``[a b c]`` (a 2-D tile row by row, ``[[a b]`` then `` [c d]]``), numbers in ``%g`` (the interpreter
prints NumPy's text of the same values). Tile elements are read on the scalar unit (``GetValue`` after the V_S flag
the sync pass adds) in a loop over the tile. CANN's CPU-debug build and the simulator print to
stdout; on the NPU ``printf`` goes to the device log.
"""
from __future__ import annotations

from .. import dtypes
from ..ir.core import Instr, Value
from .kir import Bin, BinOp, Call, Conv, Elem, For, If, Pipe, Text, add, lit
from .selector import Selector, program_id, unsupported
from .ublayout import is_2d


def _format(dtype) -> str:
    if dtype.is_float:
        return "%g"
    return "%lld" if dtype.itemsize == 8 else "%u" if dtype == dtypes.uint8 else "%d"


def _printf(fmt: str, *args, loc=None) -> Call:
    return Call("printf", None, (), (Text(fmt), *args), pipe=Pipe.S, loc=loc)


def device_print(sel: Selector, instr: Instr) -> list:
    """The ``printf`` calls of one ``tl.device_print``."""
    prefix = instr.attr("prefix", "").replace("%", "%%")
    head = "pid (%d, %d, %d)" + (" " + prefix if prefix else "")
    out = [_printf(head, *(Conv(dtypes.int32, program_id(a)) for a in range(3)), loc=instr.loc)]
    for v in instr.operands:
        if v.type.dtype == dtypes.bool_:
            raise unsupported(instr, "printing bool values")
        if v.type.is_scalar:
            out.append(_printf(" " + _format(v.type.dtype), sel.expr(v)))
        else:
            out += _tile(sel, v)
    return out + [_printf("\n")]


def _tile(sel: Selector, v: Value) -> list:
    """`` [a b c]`` (or `` [[a b]\\n [c d]]``) of tile ``v``, element by element."""
    fmt = _format(v.type.dtype)
    ref = sel.ref(v)
    rows, cols = v.type.shape if is_2d(v.type.shape) else (1, v.type.numel)
    c = sel.fresh("c")

    def row(first: str, start) -> list:
        return [_printf(first + fmt, Elem(ref, start)),
                For(c, lit(1), lit(cols), lit(1), (_printf(" " + fmt, Elem(ref, add(start, c))),)),
                _printf("]")]
    if rows == 1:
        return row(" [", lit(0))
    r = sel.fresh("r")
    return [_printf(" ["), For(r, lit(0), lit(rows), lit(1), (
        If(Bin(BinOp.GT, r, lit(0)), (_printf("\n "),)), *row("[", Bin(BinOp.MUL, r, lit(sel.pitch(v)))))),
        _printf("]")]
