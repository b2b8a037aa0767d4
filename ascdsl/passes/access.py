"""Memory-access analysis: affine ``load``/``store`` become ``block_load``/``block_store``.

An address is affine when it is a pointer parameter plus a sum of terms, each an integer scalar
(program ids, loop variables, runtime scalars, products of those) times at most one block index
``i_d`` (from ``arange``, moved by ``expand_dims``/``broadcast``). A mask is a block bound when it
is a conjunction (``&``) of ``index < bound`` terms whose index is ``scalar + i_d`` for one dim
(``<=``, ``>`` and ``>=`` with the operands the other way round are accepted too) and of scalar bools
(any scalar condition, ``pid % 3 != 1``: false, it makes the access empty). Other bool tiles of the
access's shape in that conjunction select lanes (:func:`_selected`): a load reads the bounding region and
takes ``other`` where they are false; a store is a read-modify-write of the bounding region, lowered
only where each program owns that region (:func:`_owned`), outside loops and for the only store to
its tensor, so it writes no GM element another program writes. The pass emits
the scalar offset, outer strides and clamped extents as ordinary scalar instructions before the
access, so the interpreter runs the result unchanged. A load whose innermost dim has another
stride (``tl.load(ptr + cols * stride)``) becomes a ``strided_load`` (a store a ``strided_store``);
one through a scalar pointer plus a computed 1-D int32 tile of indices a ``gather_load`` or
``scatter_store``.
Anything else (gathers, other masks) is a located CompilationError that says why. ``atomic_add``/``max``/
``min`` whose old values are not read become block stores that combine with memory (``atomic``
attribute).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .. import dtypes
from ..dtypes import PointerType
from ..errors import CompilationError, Loc
from ..ir.core import Block, GroupOp, Instr, Kernel, Op, Type, Value, walk

# A polynomial over integer scalar values: {monomial (sorted value ids): coefficient}.
Sym = dict[tuple[int, ...], int]


def _sym_add(a: Sym, b: Sym, scale: int = 1) -> Sym:
    out = dict(a)
    for k, c in b.items():
        out[k] = out.get(k, 0) + scale * c
    return {k: c for k, c in out.items() if c}


def _sym_mul(a: Sym, b: Sym) -> Sym:
    out: Sym = {}
    for ka, ca in a.items():
        for kb, cb in b.items():
            k = tuple(sorted(ka + kb))
            out[k] = out.get(k, 0) + ca * cb
    return {k: c for k, c in out.items() if c}


@dataclass(frozen=True)
class Affine:
    """``offset + sum_d i_d * dims[d]`` over a tile's dims (a scalar has no dims)."""

    offset: Sym
    dims: tuple[tuple[int, Any], ...] = ()  # (dim, Sym) pairs

    @property
    def dim_map(self) -> dict[int, Sym]:
        return dict(self.dims)


class NotAffine(Exception):
    def __init__(self, why: str):
        self.why = why


class _Analysis:
    """Affine forms of the kernel's integer values, computed on demand from their definitions."""

    def __init__(self, kernel: Kernel):
        self.defs: dict[int, Instr] = {}
        self.values: dict[int, Value] = {v.id: v for v in kernel.params}
        self.params = {v.id for v in kernel.params}
        for instr in walk(kernel.body):
            for v in instr.results:
                self.defs[v.id] = instr
                self.values[v.id] = v
            for region in instr.regions:
                self.values.update((a.id, a) for a in region.args)
        self.used = {x.id for instr in walk(kernel.body) for x in instr.operands}
        self.memo: dict[int, Affine] = {}
        self.next_id = 1 + max(self.values, default=-1)

    def affine(self, v: Value) -> Affine:
        if v.id not in self.memo:
            self.memo[v.id] = self._affine(v)
        return self.memo[v.id]

    def _affine(self, v: Value) -> Affine:
        instr = self.defs.get(v.id)
        if v.type.is_scalar:
            if isinstance(v.type.dtype, PointerType):
                if instr is None:
                    return Affine({})
                if instr.op is Op.PTR_ADD:
                    return self._add(instr.operands[0], instr.operands[1], v.type.shape)
                raise NotAffine(f"the pointer comes from `{instr.op.value}`")
            if not v.type.dtype.is_int:
                raise NotAffine(f"the offset is a {v.type.dtype} value")
            if instr is not None and instr.op is Op.CONST:
                return Affine({(): int(instr.attr("value"))} if instr.attr("value") else {})
            return Affine({(v.id,): 1})
        if instr is None:
            raise NotAffine("the offset is a tile argument")
        op, xs = instr.op, instr.operands
        if op is Op.ARANGE:
            return Affine({(): instr.attr("start")} if instr.attr("start") else {}, ((0, {(): 1}),))
        if op in (Op.ADD, Op.PTR_ADD):
            return self._add(xs[0], xs[1], v.type.shape)
        if op is Op.SUB:
            return self._add(xs[0], xs[1], v.type.shape, scale=-1)
        if op is Op.MUL:
            a, b = self.affine(xs[0]), self.affine(xs[1])
            if a.dims and b.dims:
                raise NotAffine("it multiplies two index tiles")
            scalar, tile = (a, b) if not a.dims else (b, a)
            return Affine(_sym_mul(tile.offset, scalar.offset),
                          tuple((d, _sym_mul(s, scalar.offset)) for d, s in tile.dims))
        if op is Op.EXPAND_DIMS:
            a, axis = self.affine(xs[0]), instr.attr("axis")
            axis = axis if axis >= 0 else axis + len(v.type.shape)
            return Affine(a.offset, tuple((d + (d >= axis), s) for d, s in a.dims))
        if op is Op.BROADCAST:
            a, src = self.affine(xs[0]), xs[0].type.shape
            shift = len(v.type.shape) - len(src)
            # a dim of size 1 that stays size 1 keeps its stride (a one-row tile is still a row tile)
            return Affine(a.offset, tuple((d + shift, s) for d, s in a.dims
                                          if src[d] != 1 or v.type.shape[d + shift] == 1))
        if op is Op.CONST:
            return Affine({(): int(instr.attr("value"))} if instr.attr("value") else {})
        if op in (Op.LOAD, Op.BLOCK_LOAD):
            raise NotAffine("the offsets are loaded from memory (a gather)")
        raise NotAffine(f"the offsets go through `{op.value}`, which is not affine")

    def _add(self, x: Value, y: Value, shape, scale: int = 1) -> Affine:
        a, b = self.affine(x), self.affine(y)
        dims = a.dim_map
        for d, s in b.dims:
            dims[d] = _sym_add(dims.get(d, {}), s, scale)
        return Affine(_sym_add(a.offset, b.offset, scale), tuple(sorted((d, s) for d, s in dims.items() if s)))


def _root(analysis: _Analysis, ptr: Value) -> Value:
    """The pointer parameter an address is based on."""
    while True:
        instr = analysis.defs.get(ptr.id)
        if instr is None:
            return ptr
        if instr.op not in (Op.PTR_ADD, Op.BROADCAST, Op.EXPAND_DIMS):
            raise NotAffine(f"the pointer comes from `{instr.op.value}`")
        ptr = instr.operands[0]


class _Emitter:
    """Appends scalar instructions that materialise symbolic offsets, strides and extents."""

    def __init__(self, analysis: _Analysis, loc: Loc):
        self.analysis, self.loc, self.out, self.consts = analysis, loc, [], {}

    def _new(self, op: Op, dtype, operands=(), attrs=()) -> Value:
        v = Value(self.analysis.next_id, Type(dtype))
        self.analysis.next_id += 1
        self.out.append(Instr(op, (v,), tuple(operands), tuple(attrs), (), self.loc))
        return v

    def const(self, value: int, dtype=dtypes.int32) -> Value:
        key = (value, dtype)
        if key not in self.consts:
            self.consts[key] = self._new(Op.CONST, dtype, attrs=(("value", value),))
        return self.consts[key]

    def sym(self, s: Sym) -> Value:
        total = None
        for mono, coef in sorted(s.items()):
            term = None
            for vid in mono:
                factor = self.analysis.values[vid]
                term = factor if term is None else self._new(Op.MUL, dtypes.int32, (term, factor))
            if term is None:
                term = self.const(coef)
            elif coef != 1:
                term = self._new(Op.MUL, dtypes.int32, (term, self.const(coef)))
            total = term if total is None else self._new(Op.ADD, dtypes.int32, (total, term))
        return self.const(0) if total is None else total

    def extent(self, bound: Value, start: Sym, size: int) -> Value:
        """``min(max(bound - start, 0), size)`` as int32."""
        if bound.type.dtype != dtypes.int32:
            bound = self._new(Op.CAST, dtypes.int32, (bound,), (("dtype", dtypes.int32),))
        e = self._new(Op.SUB, dtypes.int32, (bound, self.sym(start))) if start else bound
        e = self._new(Op.MAXIMUM, dtypes.int32, (e, self.const(0)))
        return self._new(Op.MINIMUM, dtypes.int32, (e, self.const(size)))


_FLIP = {Op.GT: Op.LT, Op.GE: Op.LE}
ATOMIC_STORES = frozenset({Op.ATOMIC_ADD, Op.ATOMIC_MAX, Op.ATOMIC_MIN})
"""Atomics whose old values nobody reads become ``block_store`` s with an ``atomic`` attribute (the op)."""


def _bounds(analysis: _Analysis, mask: Value, shape: tuple[int, ...]) -> dict:
    """Per dim: the ``(bound, start, slack)`` terms of ``start + i_d < bound + slack``; under the key
    None, the scalar bools of the whole access (``(pid % 3 != 1) & (cols < n)``)."""
    if mask.type.is_scalar:
        return {None: [mask]}
    instr = analysis.defs.get(mask.id)
    if instr is None:
        raise NotAffine("the mask is a kernel argument")
    op, xs = instr.op, instr.operands
    if op is Op.AND:
        out = _bounds(analysis, xs[0], shape)
        for d, terms in _bounds(analysis, xs[1], shape).items():
            out.setdefault(d, []).extend(terms)
        return out
    if op in (Op.BROADCAST, Op.EXPAND_DIMS):
        inner = _bounds(analysis, xs[0], xs[0].type.shape)
        if op is Op.EXPAND_DIMS:
            axis = instr.attr("axis")
            axis = axis if axis >= 0 else axis + len(mask.type.shape)
            return {d if d is None else d + (d >= axis): t for d, t in inner.items()}
        shift = len(mask.type.shape) - len(xs[0].type.shape)
        return {d if d is None else d + shift: t for d, t in inner.items()}
    if op in _FLIP:
        op, xs = _FLIP[op], (xs[1], xs[0])
    if op not in (Op.LT, Op.LE):
        raise NotAffine(f"the mask uses `{op.value}`; only `index < bound` terms and scalar conditions joined by `&` "
                        "are block bounds")
    index, bound = xs
    if not bound.type.is_scalar:
        raise NotAffine("the mask's bound is a tile; it must be a scalar")
    a = analysis.affine(index)
    if len(a.dims) != 1 or a.dims[0][1] != {(): 1}:
        raise NotAffine("the mask's index must be `scalar + arange` along exactly one dim")
    return {a.dims[0][0]: [(bound, a.offset, 1 if op is Op.LE else 0)]}


def _split(analysis: _Analysis, mask: Value, shape: tuple[int, ...]) -> tuple[dict, list[Value]]:
    """The mask's block bounds (:func:`_bounds`) and its other terms of the access's shape (bool tiles the
    access selects lanes with), from the conjunction at its top."""
    instr = analysis.defs.get(mask.id)
    if instr is not None and instr.op is Op.AND and not mask.type.is_scalar:
        bounds, selects = _split(analysis, instr.operands[0], shape)
        more, others = _split(analysis, instr.operands[1], shape)
        for d, terms in more.items():
            bounds.setdefault(d, []).extend(terms)
        return bounds, selects + others
    try:
        return _bounds(analysis, mask, shape), []
    except NotAffine:
        if mask.type.shape != shape:
            raise
        return {}, [mask]


def _owned(analysis: _Analysis, a: Affine, shape: tuple[int, ...]) -> str | None:
    """Why programs may not own the bounding region of a block access at ``a`` (None when they do): its
    offset must be ``program_id(0) * C`` plus kernel arguments and constants, its strides constants and
    ``C`` at least the region's span, in a kernel that reads no other program id."""
    if any(i.op is Op.PROGRAM_ID and i.attr("axis") != 0 for i in analysis.defs.values()):
        return "the kernel reads the program id along axis 1 or 2"
    span = 1
    for d, stride in a.dims:
        if set(stride) != {()}:
            return "its strides are not constants"
        span += (shape[d] - 1) * abs(stride[()])
    step = 0
    for mono, coef in a.offset.items():
        scale = _pid_scale(analysis, mono[0]) if len(mono) == 1 else None
        if scale is not None:
            step += coef * scale
        elif not all(_invariant(analysis, v) for v in mono):
            return "its offset depends on loop variables or computed scalars"
    if step == 0:
        return "every program stores to the same region"
    if step < span:
        return f"the programs' regions overlap (`program_id(0) * {step}` apart, each {span} elements long)"
    return None


def _pid_scale(analysis: _Analysis, vid: int) -> int | None:
    """``c`` when scalar ``vid`` is ``program_id(0) * c`` (a product with constants), else None."""
    instr = analysis.defs.get(vid)
    if instr is None:
        return None
    if instr.op is Op.PROGRAM_ID:
        return 1 if instr.attr("axis") == 0 else None
    if instr.op is Op.MUL:
        a, b = instr.operands
        for x, c in ((a, b), (b, a)):
            d = analysis.defs.get(c.id)
            if d is not None and d.op is Op.CONST and isinstance(d.attr("value"), int):
                inner = _pid_scale(analysis, x.id)
                return None if inner is None else inner * d.attr("value")
    return None


def _invariant(analysis: _Analysis, vid: int) -> bool:
    """Scalar ``vid`` is the same in every program and iteration: kernel arguments, constants and
    arithmetic of them."""
    if vid in analysis.params:
        return True
    instr = analysis.defs.get(vid)
    if instr is None or not (instr.op is Op.CONST or instr.op in GroupOp.ARITH or instr.op is Op.CAST):
        return False
    return all(_invariant(analysis, x.id) for x in instr.operands)


def _extents(emit: _Emitter, bounds: dict, shape: tuple[int, ...]) -> list[Value]:
    """The extent of every dim under the mask's terms; a false scalar term makes the first one 0."""
    extents = [_extent(emit, bounds.get(d, []), shape[d]) for d in range(len(shape))]
    for cond in bounds.get(None, []):
        on = emit._new(Op.CAST, dtypes.int32, (cond,), (("dtype", dtypes.int32),))
        extents[0] = emit._new(Op.MUL, dtypes.int32, (extents[0], on))
    return extents


def _extent(emit: _Emitter, terms, size: int) -> Value:
    """The extent of one dim under the mask's ``(bound, start, slack)`` terms for it (``size`` if none)."""
    e = None
    for bound, start, slack in terms:
        if slack:
            bound = emit._new(Op.ADD, bound.type.dtype, (bound, emit.const(slack, bound.type.dtype)))
        t = emit.extent(bound, start, size)
        e = t if e is None else emit._new(Op.MINIMUM, dtypes.int32, (e, t))
    return emit.const(size) if e is None else e


def _gather(analysis: _Analysis, instr: Instr) -> list[Instr] | None:
    """An access through ``pointer + index`` with a 1-D int32 tile of indices that is not affine (loaded,
    computed) and an affine scalar pointer: a ``gather_load`` or ``scatter_store`` (None otherwise)."""
    d = analysis.defs.get(instr.operands[0].id)
    if d is None or d.op is not Op.PTR_ADD:
        return None
    ptr, index = d.operands
    if not ptr.type.is_scalar or index.type.is_scalar:
        return None
    try:
        analysis.affine(index)
        return None
    except NotAffine as e:
        why = e.why
    if len(index.type.shape) != 1 and instr.attr("has_mask"):
        raise NotAffine(f"{why}, and gathers through 2-D tiles of indices take no mask")
    if index.type.dtype != dtypes.int32:
        raise NotAffine(f"a gather needs int32 indices, not {index.type.dtype} ones")
    emit = _Emitter(analysis, instr.loc)
    offset = emit.sym(analysis.affine(ptr).offset)
    is_load = instr.op is Op.LOAD
    flat = _Flat(analysis, emit, index.type.shape)  # a 2-D tile of indices gathers as its rows in a row
    index = flat.ravel(index)
    mask = instr.operands[1 if is_load else 2] if instr.attr("has_mask") else None
    bounds = _bounds(analysis, mask, index.type.shape) if mask is not None else {}
    operands = (_root(analysis, ptr), offset, index, *_extents(emit, bounds, index.type.shape)[:1])
    if not is_load:  # a scatter
        attrs = (("shape", index.type.shape),) + ((("atomic", instr.op.value),) if instr.op in ATOMIC_STORES else ())
        return emit.out + [Instr(Op.SCATTER_STORE, (), operands + (flat.ravel(instr.operands[1]),), attrs, (),
                                 instr.loc)]
    has_other = instr.attr("has_other")
    attrs = (("shape", index.type.shape), ("has_other", has_other))
    operands += (instr.operands[2],) if has_other else ()
    result = flat.value(instr.result)
    out = emit.out + [Instr(Op.GATHER_LOAD, (result,), operands, attrs, (), instr.loc)]
    return out + flat.unravel(result, instr.result)


class _Flat:
    """Reshapes between a 2-D access and the 1-D one that runs it (nothing for a 1-D access)."""

    def __init__(self, analysis: _Analysis, emit: _Emitter, shape):
        self.analysis, self.emit, self.shape = analysis, emit, shape
        self.flat = (math.prod(shape),)

    def value(self, like: Value) -> Value:
        if len(self.shape) == 1:
            return like
        v = Value(self.analysis.next_id, like.type.with_shape(self.flat))
        self.analysis.next_id += 1
        return v

    def ravel(self, x: Value) -> Value:
        if len(self.shape) == 1 or x.type.is_scalar:
            return x
        v = self.value(x)
        self.emit.out.append(Instr(Op.RESHAPE, (v,), (x,), (), (), self.emit.loc))
        return v

    def unravel(self, flat: Value, result: Value) -> list[Instr]:
        return [] if flat is result else [Instr(Op.RESHAPE, (result,), (flat,), (), (), self.emit.loc)]


def _lower(analysis: _Analysis, instr: Instr) -> list[Instr]:
    """The instructions replacing one load or store (scalar setup, then the block access)."""
    gather = _gather(analysis, instr)
    if gather is not None:
        return gather
    is_load = instr.op is Op.LOAD
    ptr = instr.operands[0]
    shape = instr.result.type.shape if is_load else ptr.type.shape
    if not shape:
        return _single(analysis, instr)
    value = None if is_load else instr.operands[1]
    mask = None
    if instr.attr("has_mask"):
        mask = instr.operands[1 if is_load else 2]
    other = instr.operands[2] if is_load and instr.attr("has_other") else None
    if other is not None and not other.type.is_scalar:
        raise NotAffine("`other` is a tile; it must be a scalar")
    base = _root(analysis, ptr)
    a = analysis.affine(ptr)
    strides = a.dim_map
    rank = len(shape)
    for d in range(rank):
        if shape[d] > 1 and d not in strides:
            raise NotAffine(f"the address does not change along dim {d} (a broadcast access)")
    inner = 0 if rank == 2 and shape[1] == 1 else rank - 1  # the elements of an [M, 1] column are its rows
    strided = shape[inner] > 1 and strides[inner] != {(): 1}
    if strided and any(not mono and c < 0 for mono, c in strides[inner].items()):
        raise NotAffine("the innermost stride is negative")
    emit = _Emitter(analysis, instr.loc)
    offset = emit.sym(a.offset)
    outer = [emit.sym(strides.get(d, {})) for d in range(rank if strided else rank - 1)]
    bounds, selects = _split(analysis, mask, shape) if mask is not None else ({}, [])
    if selects and (strided or instr.op in ATOMIC_STORES):
        raise NotAffine("the mask selects lanes of a strided or atomic access")
    extents = _extents(emit, bounds, shape)
    operands = (base, offset, *outer, *extents)
    store = Op.STRIDED_STORE if strided else Op.BLOCK_STORE
    if instr.op in ATOMIC_STORES:
        attrs = (("shape", shape), ("atomic", instr.op.value))
        return emit.out + [Instr(store, (), operands + (value,), attrs, (), instr.loc)]
    if selects:
        return emit.out + _selected(analysis, instr, a, shape, operands, selects, other)
    if is_load:
        attrs = (("shape", shape), ("has_other", other is not None))
        block = Instr(Op.STRIDED_LOAD if strided else Op.BLOCK_LOAD, instr.results,
                      operands + ((other,) if other is not None else ()), attrs, (), instr.loc)
    else:
        block = Instr(store, (), operands + (value,), (("shape", shape),), (), instr.loc)
    return emit.out + [block]


def _selected(analysis: _Analysis, instr: Instr, a: Affine, shape, operands, selects, other) -> list[Instr]:
    """A block access whose mask also has bool-tile terms ``selects``: a load reads the bounding region and
    puts ``other`` where they are false; a store reads the region it owns (:func:`_owned`), takes the
    stored value where they are true and writes the region back, so lanes masked off keep their data."""
    loc = instr.loc

    def new(op, t, xs, attrs=()):
        v = Value(analysis.next_id, t)
        analysis.next_id += 1
        out.append(Instr(op, (v,), tuple(xs), tuple(attrs), (), loc))
        return v
    out: list[Instr] = []
    keep = selects[0]
    for term in selects[1:]:
        keep = new(Op.AND, keep.type, (keep, term))
    if instr.op is Op.LOAD:
        if other is None:  # the lanes masked off are undefined, as on the interpreter
            return [Instr(Op.BLOCK_LOAD, instr.results, operands, (("shape", shape), ("has_other", False)), (), loc)]
        raw = new(Op.BLOCK_LOAD, instr.result.type, operands, (("shape", shape), ("has_other", False)))
        return out + [Instr(Op.WHERE, instr.results, (keep, raw, other), (), (), loc)]
    why = _owned(analysis, a, shape) or ("the store is in a loop" if analysis.looped else None) or (
        "the kernel stores to this tensor elsewhere too" if analysis.stores[operands[0].id] > 1 else None)
    if why:
        raise NotAffine(f"its mask selects lanes with a bool tile, which a store writes as a read-modify-write of "
                        f"the region each program owns, and {why}")
    value = instr.operands[1]
    old = new(Op.BLOCK_LOAD, value.type, operands, (("shape", shape), ("has_other", False)))
    merged = new(Op.WHERE, value.type, (keep, value, old))
    return out + [Instr(Op.BLOCK_STORE, (), operands + (merged,), (("shape", shape),), (), loc)]


def _single(analysis: _Analysis, instr: Instr) -> list[Instr]:
    """A single-element access. A load stays a scalar ``load``, of ``base + offset`` (the backend
    reads it on the scalar unit); a store (or an unread atomic) becomes a one-element ``block_store``
    of the value broadcast to a ``(1,)`` tile, of extent 0 where its scalar mask is false."""
    ptr = instr.operands[0]
    base = _root(analysis, ptr)
    emit = _Emitter(analysis, instr.loc)
    offset = emit.sym(analysis.affine(ptr).offset)
    if instr.op is Op.LOAD:
        address = emit._new(Op.PTR_ADD, ptr.type.dtype, (base, offset))
        return emit.out + [Instr(Op.LOAD, instr.results, (address, *instr.operands[1:]), instr.attrs, (), instr.loc)]
    value = instr.operands[1]
    tile = Value(analysis.next_id, Type(value.type.dtype, (1,)))
    analysis.next_id += 1
    emit.out.append(Instr(Op.BROADCAST, (tile,), (value,), (), (), instr.loc))
    extent = emit.const(1)
    if instr.attr("has_mask"):
        extent = emit._new(Op.CAST, dtypes.int32, (instr.operands[2],), (("dtype", dtypes.int32),))
    attrs = (("shape", (1,)),) + ((("atomic", instr.op.value),) if instr.op in ATOMIC_STORES else ())
    return emit.out + [Instr(Op.BLOCK_STORE, (), (base, offset, extent, tile), attrs, (), instr.loc)]


def _rewrite(analysis: _Analysis, block: Block) -> Block:
    body: list[Instr] = []
    for instr in block.body:
        looped = analysis.looped
        if instr.op in (Op.LOAD, Op.STORE) or instr.op in ATOMIC_STORES and instr.result.id not in analysis.used:
            try:
                body += _lower(analysis, instr)
            except NotAffine as e:
                what = {Op.LOAD: "load", Op.STORE: "store"}.get(instr.op, f"`tl.{instr.op.value}`")
                raise CompilationError(
                    instr.loc, f"this {what} cannot be copied as blocks: {e.why}",
                    hint="Ascend C copies rectangular blocks (DataCopy/DataCopyPad): address memory as "
                         "pointer + scalar offset + arange terms times scalar strides (or load through "
                         "pointer + a 1-D int32 tile of indices) and mask with `index < bound` terms joined "
                         "by `&` (a store masked by other bool tiles needs a region each program owns, at "
                         "`program_id(0) * BLOCK`); the interpreter still runs this kernel") from None
            continue
        if instr.regions:
            analysis.looped = looped or instr.op in (Op.FOR, Op.WHILE)
            instr = instr.map_regions(lambda r: _rewrite(analysis, r))
            analysis.looped = looped
        body.append(instr)
    return Block(block.args, tuple(body))


def block_accesses(kernel: Kernel, platform=None) -> Kernel:
    """Rewrite every ``load``/``store`` as a block access (see the module docstring)."""
    analysis = _Analysis(kernel)
    analysis.looped = False
    analysis.stores = {}
    for instr in walk(kernel.body):
        if instr.op is Op.STORE or instr.op in GroupOp.ATOMIC:
            try:
                root = _root(analysis, instr.operands[0]).id
            except NotAffine:  # a located error when the access is rewritten
                continue
            analysis.stores[root] = analysis.stores.get(root, 0) + 1
    return kernel.with_body(_rewrite(analysis, kernel.body))
