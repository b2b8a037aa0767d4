"""Copies of one row that follow each other in GM and in UB made as one (:mod:`ascdsl.backend.plan.coalesce`):
layer norm's X-resident form at one row a trip loads and stores a row in one ``DataCopyPad`` each, where it made
one a chunk; at two rows a trip (bursts a row apart in GM) it keeps a copy a chunk. On the simulator, the last
chunk part-full, the interpreter's results."""
from __future__ import annotations

from ascdsl.backend import kir
from ascdsl.backend.render.ascendc import planned
from tests.test_held_loads import PLATFORM, assert_simulator_agrees, x_resident, x_resident_at


def _copies(kernel, k, name: str) -> list:
    """The copies (``DataCopyPad``, ``DataCopy``) of compiled ``k`` through ``kernel``'s pointer ``name``."""
    param = kernel.param_names.index(name)
    return [s for st in k.stages for s in kir.walk(st.body) if isinstance(s, kir.Call) and s.api in (
        "DataCopyPad", "DataCopy") and (s.dst if isinstance(s.dst, kir.Gm) else s.srcs[0]).param == param]


def test_a_row_in_chunks_is_one_copy_each_way():
    """Rows of 8192 float32 at one row a trip: ``X`` in one copy of ``7168 + WCount`` floats (eight of 1024 before:
    the trip's row count is ``min(rows left, 1)``), ``Y`` stored in one; ``W`` and ``B``, two tensors interleaved
    in the held buffer, stay a copy a chunk. At two rows a trip, eight copies of ``X`` (two bursts each)."""
    kernel, _ = x_resident(256, 8192)
    k = planned(kernel, PLATFORM)
    (x,), (y,) = _copies(kernel, k, "X"), _copies(kernel, k, "Y")
    assert x.dst.offset == kir.lit(0) and x.dst.extent == 8192 and y.srcs[0].extent == 8192
    assert len(_copies(kernel, k, "W")) == 8
    kernel2, _ = x_resident_at(256, 8192, 2)
    assert len(_copies(kernel2, planned(kernel2, PLATFORM), "X")) == 8


def test_merged_copies_on_the_simulator(monkeypatch):
    """Rows of 7000 float32 (seven chunks, the last of 856) at one row a trip on two cores, hazard checks on: the
    interpreter's results."""
    monkeypatch.setenv("ASCDSL_BATCH", "0")
    m = 5
    kernel, args = x_resident(m, 7000)
    assert_simulator_agrees(kernel, args, m, 2)
