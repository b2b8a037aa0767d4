"""Suite-wide settings: a deterministic hypothesis profile under CI, test data independent of the
order xdist runs tests in, the longest tests first, and a summary of the simulator's g++ builds (count,
seconds and kernels built twice over every xdist worker and subprocess). Builds go to the normal cache
(``$ASCDSL_CACHE_DIR`` or ``~/.cache/ascdsl``), shared with ``ascdsl check`` and ``ascdsl build``."""
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

from ascdsl.backend import simrun
from tests.backend import coverage, helpers

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


_FIRST_STATES: dict = {}
"""(module name, attribute) -> the state a module-level generator had when its first test ran."""


@pytest.fixture(autouse=True)
def _same_data_in_any_order(request):
    """Every test starts from the same state of the shared test-data generator and of its own module's
    generators (``RNG = np.random.default_rng(N)`` at module level), whichever tests its xdist worker
    ran before it."""
    helpers.RNG.bit_generator.state = np.random.default_rng(helpers.SEED).bit_generator.state
    module = getattr(request, "module", None)
    for name, value in vars(module).items() if module is not None else ():
        if isinstance(value, np.random.Generator) and value is not helpers.RNG:
            first = _FIRST_STATES.setdefault((module.__name__, name), value.bit_generator.state)
            value.bit_generator.state = first


FIRST = ("tests/backend/test_sim_coverage.py::", "tests/reliability/test_fuzz.py::test_fuzz[")
"""The longest tests (minutes each) run first: xdist hands out tests in collection order, and one of
these collected last keeps a single core busy for minutes after the other has finished."""


@pytest.fixture(scope="module")
def prebuilt_module(request):
    """The simulator kernels the module's tests launch, built before its first test in few g++ runs
    (:func:`tests.backend.coverage.module_prebuild`: a g++ run costs about two seconds however few
    kernels it builds). A test's own prebuild (:func:`tests.backend.helpers.each`) made while the module
    is recorded joins the module's files, and kernels of different pointer parameters share a file. Only
    the session's selected tests are recorded (``-m "not slow"`` records no slow sweep). The module's
    random generators are left as they were, so its tests draw the same data."""
    module = request.module
    generators = [g for g in {id(v): v for v in [*vars(module).values(), helpers.RNG]}.values()
                  if isinstance(g, np.random.Generator)]
    states = [g.bit_generator.state for g in generators]
    coverage.module_prebuild(module, {item.originalname for item in request.session.items
                                      if getattr(item, "module", None) is module})
    for g, state in zip(generators, states):
        g.bit_generator.state = state


@pytest.fixture
def fresh_sim_index(tmp_path, monkeypatch):
    """The simulator's kernel index in a folder of the test's own and no prebuilt files in this process, as
    in a fresh process over a fresh cache (the build cache stays shared): what a prebuild forms does not
    depend on the files other tests formed."""
    monkeypatch.setattr(simrun, "_index_folder", lambda: tmp_path)
    monkeypatch.setattr(simrun, "_prebuilt", {})
    simrun._compiled.cache_clear()
    yield tmp_path
    simrun._compiled.cache_clear()


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: not item.nodeid.startswith(FIRST))


def pytest_configure(config):
    """Every g++ run of the session, in xdist workers and the processes tests start, goes to one build
    log (:func:`ascdsl.sim.build.log`) that the summary reads: ``$ASCDSL_BUILD_LOG`` where set (kept),
    else a file of this session's (removed at its end)."""
    if not hasattr(config, "workerinput") and not os.environ.get("ASCDSL_BUILD_LOG"):
        path = Path(config.rootpath) / ".pytest_cache" / f"ascdsl-builds-{os.getpid()}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
        os.environ["ASCDSL_BUILD_LOG"] = str(path)
        config.add_cleanup(path.unlink)


def pytest_terminal_summary(terminalreporter, config):
    path = os.environ.get("ASCDSL_BUILD_LOG")
    if not path or not Path(path).is_file():
        return
    from ascdsl.sim.build import log_summary
    s = log_summary(Path(path))
    write = terminalreporter.write_line
    write(f"ascdsl sim: {s.builds} g++ builds in {s.seconds:.1f} s, {s.checks} front-end checks in "
          f"{s.check_seconds:.1f} s, {len(s.twice)} kernels built in more than one file")
    for test, seconds in sorted(s.per_file.items(), key=lambda kv: -kv[1])[:8]:
        write(f"  {seconds:7.1f} s  {test}")
    for kernel, files in sorted(s.twice.items(), key=lambda kv: s.names.get(kv[0], "")):
        tests = sorted({t for f in files for t in s.built_in.get(f, ())})
        write(f"  built {len(files)} times: {s.names.get(kernel, '?')} ({kernel}) in {', '.join(tests)}")
