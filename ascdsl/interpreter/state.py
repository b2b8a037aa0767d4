"""What a launch runs on: the argument buffers (:class:`Memory`), the kernel prepared once
(:class:`Prepared`) and the programs of a chunk running one block together (:class:`Programs`)."""
from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import affine, numerics
from ..affine import Affine, lift
from ..dtypes import PointerType
from ..errors import InputTypeError, InputValueError
from ..ir.core import Block, Instr, Op
from .values import Array, repeat, whole


SHIFT = 40  # address bits reserved for the element offset within one argument buffer
HALF = 1 << (SHIFT - 1)  # offsets in [-HALF, HALF) decode to the right buffer
CHUNK_ELEMENTS = 1 << 21  # programs per chunk * largest tile size: bounds the memory of a chunk (fewer
# chunks run the same instructions fewer times; elementwise ops computing into dying operands keep the
# memory a chunk touches small)
BATCH_CHUNKS = 1  # a batched loop's iterations run in groups of this many chunks' elements


Step = tuple[Callable[..., Sequence[Array]], Instr, list[int], list[int], list[int], tuple | None, tuple[int, ...]]


@dataclass(frozen=True)
class Batch:
    """A ``for`` loop whose iterations may run at once, as copies of the programs (:func:`.control.for_`): it
    carries no values and prints, asserts or runs atomics nowhere; ``loads`` are the buffers it
    reads, which must be constant, and ``stores`` those of each of its stores (distinct buffers)."""

    free: tuple[int, ...]  # the ids of the values from outside that its body uses
    loads: frozenset[int]
    stores: tuple[frozenset[int], ...]
    largest: int  # elements of the largest tile in its body


@dataclass(frozen=True)
class Prepared:
    """What a launch of a kernel needs besides its arguments, computed once per kernel object."""

    largest: int  # elements of the largest tile
    schedule: dict[int, list[Step]]
    leaves: dict[int, Array | Affine]  # uniform leaves by value id
    roots: dict[int, int]  # memory op id -> its one buffer
    written: frozenset[int] | None  # buffers the kernel may write (None: any, as atomics do)
    batches: dict[int, Batch]  # by for-loop id
    lazy: frozenset[int]  # the loads whose tiles may stay in memory (:func:`.runner._lazy_loads`)
    accumulators: tuple[frozenset[int], frozenset[int]]  # (adds, sums): :func:`.runner._accumulators`
    poison: bool = False  # checking mode: a store of a poisoned float lane is an error (Kernel.poison)
    barrier: bool = False  # a grid barrier (``sync_block_all``): every program runs in one chunk
    shared: frozenset[int] = frozenset()  # buffers checked for races between programs (.races)
    stamping: frozenset[int] = frozenset()  # the stores that stamp them (:func:`.races.stores_read_after`)


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


def span(array: Array) -> tuple[Array, int]:
    """A writable 1-D view of the memory a pointer argument reaches, and the index of the array's
    first element there: for a view of a C-contiguous array, its allocation from its first element
    to its end (as on a device, a view's pointer reaches the rest of its base, and as the simulator
    gets it), the whole allocation if a stride is negative; else the span from its lowest to its
    highest element."""
    root = array
    while isinstance(root.base, np.ndarray):
        root = root.base
    item = array.itemsize
    if root is not array and root.flags.c_contiguous and root.nbytes % item == 0:
        start = array.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        if start % item == 0:
            flat = root.reshape(-1).view(array.dtype)
            return (flat[start // item:], 0) if min(array.strides, default=0) >= 0 else (flat, start // item)
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


class Memory:
    """The argument buffers, flattened, with their parameter names."""

    def __init__(self) -> None:
        self.flats: list[Array] = []
        self.names: list[str] = []
        self.roots: dict[int, int] = {}  # memory op id -> its one buffer (ir.provenance)
        self.constant: frozenset[int] = frozenset()  # buffers no lane writes during the launch
        self.stamps: dict[int, Array] = {}  # buffer -> the program that last stored each element, plus one (.races)
        self.stamped: set[int] = set()  # the buffers stored to since the launch began or the last barrier

    def bind(self, name: str, ptr: PointerType, array: Any) -> Array:
        """Register ``array`` as the buffer of pointer parameter ``name``; return its base address."""
        if not isinstance(array, np.ndarray):
            raise InputTypeError(f"argument {name} must be a NumPy array, got {type(array).__name__}")
        if array.dtype != ptr.element_ty.np:
            raise InputTypeError(f"argument {name} has dtype {array.dtype}, the kernel was "
                                 f"specialised for {ptr.element_ty}")
        flat, first = span(array)
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

    def independent(self, batch: Batch) -> bool:
        """Whether the iterations of a batchable loop are independent on these buffers: it reads
        constant buffers only and its stores write buffers that do not overlap in memory."""
        stores = [self.flats[k] for ks in batch.stores for k in ks]
        return batch.loads <= self.constant and not any(
            np.may_share_memory(a, b) for i, a in enumerate(stores) for b in stores[i + 1:])

    def sizes(self) -> Array:
        return np.array([f.size for f in self.flats], dtype=np.int64)


class Programs:
    """Programs ``start..stop`` of a launch, executing one block of IR together."""

    def __init__(self, memory: Memory, grid: tuple[int, int, int], prepared: Prepared, start: int, stop: int):
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

    def copies(self, copies: int, env: dict[int, Any], active: Array | None, interleaved: bool) -> "Programs":
        """These programs, each ``copies`` times, on ``env`` (values of these programs, repeated), with
        ``active`` (over the copies) running: each program's copies in a row, or (``interleaved``)
        copy ``j`` of every program before copy ``j + 1``. The copies run in that second order:
        :attr:`order` lists them so when they are laid out in the first."""
        out = Programs.__new__(Programs)
        out.memory, out.grid, out.prepared, out.schedule, out.leaves = (
            self.memory, self.grid, self.prepared, self.schedule, self.leaves)
        out.n, out.active = self.n * copies, active
        out.pid = tuple(repeat(a, copies, interleaved) for a in self.pid)
        out.order = None if interleaved else np.arange(out.n).reshape(self.n, copies).T.reshape(-1)
        out.plans, out.spare = affine.Plans(), None
        out.env = {i: repeat(x, copies, interleaved) for i, x in env.items()}
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
                args = [whole(x, shape) for x, shape in zip(args, shapes)]
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
            mask = lift(mask, rank)
        if self.active is not None:
            active = lift(self.active, rank)
            mask = active if mask is None else mask & active
        return None if mask is None or mask.all() else mask
