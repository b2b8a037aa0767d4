"""Program batching: P consecutive programs of a launch run as one program.

Where a kernel's program id enters only through values that are affine in it (offsets, masks, loop-
invariant control flow), batched program ``q`` of ``N`` computes what up to P consecutive programs of
the original launch of ``G`` computed (a balanced partition: ``G // N`` or one more each, so any ``N``
with ``cdiv(G, N) <= P`` is a valid grid). It takes one more scalar parameter,
:data:`PROGRAMS` (the original program count ``G``), and every load and store of a program-dependent
address is masked to the programs below it. Two forms:

- **flat** (:func:`batch_flat`): a 1-D elementwise kernel whose lanes are ``pid * BLOCK + arange(0,
  BLOCK)`` runs ``P * BLOCK`` contiguous lanes as one block (``pid * (P * BLOCK) + arange(0, P * BLOCK)``);
- **rows** (:func:`batch_rows`): every program-dependent value gains a leading axis of P (a scalar
  becomes a ``[P]`` tile, a ``[N]`` tile a ``[P, N]`` tile, a reduction of a program's tile a reduction
  along the program's axis), as the interpreter runs all programs at once.

Neither changes the order of any reduction: the batched kernel gives the unbatched one's results bit for
bit on the interpreter. :func:`refusal` says why a kernel keeps its form, at the kernel line that prevents
batching (a branch or loop bound that differs per program, atomics, prints, grid barriers, ops the rows form
does not batch). The launch path (:mod:`ascdsl.backend.batching.batchrun`) chooses P from the UB budget and the cost model.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from .. import dtypes
from ..errors import Loc, source_line
from ..ir.builder import Fresh
from ..ir.core import Block, GroupOp, Instr, Kernel, Op, Type, Value, walk

PROGRAMS = "batch_programs"
"""The batched kernel's extra scalar parameter: the original launch's program count (grid[0])."""
BATCH = "BATCH_PROGRAMS"
"""The constexpr a batched kernel records P under (its IR dump shows it)."""
SPLIT = "SPLIT_PROGRAMS"
"""The constexpr a split kernel (:func:`split_programs`) records its split under."""

_ROW_OPS = (GroupOp.ELEMENTWISE | GroupOp.SHAPE | GroupOp.REDUCE
            | frozenset({Op.LOAD, Op.STORE, Op.FOR, Op.IF, Op.YIELD, Op.PROGRAM_ID}))
"""Ops the rows form batches when program-dependent (every other program-dependent op is a refusal)."""


class NotBatchable(Exception):
    """Why a kernel cannot be batched, at the instruction that prevents it."""

    def __init__(self, loc: Loc, reason: str):
        super().__init__(reason)
        self.loc = loc
        self.reason = reason


@dataclass(frozen=True)
class Refusal:
    """The reason a kernel keeps its form and the kernel line that prevents batching."""

    loc: Loc
    reason: str

    @property
    def line(self) -> str | None:
        """The source text of the blocking line (None where the file is not readable)."""
        return source_line(self.loc)

    def __str__(self) -> str:
        text = self.line
        return f"{self.loc}: program batching does not apply: {self.reason}" + (f"\n    {text.strip()}" if text else "")


# ---------------------------------------------------------------- analysis


def _yield_of(region: Block) -> Instr | None:
    return region.body[-1] if region.body and region.body[-1].op is Op.YIELD else None


def varying(kernel: Kernel, axes: tuple[int, ...] = (0,)) -> frozenset[int]:
    """Ids of the values that differ between programs (derived from ``program_id(0)``, or from the program id
    along any of ``axes``), to a fixpoint over loop-carried values and branch results."""
    var: set[int] = set()
    while True:
        before = len(var)
        for instr in walk(kernel.body):
            if instr.op is Op.PROGRAM_ID and instr.attr("axis") in axes:
                var.update(r.id for r in instr.results)
            elif instr.op in (Op.FOR, Op.WHILE):
                body = instr.regions[-1]
                inits = instr.operands[3:] if instr.op is Op.FOR else instr.operands
                carried = body.args[1:] if instr.op is Op.FOR else body.args
                y = _yield_of(body)
                if instr.op is Op.FOR and any(v.id in var for v in instr.operands[:3]):
                    var.add(body.args[0].id)
                for i, (init, arg) in enumerate(zip(inits, carried)):
                    if init.id in var or (y is not None and y.operands[i].id in var):
                        var.add(arg.id)
                        var.add(instr.results[i].id)
                        for r in instr.regions[:-1]:  # a while's condition region
                            var.add(r.args[i].id)
            elif instr.op is Op.IF:
                for i, r in enumerate(instr.results):
                    if instr.operands[0].id in var or any(
                            (y := _yield_of(reg)) is not None and y.operands[i].id in var for reg in instr.regions):
                        var.add(r.id)
            elif any(v.id in var for v in instr.operands):
                var.update(r.id for r in instr.results)
        if len(var) == before:
            return frozenset(var)


def _grid_stride(instr: Instr, defs: dict, var: frozenset[int]) -> bool:
    """Whether ``instr`` is the persistent loop ``for i in tl.range(tl.program_id(0), n, tl.num_programs(0))``
    (``n`` the same in every program)."""
    lower, upper, step = (defs.get(v.id) for v in instr.operands[:3])
    return (instr.op is Op.FOR and lower is not None and lower.op is Op.PROGRAM_ID and step is not None
            and step.op is Op.NUM_PROGRAMS and step.attr("axis") == 0 and instr.operands[1].id not in var)


def _check_rows(kernel: Kernel, var: frozenset[int]) -> None:
    """A :class:`NotBatchable` for the first instruction the rows form cannot batch."""
    defs = {r.id: i for i in walk(kernel.body) for r in i.results}
    for instr in walk(kernel.body):
        uses = any(v.id in var for v in instr.operands)
        defines = any(r.id in var for r in instr.results)
        if instr.op in GroupOp.ATOMIC:
            raise NotBatchable(instr.loc, f"`{instr.op.value}`: atomics stay one program at a time")
        if instr.op is Op.SYNC_ALL:
            raise NotBatchable(instr.loc, "a grid barrier (sync_block_all): each program runs on a core of its own")
        if instr.op is Op.PROGRAM_ID and instr.attr("axis") != 0:
            raise NotBatchable(instr.loc, "a program id along axis 1 or 2 (only 1-D grids are batched)")
        if instr.op is Op.PRINT and uses:
            raise NotBatchable(instr.loc, "a print of a program-dependent value (the output's order would change)")
        if instr.op is Op.FOR and any(v.id in var for v in instr.operands[:3]) and not _grid_stride(instr, defs, var):
            raise NotBatchable(instr.loc, "a loop whose bounds or step differ per program")
        if instr.op is Op.IF and instr.operands[0].id in var:
            raise NotBatchable(instr.loc, "a branch on a program-dependent value (a loaded value or the program id)")
        if instr.op is Op.WHILE and (uses or defines or any(r.id in var for reg in instr.regions for r in reg.args)):
            raise NotBatchable(instr.loc, "a while loop over program-dependent values")
        if instr.op is Op.STORE and uses and instr.operands[0].id not in var:
            raise NotBatchable(instr.loc, "programs store different values at one address")
        if instr.op is Op.LOAD and uses and instr.operands[0].id not in var:
            raise NotBatchable(instr.loc, "a load whose mask differs per program at one address")
        if (uses or defines) and instr.op not in _ROW_OPS:
            raise NotBatchable(instr.loc, f"`{instr.op.value}` of a program-dependent value is not batched yet")
        if instr.op in GroupOp.REDUCE and uses and instr.attr("axis") is None and len(instr.operands[0].type.shape) > 1:
            raise NotBatchable(instr.loc, "a reduction of a whole tile of rank 2 or more to one value")


def refusal(kernel: Kernel) -> Refusal | None:
    """Why ``kernel`` cannot be batched (None if it can): the reason and the kernel line that prevents it."""
    var = varying(kernel)
    if not var:
        return Refusal(kernel.loc, "the kernel does not use tl.program_id(0)")
    try:
        _check_rows(kernel, var)
    except NotBatchable as e:
        return Refusal(e.loc, e.reason)
    return None


# ---------------------------------------------------------------- rewriting


def _span(emit: Fresh, out: list, programs: Value, loc) -> tuple[Value, Value]:
    """``(start, end)``: the original programs ``start <= g < end`` that batched program ``q`` of ``N``
    runs, a balanced partition of the ``G`` programs (``q * (G // N) + min(q, G % N)``; no product
    past ``G``, so int32 holds it)."""
    i32 = Type(dtypes.int32)
    q = emit.instr(out, Op.PROGRAM_ID, i32, (), (("axis", 0),), loc)
    n = emit.instr(out, Op.NUM_PROGRAMS, i32, (), (("axis", 0),), loc)
    base = emit.instr(out, Op.IDIV, i32, (programs, n), (), loc)
    rem = emit.instr(out, Op.MOD, i32, (programs, n), (), loc)
    q1 = emit.instr(out, Op.ADD, i32, (q, emit.instr(out, Op.CONST, i32, (), (("value", 1),), loc)), (), loc)
    start, end = (emit.instr(out, Op.ADD, i32, (emit.instr(out, Op.MUL, i32, (x, base), (), loc),
                                                 emit.instr(out, Op.MINIMUM, i32, (x, rem), (), loc)), (), loc)
                  for x in (q, q1))
    return start, end


def _with_param(kernel: Kernel, body: Block, programs: Value, p: int) -> Kernel:
    names = set(kernel.param_names)
    name = PROGRAMS
    while name in names:
        name += "_"
    return replace(kernel, param_names=(*kernel.param_names, name), constexprs=(*kernel.constexprs, (BATCH, p)),
                   body=Block((*body.args, programs), body.body))


class _Rows:
    """The rows form: program-dependent values of shape S become [P, *S]."""

    def __init__(self, kernel: Kernel, p: int, var: frozenset[int]):
        self.p, self.var, self.emit = p, var, Fresh(kernel)
        self.subst: dict[int, Value] = {}
        self.programs = self.emit.value(Type(dtypes.int32))
        self.rows = self.valid = None

    def bt(self, t: Type) -> Type:
        return Type(t.dtype, (self.p, *t.shape))

    def get(self, v: Value) -> Value:
        return self.subst.get(v.id, v)

    def lift(self, v: Value, shape: tuple[int, ...], out: list, loc, cache: dict, full: bool = False) -> Value:
        """Operand ``v`` (an original value of shape ``S``, rank at most ``len(shape)``) as a
        ``[P, *shape]`` value; a uniform scalar stays a scalar unless ``full`` (elementwise ops take
        scalar operands as they are)."""
        key = (v.id, shape, full)
        if key in cache:
            return cache[key]
        x = self.get(v)
        target = (self.p, *shape)
        if v.id in self.var:  # [P, *S] -> [P, 1, .., *S] -> [P, *shape]
            for _ in range(len(shape) - len(v.type.shape)):
                x = self.emit.instr(out, Op.EXPAND_DIMS, Type(x.type.dtype, (self.p, 1, *x.type.shape[1:])),
                                    (x,), (("axis", 1),), loc)
        elif x.type.is_scalar:
            if not full:
                return x
        else:  # [*S] -> [1, .., *S] -> [P, *shape]
            for _ in range(len(shape) + 1 - len(x.type.shape)):
                x = self.emit.instr(out, Op.EXPAND_DIMS, Type(x.type.dtype, (1, *x.type.shape)), (x,),
                                    (("axis", 0),), loc)
        if x.type.shape != target:
            x = self.emit.instr(out, Op.BROADCAST, Type(x.type.dtype, target), (x,), (), loc)
        cache[key] = x
        return x

    def mask(self, shape, out, loc, cache) -> Value:
        """``programs < G`` as a ``[P, *shape]`` bool tile."""
        return self.lift(self.valid_orig, shape, out, loc, cache, full=True)

    def masked(self, mask: Value | None, shape, out, loc, cache) -> Value:
        """An access's ``mask`` (None: none) and its programs' valid lanes, as one ``[P, *shape]`` value:
        the same value for accesses under the same mask."""
        valid = self.mask(shape, out, loc, cache)
        if mask is None:
            return valid
        key = ("and", mask.id, shape)
        if key not in cache:
            m = self.lift(mask, shape, out, loc, cache, full=True)
            cache[key] = self.emit.instr(out, Op.AND, valid.type, (m, valid), (), loc)
        return cache[key]

    def prologue(self, loc) -> list:
        out: list = []
        start, end = _span(self.emit, out, self.programs, loc)
        lanes = self.emit.instr(out, Op.ARANGE, Type(dtypes.int32, (self.p,)), (), (("start", 0), ("end", self.p)), loc)
        self.start, self.lanes = start, lanes
        self.rows = self.emit.instr(out, Op.ADD, Type(dtypes.int32, (self.p,)), (start, lanes), (), loc)
        self.valid = self.emit.instr(out, Op.LT, Type(dtypes.bool_, (self.p,)), (self.rows, end), (), loc)
        # the valid mask as an "original" varying scalar: lift() treats ids in var as [P, ...]
        self.valid_orig = Value(self.valid.id, Type(self.valid.type.dtype, ()))
        self.var = self.var | {self.valid.id}
        self.subst[self.valid.id] = self.valid
        return out

    def block(self, block: Block, cache: dict) -> Block:
        cache = dict(cache)
        out: list = []
        for instr in block.body:
            self.instr(instr, out, cache)
        return Block(tuple(self.get(a) for a in block.args), tuple(out))

    def instr(self, instr: Instr, out: list, cache: dict) -> None:
        op, loc = instr.op, instr.loc
        uses = any(v.id in self.var for v in instr.operands)
        if op is Op.PROGRAM_ID:
            self.subst[instr.result.id] = self.rows
            return
        if op is Op.NUM_PROGRAMS and instr.attr("axis") == 0:
            self.subst[instr.result.id] = self.programs
            return
        if op in (Op.FOR, Op.IF):
            self.control(instr, out, cache)
            return
        if op is Op.YIELD:
            out.append(Instr(op, (), tuple(self.get(v) for v in instr.operands), instr.attrs, (), loc))
            return
        if not uses:
            out.append(replace(instr, operands=tuple(self.get(v) for v in instr.operands),
                               regions=tuple(self.block(r, cache) for r in instr.regions)))
            return
        results = tuple(Value(r.id, self.bt(r.type)) for r in instr.results)
        for r, n in zip(instr.results, results):
            self.subst[r.id] = n
        attrs = instr.attrs
        if op in GroupOp.ELEMENTWISE:
            shape = instr.result.type.shape
            operands = tuple(self.lift(v, shape, out, loc, cache) for v in instr.operands)
        elif op is Op.EXPAND_DIMS:
            operands = (self.get(instr.operands[0]),)
            attrs = _shift_axis(attrs)
        elif op is Op.BROADCAST:
            self.subst[instr.result.id] = self.lift(instr.operands[0], instr.result.type.shape, out, loc, cache,
                                                    full=True)
            return
        elif op in GroupOp.REDUCE:
            operands = (self.get(instr.operands[0]),)
            axis = instr.attr("axis")
            attrs = tuple((k, (1 if axis is None else axis + 1 if axis >= 0 else axis) if k == "axis" else v)
                          for k, v in attrs)
        elif op is Op.LOAD:
            shape = instr.result.type.shape
            ptr = self.lift(instr.operands[0], shape, out, loc, cache, full=True)
            valid = self.masked(instr.operands[1] if instr.attr("has_mask") else None, shape, out, loc, cache)
            rest = tuple(self.lift(v, shape, out, loc, cache) for v in instr.operands[2:])
            operands = (ptr, valid, *rest)
            attrs = _set(attrs, "has_mask", True)
        elif op is Op.STORE:
            shape = instr.operands[0].type.shape
            ptr = self.lift(instr.operands[0], shape, out, loc, cache, full=True)
            value = self.lift(instr.operands[1], shape, out, loc, cache, full=True)
            valid = self.masked(instr.operands[2] if instr.attr("has_mask") else None, shape, out, loc, cache)
            operands = (ptr, value, valid)
            attrs = _set(attrs, "has_mask", True)
        else:  # _check_rows admitted nothing else
            raise NotBatchable(loc, f"`{op.value}` of a program-dependent value is not batched yet")
        out.append(Instr(op, results, operands, attrs, (), loc))

    def control(self, instr: Instr, out: list, cache: dict) -> None:
        loc = instr.loc
        results = tuple(Value(r.id, self.bt(r.type)) if r.id in self.var else r for r in instr.results)
        for r, n in zip(instr.results, results):
            self.subst[r.id] = n
        if instr.op is Op.FOR:
            body = instr.regions[0]
            inits = [self.lift(v, v.type.shape, out, loc, cache, full=True) if a.id in self.var else self.get(v)
                     for v, a in zip(instr.operands[3:], body.args[1:])]
            if instr.operands[0].id in self.var:  # a grid-stride loop: from the batch's first program
                operands = (self.start, *(self.get(v) for v in instr.operands[1:3]), *inits)
                regions = (self._grid_stride(body, self.get(instr.operands[1]), cache),)
            else:
                operands = (*(self.get(v) for v in instr.operands[:3]), *inits)
                regions = (self._carried(body, body.args[1:], cache),)
        else:
            operands = (self.get(instr.operands[0]),)
            regions = tuple(self._carried(r, instr.results, cache) for r in instr.regions)
        out.append(Instr(instr.op, results, operands, instr.attrs, regions, loc))

    def _grid_stride(self, body: Block, upper: Value, cache: dict) -> Block:
        """The body of ``for i in tl.range(pid, n, G)`` batched: its induction variable ``i`` (uniform: the
        batch's first program plus a multiple of G) gives the ``[P]`` rows ``i + lanes``; loads, stores and
        carried values take only the rows below ``n`` of the batch's own programs (a program whose loop
        has ended keeps its carried values)."""
        iv = Value(self.emit.next, body.args[0].type)
        self.emit.next += 1
        loc = body.body[0].loc if body.body else None
        out: list = []
        rows = self.emit.instr(out, Op.ADD, Type(dtypes.int32, (self.p,)), (iv, self.lanes), (), loc)
        below = self.emit.instr(out, Op.LT, Type(dtypes.bool_, (self.p,)), (rows, upper), (), loc)
        live = self.emit.instr(out, Op.AND, below.type, (below, self.valid), (), loc)
        self.subst[body.args[0].id] = rows
        outer = self.valid_orig
        self.valid_orig = Value(live.id, Type(dtypes.bool_, ()))
        self.subst[live.id] = live
        self.var = self.var | {live.id}
        try:
            inner = self._carried(Block((iv, *body.args[1:]), body.body), body.args[1:], cache, live=self.valid_orig,
                                  prefix=out)
        finally:
            self.valid_orig = outer
        return inner

    def _carried(self, region: Block, targets, cache: dict, live: Value | None = None, prefix=()) -> Block:
        """``region`` rewritten, its yield lifting each value whose target (a carried arg or result)
        is program-dependent."""
        for a in region.args:
            if a.id in self.var:
                self.subst[a.id] = Value(a.id, self.bt(a.type))
        cache = dict(cache)
        out: list = list(prefix)
        for instr in region.body:
            if instr.op is Op.YIELD:
                vals = [self.lift(v, v.type.shape, out, instr.loc, cache, full=True) if t.id in self.var
                        else self.get(v) for v, t in zip(instr.operands, targets)]
                if live is not None:  # lanes past their loop's end keep their values
                    vals = [self.emit.instr(out, Op.WHERE, new.type, (
                        self.lift(live, t.type.shape, out, instr.loc, cache, full=True), new, self.get(t)), (), instr.loc)
                        if t.id in self.var else new for new, t in zip(vals, targets)]
                out.append(Instr(Op.YIELD, (), tuple(vals), instr.attrs, (), instr.loc))
            else:
                self.instr(instr, out, cache)
        return Block(tuple(self.get(a) for a in region.args), tuple(out))


def _shift_axis(attrs):
    return tuple((k, v + 1 if k == "axis" and v >= 0 else v) for k, v in attrs)


def _set(attrs, name, value):
    return tuple((k, value if k == name else v) for k, v in attrs) + (() if any(k == name for k, _ in attrs)
                                                                     else ((name, value),))


def _first_pid_loc(kernel: Kernel) -> Loc:
    return next((i.loc for i in walk(kernel.body) if i.op is Op.PROGRAM_ID), kernel.loc)


def batch_rows(kernel: Kernel, p: int) -> Kernel:
    """The rows form of ``kernel`` for ``p`` programs per program (a :class:`NotBatchable` if it does not apply)."""
    var = varying(kernel)
    if not var:
        raise NotBatchable(kernel.loc, "the kernel does not use tl.program_id(0)")
    _check_rows(kernel, var)
    rw = _Rows(kernel, p, var)
    out = rw.prologue(_first_pid_loc(kernel))
    body = rw.block(kernel.body, {})
    return _with_param(kernel, Block(body.args, (*out, *body.body)), rw.programs, p)


# ---------------------------------------------------------------- the flat form


@dataclass(frozen=True)
class _Flat:
    """A 1-D elementwise kernel's block size and the ids of its ``pid * BLOCK`` products."""

    block: int
    starts: frozenset[int]


def _flat(kernel: Kernel, var: frozenset[int]) -> _Flat:
    """The block of a 1-D elementwise kernel whose lanes are ``pid * BLOCK + arange(0, BLOCK)`` (a
    :class:`NotBatchable` otherwise): every tile is ``[BLOCK]``; the program id enters only as
    ``pid * BLOCK`` plus uniform scalars, added to ``arange(0, BLOCK)`` and nowhere else, so every lane
    is a function of its position alone (a block's start used as data, ``x + pid * BLOCK``, is not)."""
    defs = {r.id: i for i in walk(kernel.body) for r in i.results}
    sizes = {r.type.shape for i in walk(kernel.body) for r in i.results if not r.type.is_scalar}
    if len(sizes) != 1 or len(next(iter(sizes))) != 1:
        raise NotBatchable(kernel.loc, "not a 1-D kernel of one block size")
    (block,) = next(iter(sizes))
    kind: dict[int, str] = {}  # varying scalar -> "pid" (the id, maybe cast) or "offset" (pid * BLOCK + uniform)
    starts: set[int] = set()
    uses: dict[int, list[Instr]] = {}
    for instr in walk(kernel.body):
        for v in instr.operands:
            uses.setdefault(v.id, []).append(instr)
        if instr.regions or instr.op in GroupOp.REDUCE or instr.op in GroupOp.ATOMIC or instr.op in (Op.PRINT, Op.SYNC_ALL):
            raise NotBatchable(instr.loc, f"`{instr.op.value}` in a 1-D kernel (the flat form is elementwise)")
        if instr.op is Op.PROGRAM_ID:
            if instr.attr("axis") != 0:
                raise NotBatchable(instr.loc, "a program id along axis 1 or 2 (only 1-D grids are batched)")
            kind[instr.result.id] = "pid"
            continue
        if not instr.results or not instr.result.type.is_scalar or instr.result.id not in var:
            continue
        ks = [kind.get(v.id) for v in instr.operands if v.id in var]
        if instr.op is Op.CAST and ks == ["pid"]:
            kind[instr.result.id] = "pid"
        elif instr.op is Op.MUL and ks == ["pid"] and any(
                (d := defs.get(v.id)) is not None and d.op is Op.CONST and d.attr("value") == block
                for v in instr.operands):
            kind[instr.result.id] = "offset"
            starts.add(instr.result.id)
        elif (instr.op in (Op.ADD, Op.PTR_ADD, Op.CAST) and ks == ["offset"]) or (
                instr.op is Op.SUB and kind.get(instr.operands[0].id) == "offset" and instr.operands[1].id not in var):
            kind[instr.result.id] = "offset"
        else:
            raise NotBatchable(instr.loc, "a program-dependent scalar other than `pid * BLOCK + ...`")
    lanes: set[int] = set()  # arange(0, BLOCK) and its casts
    for instr in walk(kernel.body):
        if instr.op is Op.ARANGE:
            if (instr.attr("start"), instr.attr("end")) != (0, block):
                raise NotBatchable(instr.loc, "an arange other than arange(0, BLOCK)")
            lanes.add(instr.result.id)
        elif instr.op is Op.CAST and instr.operands[0].id in lanes:
            lanes.add(instr.result.id)
    for lane in lanes:
        for use in uses.get(lane, []):
            other = [v for v in use.operands if v.id != lane]
            if use.op is Op.CAST or (use.op in (Op.ADD, Op.PTR_ADD) and len(other) == 1
                                     and kind.get(other[0].id) == "offset"):
                continue
            raise NotBatchable(use.loc, "the lanes `tl.arange(0, BLOCK)` are used other than as `pid * BLOCK + lanes`")
    for v, k in kind.items():
        if k == "pid" and any(u.op not in (Op.CAST, Op.MUL) for u in uses.get(v, [])):
            raise NotBatchable(uses[v][0].loc, "the program id is used other than as `pid * BLOCK`")
        for use in uses.get(v, []) if k == "offset" else ():
            if not use.results or (not use.result.type.is_scalar and not any(o.id in lanes for o in use.operands)):
                raise NotBatchable(use.loc, "a block's start `pid * BLOCK` is used as data, not only as "
                                            "`pid * BLOCK + lanes`")
    return _Flat(block, frozenset(starts))


def batch_flat(kernel: Kernel, p: int) -> Kernel:
    """The flat form of a 1-D elementwise kernel for ``p`` programs per program: ``P * BLOCK``
    contiguous lanes as one block (a :class:`NotBatchable` if it does not apply)."""
    var = varying(kernel)
    block = _flat(kernel, var).block
    emit = Fresh(kernel)
    programs = emit.value(Type(dtypes.int32))
    t = lambda ty: ty if ty.is_scalar else Type(ty.dtype, (p * block,))  # noqa: E731
    loc = _first_pid_loc(kernel)
    out: list = []
    first, end = _span(emit, out, programs, loc)
    left = emit.instr(out, Op.SUB, Type(dtypes.int32), (end, first), (), loc)  # programs of this batch
    bound = emit.instr(out, Op.MUL, Type(dtypes.int32), (left, emit.instr(out, Op.CONST, Type(dtypes.int32), (),
                                                                           (("value", block),), loc)), (), loc)
    lanes = emit.instr(out, Op.ARANGE, Type(dtypes.int32, (p * block,)), (), (("start", 0), ("end", p * block)), loc)
    valid = emit.instr(out, Op.LT, Type(dtypes.bool_, (p * block,)), (lanes, bound), (), loc)
    subst: dict[int, Value] = {}
    masks: dict[int, Value] = {}
    for instr in kernel.body.body:
        get = [subst.get(v.id, v) for v in instr.operands]
        results = tuple(Value(r.id, t(r.type)) for r in instr.results)
        subst.update((r.id, n) for r, n in zip(instr.results, results))
        attrs = instr.attrs
        if instr.op is Op.PROGRAM_ID:
            subst[instr.result.id] = first
            continue
        if instr.op is Op.NUM_PROGRAMS and instr.attr("axis") == 0:
            subst[instr.result.id] = programs
            continue
        if instr.op is Op.ARANGE:
            attrs = (("start", 0), ("end", p * block))
        if instr.op in (Op.LOAD, Op.STORE) and instr.operands[0].id in var:
            at = 1 if instr.op is Op.LOAD else 2
            if instr.attr("has_mask"):  # one value per mask (loads and stores under it compare equal)
                key = instr.operands[at].id
                if key not in masks:
                    masks[key] = emit.instr(out, Op.AND, valid.type, (get[at], valid), (), instr.loc)
                get[at] = masks[key]
            else:
                get.insert(at, valid)
            attrs = _set(attrs, "has_mask", True)
        out.append(Instr(instr.op, results, tuple(get), attrs, (), instr.loc))
    return _with_param(kernel, Block(kernel.body.args, tuple(out)), programs, p)


def split_programs(kernel: Kernel, s: int) -> Kernel:
    """A 1-D elementwise kernel (the flat form) with each program split into ``s`` programs of
    ``BLOCK / s`` lanes, to launch on ``s`` times the grid: program ``g`` runs the lanes
    ``g * (BLOCK / s) + arange(0, BLOCK / s)`` and ``tl.num_programs(0)`` is the original count. Every
    lane is a function of its position, so the split kernel computes what the kernel does, lane for
    lane, in pieces a launch balances over the cores more finely (a :class:`NotBatchable` where the
    flat form does not apply or ``s`` does not divide BLOCK)."""
    var = varying(kernel)
    flat = _flat(kernel, var)
    if s < 1 or flat.block % s:
        raise NotBatchable(kernel.loc, f"a block of {flat.block} lanes does not split into {s} programs")
    lanes = flat.block // s
    emit = Fresh(kernel)
    t = lambda ty: ty if ty.is_scalar else Type(ty.dtype, (lanes,))  # noqa: E731
    subst: dict[int, Value] = {}
    out: list = []
    for instr in kernel.body.body:
        loc = instr.loc
        get = tuple(subst.get(v.id, v) for v in instr.operands)
        if instr.op is Op.NUM_PROGRAMS and instr.attr("axis") == 0:
            n = emit.instr(out, Op.NUM_PROGRAMS, instr.result.type, (), instr.attrs, loc)
            split = emit.instr(out, Op.CONST, n.type, (), (("value", s),), loc)
            subst[instr.result.id] = emit.instr(out, Op.IDIV, n.type, (n, split), (), loc)
            continue
        if instr.results and instr.result.id in flat.starts:  # pid * BLOCK -> pid * (BLOCK / s)
            get = tuple(v if v.id in var else emit.instr(out, Op.CONST, v.type, (), (("value", lanes),), loc)
                        for v in get)
        attrs = tuple((k, lanes) if (instr.op, k) == (Op.ARANGE, "end") else (k, (lanes,)) if k == "shape" else (k, v)
                      for k, v in instr.attrs)
        results = tuple(Value(r.id, t(r.type)) for r in instr.results)
        subst.update((r.id, n) for r, n in zip(instr.results, results))
        out.append(Instr(instr.op, results, get, attrs, (), loc))
    return replace(kernel, constexprs=(*kernel.constexprs, (SPLIT, s)), body=Block(kernel.body.args, tuple(out)))


def flat_block(kernel: Kernel) -> int | None:
    """BLOCK of a kernel of the flat form (None for any other kernel)."""
    try:
        return _flat(kernel, varying(kernel)).block
    except NotBatchable:
        return None


def form(kernel: Kernel) -> str | None:
    """``"flat"``, ``"rows"`` or None: the form :func:`batch_programs` gives ``kernel``."""
    if flat_block(kernel) is not None:
        return "flat"
    return None if refusal(kernel) else "rows"


def batch_programs(kernel: Kernel, p: int) -> Kernel:
    """Program batching (the pass): ``kernel`` running ``p`` consecutive programs as one, in the flat
    form where it applies, else the rows form; a :class:`NotBatchable` (see :func:`refusal`) if neither."""
    return batch_flat(kernel, p) if form(kernel) == "flat" else batch_rows(kernel, p)


def batched_grid(grid: tuple[int, int, int], p: int) -> tuple[int, int, int]:
    """The fewest programs a kernel batched with ``p`` runs ``grid`` on (``cdiv(grid[0], p)``); any
    count ``N`` with ``cdiv(grid[0], N) <= p`` is a valid grid too."""
    return (-(-grid[0] // p), *grid[1:])
