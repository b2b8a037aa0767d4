"""Generated Ascend C on the simulator (hazard checks on) against the interpreter: ops and DSL
kernels over shape sweeps and float dtypes; goldens; byte-identical builds."""
import os
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import ascdsl
from ascdsl import dtypes
from ascdsl.backend.plan import tiling
from ascdsl.backend.render.ascendc import kernel_source
from ops import log_softmax_grad, softmax_grad
from tests import test_interpreter_dsl as dsl
from tests.backend import kernels
from tests.backend.helpers import FLOATS, both, data, each

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_add_sweep_bit_exact(dtype):
    for n in (1, 31, 32, 33, 2040, 2048, 2056, 300 * 64 + 5):
        x, y = data(n, dtype), data(n, dtype)
        grid = (ascdsl.cdiv(n, 64),)  # up to 302 programs: more than the 40 cores
        want, got = both(dsl.add_kernel[grid], x, y, np.zeros(n, dtype.np), n, BLOCK=64)
        assert want[2].tobytes() == got[2].tobytes(), f"n={n}"


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_scalar_ops_bit_exact(dtype):
    n = 1000
    x = data(n, dtype)
    want, got = both(kernels.unary_kernel[(ascdsl.cdiv(n, 256),)], x, np.zeros(n, dtype.np), n, BLOCK=256)
    np.testing.assert_array_equal(want[1].view(np.uint16 if dtype.itemsize == 2 else np.uint32),
                                  got[1].view(np.uint16 if dtype.itemsize == 2 else np.uint32))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_softmax_rows_within_tolerance(dtype):
    def check(rows, cols, block):
        x = data((rows, cols), dtype)
        want, got = both(dsl.softmax_kernel[(rows,)], np.zeros_like(x), x, cols, cols, cols, BLOCK=block)
        np.testing.assert_allclose(got[0].astype(np.float64), want[0].astype(np.float64), rtol=dtype.rtol,
                                   atol=dtype.atol, err_msg=f"{rows}x{cols}")
    cases = [(300, 3, 8), (4, 2040, 2048), (3, 2048, 2048), (2, 2056, 4096)]
    each(check, cases)


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.bfloat16], ids=str)
def test_looped_online_softmax_within_tolerance(dtype):
    rows, cols = 3, 1000
    x = data((rows, cols), dtype)
    want, got = both(dsl.looped_softmax_kernel[(rows,)], np.zeros_like(x), x, cols, cols, BLOCK=256)
    np.testing.assert_allclose(got[0].astype(np.float64), want[0].astype(np.float64), rtol=dtype.rtol, atol=dtype.atol)


def test_three_axis_grid():
    x = data(2 * 3 * 4 * 32, dtypes.float32)
    want, got = both(kernels.grid3_kernel[(2, 3, 4)], x, np.zeros_like(x), BLOCK=32)
    assert want[1].tobytes() == got[1].tobytes()


def test_rejected_kernel_reports_its_location_on_sim():
    x = np.zeros(16, np.float32)
    with pytest.raises(ascdsl.CompilationError, match="cannot be copied as blocks"):
        kernels.tile_other_kernel[(1,)](x, np.zeros(8, np.float32), np.zeros(8, np.float32), BLOCK=8, backend="sim")


def _source(jit_fn, symbol, *types, **constexprs):
    (k,) = jit_fn.specialize(*types, **constexprs).kernels
    layout = tiling.layout(tiling.cann_name(symbol).title().replace("_", "") + "TilingData", [k])
    return kernel_source(symbol, tiling.variants([k]), layout, "Ascend910B3")


P32, P16, PB16 = (ascdsl.language.pointer_type(d) for d in (dtypes.float32, dtypes.float16, dtypes.bfloat16))
I32 = dtypes.int32
GOLDENS = {
    "scale_add_f32.cpp": lambda: _source(dsl.add_kernel, "add", P32, P32, P32, dtypes.int32, BLOCK=2048),
    "softmax_row_f16.cpp": lambda: _source(dsl.softmax_kernel, "softmax", P16, P16, dtypes.int32, dtypes.int32,
                                           dtypes.int32, BLOCK=1024),
    "softmax_looped_f32.cpp": lambda: _source(dsl.looped_softmax_kernel, "softmax_looped", P32, P32, dtypes.int32,
                                              dtypes.int32, BLOCK=4096),
    # 2-D tiles with row and column tails, Brcb row broadcast, 16-bit math through float32
    "softmax_grad_rows_f16.cpp": lambda: _source(softmax_grad.rows_kernel, "softmax_grad", P16, P16, P16, I32, I32, I32,
                                                 ROWS=8, BLOCK_K=64, FRONT=False, ALIGN=16),
    # column sums, a [1, N] broadcast at repeat stride 0, bfloat16 through float32
    "log_softmax_grad_middle_bf16.cpp": lambda: _source(log_softmax_grad.reduce_middle_full_kernel,
                                                        "log_softmax_backward", PB16, PB16, PB16, I32, I32, I32, I32,
                                                        I32, BLOCK_R=16, BLOCK_B=32),
}


@pytest.mark.parametrize("name", sorted(GOLDENS))
def test_generated_code_matches_golden(name):
    text = GOLDENS[name]()
    path = GOLDEN / name
    if os.environ.get("ASCDSL_UPDATE_GOLDENS") == "1":
        path.write_text(text)
    assert path.exists(), f"missing {path}; regenerate with ASCDSL_UPDATE_GOLDENS=1"
    assert text == path.read_text(), f"{name} differs from its golden; review and regenerate with ASCDSL_UPDATE_GOLDENS=1"
    assert "PIPE_ALL" not in text and "Reciprocal" not in text


def test_two_builds_are_byte_identical():
    from ascdsl.backend.render import ascendc
    for make in GOLDENS.values():
        first = make()
        ascdsl.jit  # a second, independent render
        assert make() == first
