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
loads them back. Vector work on both sides of one product, an operand computed in a loop over K and two
products in one kernel are located errors.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from .. import dtypes
from ..errors import CompilationError
from ..ir import Kernel, walk
from ..ir.builder import Fresh
from ..ir.core import Block, Instr, Op, Type, Value
from ..passes import run_passes
from ..passes.cleanup import dead_code
from ..platforms import Platform
from . import cube

WORKSPACE = "workspace"
"""The parameter both parts gain: the float32 GM the product goes through (the entry's ``workspace``)."""
_STORES = (Op.BLOCK_STORE, Op.STRIDED_STORE)
INT32_MAX = 2 ** 31 - 1
OVERFLOW = ("{programs} programs of {rows} x {cols} float32 products need a workspace of {elements} elements, past "
            "the int32 offsets of its tiles")
"""The error of a launch whose workspace passes int32 tile offsets (the generated tiling function's too)."""


@dataclass(frozen=True)
class Split:
    """A MIX kernel as its two parts (tile IR after the passes, each with ``workspace`` as its last
    parameter), the shape of one program's slot in the workspace (BLOCK_M x BLOCK_N of the float32 product,
    or the elements of its computed operands x 1) and which part runs first (``before``: the vector part)."""

    cube: cube.CubeKernel
    vector: Kernel
    tile: tuple[int, int]
    before: bool = False

    @property
    def tile_elements(self) -> int:
        return self.tile[0] * self.tile[1]

    @property
    def dtype(self) -> dtypes.DType:
        """The dtype of the workspace's elements."""
        return self.cube.dtype if self.before else dtypes.float32


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
def _passed(kernel: Kernel, platform: Platform) -> Kernel:
    """``kernel`` after :mod:`ascdsl.passes`, once for :func:`is_mix` and :func:`split` both."""
    return run_passes(kernel, platform)


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
    k = _passed(kernel, platform)
    prod = product(k)
    return prod is not None and (_epilogue(k, prod) is not None or bool(_computed(k, prod)))


def before(kernel: Kernel, platform: Platform) -> bool:
    """Whether MIX kernel ``kernel``'s vector work comes before its product (an operand it computes: the AIVs
    run first and flag their AIC) rather than after it (the AIC runs first and flags its AIVs)."""
    k = _passed(kernel, platform)
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


@lru_cache(maxsize=256)
def split(kernel: Kernel, platform: Platform) -> Split:
    """The cube and vector parts of MIX kernel ``kernel`` (a located error where its product does not have
    the cube form)."""
    k = _passed(kernel, platform)
    prod = product(k)
    later = next((i for i in walk(k.body) if i.op is Op.DOT and i is not prod
                  and not (prod.op is Op.FOR and any(i is d for d in walk(prod.regions[0])))), None)
    if later is not None:
        raise cube.unsupported(later.loc, "a second `tl.dot` (one product per kernel)")
    inner = [i for i in walk(prod.regions[0]) if i.op is Op.DOT] if prod.op is Op.FOR else []
    if len(inner) > 1:
        raise cube.unsupported(inner[1].loc, "a second `tl.dot` in one loop (attention's `q @ k^T` then `p @ v`: the "
                                             "cube and vector cores would exchange tiles at each step)")
    if _computed(k, prod):
        return _split_before(k, prod)
    if len(prod.results) != 1:
        raise cube.unsupported(prod.loc, "a loop over K that carries anything but one zero float32 accumulator")
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


def workspace_elements(kernel: Kernel, platform: Platform, programs: int) -> int:
    """The float32 elements (4-byte words: a workspace of 16-bit operands takes half as many) of the workspace
    a launch of MIX kernel ``kernel`` over ``programs`` needs (a located error where its tiles' offsets, int32
    scalars, would overflow)."""
    parts = split(kernel, platform)
    elements = programs * parts.tile_elements
    if elements > INT32_MAX + 1:
        if parts.before:
            raise CompilationError(parts.cube.loc, f"{programs} programs of {parts.tile[0]} {parts.dtype} elements "
                                                   f"of computed operands need a workspace of {elements} elements, "
                                                   "past the int32 offsets of its tiles",
                                   hint="use fewer programs (larger blocks)")
        raise CompilationError(parts.cube.loc, OVERFLOW.format(programs=programs, rows=parts.tile[0],
                                                               cols=parts.tile[1], elements=elements),
                               hint="use fewer programs (larger blocks)")
    return -(-elements * parts.dtype.itemsize // 4)


__all__ = ["OVERFLOW", "Split", "WORKSPACE", "before", "cube_plan", "is_mix", "product", "split",
           "workspace_elements"]
