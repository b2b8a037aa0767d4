"""Memory-access analysis: affine ``load``/``store`` become ``block_load``/``block_store``.

An address is affine when it is a pointer parameter plus a sum of terms, each an integer scalar
(program ids, loop variables, runtime scalars, products of those) times at most one block index
``i_d`` (from ``arange``, moved by ``expand_dims``/``broadcast``). A mask is a block bound when it
is a conjunction (``&``) of ``index < bound`` terms whose index is ``scalar + i_d`` for one dim
(``<=``, ``>`` and ``>=`` with the operands the other way round are accepted too) and of scalar bools
(any scalar condition, ``pid % 3 != 1``: false, it makes the access empty). The pass emits
the scalar offset, outer strides and clamped extents as ordinary scalar instructions before the
access, so the interpreter runs the result unchanged. A load whose innermost dim has another
stride (``tl.load(ptr + cols * stride)``) becomes a ``strided_load`` (a store a ``strided_store``);
one through a scalar pointer plus a computed int32 tile of indices a ``gather_load`` or
``scatter_store`` (a 2-D tile of indices runs as its rows in a row).

No masked-off lane may reach memory (it may lie past the tensor, or be another program's element), so
an access whose mask has other bool-tile terms (``x > 0``, ``cols >= SHIFT``, ``cols <= rows``, any
mask of a gather through a 2-D tile of indices) runs lane by lane (:func:`_per_lane`): a
``gather_load``/``scatter_store`` through the lanes' offsets with a lane mask, so only the true lanes
are read or written, whatever the region, loop or other store; a load takes ``other`` where the mask is
false. Anything else is a located CompilationError that says why. ``atomic_add``/``max``/``min`` whose
old values are not read become block stores (or scatters) that combine with memory (``atomic``
attribute).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .. import dtypes
from ..dtypes import PointerType
from ..errors import CompilationError, Loc
from ..ir.core import Block, Instr, Kernel, Op, Type, Value, walk
from ..ir.symbol import ONE, ZERO, Poly, Symbol, equal


@dataclass(frozen=True)
class Affine:
    """``offset + sum_d i_d * dims[d]`` over a tile's dims (a scalar has no dims), polynomials of the
    kernel's integer scalars (variables: value ids) and of its run-time tile extents (:class:`Symbol` s,
    from constants of a kernel compiled for them: the coefficients :func:`_coefficients` groups)."""

    offset: Poly
    dims: tuple[tuple[int, Poly], ...] = ()  # (dim, Poly) pairs

    @property
    def dim_map(self) -> dict[int, Poly]:
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
                if instr is None and v.id not in self.params:
                    raise NotAffine("the pointer is a loop argument that is not its value on entry plus "
                                    "integer steps")
                if instr is None:
                    return Affine(ZERO)
                if instr.op is Op.PTR_ADD:
                    return self._add(instr.operands[0], instr.operands[1], v.type.shape)
                raise NotAffine(f"the pointer comes from `{instr.op.value}`")
            if not v.type.dtype.is_int:
                raise NotAffine(f"the offset is a {v.type.dtype} value")
            if instr is not None and instr.op is Op.CONST:
                return Affine(_integer(instr.attr("value")))
            return Affine(Poly.var(v.id))
        if instr is None:
            raise NotAffine("the offset is a tile argument")
        op, xs = instr.op, instr.operands
        if op is Op.ARANGE:
            return Affine(_integer(instr.attr("start")), ((0, ONE),))
        if op in (Op.ADD, Op.PTR_ADD):
            return self._add(xs[0], xs[1], v.type.shape)
        if op is Op.SUB:
            return self._add(xs[0], xs[1], v.type.shape, scale=-1)
        if op is Op.MUL:
            a, b = self.affine(xs[0]), self.affine(xs[1])
            if a.dims and b.dims:
                raise NotAffine("it multiplies two index tiles")
            scalar, tile = (a, b) if not a.dims else (b, a)
            return Affine(tile.offset * scalar.offset, tuple((d, s * scalar.offset) for d, s in tile.dims))
        if op is Op.CAST and _widens(xs[0].type.dtype, v.type.dtype):
            return self.affine(xs[0])  # `tl.arange(0, B).to(tl.int64)`: the same offsets, wider
        if op is Op.EXPAND_DIMS:
            a, axis = self.affine(xs[0]), instr.attr("axis")
            axis = axis if axis >= 0 else axis + len(v.type.shape)
            return Affine(a.offset, tuple((d + (d >= axis), s) for d, s in a.dims))
        if op is Op.BROADCAST:
            a, src = self.affine(xs[0]), xs[0].type.shape
            shift = len(v.type.shape) - len(src)
            # a dim of size 1 that stays size 1 keeps its stride (a one-row tile is still a row tile)
            return Affine(a.offset, tuple((d + shift, s) for d, s in a.dims
                                          if not equal(src[d], 1) or equal(v.type.shape[d + shift], 1)))
        if op is Op.CONST:
            return Affine(_integer(instr.attr("value")))
        if op in (Op.LOAD, Op.BLOCK_LOAD):
            raise NotAffine("the offsets are loaded from memory (a gather)")
        raise NotAffine(f"the offsets go through `{op.value}`, which is not affine")

    def _add(self, x: Value, y: Value, shape, scale: int = 1) -> Affine:
        a, b = self.affine(x), self.affine(y)
        dims = a.dim_map
        for d, s in b.dims:
            dims[d] = dims.get(d, ZERO) + s * scale
        return Affine(a.offset + b.offset * scale, tuple(sorted((d, s) for d, s in dims.items() if not _zero(s))))


def _integer(value) -> Poly:
    """A constant's value (an int, or a :class:`Poly` of run-time tile extents) as a polynomial."""
    return value if isinstance(value, Poly) else Poly.const(int(value))


def _coefficients(p: Poly) -> list[tuple[tuple[int, ...], Poly]]:
    """``p`` as a polynomial of value ids whose coefficients are polynomials of symbols: ``(value ids,
    coefficient)`` in :attr:`Poly.canonical` order of the ids, without the coefficients that are 0 on the
    symbols' domains (:class:`Undecided` where one is 0 at some points only). Without symbols, ``p``'s own
    terms: what a kernel compiled for values has, each coefficient at those values."""
    groups: dict[tuple[int, ...], Poly] = {}
    for mono, coef in p:
        ids = tuple(sorted(v for v in mono if not isinstance(v, Symbol)))
        groups[ids] = groups.get(ids, ZERO) + Poly(((tuple(v for v in mono if isinstance(v, Symbol)), coef),))
    return [(ids, groups[ids]) for ids in sorted(groups) if not equal(groups[ids], 0)]


def _zero(p: Poly) -> bool:
    """Whether ``p`` is 0 on the symbols' domains whatever the value ids (:func:`_coefficients`)."""
    return not _coefficients(p)


def _literal(c: Poly) -> int | Poly:
    """A coefficient as a constant holds it: an int where it has no symbol."""
    return c.constant_term if all(not mono for mono, _ in c) else c


def _widens(src, dst) -> bool:
    """A cast from integer type ``src`` to ``dst`` keeps every value (so offsets stay affine through it)."""
    return src.is_int and dst.is_int and (dst.itemsize > src.itemsize or dst == src) and \
        (src.kind == "uint" or dst.kind == "int")


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

    def new(self, op: Op, dtype, operands=(), attrs=()) -> Value:
        """A new scalar instruction's result of ``dtype``."""
        return self.tile(op, Type(dtype), operands, attrs)

    def tile(self, op: Op, t: Type, operands=(), attrs=()) -> Value:
        """A new instruction's result of type ``t``."""
        v = _value(self.analysis, t)
        self.out.append(Instr(op, (v,), tuple(operands), tuple(attrs), (), self.loc))
        return v

    def const(self, value: int, dtype=dtypes.int32) -> Value:
        key = (value, dtype)
        if key not in self.consts:
            self.consts[key] = self.new(Op.CONST, dtype, attrs=(("value", value),))
        return self.consts[key]

    def width(self, s: Poly) -> dtypes.DType:
        """int64 when one of the scalars of ``s`` is (the user asked for 64-bit offsets), else int32."""
        wide = any(self.analysis.values[vid].type.dtype == dtypes.int64 for ids, _ in _coefficients(s) for vid in ids)
        return dtypes.int64 if wide else dtypes.int32

    def cast(self, x: Value, dtype) -> Value:
        """``x`` (a scalar or a tile) in ``dtype``."""
        return x if x.type.dtype == dtype else self.tile(Op.CAST, x.type.with_dtype(dtype), (x,), (("dtype", dtype),))

    def sym(self, s: Poly, dtype=None) -> Value:
        """``s`` computed in ``dtype`` (default :meth:`width`), term by term in :attr:`Poly.canonical` order
        of its value ids, each times its coefficient (a constant, of symbols where ``s`` has them)."""
        dt = dtype or self.width(s)
        total = None
        for ids, coef in _coefficients(s):
            term = None
            for vid in ids:
                factor = self.cast(self.analysis.values[vid], dt)
                term = factor if term is None else self.new(Op.MUL, dt, (term, factor))
            if term is None:
                term = self.const(_literal(coef), dt)
            elif not equal(coef, 1):
                term = self.new(Op.MUL, dt, (term, self.const(_literal(coef), dt)))
            total = term if total is None else self.new(Op.ADD, dt, (total, term))
        return self.const(0, dt) if total is None else total

    def extent(self, bound: Value, start: Poly, size: int) -> Value:
        """``min(max(bound - start, 0), size)`` as int32 (the difference in int64 where the bound or the
        start is)."""
        dt = dtypes.int64 if dtypes.int64 in (bound.type.dtype, self.width(start)) else dtypes.int32
        e = self.cast(bound, dt)
        e = self.new(Op.SUB, dt, (e, self.sym(start, dt))) if not _zero(start) else e
        e = self.new(Op.MAXIMUM, dt, (e, self.const(0, dt)))
        return self.cast(self.new(Op.MINIMUM, dt, (e, self.const(size, dt))), dtypes.int32)


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
    if len(a.dims) != 1 or not _zero(a.dims[0][1] - ONE):
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


def _extents(emit: _Emitter, bounds: dict, shape: tuple[int, ...]) -> list[Value]:
    """The extent of every dim under the mask's terms; a false scalar term makes the first one 0."""
    extents = [_extent(emit, bounds.get(d, []), shape[d]) for d in range(len(shape))]
    for cond in bounds.get(None, []):
        on = emit.new(Op.CAST, dtypes.int32, (cond,), (("dtype", dtypes.int32),))
        extents[0] = emit.new(Op.MUL, dtypes.int32, (extents[0], on))
    return extents


def _extent(emit: _Emitter, terms, size: int) -> Value:
    """The extent of one dim under the mask's ``(bound, start, slack)`` terms for it (``size`` if none)."""
    e = None
    for bound, start, slack in terms:
        if slack:
            bound = emit.new(Op.ADD, bound.type.dtype, (bound, emit.const(slack, bound.type.dtype)))
        t = emit.extent(bound, start, size)
        e = t if e is None else emit.new(Op.MINIMUM, dtypes.int32, (e, t))
    return emit.const(size) if e is None else e


def _gather(analysis: _Analysis, instr: Instr) -> list[Instr] | None:
    """An access through a tile of addresses that are not affine (offsets loaded from memory, computed
    with ``%``, the same element for several lanes) but one pointer parameter plus integer offsets: a
    ``gather_load`` or ``scatter_store`` of its lanes (None for an affine access)."""
    ptr = instr.operands[0]
    if ptr.type.is_scalar:
        return None
    try:
        strides = analysis.affine(ptr).dim_map
        if all(equal(n, 1) or d in strides for d, n in enumerate(ptr.type.shape)):
            return None
    except NotAffine:
        pass
    if instr.op is Op.LOAD and instr.attr("has_other") and not instr.operands[2].type.is_scalar:
        raise NotAffine("`other` is a tile; it must be a scalar")
    emit = _Emitter(analysis, instr.loc)
    base, offset, index = _lane_addresses(analysis, emit, ptr)
    if index is None:  # every lane the same address
        index = emit.tile(Op.CONST, ptr.type.with_dtype(dtypes.int32), (), (("value", 0),))
    return _per_lane(analysis, emit, instr, base, emit.sym(offset), index)


def _lane_addresses(analysis: _Analysis, emit: _Emitter, ptr: Value) -> tuple[Value, Poly, Value]:
    """``(pointer parameter, scalar offset, integer tile of lane offsets)`` of a tile of addresses
    built by ``+``, broadcasts and ``expand_dims`` from a scalar pointer (an int64 tile where an offset
    is, else int32)."""
    instr = analysis.defs.get(ptr.id)
    if ptr.type.is_scalar:
        return _root(analysis, ptr), analysis.affine(ptr).offset, None
    if instr is None or instr.op not in (Op.PTR_ADD, Op.BROADCAST, Op.EXPAND_DIMS):
        raise NotAffine(f"the pointer comes from `{instr.op.value}`" if instr else "the pointer is a tile argument")
    base, offset, index = _lane_addresses(analysis, emit, instr.operands[0])
    if instr.op is not Op.PTR_ADD:
        if index is not None:
            index = emit.tile(instr.op, ptr.type.with_dtype(index.type.dtype), (index,), instr.attrs)
        return base, offset, index
    step = instr.operands[1]
    if not step.type.dtype.is_int:
        raise NotAffine(f"a gather needs integer indices, not {step.type.dtype} ones")
    if step.type.is_scalar:
        offset = offset + analysis.affine(step).offset
        return base, offset, index
    step = emit.cast(step, dtypes.int64 if step.type.dtype in (dtypes.int64, dtypes.uint32) else dtypes.int32)
    if index is None:
        return base, offset, step
    if index.type.shape != step.type.shape:
        raise NotAffine("a pointer tile and its offsets have different shapes")
    if index.type.dtype != step.type.dtype:
        index, step = (emit.cast(x, dtypes.int64) for x in (index, step))
    return base, offset, emit.tile(Op.ADD, index.type, (index, step))


def _per_lane(analysis: _Analysis, emit: _Emitter, instr: Instr, base: Value, offset: Value,
              index: Value) -> list[Instr]:
    """``instr`` as a ``gather_load`` or ``scatter_store`` of the lanes ``base + offset + index``: one element
    per lane, so no masked-off lane touches memory. A 1-D access masked by ``index < bound`` terms and
    scalar conditions copies its first ``extent`` lanes; any other mask is a lane mask (an int32 0/1
    tile) the copies test one by one, and a load puts ``other`` where it is false after the gather."""
    is_load = instr.op is Op.LOAD
    shape = index.type.shape
    mask = instr.operands[1 if is_load else 2] if instr.attr("has_mask") else None
    other = instr.operands[2] if is_load and instr.attr("has_other") else None
    bounds, selects = _split(analysis, mask, shape) if mask is not None else ({}, [])
    extents = _extents(emit, bounds, shape)
    extent = extents[0] if len(shape) == 1 else emit.const(math.prod(shape))
    keep = _keep(emit, shape, extents if len(shape) > 1 else (), selects)  # 2-D bounds select lanes too
    lanes = None
    if keep is not None:
        lanes = emit.tile(Op.CAST, Type(dtypes.int32, shape), (keep,), (("dtype", dtypes.int32),))
    flat = _Flat(analysis, emit, shape)  # a 2-D tile of lanes runs as its rows in a row
    operands = (base, offset, flat.ravel(index), extent) + ((flat.ravel(lanes),) if lanes is not None else ())
    attrs = (("shape", flat.flat), ("has_mask", lanes is not None))
    if not is_load:  # a scatter
        attrs += (("atomic", instr.op.value),) if instr.op in ATOMIC_STORES else ()
        return emit.out + [Instr(Op.SCATTER_STORE, (), operands + (flat.ravel(instr.operands[1]),), attrs, (),
                                 instr.loc)]
    fill = other is not None and lanes is None  # the gather fills the lanes past `extent`
    result = instr.result if fill or other is None else _value(analysis, instr.result.type)
    flat_result = flat.value(result)
    out = emit.out + [Instr(Op.GATHER_LOAD, (flat_result,), operands + ((other,) if fill else ()),
                            attrs + (("has_other", fill),), (), instr.loc)] + flat.unravel(flat_result, result)
    if result is not instr.result:  # the lanes masked off take `other`
        out.append(Instr(Op.WHERE, instr.results, (keep, result, other), (), (), instr.loc))
    return out


def _spans(analysis: _Analysis, emit: _Emitter, instr: Instr, base: Value, offset: Value, strides: dict, bounds: dict,
           selects: list[Value]) -> list[Instr]:
    """A load of unit innermost stride masked by bool tiles: a ``span_load`` of each row from its first to
    its last true lane (computed in the kernel: ``min``/``max`` of the true lanes' column), so what it
    reads lies between two elements the true lanes read; ``other`` where the mask is false."""
    shape = instr.result.type.shape
    keep = _keep(emit, shape, _extents(emit, bounds, shape), selects)
    col = _index(emit, shape, len(shape) - 1)
    per_row = Type(dtypes.int32, (shape[0],) if len(shape) == 2 else ())
    axis = (("axis", len(shape) - 1), ("keep_dims", False))

    def edge(op: Op, past: int) -> Value:
        lanes = emit.tile(Op.WHERE, col.type, (keep, col, emit.const(past)))
        return emit.tile(op, per_row, (lanes,), axis)
    lo = edge(Op.MIN, shape[-1])
    hi = emit.tile(Op.ADD, per_row, (edge(Op.MAX, -1), emit.const(1)))
    row = (emit.sym(strides.get(0, ZERO), dtypes.int32),) if len(shape) == 2 else ()
    other = instr.operands[2] if instr.attr("has_other") else None
    raw = instr.result if other is None else _value(analysis, instr.result.type)
    out = emit.out + [Instr(Op.SPAN_LOAD, (raw,), (base, offset, *row, lo, hi), (("shape", shape),), (), instr.loc)]
    if other is not None:
        out.append(Instr(Op.WHERE, instr.results, (keep, raw, other), (), (), instr.loc))
    return out


def _keep(emit: _Emitter, shape, extents, selects: list[Value]) -> Value | None:
    """The lanes an access keeps: ``selects`` and ``i_d < extent_d`` for the ``extents`` of dims they
    clip, joined by ``&``."""
    keep = None
    for term in selects + [emit.tile(Op.LT, Type(dtypes.bool_, shape), (_index(emit, shape, d), e))
                           for d, e in enumerate(extents) if e is not emit.const(shape[d])]:
        keep = term if keep is None else emit.tile(Op.AND, term.type, (keep, term))
    return keep


def _value(analysis: _Analysis, t: Type) -> Value:
    v = Value(analysis.next_id, t)
    analysis.next_id += 1
    return v


def _index(emit: _Emitter, shape, d: int) -> Value:
    """The int32 tile of ``shape`` whose lanes hold their index along dim ``d``."""
    size = shape[d]
    index = emit.tile(Op.ARANGE, Type(dtypes.int32, (size,)), (), (("start", 0), ("end", size)))
    if len(shape) == 1:
        return index
    if len(shape) == 2:
        index = emit.tile(Op.EXPAND_DIMS, Type(dtypes.int32, (size, 1) if d == 0 else (1, size)), (index,),
                          (("axis", 1 - d),))
    else:
        index = emit.tile(Op.RESHAPE, Type(dtypes.int32, tuple(size if k == d else 1 for k in range(len(shape)))),
                          (index,))
    t = Type(dtypes.int32, shape)
    spread = emit.tile(Op.BROADCAST, t, (index,))
    zero = emit.tile(Op.CONST, t, (), (("value", 0),))
    return emit.tile(Op.ADD, t, (zero, spread))  # the broadcast fused into the Add


def _lane_offsets(emit: _Emitter, shape, strides: dict) -> Value:
    """The int32 tile ``sum_d i_d * stride_d`` of a block access's lanes (relative to its offset)."""
    total = None
    for d in range(len(shape)):
        if d not in strides:
            continue
        index = _index(emit, shape, d)
        if not _zero(strides[d] - ONE):
            index = emit.tile(Op.MUL, index.type, (index, emit.sym(strides[d], dtypes.int32)))
        total = index if total is None else emit.tile(Op.ADD, index.type, (total, index))
    return total


class _Flat:
    """Reshapes between a 2-D access and the 1-D one that runs it (nothing for a 1-D access)."""

    def __init__(self, analysis: _Analysis, emit: _Emitter, shape):
        self.analysis, self.emit, self.shape = analysis, emit, shape
        self.flat = (math.prod(shape),)

    def value(self, like: Value) -> Value:
        if len(self.shape) == 1:
            return like
        return _value(self.analysis, like.type.with_shape(self.flat))

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
    inner = 0 if rank == 2 and equal(shape[1], 1) else rank - 1  # the elements of an [M, 1] column are its rows
    strided = shape[inner] > 1 and not _zero(strides[inner] - ONE)
    if strided and any(not ids and c < 0 for ids, c in _coefficients(strides[inner])):
        raise NotAffine("the innermost stride is negative")
    emit = _Emitter(analysis, instr.loc)
    offset = emit.sym(a.offset)
    bounds, selects = _split(analysis, mask, shape) if mask is not None else ({}, [])
    if selects and is_load and not strided and rank <= 2 and (rank == 1 or shape[1] > 1):
        return _spans(analysis, emit, instr, base, offset, strides, bounds, selects)
    if selects:  # lanes masked by other bool tiles: each true lane copied alone
        return _per_lane(analysis, emit, instr, base, offset, _lane_offsets(emit, shape, strides))
    outer = [emit.sym(strides.get(d, ZERO)) for d in range(rank if strided else rank - 1)]
    extents = _extents(emit, bounds, shape)
    # an [M, 1] column masked along its one column: no rows
    if rank == 2 and equal(shape[1], 1) and extents[1] is not emit.const(1):
        extents = [emit.new(Op.MUL, dtypes.int32, (extents[0], extents[1])), emit.const(1)]
    operands = (base, offset, *outer, *extents)
    store = Op.STRIDED_STORE if strided else Op.BLOCK_STORE
    if instr.op in ATOMIC_STORES:
        attrs = (("shape", shape), ("atomic", instr.op.value))
        return emit.out + [Instr(store, (), operands + (value,), attrs, (), instr.loc)]
    if is_load:
        attrs = (("shape", shape), ("has_other", other is not None))
        block = Instr(Op.STRIDED_LOAD if strided else Op.BLOCK_LOAD, instr.results,
                      operands + ((other,) if other is not None else ()), attrs, (), instr.loc)
    else:
        block = Instr(store, (), operands + (value,), (("shape", shape),), (), instr.loc)
    return emit.out + [block]


def _single(analysis: _Analysis, instr: Instr) -> list[Instr]:
    """A single-element access. A load stays a scalar ``load``, of ``base + offset`` (the backend
    reads it on the scalar unit); a store (or an unread atomic) becomes a one-element ``block_store``
    of the value broadcast to a ``(1,)`` tile, of extent 0 where its scalar mask is false."""
    ptr = instr.operands[0]
    base = _root(analysis, ptr)
    emit = _Emitter(analysis, instr.loc)
    offset = emit.sym(analysis.affine(ptr).offset)
    if instr.op is Op.LOAD:
        address = emit.new(Op.PTR_ADD, ptr.type.dtype, (base, offset))
        return emit.out + [Instr(Op.LOAD, instr.results, (address, *instr.operands[1:]), instr.attrs, (), instr.loc)]
    value = instr.operands[1]
    tile = Value(analysis.next_id, Type(value.type.dtype, (1,)))
    analysis.next_id += 1
    emit.out.append(Instr(Op.BROADCAST, (tile,), (value,), (), (), instr.loc))
    extent = emit.const(1)
    if instr.attr("has_mask"):
        extent = emit.new(Op.CAST, dtypes.int32, (instr.operands[2],), (("dtype", dtypes.int32),))
    attrs = (("shape", (1,)),) + ((("atomic", instr.op.value),) if instr.op in ATOMIC_STORES else ())
    return emit.out + [Instr(Op.BLOCK_STORE, (), (base, offset, extent, tile), attrs, (), instr.loc)]


def _rewrite(analysis: _Analysis, block: Block) -> Block:
    body: list[Instr] = []
    for instr in block.body:
        if instr.op in (Op.LOAD, Op.STORE) or instr.op in ATOMIC_STORES and instr.result.id not in analysis.used:
            try:
                body += _lower(analysis, instr)
            except NotAffine as e:
                what = {Op.LOAD: "load", Op.STORE: "store"}.get(instr.op, f"`tl.{instr.op.value}`")
                raise CompilationError(
                    instr.loc, f"this {what} cannot be copied as blocks: {e.why}",
                    hint="Ascend C copies rectangular blocks (DataCopy/DataCopyPad): address memory as "
                         "pointer + scalar offset + arange terms times scalar strides (or load through "
                         "pointer + an int32 tile of indices) and mask with any bool tile; the interpreter "
                         "still runs this kernel") from None
            continue
        if instr.regions:
            instr = instr.map_regions(lambda r: _rewrite(analysis, r))
        body.append(instr)
    return Block(block.args, tuple(body))


def block_accesses(kernel: Kernel, platform=None) -> Kernel:
    """Rewrite every ``load``/``store`` as a block access (see the module docstring)."""
    return kernel.with_body(_rewrite(_Analysis(kernel), kernel.body))
