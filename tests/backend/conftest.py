"""The simulator kernels of each ``test_sim*`` module, built before its first test in few g++ runs
(:func:`tests.backend.coverage.module_prebuild`: a g++ run costs about a second however few kernels
it builds, and the coverage replay makes the same files, so the build cache serves both). A test's own
prebuild (:func:`tests.backend.helpers.each`) made while the module is recorded joins the module's
files, and kernels of different pointer parameters share a file."""
import numpy as np
import pytest

from tests.backend import coverage, helpers


@pytest.fixture(scope="module", autouse=True)
def _prebuilt_module(request):
    module = request.module
    name = module.__name__.rpartition(".")[2]
    if name.startswith("test_sim") and name != "test_sim_coverage":
        generators = [g for g in {id(v): v for v in [*vars(module).values(), helpers.RNG]}.values()
                      if isinstance(g, np.random.Generator)]
        states = [g.bit_generator.state for g in generators]
        coverage.module_prebuild(module)
        for g, state in zip(generators, states):  # the tests' data as without the recording
            g.bit_generator.state = state
