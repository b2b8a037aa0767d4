"""MIX kernels: ``tl.dot`` on the AI cube core, the vector work after (or before) it on the AI vector cores
(issue 26).

A kernel whose product has the cube form (:mod:`.cube`) but whose product feeds vector work before it is
stored (a bias, an activation, a scale) is split, in tile IR after :mod:`ascdsl.passes`, into two kernels
over the same parameters plus a float32 pointer ``workspace`` (:func:`split`):

* the *cube part*: what the product needs, the product, and a store of its float32 tile (the lanes of the
  rows of ``a`` and the columns of ``b``) to ``workspace + linear program id * BLOCK_M * BLOCK_N`` with row
  stride ``BLOCK_N``; it lowers as a cube class (Fixpipe without conversion, ``NoQuant``);
* the *vector part*: the kernel with the product replaced by a load of that tile from the workspace (lanes
  outside those rows and columns 0), then its own epilogue and stores; it lowers as a vector class.

Run one after the other (the interpreter can), they store what the kernel stores. The generated kernel is
``KERNEL_TYPE_MIX_AIC_1_2``: the AIC runs the cube part over its block's programs and sets a cross-core
flag; each of its two AIVs waits for it and runs the vector part over half of those programs.

A kernel that computes an operand of one ``tl.dot`` over the whole of K (attention's ``p @ v``) splits the
other way (:func:`_split_before`): the vector part computes the operands and stores their tiles to the
workspace, the AIVs run it first and set a flag, and the AIC waits for both and runs the cube part, which
loads them back. Vector work on both sides of one product, an operand computed in a loop over K and
two products in one kernel outside a loop are located errors.

A loop whose steps hold several products with vector work between them (attention forward) splits per step
(:func:`_split_steps`): the AIC and its AIVs take turns at each step, passing tiles through rings of workspace
slots with cross-core flags inside their loops (``KERNEL_TYPE_MIX_AIC_1_2`` still; both AIVs run every program
of their AIC).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ... import dtypes
from ...errors import CompilationError, source_root_in_effect
from ...ir import Kernel, walk
from ...ir.builder import Fresh
from ...ir.core import Block, Instr, Op, Type, Value
from ...passes.cleanup import dead_code
from ...platforms import Platform
from . import cube

WORKSPACE = "workspace"
"""The parameter both parts gain: the float32 GM the product goes through (the entry's ``workspace``)."""
WORKSPACE16 = "workspace16"
"""The second parameter of both parts of a loop of steps: the same GM as 16-bit elements (the operands the AIVs
compute)."""
SLOTS = 2
"""The slots of each tile a loop of steps passes through the workspace: the step's parity picks one, so the AIC
may fill one while the AIVs read the other (ping-pong)."""
_STORES = (Op.BLOCK_STORE, Op.STRIDED_STORE)
INT32_MAX = 2 ** 31 - 1
OVERFLOW = ("{programs} programs of {rows} x {cols} float32 products need a workspace of {elements} elements, past "
            "the int32 offsets of its tiles")
"""The error of a launch whose workspace passes int32 tile offsets (the generated tiling function's too)."""


@dataclass(frozen=True)
class Split:
    """A MIX kernel as its two parts (tile IR after the passes, each with ``workspace`` as its last
    parameter, a loop of steps with ``workspace16`` after it), the shape of one program's slot in the workspace
    (BLOCK_M x BLOCK_N of the float32 product, the elements of its computed operands x 1, or a loop of steps'
    16-bit elements x 1), which part runs first (``before``: the vector part) and, for a loop of steps
    (:func:`_split_steps`: the cores take turns at each step), the 16-bit dtype its slot counts in."""

    cube: cube.CubeKernel | cube.CubeSteps
    vector: Kernel
    tile: tuple[int, int]
    before: bool = False
    steps: dtypes.DType | None = None

    @property
    def tile_elements(self) -> int:
        return self.tile[0] * self.tile[1]

    @property
    def dtype(self) -> dtypes.DType:
        """The dtype of the workspace's elements."""
        if self.steps is not None:
            return self.steps
        return self.cube.dtype if self.before else dtypes.float32

    @property
    def workspaces(self) -> tuple[str, ...]:
        """The workspace parameters of both parts (each the entry's ``workspace``)."""
        return (WORKSPACE, WORKSPACE16) if self.steps is not None else (WORKSPACE,)


def product(kernel: Kernel) -> Instr | None:
    """The top-level instruction of ``kernel`` (after the passes) that computes its product: the loop over
    K whose body accumulates a ``tl.dot``, or a ``tl.dot``."""
    return next((i for i in kernel.body.body if i.op is Op.DOT
                 or (i.op is Op.FOR and any(d.op is Op.DOT for d in walk(i.regions[0])))), None)


def _cone(body: Block, instr: Instr) -> set[int]:
    """The ``id`` of every top-level instruction of ``body`` that ``instr`` depends on."""
    defs = {r.id: i for i in body.body for r in i.results}
    todo, seen = [instr], set()
    while todo:
        i = todo.pop()
        used = [v for d in (i, *(x for r in i.regions for x in walk(r))) for v in d.operands]
        for v in used:
            d = defs.get(v.id)
            if d is not None and id(d) not in seen:
                seen.add(id(d))
                todo.append(d)
    return seen


def _scalar(instr: Instr) -> bool:
    return bool(instr.results) and all(r.type.is_scalar for r in instr.results) and not instr.regions


@lru_cache(maxsize=256)
def _epilogue(k: Kernel, prod: Instr) -> Instr | None:
    """The first top-level instruction of ``k`` (after the passes) that is vector work on the product
    ``prod`` computes: anything but one store of it or of its cast to a dtype Fixpipe converts to."""
    cone, out, stored = _cone(k.body, prod), {prod.results[0].id}, False
    for i in k.body.body:
        if i is prod or id(i) in cone or _scalar(i):
            continue
        if (i.op is Op.CAST and i.operands[0].id == prod.results[0].id
                and (prod.results[0].type.dtype, i.result.type.dtype) in cube.OUTPUTS):
            out.add(i.result.id)
        elif i.op in _STORES and i.operands[-1].id in out and not stored:
            stored = True
        else:
            return i
    return None


def _computed(k: Kernel, prod: Instr) -> list[tuple[int, Value]]:
    """The operands (index in ``tl.dot``, value) of top-level ``tl.dot`` ``prod`` the kernel computes: neither
    blocks loaded from GM nor ``tl.trans`` of one (none for a loop over K)."""
    if prod.op is not Op.DOT:
        return []
    defs = {r.id: i for i in k.body.body for r in i.results}

    def loaded(v: Value) -> bool:
        d = defs.get(v.id)
        if d is not None and d.op is Op.PERMUTE:
            d = defs.get(d.operands[0].id)
        return d is not None and d.op in (Op.BLOCK_LOAD, Op.STRIDED_LOAD)

    return [(n, v) for n, v in enumerate(prod.operands[:2]) if not loaded(v)]


@lru_cache(maxsize=256)
def is_mix(kernel: Kernel, platform: Platform) -> bool:
    """Whether ``kernel`` multiplies matrices and does vector work besides the cube form's (anything but
    one store of the product or of its cast to a dtype Fixpipe converts to, or an operand of a ``tl.dot``
    it computes): the product or the operand goes through a workspace."""
    if not cube.is_cube(kernel):
        return False
    k = cube.passed(kernel, platform)
    prod = product(k)
    return prod is not None and (_epilogue(k, prod) is not None or bool(_computed(k, prod)) or _steps(prod))


def _steps(prod: Instr) -> bool:
    """Whether the product ``prod`` is a loop whose steps hold more than one ``tl.dot`` (:func:`_split_steps`)."""
    return prod.op is Op.FOR and sum(i.op is Op.DOT for i in walk(prod.regions[0])) > 1


def before(kernel: Kernel, platform: Platform) -> bool:
    """Whether MIX kernel ``kernel``'s vector work comes before its product (an operand it computes: the AIVs
    run first and flag their AIC) rather than after it (the AIC runs first and flags its AIVs)."""
    k = cube.passed(kernel, platform)
    return bool(_computed(k, product(k)))


def cube_plan(kernel: Kernel, platform: Platform) -> cube.CubeKernel:
    """The cube form ``kernel``'s product runs as: its own (a pure-cube kernel) or its split's cube part."""
    return split(kernel, platform).cube if is_mix(kernel, platform) else cube.plan(kernel, platform)


def _extents(access: Instr) -> tuple[Value, ...]:
    """The extent (a scalar) of each dimension of block load or store ``access``."""
    rank = len(access.attr("shape"))
    first = 2 + (rank - 1 if access.op in (Op.BLOCK_LOAD, Op.BLOCK_STORE) else rank)
    return access.operands[first:first + rank]


def _operands(k: Kernel, prod: Instr) -> tuple[Instr, Value, Value, Block | None]:
    """The ``tl.dot`` of ``prod``, the extents of its product's rows and columns (those of the loads of its
    operands, ``tl.trans`` undone) and the loop body they are in (None: the top level)."""
    region = prod.regions[0] if prod.op is Op.FOR else None
    scope = region.body if region is not None else k.body.body
    dot = prod if region is None else next((i for i in region.body if i.op is Op.DOT), None)
    if dot is None:
        raise cube.unsupported(prod.loc, "a `tl.dot` inside a nested region of the loop over K")
    defs = {r.id: i for i in scope for r in i.results}
    operands = [defs.get(v.id) for v in dot.operands[:2]]
    transposed = [x is not None and x.op is Op.PERMUTE for x in operands]
    a, b = (defs.get(x.operands[0].id) if t else x for x, t in zip(operands, transposed))
    for x in (a, b):
        if x is not None and x.op not in (Op.BLOCK_LOAD, Op.STRIDED_LOAD):
            raise cube.unsupported(x.loc, f"an operand of `tl.dot` computed by `{x.op.value}` (the cube core "
                                          "multiplies blocks loaded from GM as they are: vector work before the "
                                          "product is not lowered)")
        if x is None or len(x.attr("shape")) != 2:
            raise cube.unsupported(dot.loc, "operands of `tl.dot` that are not two 2-D blocks loaded from GM (in "
                                            "the loop over K)")
    return dot, _extents(a)[1 if transposed[0] else 0], _extents(b)[0 if transposed[1] else 1], region


def _hoisted(values: tuple[Value, ...], region: Block | None, fresh: Fresh, loc) -> tuple[list[Instr], list[Value]]:
    """``values`` (scalars) computed at the top level: the instructions of the loop body ``region`` they
    come from, copied with fresh results, and the copies' values."""
    if region is None:
        return [], list(values)
    local = {r.id: i for i in region.body for r in i.results}
    args = {a.id for a in region.args}
    out: list[Instr] = []
    copies: dict[int, Value] = {}

    def top(v: Value) -> Value:
        if v.id in args or (v.id in local and not _scalar(local[v.id])):
            raise cube.unsupported(loc, "a product whose rows or columns vary with the loop over K (the vector "
                                        "cores read the product's tile by the extents of `a`'s rows and `b`'s "
                                        "columns)")
        if v.id not in local:
            return v
        if v.id not in copies:
            i = local[v.id]
            operands = tuple(top(x) for x in i.operands)
            copies[v.id] = fresh.value(i.result.type)
            out.append(Instr(i.op, (copies[v.id],), operands, i.attrs, (), i.loc))
        return copies[v.id]

    return out, [top(v) for v in values]


def _tile_address(fresh: Fresh, tile: int, loc) -> tuple[list[Instr], Value, Value]:
    """Instructions computing this program's linear id and the workspace offset of its tile (``linear id *
    tile``), and those two values."""
    out: list[Instr] = []
    i32 = Type(dtypes.int32)

    def emit(op: Op, operands=(), attrs=()) -> Value:
        return fresh.instr(out, op, i32, operands, attrs, loc)

    pid = [emit(Op.PROGRAM_ID, attrs=(("axis", axis),)) for axis in range(3)]
    grid = [emit(Op.NUM_PROGRAMS, attrs=(("axis", axis),)) for axis in range(2)]
    linear = emit(Op.ADD, (pid[0], emit(Op.MUL, (grid[0], emit(Op.ADD, (pid[1], emit(Op.MUL, (grid[1], pid[2]))))))))
    return out, linear, emit(Op.MUL, (linear, emit(Op.CONST, attrs=(("value", tile),))))


def split(kernel: Kernel, platform: Platform) -> Split:
    """The cube and vector parts of MIX kernel ``kernel`` (a located error where its product does not have
    the cube form); the cube part's comments name source files as the
    :func:`~ascdsl.errors.source_root` in effect does."""
    return _split(kernel, platform, source_root_in_effect())


@lru_cache(maxsize=256)
def _split(kernel: Kernel, platform: Platform, root: str | None) -> Split:  # ``root`` keys the cache (see split)
    k = cube.passed(kernel, platform)
    prod = product(k)
    later = next((i for i in walk(k.body) if i.op is Op.DOT and i is not prod
                  and not (prod.op is Op.FOR and any(i is d for d in walk(prod.regions[0])))), None)
    if later is not None:
        raise cube.unsupported(later.loc, "a second `tl.dot` (one product per kernel)")
    if _steps(prod):
        return _split_steps(k, prod)
    if _computed(k, prod):
        return _split_before(k, prod)
    if len(prod.results) != 1:
        raise cube.unsupported(prod.loc, "a loop that carries values besides one zero float32 accumulator of "
                                         "`tl.dot` (such as a running max and sum over blocks of logits) unless its "
                                         "steps hold two products, as attention's do: with one, nothing holds the "
                                         "cube core back from the workspace slots its vector cores have not read")
    dot, rows, cols, region = _operands(k, prod)
    if dot.result.type.dtype != dtypes.float32:
        raise cube.unsupported(dot.loc, f"vector work on an {dot.result.type.dtype} product (the workspace between "
                                        "the cube and vector cores holds float32)")
    bm, bn = dot.result.type.shape
    result = prod.results[0]
    fresh = Fresh(k)
    workspace = fresh.value(Type(dtypes.PointerType(dtypes.float32)))
    hoisted, (rows, cols) = _hoisted((rows, cols), region, fresh, dot.loc)
    address, linear, offset = _tile_address(fresh, bm * bn, dot.loc)
    stride = fresh.instr(address, Op.CONST, Type(dtypes.int32), (), (("value", bn),), dot.loc)
    zero = fresh.instr(address, Op.CONST, Type(dtypes.float32), (), (("value", 0.0),), dot.loc)
    operands = (workspace, offset, stride, rows, cols)
    store = Instr(Op.BLOCK_STORE, (), (*operands, result), (("shape", (bm, bn)),), (), dot.loc)
    load = Instr(Op.BLOCK_LOAD, (result,), (*operands, zero), (("shape", (bm, bn)), ("has_other", True)), (),
                 dot.loc)
    params = (*k.params, workspace)
    names = (*k.param_names, WORKSPACE)
    cone = _cone(k.body, prod)
    before = k.body.body[:k.body.body.index(prod)]
    cube_body = (*(i for i in before if id(i) in cone), prod, *hoisted, *address, store)
    vector_body = tuple(x for i in k.body.body for x in ((*hoisted, *address, load) if i is prod else (i,)))
    hints = (*k.names, (linear.id, "linear_pid"), (offset.id, "workspace_offset"))
    part = Kernel(k.name, names, k.constexprs, Block(params, ()), k.loc, hints, k.poison)
    return Split(cube.match(dead_code(part.with_body(Block(params, cube_body)))),
                 dead_code(part.with_body(Block(params, vector_body))), (bm, bn))


def _split_before(k: Kernel, prod: Instr) -> Split:
    """:func:`split` of a kernel whose top-level ``tl.dot`` ``prod`` has operands it computes: the vector part
    computes them (what they depend on before the product) and stores each whole tile to the workspace (the
    operand's dtype, ``workspace + linear program id * slot``, a then b, row-major); the cube part loads them
    from there, ``a``'s rows and ``b``'s columns those of the stored product, and stores the product as a
    pure-cube kernel does."""
    after = _epilogue(k, prod)
    if after is not None:
        raise cube.unsupported(after.loc, f"`{after.op.value}` after a product of an operand the kernel computes "
                                          "(vector work before `tl.dot` or after it, not both)")
    computed = _computed(k, prod)
    dtype = computed[0][1].type.dtype
    if dtype not in cube.OPERANDS or any(v.type.dtype != dtype for _, v in computed):
        raise cube.unsupported(prod.loc, f"a computed {dtype} operand of `tl.dot` (the cube core multiplies "
                                         f"{' or '.join(sorted(map(str, cube.OPERANDS)))} blocks: `.to()` it)")
    stored = next((i for i in k.body.body if i.op in _STORES and i.operands[-1].type.shape == prod.result.type.shape),
                  None)
    if stored is None:
        raise cube.unsupported(prod.loc, "a `tl.dot` whose product is not stored")
    fresh = Fresh(k)
    i32 = Type(dtypes.int32)
    workspace = fresh.value(Type(dtypes.PointerType(dtype)))
    slot = sum(v.type.shape[0] * v.type.shape[1] for _, v in computed)
    address, linear, offset = _tile_address(fresh, slot, prod.loc)
    defs = {r.id: i for i in k.body.body for r in i.results}
    later = k.body.body[k.body.body.index(prod) + 1:]
    hoisted = [i for i in later if _scalar(i) and id(i) in _cone(k.body, stored)]
    product_extents = _extents(stored)
    def const(value: int) -> Value:
        return fresh.instr(address, Op.CONST, i32, (), (("value", value),), prod.loc)

    stores, loads, at = [], [], offset
    for n, v in computed:
        rows, cols = v.type.shape
        whole = (const(rows), const(cols))
        extents = (product_extents[0], whole[1]) if n == 0 else (whole[0], product_extents[1])
        attrs = (("shape", (rows, cols)),)
        stores.append(Instr(Op.BLOCK_STORE, (), (workspace, at, whole[1], *whole, v), attrs, (), defs[v.id].loc))
        loads.append(Instr(Op.BLOCK_LOAD, (v,), (workspace, at, whole[1], *extents), (*attrs, ("has_other", False)),
                           (), defs[v.id].loc))
        at = fresh.instr(address, Op.ADD, i32, (at, const(rows * cols)), (), prod.loc)
    params = (*k.params, workspace)
    names = (*k.param_names, WORKSPACE)
    hints = (*k.names, (linear.id, "linear_pid"), (offset.id, "workspace_offset"))
    part = Kernel(k.name, names, k.constexprs, Block(params, ()), k.loc, hints, k.poison)
    operands = {defs[v.id] for _, v in computed}
    first = k.body.body.index(prod)
    cube_body = (*(i for i in k.body.body[:first] if i not in operands), *hoisted, *address, *loads, prod,
                 *(i for i in later if i not in hoisted))
    vector_body = (*k.body.body[:first], *address, *stores)
    return Split(cube.match(dead_code(part.with_body(Block(params, cube_body)))),
                 dead_code(part.with_body(Block(params, vector_body))), (slot, 1), True)


def _split_steps(k: Kernel, loop: Instr) -> Split:
    """:func:`split` of a loop over steps whose body alternates products and vector work (attention: ``q @ k^T``,
    the online softmax, ``p @ v``). At each step the AIC computes the i-th product into a float32 slot of the
    workspace and sets flag 2 i; the AIVs wait for it and load it (added to the accumulator of a ``tl.dot`` with
    one), and store the operands of a later product they compute (16-bit, whole) into their slots and set flag
    2 i + 1, which the AIC waits for before that product. Each tile has :data:`SLOTS` slots, chosen by the step's
    parity, at ``workspace16 + linear program id * slot`` (16-bit elements: products first, two per float32)."""
    region = loop.regions[0]
    dots = [i for i in region.body if i.op is Op.DOT]
    stray = next((i for i in walk(k.body) if i.op is Op.DOT and not any(i is d for d in dots)), None)
    if stray is not None:
        raise cube.unsupported(stray.loc, "a `tl.dot` outside the top level of the loop whose steps hold products")
    defs = {r.id: i for i in (*k.body.body, *region.body) for r in i.results}
    local = {r.id for i in region.body for r in i.results}

    def loaded(v: Value) -> tuple[Instr, bool] | None:
        d = defs.get(v.id)
        transposed = d is not None and d.op is Op.PERMUTE
        if transposed:
            d = defs.get(d.operands[0].id)
        return (d, transposed) if d is not None and d.op in (Op.BLOCK_LOAD, Op.STRIDED_LOAD) else None

    computed = [v for d in dots for v in d.operands[:2] if loaded(v) is None]
    half = computed[0].type.dtype if computed else dtypes.float16
    for dot in dots:
        if dot.result.type.dtype != dtypes.float32:
            raise cube.unsupported(dot.loc, f"vector work on an {dot.result.type.dtype} product (the workspace "
                                            "between the cube and vector cores holds float32)")
    for v in computed:
        if v.id not in local:
            raise cube.unsupported(defs[v.id].loc, "an operand of `tl.dot` in a loop of steps computed before the loop "
                                                   "(the vector cores pass the operands they compute at each step)")
        if v.type.dtype != half or half.itemsize != 2 or half not in cube.OPERANDS:
            raise cube.unsupported(defs[v.id].loc, f"a computed {v.type.dtype} operand of `tl.dot` (the vector cores "
                                                   f"pass {half} operands they compute in the loop's step)")
    fresh = Fresh(k)
    i32, f32 = Type(dtypes.int32), Type(dtypes.float32)
    ws32, ws16 = fresh.value(Type(dtypes.PointerType(dtypes.float32))), fresh.value(Type(dtypes.PointerType(half)))
    sizes = [2 * d.result.type.shape[0] * d.result.type.shape[1] for d in dots]  # 16-bit elements a slot
    sizes += [v.type.shape[0] * v.type.shape[1] for v in computed]
    slot_elements = SLOTS * sum(sizes)
    top, linear, base16 = _tile_address(fresh, slot_elements, loop.loc)

    def const(out: list, value, t: Type = i32) -> Value:
        return fresh.instr(out, Op.CONST, t, (), (("value", value),), loop.loc)

    base32 = fresh.instr(top, Op.MUL, i32, (linear, const(top, slot_elements // 2)), (), loop.loc)
    head: list[Instr] = []  # the step's slot, then each tile's offset in it
    lo, _, by = loop.operands[:3]
    iv = region.args[0]
    start = defs.get(lo.id)
    done = iv if start is not None and start.op is Op.CONST and start.attr("value") == 0 else \
        fresh.instr(head, Op.SUB, i32, (iv, lo), (), loop.loc)
    steps = fresh.instr(head, Op.IDIV, i32, (done, by), (), loop.loc)
    slot = fresh.instr(head, Op.MOD, i32, (steps, const(head, SLOTS)), (), loop.loc)
    offsets, at = [], 0
    for n, size in enumerate(sizes):
        base, units = (base32, 2) if n < len(dots) else (base16, 1)
        within = fresh.instr(head, Op.MUL, i32, (slot, const(head, size // units)), (), loop.loc)
        start = fresh.instr(head, Op.ADD, i32, (base, const(head, at // units)), (), loop.loc) if at else base
        offsets.append(fresh.instr(head, Op.ADD, i32, (start, within), (), loop.loc))
        at += SLOTS * size
    operand_offsets = dict(zip((v.id for v in computed), offsets[len(dots):]))
    strides = [const(head, d.result.type.shape[1]) for d in dots]
    wholes = {v.id: (const(head, v.type.shape[0]), const(head, v.type.shape[1])) for v in computed}
    cube_body, vector_body = list(head), list(head)
    for instr in region.body:
        if instr.op is not Op.DOT:
            vector_body.append(instr)
            if _scalar(instr) or instr.op in (Op.BLOCK_LOAD, Op.STRIDED_LOAD, Op.PERMUTE):
                cube_body.append(instr)
            continue
        n = dots.index(instr)
        operands, extents, waited = [], [], False
        for m, v in enumerate(instr.operands[:2]):
            rows, cols = v.type.shape
            source = loaded(v)
            if source is None:
                whole = wholes[v.id]
                ours = fresh.value(v.type)
                wait = () if waited else (("wait", 2 * n + 1),)
                waited = True
                cube_body.append(Instr(Op.BLOCK_LOAD, (ours,), (ws16, operand_offsets[v.id], whole[1], *whole),
                                       (("shape", (rows, cols)), ("has_other", False), *wait), (), defs[v.id].loc))
                operands.append(ours)
                extents.append(whole[m])
            else:
                operands.append(v)
                extents.append(_extents(source[0])[(m == 0) == source[1]])
        stores = [v for v in instr.operands[:2] if v.id in operand_offsets]
        for v in stores:
            whole = wholes[v.id]
            signal = (("signal", 2 * n + 1),) if v is stores[-1] else ()
            vector_body.append(Instr(Op.BLOCK_STORE, (), (ws16, operand_offsets[v.id], whole[1], *whole, v),
                                     (("shape", v.type.shape), *signal), (), defs[v.id].loc))
        bm, bn = instr.result.type.shape
        tile = (ws32, offsets[n], strides[n], *extents)
        product = fresh.value(instr.result.type)
        cube_body.append(Instr(Op.DOT, (product,), tuple(operands), (("has_acc", False),), (), instr.loc))
        cube_body.append(Instr(Op.BLOCK_STORE, (), (*tile, product), (("shape", (bm, bn)), ("signal", 2 * n)), (),
                               instr.loc))
        has_acc = len(instr.operands) == 3
        got = fresh.value(instr.result.type) if has_acc else instr.result
        vector_body.append(Instr(Op.BLOCK_LOAD, (got,), (*tile, const(vector_body, 0.0, f32)),
                                 (("shape", (bm, bn)), ("has_other", True), ("wait", 2 * n)), (), instr.loc))
        if has_acc:
            vector_body.append(Instr(Op.ADD, (instr.result,), (instr.operands[2], got), (), (), instr.loc))
    cube_body.append(Instr(Op.YIELD, (), (), (), (), loop.loc))
    params = (*k.params, ws32, ws16)
    names = (*k.param_names, WORKSPACE, WORKSPACE16)
    hints = (*k.names, (linear.id, "linear_pid"), (base16.id, "workspace_offset"), (slot.id, "slot"))
    part = Kernel(k.name, names, k.constexprs, Block(params, ()), k.loc, hints, k.poison)
    at_loop = k.body.body.index(loop)
    cube_loop = Instr(Op.FOR, (), loop.operands[:3], loop.attrs, (Block((iv,), tuple(cube_body)),), loop.loc)
    cube_top = (*(i for i in k.body.body[:at_loop] if _scalar(i) or i.op in (Op.BLOCK_LOAD, Op.STRIDED_LOAD,
                                                                             Op.PERMUTE)), *top, cube_loop)
    vector_loop = Instr(Op.FOR, loop.results, loop.operands, loop.attrs, (Block(region.args, tuple(vector_body)),),
                        loop.loc)
    vector_top = (*k.body.body[:at_loop], *top, vector_loop, *k.body.body[at_loop + 1:])
    return Split(cube.match_steps(dead_code(part.with_body(Block(params, cube_top)))),
                 dead_code(part.with_body(Block(params, vector_top))), (slot_elements, 1), steps=half)


def workspace_elements(kernel: Kernel, platform: Platform, programs: int) -> int:
    """The float32 elements (4-byte words: a workspace of 16-bit operands takes half as many) of the workspace
    a launch of MIX kernel ``kernel`` over ``programs`` needs (a located error where its tiles' offsets, int32
    scalars, would overflow)."""
    parts = split(kernel, platform)
    elements = programs * parts.tile_elements
    if elements > INT32_MAX + 1:
        if parts.before or parts.steps is not None:
            what = "computed operands" if parts.before else "a loop of steps' slots"
            raise CompilationError(parts.cube.loc, f"{programs} programs of {parts.tile[0]} {parts.dtype} elements "
                                                   f"of {what} need a workspace of {elements} elements, "
                                                   "past the int32 offsets of its tiles",
                                   hint="use fewer programs (larger blocks)")
        raise CompilationError(parts.cube.loc, OVERFLOW.format(programs=programs, rows=parts.tile[0],
                                                               cols=parts.tile[1], elements=elements),
                               hint="use fewer programs (larger blocks)")
    return -(-elements * parts.dtype.itemsize // 4)


__all__ = ["OVERFLOW", "SLOTS", "Split", "WORKSPACE", "WORKSPACE16", "before", "cube_plan", "is_mix", "product", "split",
           "workspace_elements"]
