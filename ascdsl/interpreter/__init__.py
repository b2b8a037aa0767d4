"""The NumPy interpreter: the executable specification of the tile IR.

All program instances of a launch run together. Every runtime value carries a leading *program
axis*: an IR value of shape ``S`` is an array that broadcasts to ``(n, *S)``, where ``n`` is the number
of programs being run or 1 for values that are the same in every program (constants, ``arange``,
kernel scalars); its other axes are ``S``'s or 1 where the value does not vary (it is *compact*).
Index arithmetic and masks stay symbolic (:mod:`ascdsl.affine`), so that a load or store through
``base + rows * stride + cols`` is a strided copy. Large launches run in consecutive chunks of
programs, in program order, to bound memory. Control flow whose outcome differs by program runs
under a per-program *active* mask:

* a ``for`` loop runs for the largest trip count among active programs; a program's carried
  values only change on iterations it really executes;
* a ``while`` loop iterates until no active program's condition holds, each program's values
  changing only while its own condition does;
* an ``if`` on a per-program condition runs both regions, each under its programs, and merges the
  results with ``where``;
* a loop that carries no values, reads only buffers no lane writes and stores to distinct buffers
  runs its iterations at once, as copies of the programs (the writes of a store land in the loop's
  order; an error makes it run again iteration by iteration, so that it is the loop order's first,
  and what the batch stored for later iterations stays).

Memory ops touch memory only for active programs and unmasked lanes (a load from a buffer no lane
writes during the launch may return a read-only view of it). A pointer value is an int64
array of *addresses*: argument buffer ``k`` (its position in the argument list) starts at
``k << 40``, so a pointer selects its array and the element offset within it; offsets count
elements from the array's first element. A strided view is the span of memory from its lowest to
its highest element (kernels reach its elements through the strides they are passed, as on a
device). An access whose pointer derives from one parameter (:mod:`ascdsl.ir.provenance`) is
checked against that parameter's span whatever the offset.

Stores are applied one store op at a time, each for all programs of a chunk at once. When several
lanes store to the same address, the last one wins: in program order (linear program id, axis 0
fastest), then in lane order (row-major within the tile).

Numerics follow :mod:`ascdsl.numerics`; NumPy floating-point warnings are silenced, since inactive
programs and masked lanes routinely compute on garbage.
"""
from __future__ import annotations

import gc
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import affine, numerics
from .affine import Affine, Conj, Loaded, lift as _lift
from .dtypes import PointerType, float32
from .errors import (CompilationError, DeviceAssertionError, Error, InputTypeError, InputValueError, OutOfBoundsError,
                     PoisonError)
from .ir.core import Block, GroupOp, Instr, Kernel, Op, walk
from .ir.provenance import STORES, access_roots

SHIFT = 40  # address bits reserved for the element offset within one argument buffer
HALF = 1 << (SHIFT - 1)  # offsets in [-HALF, HALF) decode to the right buffer
CHUNK_ELEMENTS = 1 << 21  # programs per chunk * largest tile size: bounds the memory of a chunk (fewer
# chunks run the same instructions fewer times; elementwise ops computing into dying operands keep the
# memory a chunk touches small)
BATCH_CHUNKS = 1  # a batched loop's iterations run in groups of this many chunks' elements

Array = np.ndarray


def run(kernel: Kernel, args: Sequence[Any], grid: Sequence[int]) -> None:
    """Run ``kernel`` over ``grid`` (1 to 3 extents) on ``args``, given in ``kernel.param_names`` order.

    Pointer parameters take NumPy arrays (or strided views) of the pointee dtype (bfloat16 as
    ``ml_dtypes.bfloat16``), written in place; scalar parameters take Python or NumPy scalars.
    Raises :class:`ascdsl.OutOfBoundsError` for an unmasked access outside its array, and
    :class:`ascdsl.CompilationError` for a loop whose step is zero.
    """
    if not 1 <= len(grid) <= 3 or any(int(g) < 0 for g in grid):
        raise InputValueError(f"the grid must be 1 to 3 non-negative extents, got {tuple(grid)}")
    grid = tuple(int(g) for g in grid) + (1,) * (3 - len(grid))
    if len(args) != len(kernel.params):
        raise InputValueError(f"kernel {kernel.name} takes {len(kernel.params)} arguments "
                              f"({', '.join(kernel.param_names)}), got {len(args)}")
    memory = _Memory()
    values = [memory.bind(name, p.type.dtype, a) if isinstance(p.type.dtype, PointerType)
              else np.array([a]).astype(numerics.np_dtype(p.type.dtype))
              for name, p, a in zip(kernel.param_names, kernel.params, args)]
    programs = grid[0] * grid[1] * grid[2]
    prepared = _prepare(kernel)
    memory.roots = prepared.roots
    memory.share(prepared.written)
    chunk = max(1, CHUNK_ELEMENTS // prepared.largest)
    collecting = gc.isenabled()
    gc.disable()  # a launch makes many short-lived, acyclic objects: reference counts free them
    try:
        with np.errstate(all="ignore"):
            for start in range(0, programs, chunk):
                chunk_programs = _Programs(memory, grid, prepared, start, min(start + chunk, programs))
                chunk_programs.run_block(kernel.body, values)
    finally:
        if collecting:
            gc.enable()


Step = tuple[Callable[..., Sequence[Array]], Instr, list[int], list[int], list[int], tuple | None, tuple[int, ...]]


@dataclass(frozen=True)
class _Batch:
    """A ``for`` loop whose iterations may run at once, as copies of the programs (:func:`_for`): it
    carries no values and prints, asserts or runs atomics nowhere; ``loads`` are the buffers it
    reads, which must be constant, and ``stores`` those of each of its stores (distinct buffers)."""

    free: tuple[int, ...]  # the ids of the values from outside that its body uses
    loads: frozenset[int]
    stores: tuple[frozenset[int], ...]
    largest: int  # elements of the largest tile in its body


@dataclass(frozen=True)
class _Prepared:
    """What a launch of a kernel needs besides its arguments, computed once per kernel object."""

    largest: int  # elements of the largest tile
    schedule: dict[int, list[Step]]
    leaves: dict[int, Array | Affine]  # uniform leaves by value id
    roots: dict[int, int]  # memory op id -> its one buffer
    written: frozenset[int] | None  # buffers the kernel may write (None: any, as atomics do)
    batches: dict[int, _Batch]  # by for-loop id
    lazy: frozenset[int]  # the loads whose tiles may stay in memory (:func:`_lazy_loads`)
    accumulators: tuple[frozenset[int], frozenset[int]]  # (adds, sums): :func:`_accumulators`
    poison: bool = False  # checking mode: a store of a poisoned float lane is an error (Kernel.poison)


_prepared: dict[int, tuple[Kernel, _Prepared]] = {}


def _prepare(kernel: Kernel) -> _Prepared:
    hit = _prepared.get(id(kernel))
    if hit is not None and hit[0] is kernel:
        return hit[1]
    leaves = {i.result.id: UNIFORM_LEAVES[i.op](i) for i in walk(kernel.body) if i.op in UNIFORM_LEAVES}
    for leaf in leaves.values():
        if isinstance(leaf, Array):
            leaf.flags.writeable = False  # shared by every launch
    roots, ops = access_roots(kernel), {id(i): i.op for i in walk(kernel.body)}
    atomics = any(op in GroupOp.ATOMIC for op in ops.values())
    written = None if atomics else frozenset().union(*(r for i, r in roots.items() if ops[i] in STORES))
    batches = {id(i): b for i in walk(kernel.body) if i.op is Op.FOR and (b := _batch(i, roots)) is not None}
    prepared = _Prepared(_largest(kernel.body), _schedule(kernel.body, {}), leaves,
                         {i: next(iter(r)) for i, r in roots.items() if len(r) == 1}, written, batches,
                         _lazy_loads(kernel.body), _accumulators(kernel.body), kernel.poison)
    if len(_prepared) >= 256:
        _prepared.clear()
    _prepared[id(kernel)] = (kernel, prepared)
    return prepared


def _largest(block: Block) -> int:
    """Elements of the largest tile ``block`` (or a block nested in it) defines or uses."""
    return max([1] + [v.type.numel for i in walk(block) for v in (*i.results, *i.operands)])


LAZY_USERS = GroupOp.ELEMENTWISE | frozenset({Op.SUM, Op.MAX, Op.MIN, Op.STORE})
"""Ops whose handlers take a :class:`ascdsl.affine.Loaded` tile (the others would need its elements)."""


def _lazy_loads(block: Block, into: set[int] | None = None) -> frozenset[int]:
    """The ids of the loads (in ``block`` and the blocks nested in it) whose result only instructions
    of its own block use, all of them :data:`LAZY_USERS` (as the value a store writes, for stores)."""
    into = set() if into is None else into
    users: dict[int, list[tuple[Instr, int]]] = {}
    for instr in block.body:
        for k, v in enumerate(instr.operands):
            users.setdefault(v.id, []).append((instr, k))
        for region in instr.regions:
            _lazy_loads(region, into)
            for inner in walk(region):
                for v in inner.operands:
                    users.setdefault(v.id, []).append((inner, -1))  # used in a nested block
    for instr in block.body:
        if instr.op in (Op.LOAD, Op.BLOCK_LOAD) and all(
                user.op in LAZY_USERS and k >= 0 and (user.op is not Op.STORE or k == 1)
                for user, k in users.get(instr.result.id, ())):
            into.add(id(instr))
    return frozenset(into)


def _accumulators(body: Block) -> tuple[frozenset[int], frozenset[int]]:
    """The float32 sums that a ``for`` loop accumulates from +0.0 and only ``tl.sum`` reads
    (``acc = tl.zeros(...)``, ``acc += x`` in the loop, ``tl.sum(acc)`` after it): the ids of those
    ``acc + x`` and of the sums.

    While ``acc`` is +0.0 in every lane, ``acc + x`` may be ``x`` itself (no pass over the tile): the
    two differ only where ``x`` is -0.0 (``+0.0 + -0.0`` is +0.0), and adding more terms keeps them
    apart only where every term is -0.0. The spec's lanes, +0.0 plus terms, are never -0.0, so neither
    is their sum; the sum of these lanes is the same, or -0.0 where the spec's is +0.0, whatever the
    order of the additions (adding a zero to a nonzero or a NaN changes nothing, and two zeros give
    -0.0 only when both are -0.0, rounding to nearest): the sums add +0.0 to their result (whether
    NumPy's sum starts from +0.0 or from the first term)."""
    uses: dict[int, list[Instr]] = {}
    made: dict[int, Instr] = {}
    for instr in walk(body):
        for v in instr.operands:
            uses.setdefault(v.id, []).append(instr)
        made.update((v.id, instr) for v in instr.results)
    only = lambda value, instr: [id(i) for i in uses.get(value.id, ())] == [id(instr)]  # noqa: E731
    adds, sums = set(), set()
    for loop in walk(body):
        inner = loop.regions[0] if loop.op is Op.FOR else None
        if inner is None or not inner.body or inner.body[-1].op is not Op.YIELD:
            continue
        for init, arg, step, result in zip(loop.operands[3:], inner.args[1:], inner.body[-1].operands, loop.results):
            zero, readers = made.get(init.id), uses.get(result.id, [])
            add = next((i for i in inner.body if i.op is Op.ADD and i.results == (step,)), None)
            if zero is not None and zero.op is Op.CONST and zero.attr("value") == 0 \
                    and math.copysign(1.0, zero.attr("value")) > 0 and result.type.dtype == float32 \
                    and add is not None and arg in add.operands and only(arg, add) and only(step, inner.body[-1]) \
                    and readers and all(r.op is Op.SUM and r.result.type.dtype == float32 for r in readers):
                adds.add(id(add))
                sums.update(id(r) for r in readers)
    return frozenset(adds), frozenset(sums)


def _batch(loop: Instr, roots: dict[int, frozenset[int]]) -> _Batch | None:
    """What running the iterations of ``loop`` at once needs, or None when its body forbids it."""
    body = loop.regions[0]
    inner = list(walk(body))
    if len(loop.operands) > 3 or any(i.op in NOT_BATCHED or i.op in GroupOp.ATOMIC for i in inner):
        return None
    if any(i.op in STORES for loop_ in inner if loop_.op in LOOPS for region in loop_.regions for i in walk(region)):
        return None  # batched, an inner loop's stores would land in another order
    stores = tuple(roots[id(i)] for i in inner if i.op in STORES)
    if any(a & b for k, a in enumerate(stores) for b in stores[k + 1:]):
        return None
    defined = {v.id for i in inner for v in i.results} | {v.id for i in (loop, *inner) for r in i.regions
                                                          for v in r.args}
    free = tuple(dict.fromkeys(v.id for i in inner for v in i.operands if v.id not in defined))
    loads = frozenset().union(*(roots[id(i)] for i in inner if i.op in (Op.LOAD, Op.BLOCK_LOAD)))
    return _Batch(free, loads, stores, _largest(body))


def _schedule(block: Block, into: dict[int, list[Step]]) -> dict[int, list[Step]]:
    """For ``block`` and every nested block (keyed by ``id``): per instruction, its handler, operand
    ids, result ids, the ids of the block's own values (arguments and results) that are not used
    after it, the operand shapes for handlers that want whole tiles, and the positions of the operands
    an elementwise op may compute its result into (:func:`_donated`). A use inside a region counts as
    a use by the instruction that owns the region."""
    last = {v.id: 0 for v in block.args}
    for i, instr in enumerate(block.body):
        for region in instr.regions:
            _schedule(region, into)
        for user in (instr, *(inner for region in instr.regions for inner in walk(region))):
            last.update((v.id, i) for v in user.operands if v.id in last)
        last.update((v.id, i) for v in instr.results)
    dead: list[list[int]] = [[] for _ in block.body]
    for value_id, i in last.items():
        if block.body:
            dead[i].append(value_id)
    fused = _stored_directly(block)
    into[id(block)] = [(_defer if i in fused else HANDLERS[instr.op], instr, [v.id for v in instr.operands],
                        [v.id for v in instr.results], dead[i],
                        None if instr.op in COMPACT else tuple(v.type.shape for v in instr.operands),
                        () if i in fused or instr.op not in GroupOp.ELEMENTWISE else
                        tuple(k for k, v in enumerate(instr.operands) if v.id in dead[i]))
                       for i, instr in enumerate(block.body)]
    return into


DONATED_BYTES = 1 << 16
"""Dying operands at least this large may receive an elementwise op's result (:func:`_donated`)."""


def _donated(env: dict[int, Any], operands: list[int], args: list, donors: tuple[int, ...]) -> Array | None:
    """An operand that dies at this instruction and that nothing else refers to (its reference count:
    no view, no other value, no deferred store holds it), removed from ``env``: a C-contiguous float32
    array the op may overwrite with its result, as NumPy does with temporaries in ``a * b + c``."""
    for k in donors:
        x = args[k]
        if type(x) is np.ndarray and x.dtype == numerics.F32 and x.base is None and x.nbytes >= DONATED_BYTES \
                and x.flags.writeable and x.flags.c_contiguous and env.pop(operands[k], None) is not None:
            if sys.getrefcount(x) == 2 + operands.count(operands[k]):  # args and this frame (x, the call)
                return x
    return None


FUSED = frozenset({Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.MAXIMUM, Op.MINIMUM})
"""Ops whose result a store may compute in place (NumPy gives their exact IEEE result whatever the
layout of the output)."""
PURE = GroupOp.ELEMENTWISE | GroupOp.LEAF | GroupOp.SHAPE


def _stored_directly(block: Block) -> set[int]:
    """The indices of instructions of ``block`` whose one use is a store later in the block with
    only arithmetic between them: their result can be computed into the stored memory."""
    uses: dict[int, int] = {}
    for instr in walk(block):
        for v in instr.operands:
            uses[v.id] = uses.get(v.id, 0) + 1
    made = {instr.result.id: i for i, instr in enumerate(block.body) if len(instr.results) == 1}
    fused = set()
    for j, store in enumerate(block.body):
        if store.op is not Op.STORE:
            continue
        value = store.operands[1].id
        while value is not None:  # and down a chain of such ops, each the one use of the next
            i = made.get(value)
            if i is None or block.body[i].op not in FUSED or uses[value] != 1 or not all(
                    between.op in PURE for between in block.body[i + 1:j]):
                break
            fused.add(i)
            value = next((v.id for v in block.body[i].operands if v.id in made), None)
    return fused


class _Deferred:
    """The result of an instruction that its one user, a store, may compute into memory."""

    __slots__ = ("instr", "args")

    def __init__(self, instr: Instr, args: tuple):
        self.instr, self.args = instr, args


def _defer(P: "_Programs", instr: Instr, *args) -> tuple[_Deferred]:
    return (_Deferred(instr, args),)


def _span(array: Array) -> tuple[Array, int]:
    """A writable 1-D view of the memory a pointer argument reaches, and the index of the array's
    first element there: the whole allocation of a view of a C-contiguous array (as on a device,
    a view's pointer reaches its base), else the span from its lowest to its highest element."""
    root = array
    while isinstance(root.base, np.ndarray):
        root = root.base
    item = array.itemsize
    if root is not array and root.flags.c_contiguous and root.nbytes % item == 0:
        start = array.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        if start % item == 0:
            return root.reshape(-1).view(array.dtype), start // item
    if array.flags.c_contiguous:
        return array.reshape(-1), 0
    if array.size == 0 or any(s % item for s in array.strides):
        raise InputValueError("strided arguments need strides that are whole elements")
    # the element at the lowest address: index -1 along axes with negative strides, 0 elsewhere
    lowest = array[tuple(slice(-1, None) if s < 0 else slice(0, 1) for s in array.strides)]
    steps = [(n - 1) * s // item for n, s in zip(array.shape, array.strides)]
    length = 1 + sum(abs(k) for k in steps)
    flat = np.lib.stride_tricks.as_strided(lowest, shape=(length,), strides=(item,))
    return flat, -sum(k for k in steps if k < 0)


class _Memory:
    """The argument buffers, flattened, with their parameter names."""

    def __init__(self) -> None:
        self.flats: list[Array] = []
        self.names: list[str] = []
        self.roots: dict[int, int] = {}  # memory op id -> its one buffer (ir.provenance)
        self.constant: frozenset[int] = frozenset()  # buffers no lane writes during the launch

    def bind(self, name: str, ptr: PointerType, array: Any) -> Array:
        """Register ``array`` as the buffer of pointer parameter ``name``; return its base address."""
        if not isinstance(array, np.ndarray):
            raise InputTypeError(f"argument {name} must be a NumPy array, got {type(array).__name__}")
        if array.dtype != ptr.element_ty.np:
            raise InputTypeError(f"argument {name} has dtype {array.dtype}, the kernel was "
                                 f"specialised for {ptr.element_ty}")
        flat, first = _span(array)
        self.flats.append(flat)
        self.names.append(name)
        return np.array([((len(self.flats) - 1) << SHIFT) + first], dtype=numerics.POINTER)

    def share(self, written: frozenset[int] | None) -> None:
        """Note which buffers stay constant during the launch: none of the ``written`` buffers (None:
        every buffer may be written) may overlap them in memory. Loads from them may return views."""
        if written is None:
            return
        others = [self.flats[j] for j in written]
        self.constant = frozenset(k for k, flat in enumerate(self.flats) if k not in written
                                  and not any(np.may_share_memory(flat, w) for w in others))

    def independent(self, batch: _Batch) -> bool:
        """Whether the iterations of a batchable loop are independent on these buffers: it reads
        constant buffers only and its stores write buffers that do not overlap in memory."""
        stores = [self.flats[k] for ks in batch.stores for k in ks]
        return batch.loads <= self.constant and not any(
            np.may_share_memory(a, b) for i, a in enumerate(stores) for b in stores[i + 1:])

    def sizes(self) -> Array:
        return np.array([f.size for f in self.flats], dtype=np.int64)


def _whole(x, shape: tuple[int, ...]) -> Array:
    """A runtime value (compact or symbolic) as an array of the whole tile ``shape`` (a tile loaded
    lazily stays so: only the handlers of :data:`LAZY_USERS` get one)."""
    if type(x) is Loaded:
        return x
    x = affine.dense(x)
    return x if x.shape[1:] == shape else np.broadcast_to(x, x.shape[:1] + shape)


def _select(cond: Array, a, b):
    """Per program: ``a`` where ``cond`` (shape ``(n,)``) holds, else ``b``."""
    if isinstance(a, Affine) and isinstance(b, Affine):
        out = affine.select(cond, a, b)
        if out is not None:
            return out
    a, b = affine.dense(a), affine.dense(b)
    return np.where(_lift(cond, max(a.ndim, b.ndim) - 1), a, b)


class _Programs:
    """Programs ``start..stop`` of a launch, executing one block of IR together."""

    def __init__(self, memory: _Memory, grid: tuple[int, int, int], prepared: _Prepared, start: int, stop: int):
        self.memory, self.grid, self.prepared = memory, grid, prepared
        self.schedule, self.leaves = prepared.schedule, prepared.leaves
        linear = np.arange(start, stop)
        self.n = stop - start
        if grid[1] == grid[2] == 1:  # (the usual 1-D grid: the ids are the linear ones)
            zero = np.zeros(self.n, linear.dtype)
            self.pid = (linear, zero, zero)
        else:
            self.pid = (linear % grid[0], linear // grid[0] % grid[1], linear // (grid[0] * grid[1]))
        self.env: dict[int, Array] = {}
        self.active: Array | None = None  # (n,) bool: who runs the current region; None = all
        self.order: Array | None = None  # the programs in the order they run, when not 0..n-1
        self.plans = affine.Plans()
        self.spare: Array | None = None  # an operand the running elementwise op may overwrite (_donated)

    def copies(self, copies: int, env: dict[int, Any], active: Array | None, interleaved: bool) -> "_Programs":
        """These programs, each ``copies`` times, on ``env`` (values of these programs, repeated), with
        ``active`` (over the copies) running: each program's copies in a row, or (``interleaved``)
        copy ``j`` of every program before copy ``j + 1``. The copies run in that second order:
        :attr:`order` lists them so when they are laid out in the first."""
        out = _Programs.__new__(_Programs)
        out.memory, out.grid, out.prepared, out.schedule, out.leaves = (
            self.memory, self.grid, self.prepared, self.schedule, self.leaves)
        out.n, out.active = self.n * copies, active
        out.pid = tuple(_repeat(a, copies, interleaved) for a in self.pid)
        out.order = None if interleaved else np.arange(out.n).reshape(self.n, copies).T.reshape(-1)
        out.plans, out.spare = affine.Plans(), None
        out.env = {i: _repeat(x, copies, interleaved) for i, x in env.items()}
        return out

    def run_block(self, block: Block, args: Sequence[Array]) -> list[Array]:
        """Run ``block`` with its arguments bound to ``args``; return the values it yields."""
        env = self.env
        for v, x in zip(block.args, args):
            env[v.id] = x
        out: Sequence[Array] = ()
        for handler, instr, operands, results, dead, shapes, donors in self.schedule[id(block)]:
            args = [env[i] for i in operands]
            if shapes is not None:  # the handler wants whole tiles
                args = [_whole(x, shape) for x, shape in zip(args, shapes)]
            if donors:
                x = out = None  # (they hold the last instruction's results)
                self.spare = _donated(env, operands, args, donors)
                out = handler(self, instr, *args)
                self.spare = None
            else:
                out = handler(self, instr, *args)
            for i, x in zip(results, out):
                env[i] = x
            for i in dead:  # freeing early lets NumPy reuse memory (and keeps it in cache)
                env.pop(i, None)  # (a donated operand is gone already)
        return list(out) if block.body and block.body[-1].op is Op.YIELD else []

    def run_masked(self, active: Array | None, block: Block, args: Sequence[Array]) -> list[Array]:
        outer, self.active = self.active, active
        try:
            return self.run_block(block, args)
        finally:
            self.active = outer

    def program(self, index: int) -> tuple[int, int, int]:
        """The (x, y, z) program id of the ``index``-th program of this chunk."""
        return tuple(int(axis[index if axis.shape[0] > 1 else 0]) for axis in self.pid)  # (uniform: one row)

    def lanes(self, mask: Array | None, rank: int) -> Array | None:
        """The lanes a memory op touches: ``mask`` and the active programs (None = every lane)."""
        if mask is not None:
            mask = _lift(mask, rank)
        if self.active is not None:
            active = _lift(self.active, rank)
            mask = active if mask is None else mask & active
        return None if mask is None or mask.all() else mask


# --- leaves, shapes, elementwise and reductions ---------------------------------------------

def _result(instr: Instr) -> np.dtype:
    return numerics.np_dtype(instr.result.type.dtype)


def _const(instr: Instr) -> Array:
    value = numerics.cast(np.array(instr.attr("value")), _result(instr))
    return value.reshape((1,) * (1 + len(instr.result.type.shape)))


def _arange(instr: Instr) -> Array | Affine:
    start, end, dt = instr.attr("start"), instr.attr("end"), _result(instr)
    if dt in affine.AFFINE_DTYPES:
        return affine.arange(start, end, dt)
    return np.arange(start, end, dtype=dt)[None]


UNIFORM_LEAVES: dict[Op, Callable[[Instr], Array]] = {Op.CONST: _const, Op.ARANGE: _arange}
"""Leaves that are the same in every program: evaluated once per launch."""


def _leaf(P: _Programs, instr: Instr) -> tuple[Array]:
    return (P.leaves[instr.result.id],)


def _program_id(P: _Programs, instr: Instr) -> tuple[Array]:
    return (P.pid[instr.attr("axis")].astype(_result(instr)),)


def _num_programs(P: _Programs, instr: Instr) -> tuple[Array]:
    return (np.array([P.grid[instr.attr("axis")]], dtype=_result(instr)),)


def _broadcast(P: _Programs, instr: Instr, x) -> tuple:
    shape = instr.result.type.shape
    if isinstance(x, Affine):
        return (affine.broadcast(x, shape),)
    if isinstance(x, Conj):
        return (Conj(tuple(_broadcast(P, instr, f)[0] for f in x.factors)),)
    return (x.reshape(x.shape[:1] + (1,) * (len(shape) - x.ndim + 1) + x.shape[1:]),)  # compact


def _expand_dims(P: _Programs, instr: Instr, x) -> tuple:
    axis = instr.attr("axis")
    if isinstance(x, Affine):
        return (affine.expand_dims(x, axis, instr.result.type.shape),)
    if isinstance(x, Conj):
        return (Conj(tuple(np.expand_dims(f, axis + 1 if axis >= 0 else axis) for f in x.factors)),)
    return (np.expand_dims(x, axis + 1 if axis >= 0 else axis),)


def _elementwise(P: _Programs, instr: Instr, *xs) -> tuple:
    """The result is compact (it broadcasts to the tile) and stays symbolic where it can."""
    shape, op = instr.result.type.shape, instr.op
    if any(type(x) is Affine for x in xs):
        out = affine.elementwise(op, xs, _result(instr), shape)
        if out is not None:
            return (out,)
    if op is Op.AND and xs[0].dtype == np.bool_ and len(xs) == 2:
        out = affine.conj(*xs, len(shape))
        if out is not None:
            return (out,)
    if op is Op.ADD and id(instr) in P.prepared.accumulators[0]:
        term = _plus_zero(xs)
        if term is not None:
            return (term if type(term) is Loaded else _lift(term, len(shape)),)
    loaded = next((x for x in xs if type(x) is Loaded), None)
    spare, ufunc = P.spare, numerics.NP_FOR_OP.get(op)
    if (loaded is not None or spare is not None) and not (
            isinstance(ufunc, np.ufunc) and ufunc.nout == 1 and _result(instr) == numerics.F32
            and all(x.dtype == numerics.F32 for x in xs)):  # NumPy's exact result, whatever memory it is written to
        loaded = spare = None
    if loaded is not None:
        return (loaded.apply(ufunc, [x if type(x) is Loaded else _lift(affine.dense(x), len(shape)) for x in xs],
                             spare if spare is not None and spare.shape == loaded.shape else None),)
    xs = [_lift(affine.dense(x), len(shape)) for x in xs]
    if op is Op.WHERE and xs[0].size < xs[1].size + xs[2].size:  # a condition that holds everywhere
        chosen = xs[1] if xs[0].all() else xs[2] if not xs[0].any() else None  # (or nowhere) picks
        if chosen is not None and chosen.dtype == _result(instr):
            return (chosen,)
    if spare is not None and spare.shape == np.broadcast_shapes(*(x.shape for x in xs)):
        return (ufunc(*xs, out=spare),)  # in place of a dying operand
    return (numerics.elementwise(op, xs, _result(instr)),)


def _plus_zero(xs) -> Array | Loaded | None:
    """For ``+0.0 + x`` (either order; the +0.0 a compact float32 array) of float32 tiles, ``x``."""
    for zero, x in (xs, xs[::-1]):
        if type(zero) is np.ndarray and zero.size == 1 and zero.dtype == numerics.F32 and zero.tobytes() == ZERO \
                and type(x) in (np.ndarray, Loaded) and x.dtype == numerics.F32:
            return x
    return None


ZERO_F32 = np.float32(0.0)
ZERO = ZERO_F32.tobytes()

LAST_AXIS_REDUCE = {Op.SUM: np.add, Op.MAX: np.maximum, Op.MIN: np.minimum}
"""Reductions a lazily loaded float32 tile (:class:`ascdsl.affine.Loaded`) runs along its last axis in place."""


def _reduce(P: _Programs, instr: Instr, x: Array) -> tuple[Array]:
    axis, rank = instr.attr("axis"), x.ndim - 1
    axes = tuple(range(1, rank + 1)) if axis is None else (axis % rank + 1,)
    if type(x) is Loaded and axes == (rank,) and _result(instr) == numerics.F32 and instr.op in LAST_AXIS_REDUCE:
        out = x.reduce_last(LAST_AXIS_REDUCE[instr.op])
    else:
        out = numerics.reduce(instr.op, x.dense() if type(x) is Loaded else x, axes, _result(instr))
    if id(instr) in P.prepared.accumulators[1]:  # its accumulator's lanes may be -0.0 (_accumulators)
        out = out + ZERO_F32
    return (out.reshape(out.shape[:1] + instr.result.type.shape),)


# --- shapes, combines and matrix products ---------------------------------------------------

def _align(xs: Sequence[Array]) -> list[Array]:
    """``xs`` with one program axis: values uniform over programs are broadcast to the others."""
    n = max(x.shape[0] for x in xs)
    return [x if x.shape[0] == n else np.broadcast_to(x, (n,) + x.shape[1:]) for x in xs]


def _reshape(P: _Programs, instr: Instr, x: Array) -> tuple[Array]:
    return (x.reshape(x.shape[:1] + instr.result.type.shape),)


def _permute(P: _Programs, instr: Instr, x: Array) -> tuple[Array]:
    return (np.transpose(x, (0, *(d + 1 for d in instr.attr("order")))),)


def _join(P: _Programs, instr: Instr, a: Array, b: Array) -> tuple[Array]:
    return (np.stack(_align([a, b]), axis=-1),)


def _split(P: _Programs, instr: Instr, x: Array) -> tuple[Array, Array]:
    return x[..., 0], x[..., 1]


def _cat(P: _Programs, instr: Instr, a: Array, b: Array) -> tuple[Array]:
    return (np.concatenate(_align([a, b]), axis=1),)


def _flip(P: _Programs, instr: Instr, x: Array) -> tuple[Array]:
    return (np.flip(x, instr.attr("axis") + 1),)


def _slice(P: _Programs, instr: Instr, x: Array) -> tuple[Array]:
    return (x[:, instr.attr("start"):instr.attr("stop"):instr.attr("step")],)


def _sort(P: _Programs, instr: Instr, x: Array) -> tuple[Array]:
    axis = instr.attr("axis") + 1
    out = np.sort(numerics.widen(x), axis=axis)
    return ((np.flip(out, axis) if instr.attr("descending") else out).astype(x.dtype),)


def _histogram(P: _Programs, instr: Instr, x: Array, mask: Array | None = None) -> tuple[Array]:
    """Counts per program at once: value ``v`` of program ``p`` is bin ``p * bins + v`` of one bincount."""
    bins = instr.attr("bins")
    x, *rest = _align([x] + ([mask] if mask is not None else []))
    values = x.reshape(x.shape[0], -1).astype(np.int64)
    keep = (values >= 0) & (values < bins)
    if rest:
        keep &= rest[0].reshape(values.shape)
    slots = values + np.arange(values.shape[0])[:, None] * bins
    counts = np.bincount(slots[keep], minlength=values.shape[0] * bins)
    return (counts.reshape(values.shape[0], bins).astype(np.int32),)


def _combiner(P: _Programs, instr: Instr) -> Callable[[list[Array], list[Array]], list[Array]]:
    """The region of a reduce/scan as a function of two lists of equally shaped arrays: it runs
    once on all their elements, flattened (the region's values are scalars)."""
    region = instr.regions[0]

    def combine(lhs: list[Array], rhs: list[Array]) -> list[Array]:
        shape = lhs[0].shape
        flat = [x.reshape(-1) for x in (*lhs, *rhs)]
        out = P.run_masked(None, region, flat)
        return [np.broadcast_to(o, flat[0].shape).reshape(shape) for o in out]
    return combine


def _to_last(instr: Instr, xs: Sequence[Array]) -> list[Array]:
    """The reduced/scanned axis of every operand moved last (all axes flattened for axis=None)."""
    axis = instr.attr("axis")
    if axis is None:
        return [x.reshape(x.shape[0], -1) for x in xs]
    return [np.moveaxis(x, axis + 1, -1) for x in xs]


UFUNC_FOR_OP = {Op.ADD: np.add, Op.MUL: np.multiply, Op.MAXIMUM: np.maximum, Op.MINIMUM: np.minimum,
                Op.AND: np.bitwise_and, Op.OR: np.bitwise_or, Op.XOR: np.bitwise_xor}


def _ufunc(instr: Instr, x: Array):
    """NumPy's ufunc for a one-operand combine region that is one of these ops of its two arguments
    (``cumsum``, ``xor_sum``, ``lambda a, b: a + b``...): it folds in C instead of log-depth steps.
    Not for 16-bit floats, whose every combine step rounds to the dtype."""
    body, args = instr.regions[0].body, instr.regions[0].args
    if len(args) != 2 or len(body) != 2 or x.dtype in numerics.NARROW or body[0].op not in UFUNC_FOR_OP:
        return None
    if {v.id for v in body[0].operands} != {a.id for a in args} or body[1].operands != body[0].results:
        return None
    return UFUNC_FOR_OP[body[0].op]


def _reduce_with(P: _Programs, instr: Instr, *xs: Array) -> list[Array]:
    """Neighbours are combined pairwise, halving the axis each step (log depth, order kept). A float
    ``+`` or ``*`` folds in that tree too (NumPy's own order is its implementation's; the Ascend C
    backend folds the same tree, so the two agree bit for bit)."""
    ufunc = _ufunc(instr, xs[0]) if len(xs) == 1 else None
    if ufunc in (np.add, np.multiply) and xs[0].dtype.kind == "f":
        ufunc = None
    combine, xs = _combiner(P, instr), _to_last(instr, _align(xs))
    if ufunc is not None:
        out = ufunc.reduce(xs[0], axis=-1).astype(xs[0].dtype, copy=False)
        return [out.reshape(out.shape[:1] + instr.result.type.shape)]
    while xs[0].shape[-1] > 1:
        length = xs[0].shape[-1]
        pairs = 2 * (length // 2)
        out = combine([x[..., 0:pairs:2] for x in xs], [x[..., 1:pairs:2] for x in xs])
        xs = [np.concatenate([o, x[..., pairs:]], axis=-1) if length % 2 else o for o, x in zip(out, xs)]
    return [x[..., 0].reshape(x.shape[:1] + r.type.shape) for x, r in zip(xs, instr.results)]


def _scan(P: _Programs, instr: Instr, *xs: Array) -> list[Array]:
    """Inclusive scan in log depth: step d combines each element with the one d before it."""
    ufunc = _ufunc(instr, xs[0]) if len(xs) == 1 else None
    combine, xs = _combiner(P, instr), _to_last(instr, _align(xs))
    reverse = instr.attr("reverse")
    xs = [np.flip(x, -1) for x in xs] if reverse else xs
    if ufunc is not None:
        xs = [ufunc.accumulate(xs[0], axis=-1).astype(xs[0].dtype, copy=False)]
    length, d = xs[0].shape[-1], 1 if ufunc is None else xs[0].shape[-1]
    while d < length:
        out = combine([x[..., :length - d] for x in xs], [x[..., d:] for x in xs])
        xs = [np.concatenate([x[..., :d], o], axis=-1) for x, o in zip(xs, out)]
        d *= 2
    xs = [np.flip(x, -1) for x in xs] if reverse else xs
    return [np.moveaxis(x, -1, instr.attr("axis") + 1) for x in xs]


def _dot(P: _Programs, instr: Instr, a: Array, b: Array, acc: Array | None = None) -> tuple[Array]:
    to = _result(instr)
    compute = np.dtype(np.int64) if to.kind in "iu" else numerics.F32
    out = np.matmul(numerics.widen(a).astype(compute), numerics.widen(b).astype(compute))
    if acc is not None:
        out = out + numerics.widen(acc).astype(compute)
    return (numerics.cast(out, to),)


def _assert(P: _Programs, instr: Instr, cond: Array) -> tuple[()]:
    rank = cond.ndim - 1
    failed = ~cond if P.active is None else ~cond & _lift(P.active, rank)
    if failed.any():
        lane = int(np.argmax(failed))
        program = lane // (failed.size // failed.shape[0]) if failed.shape[0] > 1 else 0
        where = f"program {P.program(program)}" if failed.shape[0] > 1 else "every program"
        message = instr.attr("message") or "assertion failed"
        raise DeviceAssertionError(instr.loc, f"device assertion failed in {where}: {message}",
                                   hint="the condition of tl.device_assert is False for some lanes")
    return ()


# --- memory ------------------------------------------------------------------------------------

def _groups(P: _Programs, instr: Instr, addr: Array,
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


def _out_of_bounds(P: _Programs, instr: Instr, bad: Array, buffers: Array,
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


def _load(P: _Programs, instr: Instr, ptr, mask=None, other=None) -> tuple[Array]:
    shape, dt = instr.result.type.shape, _result(instr)
    fill = numerics.poison(dt) if other is None else _lift(affine.dense(other), len(shape))
    if isinstance(ptr, Affine):
        access = _plan(P, instr, ptr, mask, fill.shape[0] if fill.ndim else 1, store=False)
        if access is False:
            return (np.broadcast_to(fill, (fill.shape[:1] if fill.ndim else (1,)) + shape),)
        if access is not None:
            share = P.memory.roots.get(id(instr)) in P.memory.constant
            lazy = affine.loaded(access, dt, fill) if share and id(instr) in P.prepared.lazy else None
            return (access.gather(fill, dt, share) if lazy is None else lazy,)
    ptr = _whole(ptr, shape)
    mask = P.lanes(None if mask is None else affine.dense(mask), len(shape))
    if mask is not None:
        ptr, mask = np.broadcast_arrays(ptr, mask)
    out = None
    for buffer, offsets, lanes in _groups(P, instr, ptr, mask):
        values = np.take(P.memory.flats[buffer], offsets)
        out = values if lanes is None else np.where(lanes, values, fill if out is None else out)
    if out is None:
        out = np.broadcast_to(fill, ptr.shape)
    return (out.astype(dt, copy=False),)


def _store(P: _Programs, instr: Instr, ptr, value, mask=None) -> tuple[()]:
    shape = ptr.shape if isinstance(ptr, Affine) else tuple(instr.attr("shape", instr.operands[0].type.shape))
    rank = len(shape)
    if P.prepared.poison:
        value = _resolved(P, value)
        _check_poison(P, instr, _lift(affine.dense(value), rank), mask, rank)
    deferred = value if isinstance(value, _Deferred) else None
    if deferred is not None and isinstance(ptr, Affine) and _store_computed(P, instr, ptr, mask, deferred):
        return ()
    if deferred is not None:
        value = _resolved(P, deferred)
    value = value if type(value) is Loaded else _lift(affine.dense(value), rank)
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
    ptr = _whole(ptr, shape)
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
    return ()


def _check_poison(P: _Programs, instr: Instr, value, mask, rank: int) -> None:
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


def _resolved(P: _Programs, x):
    """A value, deferred ones computed (their deferred operands first, each op after the first into
    the new array the one before made, as a chain of dying tiles would be)."""
    if type(x) is not _Deferred:
        return x
    args = [_resolved(P, a) for a in x.args]
    made = [r for a, r in zip(x.args, args) if type(a) is _Deferred and type(r) is np.ndarray and r.base is None
            and r.dtype == numerics.F32 and r.flags.writeable and all(r is not b for b in a.args)]
    P.spare = made[0] if made else None
    try:
        (value,) = _elementwise(P, x.instr, *args)
    finally:
        P.spare = None
    return value


def _store_computed(P: _Programs, instr: Instr, ptr: Affine, mask, deferred: _Deferred) -> bool:
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
        if _result(link.instr) != numerics.F32 or any(
                type(x) is not _Deferred and (type(x) not in (np.ndarray, Loaded) or x.dtype != numerics.F32)
                for x in xs):
            return False
        operands.append([None if type(x) is _Deferred else x if type(x) is Loaded else _lift(x, rank) for x in xs])
    lead = max(x.shape[0] for xs in operands for x in xs if x is not None)
    access = _plan(P, instr, ptr, mask, lead, store=True)
    if access is False:
        return True
    if access is None or (access.view is None and access.pieces is None) or access.programs < lead:
        return False
    if len(chain) > 1 and any(type(x) is Loaded and not x.access.same_pieces(access)
                              for xs in operands[1:] for x in xs):
        chain, operands = chain[:1], [[_lift(affine.dense(_resolved(P, d)), rank) if x is None else x
                                       for x, d in zip(operands[0], deferred.args)]]  # (they read it where it is)
    access.compute([(numerics.NP_FOR_OP[link.instr.op], xs) for link, xs in zip(chain[::-1], operands[::-1])])
    return True


def _plan(P: _Programs, instr: Instr, ptr: Affine, mask, lead: int, store: bool) -> affine.Access | None | bool:
    """The strided access of a memory op through an affine pointer (see :func:`ascdsl.affine.plan`)."""
    rank = len(ptr.shape)
    active = () if P.active is None else (_lift(P.active, rank),)
    if isinstance(mask, Conj):  # the loads and stores of a tile often share its mask
        if mask.parts is None or mask.parts[0] is not P.active:
            mask.parts = (P.active, affine.mask_parts(mask.factors + active, ptr.shape))
        factors, parts = mask.factors + active, mask.parts[1]
    else:
        factors = active if mask is None else (_lift(mask, rank),) + active
        parts = affine.mask_parts(factors, ptr.shape)
    if parts is None:
        return None
    memory, root = P.memory, P.memory.roots.get(id(instr))

    def buffer(address: int) -> tuple[Array | None, int]:
        k = (address + HALF) >> SHIFT if root is None else root
        return (memory.flats[k], k << SHIFT) if 0 <= k < len(memory.flats) else (None, 0)
    programs = max([ptr.programs, lead] + [f.shape[0] for f in factors])
    return affine.plan(ptr, *parts, programs, buffer, store, P.plans)


ATOMIC_COMBINE = {Op.ATOMIC_ADD: Op.ADD, Op.ATOMIC_MAX: Op.MAXIMUM, Op.ATOMIC_MIN: Op.MINIMUM,
                  Op.ATOMIC_AND: Op.AND, Op.ATOMIC_OR: Op.OR, Op.ATOMIC_XOR: Op.XOR}


def _atomic(P: _Programs, instr: Instr, ptr: Array, *rest: Array) -> tuple[Array]:
    cas = instr.op is Op.ATOMIC_CAS
    mask = rest[1] if not cas and instr.attr("has_mask") else None
    return (_read_modify_write(P, instr, instr.op, _result(instr), ptr, rest[:2] if cas else rest[:1], mask),)


def _read_modify_write(P: _Programs, instr: Instr, op: Op, dt: np.dtype, ptr: Array, operands: Sequence[Array],
                       mask: Array | None) -> Array:
    """Atomic ``op``, lane by lane in order (program order, then lane order) where lanes share an
    address: the k-th access to every address is applied in step k, all addresses at once. Returns
    the old values."""
    cas = op is Op.ATOMIC_CAS
    rank = ptr.ndim - 1
    mask = P.lanes(mask, rank)
    ptr = np.broadcast_to(ptr, (P.n, *ptr.shape[1:]))  # every program accesses, the same addresses or not
    ptr, *operands = np.broadcast_arrays(ptr, *(_lift(x, rank) for x in operands))
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
    cuts = tuple(affine.index(d, shape) < _lift(extent.astype(np.int64), rank)
                 for d, (size, extent) in enumerate(zip(shape, extents))
                 if extent.shape[0] > 1 or int(extent[0]) < size)
    return ptr, Conj(cuts) if cuts else None


def _block_load(P: _Programs, instr: Instr, base: Array, offset: Array, *rest: Array) -> tuple[Array]:
    rank = len(instr.attr("shape"))
    ptr, mask = _block_access(instr, base, offset, rest)
    other = rest[2 * rank - 1] if instr.attr("has_other") else None
    return _load(P, instr, ptr, mask, other)


def _strided_load(P: _Programs, instr: Instr, base: Array, offset: Array, *rest: Array) -> tuple[Array]:
    rank = len(instr.attr("shape"))
    ptr, mask = _block_access(instr, base, offset, rest)
    return _load(P, instr, ptr, mask, rest[2 * rank] if instr.attr("has_other") else None)


def _indexed(instr: Instr, base: Array, offset: Array, index: Array, extent: Array,
             lanes: tuple) -> tuple[Array, Array | None]:
    """The addresses and mask of a gather or scatter: ``base + offset + index[i]`` for ``i < extent``
    (and, with a lane mask, where it is nonzero)."""
    size = instr.attr("shape")[0]
    index, extent = affine.dense(index), affine.dense(extent)
    addr = _lift(base + offset.astype(np.int64), 1) + index.astype(np.int64)
    mask = np.arange(size) < _lift(extent.astype(np.int64), 1) if (extent < size).any() else None
    if instr.attr("has_mask"):
        on = affine.dense(lanes[0]) != 0
        mask = on if mask is None else mask & on
    if mask is not None:
        addr, mask = np.broadcast_arrays(addr, mask)
    return addr, mask


def _gather_load(P: _Programs, instr: Instr, base: Array, offset: Array, index: Array, extent: Array,
                 *rest: Array) -> tuple[Array]:
    lanes, other = (rest[:1], rest[1:]) if instr.attr("has_mask") else ((), rest)
    addr, mask = _indexed(instr, base, offset, index, extent, lanes)
    return _load(P, instr, addr, mask, other[0] if other else None)


def _scatter_store(P: _Programs, instr: Instr, base: Array, offset: Array, index: Array, extent: Array,
                   *rest: Array) -> tuple[()]:
    addr, mask = _indexed(instr, base, offset, index, extent, rest[:-1])
    return _write(P, instr, addr, rest[-1], mask)


def _span_load(P: _Programs, instr: Instr, base: Array, offset: Array, *rest: Array) -> tuple[Array]:
    """The lanes ``lo[r] <= c < hi[r]`` of each row ``r`` (the others undefined)."""
    shape = instr.attr("shape")
    lo, hi = (_lift(affine.dense(x).astype(np.int64), 1)[..., None] if len(shape) == 2 else
              _lift(affine.dense(x).astype(np.int64), 1) for x in rest[-2:])  # (programs, rows, 1) / (programs, 1)
    cols = np.arange(shape[-1])
    addr = _lift(base + offset.astype(np.int64), len(shape)) + cols
    if len(shape) == 2:
        addr = addr + np.arange(shape[0])[:, None] * _lift(affine.dense(rest[0]).astype(np.int64), 2)
    addr, mask = np.broadcast_arrays(addr, (cols >= lo) & (cols < hi))
    return _load(P, instr, addr, mask)


def _block_store(P: _Programs, instr: Instr, base: Array, offset: Array, *rest: Array) -> tuple[()]:
    ptr, mask = _block_access(instr, base, offset, rest[:-1])
    return _write(P, instr, ptr, rest[-1], mask)


def _write(P: _Programs, instr: Instr, ptr, value, mask) -> tuple[()]:
    """A store, or an atomic whose old values nobody reads (``atomic`` attribute)."""
    atomic = instr.attr("atomic")
    if atomic is None:
        return _store(P, instr, ptr, value, mask)
    shape = tuple(instr.attr("shape"))
    dense = None if mask is None else affine.dense(mask)
    _read_modify_write(P, instr, Op(atomic), numerics.np_dtype(instr.operands[-1].type.dtype), _whole(ptr, shape),
                       (_lift(affine.dense(value), len(shape)),), dense)
    return ()


# --- control flow and printing ---------------------------------------------------------------

def _for(P: _Programs, instr: Instr, lower: Array, upper: Array, step: Array, *carried: Array) -> list[Array]:
    body = instr.regions[0]
    iv_dtype = numerics.np_dtype(body.args[0].type.dtype)
    uniform = lower.shape[0] == upper.shape[0] == step.shape[0] == 1
    batch = P.prepared.batches.get(id(instr))
    # the same bounds in every program: the programs iterate together (iterations run as copies only
    # of a single program: of more, they would repeat each program's values for the induction variable)
    if uniform and (P.n > 1 or batch is None):
        return _for_uniform(P, instr, iv_dtype, int(lower[0]), int(upper[0]), int(step[0]), carried)
    lower, upper, step = (x.astype(np.int64) for x in (lower, upper, step))
    zero = step == 0 if P.active is None else (step == 0) & P.active
    if zero.any():
        raise _zero_step(instr)
    trips = np.maximum(-((lower - upper) // step), 0)
    if P.active is not None:
        trips = np.where(P.active, trips, 0)
    if batch is not None and P.order is None and trips.max() > 1 \
            and P.n * batch.largest * 2 <= BATCH_CHUNKS * CHUNK_ELEMENTS and P.memory.independent(batch):
        try:
            _for_batched(P, body, batch, lower, step, trips, iv_dtype)
            return []
        except Error:  # run again in order, so that the error is the one the order gives
            pass
    if uniform:
        return _for_uniform(P, instr, iv_dtype, int(lower[0]), int(upper[0]), int(step[0]), carried)
    carried = list(carried)
    for k in range(int(trips.max())):
        live = trips > k
        live = None if live.all() else live
        new = P.run_masked(live, body, [(lower + k * step).astype(iv_dtype), *carried])
        carried = new if live is None else [_select(live, n, c) for n, c in zip(new, carried)]
    return carried


def _for_uniform(P: _Programs, instr: Instr, iv_dtype: np.dtype, lower: int, upper: int, step: int,
                 carried: Sequence[Array]) -> list[Array]:
    """A loop whose bounds are the same in every program: its iterations one after another, for all."""
    carried, body = list(carried), instr.regions[0]
    if step == 0:
        if P.active is None or P.active.any():
            raise _zero_step(instr)
        return carried
    for i in range(lower, upper, step):
        carried = P.run_block(body, [np.array([i], dtype=iv_dtype), *carried])
    return carried


def _zero_step(instr: Instr) -> CompilationError:
    return CompilationError(instr.loc, "range() step must not be zero",
                            hint="make the step a nonzero value in every program")


def _while(P: _Programs, instr: Instr, *carried: Array) -> list[Array]:
    """Each active program iterates while its condition holds; the others keep their values."""
    test, body = instr.regions
    carried, live = list(carried), P.active
    while True:
        (cond,) = P.run_masked(live, test, carried)
        go = cond if live is None else cond & live
        if not go.any():
            return carried
        live = None if live is None and go.all() else go
        new = P.run_masked(live, body, carried)
        carried = new if live is None else [_select(live, n, c) for n, c in zip(new, carried)]


def _for_batched(P: _Programs, body: Block, batch: _Batch, lower: Array, step: Array, trips: Array,
                 iv_dtype: np.dtype) -> None:
    """The iterations of a loop run together, as many at once as fit :data:`BATCH_CHUNKS` chunks: each program's next
    iterations as copies of it, side by side (a program's tiles are often adjacent in memory), or
    interleaved when that is how the induction variable increases (a grid-stride loop's programs take
    adjacent rows). Stores whose lanes overlap land in the loop's order (:attr:`_Programs.order`)."""
    total, n = int(trips.max()), P.n
    fit = max(1.0, BATCH_CHUNKS * CHUNK_ELEMENTS / (n * batch.largest))  # iterations a group holds, as even as can be
    group = -(-total // max(1, round(total / fit)))
    trips, lower, step = (np.broadcast_to(x, (n,)) for x in (trips, lower, step))
    env = {i: P.env[i] for i in batch.free}
    for k0 in range(0, total, group):
        copies = min(group, total - k0)
        interleaved, k, iv = _layout(lower, step, np.arange(k0, k0 + copies), n)
        live = _repeat(trips, copies, interleaved) > k
        sub = P.copies(copies, env, None if live.all() else live, interleaved)
        sub.run_block(body, [iv.astype(iv_dtype)])


def _layout(lower: Array, step: Array, ks: Array, n: int) -> tuple[bool, Array, Array]:
    """``(interleaved, k, iv)``: how :func:`_for_batched` lays out iterations ``ks`` of ``n`` programs as
    copies (:meth:`_Programs.copies`), each copy's iteration number and induction variable. Each
    program's copies in a row unless only interleaving them makes the induction variable increase."""
    for interleaved in (False, True):
        k = _repeat(ks, n, not interleaved)
        iv = _repeat(lower, ks.size, interleaved) + k * _repeat(step, ks.size, interleaved)
        if (iv[1:] >= iv[:-1]).all():
            return interleaved, k, iv
    k = _repeat(ks, n, True)
    return False, k, _repeat(lower, ks.size) + k * _repeat(step, ks.size)


def _repeat(x, copies: int, interleaved: bool = False):
    """A runtime value of some programs for ``copies`` copies of them (uniform values stay as they
    are), laid out as :meth:`_Programs.copies` says."""
    if isinstance(x, Affine):
        return affine.repeat(x, copies, interleaved)
    if isinstance(x, Conj):
        return Conj(tuple(_repeat(f, copies, interleaved) for f in x.factors))
    if x.shape[0] == 1:
        return x
    return np.tile(x, (copies,) + (1,) * (x.ndim - 1)) if interleaved else np.repeat(x, copies, axis=0)


def _if(P: _Programs, instr: Instr, cond: Array) -> list[Array]:
    then, orelse = instr.regions
    if cond.shape[0] == 1:
        return P.run_block(then if cond[0] else orelse, [])
    yes = cond if P.active is None else cond & P.active
    no = ~cond if P.active is None else ~cond & P.active
    if not no.any():
        return P.run_block(then, [])
    if not yes.any():
        return P.run_block(orelse, [])
    a, b = P.run_masked(yes, then, []), P.run_masked(no, orelse, [])
    return [_select(cond, x, y) for x, y in zip(a, b)]


def _print(P: _Programs, instr: Instr, *values: Array) -> tuple[()]:
    prefix = instr.attr("prefix", "")
    for p in range(len(P.pid[0])):  # printing is per program by nature
        if P.active is None or P.active[p]:
            text = " ".join(str(v[p if v.shape[0] > 1 else 0]) for v in values)
            print(" ".join(s for s in (f"pid {P.program(p)}", prefix, text) if s))
    return ()


HANDLERS: dict[Op, Callable[..., Sequence[Array]]] = {
    **{op: _elementwise for op in GroupOp.ELEMENTWISE},
    **{op: _reduce for op in GroupOp.REDUCE},
    **{op: _leaf for op in UNIFORM_LEAVES},
    Op.PROGRAM_ID: _program_id,
    Op.NUM_PROGRAMS: _num_programs,
    Op.BROADCAST: _broadcast,
    Op.EXPAND_DIMS: _expand_dims,
    Op.LOAD: _load,
    Op.STORE: _store,
    Op.BLOCK_LOAD: _block_load,
    Op.BLOCK_STORE: _block_store,
    Op.STRIDED_LOAD: _strided_load,
    Op.STRIDED_STORE: _block_store,
    Op.GATHER_LOAD: _gather_load,
    Op.SCATTER_STORE: _scatter_store,
    Op.SPAN_LOAD: _span_load,
    Op.FOR: _for,
    Op.WHILE: _while,
    Op.IF: _if,
    Op.YIELD: lambda P, instr, *values: values,
    Op.PRINT: _print,
    Op.RESHAPE: _reshape,
    Op.PERMUTE: _permute,
    Op.JOIN: _join,
    Op.SPLIT: _split,
    Op.CAT: _cat,
    Op.FLIP: _flip,
    Op.SLICE: _slice,
    Op.SORT: _sort,
    Op.HISTOGRAM: _histogram,
    Op.REDUCE: _reduce_with,
    Op.SCAN: _scan,
    Op.DOT: _dot,
    Op.ASSERT: _assert,
    **{op: _atomic for op in GroupOp.ATOMIC},
}
"""How each op runs: ``handler(programs, instr, *operand_arrays) -> result arrays``."""

NOT_BATCHED = frozenset({Op.PRINT, Op.ASSERT})
"""Ops whose order of execution shows: loops that contain them run iteration by iteration."""

LOOPS = frozenset({Op.FOR, Op.WHILE})

COMPACT = GroupOp.ELEMENTWISE | GroupOp.LEAF | GroupOp.SHAPE | LOOPS | frozenset({
    Op.LOAD, Op.STORE, Op.BLOCK_LOAD, Op.BLOCK_STORE, Op.IF, Op.YIELD})
"""Ops whose handlers take compact and symbolic operands (:mod:`ascdsl.affine`); the others get whole
tiles."""
