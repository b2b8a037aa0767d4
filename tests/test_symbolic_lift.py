"""The lift compiles the kernel for its constexprs as symbols (issue 25, step 6 of the "Symbolic tile extents"
plan in docs/design.md): a quantum on which the kernel compiled for the constexpr as a ``Symbol`` decides every
choice costs no sample compile, and one that does not decide is passed over (the sampler is retired, step 6 (g)).
The lift's results stay the ones the samples gave (``tests/test_lift_differential.py`` compares them with goldens,
``ascdsl build ops/`` is byte-identical, and each value's kernel is the symbols' kernel at it, asked here)."""
from __future__ import annotations

import itertools

import pytest

import ascdsl
import ascdsl.language as tl

from ascdsl.backend.lift import lift, symbolic
from ascdsl.backend.render import ascendc
from ascdsl.backend.render.ascendc import planned
from ascdsl.ir.symbol import Differs, Symbol, Undecided
from ascdsl.opbuild import jit_functions
from tests.test_lift_differential import CASES, F16, F32, PLATFORM
from tests.test_symbolic_plan import _ops_kernel
from tests.test_symbolic_selection import OPS


@pytest.fixture
def cold(monkeypatch, tmp_path):
    """No lift known: an empty on-disk cache and none of this process's lifts."""
    monkeypatch.setenv("ASCDSL_CACHE_DIR", str(tmp_path))
    lift._analyse.cache_clear()
    lift._KNOWN.clear()
    yield
    lift._analyse.cache_clear()
    lift._KNOWN.clear()


@ascdsl.jit
def masked_add_kernel(x_ptr, y_ptr, out_ptr, n_cols, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    """``[ROWS, BLOCK]`` tiles added, columns masked past ``n_cols``: one row is no other kernel (``ROWS`` from
    1), but selection asks whether ``ROWS`` is 1."""
    offs = (tl.program_id(0) * ROWS + tl.arange(0, ROWS)[:, None]) * n_cols + tl.arange(0, BLOCK)[None, :]
    mask = tl.arange(0, BLOCK)[None, :] < n_cols
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


JOINT = {**CASES, "masked_add": (masked_add_kernel, (F32, F32, F32, tl.int32), {"ROWS": 24, "BLOCK": 40})}


@pytest.mark.parametrize("name, extents, sampled", [
    # quanta 1, 2, 4 undecided (bytes no whole blocks): passed over (14 generic samples before the sampler
    # retired); 8 decided; the joint fit from the symbolic compile. Sampling alone: 24 compiles; the joint fit
    # sampled: 19.
    ("copy_f32", (Symbol("BLOCK", 8, 8, 11776),), 0),
    # ROWS decided on multiples of 1 from 2: 1 is its low? (no: a unit axis) asked of the sample at 1 fitted with
    # the symbolic kernel at 3 and 5 (3 samples before); the joint fit from the symbolic compile; BLOCK's quanta
    # 1, 2, 4 undecided, passed over (10 -> 1 with the sampler retired). Alone: 34; the joint fit sampled: 18.
    ("add_row_f32", (Symbol("ROWS", 1, 2, 2943), Symbol("BLOCK", 8, 8, 7848)), 1),
    # float16 rows of BLOCK lanes decided on multiples of 16, ROWS on multiples of 1 (its [ROWS, 1] row sums'
    # Brcb sized by ROWS + 7 rows: 41 before); the joint fit sampled (ROWS from 1: the symbolic compile asks
    # whether ROWS is 1). Alone: 61. BLOCK's quanta 1 to 8: its casts' ROWS * ceil(BLOCK / 16) * 16 lanes Differs,
    # on no line at the generic samples, so they are not compiled (35 before). The joint fit from the symbols from
    # ROWS = 2, its points at ROWS = 1 sampled, their rounded slots the symbols' (``symbolic.evaluated``): 11 -> 4;
    # BLOCK's domain from its low, not two quanta (only the unit axis from 2), so only ROWS = 1 is sampled: 4 -> 3.
    ("softmax_f16", (Symbol("ROWS", 1, 1, 485), Symbol("BLOCK", 16, 16, 23504)), 3),
    # ROWS decided on multiples of 1 from 2 but not from 1 (is ROWS 1?): one sample at 1 is the symbolic kernel
    # at 1, so 1 is the low (three samples asked it); the joint fit from the symbols from 2, the points at ROWS
    # = 1 sampled. Alone: 34. BLOCK's quanta 1 to 4: the add's 24 rows of ceil(BLOCK / 8) * 8 lanes Differs, on
    # no line at the generic samples, so they are not compiled to see it (13 before). The joint fit's domains: ROWS
    # from 2, BLOCK from its low (4 -> 3).
    ("masked_add", (Symbol("ROWS", 1, 1, 1472), Symbol("BLOCK", 8, 8, 11776)), 3),
])
def test_a_quantum_the_symbol_decides_is_not_sampled(cold, name, extents, sampled):
    fn, types, constexprs = JOINT[name]
    before = lift.samples()
    found = lift.analyse(fn, fn.specialize(*types, **constexprs).kernels[0], PLATFORM)
    assert found.extents == extents
    assert sum((lift.samples() - before).values()) == sampled


def test_a_rounded_slot_is_decided_too(cold):
    """rms_norm's float32 kernel: its reduction's ``BLOCK / 8``-byte buffer takes a ``ceil32(1/8 * BLOCK)`` slot,
    which the symbolic planner sizes since issue 25's step 5 "Next": quantum 64 is decided, so its generic samples
    go, and the joint fit is the symbolic compile's. The quanta below: the reduction's ``ceil(BLOCK / 64)``
    repeats ``Differs``, its values at the generic samples on no line, so they are not compiled to see it.
    33 samples before; none now: the lift of rms_norm compiles no sample."""
    fn, types, constexprs = _ops_kernel("rms_norm", "rms_norm_kernel", F32)
    before = lift.samples()
    found = lift.analyse(fn, fn.specialize(*types, **constexprs).kernels[0], PLATFORM)
    assert found.extents == (Symbol("BLOCK", 64, 64, 9344),)
    assert sum((lift.samples() - before).values()) == 0


def test_a_unit_axis_s_low_is_sampled_beside_the_symbols():
    """``ROWS == 1`` is undecided on a domain from 1; from 2 the kernel compiled for the symbols decides."""
    fn, types, _ = JOINT["masked_add"]
    with pytest.raises(Undecided, match="ROWS - 1 > 0"):
        planned(fn.specialize(*types, ROWS=Symbol("ROWS", 1, 1, 11), BLOCK=Symbol("BLOCK", 8, 8, 88)).kernels[0],
                PLATFORM, general=True)
    planned(fn.specialize(*types, ROWS=Symbol("ROWS", 1, 2, 11), BLOCK=Symbol("BLOCK", 8, 8, 88)).kernels[0],
            PLATFORM, general=True)


def _the_symbols_kernel_at_each_value(fn, kernel, found) -> None:
    """Each value's kernel (compiled at the value, in the general form) is the kernel compiled for the lifted
    extents as symbols (from two to 11 quanta) at it: at two values a constexpr, at 7 and 11 quanta, and at each
    high (the others at two quanta), every value from two quanta (a unit axis's low is asked by the lift itself)."""
    s = lift._Sampler(fn, kernel, PLATFORM)
    quanta = {e.name: e.quantum for e in found.extents}
    template = symbolic.named(s.symbolic(tuple(Symbol(e.name, e.quantum, 2 * e.quantum, 11 * e.quantum)
                                               for e in found.extents)), quanta)
    names = tuple(quanta)
    base = {n: 2 * quanta[n] for n in names}
    points = [dict(zip(names, vs)) for vs in itertools.product(*[(3 * quanta[n], 5 * quanta[n]) for n in names])]
    points += [{n: (7 + 4 * (i % 2)) * quanta[n] for i, n in enumerate(names)}]
    points += [{**base, e.name: e.high} for e in found.extents]
    for p in points:
        assert s.compile(p) == symbolic.evaluated(template, p), p


@pytest.mark.parametrize("name", ["copy_f32", "add_row_f32", "masked_add", "softmax_f16"])
def test_each_value_s_kernel_is_the_symbols_kernel_at_it(cold, name):
    """What the retired sampler checked, each lift asked at the sampler's points and the highs: the joint fit's
    grid of two values a constexpr, another value, each high."""
    fn, types, constexprs = JOINT[name]
    kernel = fn.specialize(*types, **constexprs).kernels[0]
    _the_symbols_kernel_at_each_value(fn, kernel, lift.analyse(fn, kernel, PLATFORM))


def test_a_row_broadcast_s_rows_are_decided(cold, monkeypatch, tmp_path):
    """softmax_grad's float32 ``rows_kernel``: its ``[ROWS, 1]`` row sums broadcast through ``Brcb``, whose blocks
    the general form sizes by ``ROWS + 7`` rows (no ``ROWS // 8``, which multiples of 1 leave undecided), so
    ``ROWS`` is decided on multiples of 1 from 2 and 3 samples ask whether 1 is its low: 44 -> 37, and 32 with the
    joint fit from the symbolic compile; its ``BLOCK_K`` quanta 1 to 4 not compiled, the lanes of its arithmetic,
    ``ROWS * ceil(BLOCK_K / 8) * 8``, on no line at their generic samples (:class:`Differs`): 32 -> 14; ``ALIGN``,
    which sizes no buffer here, dropped from the joint fit without its samples: 14 -> 4;
    the joint fit's ``BLOCK_K`` from its low (only ``ROWS`` from 2), so only the points at ``ROWS = 1`` sampled:
    4 -> 3."""
    fn, types, constexprs = _ops_kernel("softmax_grad", "rows_kernel", F32, BLOCK_K=40, FRONT=False)
    found, samples = _lifted_cold(monkeypatch, tmp_path, fn, types, constexprs)
    assert found.extents == (Symbol("ROWS", 1, 1, 452), Symbol("BLOCK_K", 8, 8, 9408))
    assert samples == 3


def test_a_row_pitch_the_kernel_holds_differs(cold, monkeypatch, tmp_path):
    """log_softmax_grad's float32 ``reduce_tail_recompute_kernel``: its row sums of ``[1, BLOCK_R]`` tiles offset row
    ``r`` by ``r * ceil(BLOCK_R / 8) * 8`` lanes (``repeat.row``); on multiples of 1, 2 or 4 that pitch
    :class:`Differs`, its values at the generic samples on no line, so the quanta below 8 are not compiled, and 8
    decides: the lift compiles no sample (9 before), its extents the sampled ones."""
    fn, types, constexprs = _ops_kernel("log_softmax_grad", "reduce_tail_recompute_kernel", F32)
    with pytest.raises(Differs) as e:
        planned(fn.specialize(*types, **{**constexprs, "BLOCK_R": Symbol("BLOCK_R", 2, 4, 202)}).kernels[0],
                PLATFORM, general=True)
    assert [e.value.value({"BLOCK_R": v}) for v in (4, 6, 8, 10)] == [8, 8, 8, 16]
    found, samples = _lifted_cold(monkeypatch, tmp_path, fn, types, constexprs)
    assert found.extents == (Symbol("BLOCK_R", 8, 8, 11752),)
    assert samples == 0


def test_a_column_reduction_s_row_pitch_differs(cold, monkeypatch, tmp_path):
    """log_softmax_grad's float32 ``reduce_middle_full_kernel``: its ``[BLOCK_R, BLOCK_B]`` column sums add row ``r``
    at ``r * ceil(BLOCK_B / 8) * 8`` (``reduce._columns``), so ``BLOCK_B``'s quanta below 8 are not compiled: 21 -> 3.
    ``BLOCK_R`` is decided from 2, and whether 1 is its low (no: a unit reduction) asks the sample at 1 fitted with
    the symbolic kernel at 3 and 5, which the samples there are: 3 -> 1."""
    fn, types, constexprs = _ops_kernel("log_softmax_grad", "reduce_middle_full_kernel", F32)
    found, samples = _against_the_values(monkeypatch, tmp_path, fn, types, constexprs)
    assert found.extents == (Symbol("BLOCK_R", 1, 2, 1471), Symbol("BLOCK_B", 8, 8, 5232))
    assert samples == 1  # 53 sampled alone


def test_a_cast_s_lanes_differ(cold, monkeypatch, tmp_path):
    """softmax_grad's float16 ``two_pass_kernel``: its ``[1, BLOCK_K]`` half tiles cast to float32 over
    ``ceil(BLOCK_K / 16) * 16`` lanes (the pitch of the kernel's narrowest 2-D tile), so ``BLOCK_K``'s quanta 1 to 8
    are not compiled, and 16 decides: the search for ``BLOCK_K``'s quantum compiles none (12 before), the lift
    18 -> 6; with ``ALIGN``, which sizes no buffer here, dropped from the joint fit unsampled
    (no buffer sized by it: the joint fit's Mismatch), 6 -> 0."""
    fn, types, constexprs = _ops_kernel("softmax_grad", "two_pass_kernel", F16)
    found, samples = _lifted_cold(monkeypatch, tmp_path, fn, types, constexprs)
    assert found.extents == (Symbol("BLOCK_K", 16, 16, 11744),)
    assert samples == 0


def _lifted_cold(monkeypatch, tmp_path, fn, types, constexprs) -> tuple:
    """The lift of ``fn`` at ``constexprs`` with nothing cached (choosing the kernel lifted it: forget that), and
    the samples it compiled."""
    monkeypatch.setenv("ASCDSL_CACHE_DIR", str(tmp_path / "cold"))
    lift._analyse.cache_clear()
    lift._KNOWN.clear()
    before = lift.samples()
    found = lift.analyse(fn, fn.specialize(*types, **constexprs).kernels[0], PLATFORM)
    return found, sum((lift.samples() - before).values())


def test_a_rounded_slot_of_the_joint_fit_is_each_value_s(cold):
    """rms_norm's float32 kernel lifted from the kernel compiled for its symbol: its ``ceil32(1/8 * BLOCK)`` slot
    (a ``Ceil``) at each value is the slot of the kernel compiled at it."""
    fn, types, constexprs = _ops_kernel("rms_norm", "rms_norm_kernel", F32)
    kernel = fn.specialize(*types, **constexprs).kernels[0]
    _the_symbols_kernel_at_each_value(fn, kernel, lift.analyse(fn, kernel, PLATFORM))


def test_a_kernel_that_does_not_decide_is_planned_once():
    """``Undecided`` is remembered as a refusal is: asked again, the pass pipeline does not run again."""
    fn, types, _ = JOINT["masked_add"]
    kernel = fn.specialize(*types, ROWS=Symbol("ROWS", 1, 1, 13), BLOCK=Symbol("BLOCK", 8, 8, 88)).kernels[0]
    before = ascendc.work()
    for _ in range(2):
        with pytest.raises(Undecided, match="ROWS - 1 > 0"):
            planned(kernel, PLATFORM, general=True)
    assert sum(n for key, n in (ascendc.work() - before).items() if key[0] == "plan") == 1


def _flat_rows(op_name: str, kernel_name: str, k: str, dtype) -> tuple:
    """``(fn, types, constexprs)`` of an op's packed kernel (``ascdsl.lib``'s flat rows: only the Python entry
    launches it), rows of ``k`` = 24 elements."""
    (op,) = [op for op in OPS if op.name == op_name]
    fn = jit_functions(op)[kernel_name]
    return fn, [tl.pointer_type(dtype)] * 3 + [tl.int32] * 2, {"ROWS": 16, k: 24}


@pytest.mark.parametrize("op_name, kernel_name, k", [("softmax_grad", "packed_kernel", "K"),
                                                     ("log_softmax_grad", "reduce_tail_packed_kernel", "D1")])
@pytest.mark.parametrize("dtype", [tl.float32, tl.float16])
def test_a_flat_tile_reshaped_to_rows_of_symbols_lifts_without_samples(cold, monkeypatch, tmp_path, op_name,
                                                                        kernel_name, k, dtype):
    """The packed kernels: a ``[ROWS * K]`` tile read flat and reshaped to ``[ROWS, K]`` (and back to store it) is
    compiled for ``ROWS`` and ``K`` as symbols: on multiples of 8 the float32 rows are whole blocks (the reshape
    moves nothing); below, whether it moves them (a ``Gather``) :class:`Differs` between the generic samples, so
    those quanta are not compiled; ``ROWS`` from 1 is decided (a ``[ROWS, 1]`` broadcast is no unit axis of the
    ``K`` columns, a 1-D tile of ``ROWS`` lanes at least 1 lane); a float16 input slot of ``ceil32(48 * ROWS)`` bytes
    is the kernel compiled at each value's. The lift compiles no sample (34 before)."""
    fn, types, constexprs = _flat_rows(op_name, kernel_name, k, dtype)
    kernel = fn.specialize(*types, **constexprs).kernels[0]
    before = lift.samples()
    found = lift.analyse(fn, kernel, PLATFORM)
    assert sum((lift.samples() - before).values()) == 0
    assert found.names == ("ROWS", k) and found.extents[1].quantum == 8
    _the_symbols_kernel_at_each_value(fn, kernel, found)


@pytest.mark.parametrize("relu", [False, True])
def test_a_kernel_that_multiplies_matrices_is_not_sampled(cold, monkeypatch, relu):
    """matmul's float16 kernel, pure-cube and MIX: its lifted kernel would be the vector pipeline's, which refuses
    `tl.dot` at every value (each of the 9 quanta of ``BLOCK_M``, ``BLOCK_N`` and ``BLOCK_K`` a failed sample,
    27 a kernel, 108 over ``ops/``), and its cube class is rendered from the specialisation: no lift, as the
    samples found, without them. Past the cube check, the symbolic compile refuses ``tl.dot`` at every quantum too:
    no quantum decides, and none is sampled (27 before the sampler retired)."""
    fn, types, constexprs = _ops_kernel("matmul", "matmul_kernel", F16, RELU=relu)
    kernel = fn.specialize(*types, **constexprs).kernels[0]
    before = lift.samples()
    assert lift.analyse(fn, kernel, PLATFORM) is None
    assert lift._sample(fn, kernel, PLATFORM, frozenset()) is None
    assert sum((lift.samples() - before).values()) == 0


def _against_the_values(monkeypatch, tmp_path, fn, types, constexprs) -> tuple:
    """The lift of ``fn`` at ``constexprs`` and its samples, each value's kernel asserted the symbols' at it."""
    found, samples = _lifted_cold(monkeypatch, tmp_path / "symbols", fn, types, constexprs)
    _the_symbols_kernel_at_each_value(fn, fn.specialize(*types, **constexprs).kernels[0], found)
    return found, samples


def test_a_masked_copy_is_no_whole_block_copy(cold, monkeypatch, tmp_path):
    """softmax's float32 ``softmax_looped_kernel``: its masked loads are no plain ``DataCopy`` of whole blocks whether
    or not ``BLOCK`` is a multiple of 8 (``memory._whole_blocks`` asks both: ``ir.symbol.all_of``), so its quanta 1
    to 8 are no longer undecided there: the lift compiles no sample (9 before)."""
    fn, types, constexprs = _ops_kernel("softmax", "softmax_looped_kernel", F32)
    found, samples = _against_the_values(monkeypatch, tmp_path, fn, types, constexprs)
    assert found.extents == (Symbol("BLOCK", 64, 64, 15488),)
    assert samples == 0  # 33 sampled alone


@pytest.mark.parametrize("op, kernel, extents, counts", [
    ("log_softmax_grad", "reduce_tail_full_kernel", (Symbol("ROWS", 1, 1, 485), Symbol("BLOCK_R", 8, 8, 11752)),
     (3, 51)),
    ("scale_add", "scale_add_kernel", (Symbol("BLOCK", 1, 1, 11776),), (1, 11)),
])
def test_a_unit_low_s_rounded_slot_is_the_symbols_at_it(cold, monkeypatch, tmp_path, op, kernel, extents, counts):
    """log_softmax_grad's float32 ``reduce_tail_full_kernel``: the joint fit's domains start at ``ROWS = 2`` (is
    ``ROWS`` 1?), so the kernel sampled at ``ROWS = 1`` is compared with the symbols' kernel there, whose rounded
    slot (a ``Ceil``, its needs numbers once named) is that point's bytes too (``symbolic.evaluated``): the joint
    fit is the symbols' (9 -> 4; 3 with ``BLOCK_R``'s joint domain from its low, not two quanta). scale_add's
    float32 kernel, ``BLOCK`` from 1, needs that and its masked loads decided (``memory._whole_blocks``): 11 -> 1."""
    fn, types, constexprs = _ops_kernel(op, kernel, F32)
    found, samples = _against_the_values(monkeypatch, tmp_path, fn, types, constexprs)
    assert found.extents == extents
    assert samples == counts[0]  # counts[1] sampled alone


def test_a_constexpr_that_sizes_no_buffer_is_not_sampled(cold, monkeypatch, tmp_path):
    """softmax_grad's float32 ``rows_kernel`` without ``FRONT``: ``ALIGN`` sizes nothing (its search decides every
    quantum); the joint fit compiled for the symbols finds that no buffer's size has ``ALIGN`` and drops it as the
    samples would, where it sampled the joint fit to see it: 14 -> 4 (3 with ``BLOCK_K``'s
    joint domain from its low)."""
    fn, types, constexprs = _ops_kernel("softmax_grad", "rows_kernel", F32, FRONT=False)
    found, samples = _against_the_values(monkeypatch, tmp_path, fn, types, constexprs)
    assert found.extents == (Symbol("ROWS", 1, 1, 452), Symbol("BLOCK_K", 8, 8, 9408))
    assert samples == 3  # 88 sampled alone


def test_a_filled_tile_s_lanes_differ(cold, monkeypatch, tmp_path):
    """softmax_grad's float32 ``rows_kernel`` with ``FRONT``: its ``[ROWS, ALIGN]`` row sums are filled by a
    ``Duplicate`` of ``ROWS * ceil(ALIGN / 8) * 8`` lanes over a view of as many (``Selector.ref``): those the
    kernel holds, so on multiples of 1, 2 or 4 they :class:`Differs` (on no line at the generic samples) and those
    quanta are not compiled: 37 -> 6."""
    fn, types, constexprs = _ops_kernel("softmax_grad", "rows_kernel", F32, FRONT=True)
    found, samples = _against_the_values(monkeypatch, tmp_path, fn, types, constexprs)
    assert found.extents == (Symbol("ROWS", 1, 1, 448), Symbol("BLOCK_K", 8, 8, 11736), Symbol("ALIGN", 8, 8, 15672))
    assert samples == 5  # 102 sampled alone


@pytest.mark.parametrize("op, kernel, constexprs, extents, counts", [
    ("log_softmax_grad", "reduce_tail_recompute_kernel", {}, (Symbol("BLOCK_R", 16, 16, 11744),), (0, 23)),
    ("softmax_grad", "two_pass_kernel", {"FRONT": True, "ALIGN": 16}, (Symbol("BLOCK_K", 16, 16, 11760),), (1, 49)),
])
def test_a_best_fit_the_same_at_every_point_is_decided(cold, monkeypatch, tmp_path, op, kernel, constexprs, extents,
                                                       counts):
    """float16 kernels whose best fit of a buffer is between a 256-byte slot and one of ``4 * BLOCK`` bytes (an
    order that flips at 64 lanes): the planner asks each point of the domain, the one slot at all of them, so the
    quanta from 16 decide: log_softmax_grad's ``reduce_tail_recompute_kernel`` 11 -> 0 samples, softmax_grad's
    ``two_pass_kernel`` with ``FRONT`` 21 -> 7; its joint fit with ``ALIGN`` (whose ``4 * ALIGN``-byte buffer goes
    to one slot or another as ``BLOCK_K`` and ``ALIGN`` vary) :class:`Differs` at the joint fit's points so that
    they fit no polynomial: refused without sampling it (the joint fit's Mismatch), 7 -> 1."""
    fn, types, base = _ops_kernel(op, kernel, F32)
    types = [F16 if t == F32 else t for t in types]
    found, samples = _against_the_values(monkeypatch, tmp_path, fn, types, {**base, **constexprs})
    assert found.extents == extents
    assert samples == counts[0]  # counts[1] sampled alone
