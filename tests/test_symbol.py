"""The symbol of a run-time tile extent (ascdsl/ir/symbol.py): its domain, the values it admits, the
largest admitted value a footprint allows; and the lift's extents are symbols that answer as the
lifted variant does."""
from __future__ import annotations

import dataclasses

import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl.backend.lift import lift
from ascdsl.backend.plan.tiling import Variant
from ascdsl.ir.symbol import Symbol, largest_fitting
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
