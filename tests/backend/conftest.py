"""Backend tests: simulator builds are cached by content; the session reports g++ builds and seconds."""
from __future__ import annotations

import json
import os
from pathlib import Path


def pytest_configure(config):
    os.environ.setdefault("ASCDSL_CACHE_DIR", str(Path(config.rootpath) / ".pytest_cache" / "ascdsl-sim"))


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
