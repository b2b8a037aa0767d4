"""The ordering pass (:mod:`ascdsl.backend.plan.order`): a run of vector calls laid out so that the barriers
:mod:`ascdsl.backend.plan.sync` puts between them are fewer, every dependence kept (on the simulator, hazard
checks on, the results equal the interpreter's)."""
from __future__ import annotations

from ascdsl.backend import kir
from ascdsl.backend.plan.order import _barriers, _laid_out, _Touch
from ascdsl.backend.render.ascendc import compile_variant
from tests.test_held_loads import PLATFORM, assert_simulator_agrees, x_resident


def _t(reads=(), writes=()):
    def areas(slots):
        return frozenset((s, 0, float("inf")) for s in slots)
    return _Touch(areas(reads), areas(writes), False)


def test_independent_chains_interleave():
    """Two chains of two calls (slot 1 -> 2 and slot 3 -> 4) need a barrier in each chain in program order, one
    barrier laid out (both first calls, then both second ones); a call that writes a slot an earlier call reads
    (slot 2 after it is read) stays after it."""
    chains = [_t((1,), (2,)), _t((2,), (2,)), _t((3,), (4,)), _t((4,), (4,))]
    assert _barriers(chains) == 2
    order = _laid_out(chains)
    assert order == [0, 2, 1, 3] and _barriers([chains[j] for j in order]) == 1
    war = [_t((2,), (5,)), _t((6,), (6,)), _t((7,), (2,))]  # the third overwrites what the first reads
    assert _laid_out(war).index(2) > _laid_out(war).index(0)
    assert _barriers([_t((1,), (1,)), _Touch(frozenset(), frozenset(), True)]) == 1  # a loop of dependent trips


def _apis(s) -> set:
    return {x.api for x in kir.walk((s,)) if isinstance(x, kir.Call)}


def test_the_output_chunks_of_a_row_in_ub_are_issued_together():
    """Layer norm's X-resident form at rows of 8192 float32 (eight chunks of 1024 held in UB, each chunk's
    ``x_hat * w + b`` in its own buffer): the eight products by the rstd's broadcast follow each other with no
    barrier between them (selected chunk by chunk, a barrier before each call: 73 barriers in the kernel, 58 so; 46
    with the tiles spread over UB slots, ``ubplan.SPREAD``)."""
    k = compile_variant(x_resident(256, 8192)[0], PLATFORM)
    barriers = sum(isinstance(s, kir.Barrier) for st in k.stages for s in kir.walk(st.body))
    assert barriers == 46
    (stage,) = [st for st in k.stages if st.kind is kir.StageKind.COMPUTE and _apis_of(st) >= {"Brcb", "Sub"}]
    brcb = [i for i, s in enumerate(stage.body) if "Brcb" in _apis(s)][-1]
    products = [i for i, s in enumerate(stage.body) if i > brcb and _apis(s) == {"Mul"}][:8]
    assert not any(isinstance(s, kir.Barrier) for s in stage.body[products[0]:products[-1]])


def _apis_of(stage) -> set:
    return {x.api for x in kir.walk(stage.body) if isinstance(x, kir.Call)}


def test_reordered_rows_on_the_simulator(monkeypatch):
    """The reordered X-resident kernel (rows of 8192 float32, each core's loop over its rows) on the simulator,
    hazard checks on: the interpreter's results."""
    monkeypatch.setenv("ASCDSL_BATCH", "0")
    m = 5
    kernel, args = x_resident(m, 8192)
    assert_simulator_agrees(kernel, args, m, 2)
