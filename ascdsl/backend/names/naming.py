"""Naming: readable C++ names for a kernel's slots, tensors and scalars, collision-free by construction.

Names derive from the DSL's variable names (``per_core`` -> ``perCore``, a class member gets a
trailing ``_``) and from the pointer names (``grad_ptr`` -> ``gradGm``, ``inQueueGrad``). One name
space per class: every name is checked against C++ keywords, macros the CANN headers define, the
AscendC names the generated code uses and the names the templates write themselves (``tiling``,
``pipe``, ``program``, ...); a taken name gets a number. Pointer parameters keep their DSL names unless
those are reserved or end in ``_`` (then ``_`` is appended, :func:`unclash`), so ``x`` and ``x_``
stay distinct, as ``x`` and ``x_ptr`` do (``xGm`` and ``xPtrGm``).
"""
from __future__ import annotations

import dataclasses
import keyword
from dataclasses import dataclass, field

from ... import dtypes
from ...ir.symbol import Poly, Undecided, var_name
from .. import kir
from ..kir import Bin, BinOp, Field, Position, Role, VarKind, lit

CPP_KEYWORDS = frozenset("""
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t class
compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield decltype
default delete do double dynamic_cast else enum explicit export extern false float for friend goto if inline
int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public register
reinterpret_cast requires return short signed sizeof static static_assert static_cast struct switch template
this thread_local throw true try typedef typeid typename union unsigned using virtual void volatile wchar_t
while xor xor_eq
""".split())
MACROS = frozenset("""
NULL EOF INFINITY NAN HUGE_VAL TRUE FALSE assert errno stdin stdout stderr offsetof min max __aicore__
__global__ __gm__ GM_ADDR
""".split())
ASCENDC = frozenset("""
AscendC TPipe TQue TBuf TPosition QuePosition LocalTensor GlobalTensor DataCopy DataCopyPad DataCopyExtParams
DataCopyPadExtParams Duplicate Add Sub Mul Div Max Min Adds Muls Maxs Mins Exp Ln Abs Sqrt Rsqrt Cast Compare
Select Brcb ReduceSum ReduceMax ReduceMin WholeReduceSum WholeReduceMax WholeReduceMin PipeBarrier SetFlag
WaitFlag HardEvent RoundMode CMPMODE SELMODE ReduceOrder GetBlockIdx GetBlockNum GetTaskRation GetSubBlockIdx
CrossCoreSetFlag CrossCoreWaitFlag SyncAll event_t half bfloat16_t
int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t
""".split())
GENERATED = frozenset("""
tiling tiling_ tilingData tilingGm workspace pipe program programs_ aic op eventVS_ eventMte2S_ CopyTiling Init Process
""".split())
RESERVED = CPP_KEYWORDS | MACROS | ASCENDC | GENERATED
KEYWORDS = frozenset(keyword.kwlist)


def camel(name: str) -> str:
    """``per_core`` -> ``perCore``; a non-identifier character becomes ``_``."""
    name = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)
    parts = [p for p in name.split("_") if p]
    if not parts:
        return "value"
    out = parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])
    return "v" + out if out[0].isdigit() else out


def pascal(name: str) -> str:
    c = camel(name)
    return c[:1].upper() + c[1:]


def field_name(name: str) -> str:
    """The tiling struct's field for a DSL scalar parameter or lifted constexpr ``name``: the name itself,
    or with ``_`` appended where it is a C/C++ keyword or a macro of the headers (``NULL`` -> ``NULL_``,
    ``new`` -> ``new_``): the user's Python names are theirs, the generated names ours."""
    return name + "_" if name in CPP_KEYWORDS or name in MACROS else name


FIELD_DTYPE = dtypes.int32  # a runtime tile extent's tiling field


def to_expr(poly: Poly, quanta: dict, dtype) -> kir.Expr:
    """``poly`` over its variables' tiling fields, most variables first, exact in integer C++ at every
    multiple of the quanta (:meth:`Poly.integral`; :class:`Undecided` otherwise)."""
    if not poly.integral(quanta):
        raise Undecided(f"{poly} is not an integer on multiples of the quanta")
    out = None
    for mono, coef in sorted(poly, key=lambda mc: (-len(mc[0]), tuple(map(var_name, mc[0])))):
        mag = abs(coef)
        if mono:
            term = Field(field_name(var_name(mono[0])), FIELD_DTYPE)
            for n in mono[1:]:
                term = Bin(BinOp.MUL, term, Field(field_name(var_name(n)), FIELD_DTYPE))
            if mag.numerator != 1:
                term = Bin(BinOp.MUL, term, lit(mag.numerator))
            if mag.denominator != 1:
                term = Bin(BinOp.DIV, term, lit(mag.denominator))
        else:
            term = lit(int(mag))
        if out is None:
            out = term if coef > 0 else Bin(BinOp.SUB, lit(0), term)
        else:
            out = Bin(BinOp.ADD if coef > 0 else BinOp.SUB, out, term)
    out = lit(0) if out is None else out
    return out if dtype == FIELD_DTYPE else kir.Conv(dtype, out)


def unclash(name: str, taken: frozenset[str]) -> str:
    """A user's ``name`` as a C++ name beside generated ones: with ``_`` appended where it is ``taken`` or
    already ends in ``_``. One-to-one, and never a name of ``taken`` that does not end in ``_``."""
    return name + "_" if name in taken or name.endswith("_") else name


def safe(name: str) -> str:
    """A DSL parameter name usable as a C++ parameter name: :func:`unclash` of the reserved names and
    Python's keywords, so one-to-one (``x`` and ``x_``, ``new`` and ``new_`` stay apart)."""
    return unclash(name, RESERVED | KEYWORDS)


@dataclass(frozen=True, eq=False)
class Names:
    """Names by what they name: slots (by index), pointers (by parameter index), views (by buffer
    key and dtype), variables (by key)."""

    slots: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    gms: dict = field(default_factory=dict)
    views: dict = field(default_factory=dict)
    vars: dict = field(default_factory=dict)

    def slot(self, s) -> str:
        return self.slots[s.index]

    def view(self, buf, dtype) -> str:
        return self.views[(buf.key, dtype.name)]

    def var(self, v: kir.Var) -> str:
        return self.vars[v.key]


class _Taken:
    def __init__(self, taken=()):
        self.taken = set(RESERVED) | set(taken)

    def claim(self, name: str) -> str:
        out, n = name, 2
        while out in self.taken:
            out, n = f"{name}{n}", n + 1
        self.taken.add(out)
        return out


def name(k: kir.Kernel, platform=None) -> kir.Kernel:
    """The naming pass: the kernel with its :class:`Names`."""
    names = Names()
    params = _Taken()
    for g in k.gms:
        names.params[g.param] = params.claim(safe(g.name))
    taken = _Taken(params.taken)
    for g in k.gms:
        stem = g.name.removesuffix("_ptr") or g.name
        gm = camel(stem) + "Gm"
        names.gms[g.param] = taken.claim(gm if gm not in taken.taken else camel(g.name) + "Gm")
    stems = {g.param: pascal(g.name.removesuffix("_ptr") or g.name) for g in k.gms}
    plan = k.plan
    for s in plan.slots:  # a queue :mod:`.queues` shares across pointers has a stem in place of a pointer
        if s.position is Position.VECIN:
            stem = "inOutQueue" if s.bound else "inQueue"
            names.slots[s.index] = taken.claim(stem + stems.get(s.first.queue[1], s.first.queue[1]))
        elif s.position is Position.VECOUT:
            names.slots[s.index] = taken.claim("outQueue" + stems.get(s.first.queue[1], s.first.queue[1]))
    for s in plan.slots:
        if s.position is Position.VECCALC:
            names.slots[s.index] = taken.claim(camel(s.first.hint) + "Buf")
    for v in k.members:
        names.vars[v.key] = taken.claim(camel(v.hint) + "_")
    for s in kir.walk(k.process):
        if isinstance(s, (kir.Let, kir.For)) and s.var.key not in names.vars:
            names.vars[s.var.key] = taken.claim(camel(s.var.hint))
        for b, dt in _views(s):
            key = (b.key, dt.name)
            root = plan.root(b)
            if key not in names.views and root != b:  # computed in a load's queue buffer: its local
                names.views[key] = names.views.setdefault((root.key, dt.name), taken.claim(camel(root.hint)))
            elif key not in names.views:
                base = camel(b.hint)
                names.views[key] = taken.claim(base if dt == b.dtype else base + pascal(dt.short))
    return dataclasses.replace(k, names=names)


def slot_names(names: Names, slots) -> Names:
    """``names`` with a name for each of ``slots`` it does not name yet (a template's members that only
    its float32 instance uses), claimed after every name it holds."""
    taken = _Taken([*names.slots.values(), *names.params.values(), *names.gms.values(), *names.views.values(),
                    *names.vars.values()])
    extra = {s.index: taken.claim(camel(s.first.hint) + "Buf") for s in slots if s.index not in names.slots}
    return dataclasses.replace(names, slots={**names.slots, **extra}) if extra else names


def _views(s):
    if isinstance(s, kir.Call):
        return [(r.buf, r.dtype) for r in s.refs] + [(x.ref.buf, x.ref.dtype) for e in kir.exprs(s)
                                                      for x in kir.sub_exprs(e) if isinstance(x, kir.Elem)]
    if isinstance(s, kir.Queue):
        return [(s.buf, s.buf.dtype)]
    if isinstance(s, kir.Local):
        return [(s.buf, s.dtype)]
    if isinstance(s, (kir.Set, kir.Let)):
        return [(x.ref.buf, x.ref.dtype) for x in kir.sub_exprs(s.expr) if isinstance(x, kir.Elem)]
    return []


__all__ = ["FIELD_DTYPE", "Names", "RESERVED", "Role", "VarKind", "field_name", "name", "safe", "slot_names", "to_expr"]
