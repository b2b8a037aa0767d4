"""Shared fixtures for the simulator tests; builds are cached under .pytest_cache unless ASCDSL_CACHE_DIR is set."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


def pytest_configure(config):
    # Builds are cached by content hash; keep them out of the user's cache unless told otherwise.
    os.environ.setdefault("ASCDSL_CACHE_DIR", str(Path(config.rootpath) / ".pytest_cache" / "ascdsl-sim"))
