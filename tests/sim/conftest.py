"""Shared fixtures for the simulator tests (builds go to the normal cache: see ascdsl.sim.build)."""
from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)
