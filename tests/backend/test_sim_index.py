"""The simulator's kernel index: a kernel that a file of another process holds is launched from that file
(its g++ build shared through the build cache), and a prebuild leaves it out."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import ascdsl
import ascdsl.language as tl
from ascdsl import sim
from ascdsl.backend import simrun

PLATFORM = "Ascend910B3"


@ascdsl.jit
def scaled(src, dst, factor, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + i, tl.load(src + i) * factor)


def launch(block: int) -> None:
    x, out = np.arange(128, dtype=np.float32), np.zeros(128, np.float32)
    scaled[(128 // block,)](x, out, np.float32(3.0), BLOCK=block, backend="sim")
    assert out.tobytes() == (x * np.float32(3.0)).tobytes()


def recorded(*blocks: int) -> list:
    with simrun.recording() as launches:
        for block in blocks:
            launch(block)
    return launches


def as_another_process(monkeypatch) -> None:
    """This process as a fresh one sees it: no prebuilt files, no kernel's file remembered (the caches stay)."""
    monkeypatch.setattr(simrun, "_prebuilt", {})
    simrun._compiled.cache_clear()


def test_a_kernel_in_a_file_another_process_built_is_launched_from_that_file(fresh_sim_index, monkeypatch):
    first, second = recorded(32, 64)
    assert simrun.prebuild([first, second]) == 1
    shared = simrun._compiled(*first)[0]
    launch(32)  # builds the shared file
    as_another_process(monkeypatch)
    builds = sim.build_stats().builds
    launch(64)
    assert simrun._compiled(*second) == (shared, 2)
    assert sim.build_stats().builds == builds  # no g++ run: the shared file's library


def test_a_prebuild_leaves_out_a_kernel_another_process_has_a_file_for(fresh_sim_index, monkeypatch):
    first, second = recorded(32, 64)
    assert simrun.prebuild([first]) == 1
    alone = simrun._compiled(*first)[0]
    as_another_process(monkeypatch)
    assert simrun.prebuilt(*first) and not simrun.prebuilt(*second)
    assert simrun.prebuild([first, second]) == 1
    assert simrun._compiled(*first) == (alone, 1) and simrun._compiled(*second)[0].variants == 1
    assert simrun.prebuild([first, second]) == 0


def test_an_indexed_file_whose_text_changed_is_not_used(fresh_sim_index, monkeypatch):
    """A file whose text no longer has the hash in its name (planted, truncated) is not launched: its kernel
    gets a file of its own, and runs right."""
    first, second = recorded(16, 128)  # block sizes of this test's own: no other test uses its file
    simrun.prebuild([first, second])
    shared = Path(simrun._compiled(*first)[0].path)
    shared.write_text(shared.read_text()[:200])
    as_another_process(monkeypatch)
    assert not simrun.prebuilt(*second)
    launch(128)
    assert simrun._compiled(*second)[0].path != str(shared)
