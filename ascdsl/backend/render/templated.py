"""Element types as template parameters: variants that differ only by their tensors' element type
share one ``template <typename T>`` class, instantiated per tiling key (``RowsKernelV7<half>``,
``RowsKernelV7<bfloat16_t>``), as CANN engineers write them.

A variant whose pointers all have one element type ``t`` (float32 GM scratch beside them aside:
:func:`element_type`) is *abstracted*: ``t`` becomes the type parameter ``T`` everywhere in its kernel
IR (tensors, views, literals, ``sizeof``). Variants of one
kernel whose abstracted kernel IR is equal (same calls, same sizes, same constants) form a group.

float32 joins such a template through :func:`float32_form`: the 16-bit kernel's tile IR retyped to
float32 with its casts kept as identity casts, which the UB planner computes in place (the float32
tile *is* the loaded tile; a tile that is stored is computed straight into the output queue) and the
sync pass ignores, so its kernel IR has the 16-bit kernel's calls; the planner packs its other tiles
as the float32 kernel does. When that form computes what the float32 kernel does
(:func:`computes_the_same`), needs its UB (:func:`.lift.variants` checks) and differs from the 16-bit
kernel IR only as ``if constexpr`` expresses (:func:`join_float32`: each cast site, barriers,
``sizeof(T)`` in sizes, and where each instance places its buffers: the plan of each instance is kept,
:class:`ClassPlan`), float32 becomes a third instance (``RowsKernelV1<float>``), using the UB and
time of the class it had of its own.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ... import dtypes
from ...dtypes import DType
from ...ir.treemap import TreeMerge, tree_map
from ...ir.core import Block, Instr, Op
from ...ir.core import Kernel as TileKernel
from .. import kir
from ..names.naming import name, slot_names
from ..plan.tiling import Variant
from ..plan.ubplan import Plan, Slot


def type_parameter(t: DType) -> DType:
    """The template parameter ``T`` standing for element type ``t`` (same size and kind)."""
    return DType("T", "T", t.itemsize, t.kind, "T", np.dtype(f"V{t.itemsize}"))


def _replace(node, old: DType, new: DType):
    """``node`` with element type ``old`` as ``new``."""
    return tree_map(node, lambda x: (new if x == old else x) if isinstance(x, DType) else None)


def element_type(types: set) -> DType | None:
    """The element type a template abstracts of a kernel whose pointers point at ``types``: the one type but
    float32 (float32 pointers beside it are GM scratch a 16-bit kernel keeps in float32), float32 where every
    pointer is; None where two other types mix, or there is no pointer."""
    narrow = set(types) - {dtypes.float32}
    if len(narrow) > 1 or not types:
        return None
    return next(iter(narrow), dtypes.float32)


def abstract(k: kir.Kernel) -> tuple[kir.Kernel, DType] | None:
    """``k`` with its pointer element type (:func:`element_type`) as ``T`` (named afresh), or None."""
    t = element_type({g.dtype for g in k.gms})
    if t is None:
        return None
    return name(_replace(dataclasses.replace(k, names=None), t, type_parameter(t))), t


def pointer_dtypes(kernel: TileKernel) -> set:
    """The element types of ``kernel``'s pointer parameters."""
    return {p.type.dtype.element_ty for p in kernel.params if isinstance(p.type.dtype, dtypes.PointerType)}


def float32_form(kernel: TileKernel) -> TileKernel:
    """The tile IR ``kernel`` (its pointers of one 16-bit float type, :func:`element_type`) with that type
    retyped to float32 and its casts from or to it kept, marked ``kept`` (selection makes them identity
    ``Cast`` s)."""
    t = element_type(pointer_dtypes(kernel))
    assert t in (dtypes.float16, dtypes.bfloat16), t

    def block(b: Block) -> Block:
        return Block(b.args, tuple(instr(i) for i in b.body))

    def instr(i: Instr) -> Instr:
        i = i.map_regions(block)
        if i.op is Op.CAST and t in (i.operands[0].type.dtype, i.result.type.dtype):
            i = dataclasses.replace(i, attrs=i.attrs + (("kept", True),))
        return i
    return _replace(kernel.with_body(block(kernel.body)), t, dtypes.float32)


def computes_the_same(form: TileKernel, plain: TileKernel) -> bool:
    """``form`` (a :func:`float32_form`) is ``plain`` once its identity casts are dropped: the same
    instructions on the same values (ids aside), so its float32 instance computes what ``plain`` does."""
    if form.constexprs != plain.constexprs or [p.type for p in form.params] != [p.type for p in plain.params]:
        return False
    same: dict[int, int] = {a.id: b.id for a, b in zip(form.params, plain.params)}

    def blocks(x: Block, y: Block) -> bool:
        if len(x.args) != len(y.args):
            return False
        same.update((a.id, b.id) for a, b in zip(x.args, y.args))
        ys = iter(y.body)
        for a in x.body:
            if a.op is Op.CAST and a.attr("kept") and a.operands[0].type == a.result.type:
                same[a.result.id] = same.get(a.operands[0].id)
                continue
            b = next(ys, None)
            if b is None or (a.op, tuple(v.type for v in a.results), tuple(kv for kv in a.attrs if kv[0] != "kept")) \
                    != (b.op, tuple(v.type for v in b.results), b.attrs) or len(a.operands) != len(b.operands) or \
                    any(same.get(u.id) != v.id for u, v in zip(a.operands, b.operands)) or \
                    len(a.regions) != len(b.regions) or not all(blocks(r, q) for r, q in zip(a.regions, b.regions)):
                return False
            same.update((u.id, v.id) for u, v in zip(a.results, b.results))
        return next(ys, None) is None
    return blocks(form.body, plain.body)


@dataclass(frozen=True)
class ClassPlan:
    """One C++ class: its kernel IR (abstracted for a template) and the variants it serves. When float32
    instantiates it too, each instance places the buffers by its own plan: the kernel's plan is the
    16-bit instances', ``float32`` the float32 instance's, both over the class's ``TBuf`` and ``TQue``
    members (slot ``i`` of each is member ``i``; a member one instance does not use has ``num`` 0 in
    its plan)."""

    name: str
    kernel: kir.Kernel
    instances: tuple[tuple[Variant, str], ...]  # (variant, the class name its entry branch uses)
    float32: Plan | None = None

    @property
    def is_template(self) -> bool:
        return self.instances[0][1] != self.name


def plan_classes(variants, compiled, forms=None) -> list[ClassPlan]:
    """Group ``variants`` (``compiled[key]`` is each one's kernel IR) into classes; a float32 variant
    whose float32 form (``forms[key]``, compiled) joins a 16-bit template becomes one of its instances."""
    forms = forms or {}
    groups: list[tuple[object, list]] = []
    for v in variants:
        a = abstract(compiled[v.key])
        key = None if a is None else dataclasses.replace(a[0], names=None)
        for group_key, members in groups:
            if key is not None and group_key == key:
                members.append((v, a[1]))
                break
        else:
            groups.append((key, [(v, None if a is None else a[1])]))
    joined: dict[int, tuple] = {}  # group index -> (kernel, float32 plan, float32 variant)
    for v in variants:
        if v.key not in forms:
            continue
        for i, (key, members) in enumerate(groups):
            first, t = members[0]
            if i in joined or key is None or t not in (dtypes.float16, dtypes.bfloat16) or \
                    first.kernel.name != v.kernel.name:
                continue
            got = join_float32(abstract(compiled[first.key])[0], t, forms[v.key])
            if got is not None:
                joined[i] = (*got, v)
                break
    taken = {j[2].key for j in joined.values()}
    out = []
    for i, (key, members) in enumerate(groups):
        first = members[0][0]
        if i in joined:
            kernel, plan32, v32 = joined[i]
            both = sorted([*members, (v32, dtypes.float32)], key=lambda m: m[0].key)
            name_ = both[0][0].class_name
            out.append(ClassPlan(name_, kernel, tuple((v, f"{name_}<{t.cpp}>") for v, t in both), plan32))
        elif len(members) == 1 and first.key in taken:
            continue
        elif len(members) == 1:
            out.append(ClassPlan(first.class_name, compiled[first.key], ((first, first.class_name),)))
        else:
            kernel = abstract(compiled[first.key])[0]
            out.append(ClassPlan(first.class_name, kernel,
                                 tuple((v, f"{first.class_name}<{t.cpp}>") for v, t in members)))
    return out


# ----------------------------------------------------------------------------- float32 joins the template

class _Refused(Exception):
    """The float32 form differs from the 16-bit kernel beyond what ``if constexpr`` expresses."""


def _size_expr(narrow: int, wide: int, itemsize: int, t: DType, dtype: DType):
    """The literal that is ``narrow`` for the 16-bit type and ``wide`` for float32, as an expression of
    ``sizeof(T)``: ``c * sizeof(T)`` (bytes), the elements of ``T`` in ``c`` bytes (:class:`.kir.ElemsPer`)
    or one less."""
    size = kir.SizeOf(t)
    if wide % 4 == 0 and wide // 4 * itemsize == narrow:
        c = wide // 4
        return size if c == 1 else kir.Bin(kir.BinOp.MUL, kir.Lit(c, dtype), size)
    for minus in (0, 1):
        c = (wide + minus) * 4
        if c % itemsize == 0 and c // itemsize - minus == narrow:
            per = kir.ElemsPer(c, t) if dtype == dtypes.int32 else kir.Conv(dtype, kir.ElemsPer(c, t))
            return kir.Bin(kir.BinOp.SUB, per, kir.Lit(1, dtype)) if minus else per
    raise _Refused(f"a literal {narrow} (16-bit) / {wide} (float32) is no size of T")


class _Unifier(TreeMerge):
    """The 16-bit kernel IR ``T`` -abstracted and the float32 form side by side (pairs of nodes): equal but
    for ``T`` where the form has float32, integer literals that are sizes of ``T``, and the casts that are
    identities in the form (the *cast sites*)."""

    refused = _Refused

    def __init__(self, t: DType, itemsize: int):
        super().__init__()
        self.t, self.itemsize = t, itemsize
        self.sites: dict[int, kir.Call] = {}  # id of the 16-bit call -> the call

    def _aligned(self, x: tuple, y: tuple) -> list:
        """Statements side by side as ``(index in x or None, statement)`` pairs (None: a statement of ``y``
        only); a barrier only one side has runs only in its instances."""
        out, i, j = [], 0, 0
        while i < len(x) or j < len(y):
            a, b = x[i] if i < len(x) else None, y[j] if j < len(y) else None
            if isinstance(a, kir.Barrier) and not isinstance(b, kir.Barrier):
                out.append((i, kir.If(kir.Not(kir.FLOAT_INSTANCE), (a,), static=True)))
                i += 1
            elif isinstance(b, kir.Barrier) and not isinstance(a, kir.Barrier):
                out.append((None, kir.If(kir.FLOAT_INSTANCE, (b,), static=True)))
                j += 1
            elif a is None or b is None:
                raise _Refused("statements differ")
            else:
                out.append((i, self((a, b))))
                i, j = i + 1, j + 1
        return out

    def differ(self, nodes: tuple, where: str):
        x, y = nodes
        if isinstance(x, DType):
            if x == self.t and y == dtypes.float32:
                return x
            raise _Refused(f"{x} / {y}")
        if isinstance(x, kir.Lit):
            if x.dtype.is_int and x.dtype == y.dtype and type(x.value) is int and x.value != y.value:
                return _size_expr(x.value, y.value, self.itemsize, self.t, x.dtype)
            if x.value == y.value:
                return kir.Lit(x.value, self((x.dtype, y.dtype)))
            raise _Refused(f"literals {x.value} / {y.value}")
        if isinstance(x, tuple) and any(isinstance(s, kir.Barrier) for s in x + y):
            return tuple(s for _, s in self._aligned(x, y))
        if isinstance(x, kir.Call) and y.is_identity_cast and x.api == "Cast":
            self.sites[id(x)] = x
            self((x.dst, y.dst))
            self((x.srcs, y.srcs))
            return x
        if isinstance(x, kir.Stage):  # declarations are each instance's own
            at = [i for i, s in enumerate(x.body) if not isinstance(s, kir.Local)]
            merged = self._aligned(tuple(x.body[i] for i in at), tuple(s for s in y.body if not isinstance(s, kir.Local)))
            new, k = [], 0
            for s in x.body:
                if isinstance(s, kir.Local):
                    new.append(s)
                    continue
                while merged[k][0] is None:  # statements of the float32 form only, before this one
                    new.append(merged[k][1])
                    k += 1
                new.append(merged[k][1])
                k += 1
            new += [m for _, m in merged[k:]]
            return dataclasses.replace(x, kind=self((x.kind, y.kind)), params=self((x.params, y.params)), body=tuple(new))
        return super().differ(nodes, where)

    def field(self, nodes: tuple, name: str, values: tuple, where: str):
        x, y = nodes
        a, b = values
        if name in ("plan", "names"):  # each instance's own
            return a
        if isinstance(x, kir.Ref) and name == "extent":  # a bound the planner read: the larger
            return max(a, b)
        if isinstance(x, kir.Kernel) and name == "constexprs":  # those of every instance
            return a if a == b else tuple(kv for kv in a if kv in b)
        return super().field(nodes, name, values, where)


def join_float32(a: kir.Kernel, t: DType, form: kir.Kernel) -> tuple | None:
    """``(kernel, float32 plan)``: the template kernel whose 16-bit instances run ``a`` (the abstracted
    kernel IR of a variant of element type ``t``) and whose float32 instance runs ``form``
    (:func:`float32_form`, compiled), and the float32 instance's plan over the class's members (see
    :class:`ClassPlan`); None when they differ beyond ``if constexpr`` at each cast and in where each
    instance places its buffers.

    The members: the 16-bit kernel's slots, then the float32 form's slots that no 16-bit slot shares
    its first buffer with. A tile whose member differs between the instances is declared bare and set
    per instance under ``if constexpr``. For ``T = float`` a cast from a load is no call: the float32
    tiles computed in that queue buffer are set to its local tensor (``x = xIn;``); a tile the form
    computes straight into an output queue is set to its local after ``AllocTensor``; a cast into an
    output is no call."""
    try:
        return _join(a, type_parameter(t), t.itemsize, form)
    except _Refused:
        return None


def _members(pa: Plan, pf: Plan, u: _Unifier) -> tuple[tuple[Slot, ...], Plan]:
    """The 16-bit slots and the float32 plan over the class's members (see :func:`join_float32`), each
    size shared where the two unify."""
    by_first = {s.first.key: s for s in pa.slots}
    member: dict[int, int] = {}  # float32 slot index -> member index
    extra: list[Slot] = []
    for s in pf.slots:
        other = by_first.get(s.first.key)
        if other is not None and other.position is s.position and other.bound == s.bound:
            member[s.index] = other.index
        elif s.position is not kir.Position.VECCALC:
            raise _Refused("the float32 form has other queues")
        else:
            member[s.index] = len(pa.slots) + len(extra)
            extra.append(s)
    unused = {"num": 0, "bytes": 0, "needs": (), "size": None}
    narrow = list(pa.slots) + [dataclasses.replace(s, index=len(pa.slots) + i, **unused) for i, s in enumerate(extra)]
    wide = [dataclasses.replace(s, **unused) for s in pa.slots] + [None] * len(extra)
    for s in pf.slots:
        i = member[s.index]
        wide[i] = dataclasses.replace(s, index=i)
        if narrow[i].num:
            try:
                size = u((narrow[i].size_expr, s.size_expr))
            except _Refused:
                if s.position is not kir.Position.VECCALC:
                    raise
                continue  # sized per instance
            narrow[i] = dataclasses.replace(narrow[i], size=size)
            wide[i] = dataclasses.replace(wide[i], size=size)
    if any(s.num == 0 and s.position is not kir.Position.VECCALC for s in wide):
        raise _Refused("the float32 form has other queues")
    home = tuple(sorted((k, member[i]) for k, i in pf.home))
    return tuple(narrow), Plan(tuple(wide), home, pf.alias, pf.least)


def _join(a: kir.Kernel, t: DType, itemsize: int, form: kir.Kernel):
    u = _Unifier(t, itemsize)
    merged = u((dataclasses.replace(a, plan=None, names=None), dataclasses.replace(form, plan=None, names=None)))
    pa, pf = a.plan, form.plan
    homes_a = dict(pa.home)
    bufs, bufs_f = {b.key: b for b in kir.buffers(a)}, {b.key: b for b in kir.buffers(form)}
    if set(bufs) != set(bufs_f):
        raise _Refused("other buffers")
    moved = {k for k in bufs if pf.root(bufs_f[k]).key != k and pa.root(bufs[k]).key == k
             and pa.slots[homes_a[k]].position is kir.Position.VECCALC}  # in a queue buffer for float32 only
    if {k for k, _ in pa.alias} != {k for k, _ in pf.alias} - moved:
        raise _Refused("the 16-bit kernel computes other tiles in its queue buffers")
    slots, plan32 = _members(pa, pf, u)
    homes_f = dict(plan32.home)
    placed = {k for k in homes_a if k not in moved and homes_a[k] != homes_f[k]}  # other members per instance
    roots = {k: pf.root(bufs_f[k]) for k in moved}
    sites = set(u.sites)

    def stage(st: kir.Stage) -> kir.Stage:
        locals_ = [s for s in st.body if isinstance(s, kir.Local)]
        declared = [s for s in locals_ if s.buf.key in moved]
        if any(s.dtype != dtypes.float32 for s in declared):
            raise _Refused("a moved tile is viewed in another type")
        here = {s.buf.key for s in declared}
        bare = [s for s in locals_ if s.buf.key in here or s.buf.key in placed]
        top = [dataclasses.replace(s, bare=True) if s in bare else s for s in locals_]
        narrow = tuple(kir.Bind(s.buf, s.dtype) for s in bare)
        wide = tuple(kir.Bind(s.buf, s.dtype, slot=homes_f[s.buf.key]) for s in bare if s.buf.key in placed)
        if wide:
            top.append(kir.If(kir.FLOAT_INSTANCE, wide, orelse=narrow, static=True))
        elif narrow:
            top.append(kir.If(kir.Not(kir.FLOAT_INSTANCE), narrow, static=True))
        bound: set = set()
        cast = {c.dst.buf.key for c in kir.walk(st.body) if isinstance(c, kir.Call) and id(c) in sites}

        def binds(root: kir.Buf, skip=frozenset()) -> tuple:
            out = tuple(kir.Bind(bufs[k], dtypes.float32, root) for k in sorted(here)
                        if roots[k].key == root.key and k not in bound and k not in skip)
            bound.update(b.buf.key for b in out)
            return out

        def body(stmts) -> tuple:
            out = []
            for s in stmts:
                if isinstance(s, kir.Call) and id(s) in sites:
                    b = () if s.dst.buf.role is kir.Role.OUTPUT else binds(s.srcs[0].buf)
                    out.append(kir.If(kir.FLOAT_INSTANCE, b, loc=s.loc, orelse=(s,), static=True) if b else
                               kir.If(kir.Not(kir.FLOAT_INSTANCE), (s,), loc=s.loc, static=True))  # a cast into a store
                    continue
                if isinstance(s, (kir.For, kir.If, kir.While)):
                    s = dataclasses.replace(s, **{f: body(getattr(s, f)) for f in ("body", "orelse", "test")
                                                  if hasattr(s, f)})
                out.append(s)
                if isinstance(s, kir.Queue) and (s.op is kir.QOp.ALLOC and s.buf.role is kir.Role.OUTPUT
                                                 or s.route is kir.Route.LOADED and s.op is kir.QOp.DEQUE):
                    b = binds(s.buf, cast)
                    if b:
                        out.append(kir.If(kir.FLOAT_INSTANCE, b, static=True))
            return _coalesce(out)
        rest = body(tuple(s for s in st.body if not isinstance(s, kir.Local)))
        if bound != here:
            raise _Refused("a moved tile is not set in its stage")
        return dataclasses.replace(st, body=tuple(top) + rest)
    new = {st: stage(st) for st in merged.stages}

    kernel = dataclasses.replace(merged, process=kir.restage(merged.process, new), stages=tuple(new[st] for st in merged.stages),
                                 plan=dataclasses.replace(pa, slots=slots), names=slot_names(a.names, slots))
    return kir.verify(kernel), plan32


def _coalesce(stmts: list) -> tuple:
    """Adjacent ``if constexpr`` blocks of one condition (and no ``else``) as one."""
    out: list = []
    for s in stmts:
        last = out[-1] if out else None
        if isinstance(s, kir.If) and isinstance(last, kir.If) and s.static and last.static and \
                s.cond == last.cond and not s.orelse and not last.orelse:
            out[-1] = dataclasses.replace(last, body=last.body + s.body, loc=last.loc if last.loc.line else s.loc)
        else:
            out.append(s)
    return tuple(out)
