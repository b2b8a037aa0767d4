"""What the simulator tests share: run a launch on both backends (:func:`both`), build the simulator
kernels of many checks in one g++ run (:func:`prebuilt`, :func:`each`; an op's cases: :func:`op_case_files`), test data and bit views, and the type check of generated kernels
against real CANN headers (:func:`assert_type_checks`)."""

import numpy as np
import pytest

from ascdsl import dtypes
from ascdsl.backend import simrun
from ascdsl.backend.plan import tiling
from ascdsl.backend.render.ascendc import kernel_source
from ascdsl.testing import verify
from tests.cann.headers import type_check
from tests.sim.test_cann_headers import cann_flags

SEED = 7
RNG = np.random.default_rng(SEED)
"""The test data's generator; the suite's conftest reseeds it before every test, so a test draws the
same data whichever tests an xdist worker ran before it."""
FLOATS = [dtypes.float32, dtypes.float16, dtypes.bfloat16]


def both(launch, *arrays, **kw):
    """Run ``launch`` on the interpreter and the simulator, each on fresh copies of the array arguments;
    return both argument lists (interpreter first)."""
    outs = []
    for backend in ("interpreter", "sim"):
        args = [a.copy() if isinstance(a, np.ndarray) else a for a in arrays]
        launch(*args, backend=backend, **kw)
        outs.append(args)
    return outs


def prebuilt(check, cases) -> None:
    """Build the kernels ``check(*case)`` launches on the simulator for all ``cases`` in one g++ build
    (the launches run on the interpreter while they are recorded, so a check that expects the
    simulator's own outcome may fail here: the real run reports it)."""
    with simrun.recording() as launches:
        for case in cases:
            try:
                check(*case)
            except Exception:  # noqa: BLE001
                pass
    simrun.prebuild(launches)


def op_case_files(op) -> list:
    """Build the kernels ``op``'s cases launch on the simulator as files of their own, the same in every
    process (the sweeps of the op and the tutorial's sessions use them too); returns the launches."""
    with simrun.recording() as launches:
        verify(op, ("sim",))
    simrun.prebuild(launches)
    return launches


def each(check, cases) -> None:
    """``check(*case)`` for every case, its simulator kernels built in one g++ run first."""
    prebuilt(check, cases)
    for case in cases:
        check(*case)


def data(shape, dtype, rng=RNG):
    """Normal values times 3 rounded to ``dtype`` (an ascdsl dtype)."""
    return (rng.standard_normal(shape) * 3).astype(np.float32).astype(dtype.np)


def softmax(x: np.ndarray, axis: int) -> np.ndarray:
    """NumPy's softmax of ``x`` along ``axis``, in float64."""
    e = np.exp(x.astype(np.float64) - x.astype(np.float64).max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def bits(a: np.ndarray) -> np.ndarray:
    """``a``'s elements as unsigned integers of their size (NaNs and signed zeros compared exactly)."""
    return a.view(f"u{a.dtype.itemsize}")


CANN = pytest.mark.skipif(cann_flags() is None, reason="ASCEND_HOME_PATH does not point at a CANN toolkit")
"""Marks a test that type-checks generated code against the real CANN headers."""


def assert_type_checks(name: str, kernels, tmp_path) -> None:
    """``kernels`` (specialised tile-IR kernels) in one direct-launch kernel file ``name.cpp`` compile
    against the real CANN headers, with g++ and with clang++ where installed."""
    source = tmp_path / f"{name}.cpp"
    layout = tiling.layout("".join(w.title() for w in name.split("_")) + "Tiling", kernels)
    source.write_text(kernel_source(name, tiling.variants(kernels), layout, "Ascend910B3"))
    type_check(cann_flags(), source)
