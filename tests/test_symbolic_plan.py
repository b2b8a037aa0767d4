"""The UB planner on a kernel compiled for ``Symbol`` s (issue 25, step 5 of the "Symbolic tile extents" plan in
docs/design.md): the backend's passes after selection (``fit_queues``, ``plan_ub``, ``bind_queues``, ``stage``,
``sync``, ``name``) run on the selected kernel IR; each buffer's bytes are a polynomial of the symbols, a slot's
size their largest rounded up to a block (a polynomial, else an ``ir.symbol.Ceil``: ``ceil32(1/8 * BLOCK)``,
``ceil32(max(4 * BLOCK_K, 256))``), every choice of a slot compares those sizes on the whole domain
(``ir.symbol.less``: at the corners of the box of the domains where multilinear, by the rounding's interval for a
``Ceil``), else ``Undecided``, and the footprint is one expression (``Plan.total_bytes``): its symbols given
values, the plan is the one of the kernel compiled for those values, and the footprint the one the lift fits by
compiling at dozens of values."""
from __future__ import annotations

import dataclasses
from fractions import Fraction

import pytest

from ascdsl.backend import kir
from ascdsl.backend.lift import lift
from ascdsl.backend.lift.poly import exact_expression, footprint
from ascdsl.backend.plan import ubplan
from ascdsl.backend.plan.ubplan import highs
from ascdsl.backend.render.ascendc import planned
from ascdsl.build import case_kernels
from ascdsl.ir.symbol import ZERO, Ceil, Differs, Poly, Symbol, Undecided, dominant, larger, less, rounded, var_name
from ascdsl.opbuild import jit_functions
from ascdsl.platforms import get_platform
from ops.softmax_grad import packed_kernel
from tests.test_lift_differential import CASES as LIFT_CASES, add_row_kernel, softmax_kernel
from tests.test_symbolic_passes import BLOCK, BLOCKS, ELEMENTWISE, F16, F32, I32, ROWS, _at, _kernel
from tests.test_symbolic_selection import BLOCK16, OPS, WIDER, ops_sweep

PLATFORM = get_platform()


def _planned(fn, args, constexprs: dict) -> kir.Kernel:
    """``fn`` compiled at ``constexprs`` (symbols or values) through every backend pass but the budget check,
    selection in the general form."""
    return planned(_kernel(fn, args, constexprs), PLATFORM, general=True)


def _comparable(k: kir.Kernel) -> tuple:
    """``k`` without the symbolic plan's footprint, and its names by what they name (``Names`` compare by
    identity)."""
    return dataclasses.replace(k, plan=dataclasses.replace(k.plan, footprint=()), names=None), vars(k.names)


def _differential(fn, args, fixed: dict, symbols: dict, points: list[dict]) -> kir.Kernel:
    """The planned kernel of the symbols, checked at each point against the kernel compiled for its values:
    the whole kernel IR (slots, their bytes and needs, homes, aliases, names, stages, syncs) equal, and the
    footprint polynomial, evaluated, the valued plan's bytes."""
    symbolic = _planned(fn, args, {**fixed, **symbols})
    for values in points:
        valued = _planned(fn, args, {**fixed, **values})
        assert _comparable(_at(symbolic, values)) == _comparable(valued), values
        assert (ZERO + symbolic.plan.total_bytes).at(values) == valued.plan.total_bytes, values
        if symbolic.plan.footprint:  # a symbol that sizes a buffer
            assert footprint(symbolic.plan.footprint, values) == valued.plan.total_bytes, values
    return symbolic


def _symbolic_slots(k: kir.Kernel) -> list:
    return [s for s in k.plan.slots if isinstance(s.bytes, Poly) and any(m for m, _ in s.bytes)]


ONE_D = {n: v for n, v in ELEMENTWISE.items() if n not in ("exp_f16", "halves")}  # their symbols: below


@pytest.mark.parametrize("name", sorted(ONE_D))
def test_the_plan_of_a_symbol_is_the_plan_of_each_value(name):
    fn, args, fixed = ONE_D[name]
    k = _differential(fn, args, fixed, {"BLOCK": BLOCK}, [{"BLOCK": b} for b in BLOCKS])
    assert _symbolic_slots(k)
    assert isinstance(k.plan.total_bytes, Poly)


def test_a_copy_s_footprint_is_one_polynomial():
    """An f32 block copy of ``BLOCK`` lanes: a double-buffered load queue and a double-buffered store queue of
    ``4 * BLOCK`` bytes each (the loop's tile of ``pointers`` is computed in the load's buffer)."""
    fn, args, fixed = ELEMENTWISE["copy"]
    k = _planned(fn, args, {**fixed, "BLOCK": BLOCK})
    assert k.plan.total_bytes == 16 * Poly.var(BLOCK)
    assert [(s.num, s.bytes) for s in k.plan.slots] == [(2, 4 * Poly.var(BLOCK))] * 2


@pytest.mark.parametrize("fn,args", [(add_row_kernel, (F32, F32, F32, I32)), (softmax_kernel, (F16, F16, I32))],
                         ids=["add_row", "softmax"])
def test_row_tiles_plan_by_the_corners_of_the_domains(fn, args):
    """``[ROWS, BLOCK]`` tiles beside ``[BLOCK]`` rows and ``[ROWS]`` columns: ``4 * ROWS * BLOCK`` bytes against
    ``4 * BLOCK`` is decided at the corners of the box of the two domains (the term-by-term bounds of the
    ``Poly`` order straddle)."""
    points = [{"ROWS": r, "BLOCK": b} for r, b in [(8, 16), (16, 32), (24, 4096), (256, 48)]]
    k = _differential(fn, args, {}, {"ROWS": ROWS, "BLOCK": BLOCK16}, points)
    assert any(ROWS in m and BLOCK16 in m for s in _symbolic_slots(k) for m, _ in s.bytes)


@pytest.mark.parametrize("name", sorted(WIDER))
def test_column_sums_planes_scans_and_selects_plan_too(name):
    fn, args, fixed, symbols, points = WIDER[name]
    assert _symbolic_slots(_differential(fn, args, fixed, symbols, points))


def test_bytes_not_whole_blocks_on_the_domain_round_up_to_a_block():
    """``BLOCK // 2`` float32 lanes are ``2 * BLOCK`` bytes: 16 at 8, a slot of one 32-byte block, so no
    polynomial of a symbol of multiples of 8: the slot is ``ceil32(2 * BLOCK)`` (a ``Ceil``), the total bytes
    their sum; of multiples of 16 they are the polynomial."""
    fn, args, fixed = ELEMENTWISE["halves"]
    k = _differential(fn, args, fixed, {"BLOCK": BLOCK}, [{"BLOCK": b} for b in BLOCKS])
    half = 2 * Poly.var(BLOCK)
    assert k.plan.slots[-1].bytes == Ceil(((1, (half,)),), 32)
    assert k.plan.total_bytes == Ceil(((1, (half,)),), 32, 48 * Poly.var(BLOCK))
    assert str(k.plan.total_bytes) == "48 * BLOCK + ceil32(2 * BLOCK)"
    k = _differential(fn, args, fixed, {"BLOCK": BLOCK16}, [{"BLOCK": b} for b in (16, 32, 48, 4096)])
    assert k.plan.total_bytes == 50 * Poly.var(BLOCK16)


def test_the_order_of_two_sizes_is_decided_on_the_whole_domain_or_not_at_all():
    rows, block = Poly.var(ROWS), Poly.var(BLOCK)
    assert less(4 * block, 4 * rows * block)  # 0 < 4 * BLOCK * (ROWS - 1) at every corner
    with pytest.raises(Undecided):
        4 * block < 4 * rows * block  # the Poly order's bounds straddle
    assert not less(4 * rows * block, 4 * block) and larger(4 * block, 4 * rows * block) == 4 * rows * block
    assert larger(4 * block, 4 * block) == 4 * block and not less(block, block)
    with pytest.raises(Undecided, match="do not decide"):
        less(rows, block)  # ROWS < BLOCK at some points, not at others
    with pytest.raises(Undecided, match="do not decide"):
        less(block, 2 * block - 8)  # a tie at 8, less above: the first of equals would change
    assert less(3, 4) and not less(4, 4) and larger(3, 4) == 4


def _named(p: Poly) -> Poly:
    """``p`` over its symbols' names (the lift's variables)."""
    return Poly(tuple((tuple(var_name(v) for v in m), c) for m, c in p))


def _named_slots(footprint: tuple) -> tuple:
    """A footprint over its symbols' names, as the lift's (``lift.poly.Slots``)."""
    return tuple((num, tuple(map(_named, needs))) for num, needs in footprint)


LIFTED = ["bounded", "chunks", "column", "copy", "exp_f16", "halves", "pointers", "second_half"]


@pytest.mark.parametrize("name", LIFTED)
def test_the_footprint_is_the_lift_s_and_its_high_comes_without_a_compile(name):
    """The retired sampler compiled each kernel at dozens of values to fit its footprint (per slot, the bytes its
    buffers reach) and searched the largest value that fits the UB budget (``lift._high``). Planned once for the
    lift's own symbol, the kernel's footprint is the lift's (its expression too: ``ceil32`` where a slot is no
    whole number of blocks at some value the symbol admits, ``column``'s ``4 * BLOCK`` bytes of multiples of 1,
    ``halves``' ``2 * BLOCK`` of multiples of 2), and ``highs`` on its total bytes gives the lift's high (on a
    domain one quantum past it: the budget decides)."""
    fn, args, fixed = ELEMENTWISE[name]
    found = lift.analyse(fn, _kernel(fn, args, {**fixed, "BLOCK": 64}), PLATFORM)
    (symbol,) = found.extents
    wide = dataclasses.replace(symbol, high=symbol.high + symbol.quantum)
    k = _planned(fn, args, {**fixed, "BLOCK": wide})
    assert _named_slots(k.plan.footprint) == found.slots
    assert exact_expression(k.plan.footprint, {}) == exact_expression(found.slots, {"BLOCK": symbol.quantum})
    assert highs(k.plan, (wide,), PLATFORM.ub_budget_bytes) == (symbol,)


def test_no_value_that_fits_is_undecided():
    fn, args, fixed = ELEMENTWISE["copy"]
    k = _planned(fn, args, {**fixed, "BLOCK": BLOCK})
    with pytest.raises(Undecided, match="no value of BLOCK fits the 1024 bytes"):
        highs(k.plan, (dataclasses.replace(BLOCK, low=128),), 1024)  # 16 * 128 bytes
    assert highs(k.plan, (BLOCK,), 1024) == (dataclasses.replace(BLOCK, high=64),)


def test_two_symbols_footprint_and_highs_are_the_joint_lift_s():
    """``add_row``: the lift fits ``ROWS`` (multiples of 1 from 2) and ``BLOCK`` (of 8) jointly, each high with
    the other at its low. On the box of those domains selection declines (``ROWS * BLOCK`` lanes reach past
    2**24 at its far corner, where the lift never compiles); on the part of the box each high is searched in,
    the planned kernel's slots are the lift's, and ``highs`` gives its high (one quantum past it: the budget
    decides)."""
    fn, args, constexprs = LIFT_CASES["add_row_f32"]
    found = lift.analyse(fn, _kernel(fn, args, constexprs), PLATFORM)
    rows, block = found.extents
    past = {e.name: dataclasses.replace(e, high=e.high + e.quantum) for e in found.extents}
    with pytest.raises(Undecided, match="16777216"):
        _planned(fn, args, past)
    for lifted, other in ((rows, dataclasses.replace(block, high=2048)), (block, dataclasses.replace(rows, high=256))):
        symbols = {**past, other.name: other}
        k = _planned(fn, args, symbols)
        assert _named_slots(k.plan.footprint) == found.slots
        by_name = {s.name: s for s in highs(k.plan, tuple(symbols.values()), PLATFORM.ub_budget_bytes)}
        assert by_name[lifted.name] == lifted


def _ops_kernel(op_name: str, kernel_name: str, dtype, **constexprs) -> tuple:
    """``(fn, types, constexprs)`` of the first kernel ``ascdsl build`` compiles for the op by that name, with its
    first parameter of ``dtype`` and those constexprs."""
    (op,) = [op for op in OPS if op.name == op_name]
    kernel = next(k for k in case_kernels(op, PLATFORM) if k.name == kernel_name
                  and k.params[0].type.dtype == dtype and constexprs.items() <= dict(k.constexprs).items())
    return jit_functions(op)[kernel.name], [p.type.dtype for p in kernel.params], dict(kernel.constexprs)


def test_a_slot_of_needs_that_cross_takes_their_largest():
    """softmax_grad's float16 ``rows_kernel`` (``FRONT``): a free 256-byte slot (a math API's minimum work slice)
    holds a ``4 * BLOCK_K``-byte buffer up to 64 lanes; beyond, it is still the one free slot, and grows. Planned
    for a symbol from 16, the slot is ``ceil32(max(4 * BLOCK_K, 256))`` (the lift's ``max`` of needs whose order
    flips inside the domain), and the plan is each value's on both sides of the flip."""
    fn, types, consts = _ops_kernel("softmax_grad", "rows_kernel", F16, FRONT=True)
    symbol = Symbol("BLOCK_K", 16, 16, 4096)
    k = _differential(fn, types, consts, {"BLOCK_K": symbol},
                      [{"BLOCK_K": v} for v in [*range(16, 160, 16), 1008, 4096]])
    crossing = [s for s in k.plan.slots if isinstance(s.bytes, Ceil)]
    assert [str(s.bytes) for s in crossing] == ["ceil32(max(4 * BLOCK_K, 256))"]
    assert exact_expression(k.plan.footprint, {}) == "12 * BLOCK_K + 256 + ceil32(max(4 * BLOCK_K, 256))"


def test_the_best_fit_is_decided_where_each_way_gives_one_slot():
    """A buffer of ``4 * BLOCK`` bytes (``BLOCK`` of multiples of 16) fits a free 256-byte slot up to 64 lanes: the
    one free slot is taken either way, and so is a 256-byte one beside a 64-byte one for ``4 * BLOCK + 64`` bytes
    (the one that holds it, or the largest); of a 256-byte and a 512-byte slot, the smallest that holds
    ``4 * BLOCK`` bytes is the first up to 64 lanes, the second above: ``Undecided``. Slots of rounded sizes are
    ordered by the intervals of the rounding."""
    block = Poly.var(Symbol("BLOCK", 16, 16, 4096))
    assert ubplan._best_fit([3], [256], 4 * block) == 3
    assert ubplan._best_fit([3, 4], [256, 64], 4 * block + 64) == 3  # the 256 bytes hold it or are the largest
    with pytest.raises(Undecided, match="which free slot"):
        ubplan._best_fit([3, 4], [256, 512], 4 * block)
    eighth = rounded([block * Fraction(1, 8) + 30], 32)  # 32 .. 544 bytes, no polynomial
    assert ubplan._best_fit([3], [32], eighth) == 3


def test_the_best_fit_is_the_slot_every_point_takes():
    """Where the order of two free slots flips inside the domain, the best fit asks each point (at most
    ``ubplan._POINTS``): ``4 * BLOCK`` bytes fit a 256-byte slot up to 64 lanes and a ``4 * BLOCK``-byte one always,
    the smaller of the two that hold it: the second at every multiple of 48, but the first (of equals) at 64 among
    the multiples of 16, where each point's slot :class:`Differs` (the buffer's home in the kernel compiled there)."""
    assert ubplan._best_fit([3, 4], [256, 4 * Poly.var(Symbol("BLOCK", 48, 48, 4800))],
                            4 * Poly.var(Symbol("BLOCK", 48, 48, 4800))) == 4
    block = Poly.var(Symbol("BLOCK", 16, 16, 4096))
    with pytest.raises(Differs, match="4 \\* BLOCK < 256") as e:
        ubplan._best_fit([3, 4], [256, 4 * block], 4 * block)
    assert [e.value.value({"BLOCK": v}) for v in (16, 48, 64, 80, 4096)] == [4, 4, 3, 4, 4]
    wide = Poly.var(Symbol("BLOCK", 1, 1, 5000))  # past the points asked: each point's slot, not asked
    with pytest.raises(Differs):
        ubplan._best_fit([3, 4], [256, 4 * wide + 4], 4 * wide)


def test_a_best_fit_of_slots_whose_order_flips_is_each_value_s():
    """log_softmax_grad's float16 ``reduce_tail_recompute_kernel``: a buffer's best fit between a 256-byte slot and
    one of ``4 * BLOCK_R`` bytes, whose order flips at 64 lanes, is one slot at every multiple of 16 from 32: the
    plan for the symbol is each value's on both sides of the flip."""
    fn, types, consts = _ops_kernel("log_softmax_grad", "reduce_tail_recompute_kernel", F32)
    types = [F16 if t == F32 else t for t in types]
    _differential(fn, types, consts, {"BLOCK_R": Symbol("BLOCK_R", 16, 32, 1616)},
                  [{"BLOCK_R": v} for v in (32, 48, 64, 80, 96, 1616)])


def test_rounded_sizes_and_their_order():
    """``rounded``: the largest of some needs, rounded up to a block: a number, a polynomial where one is on the
    whole domain, else a ``Ceil``; ``less`` orders a ``Ceil`` by the interval its rounding leaves (``ceil32(p) <
    q`` for a block multiple ``q`` iff ``p <= q - 32``, ``>= q`` iff ``p > q - 32``), and declines where the order
    flips."""
    block = Poly.var(Symbol("BLOCK", 64, 64, 4096))
    eighth = block * Fraction(1, 8)  # 8 .. 512 bytes
    assert rounded([20, 40], 32) == 64
    assert rounded([4 * block + 16], 32) == 4 * block + 32  # the symbol's part whole blocks: exact
    assert rounded([4 * block, 2 * block, 32], 32) == 4 * block
    ceil = rounded([eighth], 32)
    assert ceil == Ceil(((1, (eighth,)),), 32) and str(ceil) == "ceil32(1/8 * BLOCK)"
    assert [ceil.at({"BLOCK": v}) for v in (64, 256, 320, 4096)] == [32, 32, 64, 512]
    assert not less(ceil, 32) and less(32, 64)
    assert less(ceil, 4 * block) and not less(4 * block, ceil) and not less(ceil, ceil)
    assert less(ceil, 544) and not less(544, ceil)  # 512 bytes at most: ceil32 <= 512 < 544
    with pytest.raises(Undecided, match="do not decide ceil32\\(1/8 \\* BLOCK\\) < 256"):
        less(ceil, 256)  # 256 at 2048 lanes, less below
    with pytest.raises(Undecided, match="no whole number of 32-byte blocks"):
        less(ceil, 4 * block + 16)
    both = rounded([eighth, 128], 32)  # they cross at 1024 lanes
    assert both == Ceil(((1, (eighth, Poly.const(128))),), 32) and str(both) == "ceil32(max(1/8 * BLOCK, 128))"
    assert dominant([eighth, 128, 4, eighth]) == (eighth, Poly.const(128))
    total = 2 * both + 4 * block + ceil
    assert str(total) == "4 * BLOCK + 2 x ceil32(max(1/8 * BLOCK, 128)) + ceil32(1/8 * BLOCK)"
    assert [(ZERO + total).at({"BLOCK": v}) for v in (64, 4096)] == [2 * 128 + 256 + 32, 2 * 512 + 16384 + 512]


@pytest.mark.parametrize("high, points", [(11, range(1, 12)), (713, (1, 11, 12, 13, 56, 400, 713))])
def test_a_slot_s_size_is_the_same_whatever_the_domain_s_high(high, points):
    """softmax_grad's float16 ``packed_kernel`` of 13-element rows: a work slot holds buffers of ``52 * ROWS`` and
    ``32 * ROWS + 224`` bytes, which cross at 11.2. Each need some value from ``ROWS``' low makes the largest is
    kept whatever the high (``ir.symbol.dominant``), so the kernel planned for ``ROWS`` up to 11 (the lift's first
    domain) is the one planned up to the high the footprint gives (713): ``ceil32(max(...))`` both, each value's
    plan on both sides of the crossing. Kept to the domain, the first was ``32 * ROWS + 224``: the lift found the
    domains' kernels different and did not size ``ROWS``."""
    k = _differential(packed_kernel, [F16, F16, F16, I32, I32], {"K": 13}, {"ROWS": Symbol("ROWS", 1, 1, high)},
                      [{"ROWS": v} for v in points])
    assert str(k.plan.total_bytes) == ("2 x ceil32(26 * ROWS) + 2 x ceil32(26 * ROWS) + ceil32(52 * ROWS) + "
                                       "ceil32(52 * ROWS) + ceil32(max(52 * ROWS, 32 * ROWS + 224)) + "
                                       "ceil32(4 * ROWS + 28)")
    assert highs(k.plan, (Symbol("ROWS", 1, 1, 94208),), PLATFORM.ub_budget_bytes)[0].high == 713


ROUNDED = [("rms_norm", "rms_norm_kernel", F32), ("softmax", "softmax_row_kernel", F16),
           ("softmax", "softmax_looped_kernel", F32), ("softmax_grad", "two_pass_kernel", F16)]


@pytest.mark.parametrize("op_name, kernel_name, dtype", ROUNDED, ids=lambda x: getattr(x, "short", x))
def test_rounded_and_crossing_slots_are_the_lift_s(op_name, kernel_name, dtype):
    """The kernels whose lift the symbol did not decide before (a reduction's ``BLOCK / 8``-byte buffer:
    ``ceil32(1/8 * BLOCK)``; a work slot of ``max(4 * BLOCK_K, 256)``), planned once for the lift's own symbol:
    the footprint is the lift's, its expression too, and ``highs`` gives the lift's high."""
    fn, types, consts = _ops_kernel(op_name, kernel_name, dtype)
    found = lift.analyse(fn, fn.specialize(*types, **consts).kernels[0], PLATFORM)
    (symbol,) = found.extents
    wide = dataclasses.replace(symbol, high=symbol.high + symbol.quantum)
    k = _planned(fn, types, {**consts, symbol.name: wide})
    assert _named_slots(k.plan.footprint) == found.slots
    expression = exact_expression(k.plan.footprint, {})
    assert expression == exact_expression(found.slots, {symbol.name: symbol.quantum}) and "ceil32" in expression
    assert highs(k.plan, (wide,), PLATFORM.ub_budget_bytes) == (symbol,)


PLANNED = {"log_softmax_grad": 16, "matmul": 0, "rms_norm": 9, "scale_add": 10, "softmax": 9, "softmax_grad": 38}


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_every_int_constexpr_of_the_ops_vector_kernels_as_a_symbol(op):
    """``test_symbolic_selection``'s sweep of the ops' vector kernels through the whole pipeline, a symbol's low
    its quantum or 64 lanes: every one of the 80 constexprs selection takes plans (the counts by op, so a change
    shows): rms_norm's and softmax's 18 with a reduction's ``BLOCK / 8``-byte buffer in a ``ceil32(1/8 * BLOCK)``
    slot, 9 with a slot of needs that cross (a 256-byte work slot that holds ``4 * BLOCK_K`` bytes below 64 lanes
    only, ``ceil32(max(4 * BLOCK_K, 256))``)."""
    accepted, _ = ops_sweep(op, _differential, lambda q: (q, 64) if q < 64 else (q,))
    assert len(accepted) == PLANNED[op.name]


@pytest.mark.parametrize("dtype, fixed", [(F32, {"BLOCK_K": 40, "FRONT": False}), (F16, {"FRONT": True})],
                         ids=["f32", "f16_front"])
def test_a_row_broadcast_of_any_number_of_rows(dtype, fixed):
    """softmax_grad's ``rows_kernel``: each row's sum broadcast over its ``[ROWS, BLOCK_K]`` tile through ``Brcb``,
    whose ``ceil(ROWS / 8)`` blocks the general form sizes by ``ROWS + 7`` rows and divides at run time: ``ROWS``
    of multiples of 1 (from 2: a unit axis at 1) plans, the plan each value's, whole blocks of 8 rows or not."""
    fn, types, consts = _ops_kernel("softmax_grad", "rows_kernel", dtype, **fixed)
    rows = Symbol("ROWS", 1, 2, 101)
    others = {v for v in consts.values() if isinstance(v, int)}  # an equal constant is shared (see above)
    k = _differential(fn, types, consts, {"ROWS": rows},
                      [{"ROWS": v} for v in sorted({*range(2, 20), 31, 64, 101} - others)])
    (brcb,) = [c for c in kir.walk(k.process) if isinstance(c, kir.Call) and c.api == "Brcb"]
    assert brcb.args[0] == kir.Bin(kir.BinOp.DIV, kir.lit(Poly.var(rows) + 7), kir.lit(8))  # its repeats
