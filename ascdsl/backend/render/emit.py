"""Rendering: the only place C++ text appears. Kernel IR -> render model -> ``templates/``.

Expressions print themselves here (:func:`expr`); each statement becomes a line or a block with a
head, nested lines and a closing brace, which ``templates/kernel_classes.cpp.j2`` lays out.
A DSL operation's first call carries a ``// file.py:LINE`` comment.
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass


from ... import dtypes
from ...errors import Loc, source_path
from ...platforms import get_platform
from .. import kir
from ..kir import host as hk
from ..kir import (Bin, Brace, Call, CInt, Cond, Const, Conv, Elem, Field, Flag, For, Gm, If, Let, Lit, Local, Note,
                   Position, QOp, Queue, Run, Set, SizeOf, Struct, Text, Var, VarKind)
from ..lift.poly import describe_slots
from ..names.naming import Names
from .jinja import Located

PRECEDENCE = {"*": 5, "/": 5, "%": 5, "+": 4, "-": 4, "<<": 3.5, ">>": 3.5, "<": 3, "<=": 3, ">": 3, ">=": 3,
              "==": 2, "!=": 2, "&": 1.2, "^": 1.1, "|": 1}
"""C++ operator precedence (``&`` binds tighter than ``^``, which binds tighter than ``|``)."""


def where(loc: Loc) -> str:
    """``path:LINE`` of ``loc``, the path as generated files name it (:func:`ascdsl.errors.source_path`)."""
    return f"{source_path(loc.file)}:{loc.line}"


FLOAT_MAX = 3.4028234663852886e38


def literal(value, dtype) -> str:
    """A C++ literal of exactly ``dtype``: ``2.0f``, ``(half)2.0f``, ``-INFINITY``, ``7``, ``(int16_t)7``."""
    if dtype.is_float:
        v = float(value)
        if abs(v) > FLOAT_MAX:  # 1e39 is an infinity in float (and in the 16-bit types computed in it)
            v = math.copysign(math.inf, v)
        text = ("-INFINITY" if v < 0 else "INFINITY") if math.isinf(v) else "NAN" if math.isnan(v) else repr(v) + "f"
        if "e" in text and "." not in text.split("e")[0]:
            text = text.replace("e", ".0e")
        return text if dtype == dtypes.float32 else f"({dtype.cpp}){text}"
    if dtype.kind == "bool":
        return "true" if value else "false"
    if int(value) == -(1 << (8 * dtype.itemsize - 1)) and dtype.itemsize >= 4:  # -2147483648 would be a long
        return f"({int(value) + 1} - 1)"
    if dtype.itemsize == 2:  # an int would not deduce the T of Duplicate<T>(LocalTensor<int16_t>, T, n)
        return f"({dtype.cpp}){int(value)}"
    return str(int(value))


def unsigned_literal(value: int, size: int) -> str:
    """``value`` as a C++ literal of the unsigned type of ``size`` bytes (taken modulo its range:
    ``static_cast<uint32_t>(-1)`` is ``4294967295U``, never a sign-extended wider value)."""
    v = value % (1 << 8 * size)
    return f"{v}U" if v > (1 << 31) - 1 else str(v)


def c_string(text: str) -> str:
    """A C string literal of ``text`` (escaped; printable ASCII, other characters as octal escapes), for the
    kernel and the host code alike."""
    out = []
    for ch in text:
        if ch in '"\\?':  # `?` too: `??=` and friends are trigraphs to a C++14 compiler
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out += [f"\\{b:03o}" for b in ch.encode()]
    return '"' + "".join(out) + '"'


def host_literal(value) -> str:
    """A host literal (:class:`.kir.host.Value`): ``int64_t`` (``INT64_C`` past ``int``), ``double``, ``bool``, or a
    string (:func:`c_string`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if -2**31 <= value < 2**31 else f"INT64_C({value})"
    if isinstance(value, str):
        return c_string(value)
    if math.isnan(value):
        return "std::numeric_limits<double>::quiet_NaN()"
    if math.isinf(value):
        return ("" if value > 0 else "-") + "std::numeric_limits<double>::infinity()"
    return repr(value)


def event(flag: Flag) -> tuple[str, str]:
    """``(HardEvent kind, event_t member)`` of a flag: ``("V_S", "eventVS_")``, ``("MTE2_S", "eventMte2S_")``."""
    src, dst = (p.value.removeprefix("PIPE_") for p in (flag.src, flag.dst))
    return f"{src}_{dst}", f"event{src.title()}{dst.title()}_"


def ctype(t) -> str:
    if isinstance(t, (CInt, Struct, hk.HostType)):
        return t.value
    return t.cpp


_UNITS = {get_platform().block_bytes: "BLOCK", get_platform().repeat_bytes: "REPEAT"}


def elems_per(bytes_: int) -> str:
    """The name of the class constant of :class:`.kir.ElemsPer` ``bytes_``: ``ELEMS_PER_BLOCK``,
    ``ELEMS_PER_REPEAT``, ``ELEMS_PER_4_BYTES``."""
    return f"ELEMS_PER_{_UNITS.get(bytes_, f'{bytes_}_BYTES')}"


class Printer:
    def __init__(self, names: Names):
        self.names = names
        self.constants: set[kir.ElemsPer] = set()  # the class constants the printed code names

    def expr(self, e, prec: int = 0) -> str:
        if isinstance(e, Var):
            if e.kind is VarKind.PID:
                return "program"
            return self.names.var(e)
        if isinstance(e, Lit):
            return literal(e.value, e.dtype)
        if isinstance(e, Field):
            return f"tiling_.{e.name}"
        if isinstance(e, Bin):
            p = PRECEDENCE[e.op.value]
            low = 3.2 if p < 2 else 0  # a comparison under & ^ | in parentheses, as -Wparentheses asks
            text = f"{self.expr(e.a, max(p, low))} {e.op.value} {self.expr(e.b, max(p + 1, low))}"
            return f"({text})" if p < prec else text
        if isinstance(e, Cond):
            text = f"{self.expr(e.c, 1)} ? {self.expr(e.a, 1)} : {self.expr(e.b, 1)}"
            return f"({text})" if prec > 0 else text
        if isinstance(e, Conv):
            if isinstance(e.x, Lit) and isinstance(e.dtype, CInt):
                return unsigned_literal(int(e.x.value), kir.CINT_BYTES[e.dtype])
            if isinstance(e.dtype, dtypes.DType) and e.dtype.is_float and e.dtype.itemsize == 2 \
                    and kir.int_bytes(e.x) is not None:  # half and bfloat16_t construct from float only
                return f"static_cast<{ctype(e.dtype)}>(static_cast<float>({self.expr(e.x)}))"
            return f"static_cast<{ctype(e.dtype)}>({self.expr(e.x)})"
        if isinstance(e, kir.ElemsPer):
            self.constants.add(e)
            return elems_per(e.bytes)
        if isinstance(e, SizeOf):
            return f"sizeof({e.dtype.cpp})"
        if isinstance(e, Const):
            return e.value
        if isinstance(e, Brace):
            return "{" + ", ".join(self.expr(x) for x in e.items) + "}"
        if isinstance(e, Elem):
            index = e.index if isinstance(e.index, int) else self.expr(e.index)
            return f"{self.names.view(e.ref.buf, e.ref.dtype)}.GetValue({index})"
        if isinstance(e, Text):
            return c_string(e.value)
        if isinstance(e, kir.IsSame):
            return f"IsSameType<{e.a.cpp}, {e.b.cpp}>::value"
        if isinstance(e, kir.Not):
            inner = self.expr(e.x)
            return f"!{inner}" if isinstance(e.x, (Var, Field, kir.Not, kir.IsSame, hk.Paren, hk.Invoke)) \
                else f"!({inner})"
        if isinstance(e, kir.GmValue):
            return f"{self.names.gms[e.gm.param]}.GetValue({self.expr(e.gm.offset)})"
        return self.host_expr(e, prec)

    def host_expr(self, e, prec: int) -> str:
        """The expressions of host code (:mod:`.kir.host`)."""
        if isinstance(e, hk.Ident):
            return e.name
        if isinstance(e, hk.Value):
            return host_literal(e.value)
        if isinstance(e, hk.Member):
            return f"{self.expr(e.x, 7)}.{e.name}"
        if isinstance(e, hk.Scoped):
            return f"{e.scope.value}::{e.name}"
        if isinstance(e, hk.Invoke):
            template = f"<{e.template.value}>" if e.template is not None else ""
            fn = e.fn.value if isinstance(e.fn, hk.Runtime) else e.fn
            return f"{fn}{template}({', '.join(self.expr(x) for x in e.args)})"
        if isinstance(e, hk.Init):
            return f"{e.type.value}{{{self.expr(e.x)}}}"
        if isinstance(e, hk.Paren):
            return f"({self.expr(e.x)})"
        if isinstance(e, hk.Neg):
            return f"-{self.expr(e.x, 6)}"
        if isinstance(e, hk.Logic):
            text = (" && " if e.every else " || ").join(self.expr(x, 1) for x in e.items)
            return f"({text})" if prec > 0 and len(e.items) > 1 else text
        if isinstance(e, hk.Index):
            return f"{self.expr(e.x, 7)}[{self.expr(e.i)}]"
        if isinstance(e, hk.Bound):
            return f"const {e.type.value} {e.name.name} = {self.expr(e.value)}"
        raise TypeError(f"not an expression: {e!r}")

    def chain(self, head: str, e, tail: str, note: str = "") -> "Wrap":
        """``head e tail  // note``, breakable after the operators of ``e``'s top-level ``&&``/``||`` chain or
        sum (the whole expression, so parentheses around it go)."""
        while isinstance(e, hk.Paren):
            e = e.x
        if isinstance(e, hk.Logic) and len(e.items) > 1:
            return Wrap(head, tuple(self.expr(x, 1) for x in e.items), " && " if e.every else " || ", tail, note)
        if isinstance(e, Bin) and e.op.value in ("<", "<=", ">", ">=", "==", "!=") and isinstance(e.a, Bin) \
                and e.a.op is kir.BinOp.ADD:  # a sum compared: its terms break
            tail = f" {e.op.value} {self.expr(e.b, PRECEDENCE[e.op.value] + 1)}{tail}"
            e = e.a
        terms = []
        while isinstance(e, Bin) and e.op is kir.BinOp.ADD:
            terms.append(self.expr(e.b, PRECEDENCE["+"] + 1))
            e = e.a
        first = self.expr(e, PRECEDENCE["+"]) if terms else self.expr(e)
        return Wrap(head, (first, *reversed(terms)), " + ", tail, note)

    def host_stmt(self, s) -> list:
        """The statements of host code (:mod:`.kir.host`), as :meth:`stmt` renders the kernel's (a long line
        breaks after the operators of its expression's top-level chain, :class:`Wrap`)."""
        if isinstance(s, hk.Declare):
            unused = "[[maybe_unused]] " if s.unused else ""
            declared = f"{unused}{s.storage.value}{s.type.value} {s.name.name}"
            if s.value is None:
                return [f"{declared}{{}};" + (f"  // {s.note}" if s.note else "")]
            return [self.chain(f"{declared} = ", s.value, ";", s.note)]
        if isinstance(s, hk.Assign) and isinstance(s.value, hk.Invoke) and s.value.args \
                and isinstance(s.value.args[-1], hk.Lambda):  # the lambda's body on a line of its own
            *args, fn = s.value.args
            head = ", ".join([self.expr(a) for a in args] + [f"[&](int64_t {fn.param.name}) {{"])
            return [{"parts": [{"head": f"{self.expr(s.target)} = {s.value.fn.value}({head}",
                                "body": [self.chain("return ", fn.result, ";")]}], "tail": "});"}]
        if isinstance(s, hk.Assign):
            if s.target is None:
                return [f"static_cast<void>({self.expr(s.value)});" + (f"  // {s.note}" if s.note else "")]
            return [self.chain(f"{self.expr(s.target)} = ", s.value, ";", s.note)]
        if isinstance(s, hk.Throw):
            return [self.chain(f"throw ascdsl_host::HostError{{ascdsl_host::{s.status.name}, ", s.message, "};")]
        if isinstance(s, hk.Return):
            value = s.value
            return [f"return {'ascdsl_host::' + value.name if isinstance(value, hk.Status) else self.expr(value)};"]
        if isinstance(s, hk.Branch):
            parts = [{"head": self.chain(f"{'} else ' if i else ''}if (", c, ") {", "" if i else s.note),
                      "body": self.lines(body)} for i, (c, body) in enumerate(s.arms)]
            if s.orelse is not None:
                parts.append({"head": "} else {" if parts else "{" + (f"  // {s.note}" if s.note else ""),
                              "body": self.lines(s.orelse)})
            return [{"parts": parts, "tail": "}"}]
        if isinstance(s, hk.Enum):
            return [f"enum class {s.name} {{ {', '.join(s.members)} }};"]
        if isinstance(s, hk.Table):
            rows = [f"{self.expr(row)},  // {label}" for row, label in s.rows]
            return [f"// {s.note}", {"parts": [{"head": f"constexpr {s.type} {s.name.name}[] = {{", "body": rows}],
                                     "tail": "};"}]
        raise TypeError(f"not a statement: {s!r}")

    def fitted(self, e, t) -> str:
        """``e`` as a value of the integer type ``t``: an explicit ``static_cast`` where ``e`` is wider. Every
        such value is in range by construction: a DSL int32 scalar holds its int32 value as the
        interpreter's does (Triton's wrapping int32), a buffer's bytes are within the UB the plan checked,
        an extent was clamped to its block by the access pass, a UB offset or count lies within its
        buffer. (A call on 64-bit elements keeps its arguments: a value there may need 64 bits.)"""
        want = t.itemsize if isinstance(t, dtypes.DType) and t.is_int else kir.CINT_BYTES.get(t)
        if want is not None and kir.is_float(e):  # float -> int truncates toward zero, as Triton's casts
            return f"static_cast<{ctype(t)}>({self.expr(e)})"
        have = kir.int_bytes(e)
        if have is None or want is None or have[0] <= want:
            return self.expr(e)
        return f"static_cast<{ctype(t)}>({self.expr(e)})"

    def operand(self, o) -> str:
        if isinstance(o, Gm):
            return f"{self.names.gms[o.param]}[{self.expr(o.offset)}]"
        name = self.names.view(o.buf, o.dtype)
        return name if o.offset == kir.lit(0) else f"{name}[{self.fitted(o.offset, CInt.UINT32)}]"

    def stmt(self, s) -> list:
        """Render model lines: a string, or ``{"parts": [{"head", "body"}, ...], "tail"}`` for a block
        (an ``if`` with an ``else`` has two parts)."""
        if isinstance(s, Call):
            args = [self.operand(o) for o in (s.dst, *s.srcs, *s.work) if o is not None]
            wide = s.dst is not None and not isinstance(s.dst, Gm) and s.dst.dtype.itemsize == 8
            args += [self.fitted(a, dtypes.int32) if not wide and kir.int_bytes(a) == (8, True) else self.expr(a)
                     for a in s.args]
            tmpl = f"<{s.template.cpp}{', ' + s.mode.value if s.mode is not None else ''}>" if s.template else ""
            if s.method:
                return [self.located(f"{args[0]}.{s.api}{tmpl}({', '.join(args[1:])});", s.loc)]
            return [self.located(f"{s.api}{tmpl}({', '.join(args)});", s.loc)]
        if isinstance(s, Let):
            v = s.var
            if v.ctype is Struct.BIT_MASK:  # an array, as the APIs' `uint64_t mask[]` takes it (not const: Add's)
                return [self.located(f"uint64_t {self.expr(v)}[2] = {self.expr(s.expr)};", s.loc)]
            if isinstance(v.ctype, Struct):
                t = v.ctype.value + (f"<{v.template.cpp}>" if v.template is not None else "")
                return [self.located(f"{t} {self.expr(v)}{self.expr(s.expr)};", s.loc)]
            const = "" if s.mutable else "const "
            return [self.located(f"{const}{ctype(v.ctype)} {self.expr(v)} = {self.fitted(s.expr, v.ctype)};", s.loc)]
        if isinstance(s, Set):
            return [self.located(f"{self.expr(s.var)} = {self.fitted(s.expr, s.var.ctype)};", s.loc)]
        if isinstance(s, Queue):
            q, t = self.names.slot(self.plan.slot(s.buf)), s.buf.dtype.cpp
            local = self.names.view(s.buf, s.buf.dtype)
            hop = [f"TPosition::{p}" for p in s.route.value] if s.route is not None else []
            if s.op in (QOp.ALLOC, QOp.DEQUE):
                declare = f"LocalTensor<{t}> " if s.declare else ""
                return [self.located(f"{declare}{local} = {q}.{s.op.value}<{', '.join(hop + [t])}>();", s.loc)]
            return [f"{q}.{s.op.value}{'<' + ', '.join(hop) + '>' if hop else ''}({local});"]
        if isinstance(s, Local) and s.buf.role in (kir.Role.INPUT, kir.Role.OUTPUT):  # a view of a queue's local
            t = s.dtype.cpp
            return [f"LocalTensor<{t}> {self.names.view(s.buf, s.dtype)} = "
                    f"{self.names.view(s.buf, s.buf.dtype)}.ReinterpretCast<{t}>();"]
        if isinstance(s, Local) and s.bare:
            return [f"LocalTensor<{s.dtype.cpp}> {self.names.view(s.buf, s.dtype)};"]
        if isinstance(s, Local):
            slot = self.names.slot(self.plan.slot(s.buf))
            return [f"LocalTensor<{s.dtype.cpp}> {self.names.view(s.buf, s.dtype)} = {slot}.Get<{s.dtype.cpp}>();"]
        if isinstance(s, kir.Bind):
            slot = self.plan.slot(s.buf) if s.slot is None else self.plan.slots[s.slot]
            storage = (self.names.view(s.root, s.root.dtype) if s.root is not None
                       else f"{self.names.slot(slot)}.Get<{s.dtype.cpp}>()")
            return [f"{self.names.view(s.buf, s.dtype)} = {storage};"]
        if isinstance(s, For):
            v = self.expr(s.var)
            t = ctype(hk.HostType.INT) if isinstance(s.var, hk.Ident) else ctype(s.var.ctype)  # a host loop's int64_t
            head = self.located(f"for ({t} {v} = {self.expr(s.start)}; {v} {s.cmp.value} "
                                f"{self.expr(s.stop, PRECEDENCE[s.cmp.value] + 1)}; {v} += {self.expr(s.step)}) {{", s.loc)
            return [{"parts": [{"head": head, "body": self.lines(s.body)}], "tail": "}"}]
        if isinstance(s, kir.While):
            if not s.test:
                return [{"parts": [{"head": self.located(f"while ({self.expr(s.cond)}) {{", s.loc),
                                    "body": self.lines(s.body)}], "tail": "}"}]
            leave = {"parts": [{"head": f"if ({self.expr(kir.Not(s.cond))}) {{", "body": ["break;"]}], "tail": "}"}
            return [{"parts": [{"head": self.located("while (true) {", s.loc),
                                "body": self.lines(s.test) + [leave] + self.lines(s.body)}], "tail": "}"}]
        if isinstance(s, If):
            head = self.located(f"if {'constexpr ' if s.static else ''}({self.expr(s.cond)}) {{", s.loc)
            parts = [{"head": head, "body": self.lines(s.body)}]
            if s.orelse:
                parts.append({"head": "} else {", "body": self.lines(s.orelse)})
            return [{"parts": parts, "tail": "}"}]
        if isinstance(s, kir.Barrier):
            return [f"PipeBarrier<{s.pipe.value}>();"]
        if isinstance(s, Flag):
            kind, name = event(s)
            return [f"SetFlag<HardEvent::{kind}>({name});", f"WaitFlag<HardEvent::{kind}>({name});"]
        if isinstance(s, Note):
            return [f"// {s.text}"]
        if isinstance(s, Run):
            return [f"{self.stage_name(s.stage)}({', '.join(self.expr(p) for p in s.stage.params)});"]
        return self.host_stmt(s)

    def lines(self, body) -> list:
        return [line for s in body for line in self.stmt(s)]

    @staticmethod
    def located(text: str, loc) -> "Located | str":
        """``text`` with the ``// file.py:LINE`` comment of ``loc`` (when it names a line), as a
        :class:`.render.Located` line."""
        return Located(f"{text}  // {where(loc)}", loc) if loc is not None and loc.line else text

    def stage_name(self, st: kir.Stage) -> str:
        return st.kind.value + ("" if self.single else str(st.index))


def host_expr(e) -> str:
    """A host-code expression as C++ (host code names its variables itself)."""
    return Printer(Names()).expr(e)


PASSING = {hk.Passing.VALUE: "{type} {name}", hk.Passing.CONST_REF: "const {type}& {name}",
           hk.Passing.REF: "{type}& {name}", hk.Passing.POINTER: "{type}* {name}"}


def host_arguments(args) -> tuple[str, ...]:
    """The declarations of a generated host function's parameters (:class:`.kir.host.Argument`)."""
    return tuple(("[[maybe_unused]] " if a.unused else "") +
                 PASSING[a.passing].format(type=a.type if isinstance(a.type, str) else ctype(a.type), name=a.name)
                 for a in args)


LINE_WIDTH = 120
"""The columns a generated host line keeps within where it can (a longer one breaks, :class:`Wrap`)."""


@dataclass(frozen=True)
class Wrap:
    """A render-model line that may break after each ``sep`` between its ``pieces``: the next line continues two
    levels deeper. It stays one line where that fits."""

    head: str
    pieces: tuple[str, ...]
    sep: str
    tail: str
    note: str = ""  # an end-of-line comment, on a line of its own above where the line does not fit

    def map(self, f) -> "Wrap":
        return Wrap(f(self.head), tuple(map(f, self.pieces)), self.sep, f(self.tail), self.note)

    def lines(self, room: int) -> list[tuple[int, str]]:
        """Its lines, each with its depth past the statement's, the first within ``room`` columns and the rest
        within ``room`` less their indent (a piece too long alone keeps its line)."""
        whole = self.head + self.sep.join(self.pieces) + self.tail
        note = f"  // {self.note}" if self.note else ""
        if len(whole + note) <= room:
            return [(0, whole + note)]
        broken, line = [], self.head + self.pieces[0]
        for i, piece in enumerate(self.pieces[1:], 2):
            end = self.tail if i == len(self.pieces) else self.sep.rstrip()
            if len(line + self.sep + piece + end) > room - (8 if broken else 0):  # a continuation is 8 deeper
                broken.append(line + self.sep.rstrip())
                line = piece
            else:
                line += self.sep + piece
        above = [(0, f"// {self.note}")] if self.note else []
        return above + [(2 if i else 0, text) for i, text in enumerate(broken + [line + self.tail])]


def host_signature(result: str, name: str, arguments) -> tuple[str, ...]:
    """``result name(arguments...)`` as lines, its arguments broken after a comma past :data:`LINE_WIDTH`."""
    return tuple("    " * deeper + text for deeper, text in Wrap(f"{result} {name}(", tuple(arguments) or ("",), ", ",
                                                                ")").lines(LINE_WIDTH))


def host_lines(stmts, depth: int = 0, qualified: bool = True) -> tuple[str, ...]:
    """Host-code statements as C++ lines, each indented by its depth past ``depth`` (``qualified`` False: without
    the ``ascdsl_host::`` qualifier, for a body under ``using namespace ascdsl_host``); the template indents them by
    4 more."""
    model = Printer(Names()).lines(stmts)
    if not qualified:
        model = _mapped(model, lambda text: text.replace("ascdsl_host::", ""))
    return tuple("    " * line.depth + line.text for line in flatten(model, depth, LINE_WIDTH - 4))


def _mapped(items, f) -> list:
    """The render model ``items`` with ``f`` applied to the text of every line."""
    def line(x):
        return x.map(f) if isinstance(x, Wrap) else f(x)
    return [{"parts": [{"head": line(p["head"]), "body": _mapped(p["body"], f)} for p in item["parts"]],
             "tail": line(item["tail"])} if isinstance(item, dict) else line(item) for item in items]


def flatten(items, depth: int = 0, width: int | None = None) -> list[Located]:
    """Render-model lines (strings, located lines, blocks of parts, :class:`Wrap` lines) as
    :class:`.render.Located` lines with their nesting depth (a :class:`Wrap` broken within ``width`` columns less
    the indent, where given)."""
    out = []
    for item in items:
        if isinstance(item, dict):
            for part in item["parts"]:
                out += _at(part["head"], depth, width)
                out += flatten(part["body"], depth + 1, width)
            out += _at(item["tail"], depth, width)
        else:
            out += _at(item, depth, width)
    return out


def _at(line, depth: int, width: int | None) -> list[Located]:
    if isinstance(line, Wrap):
        return [Located(text, None, depth + deeper)
                for deeper, text in line.lines(width - 4 * depth if width is not None else sys.maxsize)]
    return [Located(line.text, line.loc, depth) if isinstance(line, Located) else Located(line, None, depth)]


def _init_buffers(p: Printer, plan, float32) -> tuple[list, list]:
    """``InitBuffer`` s of the class's ``TBuf`` members as render lines: those every instance makes alike,
    and the ``if constexpr`` block of those a template's float32 instance (its plan ``float32``) and
    its 16-bit instances (``plan``) make otherwise."""
    def init(s) -> str | None:
        return f"pipe.InitBuffer({p.names.slot(s)}, {p.fitted(s.size_expr, CInt.UINT32)});" if s.num else None
    common, wide, narrow = [], [], []
    for s in plan.slots:
        if s.position is not Position.VECCALC:
            continue
        mine = init(s)
        other = mine if float32 is None else init(float32.slots[s.index])
        if mine == other:
            common.append(mine)
            continue
        narrow += [mine] if mine else []
        wide += [other] if other else []
    if not wide:
        return common, [{"parts": [{"head": f"if constexpr ({p.expr(kir.Not(kir.FLOAT_INSTANCE))}) {{",
                                    "body": narrow}], "tail": "}"}] if narrow else []
    parts = [{"head": f"if constexpr ({p.expr(kir.FLOAT_INSTANCE)}) {{", "body": wide}]
    if narrow:
        parts.append({"head": "} else {", "body": narrow})
    return common, [{"parts": parts, "tail": "}"}]


def class_model(k: kir.Kernel, class_name: str, struct: str, template: bool = False, float32=None,
                mix: str | None = None) -> dict:
    """The render model of one variant's class; for a template that float32 instantiates too,
    ``float32``: the float32 instance's plan over the class's members (:class:`.templated.ClassPlan`);
    ``mix``: the AIV class of a MIX kernel (its programs are those of its AIC, :mod:`.mix`): ``"programs"``, half
    of them each; ``"steps"``, all of them both (a loop of steps, each AIV taking its AIC's flags)."""
    p = Printer(k.names)
    p.plan = k.plan
    p.single = len({st.index for st in k.stages}) <= 1
    names = k.names
    slots = k.plan.slots
    common, typed = _init_buffers(p, k.plan, float32)
    process = flatten(p.lines(k.process))
    methods = [{"name": p.stage_name(st), "lines": flatten(p.lines(st.body)),
                "params": ", ".join(f"const {ctype(v.ctype)} {p.expr(v)}" for v in st.params)} for st in k.stages]
    queues = [{"name": names.slot(s), "num": s.num, "bytes": p.fitted(s.size_expr, CInt.UINT32),
               "type": "TQueBind<TPosition::VECIN, TPosition::VECOUT, 1>" if s.bound else
               f"TQue<QuePosition::{s.position.value}, 1>"} for s in slots if s.position is not Position.VECCALC]
    return {
        "class_name": class_name,
        "template": template,
        "mix": mix,
        "kernel_name": k.name,
        "constexprs": ", ".join(f"{n}={v}" for n, v in k.constexprs),
        "where": Located(where(k.loc), k.loc if k.loc.line else None),
        "struct": struct,
        "gms": [{"name": names.gms[g.param], "cpp": g.dtype.cpp, "param": names.params[g.param]} for g in k.gms],
        "queues": queues,
        "tbufs": [{"name": names.slot(s)} for s in slots if s.position is Position.VECCALC],
        "init_tbufs": common,
        "typed_init": flatten(typed),
        "ub_total": f"{k.plan.total_bytes} bytes" if not k.plan.footprint else describe_slots(k.plan.footprint),
        "events": [{"kind": kind, "name": name} for kind, name in
                   dict.fromkeys(event(s) for s in kir.walk(k.process) if isinstance(s, Flag))],
        "members": [f"{ctype(v.ctype)} {names.var(v)};" for v in k.members]
        + [f"LocalTensor<{b.dtype.cpp}> {names.view(b, b.dtype)};" for b in k.held],
        "process": process,
        "methods": methods,
        "constants": [f"static constexpr int32_t {elems_per(e.bytes)} = static_cast<int32_t>({e.bytes} / "
                      f"sizeof({e.dtype.cpp}));" for e in sorted(p.constants, key=lambda e: e.bytes)],
    }
