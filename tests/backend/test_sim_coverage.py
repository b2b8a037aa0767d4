"""Every kernel the backend and Triton-compatibility tests launch on the interpreter runs on the
simulator (issue 9's "done when"): the launches a test makes on both backends are compared by that
test; the others are replayed here, and each gives the same results or a located error naming a
feature not lowered yet or one the A2 vector cores cannot run; none gives other results or another
error."""
from pathlib import Path

import pytest

import ascdsl
from tests.backend import coverage
from tests.triton import compat_kernels
from tests.triton.conftest import Lib

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted(f"tests.backend.{p.stem}" for p in (ROOT / "tests" / "backend").glob("test_sim*.py")
                 if p.stem != "test_sim_coverage") + [
    "tests.triton.test_triton_language", "tests.triton.test_triton_modules", "tests.triton.test_tutorials",
    "tests.triton.test_rank3",
    "tests.triton.test_tutorial_memory", "tests.test_interpreter_dsl",
    "tests.test_interpreter_slices", "tests.test_interpreter_numerics", "tests.test_launch", "tests.test_frontend",
    "tests.test_block_ptr"]
"""Test modules whose interpreter launches are replayed."""


@pytest.mark.slow
def test_every_interpreter_kernel_runs_on_the_simulator_or_names_why_not():
    lib = Lib(name="ascdsl", k=compat_kernels.build(ascdsl, ascdsl.language), torch=None, triton=ascdsl)
    launches, compared = coverage.interpreter_launches(MODULES, lib)
    coverage.prebuild(launches)
    results = [coverage.replay(launch) for launch in launches]
    counts = {o: sum(r.outcome is o for r in results) for o in coverage.Outcome}
    summary = ", ".join(f"{n} {o.value}" for o, n in counts.items())
    print(f"\n{compared} launches compared by the tests that make them; {len(results)} more on the simulator: "
          f"{summary}")
    for r in results:
        if r.outcome is not coverage.Outcome.SAME:
            print(f"  {r.outcome.name}: {r.launch.kernel.name}: {r.detail}")
    failed = [f"{r.launch.kernel.name} {r.launch.grid}: {r.detail}" for r in results
              if r.outcome is coverage.Outcome.FAILED]
    assert not failed, "\n".join(failed)
    # ratchets: what the merged tests launch on both backends, and what lowers of the rest
    assert compared >= 757 and counts[coverage.Outcome.SAME] >= 110, summary
    hardware = {r.detail.split("error: ")[1].split(" cannot run")[0] for r in results
                if r.outcome is coverage.Outcome.HARDWARE}
    assert {h.split(" of ")[-1] if h.endswith(" tiles") else h for h in hardware} <= {
        "`tl.dot`", "reading the old values `tl.atomic_add` returns", "`tl.atomic_xchg`", "`tl.atomic_cas`",
        "int64 tiles"}, hardware
