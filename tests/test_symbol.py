"""The symbol of a run-time tile extent (ascdsl/ir/symbol.py): its domain, the values it admits, the
largest admitted value a footprint allows; the lift's extents are symbols that answer as the lifted
variant does; and the polynomials of symbols: exact arithmetic, divisions the quanta admit, and
comparisons the domains decide (``Undecided`` otherwise)."""
from __future__ import annotations

import dataclasses
import itertools
from fractions import Fraction

import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl.backend.lift import lift
from ascdsl.backend.plan.tiling import Variant
from ascdsl import dtypes
from ascdsl.backend import kir
from ascdsl.backend.names.naming import to_expr
from ascdsl.ir.symbol import (ONE, ZERO, Ceil, Differs, Poly, Symbol, Undecided, all_of, at_least_from_lows, ceil_div,
                              domain_points, equal, largest_fitting, multiple, value_at)
from ascdsl.platforms import get_platform

PLATFORM = get_platform("Ascend910B3")
F32 = tl.pointer_type(tl.float32)


def test_a_symbol_is_frozen_data():
    s = Symbol("BLOCK", 8, 8, 4096)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.low = 16  # type: ignore[misc]
    assert s == Symbol("BLOCK", 8, 8, 4096) and len({s, Symbol("BLOCK", 8, 8, 4096)}) == 1


@pytest.mark.parametrize("quantum,low,high", [(0, 0, 8), (8, 4, 64), (8, 12, 64), (8, 16, 60), (8, 64, 16),
                                              (4, 0, 16)])
def test_a_symbol_s_domain_is_a_nonempty_grid_of_its_quantum(quantum, low, high):
    with pytest.raises(ValueError, match="is no domain"):
        Symbol("ROWS", quantum, low, high)


def test_a_symbol_admits_the_multiples_of_its_quantum_from_its_low():
    s = Symbol("ROWS", 4, 8, 64)
    assert [v for v in range(0, 90) if s.admits(v)] == list(range(8, 90, 4))  # high is the budget's bound
    assert s.refusal(12) is None
    assert s.refusal(10) == "ROWS=10 is not a multiple of 4 of at least 8, as this kernel's runtime tile extent must be"
    assert s.refusal(4) is not None


@pytest.mark.parametrize("quantum,low", [(1, 1), (4, 8), (32, 32), (8, 16)])
@pytest.mark.parametrize("limit", [0, 7, 8, 9, 100, 1000, 4096, 23552])
def test_largest_is_the_largest_admitted_value_that_fits(quantum, low, limit):
    s = Symbol("BLOCK", quantum, low, low)
    calls = []

    def fits(v):
        calls.append(v)
        return v <= limit
    expected = max((v for v in range(low, limit + 1, quantum)), default=0)
    assert s.largest(fits) == expected == largest_fitting(lambda v: v <= limit, low, quantum)
    assert all(s.admits(v) for v in calls)  # it only asks about values the symbol admits
    assert len(calls) <= 2 * max(1, limit // quantum).bit_length() + 2  # a doubling then a bisection


@ascdsl.jit
def scale_kernel(x_ptr, out_ptr, n_rows, n_cols, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    offs = rows[:, None] * n_cols + cols[None, :]
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, x * 2.0, mask=mask)


def test_the_lift_s_extents_are_symbols_and_serve_what_they_admit():
    kernel = scale_kernel.specialize(F32, F32, tl.int32, tl.int32, ROWS=24, BLOCK=40).kernels[0]
    found = lift.analyse(scale_kernel, kernel, PLATFORM)
    assert found is not None and set(found.names) == {"ROWS", "BLOCK"}
    assert all(isinstance(e, Symbol) for e in found.extents)
    v = Variant(1, kernel, found)
    for rows in range(1, 40):
        for block in range(1, 80, 3):
            other = scale_kernel.specialize(F32, F32, tl.int32, tl.int32, ROWS=rows, BLOCK=block).kernels[0]
            values = {"ROWS": rows, "BLOCK": block}
            assert v.serves(other) == all(e.admits(values[e.name]) for e in found.extents)
            refusal = found.problem(values, 10 ** 9)
            assert (refusal is None) == v.serves(other), (values, refusal)


ROWS = Symbol("ROWS", 4, 4, 64)
BLOCK = Symbol("BLOCK", 32, 32, 1024)
R, B = Poly.var(ROWS), Poly.var(BLOCK)


def _points():
    """Every point of the two symbols' domains (the box of their lows and highs)."""
    for rows, block in itertools.product(range(ROWS.low, ROWS.high + 1, ROWS.quantum),
                                         range(BLOCK.low, BLOCK.high + 1, BLOCK.quantum)):
        yield {"ROWS": rows, "BLOCK": block}


def test_sums_differences_and_products_are_exact():
    p = 3 * R * B - B + 7
    q = (R + 1) * (B - 2)
    for at in _points():
        r, b = at["ROWS"], at["BLOCK"]
        assert p.at(at) == 3 * r * b - b + 7
        assert q.at(at) == (r + 1) * (b - 2)
        assert (p - q).at(at) == p.at(at) - q.at(at) and (p * q).at(at) == p.at(at) * q.at(at)
        assert (5 - p).at(at) == 5 - p.at(at) and (-q).at(at) == -q.at(at)
    assert str(p) == "3 * ROWS * BLOCK - BLOCK + 7"
    assert str(B * B - 2 * B * R) == "BLOCK * BLOCK - 2 * BLOCK * ROWS"  # variables in the order given


def test_equality_and_hashing_are_the_polynomial_s_whatever_the_order_of_its_terms():
    assert R * B == B * R and hash(R * B) == hash(B * R) and str(R * B) != str(B * R)
    assert R + B - R == B and B - B == ZERO and not (B - B) and bool(B)
    assert Poly(((("X",), Fraction(4, 2)), (("X",), 1))) == Poly(((("X",), 3),))  # merged, integral coefficients
    assert isinstance(dict(Poly(((("X",), Fraction(4, 2)),)))[("X",)], int)
    assert Poly.const(1) == ONE and len({R * B + 1, 1 + B * R}) == 1
    assert R != 4 and Poly.const(4) != 4  # a polynomial equals polynomials only


def test_division_and_remainder_by_a_divisor_of_the_quantum():
    for d in (1, 2, 4, 8, 16, 32):
        for p in (B, 3 * B + 5, B - 7, 4 * R * B - 33):
            for at in _points():
                assert (p // d).at(at) == p.at(at) // d and (p % d).at(at) == p.at(at) % d, (p, d, at)
    assert (4 * R) // 16 == R // 4 and str(R // 4) == "1/4 * ROWS"  # integral on ROWS' multiples of 4


@pytest.mark.parametrize("p,d", [(B, 64), (B + R, 8), (R, 8), (Poly.var("n"), 2)])
def test_a_division_the_quanta_do_not_admit_is_undecided(p, d):
    with pytest.raises(Undecided, match=f"not a multiple of {d}"):
        p // d
    with pytest.raises(Undecided):
        p % d


def test_a_count_of_whole_repeats_the_quanta_do_not_make_exact_differs():
    """``ceil_div``: exact where the division is (a polynomial), else ``Differs``, which gives the count at each
    point (what the kernel compiled for those values holds)."""
    assert ceil_div(B, 32) == B // 32 and ceil_div(100, 64) == 2
    with pytest.raises(Differs, match="not a multiple of 64") as raised:
        ceil_div(B + 7, 64)
    assert [raised.value.value({"BLOCK": b}) for b in (32, 64, 96, 1024)] == [1, 2, 2, 17]


def test_comparisons_the_domains_decide():
    assert B > 0 and B >= 32 and not B < 32 and B <= 1024 and R * B <= 64 * 1024
    assert not (B - 2048 > 0) and B - 2048 < 0 and 4 * R - B <= 224
    assert (R * B > R) and (R * B + 1 >= R + 1)
    for at in _points():  # what they decide holds at every point
        assert (R * B).at(at) > R.at(at) and (B - 2048).at(at) < 0


@pytest.mark.parametrize("compare", [lambda: B > 64, lambda: B <= 512, lambda: R * B < 4096, lambda: R >= 8,
                                     lambda: Poly.var("n") > 0, lambda: 4 * R - B * R < 0])
def test_an_undecided_comparison_raises(compare):
    """The last holds everywhere, but the bounds are taken term by term: they do not decide it."""
    with pytest.raises(Undecided):
        compare()


@pytest.mark.parametrize("use", [lambda: range(B), lambda: list(range(0, 8 * B, 8)), lambda: int(B), lambda: float(B),
                                 lambda: 1.0 / B, lambda: B / 2, lambda: [0, 1][B]])
def test_a_polynomial_used_as_a_number_is_undecided(use):
    """A pass that needs a value of a run-time extent (a lane per element, ``1 / M`` as a float) falls back
    to the kernel compiled with values, as at an undecided comparison (the fuzz, seed 46: a TypeError from
    the backend's int32 fold and relayout, in the lift's symbolic compile)."""
    with pytest.raises(Undecided, match="is needed as a number"):
        use()


def test_the_kernel_expression_of_a_polynomial_is_over_its_tiling_fields():
    i32 = dtypes.int32
    assert to_expr(3 * R * B + 8, {}, i32) == kir.Bin(kir.BinOp.ADD, kir.Bin(
        kir.BinOp.MUL, kir.Bin(kir.BinOp.MUL, kir.Field("ROWS", i32), kir.Field("BLOCK", i32)), kir.lit(3)), kir.lit(8))
    assert to_expr(B // 32, {}, i32) == kir.Bin(kir.BinOp.DIV, kir.Field("BLOCK", i32), kir.lit(32))
    assert to_expr(ZERO, {}, i32) == kir.lit(0)
    with pytest.raises(Undecided):
        to_expr(R // 4 * Poly.const(Fraction(1, 2)), {}, i32)  # ROWS / 8 on multiples of 4


def test_equal_holds_at_every_point_at_none_or_is_undecided():
    block, rows = Poly.var(BLOCK), Poly.var(Symbol("ROWS", 1, 1, 64))
    assert equal(block // 8 * 8, block) and not equal(block, 4) and equal(3, 3) and not equal(3, 4)
    assert not equal(rows, 0)
    with pytest.raises(Undecided, match="do not decide ROWS - 1 > 0"):
        equal(rows, 1)  # ROWS = 1 is in its domain


def test_a_conjunction_is_false_where_one_test_is_false_everywhere():
    """``all_of``: a test False on the whole domain decides, whichever comes first and whether or not another is
    undecided; else an undecided one raises."""
    assert not all_of(lambda: multiple(B, 64), lambda: equal(B, 4)) and not all_of(lambda: equal(B, 4),
                                                                                   lambda: multiple(B, 64))
    assert all_of(lambda: multiple(B, 32), lambda: B > 0) and all_of()
    with pytest.raises(Undecided, match="not a multiple of 64"):
        all_of(lambda: multiple(B, 64), lambda: B > 0)


def test_a_rounded_size_of_numbers_is_at_values_what_it_rounds():
    """A ``Ceil`` whose needs and base are numbers (the lift's ``named`` writes a constant polynomial as its int)
    still gives its bytes at values."""
    assert Ceil(((1, (4,)),), 32).at({}) == 32
    assert Ceil(((2, (B, 100)),), 32, 8).at({"BLOCK": 96}) == 8 + 2 * 128


def test_at_least_from_the_lows_whatever_the_highs():
    """``at_least_from_lows``: ``x >= y`` at every value from the symbols' lows, the highs left out (softmax_grad's
    packed 13-element rows: ``52 * ROWS`` and ``32 * ROWS + 224`` cross at 11.2, past a domain of ``ROWS`` up to
    11, so neither is at least the other); exact for multilinear differences, a variable with no domain never."""
    for high in (11, 770):
        rows = Poly.var(Symbol("ROWS", 1, 1, high))
        assert not at_least_from_lows(52 * rows, 32 * rows + 224) and not at_least_from_lows(32 * rows + 224, 52 * rows)
        assert at_least_from_lows(52 * rows, 4 * rows + 28) and at_least_from_lows(52 * rows, 52)
        assert not at_least_from_lows(52 * rows, 53)
    assert at_least_from_lows(4 * B, 128) and not at_least_from_lows(4 * B, 129)  # BLOCK from 32
    assert at_least_from_lows(R * B, 32 * R) and not at_least_from_lows(R * B, 33 * R)  # a term of two symbols
    assert at_least_from_lows(7, 7) and not at_least_from_lows(Poly.var("n"), 0)


def test_the_points_of_the_domains_of_some_sizes():
    """``domain_points``: every point of the domains of the symbols in some sizes (a ``Ceil``'s needs too), where
    they are few enough; ``value_at`` of each kind of size."""
    rows, block = Symbol("ROWS", 1, 1, 3), Symbol("BLOCK", 16, 32, 64)
    size = Ceil(((1, (Poly.var(block) // 8,)),), 32, 4 * Poly.var(rows))
    points = domain_points([256, size], 9)
    assert points == [{"BLOCK": b, "ROWS": r} for b in (32, 48, 64) for r in (1, 2, 3)]
    assert [value_at(x, points[-1]) for x in (256, size, 4 * Poly.var(rows))] == [256, 12 + 32, 12]
    assert domain_points([size], 8) is None and domain_points([Poly.var("n")], 9) is None
    assert domain_points([7], 1) == [{}]


def test_a_term_may_have_value_ids_and_symbols():
    """The memory-access analysis multiplies a program id (value id 3) by ``BLOCK``: ids sort before names."""
    p = Poly.var(3) * Poly.var(BLOCK) * 2 + Poly.var(BLOCK) * Poly.var(3) + 5
    assert p == Poly((((3, BLOCK), 3), ((), 5))) and str(p) == "3 * 3 * BLOCK + 5"
    assert p.canonical == (((), 5), ((3, BLOCK), 3))
