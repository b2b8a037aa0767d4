"""Optional: the generated kernels type-check against a real CANN 8.1 install (reference §1.2).

Runs only when ``ASCEND_HOME_PATH`` points at a CANN toolkit (the flags are those of
``tests/sim/test_cann_headers.py``); skipped otherwise. Every op in ``ops/`` is built into
``tmp_path``; ``kernel/<op>_kernel.cpp`` is checked as written, ``op_project/op_kernel/<op>.cpp`` with
what msopgen's project build puts in front of it: the tiling struct and ``GET_TILING_DATA``.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from ascdsl import build
from ascdsl.op import load_operators
from ascdsl.platforms import get_platform
from tests.cann.headers import type_check
from tests.sim.test_cann_headers import cann_flags

ROOT = Path(__file__).resolve().parents[2]
OPS = load_operators([ROOT / "ops"])
PROJECT_PRELUDE = """#include <cstdint>
#include "kernel_operator.h"
{struct}
#ifndef GET_TILING_DATA
#define GET_TILING_DATA(var, tiling)                                               \\
    {name} var;                                                                   \\
    for (uint32_t i = 0; i < sizeof({name}); i++) {{                               \\
        reinterpret_cast<uint8_t*>(&var)[i] = reinterpret_cast<__gm__ uint8_t*>(tiling)[i]; \\
    }}
#endif
#ifndef TILING_KEY_IS
static uint64_t checkedTilingKey = 0;  // set by the launcher in a real project
#define TILING_KEY_IS(k) (checkedTilingKey == (k))
#endif
"""


def _type_check(source: Path) -> None:
    type_check(cann_flags(), source)


@pytest.mark.skipif(cann_flags() is None, reason="ASCEND_HOME_PATH does not point at a CANN toolkit")
@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_generated_kernels_type_check_against_cann(op, tmp_path):
    b = build.plan(op, get_platform("Ascend910B3"))
    folder = build.write(b, tmp_path)
    _type_check(folder / "kernel" / f"{b.name}_kernel.cpp")
    project = folder / "op_project" / "op_kernel" / f"{b.project_name}.cpp"
    checked = tmp_path / f"{b.project_name}_op_kernel.cpp"
    checked.write_text(PROJECT_PRELUDE.format(struct=b.layout.struct_source(), name=b.layout.struct_name)
                       + project.read_text())
    _type_check(checked)
