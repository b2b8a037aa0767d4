"""Suite-wide settings: a deterministic hypothesis profile under CI, test data independent of the
order xdist runs tests in, the longest tests first, and a summary of the simulator's g++ builds (count and seconds over every xdist worker). Builds go to the normal cache
(``$ASCDSL_CACHE_DIR`` or ``~/.cache/ascdsl``), shared with ``ascdsl check`` and ``ascdsl build``."""
import json
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

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
    from tests.backend import helpers
    helpers.RNG.bit_generator.state = np.random.default_rng(helpers.SEED).bit_generator.state
    module = getattr(request, "module", None)
    for name, value in vars(module).items() if module is not None else ():
        if isinstance(value, np.random.Generator) and value is not helpers.RNG:
            first = _FIRST_STATES.setdefault((module.__name__, name), value.bit_generator.state)
            value.bit_generator.state = first


FIRST = ("tests/backend/test_sim_coverage.py::", "tests/reliability/test_fuzz.py::test_fuzz[")
"""The longest tests (minutes each) run first: xdist hands out tests in collection order, and one of
these collected last keeps a single core busy for minutes after the other has finished."""


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: not item.nodeid.startswith(FIRST))


def _stats_dir(config) -> Path:
    path = Path(config.rootpath) / ".pytest_cache" / "ascdsl-build-stats"
    path.mkdir(parents=True, exist_ok=True)
    return path


def pytest_sessionstart(session):
    if not hasattr(session.config, "workerinput"):
        for f in _stats_dir(session.config).glob("*.json"):
            f.unlink()


def pytest_sessionfinish(session):
    try:
        from ascdsl.sim import build_stats
        s = build_stats()
    except Exception:  # the simulator may be mid-edit; the summary is informational
        return
    worker = getattr(session.config, "workerinput", {}).get("workerid", "main")
    (_stats_dir(session.config) / f"{worker}.json").write_text(
        json.dumps({"builds": s.builds, "seconds": s.seconds, "cache_hits": s.cache_hits}))


def pytest_terminal_summary(terminalreporter, config):
    rows = [json.loads(f.read_text()) for f in _stats_dir(config).glob("*.json")]
    if rows:
        terminalreporter.write_line(
            f"ascdsl sim: {sum(r['builds'] for r in rows)} g++ builds in {sum(r['seconds'] for r in rows):.1f} s, "
            f"{sum(r['cache_hits'] for r in rows)} cache hits")
