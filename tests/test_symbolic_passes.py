"""The tile-IR passes (``passes.run_passes``: ``carried_offsets``, ``block_accesses``, ``common_scalars``) run on
a kernel compiled for ``Symbol`` s (issue 25, step 3 of the "Symbolic tile extents" plan in docs/design.md):
its block extents, offsets and strides are polynomials of the symbols that, at any admitted values, give the
IR the passes make of the kernel compiled for those values; where the symbols' domains do not decide what the
passes would do at each value, they raise ``Undecided`` (the caller compiles with values)."""
from __future__ import annotations

from pathlib import Path

import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl.backend.cube.cube import is_cube
from ascdsl.ir import GroupOp, Op, dump, parse, walk
from ascdsl.ir.symbol import Ceil, Poly, Symbol, Undecided
from ascdsl.ir.treemap import tree_map
from ascdsl.build import case_kernels
from ascdsl.op import load_operators
from ascdsl.opbuild import jit_functions
from ascdsl.passes import run_passes
from ascdsl.platforms import get_platform
from tests.test_lift_differential import add_row_kernel, softmax_kernel
from tests.test_symbolic_frontend import copy_kernel

F32 = tl.pointer_type(tl.float32)
F16 = tl.pointer_type(tl.float16)
I32 = tl.int32
BLOCK = Symbol("BLOCK", 8, 8, 4096)
ROWS = Symbol("ROWS", 8, 8, 256)


@ascdsl.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, (tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m)) * 2.0, mask=m)


@ascdsl.jit
def exp_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.exp(tl.load(x_ptr + offs)))


@ascdsl.jit
def second_half_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """The symbol in a tile's offset (``+ BLOCK``) and in a product with the program id."""
    offs = tl.arange(0, BLOCK) + BLOCK + tl.program_id(0) * (2 * BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@ascdsl.jit
def halves_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr, PARTS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK // PARTS) * PARTS
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2.0)


@ascdsl.jit
def column_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    """A stride of the symbol, and a term ``pid * 3 * BLOCK``: a value id times a coefficient of symbols."""
    offs = (tl.program_id(0) * 3 + tl.arange(0, BLOCK)) * BLOCK
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


@ascdsl.jit
def chunks_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """A loop of the symbol's step advancing an offset tile (``carried_offsets``)."""
    offs = tl.arange(0, BLOCK)
    for i in range(0, n, BLOCK):
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n - i), mask=offs < n - i)
        offs += BLOCK


@ascdsl.jit
def pointers_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """A loop of the symbol's step advancing two pointer tiles."""
    x = x_ptr + tl.arange(0, BLOCK)
    out = out_ptr + tl.arange(0, BLOCK)
    for _ in range(0, n, BLOCK):
        tl.store(out, tl.load(x))
        x += BLOCK
        out += BLOCK


@ascdsl.jit
def bounded_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    """A mask whose bound is of the symbol: ``i < BLOCK - 4``."""
    offs = tl.arange(0, BLOCK)
    m = offs < BLOCK - 4
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m, other=1.0), mask=m)


@ascdsl.jit
def squares_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * (BLOCK * BLOCK) + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


ELEMENTWISE = {  # the 1-D elementwise form: block loads, elementwise ops, block stores
    "copy": (copy_kernel, (F32, F32, I32), {}),
    "add": (add_kernel, (F32, F32, F32, I32), {}),
    "exp_f16": (exp_kernel, (F16, F16), {}),
    "second_half": (second_half_kernel, (F32, F32, I32), {}),
    "halves": (halves_kernel, (F32, F32), {"PARTS": 2}),
    "column": (column_kernel, (F32, F32), {}),
    "chunks": (chunks_kernel, (F32, F32, I32), {}),
    "pointers": (pointers_kernel, (F32, F32, I32), {}),
    "bounded": (bounded_kernel, (F32, F32), {}),
    "squares": (squares_kernel, (F32, F32), {}),
}
BLOCKS = (8, 16, 40, 1000, 4096)  # the low end, the next value, others, the high end


def _kernel(fn, args, constexprs):
    (kernel,) = fn.specialize(*args, **constexprs).kernels
    return kernel


def _at(kernel, values: dict):
    """``kernel`` with every symbol at its value: each polynomial (and rounded size) evaluated, each symbolic
    constexpr its value."""
    def value(x):
        if isinstance(x, (Poly, Ceil)):
            return x.at(values)
        return values[x.name] if isinstance(x, Symbol) else None
    return tree_map(kernel, before=value)


def _differential(fn, args, fixed: dict, symbols: dict, points: list[dict]):
    symbolic = run_passes(_kernel(fn, args, {**fixed, **symbols}))
    for values in points:
        assert _at(symbolic, values) == run_passes(_kernel(fn, args, {**fixed, **values})), values
    return symbolic


def _symbolic_shape(kernel) -> bool:
    return any(isinstance(d, Poly) for i in walk(kernel.body) for r in i.results for d in r.type.shape)


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_the_passes_on_a_symbolic_kernel_give_what_they_give_at_each_value(name):
    fn, args, fixed = ELEMENTWISE[name]
    assert _symbolic_shape(_differential(fn, args, fixed, {"BLOCK": BLOCK}, [{"BLOCK": b} for b in BLOCKS]))


@pytest.mark.parametrize("fn", [add_row_kernel, softmax_kernel], ids=lambda fn: fn.__name__)
def test_two_dimensional_tiles_of_two_symbols_too(fn):
    """Points where ``ROWS != BLOCK``: where they coincide, the kernel compiled for values shares the one
    constant of both (``common_scalars``), which the symbolic kernel keeps apart."""
    args = (F32, F32, F32, I32) if fn is add_row_kernel else (F16, F16, I32)
    points = [{"ROWS": r, "BLOCK": b} for r, b in [(8, 16), (16, 8), (24, 4096), (256, 40)]]
    assert _symbolic_shape(_differential(fn, args, {}, {"ROWS": ROWS, "BLOCK": BLOCK}, points))


def test_a_block_copy_s_shape_and_extent_are_of_the_symbol():
    kernel = run_passes(_kernel(copy_kernel, (F32, F32, I32), {"BLOCK": BLOCK}))
    accesses = [i for i in walk(kernel.body) if i.op in (Op.BLOCK_LOAD, Op.BLOCK_STORE)]
    assert [i.op for i in accesses] == [Op.BLOCK_LOAD, Op.BLOCK_STORE]
    assert all(i.attr("shape") == (Poly.var(BLOCK),) for i in accesses)
    defs = {r.id: i for i in walk(kernel.body) for r in i.results}
    extent = defs[accesses[0].operands[2].id]  # min(max(n - pid * BLOCK, 0), BLOCK)
    assert extent.op is Op.MINIMUM and defs[extent.operands[1].id].attr("value") == Poly.var(BLOCK)
    text = dump(kernel)
    assert 'block_load %0, %5, %18, %11 {shape = [symint("BLOCK")], has_other = true} : tile<(BLOCK)xf32>' in text
    (parsed,) = parse(text).kernels
    assert parsed.body == kernel.body and dump(parsed) == text


def test_a_loop_of_the_symbol_s_step_carries_no_offset():
    kernel = run_passes(_kernel(pointers_kernel, (F32, F32, I32), {"BLOCK": BLOCK}))
    (loop,) = [i for i in walk(kernel.body) if i.op is Op.FOR]
    assert not loop.results and len(loop.regions[0].args) == 1  # only the induction variable
    assert {i.op for i in walk(loop.regions[0])} >= {Op.IDIV, Op.BLOCK_LOAD, Op.BLOCK_STORE}


@ascdsl.jit
def signed_stride_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, 8) * (64 - BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


@ascdsl.jit
def eighths_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK // 8) * 8
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


@ascdsl.jit
def stepped_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, 8)
    for i in range(0, n, BLOCK - 64):
        tl.store(out_ptr + i + offs, tl.load(x_ptr + i + offs))


@ascdsl.jit
def block_shape_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    src = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (BLOCK,), (0,))
    tl.store(out_ptr + tl.arange(0, BLOCK), tl.load(src, boundary_check=(0,)))


@ascdsl.jit
def advanced_kernel(x_ptr, out_ptr, n, BY: tl.constexpr, STEP: tl.constexpr):
    src = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (8,), (0,))
    for i in range(0, n, STEP):
        tl.store(out_ptr + i + tl.arange(0, 8), tl.load(src, boundary_check=(0,)))
        src = tl.advance(src, (BY,))


@pytest.mark.parametrize("fn,args,constexprs,why", [
    # a stride of 56 at BLOCK = 8, none at 64 (a broadcast access: an error), negative from 72 (an error)
    (signed_stride_kernel, (F32, F32), {"BLOCK": BLOCK}, "not decide - BLOCK \\+ 64 > 0"),
    # one lane at BLOCK = 8 (a block copy), a strided copy from 16
    (eighths_kernel, (F32, F32), {"BLOCK": BLOCK}, "not decide 1/8 \\* BLOCK - 1 > 0"),
    # a loop step that is 0 at BLOCK = 64 (an error there)
    (stepped_kernel, (F32, F32, I32), {"BLOCK": BLOCK}, "not decide BLOCK - 64 > 0"),
    # block pointers are of constexpr shapes; a loop recomputes those it advances by constexprs from its
    # induction variable (a division by its step)
    (block_shape_kernel, (F32, F32, I32), {"BLOCK": BLOCK}, "extent in the block_shape of a block pointer"),
    (advanced_kernel, (F32, F32, I32), {"BY": BLOCK, "STEP": 8}, "extent in the advance offsets of a block pointer"),
    (advanced_kernel, (F32, F32, I32), {"BY": 8, "STEP": BLOCK}, "a block pointer a loop of a run-time tile extent's"),
], ids=["signed_stride", "one_lane_or_strided", "zero_step", "block_shape", "advanced_by_symbol", "symbol_step"])
def test_what_the_domain_does_not_decide_is_undecided(fn, args, constexprs, why):
    with pytest.raises(Undecided, match=why):
        run_passes(_kernel(fn, args, constexprs))


def test_where_it_is_undecided_the_kernels_compiled_for_values_differ_in_form():
    def accesses(block: int) -> list[Op]:
        kernel = run_passes(_kernel(eighths_kernel, (F32, F32), {"BLOCK": block}))
        return [i.op for i in walk(kernel.body) if i.op in GroupOp.MEMORY]
    assert accesses(8) == [Op.BLOCK_LOAD, Op.BLOCK_STORE]
    assert accesses(16) == [Op.STRIDED_LOAD, Op.STRIDED_STORE]


def test_a_domain_that_decides_it_compiles():
    """From 16, ``BLOCK // 8`` lanes are always more than one: a strided copy at every value."""
    sixteen = Symbol("BLOCK", 8, 16, 4096)
    kernel = _differential(eighths_kernel, (F32, F32), {}, {"BLOCK": sixteen},
                           [{"BLOCK": b} for b in (16, 24, 4096)])
    assert {i.op for i in walk(kernel.body)} >= {Op.STRIDED_LOAD, Op.STRIDED_STORE}


def test_a_literal_of_symbols_that_fits_int32_at_some_values_only_is_undecided():
    """``BLOCK * BLOCK`` is an int32 literal up to 46340, no int32 from 46344 (an error next to the int32
    program id): its dtype is no one thing on ``BLOCK``'s domain."""
    assert _kernel(squares_kernel, (F32, F32), {"BLOCK": BLOCK})  # to 4096: always int32
    with pytest.raises(Undecided, match="do not decide whether int32 holds BLOCK \\* BLOCK"):
        _kernel(squares_kernel, (F32, F32), {"BLOCK": Symbol("BLOCK", 8, 8, 1 << 20)})


OPS = load_operators([Path(__file__).parent.parent / "ops"])


def int_constexprs(op, vector_only: bool = False):
    """``(kernel, fn, types, constexprs, name, others)`` for each int constexpr ``name`` that is a positive
    multiple of 8 of each kernel ``ascdsl build`` compiles for the op (once per kernel, types and constexprs;
    the cube's kernels left out with ``vector_only``); ``others`` are the other int constexprs' values."""
    fns = jit_functions(op)
    seen = set()
    for kernel in case_kernels(op, get_platform()):
        if vector_only and is_cube(kernel):
            continue
        fn, types, consts = fns[kernel.name], [p.type.dtype for p in kernel.params], dict(kernel.constexprs)
        for name, value in consts.items():
            key = (kernel.name, tuple(types), tuple(consts.items()), name)
            if type(value) is not int or value <= 0 or value % 8 or key in seen:
                continue
            seen.add(key)
            yield kernel, fn, types, consts, name, {v for n, v in consts.items() if n != name and type(v) is int}


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_every_int_constexpr_of_the_ops_kernels_as_a_symbol(op):
    """Each kernel ``ascdsl build`` compiles for the op, with each int constexpr that is a multiple of 8 made a
    symbol of the multiples of 8 (the others at their values), gives at 8, 16, its own value and 4096 what the
    kernel compiled for that value gives (values another constexpr has are left out: the kernel compiled for
    them shares the one constant of both)."""
    extents = 0
    for kernel, fn, types, consts, name, others in int_constexprs(op):
        value = consts[name]
        points = [{name: v} for v in sorted({8, 16, value, 4096} - others)]
        symbol = Symbol(name, 8, 8, max(value, 4096))
        extents += _symbolic_shape(_differential(fn, types, consts, {name: symbol}, points))
    assert extents, f"{op.name}: no tile extent of a symbol"
