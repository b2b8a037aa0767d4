"""The simulator kernels of each ``test_sim*`` module are built before its first test in few g++ runs
(the ``prebuilt_module`` fixture of ``tests/conftest.py``)."""
import pytest


@pytest.fixture(scope="module", autouse=True)
def _prebuilt_sim_module(request):
    name = request.module.__name__.rpartition(".")[2]
    if name.startswith("test_sim") and name != "test_sim_coverage":
        request.getfixturevalue("prebuilt_module")
