"""The ``impl="api"`` SoftmaxGrad lowering as a CANN engineer meets it: a direct-launch kernel that
copies its tiling in from GM (no ``GET_TILING_DATA``, which only op projects have), a generated host
tiling function that calls CANN's host API (``GetSoftMaxGradMaxTmpSize``, ``SoftMaxGradTilingFunc``),
both type-checking against CANN 8.1 (optional), and the simulator's SoftmaxGrad rounding float results
to half as CANN's implementation does (``CAST_ROUND`` on v220, ``CAST_NONE`` on v200)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import ml_dtypes  # noqa: F401  (the op module's dtypes)
import numpy as np
import pytest

from ascdsl import dtypes
from tests.cann.headers import host_flags, needs_host_headers, needs_kernel_headers, type_check
from tests.sim.test_cann_headers import cann_flags

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("softmax_grad_op", ROOT / "ops" / "softmax_grad.py")
softmax_grad_op = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(softmax_grad_op)
VARIANTS = [(d, f) for d in (dtypes.float32, dtypes.float16) for f in (False, True)]


@pytest.mark.parametrize("dtype,front", VARIANTS, ids=str)
def test_the_kernel_reads_its_tiling_from_gm_and_the_host_calls_cann_tiling_api(dtype, front):
    files = softmax_grad_op.render_softmax_grad_api(dtype, front)
    kernel = files[f"{softmax_grad_op.api_kernel_name(dtype, front)}.cpp"]
    assert "GET_TILING_DATA" not in kernel and "CopyTiling(&t, tiling);" in kernel
    assert f"{'SoftmaxGradFront' if front else 'SoftmaxGrad'}<{dtype.cpp}>(dst, grad, src, tmp_.Get<uint8_t>()" in kernel
    host = files["softmax_grad_api_host.cpp"]
    assert '#include "lib/activation/softmax_tiling.h"' in host
    for call in ("AscendC::GetSoftMaxGradMinTmpSize(row,", "AscendC::GetSoftMaxGradMaxTmpSize(tile,",
                 "AscendC::SoftMaxGradTilingFunc(tile, dataTypeSize, tiling->tmpBytes, softmaxTiling, isFront);",
                 "softmaxTiling.SaveToBuffer(&tiling->softmax, sizeof(tiling->softmax));"):
        assert call in host, call


def test_the_host_tiling_fills_the_struct_the_kernel_reads():
    folder = softmax_grad_op.write_softmax_grad_api(dtypes.float16, False)
    plat = softmax_grad_op.resolve_platform("Ascend910B3")
    words, blocks = softmax_grad_op.softmax_grad_api_tiling(folder, 100, 33, dtypes.float16, False, plat)
    rows, cols, padded, out_cols, per_core, big, tile_rows, tmp = map(int, words[:8])
    assert (rows, cols, padded, out_cols, per_core, big, blocks) == (100, 33, 48, 48, 2, 20, 40)
    assert tile_rows == 3  # ceil(100 / 40): the UB holds far more rows
    row_words = 2 * 16 + 3 * 48 + 64  # half: 2E + 3K + 64
    assert tmp == 4 * row_words * tile_rows
    assert list(words[8:8 + 3]) == [3, 48, 3 * 48]  # srcM, srcK, srcSize of the tile
    assert words[8 + 6] == 3 and words[8 + 12] == 1 and words[8 + 13] == 0  # splitM, rangeM, tailM


def write_api_files(files: dict[str, str], folder: Path) -> None:
    for rel, text in files.items():
        (folder / rel).write_text(text)


@needs_host_headers
def test_api_host_type_checks_against_cann(tmp_path):
    """The host code and the tiling header are the same text for every kernel: checked once."""
    files = [softmax_grad_op.render_softmax_grad_api(d, f) for d, f in VARIANTS]
    shared = ("softmax_grad_api_host.cpp", softmax_grad_op.API_TILING_HEADER)
    assert all(f[name] == files[0][name] for f in files for name in shared)
    write_api_files(files[0], tmp_path)
    type_check(host_flags(), tmp_path / "softmax_grad_api_host.cpp", tmp_path)


@needs_kernel_headers
@pytest.mark.parametrize("dtype,front", VARIANTS, ids=str)
def test_api_kernel_type_checks_against_cann(dtype, front, tmp_path):
    write_api_files(softmax_grad_op.render_softmax_grad_api(dtype, front), tmp_path)
    type_check(cann_flags(), tmp_path / f"{softmax_grad_op.api_kernel_name(dtype, front)}.cpp", tmp_path)


# grad * src of column 0 is 1.25 + 2^-9 + 2^-11 exactly (half inputs multiply exactly in float), a tie
# between the halves 1 + 258/1024 and 1 + 259/1024; column 1 cancels it, so the row sum is 0 and
# dst = grad * src: CAST_ROUND gives 259/1024 (away from zero), round-to-nearest-even 258/1024.
TIE_GRAD = np.array([[1 + 2 / 1024, -(1 + 2 / 1024)]], np.float16)
TIE_SRC = np.array([[1.25, 1.25]], np.float16)


@pytest.mark.parametrize("platform,frac", [("Ascend910B3", 259), ("Ascend310P3", 258)])
def test_simulated_softmax_grad_rounds_half_results_as_cann(platform, frac):
    dst = softmax_grad_op.softmax_grad(TIE_GRAD, TIE_SRC, impl="api", backend="sim", platform=platform)
    expected = np.float16(1 + frac / 1024)
    assert dst.dtype == np.float16
    np.testing.assert_array_equal(dst, np.array([[expected, -expected]], np.float16))
