"""Dtype sweeps of the tile-op simulator tests: float32 (and int32) run in the fast subset, the
16-bit floats are marked slow (each is one more g++ build of every kernel of the test)."""
import pytest

from ascdsl import dtypes


def sweep(*fast) -> list:
    """``fast`` dtypes as plain parameters, float16 and bfloat16 marked slow."""
    return [pytest.param(d, id=str(d)) for d in fast] + [
        pytest.param(d, id=str(d), marks=pytest.mark.slow) for d in (dtypes.float16, dtypes.bfloat16)]


FLOAT_SWEEP = sweep(dtypes.float32)
ALL_SWEEP = sweep(dtypes.float32, dtypes.int32)
