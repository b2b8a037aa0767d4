"""Instruction selection (``decompose``, then ``select`` in the general form) on a kernel compiled for
``Symbol`` s (issue 25, step 4 of the "Symbolic tile extents" plan in docs/design.md): where the selector
writes an int from a tile's shape, it writes the polynomial (``kir.lit`` of a ``Poly``, a ``Ref`` extent, a
call's count), so the kernel IR, its symbols given values, is the kernel IR selection makes of the kernel
compiled for those values; every decision an extent drives is one the symbols' domains make
(``ir.symbol.equal`` / ``multiple`` / the ``Poly`` comparisons), else ``Undecided``."""
from __future__ import annotations

from pathlib import Path

import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl.backend import kir
from ascdsl.backend.lift import lift
from ascdsl.backend.names.naming import field_name, to_expr
from ascdsl.backend.render.ascendc import PIPELINE
from ascdsl.backend.selection.select import select
from ascdsl.ir.symbol import Poly, Symbol, Undecided
from ascdsl.ir.treemap import tree_map
from ascdsl.op import load_operators
from ascdsl.passes import run_passes
from ascdsl.platforms import get_platform
from tests.test_symbolic_passes import BLOCK, BLOCKS, ELEMENTWISE, F16, F32, I32, ROWS, _at, _kernel, int_constexprs
from tests.test_lift_differential import add_row_kernel, softmax_kernel

PLATFORM = get_platform()
SELECTION = PIPELINE[:PIPELINE.index(select) + 1]  # check_vector_cores, decompose, select
BLOCK16 = Symbol("BLOCK", 16, 16, 4096)


def _selected(fn, args, constexprs: dict) -> kir.Kernel:
    """The kernel IR selection makes of ``fn`` compiled at ``constexprs`` (symbols or values), in the
    general form (what ``planned(general=True)`` runs up to ``select``)."""
    k = run_passes(_kernel(fn, args, constexprs), PLATFORM)
    for p in SELECTION:
        k = select(k, PLATFORM, True) if p is select else p(k, PLATFORM)
    return k


def _differential(fn, args, fixed: dict, symbols: dict, points: list[dict]) -> kir.Kernel:
    symbolic = _selected(fn, args, {**fixed, **symbols})
    for values in points:
        assert _at(symbolic, values) == _selected(fn, args, {**fixed, **values}), values
    return symbolic


def _calls(k: kir.Kernel) -> list[kir.Call]:
    return [s for s in kir.walk(k.process) if isinstance(s, kir.Call)]


ACCEPTED = {**ELEMENTWISE, "exp_f16": None}  # f16 lanes: whole blocks of 16 decide a plain DataCopy, see below


@pytest.mark.parametrize("name", sorted(n for n, v in ACCEPTED.items() if v is not None))
def test_the_selected_kernel_of_a_symbol_is_the_one_of_each_value(name):
    fn, args, fixed = ELEMENTWISE[name]
    symbolic = _differential(fn, args, fixed, {"BLOCK": BLOCK}, [{"BLOCK": b} for b in BLOCKS])
    assert _symbolic_literals(symbolic)


def test_a_copy_s_counts_and_views_are_the_symbol_s():
    """An unmasked f32 block of ``BLOCK`` lanes (quantum 8: whole 32-byte blocks at every value) is one plain
    ``DataCopy`` of ``BLOCK`` elements each way."""
    fn, args, fixed = ELEMENTWISE["pointers"]
    k = _selected(fn, args, {**fixed, "BLOCK": BLOCK})
    copies = [c for c in _calls(k) if c.api == "DataCopy"]  # GM -> UB, UB -> UB (the loop's tile), UB -> GM
    block = Poly.var(BLOCK)
    assert len(copies) == 3 and all(c.args == (kir.lit(block),) for c in copies)
    assert {v.extent for c in copies for v in (c.dst, *c.srcs) if isinstance(v, kir.Ref)} == {block}


def test_a_unary_math_op_of_16_bit_lanes_on_multiples_of_16():
    """``exp`` of float16: a whole block of ``BLOCK`` halves is whole 32-byte blocks when 16 divides ``BLOCK``."""
    fn, args, fixed = ELEMENTWISE["exp_f16"]
    k = _differential(fn, args, fixed, {"BLOCK": BLOCK16}, [{"BLOCK": b} for b in (16, 32, 48, 1008, 4096)])
    assert [c.api for c in _calls(k)].count("DataCopy") == 2


def test_a_math_api_s_buffer_is_sized_by_a_polynomial():
    """``tanh``'s sharedTmpBuffer: ``max(256, ceil32(BLOCK) * 4)`` bytes per slice: ``4 * BLOCK`` on multiples
    of 32 from 64 (at 64 both are 256)."""
    symbol = Symbol("BLOCK", 32, 64, 4096)
    k = _differential(tanh_kernel, (F32, F32), {}, {"BLOCK": symbol}, [{"BLOCK": b} for b in (64, 96, 4096)])
    (call,) = [c for c in _calls(k) if c.api == "Tanh"]
    (work,) = call.work
    assert work.extent == 4 * Poly.var(symbol)  # one float32 slice of 4 * BLOCK bytes


@ascdsl.jit
def tanh_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.math.tanh(tl.load(x_ptr + offs)))


@pytest.mark.parametrize("fn,args,symbol,why", [
    # whole 32-byte blocks of halves at 16, not at 8: DataCopy at one value, DataCopyPad at the other
    (ELEMENTWISE["exp_f16"][0], (F16, F16), BLOCK, "BLOCK is not a multiple of 16"),
    # tanh's buffer rounds the tile up to 32 lanes: not a polynomial of a symbol of quantum 8
    (tanh_kernel, (F32, F32), BLOCK, "BLOCK is not a multiple of 32"),
    # 4 * BLOCK bytes against the 256-byte minimum slice: the minimum at 32, 4 * BLOCK from 64
    (tanh_kernel, (F32, F32), Symbol("BLOCK", 32, 32, 4096), "do not decide"),
], ids=["f16_blocks", "tanh_quantum", "tanh_minimum"])
def test_what_the_domain_does_not_decide_selection_declines(fn, args, symbol, why):
    with pytest.raises(Undecided, match=why):
        _selected(fn, args, {"BLOCK": symbol})


def test_where_selection_declines_the_kernels_of_values_differ_in_form():
    fn, args, fixed = ELEMENTWISE["exp_f16"]
    apis = [[c.api for c in _calls(_selected(fn, args, {"BLOCK": b})) if c.api.startswith("DataCopy")]
            for b in (8, 16)]
    assert apis == [["DataCopyPad", "DataCopyPad"], ["DataCopy", "DataCopy"]]


@pytest.mark.parametrize("fn", [add_row_kernel, softmax_kernel], ids=lambda fn: fn.__name__)
def test_two_dimensional_tiles_row_broadcasts_and_row_reductions(fn):
    """``[ROWS, BLOCK]`` tiles: a ``[1, BLOCK]`` row broadcast into an add, a masked float16 softmax (row max
    and sum: the general form's fold loops, ``[ROWS, 1]`` broadcasts through ``Brcb``). ``BLOCK`` of
    multiples of 16: the row pitch of float16 tiles is ``BLOCK`` rounded up to 16 lanes. Points where
    ``ROWS != BLOCK`` (see ``test_symbolic_passes``)."""
    args = (F32, F32, F32, I32) if fn is add_row_kernel else (F16, F16, I32)
    points = [{"ROWS": r, "BLOCK": b} for r, b in [(8, 16), (16, 32), (24, 4096), (256, 48)]]
    k = _differential(fn, args, {}, {"ROWS": ROWS, "BLOCK": BLOCK16}, points)
    assert {v for p, _ in _symbolic_literals(k) for m, _ in p for v in m} == {ROWS, BLOCK16}


def test_a_float16_row_pitch_of_multiples_of_8_is_undecided():
    """The pitch of a ``[ROWS, BLOCK]`` float16 tile is ``BLOCK`` rounded up to 16: ``BLOCK`` at 16, 24 at 8."""
    with pytest.raises(Undecided, match="BLOCK is not a multiple of 16"):
        _selected(softmax_kernel, (F16, F16, I32), {"ROWS": ROWS, "BLOCK": BLOCK})



@ascdsl.jit
def column_sum_kernel(x_ptr, out_ptr, n, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    r, c = tl.arange(0, ROWS)[:, None], tl.arange(0, BLOCK)[None, :]
    x = tl.load(x_ptr + r * n + c, mask=c < n, other=0.0)
    tl.store(out_ptr + tl.arange(0, BLOCK), tl.sum(x, axis=0), mask=tl.arange(0, BLOCK) < n)


@ascdsl.jit
def planes_kernel(x_ptr, out_ptr, PLANES: tl.constexpr, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    a = tl.arange(0, PLANES)[:, None, None]
    r, c = tl.arange(0, ROWS)[None, :, None], tl.arange(0, BLOCK)[None, None, :]
    offs = a * ROWS * BLOCK + r * BLOCK + c
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + 1.0)


@ascdsl.jit
def cumsum_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.cumsum(tl.load(x_ptr + offs), axis=0))


@ascdsl.jit
def where_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, tl.where(x > 0, x, x * 0.5).to(tl.float16), mask=offs < n)


BLOCK64 = Symbol("BLOCK", 64, 64, 4096)
WIDER = {  # beyond the 1-D elementwise form and row tiles: (kernel, types, fixed constexprs, symbols, points)
    "column_sum": (column_sum_kernel, (F32, F32, I32), {}, {"ROWS": ROWS, "BLOCK": BLOCK},
                   [{"ROWS": 8, "BLOCK": 16}, {"ROWS": 24, "BLOCK": 4096}, {"ROWS": 256, "BLOCK": 40}]),
    "planes": (planes_kernel, (F32, F32), {"PLANES": 2}, {"ROWS": ROWS, "BLOCK": BLOCK},
               [{"ROWS": 8, "BLOCK": 16}, {"ROWS": 24, "BLOCK": 40}, {"ROWS": 256, "BLOCK": 4096}]),
    "cumsum": (cumsum_kernel, (F32, F32), {}, {"BLOCK": BLOCK}, [{"BLOCK": b} for b in BLOCKS]),
    "where_cast": (where_kernel, (F32, F16, I32), {}, {"BLOCK": BLOCK64}, [{"BLOCK": b} for b in (64, 128, 192, 4096)]),
}


@pytest.mark.parametrize("name", sorted(WIDER))
def test_column_reductions_three_dimensional_tiles_scans_and_selects_too(name):
    """A column sum (rows accumulated with the rows as repeats), a ``[2, ROWS, BLOCK]`` tile (its planes), a
    cumulative sum, and ``tl.where`` (``Compare`` into a bit mask, ``Select``, a cast to float16): ``Compare``
    covers whole repeats of 64 float32 lanes, so its symbol is of multiples of 64."""
    fn, args, fixed, symbols, points = WIDER[name]
    assert _symbolic_literals(_differential(fn, args, fixed, symbols, points))


def test_a_compare_of_lanes_not_whole_repeats_is_undecided():
    """``Compare`` covers the tile in whole repeats: ``BLOCK`` rounded up to 64 lanes is no polynomial on
    multiples of 8."""
    with pytest.raises(Undecided, match="BLOCK is not a multiple of 64"):
        _selected(where_kernel, (F32, F16, I32), {"BLOCK": BLOCK})

def _field_polynomials(node, fields: set) -> set:
    """Every subexpression of ``node`` made only of the tiling ``fields``, int literals, arithmetic and casts
    (the lift's expressions of its fitted polynomials, and what later passes built of them), with a field."""
    def pure(x) -> bool:
        if isinstance(x, kir.Field):
            return x.name in fields
        if isinstance(x, kir.Lit):
            return isinstance(x.value, int)
        if isinstance(x, kir.Bin):
            return pure(x.a) and pure(x.b)
        return isinstance(x, kir.Conv) and pure(x.x)

    def has_field(x) -> bool:
        return isinstance(x, kir.Field) or isinstance(x, kir.Bin) and (has_field(x.a) or has_field(x.b)) or \
            isinstance(x, kir.Conv) and has_field(x.x)
    found: set = set()

    def seen(x):
        if isinstance(x, (kir.Bin, kir.Conv, kir.Field)) and pure(x) and has_field(x):
            found.add(x)
        return None
    tree_map(node, before=seen)
    return found


@pytest.mark.parametrize("name", ["bounded", "chunks", "column", "copy", "exp_f16", "halves", "pointers",
                                  "second_half"])
def test_selection_writes_the_lift_s_tiling_field_expressions(name):
    """The lift finds each kernel's symbol by compiling at dozens of values (the smallest quantum on which the
    general form's structure does not change, ``lift._single``). The selection of the kernel compiled for that
    symbol decides every choice, declines at half its quantum (where the lift saw the structure change), and
    every polynomial it writes is, as the lift's tiling-field expression (``naming.to_expr``), one the lifted
    kernel has."""
    fn, args, fixed = ELEMENTWISE[name]
    found = lift.analyse(fn, _kernel(fn, args, {**fixed, "BLOCK": 64}), PLATFORM)
    (symbol,) = found.extents
    selected = _selected(fn, args, {**fixed, "BLOCK": symbol})
    quanta = {symbol.name: symbol.quantum}
    mine = {to_expr(p, quanta, dt) for p, dt in _symbolic_literals(selected)}
    assert mine and mine <= _field_polynomials((found.kernel.process, found.kernel.stages), {field_name("BLOCK")})
    if symbol.quantum > 1:
        half = symbol.quantum // 2
        with pytest.raises(Undecided, match="not a multiple of"):
            _selected(fn, args, {**fixed, "BLOCK": Symbol("BLOCK", half, half, symbol.high // half * half)})


def _symbolic_literals(node) -> set:
    """``(polynomial, dtype)`` of each literal of ``node`` whose value is a polynomial of symbols."""
    found: set = set()

    def seen(x):
        if isinstance(x, kir.Lit) and isinstance(x.value, Poly) and any(m for m, _ in x.value):
            found.add((x.value, x.dtype))
            return x
        return None
    tree_map(node, before=seen)
    return found


OPS = load_operators([Path(__file__).parent.parent / "ops"])
QUANTA = (8, 16, 32, 64)


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_every_int_constexpr_of_the_ops_vector_kernels_as_a_symbol(op):
    """Each vector-core kernel ``ascdsl build`` compiles for the op (the cube's ``tl.dot`` kernels take another
    path), with each int constexpr that is a multiple of 8 made a symbol of the smallest quantum of
    :data:`QUANTA` dividing its value that selection decides (16 for 16-bit row pitches, 64 for a 1-D
    reduction's repeats), gives at that quantum, twice it, its own value and the high end what selection of
    the kernel compiled for that value gives (values another constexpr has are left out, see
    ``test_symbolic_passes``). A value no such quantum decides (``BLOCK_R = 72`` of float16 rows: a pitch of
    16 lanes) declines, as the lift keeps a value its quantum does not admit a specialisation."""
    accepted, seen = ops_sweep(op, _differential)
    assert accepted or not seen, f"{op.name}: no int constexpr selects as a symbol"


def ops_sweep(op, differential, lows=lambda q: (q,)) -> tuple[list, set]:
    """Each int constexpr (a multiple of 8) of the op's vector-core kernels, made the symbol of the first quantum
    of :data:`QUANTA` dividing its value and low of ``lows(quantum)`` (at most the value) on which
    ``differential(fn, types, fixed, symbols, points)`` decides, at its low, the next value, its own value and
    the high end: the ``(kernel name, constexpr, symbol)`` accepted, and the ``(kernel, types, constexprs,
    name)`` tried."""
    seen, accepted = set(), []
    for kernel, fn, types, consts, name, others in int_constexprs(op, vector_only=True):
        value = consts[name]
        seen.add((kernel.name, tuple(types), tuple(consts.items()), name))
        domains = [(q, low) for q in QUANTA if value % q == 0 for low in lows(q) if low <= value]
        for q, low in domains:
            symbol = Symbol(name, q, low, max(value, 4096))
            try:
                differential(fn, types, consts, {name: symbol},
                             [{name: v} for v in sorted({low, low + q, value, symbol.high} - others)])
            except Undecided:
                continue
            accepted.append((kernel.name, name, symbol))
            break
    return accepted, seen
