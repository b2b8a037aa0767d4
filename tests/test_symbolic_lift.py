"""The lift tries the symbolic compile first (issue 25, step 6 of the "Symbolic tile extents" plan in
docs/design.md): a quantum on which the kernel compiled for the constexpr as a ``Symbol`` decides every choice
costs no sample compile; the lift's results stay the ones the samples give (``tests/test_lift_differential.py``
compares them with goldens, and ``ascdsl build ops/`` is byte-identical)."""
from __future__ import annotations

import pytest

from ascdsl.backend.lift import lift
from ascdsl.ir.symbol import Differs, Symbol
from tests.test_lift_differential import CASES, PLATFORM
from tests.test_symbolic_passes import F32
from tests.test_symbolic_plan import _ops_kernel


@pytest.fixture
def cold(monkeypatch, tmp_path):
    """No lift known: an empty on-disk cache and none of this process's lifts."""
    monkeypatch.setenv("ASCDSL_CACHE_DIR", str(tmp_path))
    lift._analyse.cache_clear()
    lift._KNOWN.clear()
    yield
    lift._analyse.cache_clear()
    lift._KNOWN.clear()


@pytest.mark.parametrize("name, extents, sampled", [
    # quanta 1, 2, 4 undecided (bytes no whole blocks): sampled; 8 decided; the joint fit's grid, checks and
    # high sampled. Sampling alone: 24 compiles.
    ("copy_f32", (Symbol("BLOCK", 8, 8, 11776),), 19),
    # ROWS decided on multiples of 1 from 2: 3 samples ask whether 1 is its low (no: a unit axis). Alone: 34.
    ("add_row_f32", (Symbol("ROWS", 1, 2, 2943), Symbol("BLOCK", 8, 8, 7848)), 18),
    # float16 rows of BLOCK lanes decided on multiples of 16, ROWS on multiples of 1 (its [ROWS, 1] row sums'
    # Brcb sized by ROWS + 7 rows: 41 before). Alone: 61.
    ("softmax_f16", (Symbol("ROWS", 1, 1, 485), Symbol("BLOCK", 16, 16, 23504)), 35),
])
def test_a_quantum_the_symbol_decides_is_not_sampled(cold, name, extents, sampled):
    fn, types, constexprs = CASES[name]
    before = lift.samples()
    found = lift.analyse(fn, fn.specialize(*types, **constexprs).kernels[0], PLATFORM)
    assert found.extents == extents
    assert sum((lift.samples() - before).values()) == sampled


def test_a_rounded_slot_is_decided_too(cold):
    """rms_norm's float32 kernel: its reduction's ``BLOCK / 8``-byte buffer takes a ``ceil32(1/8 * BLOCK)`` slot,
    which the symbolic planner sizes since issue 25's step 5 "Next": quantum 64 is decided, so its generic samples
    go. 33 -> 28 (the joint fit compiles 4 of the samples the search no longer did). The quanta below: the
    reduction's ``ceil(BLOCK / 64)`` repeats ``Differs``, its values at the generic samples on no line, so they
    are not compiled to see it: 28 -> 5 (the joint fit's)."""
    fn, types, constexprs = _ops_kernel("rms_norm", "rms_norm_kernel", F32)
    before = lift.samples()
    found = lift.analyse(fn, fn.specialize(*types, **constexprs).kernels[0], PLATFORM)
    assert found.extents == (Symbol("BLOCK", 64, 64, 9344),)
    assert sum((lift.samples() - before).values()) == 5


def test_a_row_broadcast_s_rows_are_decided(cold, monkeypatch, tmp_path):
    """softmax_grad's float32 ``rows_kernel``: its ``[ROWS, 1]`` row sums broadcast through ``Brcb``, whose blocks
    the general form sizes by ``ROWS + 7`` rows (no ``ROWS // 8``, which multiples of 1 leave undecided), so
    ``ROWS`` is decided on multiples of 1 from 2 and 3 samples ask whether 1 is its low: 44 -> 37."""
    fn, types, constexprs = _ops_kernel("softmax_grad", "rows_kernel", F32, BLOCK_K=40, FRONT=False)
    monkeypatch.setenv("ASCDSL_CACHE_DIR", str(tmp_path / "cold"))  # choosing the kernel lifted it: forget that
    lift._analyse.cache_clear()
    lift._KNOWN.clear()
    before = lift.samples()
    found = lift.analyse(fn, fn.specialize(*types, **constexprs).kernels[0], PLATFORM)
    assert found.extents == (Symbol("ROWS", 1, 1, 452), Symbol("BLOCK_K", 8, 8, 9408))
    assert sum((lift.samples() - before).values()) == 37


def test_a_value_that_differs_skips_a_quantum_only_where_the_samples_would_not_fit():
    """``Differs`` skips a quantum's samples only where its value at the generic samples is on no line through the
    first two (what ``_check`` fits): ``ceil(BLOCK / 64)`` at 96, 160, 128 is 2, 3, 2; ``ceil(BLOCK / 128)`` is 1 at
    every multiple of 1 the search samples (up to 101): on a line, so they are compiled."""
    generic = [3, 5, 4, 7, 11, 16, 37, 101]
    repeats = lambda per: Differs("", lambda values: -(-values["BLOCK"] // per))  # noqa: E731
    assert lift._no_line(repeats(64), "BLOCK", [32 * v for v in generic])
    assert lift._no_line(repeats(64), "BLOCK", generic)  # 1 up to 64 lanes, 2 at 101
    assert not lift._no_line(repeats(128), "BLOCK", generic)
