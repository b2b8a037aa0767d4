"""UB planning: where every tile lives in the Unified Buffer, and whether it all fits.

Homes (one per tile value):

* a ``block_load`` result is a buffer of a VECIN queue (one queue per pointer, double-buffered; a
  second load of the same pointer in one stage gets its own queue). A load used outside its own
  stage (e.g. loaded before a loop and read after it) is copied out of the queue into a ``TBuf``:
  ``staged`` maps it to the queue it arrives through;
* a value that is stored is computed straight into a buffer of a VECOUT queue (double-buffered);
* a loop-carried tile lives in an accumulator ``TBuf`` for the whole loop;
* every other tile is a temporary ``TBuf``. Temporaries share buffers when their live ranges do
  not overlap, and an elementwise op writes over an operand of the same dtype that dies at it;
* ``expand_dims`` keeps its operand's layout, so it reuses the operand's buffer when it dies there;
* a comparison (only ever a ``where`` condition in the backend) is a ``maskBuf``: one bit per
  element of the compared count, which ``Compare`` pads to whole 256-byte repeats; so the buffers of
  its tile operands are padded to whole repeats too (the padding lanes are read, never used);
* a tile broadcast (``[M, 1]`` or ``[1, N]`` to ``[M, N]``) read only by binary arithmetic has no
  buffer: the backend reads its source with repeat-form strides (``brcbBuf`` holds the Brcb blocks).

Layout: a 2-D ``[M, N]`` tile (``N > 1``) is ``M`` rows of ``pitch`` elements, ``N`` rounded up to
32 bytes of the kernel's narrowest tile dtype, so a Cast keeps every element in place; ``[M, 1]`` is
stored as ``[M]`` and ``[1, N]`` as ``[N]``.

API work buffers (float32 copies for bfloat16 math and 16-bit reductions, reduction scratch, a
32-byte scalar block) come last. Every size is rounded up to 32 bytes; the total must stay within
``platform.ub_budget_bytes``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .. import dtypes
from ..errors import CompilationError, Loc
from ..ir.core import GroupOp, Instr, Kernel, Op, Type, Value

BLOCK_BYTES = 32
REPEAT_BYTES = 256
FLOATS_PER_REPEAT = REPEAT_BYTES // 4
INPLACE = GroupOp.ARITH | frozenset({Op.NEG, Op.EXP, Op.LOG, Op.SQRT, Op.RSQRT, Op.ABS, Op.SIGMOID, Op.EXPAND_DIMS})
FUSABLE = frozenset({Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.MAXIMUM, Op.MINIMUM})


def align32(n: int) -> int:
    return -(-n // BLOCK_BYTES) * BLOCK_BYTES


def align256(n: int) -> int:
    return -(-n // REPEAT_BYTES) * REPEAT_BYTES


def compare_dtype(x: Type):
    """The dtype a comparison of ``x`` runs in: bfloat16 is compared in float32."""
    return dtypes.float32 if x.dtype == dtypes.bfloat16 else x.dtype


def compare_count(x: Type, align: int) -> int:
    """Lanes ``Compare`` covers for tile type ``x``: its padded footprint in whole repeats."""
    dt = compare_dtype(x)
    return align256(padded_numel(x.shape, align) * dt.itemsize) // dt.itemsize


def tile_align(kernel: Kernel) -> int:
    """Row pitches of 2-D tiles are multiples of this many elements (32 bytes of the narrowest dtype)."""
    sizes = [v.type.dtype.itemsize for i in _all(kernel.body.body) for v in i.results
             if len(v.type.shape) == 2 and v.type.dtype.itemsize >= 2]
    return BLOCK_BYTES // min(sizes, default=4)


def pitch(shape: tuple[int, ...], align: int) -> int:
    """Elements per UB row of a tile of ``shape`` (its numel when it is stored as one row)."""
    if len(shape) == 2 and shape[1] > 1:
        return -(-shape[1] // align) * align
    return max(1, _numel(shape))


def padded_numel(shape: tuple[int, ...], align: int) -> int:
    """Elements a tile occupies in UB (rows times pitch)."""
    return shape[0] * pitch(shape, align) if len(shape) == 2 and shape[1] > 1 else _numel(shape)


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def tile_bytes(v: Value, align: int = 8) -> int:
    return align32(padded_numel(v.type.shape, align) * v.type.dtype.itemsize)


def fused_broadcast(instr: Instr, users: dict) -> bool:
    """A tile broadcast to a 2-D tile that only binary arithmetic reads (see the module docstring)."""
    return (instr.op is Op.BROADCAST and not instr.operands[0].type.is_scalar and len(instr.result.type.shape) == 2
            and bool(users.get(instr.result.id)) and all(u.op in FUSABLE for u in users[instr.result.id]))


@dataclass(frozen=True)
class Buffer:
    """One UB allocation: a queue (``num`` buffers of ``bytes``) or a ``TBuf`` (num 1)."""

    name: str
    position: str  # VECIN, VECOUT or VECCALC
    num: int
    bytes: int
    loc: Loc = field(compare=False)

    @property
    def total(self) -> int:
        return self.num * self.bytes


@dataclass(frozen=True)
class UBPlan:
    """The buffers of one kernel, and ``homes``: value id -> buffer name."""

    buffers: tuple[Buffer, ...]
    homes: dict = field(compare=False)
    align: int = 8
    staged: dict = field(default_factory=dict, compare=False)  # load value id -> its VECIN queue
    store_queues: dict = field(default_factory=dict, compare=False)  # id(block_store) -> its VECOUT queue
    fused: frozenset = field(default=frozenset(), compare=False)  # broadcasts read through strides

    @property
    def total_bytes(self) -> int:
        return sum(b.total for b in self.buffers)

    def buffer(self, name: str) -> Buffer:
        return next(b for b in self.buffers if b.name == name)

    def as_dict(self) -> dict:
        return {"total_bytes": self.total_bytes,
                "buffers": [{"name": b.name, "position": b.position, "num": b.num, "bytes": b.bytes}
                            for b in self.buffers]}


def _camel(name: str) -> str:
    parts = [p for p in name.removesuffix("_ptr").split("_") if p]
    return "".join(p.capitalize() for p in parts) or "Arg"


class _Liveness:
    """Program-order positions: each instruction gets an index; a ``for`` spans its region."""

    def __init__(self, kernel: Kernel):
        self.index: dict[int, int] = {}  # id(instr) -> position
        self.defs: dict[int, int] = {v.id: 0 for v in kernel.params}
        self.last: dict[int, int] = {}
        self.loops: list[tuple[int, int, Instr]] = []
        self.def_instr: dict[int, Instr] = {}
        self.n = 0
        self._visit(kernel.body.body, [])

    def _visit(self, body, loops) -> None:
        for instr in body:
            self.n += 1
            start = self.n
            self.index[id(instr)] = start
            for v in instr.operands:
                self._use(v, start, loops)
            for region in instr.regions:
                for a in region.args:
                    self.defs[a.id] = start
                self._visit(region.body, loops + [(start, instr)])
            end = self.n
            if instr.regions:
                self.loops.append((start, end, instr))
            for v in instr.results:
                self.defs[v.id] = end
                self.def_instr[v.id] = instr

    def _use(self, v: Value, at: int, loops) -> None:
        # a value defined outside an enclosing loop stays live until that loop ends
        for start, loop in loops:
            if self.defs.get(v.id, 0) < start:
                at = max(at, self._end_of(loop, start))
                break
        self.last[v.id] = max(self.last.get(v.id, 0), at)

    def _end_of(self, loop: Instr, start: int) -> int:
        count = 0
        stack = list(loop.regions)
        while stack:
            region = stack.pop()
            for instr in region.body:
                count += 1
                stack.extend(instr.regions)
        return start + count

    def last_use(self, v: Value) -> int:
        return self.last.get(v.id, self.defs.get(v.id, 0))


def reduce_scratch(x: Type, out_dtype, axis: int, align: int) -> dict[str, int]:
    """Float32 ``workBuf`` regions (element offsets) of a 2-D reduction; ``end`` is its size:
    ``cast`` (a 16-bit input in float32), ``fold`` (rows folded to one repeat), ``acc`` (the float32
    result of a 16-bit sum)."""
    rows, cols = x.shape
    regions, at = {}, 0
    for name, n in (("cast", rows * pitch(x.shape, align) if x.dtype.itemsize != 4 else 0),
                    ("fold", rows * FLOATS_PER_REPEAT if axis == 1 and cols > FLOATS_PER_REPEAT else 0),
                    ("acc", (rows if axis == 1 else pitch(x.shape, align)) if out_dtype.itemsize != 4 else 0)):
        if n:
            regions[name] = at
            at += align32(4 * n) // 4
    regions["end"] = at
    return regions


NO_WORK = (Op.CAST, Op.BLOCK_LOAD, Op.CONST, Op.BROADCAST, Op.EXPAND_DIMS)
"""Tile ops whose bfloat16 forms need no float32 copies (Cast, data movement, Duplicate)."""


def _work_bytes(instr: Instr, align: int) -> int:
    """Float32 scratch an instruction needs (see the backend's instruction selection)."""
    if instr.op in GroupOp.COMPARE and instr.operands[0].type.dtype == dtypes.bfloat16:
        tiles = [x for x in instr.operands if not x.type.is_scalar]
        return len(tiles) * 4 * compare_count(tiles[0].type, align)
    if instr.op is Op.SIGMOID and instr.result.type.dtype.itemsize == 2:
        return 4 * padded_numel(instr.result.type.shape, align)
    if instr.op in GroupOp.REDUCE:
        (x,) = instr.operands
        if len(x.type.shape) == 2:
            return 4 * reduce_scratch(x.type, instr.result.type.dtype, instr.attr("axis"), align)["end"]
        n = x.type.numel
        cast = 4 * n if x.type.dtype.itemsize != 4 else 0
        repeats = -(-n * 4 // REPEAT_BYTES)
        return cast + align32(4 * 2 * repeats)
    if len(instr.results) == 1 and not instr.result.type.is_scalar and any(
            v.type.dtype == dtypes.bfloat16 for v in (*instr.operands, instr.result)) and instr.op not in NO_WORK:
        return 2 * 4 * padded_numel(instr.result.type.shape, align)
    return 0


def _stages(block, keys: dict, parent=()) -> None:
    """``keys[id(instr)]``: the stage an instruction runs in (a ``for`` ends the stage before it)."""
    seg = 0
    for instr in block.body:
        keys[id(instr)] = (*parent, seg)
        if instr.op is Op.FOR:
            for r in instr.regions:
                _stages(r, keys, (*parent, seg, "loop"))
            seg += 1


def plan(kernel: Kernel) -> UBPlan:
    """Assign every tile value a buffer (see the module docstring)."""
    live = _Liveness(kernel)
    align = tile_align(kernel)
    homes: dict[int, str] = {}
    staged: dict[int, str] = {}
    buffers: dict[str, Buffer] = {}
    names = dict(zip((p.id for p in kernel.params), kernel.param_names))
    stage: dict = {}
    _stages(kernel.body, stage)

    def need(name: str, position: str, num: int, nbytes: int, loc: Loc) -> None:
        old = buffers.get(name)
        buffers[name] = Buffer(name, position, num, max(nbytes, old.bytes if old else 0), loc)

    instrs = [i for i in _all(kernel.body.body)]
    users: dict[int, list] = {}
    for instr in instrs:
        for x in instr.operands:
            users.setdefault(x.id, []).append(instr)
    fused = {i.result.id for i in instrs if i.op is Op.BROADCAST and fused_broadcast(i, users)}
    for i in instrs:  # a fused broadcast's source is read where the broadcast is
        if i.op is Op.BROADCAST and i.result.id in fused:
            src = i.operands[0]
            live.last[src.id] = max(live.last_use(src), live.last_use(i.result))
    wide: dict[int, int] = {}  # tile operands of comparisons: bytes padded to whole repeats
    for i in instrs:
        if i.op in GroupOp.COMPARE and not i.result.type.is_scalar:
            for x in i.operands:
                if not x.type.is_scalar:
                    wide[x.id] = align256(tile_bytes(x, align))

    def size(v: Value) -> int:
        if _is_mask(v, live):
            tile = next(x for x in live.def_instr[v.id].operands if not x.type.is_scalar)
            return align32(compare_count(tile.type, align) // 8)
        return max(tile_bytes(v, align), wide.get(v.id, 0))

    stored: dict[int, str] = {}
    queues: dict[tuple, int] = {}
    store_queues: dict[int, str] = {}

    def queue(prefix: str, instr: Instr) -> str:
        name = prefix + _camel(names.get(instr.operands[0].id, "arg"))
        n = queues[(name, stage[id(instr)])] = queues.get((name, stage[id(instr)]), 0) + 1
        return name if n == 1 else f"{name}{n}"

    escaping = set()
    for instr in instrs:
        if instr.op is Op.BLOCK_LOAD:
            name = queue("inQueue", instr)
            need(name, "VECIN", 2, size(instr.result), instr.loc)
            homes[instr.result.id] = name
            if any(stage[id(u)] != stage[id(instr)] for u in users.get(instr.result.id, [])):
                escaping.add(instr.result.id)
                staged[instr.result.id] = homes.pop(instr.result.id)
        elif instr.op is Op.BLOCK_STORE:
            name = store_queues[id(instr)] = queue("outQueue", instr)
            value = instr.operands[-1]
            need(name, "VECOUT", 2, size(value), instr.loc)
            producer = live.def_instr.get(value.id)
            if (value.id not in homes and value.id not in stored and value.id not in escaping
                    and producer is not None and producer.op not in (Op.FOR, Op.BLOCK_LOAD)):
                stored[value.id] = name

    # temporaries and accumulators share TBuf slots by live range
    slots: list[list] = []  # [name, bytes, busy_until, loc]
    work = 0

    def slot_for(v: Value, start: int, end: int, loc: Loc, prefix: str) -> str:
        nbytes = size(v)
        free = [s for s in slots if s[2] < start and s[0].startswith(prefix)]
        best = min(free, key=lambda s: (s[1] < nbytes, abs(s[1] - nbytes), s[0]), default=None)
        if best is None:
            best = [f"{prefix}{len([s for s in slots if s[0].startswith(prefix)])}", 0, 0, loc]
            slots.append(best)
        best[1], best[2] = max(best[1], nbytes), end
        return best[0]

    def extend(name: str, end: int, nbytes: int) -> None:
        for s in slots:
            if s[0] == name:
                s[1], s[2] = max(s[1], nbytes), max(s[2], end)

    brcb_rows = 0
    for instr in instrs:
        at = live.index[id(instr)]
        if instr.op is Op.CONST and len(instr.results) == 1 and all(
                u.op is Op.FOR and list(u.operands).index(instr.result) >= 3 for u in users.get(instr.result.id, [])):
            continue  # only initialises loop accumulators: Duplicate writes it straight there
        work = max(work, _work_bytes(instr, align))
        if instr.op is Op.FOR:
            region = instr.regions[0]
            end = max([live.last_use(r) for r in instr.results] + [live.last_use(a) for a in region.args[1:]] + [at])
            for arg, result in zip(region.args[1:], instr.results):
                if arg.type.is_scalar:
                    continue
                wide[arg.id] = max(wide.get(arg.id, 0), wide.get(result.id, 0))
                name = slot_for(arg, at - 1, end, instr.loc, "accBuf")
                homes[arg.id] = homes[result.id] = name
            continue
        for v in instr.results:
            if v.id in fused:
                if instr.operands[0].type.shape[-1] == 1:  # [M, 1]: Brcb'd, one block per row
                    brcb_rows = max(brcb_rows, instr.operands[0].type.shape[0])
                continue
            if v.type.is_scalar or v.id in homes:
                continue
            if v.id in stored:
                homes[v.id] = stored[v.id]
                continue
            end = live.last_use(v)
            donor = None if v.id in escaping else _inplace_donor(instr, v, live, at, homes)
            if donor is not None:
                homes[v.id] = homes[donor.id]
                extend(homes[v.id], end, size(v))
                continue
            prefix = "maskBuf" if _is_mask(v, live) else "keepBuf" if v.id in escaping else "tmpBuf"
            homes[v.id] = slot_for(v, at, end, instr.loc, prefix)
    for name, nbytes, _, loc in slots:
        need(name, "VECCALC", 1, nbytes, loc)
    if brcb_rows:
        need("brcbBuf", "VECCALC", 1, -(-brcb_rows // 8) * REPEAT_BYTES, kernel.loc)
    if work:
        need("workBuf", "VECCALC", 1, align32(work), kernel.loc)
    if any(i.op in GroupOp.REDUCE or i.op in (Op.DIV, Op.SUB, Op.SIGMOID) or (
            i.op in GroupOp.COMPARE and any(x.type.is_scalar for x in i.operands)) for i in instrs):
        need("scalarBuf", "VECCALC", 1, BLOCK_BYTES, kernel.loc)
    order = {"VECIN": 0, "VECOUT": 1, "VECCALC": 2}
    ordered = sorted(buffers.values(), key=lambda b: (order[b.position], b.name.startswith(("workBuf", "scalarBuf")),
                                                       b.name))
    return UBPlan(tuple(ordered), homes, align, staged, store_queues, frozenset(fused))


def _is_mask(v: Value, live: _Liveness) -> bool:
    """``v`` is the bit mask of a comparison of tiles."""
    d = live.def_instr.get(v.id)
    return d is not None and d.op in GroupOp.COMPARE and not v.type.is_scalar


def _inplace_donor(instr: Instr, v: Value, live: _Liveness, at: int, homes: dict) -> Value | None:
    """An operand whose buffer ``v`` may overwrite: same element size and shape, dying here."""
    if instr.op not in INPLACE:
        return None
    for x in sorted(instr.operands, key=lambda x: not homes.get(x.id, "").startswith("accBuf")):
        if (not x.type.is_scalar and x.id in homes and (x.type.shape == v.type.shape or instr.op is Op.EXPAND_DIMS)
                and x.type.dtype == v.type.dtype and live.last_use(x) <= at
                and not homes[x.id].startswith("outQueue")):
            return x
    return None


def _all(body):
    for instr in body:
        yield instr
        for region in instr.regions:
            yield from _all(region.body)


def check_budget(kernel: Kernel, ub: UBPlan, platform) -> None:
    """A located CompilationError listing every buffer when the plan exceeds the UB budget."""
    if ub.total_bytes <= platform.ub_budget_bytes:
        return
    worst = max(ub.buffers, key=lambda b: b.total)
    rows = "; ".join(f"{b.name} ({b.position}, {b.num} x {b.bytes} B = {b.total} B)" for b in ub.buffers)
    raise CompilationError(
        worst.loc, f"the kernel needs {ub.total_bytes} bytes of UB, more than the "
        f"{platform.ub_budget_bytes} bytes {platform.name} allows: {rows}",
        hint="use a smaller block (ascdsl.planner.largest_block finds the largest that fits)")


def plan_ub(kernel: Kernel, platform) -> Kernel:
    """The UB-planning pass: checks that the kernel's plan fits ``platform``; the IR is unchanged."""
    check_budget(kernel, plan(kernel), platform)
    return kernel
