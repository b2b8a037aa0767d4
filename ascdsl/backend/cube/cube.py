"""``tl.dot`` on the AI cube core: the tutorial matmul as a pure-cube (AIC) Ascend C class.

A kernel whose tile IR (after :mod:`ascdsl.passes`) has the Triton tutorial's form lowers here instead
of through the vector pipeline (:mod:`.select` onwards):

* scalars (program ids, offsets, bounds) computed from parameters and constexprs;
* a zero accumulator (float32 for float16, bfloat16 or float32 operands, int32 for int8), carried by a ``for``
  loop over K whose body loads two 2-D blocks ``a`` (``BLOCK_M x BLOCK_K``) and ``b`` (``BLOCK_K x BLOCK_N``,
  or ``tl.trans`` of an ``N x K`` block) from GM (masked, masked lanes zero) and yields ``tl.dot(a, b, acc)``;
* after the loop, an optional ``.to(dtype)`` of the product and a masked store of it.

Each program's output tile goes GM -> L1 (``DataCopy`` with ``Nd2NzParams``, each block as it lies in GM),
L1 -> L0A/L0B (``LoadData``, transposing a block whose K runs along its rows), ``Mmad`` into
L0C accumulating over K, L0C -> GM (``Fixpipe``, float32 -> half/bfloat16 on the way out). A product that
feeds vector work before its store is a MIX kernel (:mod:`.mix`), whose cube part has this form. What the
form does not cover is a located :class:`~ascdsl.errors.CompilationError`. The rows or the columns of every
operand block must be contiguous (of float32 ones, those along K), the rows of the stored block: literal
strides are checked here, stride parameters at launch (:func:`check_launch`); a block whose two strides are
parameters chooses its layout at run time.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator, Mapping

from ... import dtypes
from ...errors import CompilationError, Loc, source_root_in_effect
from ...ir import Kernel, walk
from ...ir.core import Block as Region, Instr, Op, Value
from ...passes import run_passes
from ...platforms import Platform
from ..render.emit import where
from ..names.naming import field_name, safe
from ..render.jinja import Located, Rendered, render_located
from .scalars import HINT, Scalars, bare, constant, defining, grouped

OPERANDS = {dtypes.float16: dtypes.float32, dtypes.bfloat16: dtypes.float32, dtypes.float32: dtypes.float32,
            dtypes.int8: dtypes.int32}
"""Operand dtypes of this lowering and the dtype ``Mmad`` accumulates each in (CANN 8.1 ``MmadCal``)."""
TRANSPOSED = frozenset({dtypes.float16, dtypes.bfloat16, dtypes.int8})
"""Operand dtypes L1 -> L0A/L0B transposes: 16 x 16 fractals by ``LoadData``, 32 x 32 squares of two int8 fractals
by ``LoadDataWithTranspose`` (as CANN 8.1's matmul does for int8); float32 blocks must run K contiguous (CANN's
matmul transposes them with ``Load3Dv2``, not lowered)."""
OUTPUTS = {(dtypes.float32, dtypes.float16): "F322F16", (dtypes.float32, dtypes.bfloat16): "F322BF16",
           (dtypes.float32, dtypes.float32): "NoQuant", (dtypes.int32, dtypes.int32): "NoQuant"}
"""The Fixpipe conversion (``QuantMode_t``) from each accumulator dtype to each stored dtype."""
SPLIT_ARCH = 220
"""The ``__CCE_AICORE__`` of the platforms with separate cube and vector cores (A2/A3) that this lowering targets."""
ROW_STRIDE_MAX = 65535
"""The largest row stride (elements) of an operand block: ``Nd2NzParams.srcDValue`` is ``uint16_t``."""
L1_BYTES, L0AB_BYTES, L0C_BYTES = 512 * 1024, 64 * 1024, 128 * 1024
"""The cube core's buffers (reference section 4: ``l1_size``, ``l0_a/b``, ``l0_c`` of the 910B inis)."""


def is_cube(kernel: Kernel) -> bool:
    """Whether ``kernel`` multiplies matrices (its lowering is this module's)."""
    return any(i.op is Op.DOT for i in walk(kernel.body))


@dataclass(frozen=True)
class Stride:
    """One stride of a GM block (elements): its C++ expression, the stride parameter it is (``None``: a
    literal or computed), its literal value (``None``: not a literal) and the axis it steps along."""

    expr: str
    param: str | None
    value: int | None
    axis: str  # "row" (the stride between rows) or "column"

    @property
    def may_be_one(self) -> bool:
        """Whether its axis may be contiguous: a literal 1, or a parameter (checked at launch)."""
        return self.value == 1 or (self.value is None and self.param is not None)

    def at(self, fields: Mapping[str, int]) -> int | None:
        """Its value at a launch (``None``: computed in the kernel)."""
        return self.value if self.value is not None else fields[field_name(self.param)] if self.param else None


@dataclass(frozen=True)
class Block:
    """One 2-D GM block (``a``, ``b`` or the stored ``c``) as the product sees it (``tl.trans`` undone): C++
    expressions of its offset, rows and columns, and how it is copied. The copy takes ``first`` as 1 (a
    contiguous axis) or, where ``either``, ``second`` when ``first`` is not 1 at run time; ``k_rows`` is the
    C++ condition under which an operand's L1 copy runs K along its rows (the block's other axis is the
    contiguous one: L1 -> L0A/L0B transposes it), ``pitch`` the copy's row stride."""

    offset: str
    rows: str
    cols: str
    rows_canon: str
    cols_canon: str
    first: Stride
    second: Stride
    either: bool
    k_rows: str
    pitch: str
    pointer: str  # the pointer parameter it accesses
    loc: Loc


@dataclass(frozen=True)
class CubeKernel:
    """The matched form of a cube kernel, ready to render."""

    kernel: Kernel
    dtype: dtypes.DType  # of a and b
    acc: dtypes.DType  # of the product in L0C
    out: dtypes.DType  # stored
    block: tuple[int, int, int]  # BLOCK_M, BLOCK_N, BLOCK_K
    depth: int  # steps of the loop over K whose A blocks one GM -> L1 copy brings in (a multiple of b_depth)
    b_depth: int  # steps of the loop over K whose B blocks one GM -> L1 copy brings in
    prologue: tuple[Located, ...]
    chunk: Located  # opens the loop over chunks of `depth` steps
    step: Located  # opens the loop over the steps of one chunk
    body: tuple[Located, ...]
    a: Block
    b: Block
    c: Block
    k: str  # the K extent of one step's product
    loc: Loc

    @property
    def products(self) -> tuple["CubeKernel", ...]:
        return (self,)


def unsupported(loc: Loc, what: str) -> CompilationError:
    """The located error for a part of a product the cube lowering does not cover (``what``)."""
    return CompilationError(loc, f"the cube lowering of `tl.dot` does not support {what} yet", hint=HINT)


def _stride(s: Scalars, v: Value | None, axis: str, loc: Loc) -> Stride:
    """The stride ``v`` (``None``: the literal 1 of a block access's inner stride)."""
    if v is None:
        return Stride("1", None, 1, axis)
    param = s.kernel.param_names[s.kernel.params.index(v)] if v in s.kernel.params else None
    value = constant(s.kernel, v)
    return Stride(bare(s.of(v, loc)), param, value, axis)


def _block(s: Scalars, instr: Instr, transposed: bool = False, operand: tuple[int, str, bool] | None = None) -> Block:
    """The 2-D block ``instr`` (a strided or block load or store) accesses, ``transposed`` by ``tl.trans``;
    an ``operand`` gives the axis K runs along (0: rows), the C++ name of its ``k_rows`` and whether L1 -> L0A/L0B
    may transpose it."""
    shape = instr.attr("shape")
    if len(shape) != 2:
        raise unsupported(instr.loc, f"a {len(shape)}-D block as a matrix operand")
    if instr.op in (Op.BLOCK_LOAD, Op.BLOCK_STORE):  # the inner stride is 1 (passes/access.py)
        _, offset, s0, e0, e1 = instr.operands[:5]
        s1 = None
    else:
        _, offset, s0, s1, e0, e1 = instr.operands[:6]
    axes = ("row", "column")[::-1 if transposed else 1]
    strides = [_stride(s, s0, axes[0], instr.loc), _stride(s, s1, axes[1], instr.loc)]
    extents = [e0, e1]
    if transposed:
        strides.reverse()
        extents.reverse()
    rows, cols = extents
    flag = ""
    if operand is None:  # the stored product: Fixpipe writes rows
        first, second, either, k_rows = strides[1], strides[0], False, "false"
        if not first.may_be_one:
            raise unsupported(instr.loc, "a store whose rows are not contiguous (its inner stride must be 1, or a "
                                         "stride parameter)")
    else:
        k_axis, flag, transposable = operand
        first, second, either, k_rows = _layout(strides[k_axis], strides[1 - k_axis], transposable, instr.loc)
    pitch = f"{flag} ? {first.expr} : {second.expr}" if either else second.expr
    pointer = s.kernel.param_names[s.kernel.params.index(instr.operands[0])]
    return Block(f"static_cast<int64_t>({bare(s.of(offset, instr.loc))})", bare(s.of(rows, instr.loc)),
                 bare(s.of(cols, instr.loc)), s.canon[rows.id], s.canon[cols.id], first, second, either, k_rows, pitch,
                 pointer, instr.loc)


def _layout(k: Stride, other: Stride, transposable: bool, loc: Loc) -> tuple[Stride, Stride, bool, str]:
    """How an operand block whose strides along K and along its other axis are ``k`` and ``other`` is copied
    (:class:`Block`'s ``first``, ``second``, ``either`` and ``k_rows``): as it lies in GM, K contiguous where it
    may be, else (``transposable``) the other axis."""
    if k.may_be_one:
        either = k.value != 1 and other.may_be_one and transposable
        return k, other, either, f"{k.expr} != 1" if either else "false"
    if other.may_be_one and transposable:
        return other, k, False, "true"
    if other.may_be_one:
        raise unsupported(loc, "a float32 operand block whose K is strided (its fractals are not transposed on "
                               "the way to L0A/L0B: give it K contiguous, e.g. B as an N x K block and `tl.trans`)")
    raise unsupported(loc, "a block whose rows and columns are both strided (one of its strides must be 1, or a "
                           "stride parameter that is 1 at launch)")



def _operand_load(instr: Instr, loads: dict[int, tuple[Instr, bool]]) -> bool:
    """Whether ``instr`` loads a block (entered in ``loads`` by its result) or transposes one loaded (its
    result entered as that load, transposed)."""
    if instr.op in (Op.STRIDED_LOAD, Op.BLOCK_LOAD):
        loads[instr.result.id] = (instr, False)
    elif instr.op is Op.PERMUTE and instr.operands[0].id in loads and not loads[instr.operands[0].id][1]:
        loads[instr.result.id] = (loads[instr.operands[0].id][0], True)
    else:
        return False
    return True



def _zero_operand(kernel: Kernel, instr: Instr) -> None:
    if instr.attr("has_other"):
        d = defining(kernel, instr.operands[-1])
        if d is None or d.op is not Op.CONST or d.attr("value") != 0:
            raise unsupported(instr.loc, "a masked operand load whose `other` is not 0 (its masked lanes would "
                                         "enter the product)")


def passed(kernel: Kernel, platform: Platform) -> Kernel:
    """Cube kernel ``kernel`` after :mod:`ascdsl.passes`; a located error on a platform whose cube and vector units
    are not separate cores (this lowering is A2's, dav-c220)."""
    if platform.arch != SPLIT_ARCH:
        dot = next(i for i in walk(kernel.body) if i.op is Op.DOT)
        raise CompilationError(dot.loc, f"`tl.dot` runs on the cube cores of the Ascend A2/A3 (dav-c220: separate "
                                        f"cube and vector cores), not on {platform.name} (dav-m{platform.arch})",
                               hint="build for an Ascend910B or Ascend910_93 platform, or run this kernel on the "
                                    "interpreter")
    barrier = next((i for i in walk(kernel.body) if i.op is Op.SYNC_ALL), None)
    if barrier is not None:  # (SyncAll<false>, the cube and vector cores together, is not rendered)
        raise unsupported(barrier.loc, "a grid barrier (sync_block_all) in its kernel")
    return run_passes(kernel, platform)


def plan(kernel: Kernel, platform: Platform) -> CubeKernel:
    """The matched form of cube kernel ``kernel`` (a located error where it does not match); its comments
    name source files as the :func:`~ascdsl.errors.source_root` in effect does."""
    return _plan(kernel, platform, source_root_in_effect())


@lru_cache(maxsize=256)
def _plan(kernel: Kernel, platform: Platform, root: str | None) -> CubeKernel:
    return match(passed(kernel, platform))  # ``root`` keys the cache: the text names files relative to it


def match(kernel: Kernel) -> CubeKernel:
    s = Scalars(kernel)
    prologue: list[Located] = []
    zeros: set[int] = set()
    loop = product = stored = dot = None
    out_of: dict[int, Value] = {}
    loads: dict[int, tuple[Instr, bool]] = {}
    for instr in kernel.body.body:
        if instr.results and all(r.type.is_scalar for r in instr.results) and not instr.regions:
            prologue += s.define(instr, 1)
        elif instr.op is Op.CONST and instr.result.type.dtype in set(OPERANDS.values()) and instr.attr("value") == 0:
            zeros.add(instr.result.id)
        elif product is None and _operand_load(instr, loads):
            pass
        elif instr.op is Op.FOR and product is None and not loads:
            loop = product = instr
        elif instr.op is Op.DOT and product is None and (not instr.attr("has_acc") or instr.operands[2].id in zeros):
            dot = product = instr  # the whole of K in one product
        elif instr.op is Op.CAST and product is not None and instr.operands[0].id == product.results[-1].id:
            out_of[instr.result.id] = instr.result
        elif instr.op in (Op.STRIDED_STORE, Op.BLOCK_STORE) and stored is None and product is not None:
            stored = instr
        else:
            raise unsupported(instr.loc, f"`{instr.op.value}` feeding the product (the cube core multiplies blocks "
                                         "loaded from GM as they are: vector work before `tl.dot` is not lowered)")
    if product is None or stored is None:
        first = next(i for i in walk(kernel.body) if i.op is Op.DOT)
        raise unsupported(first.loc, "a `tl.dot` whose product is not stored (after its loop over K)")
    body: list[Located] = []
    if loop is not None:
        (chunk, step), body, loads, dot = _loop(kernel, s, loop, zeros)
    else:
        chunk = Located(f"{{  // the whole of K in one product: {where(dot.loc)}", dot.loc, 1)
        step = Located("{", dot.loc, 2)
    if len({id(i) for i, _ in loads.values()}) != 2:
        raise unsupported(dot.loc, "operands of `tl.dot` that are not two blocks loaded from GM (in the loop over K)")
    dtype, acc, out, block, a, b, c, kk = _product(kernel, s, dot, loads, stored, {product.results[0].id, *out_of}, "")
    depth, b_depth = _depths(dtype, *block) if loop is not None else (1, 1)
    return CubeKernel(kernel, dtype, acc, out, block, depth, b_depth, tuple(prologue), chunk, step, tuple(body), a, b,
                      c, kk, dot.loc)


def _product(kernel: Kernel, s: Scalars, dot: Instr, loads: dict[int, tuple[Instr, bool]], stored: Instr,
             results: set[int], suffix: str):
    """The operand, accumulator and stored dtypes, the blocks (``a``, ``b`` and the stored ``c``) and the C++ K
    extent of product ``dot`` (its operands' loads in ``loads``) that ``stored`` stores (one of the values
    ``results``: the product or its ``.to(dtype)``); ``suffix`` names the members of its copies' layouts."""
    (a_load, a_t), (b_load, b_t) = (loads.get(v.id, (None, False)) for v in dot.operands[:2])
    if a_load is None or b_load is None or a_load is b_load:
        raise unsupported(dot.loc, "operands of `tl.dot` that are not two blocks loaded from GM (in the loop over K)")
    dtype = a_load.result.type.dtype
    if dtype not in OPERANDS or b_load.result.type.dtype != dtype:
        raise unsupported(dot.loc, f"`tl.dot` of {a_load.result.type.dtype} and {b_load.result.type.dtype} blocks "
                                   f"(this lowering takes two {' or two '.join(sorted(map(str, OPERANDS)))} blocks)")
    acc = OPERANDS[dtype]
    if {v.type.dtype for v in (dot.result, *dot.operands[2:])} != {acc}:
        raise unsupported(dot.loc, f"a {dot.result.type.dtype} product of {dtype} blocks (the cube core accumulates "
                                   f"{dtype} in {acc}: a zero {acc} accumulator)")
    for load in (a_load, b_load):
        _zero_operand(kernel, load)
    value = stored.operands[-1]
    out = value.type.dtype
    if value.id not in results:
        raise unsupported(stored.loc, "a store of anything but the product (or its `.to(dtype)`)")
    if (acc, out) not in OUTPUTS:
        raise unsupported(stored.loc, f"a {acc} product stored as {out} (Fixpipe converts it to "
                                      f"{', '.join(sorted(str(o) for a, o in OUTPUTS if a == acc))})")
    (bm, bk), (_, bn) = (v.type.shape for v in dot.operands[:2])
    _check_buffers(dot.loc, dtype, bm, bn, bk)
    transposed = dtype in TRANSPOSED
    a = _block(s, a_load, a_t, (1, f"aKRows{suffix}_", transposed))
    b = _block(s, b_load, b_t, (0, f"bKRows{suffix}_", transposed))
    c = _block(s, stored)
    if (c.rows_canon, c.cols_canon) != (a.rows_canon, b.cols_canon):
        raise unsupported(stored.loc, "a store whose mask differs from the rows of `a` and the columns of `b` (its "
                                      "rows and columns must be those of the product)")
    ka, kb = (grouped(x) for x in (a.cols, b.rows))
    kk = a.cols if a.cols_canon == b.rows_canon else f"({ka} < {kb} ? {ka} : {kb})"
    return dtype, acc, out, (bm, bn, bk), a, b, c, kk


@dataclass(frozen=True)
class Step:
    """One product of a loop of steps (:class:`CubeSteps`): its form (the whole of K, stored to the workspace),
    the cross-core flag the AIVs set once its operands they compute are in the workspace (None: it has none) and
    the flag it sets once it is stored (None: a pure-cube product, flagged by nothing)."""

    product: CubeKernel
    wait: int | None
    signal: int | None


@dataclass(frozen=True)
class Phase:
    """Products of one step of a loop of steps (:class:`CubeSteps`) that the cube core runs together: where it
    runs some a step ahead, the ``if`` that opens them and the line that binds the loop variable to their step."""

    open: Located | None
    bind: Located | None
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class CubeSteps:
    """The cube part of a loop whose steps alternate products and vector work (:func:`.mix._split_steps`): its
    scalars, the loop's header and scalar lines (each phase computes them for its step), and its phases."""

    kernel: Kernel
    prologue: tuple[Located, ...]
    header: Located
    body: tuple[Located, ...]
    phases: tuple[Phase, ...]
    loc: Loc

    @property
    def steps(self) -> tuple[Step, ...]:
        return tuple(step for phase in self.phases for step in phase.steps)

    @property
    def products(self) -> tuple[CubeKernel, ...]:
        return tuple(step.product for step in self.steps)


def match_steps(kernel: Kernel) -> CubeSteps:
    """The matched form of the cube part of a loop of steps: scalars and operand loads, then a ``for`` loop of
    scalars, operand loads (those from the workspace, the first of a product's marked with the flag it ``wait`` s
    for) and products, each stored to the workspace by a store marked with the flag it ``signal`` s. The products
    before the first that waits run a step ahead of it and those after (``q @ k^T`` of step i + 1 while the vector
    cores work on step i's): each turn of the loop runs the first ones for its step, then the others for the step
    before."""
    s = Scalars(kernel)
    prologue: list[Located] = []
    loads: dict[int, tuple[Instr, bool]] = {}
    loop = None
    for instr in _walk_products(kernel.body, s, loads, 1, prologue):
        if instr.op is Op.FOR and loop is None:
            loop = instr
        else:
            raise unsupported(instr.loc, f"`{instr.op.value}` feeding the products of a loop of steps")
    if loop is None:
        raise unsupported(kernel.loc, "a MIX kernel without its loop of steps")
    var, first, last, by = _bounds(kernel, s, loop, "steps")
    body: list[Located] = []
    steps: list[Step] = []
    dot = None
    for instr in _walk_products(loop.regions[0], s, loads, 2, body):
        if instr.op is Op.DOT and dot is None:
            dot = instr
        elif instr.op is Op.BLOCK_STORE and dot is not None and instr.attr("signal") is not None:
            dtype, acc, out, block, a, b, c, kk = _product(kernel, s, dot, loads, instr, {dot.result.id},
                                                           str(len(steps) or ""))
            opened = (Located(f"{{  // {where(dot.loc)}", dot.loc, 2), Located("{", dot.loc, 3))
            wait = next((w for w in (loads[v.id][0].attr("wait") for v in dot.operands[:2]) if w is not None), None)
            steps.append(Step(CubeKernel(kernel, dtype, acc, out, block, 1, 1, (), *opened, (), a, b, c, kk, dot.loc),
                              wait, instr.attr("signal")))
            dot = None
        elif instr.op is not Op.YIELD:
            raise unsupported(instr.loc, f"`{instr.op.value}` in a step of the loop's products")
    ahead = next((n for n, step in enumerate(steps) if step.wait is not None), 0)
    if not ahead:
        header = Located(f"for (int32_t {var} = {first}; {var} < {last}; {var} += {by}) {{  // {where(loop.loc)}",
                         loop.loc, 1)
        return CubeSteps(kernel, tuple(prologue), header, tuple(body), (Phase(None, None, tuple(steps)),), loop.loc)
    turn = s.fresh("turn")
    header = Located(f"for (int32_t {turn} = {first}; {turn} < {grouped(last)} + {by}; {turn} += {by}) {{  // "
                     f"{where(loop.loc)}: the first products a step ahead", loop.loc, 1)
    phases = (Phase(Located(f"if ({turn} < {last}) {{", loop.loc, 2),
                    Located(f"const int32_t {var} = {turn};", loop.loc, 3), tuple(steps[:ahead])),
              Phase(Located(f"if ({turn} > {first}) {{  // the others, for the step before", loop.loc, 2),
                    Located(f"const int32_t {var} = {turn} - {by};", loop.loc, 3), tuple(steps[ahead:])))
    return CubeSteps(kernel, tuple(prologue), header, tuple(body), phases, loop.loc)


def _walk_products(region: Region, s: Scalars, loads: dict[int, tuple[Instr, bool]], depth: int,
                   lines: list[Located]) -> Iterator[Instr]:
    """The instructions of ``region`` for the caller to match (its products, loops, stores), past its scalars
    (their lines appended to ``lines`` at ``depth``) and its operand loads (entered in ``loads``)."""
    for instr in region.body:
        if instr.results and all(r.type.is_scalar for r in instr.results) and not instr.regions:
            lines += s.define(instr, depth)
        elif not _operand_load(instr, loads):
            yield instr


def _bounds(kernel: Kernel, s: Scalars, loop: Instr, what: str) -> tuple[str, str, str, str]:
    """The C++ name of ``for`` loop ``loop``'s variable (over ``what``) and its bounds and step, a positive
    constant (a located error otherwise)."""
    lo, hi, step = loop.operands[:3]
    step_def = defining(kernel, step)
    if step_def is None or step_def.op is not Op.CONST or step_def.attr("value") <= 0:
        raise unsupported(loop.loc, f"a loop over {what} whose step is not a positive constant")
    var = loop.regions[0].args[0]
    var_name = s.fresh(s.names.get(var.id, what.lower()))
    s.expr[var.id] = s.canon[var.id] = var_name
    return (var_name, *(bare(s.of(v, loop.loc)) for v in (lo, hi, step)))


def _loop(kernel: Kernel, s: Scalars, loop: Instr, zeros: set[int]):
    """The headers (over chunks of ``depth`` steps, over a chunk's steps), scalar lines, operand loads and
    product of the loop over K."""
    carried = loop.operands[3:]
    if len(carried) != 1 or carried[0].id not in zeros:
        raise unsupported(loop.loc, "a loop over K that carries anything but one zero accumulator")
    region = loop.regions[0]
    var_name, first, last, by = _bounds(kernel, s, loop, "K")
    acc = region.args[1]
    header = (Located(f"for (int32_t kChunk = {first}; kChunk < {last}; kChunk += DEPTH * {by}) {{  // {where(loop.loc)}",
                      loop.loc, 1),
              Located(f"for (int32_t {var_name} = kChunk; {var_name} < {last} && {var_name} - kChunk < DEPTH * {by}; "
                      f"{var_name} += {by}) {{", loop.loc, 2))
    body: list[Located] = []
    loads: dict[int, tuple[Instr, bool]] = {}
    dot = None
    for instr in _walk_products(region, s, loads, 3, body):
        if instr.op is Op.DOT and dot is None:
            dot = instr
        elif instr.op is Op.YIELD and dot is not None and [v.id for v in instr.operands] == [dot.result.id]:
            pass
        else:
            raise unsupported(instr.loc, f"`{instr.op.value}` in the loop over K (the loop may load two blocks and "
                                         "accumulate their product only)")
    if dot is None or len(dot.operands) != 3 or dot.operands[2].id != acc.id:
        raise unsupported(loop.loc, "a loop over K that does not accumulate `acc = tl.dot(a, b, acc)`")
    return header, body, loads, dot


def _ceil(x: int, n: int) -> int:
    return -(-x // n) * n


def _buffer_bytes(dtype: dtypes.DType, bm: int, bn: int, bk: int) -> tuple[int, int, int]:
    """The bytes of one A buffer (L1 or L0A), one B buffer (L1 or L0B) and the 4-byte L0C tile: whole
    fractals (16 rows by 32 bytes in L1/L0A/L0B, 16 x 16 in L0C), M and N whole squares of int8 (32 x 32:
    either axis of a block may run along the rows of L1, and a square fills two fractals of L0A/L0B)."""
    c0 = 32 // dtype.itemsize
    rows = max(16, c0)
    return (_ceil(bm, rows) * _ceil(bk, c0) * dtype.itemsize, _ceil(bk, c0) * _ceil(bn, rows) * dtype.itemsize,
            _ceil(bm, 16) * _ceil(bn, 16) * 4)


def _depths(dtype: dtypes.DType, bm: int, bn: int, bk: int) -> tuple[int, int]:
    """How many steps of the loop over K one GM -> L1 copy of A and one of B serve (CANN's matmul ``depthA1`` and
    ``depthB1``): B's 4 (else 2) where A's and B's blocks of that many steps fit L1 twice (double-buffered), A's the
    most of 8, 4, 2 or 1 times B's whose blocks still fit L1 twice beside B's, with rows of A up to 1 KiB; each
    step's blocks are whole fractals of K, so a step starts on a fractal of the chunk. Each row of A is one burst, K
    long where A runs K along its columns (as the tutorial's does), so a longer copy of A has fewer bursts as well
    as fewer start-ups; B's rows (N long in the tutorial's layout) are as many whatever its depth, so a longer copy
    of B saves start-ups only, and the cube's first product waits for the whole of it, which a block looping over
    its programs hides behind the last program's products (docs/performance.md, "Cube kernels")."""
    a, b, _ = _buffer_bytes(dtype, bm, bn, bk)
    if bk % (32 // dtype.itemsize):
        return 1, 1

    def fits(da: int, db: int) -> bool:
        return 2 * (da * a + db * b) <= L1_BYTES and da * bk <= 4095

    db = 4 if fits(4, 4) else 2 if fits(2, 2) else 1
    da = next(d * db for d in (8, 4, 2, 1) if d == 1 or (fits(d * db, db) and d * db * bk * dtype.itemsize <= 1024))
    return da, db


def _check_buffers(loc: Loc, dtype: dtypes.DType, bm: int, bn: int, bk: int) -> None:
    """Double-buffered L1 and L0A/L0B and one L0C tile fit the cube core (a located error otherwise)."""
    if max(bm, bn, bk) > 4095:
        raise CompilationError(loc, f"the blocks of `tl.dot` ({bm} x {bk} times {bk} x {bn}) exceed Mmad's m, n and "
                                    "k of at most 4095", hint="use smaller BLOCK sizes")
    a, b, c = _buffer_bytes(dtype, bm, bn, bk)
    for what, used, cap in (("L1", 2 * (a + b), L1_BYTES), ("L0A", 2 * a, L0AB_BYTES), ("L0B", 2 * b, L0AB_BYTES),
                            ("L0C", c, L0C_BYTES)):
        if used > cap:
            raise CompilationError(loc, f"the blocks of `tl.dot` ({bm} x {bk} times {bk} x {bn}) need {used} bytes "
                                        f"of {what}, which holds {cap}", hint="use smaller BLOCK sizes")


def check_launch(p: CubeKernel | CubeSteps, fields: Mapping[str, int]) -> None:
    """A located error where a launch's stride parameters break the assumptions of cube form ``p`` (each
    block's rows or columns contiguous, as its copy takes them; a row pitch Nd2NzParams' 16-bit ``srcDValue``
    holds)."""
    for name, block in ((name, block) for q in p.products for name, block in (("a", q.a), ("b", q.b), ("c", q.c))):
        first, second = block.first.at(fields), block.second.at(fields)
        pitch = block.second
        if first != 1 and block.either and second == 1:
            pitch = block.first
        elif first != 1 and block.either:
            raise CompilationError(block.loc, f"the cube lowering copies `{name}` with its rows or its columns "
                                              f"contiguous, but `{block.first.param}` is {first} and "
                                              f"`{block.second.param}` is {second} at this launch",
                                   hint="pass row- or column-major matrices, or run this kernel on the interpreter")
        elif first != 1:
            contiguous = "rows" if block.first.axis == "column" else "columns"
            raise CompilationError(block.loc, f"the cube lowering copies the {contiguous} of `{name}` as "
                                              f"contiguous, but `{block.first.param}` is {first} at this launch",
                                   hint=f"pass `{name}` with its {contiguous} contiguous, or run this kernel on the "
                                        "interpreter")
        value = pitch.at(fields)
        if pitch.param is not None and not 0 <= value <= ROW_STRIDE_MAX:
            raise CompilationError(block.loc, f"the {pitch.axis} stride `{pitch.param}` of `{name}` is {value} at "
                                              f"this launch; the cube's copies take row pitches up to "
                                              f"{ROW_STRIDE_MAX} elements (Nd2NzParams.srcDValue is 16-bit)",
                                   hint="run this kernel on the interpreter")


def render_class(p: CubeKernel | CubeSteps, class_name: str, struct: str) -> Rendered:
    """The AIC class of cube form ``p`` (constructed by the entry as the vector classes are): one product per
    program, or a loop of steps whose products wait for and set cross-core flags."""
    kernel = p.kernel
    first = p.products[0]
    for q in p.products:
        if (q.dtype, q.acc, q.out, q.c.pointer) != (first.dtype, first.acc, first.out, first.c.pointer):
            raise unsupported(q.loc, "products of different dtypes in one loop of steps")
    a_bytes, b_bytes, c_bytes = (max(x) for x in zip(*(_buffer_bytes(q.dtype, *q.block) for q in p.products)))
    a1_bytes = max(_buffer_bytes(q.dtype, q.block[0], q.block[1], q.depth * q.block[2])[0] for q in p.products)
    b1_bytes = max(_buffer_bytes(q.dtype, q.block[0], q.block[1], q.b_depth * q.block[2])[1] for q in p.products)
    gm = {n: f"{safe(n).removesuffix('_ptr').rstrip('_')}Gm" for n, v in zip(kernel.param_names, kernel.params)
          if isinstance(v.type.dtype, dtypes.PointerType)}
    pointers = [{"param": safe(n), "name": gm[n], "cpp": v.type.dtype.element_ty.cpp}
                for n, v in zip(kernel.param_names, kernel.params) if n in gm]
    phases = p.phases if isinstance(p, CubeSteps) else (Phase(None, None, (Step(p, None, None),)),)
    steps = [step for phase in phases for step in phase.steps]
    products = [{"a": q.a, "b": q.b, "c": q.c, "k": q.k, "chunk": q.chunk, "step": q.step, "body": q.body,
                 "block": q.block, "suffix": str(n or ""),
                 "stores": f"{grouped(q.c.rows)} > 0 && {grouped(q.c.cols)} > 0",  # any valid row and column
                 "a_gm": gm[q.a.pointer], "b_gm": gm[q.b.pointer], "a_where": where(q.a.loc), "b_where": where(q.b.loc),
                 "c_where": where(q.c.loc), "wait": step.wait, "signal": step.signal}
                for n, (step, q) in enumerate((step, step.product) for step in steps)]
    models = iter(products)
    loop = isinstance(p, CubeSteps)
    phases = [{"open": phase.open, "bind": phase.bind, "pad": " " * (8 * loop + 4 * (phase.open is not None)),
               "products": [next(models) for _ in phase.steps]} for phase in phases]
    return render_located(
        "cube_class.cpp.j2", class_name=class_name, struct=struct, kernel_name=kernel.name,
        constexprs=", ".join(f"{n}={v}" for n, v in kernel.constexprs), where=where(kernel.loc), pointers=pointers,
        T=first.dtype.cpp, squares=first.dtype.itemsize == 1, acc=first.acc.cpp, out=first.out.cpp,
        quant=OUTPUTS[first.acc, first.out], a_bytes=a_bytes, b_bytes=b_bytes, c_bytes=c_bytes,
        a1_bytes=a1_bytes, b1_bytes=b1_bytes, a_fractals=a_bytes // 512, b_fractals=b_bytes // 512,
        depth=max(q.depth for q in p.products), b_depth=max(q.b_depth for q in p.products),
        prologue=p.prologue, header=p.header if loop else None,
        body=p.body if loop else (), products=products, phases=phases, c_gm=gm[first.c.pointer],
        dot_where=where(p.loc), mmad=Located(f"Mmad(c1, a2, b2, params);  // {where(p.loc)}", p.loc, 1))
