"""The lift's results are the ones its polynomials gave before they became ``ascdsl.ir.symbol.Poly``:
each kernel's extents, lifted footprint (in words, as one expression, in bytes along each extent) and
lifted class model are compared with a golden file the tuple-based polynomials of the lift wrote (regenerate with
``ASCDSL_UPDATE_GOLDENS=1`` only where a change of the lift is meant)."""
from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl.backend.lift import lift
from ascdsl.backend.lift.poly import describe_slots, exact_expression
from ascdsl.backend.render import emit
from ascdsl.platforms import get_platform

GOLDEN = Path(__file__).parent / "golden" / "lift"
OPFILES = Path(__file__).parent / "product" / "opfiles"
PLATFORM = get_platform("Ascend910B3")
F32 = tl.pointer_type(tl.float32)
F16 = tl.pointer_type(tl.float16)


@ascdsl.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@ascdsl.jit
def add_row_kernel(x_ptr, y_ptr, out_ptr, n_cols, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    """``[ROWS, BLOCK]`` tiles of ``x`` plus the row ``y``, unmasked: a footprint with a ``BLOCK`` term."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)[:, None]
    cols = tl.arange(0, BLOCK)[None, :]
    row = tl.load(y_ptr + cols)
    tl.store(out_ptr + rows * n_cols + cols, tl.load(x_ptr + rows * n_cols + cols) + row)


@ascdsl.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    """Rows of ``BLOCK`` lanes masked past ``n_cols``, in float32: footprints that are no whole blocks."""
    rows = (tl.program_id(0) * ROWS + tl.arange(0, ROWS))[:, None]
    cols = tl.arange(0, BLOCK)[None, :]
    x = tl.load(x_ptr + rows * n_cols + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=1)[:, None])
    tl.store(out_ptr + rows * n_cols + cols, (e / tl.sum(e, axis=1)[:, None]).to(out_ptr.dtype.element_ty),
             mask=cols < n_cols)


CASES = {
    "copy_f32": (copy_kernel, (F32, F32, tl.int32), {"BLOCK": 64}),
    "add_row_f32": (add_row_kernel, (F32, F32, F32, tl.int32), {"ROWS": 24, "BLOCK": 40}),
    "softmax_f16": (softmax_kernel, (F16, F16, tl.int32), {"ROWS": 8, "BLOCK": 96}),
}


def _lifted(name: str) -> str:
    fn, args, constexprs = CASES[name]
    found = lift.analyse(fn, fn.specialize(*args, **constexprs).kernels[0], PLATFORM)
    assert found is not None, name
    quanta = {e.name: e.quantum for e in found.extents}
    lines = [f"extents: {[(e.name, e.quantum, e.low, e.high) for e in found.extents]}",
             f"footprint: {describe_slots(found.slots)}",
             f"expression: {exact_expression(found.slots, quanta)}"]
    lows = {e.name: e.low for e in found.extents}
    for e in found.extents:  # the footprint in bytes along each extent, the others at their low
        values = sorted({e.low, e.low + e.quantum, e.low + 7 * e.quantum, e.high - e.quantum, e.high})
        lines.append(f"bytes along {e.name}: {[(v, found.bytes({**lows, e.name: v})) for v in values]}")
    model = emit.class_model(found.kernel, "Lifted", "T")
    return "\n".join(lines) + "\n" + json.dumps(model, indent=1, sort_keys=True, default=str) + "\n"


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_lift_s_results_are_unchanged(name):
    text = _lifted(name)
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("ASCDSL_UPDATE_GOLDENS") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"missing {path}; regenerate with ASCDSL_UPDATE_GOLDENS=1"
    assert text == path.read_text(), f"{name} differs from its golden; review and regenerate with ASCDSL_UPDATE_GOLDENS=1"


def test_an_identical_kernel_elsewhere_keeps_its_own_source_lines():
    """tests/product/opfiles/nonaffine_host.py defines the same copy kernel: lifting it first (the caches keyed by
    a kernel then hold it) leaves copy_f32's generated lines naming this file, not that one."""
    spec = importlib.util.spec_from_file_location("nonaffine_host", OPFILES / "nonaffine_host.py")
    other = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(other)
    fn, args, constexprs = CASES["copy_f32"]
    lift.analyse(other.copy_kernel, other.copy_kernel.specialize(*args, **constexprs).kernels[0], PLATFORM)
    text = _lifted("copy_f32")
    assert "nonaffine_host.py" not in text and "test_lift_differential.py:" in text
