"""The handlers of memory ops: loads, stores (a store may compute its value into memory), block, strided,
gather and span accesses, and atomics, each checked against the buffers it may reach."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import affine, numerics
from ..affine import Affine, Conj, Loaded, lift
from ..errors import OutOfBoundsError, PoisonError
from ..ir.core import Instr, Op
from .compute import elementwise
from .races import check, check_view, stamp, stamp_view
from .state import HALF, SHIFT, Programs
from .values import Array, result, whole


class _Deferred:
    """The result of an instruction that its one user, a store, may compute into memory."""

    __slots__ = ("instr", "args")

    def __init__(self, instr: Instr, args: tuple):
        self.instr, self.args = instr, args


def defer(P: "Programs", instr: Instr, *args) -> tuple[_Deferred]:
    return (_Deferred(instr, args),)


def _groups(P: Programs, instr: Instr, addr: Array,
            mask: Array | None) -> list[tuple[int, Array, Array | None]]:
    """Split the lanes of an access by the buffer they address: ``[(buffer, offsets, mask)]``.

    Offsets of masked lanes are replaced by a valid one. Raises OutOfBoundsError if an enabled
    lane is outside every buffer."""
    fill = None
    if mask is not None:
        first = int(mask.argmax())
        if not mask.flat[first]:
            return []
        fill = addr.flat[first]
        addr = np.where(mask, addr, fill)
    root = P.memory.roots.get(id(instr))
    if root is not None:  # int64 arithmetic wraps, but base + offset - base is the offset again
        offsets = addr - (root << SHIFT) if root else addr
        size = P.memory.flats[root].size
        if offsets.size and (offsets.min() < 0 or offsets.max() >= size):
            bad = (offsets < 0) | (offsets >= size)
            raise _out_of_bounds(P, instr, bad, np.full(bad.shape, root), offsets)
        return [(root, offsets, mask)]
    lo, hi = int(addr.min()), int(addr.max())
    buffer = (lo + HALF) >> SHIFT
    base = buffer << SHIFT
    flats = P.memory.flats
    if 0 <= buffer < len(flats) and base <= lo and hi < base + flats[buffer].size:
        return [(buffer, addr - base if base else addr, mask)]
    buffers = np.clip((addr + HALF) >> SHIFT, 0, len(flats) - 1)
    offsets = addr - (buffers << SHIFT)
    bad = (offsets < 0) | (offsets >= P.memory.sizes()[buffers])
    if mask is not None:
        bad &= mask
    if bad.any():
        raise _out_of_bounds(P, instr, bad, buffers, offsets)
    return [g for k in np.unique(buffers) for g in
            _groups(P, instr, addr, (buffers == k) if mask is None else (buffers == k) & mask)]


def _out_of_bounds(P: Programs, instr: Instr, bad: Array, buffers: Array,
                   offsets: Array) -> OutOfBoundsError:
    lane = int(bad.argmax())
    program = lane // (bad.size // bad.shape[0])
    k = int(buffers.flat[lane])
    name, size = P.memory.names[k], P.memory.flats[k].size
    kind = "load from" if instr.op in (Op.LOAD, Op.BLOCK_LOAD, Op.STRIDED_LOAD, Op.GATHER_LOAD) else "store to"
    return OutOfBoundsError(
        instr.loc,
        f"{kind} {name} out of bounds: program {P.program(program)} accesses element "
        f"{int(offsets.flat[lane])} of an array of {size} elements",
        hint="mask the access (e.g. mask=offsets < n) or fix the offset arithmetic")


def load(P: Programs, instr: Instr, ptr, mask=None, other=None) -> tuple[Array]:
    shape, dt = instr.result.type.shape, result(instr)
    fill = numerics.poison(dt) if other is None else lift(affine.dense(other), len(shape))
    if isinstance(ptr, Affine):
        access = _plan(P, instr, ptr, mask, fill.shape[0] if fill.ndim else 1, store=False)
        if access is False:
            return (np.broadcast_to(fill, (fill.shape[:1] if fill.ndim else (1,)) + shape),)
        if access is not None:
            share = P.memory.roots.get(id(instr)) in P.memory.constant
            lazy = affine.loaded(access, dt, fill) if share and id(instr) in P.prepared.lazy else None
            return (access.gather(fill, dt, share) if lazy is None else lazy,)
    ptr = whole(ptr, shape)
    mask = P.lanes(None if mask is None else affine.dense(mask), len(shape))
    if mask is not None:
        ptr, mask = np.broadcast_arrays(ptr, mask)
    out = None
    for buffer, offsets, lanes in _groups(P, instr, ptr, mask):
        check(P, instr, buffer, offsets, lanes)
        values = np.take(P.memory.flats[buffer], offsets)
        out = values if lanes is None else np.where(lanes, values, fill if out is None else out)
    if out is None:
        out = np.broadcast_to(fill, ptr.shape)
    return (out.astype(dt, copy=False),)


def store(P: Programs, instr: Instr, ptr, value, mask=None) -> tuple[()]:
    shape = ptr.shape if isinstance(ptr, Affine) else tuple(instr.attr("shape", instr.operands[0].type.shape))
    rank = len(shape)
    if P.prepared.poison:
        value = _resolved(P, value)
        _check_poison(P, instr, lift(affine.dense(value), rank), mask, rank)
    deferred = value if isinstance(value, _Deferred) else None
    if deferred is not None and isinstance(ptr, Affine) and _store_computed(P, instr, ptr, mask, deferred):
        return ()
    if deferred is not None:
        value = _resolved(P, deferred)
    value = value if type(value) is Loaded else lift(affine.dense(value), rank)
    if isinstance(ptr, Affine):
        access = _plan(P, instr, ptr, mask, value.shape[0], store=True)
        if access is False:
            return ()
        if access is not None:  # the lanes are distinct: the order of the writes does not matter
            if access.pieces is not None and type(value) is Loaded:
                access.compute([(None, [value])])  # from memory to memory
            else:
                value = affine.dense(value)
                access.scatter(value if access.programs >= value.shape[0] else value[-1:])  # the last program wins
            return ()
    value = affine.dense(value)
    ptr = whole(ptr, shape)
    mask = P.lanes(None if mask is None else affine.dense(mask), rank)
    if mask is not None:
        ptr, value, mask = np.broadcast_arrays(ptr, value, mask)
    elif ptr.shape != value.shape:
        ptr, value = np.broadcast_arrays(ptr, value)
    if P.order is not None and ptr.shape[0] > 1:  # the last write to an address is the last to run
        ptr, value, mask = ptr[P.order], value[P.order], None if mask is None else mask[P.order]
    for buffer, offsets, lanes in _groups(P, instr, ptr, mask):
        flat = P.memory.flats[buffer]
        selected = (offsets, value) if lanes is None else (offsets[lanes], value[lanes])
        _scatter(flat, *(a.reshape(-1) for a in selected))
        stamp(P, instr, buffer, offsets, lanes, _scatter)
    return ()


def _check_poison(P: Programs, instr: Instr, value, mask, rank: int) -> None:
    """Checking mode: a store whose enabled lanes hold the poison of a masked load without ``other``
    (float all-ones bits: a NaN that float arithmetic carries on, and that no float operation makes
    of ordinary operands) is an error at the store."""
    value = affine.dense(value)
    if value.dtype.kind != "f" and value.dtype not in numerics.NARROW:
        return
    bits = value.view(f"u{value.itemsize}")
    bad = bits == np.iinfo(bits.dtype).max
    lanes = P.lanes(None if mask is None else affine.dense(mask), rank)
    if lanes is not None:
        bad, lanes = np.broadcast_arrays(bad, lanes)
        bad = bad & lanes
    if bad.any():
        lane = np.unravel_index(int(bad.argmax()), bad.shape)
        raise PoisonError(instr.loc, f"the store writes a value computed from a masked-off lane of a "
                          f"tl.load without `other` (program {P.program(int(lane[0]))}, lane "
                          f"{tuple(int(i) for i in lane[1:])}): debug mode leaves those lanes undefined",
                          hint="pass other=... to the load (e.g. other=0.0), or mask the store")


def _resolved(P: Programs, x):
    """A value, deferred ones computed (their deferred operands first, each op after the first into
    the new array the one before made, as a chain of dying tiles would be)."""
    if type(x) is not _Deferred:
        return x
    args = [_resolved(P, a) for a in x.args]
    made = [r for a, r in zip(x.args, args) if type(a) is _Deferred and type(r) is np.ndarray and r.base is None
            and r.dtype == numerics.F32 and r.flags.writeable and all(r is not b for b in a.args)]
    P.spare = made[0] if made else None
    try:
        (value,) = elementwise(P, x.instr, *args)
    finally:
        P.spare = None
    return value


def _store_computed(P: Programs, instr: Instr, ptr: Affine, mask, deferred: _Deferred) -> bool:
    """Compute a deferred ``+ - * /``, min or max of float32 tiles into the memory a store writes, when
    the store's lanes are one strided box of every program or a few strided pieces; whether it did.
    A chain of them (``(a - b) * c``; the memory is float32 then, as the chain's last result: a store
    of another dtype has a cast before it) is computed there op by op, strip by strip
    (:meth:`ascdsl.affine.Access.compute`), each op reading the one before's result where it wrote it,
    so each op rounds to float32 as it would into a tile. The chain needs the lazily loaded tiles its
    inner ops read to come through the same pieces as the store (as tiles they are read where they
    are); else only the last op is."""
    chain = [deferred]
    while (inner := next((x for x in chain[-1].args if type(x) is _Deferred), None)) is not None:
        chain.append(inner)
    rank, operands = len(ptr.shape), []
    for link in chain:
        xs = [x if type(x) in (Loaded, _Deferred) else affine.dense(x) for x in link.args]
        if result(link.instr) != numerics.F32 or any(
                type(x) is not _Deferred and (type(x) not in (np.ndarray, Loaded) or x.dtype != numerics.F32)
                for x in xs):
            return False
        operands.append([None if type(x) is _Deferred else x if type(x) is Loaded else lift(x, rank) for x in xs])
    lead = max(x.shape[0] for xs in operands for x in xs if x is not None)
    access = _plan(P, instr, ptr, mask, lead, store=True)
    if access is False:
        return True
    if access is None or (access.view is None and access.pieces is None) or access.programs < lead:
        return False
    if len(chain) > 1 and any(type(x) is Loaded and not x.access.same_pieces(access)
                              for xs in operands[1:] for x in xs):
        chain, operands = chain[:1], [[lift(affine.dense(_resolved(P, d)), rank) if x is None else x
                                       for x, d in zip(operands[0], deferred.args)]]  # (they read it where it is)
    access.compute([(numerics.NP_FOR_OP[link.instr.op], xs) for link, xs in zip(chain[::-1], operands[::-1])])
    return True


def _plan(P: Programs, instr: Instr, ptr: Affine, mask, lead: int, store: bool) -> affine.Access | None | bool:
    """The strided access of a memory op through an affine pointer (see :func:`ascdsl.affine.plan`)."""
    rank = len(ptr.shape)
    active = () if P.active is None else (lift(P.active, rank),)
    if isinstance(mask, Conj):  # the loads and stores of a tile often share its mask
        if mask.parts is None or mask.parts[0] is not P.active:
            mask.parts = (P.active, affine.mask_parts(mask.factors + active, ptr.shape))
        factors, parts = mask.factors + active, mask.parts[1]
    else:
        factors = active if mask is None else (lift(mask, rank),) + active
        parts = affine.mask_parts(factors, ptr.shape)
    memory, root = P.memory, P.memory.roots.get(id(instr))
    checked = bool(memory.stamps) and (root is None or root in memory.stamps) and (
        not store or id(instr) in P.prepared.stamping)
    if parts is None or (checked and root is None):
        return None

    def buffer(address: int) -> tuple[Array | None, int]:
        k = (address + HALF) >> SHIFT if root is None else root
        return (memory.flats[k], k << SHIFT) if 0 <= k < len(memory.flats) else (None, 0)
    programs = max([ptr.programs, lead] + [f.shape[0] for f in factors])
    access = affine.plan(ptr, *parts, programs, buffer, store, P.plans)
    if checked and access not in (None, False) and access.view is None:
        return None  # a buffer checked for races (.races): by one strided view of it, or by address
    if checked and access:
        (stamp_view if store else check_view)(P, instr, root, access)
    return access


ATOMIC_COMBINE = {Op.ATOMIC_ADD: Op.ADD, Op.ATOMIC_MAX: Op.MAXIMUM, Op.ATOMIC_MIN: Op.MINIMUM,
                  Op.ATOMIC_AND: Op.AND, Op.ATOMIC_OR: Op.OR, Op.ATOMIC_XOR: Op.XOR}


def atomic(P: Programs, instr: Instr, ptr: Array, *rest: Array) -> tuple[Array]:
    cas = instr.op is Op.ATOMIC_CAS
    mask = rest[1] if not cas and instr.attr("has_mask") else None
    return (_read_modify_write(P, instr, instr.op, result(instr), ptr, rest[:2] if cas else rest[:1], mask),)


def _read_modify_write(P: Programs, instr: Instr, op: Op, dt: np.dtype, ptr: Array, operands: Sequence[Array],
                       mask: Array | None) -> Array:
    """Atomic ``op``, lane by lane in order (program order, then lane order) where lanes share an
    address: the k-th access to every address is applied in step k, all addresses at once. Returns
    the old values."""
    cas = op is Op.ATOMIC_CAS
    rank = ptr.ndim - 1
    mask = P.lanes(mask, rank)
    ptr = np.broadcast_to(ptr, (P.n, *ptr.shape[1:]))  # every program accesses, the same addresses or not
    ptr, *operands = np.broadcast_arrays(ptr, *(lift(x, rank) for x in operands))
    if mask is not None:
        ptr, mask, *operands = np.broadcast_arrays(ptr, mask, *operands)
    out = np.broadcast_to(numerics.poison(dt), ptr.shape).copy()
    for buffer, offsets, lanes in _groups(P, instr, ptr, mask):
        flat = P.memory.flats[buffer]
        pick = (lambda a: a.reshape(-1)) if lanes is None else (lambda a: a[lanes])
        where, args = pick(offsets), [pick(x) for x in operands]
        order = np.argsort(where, kind="stable")
        first = np.r_[True, where[order][1:] != where[order][:-1]]
        rank_of = np.arange(where.size) - np.maximum.accumulate(np.where(first, np.arange(where.size), 0))
        old = np.empty(where.size, dt)
        for k in range(int(rank_of.max()) + 1 if where.size else 0):
            lane = order[rank_of == k]
            at, current = where[lane], flat[where[lane]]
            old[lane] = current
            if cas:
                new = np.where(current == args[0][lane], args[1][lane], current)
            elif op is Op.ATOMIC_XCHG:
                new = args[0][lane]
            else:
                new = numerics.elementwise(ATOMIC_COMBINE[op], [current, args[0][lane]], dt)
            flat[at] = new
        if lanes is None:
            out = old.reshape(ptr.shape)
        else:
            out[lanes] = old
    return out


def _increasing(flat_offsets: Array) -> bool:
    return flat_offsets.size < 2 or bool((flat_offsets[1:] > flat_offsets[:-1]).all())


def _scatter(flat: Array, offsets: Array, values: Array) -> None:
    """``flat[offsets] = values`` where, for repeated offsets, the last value wins."""
    if not _increasing(offsets):
        order = np.argsort(offsets, kind="stable")
        offsets, values = offsets[order], values[order]
        last = np.append(offsets[1:] != offsets[:-1], True)
        offsets, values = offsets[last], values[last]
    if offsets.size and offsets[-1] - offsets[0] == offsets.size - 1:  # increasing and contiguous
        flat[offsets[0]:offsets[-1] + 1] = values
    else:
        flat[offsets] = values


def _block_access(instr: Instr, base: Array, offset: Array, rest: Sequence[Array]) -> tuple[Affine, Conj | None]:
    """The pointer and mask of a block access: ``base + offset + sum(i_d * stride_d)`` over the
    block, enabled where ``i_d < extent_d`` in every dim (None when no extent cuts the block)."""
    shape = tuple(instr.attr("shape"))
    rank = len(shape)
    n = rank if instr.op in (Op.STRIDED_LOAD, Op.STRIDED_STORE) else rank - 1  # strides given (else the last is 1)
    strides, extents = list(rest[:n]) + [np.ones(1, np.int64)] * (rank - n), rest[n:n + rank]
    start = (base + offset.astype(np.int64)).astype(np.int64, copy=False)
    ptr = Affine(affine.term(start), tuple(affine.term(s.astype(np.int64)) for s in strides), numerics.POINTER, shape)
    cuts = tuple(affine.index(d, shape) < lift(extent.astype(np.int64), rank)
                 for d, (size, extent) in enumerate(zip(shape, extents))
                 if extent.shape[0] > 1 or int(extent[0]) < size)
    return ptr, Conj(cuts) if cuts else None


def block_load(P: Programs, instr: Instr, base: Array, offset: Array, *rest: Array) -> tuple[Array]:
    rank = len(instr.attr("shape"))
    ptr, mask = _block_access(instr, base, offset, rest)
    other = rest[2 * rank - 1] if instr.attr("has_other") else None
    return load(P, instr, ptr, mask, other)


def strided_load(P: Programs, instr: Instr, base: Array, offset: Array, *rest: Array) -> tuple[Array]:
    rank = len(instr.attr("shape"))
    ptr, mask = _block_access(instr, base, offset, rest)
    return load(P, instr, ptr, mask, rest[2 * rank] if instr.attr("has_other") else None)


def _indexed(instr: Instr, base: Array, offset: Array, index: Array, extent: Array,
             lanes: tuple) -> tuple[Array, Array | None]:
    """The addresses and mask of a gather or scatter: ``base + offset + index[i]`` for ``i < extent``
    (and, with a lane mask, where it is nonzero)."""
    size = instr.attr("shape")[0]
    index, extent = affine.dense(index), affine.dense(extent)
    addr = lift(base + offset.astype(np.int64), 1) + index.astype(np.int64)
    mask = np.arange(size) < lift(extent.astype(np.int64), 1) if (extent < size).any() else None
    if instr.attr("has_mask"):
        on = affine.dense(lanes[0]) != 0
        mask = on if mask is None else mask & on
    if mask is not None:
        addr, mask = np.broadcast_arrays(addr, mask)
    return addr, mask


def gather_load(P: Programs, instr: Instr, base: Array, offset: Array, index: Array, extent: Array,
                 *rest: Array) -> tuple[Array]:
    lanes, other = (rest[:1], rest[1:]) if instr.attr("has_mask") else ((), rest)
    addr, mask = _indexed(instr, base, offset, index, extent, lanes)
    return load(P, instr, addr, mask, other[0] if other else None)


def scatter_store(P: Programs, instr: Instr, base: Array, offset: Array, index: Array, extent: Array,
                   *rest: Array) -> tuple[()]:
    addr, mask = _indexed(instr, base, offset, index, extent, rest[:-1])
    return _write(P, instr, addr, rest[-1], mask)


def span_load(P: Programs, instr: Instr, base: Array, offset: Array, *rest: Array) -> tuple[Array]:
    """The lanes ``lo[r] <= c < hi[r]`` of each row ``r`` (the others undefined)."""
    shape = instr.attr("shape")
    lo, hi = (lift(affine.dense(x).astype(np.int64), 1)[..., None] if len(shape) == 2 else
              lift(affine.dense(x).astype(np.int64), 1) for x in rest[-2:])  # (programs, rows, 1) / (programs, 1)
    cols = np.arange(shape[-1])
    addr = lift(base + offset.astype(np.int64), len(shape)) + cols
    if len(shape) == 2:
        addr = addr + np.arange(shape[0])[:, None] * lift(affine.dense(rest[0]).astype(np.int64), 2)
    addr, mask = np.broadcast_arrays(addr, (cols >= lo) & (cols < hi))
    return load(P, instr, addr, mask)


def block_store(P: Programs, instr: Instr, base: Array, offset: Array, *rest: Array) -> tuple[()]:
    ptr, mask = _block_access(instr, base, offset, rest[:-1])
    return _write(P, instr, ptr, rest[-1], mask)


def _write(P: Programs, instr: Instr, ptr, value, mask) -> tuple[()]:
    """A store, or an atomic whose old values nobody reads (``atomic`` attribute)."""
    atomic = instr.attr("atomic")
    if atomic is None:
        return store(P, instr, ptr, value, mask)
    shape = tuple(instr.attr("shape"))
    dense = None if mask is None else affine.dense(mask)
    _read_modify_write(P, instr, Op(atomic), numerics.np_dtype(instr.operands[-1].type.dtype), whole(ptr, shape),
                       (lift(affine.dense(value), len(shape)),), dense)
    return ()
