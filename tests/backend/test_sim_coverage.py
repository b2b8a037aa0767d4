"""Every kernel the backend and Triton-compatibility tests launch on the interpreter runs on the
simulator (issue 9's "done when"): the launches a test makes on both backends are compared by that
test; the others are replayed here, and each gives the same results or a located error naming a
feature not lowered yet or one the A2 vector cores cannot run; none gives other results or another
error."""
import types
from pathlib import Path

import numpy as np
import pytest

import ascdsl
from tests import test_batching
from tests.backend import coverage, helpers, kernels, test_kir
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


def _launches_on_sim():
    x = np.arange(40, dtype=np.float32)
    kernels.unary_kernel[(3,)](x, np.zeros_like(x), 40, BLOCK=16, backend="sim")


def _through_a_helper():
    helpers.both(kernels.unary_kernel[(3,)], np.arange(40, dtype=np.float32), np.zeros(40, np.float32), 40, BLOCK=16)


def test_a_module_recording_runs_only_the_tests_that_may_launch_on_the_simulator():
    """A module's recording (``prebuilt_module``) runs the tests whose code names the simulator, through
    the tests' helpers, parametrize cases and the bench and verification modules; a test that launches
    nothing there (test_kir.py's plans of whole ops, ~44 s of CPU recorded for nothing) is not run."""
    ran = []
    module = types.ModuleType("tests.backend.fake_sim_module")
    module.test_direct = lambda: ran.append("direct") or _launches_on_sim()
    module.test_helper = lambda: ran.append("helper") or _through_a_helper()
    module.test_plans_only = lambda: ran.append("plans")
    _, sim = coverage.recorded(module, sim_only=True)
    assert sorted(ran) == ["direct", "helper"] and len(set(sim)) == 1
    assert not coverage.may_launch_on_sim(test_kir.test_an_llm_vocabulary_block_is_planned_with_int64_offsets)
    assert coverage.may_launch_on_sim(test_kir.test_names_never_collide_with_cpp_or_generated_names)
    assert coverage.may_launch_on_sim(lambda backend: None, [{"backend": "interpreter"}, {"backend": "sim"}])
    assert coverage.may_launch_on_sim(test_batching.test_bench_rows_check_the_batched_results)  # bench_batching
    assert not coverage.may_launch_on_sim(test_batching.test_timeline_of_each_regime)
