"""Regression tests from the review of the simulator: each failed before its fix."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ascdsl import sim

SRC = Path(__file__).parent / "kernels" / "review.cpp"


def _xy():
    return np.zeros(1024, np.float32), np.zeros(1024, np.float32)


def test_in_place_vector_op_does_not_hide_a_pending_mte3_read():
    with pytest.raises(sim.SimError) as info:
        sim.run_kernel(SRC, "war_inplace", list(_xy()), 1)
    assert info.value.api == "Muls"
    assert "PIPE_V overwrites UB byte 0x0 read by DataCopy on PIPE_MTE3" in info.value.reason
    assert "SetFlag/WaitFlag<HardEvent::MTE3_V>" in info.value.reason


def test_a_later_vector_read_does_not_hide_a_pending_mte3_read():
    with pytest.raises(sim.SimError) as info:
        sim.run_kernel(SRC, "war_after_vector_read", [*_xy(), np.int32(0)], 1)
    assert info.value.api == "Duplicate"
    assert "read by DataCopy on PIPE_MTE3" in info.value.reason
    x, y = _xy()
    sim.run_kernel(SRC, "war_after_vector_read", [x, y, np.int32(1)], 1)
    np.testing.assert_array_equal(y[:64], 1.0)
