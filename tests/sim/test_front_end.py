"""Generated code must pass the real compiler's front end: CANN's device compiler is clang-based, and
clang rejects a narrowing braced initialiser that g++ only warns about. Every simulator build treats
narrowing as an error; :func:`ascdsl.sim.build.check_front_end` parses generated code with warnings on."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from ascdsl import sim
from ascdsl.sim.build import check_front_end, front_ends

NARROWING = r"""
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void narrowing([[maybe_unused]] GM_ADDR x, int32_t cols)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 256);
    LocalTensor<float> t = buf.Get<float>();
    Muls(t, t, 1.0f, 64, 1, {1, 1, 8, cols / 8});
}
"""

CLEAN = NARROWING.replace("cols / 8}", "static_cast<uint8_t>(cols / 8 <= 255 ? cols / 8 : 0)}")
WIDE = CLEAN.replace("pipe.InitBuffer(buf, 256);", "pipe.InitBuffer(buf, sizeof(float) * static_cast<uint64_t>(cols));")

needs_clang = pytest.mark.skipif(shutil.which("clang++") is None, reason="clang++ is not installed")


def test_a_simulator_build_rejects_a_narrowing_initialiser(tmp_path):
    source = tmp_path / "narrowing.cpp"
    source.write_text(NARROWING)
    with pytest.raises(sim.SimCompileError, match=r"narrowing conversion of .*cols / 8"):
        sim.run_kernel(source, "narrowing", [np.zeros(64, np.float32), np.int32(64)], 1)


@pytest.mark.parametrize("cxx", ["g++", pytest.param("clang++", marks=needs_clang)])
def test_the_front_end_check_reports_narrowing_and_conversions(tmp_path, cxx):
    for name, text, message in (("narrowing", NARROWING, "narrow"), ("wide", WIDE, "conversion")):
        source = tmp_path / f"{name}_{cxx}.cpp"
        source.write_text(text)
        with pytest.raises(sim.SimCompileError, match=message):
            check_front_end(source, (cxx,))
    clean = tmp_path / f"clean_{cxx}.cpp"
    clean.write_text(CLEAN)
    check_front_end(clean, (cxx,))


def test_the_front_ends_default_to_clang_where_installed(monkeypatch):
    monkeypatch.delenv("ASCDSL_FRONT_END", raising=False)
    assert front_ends() == (("clang++",) if shutil.which("clang++") else ())
    monkeypatch.setenv("ASCDSL_FRONT_END", "")
    assert front_ends() == ()
    monkeypatch.setenv("ASCDSL_FRONT_END", "g++ clang++")
    assert front_ends() == ("g++", "clang++")
