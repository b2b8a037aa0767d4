"""Instruction selection (``decompose``, then ``select`` in the general form) on a kernel compiled for
``Symbol`` s (issue 25, step 4 of the "Symbolic tile extents" plan in docs/design.md): where the selector
writes an int from a tile's shape, it writes the polynomial (``kir.lit`` of a ``Poly``, a ``Ref`` extent, a
call's count), so the kernel IR, its symbols given values, is the kernel IR selection makes of the kernel
compiled for those values; every decision an extent drives is one the symbols' domains make
(``ir.symbol.equal`` / ``multiple`` / the ``Poly`` comparisons), else ``Undecided``."""
from __future__ import annotations

import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl.backend import kir
from ascdsl.backend.render.ascendc import PIPELINE
from ascdsl.backend.selection.select import select
from ascdsl.ir.symbol import Poly, Symbol, Undecided
from ascdsl.ir.treemap import tree_map
from ascdsl.passes import run_passes
from ascdsl.platforms import get_platform
from tests.test_symbolic_passes import BLOCK, BLOCKS, ELEMENTWISE, F16, F32, I32, ROWS, _at, _kernel
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


def _symbolic(node) -> list:
    """The polynomials in ``node`` that are not constants."""
    found: list = []

    def seen(x):
        if isinstance(x, Poly):
            if any(m for m, _ in x):
                found.append(x)
            return x
        return None
    tree_map(node, before=seen)
    return found


def _calls(k: kir.Kernel) -> list[kir.Call]:
    return [s for s in kir.walk(k.process) if isinstance(s, kir.Call)]


ACCEPTED = {**ELEMENTWISE, "exp_f16": None}  # f16 lanes: whole blocks of 16 decide a plain DataCopy, see below


@pytest.mark.parametrize("name", sorted(n for n, v in ACCEPTED.items() if v is not None))
def test_the_selected_kernel_of_a_symbol_is_the_one_of_each_value(name):
    fn, args, fixed = ELEMENTWISE[name]
    symbolic = _differential(fn, args, fixed, {"BLOCK": BLOCK}, [{"BLOCK": b} for b in BLOCKS])
    assert _symbolic(symbolic)


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
    assert {v for p in _symbolic(k) for m, _ in p for v in m} == {ROWS, BLOCK16}


def test_a_float16_row_pitch_of_multiples_of_8_is_undecided():
    """The pitch of a ``[ROWS, BLOCK]`` float16 tile is ``BLOCK`` rounded up to 16: ``BLOCK`` at 16, 24 at 8."""
    with pytest.raises(Undecided, match="BLOCK is not a multiple of 16"):
        _selected(softmax_kernel, (F16, F16, I32), {"ROWS": ROWS, "BLOCK": BLOCK})
