"""The IR text form: a deterministic printer and a lark parser that reads it back exactly.

``dump(parse(text)) == text`` and ``parse(dump(module)) == module`` (structural equality; source
locations are printed and parsed too, a path relative to the working directory read back absolute: a kernel's
own location takes part in equality, its instructions' do not).
"""
from __future__ import annotations

import json
import math
import os
import re
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Any

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import LarkError, VisitError

from .. import dtypes
from ..dtypes import DType, PointerType
from ..errors import Error, Loc, source_path
from .core import Block, Instr, Kernel, Module, Op, Type, Value
from .symbol import ZERO, Poly, Symbol


class IRParseError(Error, ValueError):
    """The IR text is malformed (the message gives the line and column in the text)."""


# ----------------------------------------------------------------------------- printing

def dump(ir: Module | Kernel) -> str:
    """The text of a module (kernels separated by a blank line) or of one kernel."""
    kernels = ir.kernels if isinstance(ir, Module) else (ir,)
    return "\n".join(_kernel(k) for k in kernels)


def _kernel(k: Kernel) -> str:
    params = ", ".join(f"{v} {name}: {v.type}" for v, name in zip(k.params, k.param_names))
    lines = [f"kernel @{k.name}({params}) constexprs({_attrs(k.constexprs)}) {_loc(k.loc)} {{"]
    lines += _body(k.body.body, 1)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _body(instrs: tuple[Instr, ...], depth: int) -> list[str]:
    lines: list[str] = []
    pad = "  " * depth
    for ins in instrs:
        head = ", ".join(map(str, ins.results)) + " = " if ins.results else ""
        text = pad + head + ins.op.value
        if ins.operands:
            text += " " + ", ".join(map(str, ins.operands))
        if ins.attrs:
            text += " {" + _attrs(ins.attrs) + "}"
        if ins.results:
            text += " : " + ", ".join(str(r.type) for r in ins.results)
        text += " " + _loc(ins.loc)
        for region in ins.regions:
            args = ", ".join(f"{a}: {a.type}" for a in region.args)
            lines.append(text + " {")
            lines.append(pad + f"  ^({args}):")
            lines += _body(region.body, depth + 1)
            text = pad + "}"
        lines.append(text)
    return lines


def _attrs(attrs) -> str:
    return ", ".join(f"{k} = {_value(v)}" for k, v in attrs)


def _value(v: Any) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, DType):
        return v.short
    if isinstance(v, Symbol):
        return f"symbol({v.name}, {v.quantum}, {v.low}, {v.high})"
    if isinstance(v, Poly):
        return f"symint({json.dumps(str(v))})"
    if isinstance(v, tuple):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    raise TypeError(f"cannot print IR attribute value {v!r} of type {type(v).__name__}")


def _loc(loc: Loc) -> str:
    return f"loc({json.dumps(source_path(loc.file))}:{loc.line}:{loc.col})"


# ----------------------------------------------------------------------------- parsing

@lru_cache(maxsize=1)
def _parser() -> Lark:
    grammar = (Path(__file__).with_name("grammar.lark")).read_text()
    return Lark(grammar, parser="lalr", maybe_placeholders=True)


def parse(text: str) -> Module:
    """Parse IR text (one or more kernels) into a :class:`Module`."""
    try:
        tree = _parser().parse(text)
        return Module(tuple(_ToIR().transform(kernel) for kernel in tree.children))
    except VisitError as e:
        raise IRParseError(f"invalid IR: {e.orig_exc}") from None
    except LarkError as e:
        raise IRParseError(f"invalid IR text: {e}") from None


def _type(token: Token, symbols: dict) -> Type:
    text = str(token)
    tile = re.fullmatch(r"tile<((?:(?:[0-9]+|\([^()]*\))x)+)(.+)>", text)
    if tile:
        dims = re.findall(r"([0-9]+|\([^()]*\))x", tile.group(1))
        return Type(_elem(tile.group(2)), tuple(_poly(d[1:-1], symbols) if d[0] == "(" else int(d) for d in dims))
    return Type(_elem(text))


def _poly(text: str, symbols: dict) -> Poly:
    """The :class:`Poly` that prints as ``text`` (``3 * ROWS * BLOCK - 1/2 * BLOCK + 7``) over ``symbols``."""
    parts = re.split(r" ([+-]) ", text[2:] if text.startswith("- ") else text)
    total = ZERO
    for sign, term in zip(["-" if text.startswith("- ") else "+"] + parts[1::2], parts[::2]):
        p = Poly.const(-1 if sign == "-" else 1)
        for factor in term.split(" * "):
            if factor not in symbols and not re.fullmatch(r"[0-9]+(/[0-9]+)?", factor):
                raise ValueError(f"{factor!r} in {text!r} is no symbol of the kernel's constexprs")
            p = p * (Poly.var(symbols[factor]) if factor in symbols else Poly.const(Fraction(factor)))
        total = total + p
    return total


def _elem(text: str) -> DType | PointerType:
    if text.startswith("ptr<"):
        return PointerType(_dtype(text[4:-1]))
    return _dtype(text)


def _dtype(name: str) -> DType:
    try:
        return dtypes.lookup(name)
    except KeyError:
        raise ValueError(f"unknown dtype {name!r}") from None


@v_args(inline=True)
class _ToIR(Transformer):
    """Bottom-up, one kernel at a time: a value's use must follow its definition."""

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[int, Value] = {}
        self.symbols: dict[str, Symbol] = {}  # the kernel's symbolic constexprs (they precede its body)

    def _define(self, token: Token, type: Type) -> Value:
        vid = int(token[1:])
        if vid in self.values:
            raise ValueError(f"value %{vid} is defined twice (line {token.line})")
        self.values[vid] = Value(vid, type)
        return self.values[vid]

    def _use(self, token: Token) -> Value:
        vid = int(token[1:])
        if vid not in self.values:
            raise ValueError(f"value %{vid} is used before it is defined (line {token.line})")
        return self.values[vid]

    def kernel(self, name, params, constexprs, loc, *body):
        block = Block(tuple(v for v, _ in params), body)
        return Kernel(str(name), tuple(n for _, n in params), constexprs, block, loc)

    def params(self, *params):
        return tuple(p for p in params if p is not None)

    def param(self, vid, name, type):
        return self._define(vid, type), str(name)

    def constexprs(self, *attrs):
        attrs = tuple(a for a in attrs if a is not None)
        self.symbols = {v.name: v for _, v in attrs if isinstance(v, Symbol)}
        return attrs

    def instr(self, result_tokens, opname, operands, attrs, types, loc, *regions):
        try:
            op = Op(str(opname))
        except ValueError:
            raise ValueError(f"unknown op {str(opname)!r} (line {opname.line})") from None
        if len(result_tokens) != len(types):
            raise ValueError(f"{op.value}: {len(result_tokens)} results but {len(types)} types "
                             f"(line {opname.line})")
        results = tuple(self._define(t, ty) for t, ty in zip(result_tokens, types))
        return Instr(op, results, operands, attrs, regions, loc)

    def results(self, *tokens):
        return tuple(t for t in tokens if t is not None)

    def operands(self, *tokens):
        return tuple(self._use(t) for t in tokens if t is not None)

    def attrs(self, *attrs):
        return tuple(a for a in attrs if a is not None)

    def types(self, *types):
        return tuple(t for t in types if t is not None)

    def region(self, *items):
        args = tuple(a for a in items if isinstance(a, Value))
        return Block(args, tuple(i for i in items if isinstance(i, Instr)))

    def blockarg(self, vid, type):
        return self._define(vid, type)

    def attr(self, name, value):
        return str(name), value

    def type(self, token):
        return _type(token, self.symbols)

    def symbol(self, name, quantum, low, high):
        return Symbol(str(name), int(quantum), int(low), int(high))

    def symint(self, text):
        return _poly(json.loads(text), self.symbols)

    def loc(self, file, line, col):  # a path printed relative to the working directory reads back as recorded
        path = json.loads(file)
        return Loc(path if path.startswith("<") else os.path.abspath(path), int(line), int(col))

    int = staticmethod(lambda t: int(t))
    float = staticmethod(lambda t: float(t))
    inf = staticmethod(lambda: math.inf)
    neg_inf = staticmethod(lambda: -math.inf)
    nan = staticmethod(lambda: math.nan)
    true = staticmethod(lambda: True)
    false = staticmethod(lambda: False)
    none = staticmethod(lambda: None)
    string = staticmethod(lambda t: json.loads(t))
    dtype = staticmethod(lambda t: _dtype(str(t)))

    def tuple(self, *items):
        return tuple(i for i in items if i is not None) if items != (None,) else ()

