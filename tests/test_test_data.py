"""The suite's test data does not depend on which tests an xdist worker ran first (tests/conftest.py)."""
import numpy as np
import pytest

from tests.backend import helpers

RNG = np.random.default_rng(3)
FIRST = np.random.default_rng(3).standard_normal(4)


@pytest.mark.parametrize("run", range(3))
def test_a_module_generator_starts_each_test_in_its_first_state(run):
    assert np.array_equal(RNG.standard_normal(4), FIRST)


@pytest.mark.parametrize("run", range(2))
def test_the_shared_generator_starts_each_test_from_its_seed(run):
    assert np.array_equal(helpers.RNG.standard_normal(4), np.random.default_rng(helpers.SEED).standard_normal(4))
