"""High-level SoftmaxGrad / SoftmaxGradFront / Sum, including the documented SoftmaxGrad example."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from simref import tree

from ascdsl import sim
from ascdsl.sim.softmax_tiling import row_words, softmax_grad_tiling
from tests.seed_data import DOC_DST, DOC_GRAD

SRC = Path(__file__).parent / "kernels" / "softmax.cpp"


def softmax_grad(grad, y, *, front=False, tmp_bytes=None, tiling=None, dtype=np.float32):
    m, k = grad.shape
    size = np.dtype(dtype).itemsize
    work = tmp_bytes if tmp_bytes else 100 * 1024
    t = tiling or softmax_grad_tiling((m, k), dtype, work, front)
    out = np.zeros((m, 32 // size if front else k), dtype)
    kernel = "softmax_grad_f32" if dtype == np.float32 else "softmax_grad_f16"
    args = [grad.astype(dtype), y.astype(dtype), out, None, tiling_bytes(m, k, tmp_bytes or 0, front, t)]
    sim.run_kernel(SRC, kernel, args, 1)  # GET_TILING_DATA fills the source's one *TilingData struct
    return out, t


def tiling_bytes(m: int, k: int, tmp_bytes: int, front: bool, softmax) -> np.ndarray:
    """SoftmaxGradTilingData of kernels/softmax.cpp as a uint8 array."""
    words = np.concatenate([np.array([m, k, tmp_bytes, int(front)], np.uint32), softmax.words()])
    return words.view(np.uint8).copy()


def reference(grad, y, front=False):
    s = (grad.astype(np.float64) * y).sum(axis=-1, keepdims=True)
    return s if front else (grad - s) * y




def test_documented_example():
    dst, _ = softmax_grad(DOC_GRAD, np.full((8, 8), 2, np.float32), tmp_bytes=8192)
    np.testing.assert_array_equal(np.round(dst, 3), DOC_DST)  # the doc prints 3 decimals


@pytest.mark.parametrize("shared_tmp", [True, False])
def test_rows_split_by_tiling_with_tail(rng, shared_tmp):
    m, k = 37, 64
    grad = rng.standard_normal((m, k)).astype(np.float32)
    y = rng.uniform(0, 1, (m, k)).astype(np.float32)
    tmp = 4 * 10 * row_words(k, 4, False)  # room for 10 rows -> splitM 8, 4 chunks and a tail of 5
    if shared_tmp:
        dst, t = softmax_grad(grad, y, tmp_bytes=tmp)
    else:
        dst, t = softmax_grad(grad, y, tiling=softmax_grad_tiling((m, k), np.float32, tmp))
    assert (t.splitM, t.rangeM, t.tailM) == (8, 4, 5)
    np.testing.assert_allclose(dst, reference(grad, y), rtol=1e-5, atol=1e-6)


def test_front_broadcasts_row_sums_to_a_block(rng):
    grad = rng.standard_normal((16, 32)).astype(np.float32)
    y = rng.uniform(0, 1, (16, 32)).astype(np.float32)
    dst, _ = softmax_grad(grad, y, front=True, tmp_bytes=4096)
    np.testing.assert_allclose(dst, np.repeat(reference(grad, y, front=True), 8, axis=1), rtol=1e-5, atol=1e-6)


def test_half_computes_in_float(rng):
    grad = rng.standard_normal((16, 32)).astype(np.float16)
    y = rng.uniform(0, 1, (16, 32)).astype(np.float16)
    dst, _ = softmax_grad(grad, y, tmp_bytes=16 * 1024, dtype=np.float16)
    expect = reference(grad.astype(np.float32), y.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(dst.astype(np.float32), expect.astype(np.float32), rtol=1e-3, atol=1e-3)


def test_tiling_inconsistent_with_shape():
    grad = np.ones((16, 32), np.float32)
    t = softmax_grad_tiling((16, 32), np.float32, 8192)
    bad = dataclasses.replace(t, tailM=t.tailM + 1)
    with pytest.raises(sim.SimError) as info:
        softmax_grad(grad, grad, tmp_bytes=8192, tiling=bad)
    assert (info.value.api, info.value.block) == ("SoftmaxGrad", 0)
    assert "tiling is inconsistent with the shape [16, 32]: splitM * rangeM + tailM is 17, expected 16" in info.value.reason


def test_temporary_buffer_below_minimum():
    grad = np.ones((16, 32), np.float32)
    t = softmax_grad_tiling((16, 32), np.float32, 8192)  # 8192 B -> splitM 16 rows of 112 words
    with pytest.raises(sim.SimError, match=r"SoftmaxGrad: block 0: temporary buffer of 4096 B is below the minimum 7168 B"):
        softmax_grad(grad, grad, tmp_bytes=4096, tiling=t)


def test_sum_last_axis(rng):
    x = rng.standard_normal((5, 24)).astype(np.float32)
    x[:, 20:] = 1000  # padding beyond n must not be summed
    out = np.full(8, -1, np.float32)
    sim.run_kernel(SRC, "sum_rows", [x, out, np.uint32(5), np.uint32(24), np.uint32(20)], 1)
    np.testing.assert_array_equal(out[:5], [tree(row[:20]) for row in x])  # pairwise tree, in float
    np.testing.assert_array_equal(out[5:], 0)
    with pytest.raises(sim.SimError, match=r"Sum: block 0: SumParams.inner is 20, expected 24"):
        sim.run_kernel(SRC, "sum_rows", [x, out, np.uint32(4), np.uint32(20), np.uint32(20)], 1)
