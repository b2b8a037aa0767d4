"""A fused linear + cross-entropy kernel as a user writes it (issue 26): the logits ``x @ W^T`` a block of the
vocabulary at a time, an online max and log-sum-exp across the blocks, the loss of each row. The interpreter runs
it; the cube lowering has no form for one product a step beside carried vector values, so the simulator's build
is a located error at the loop (docs/limits.md)."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from ascdsl.errors import CompilationError
from ascdsl.testing import assert_close
from tests.backend.helpers import data

M, V, H, BLOCK_M, BLOCK_V = 50, 300, 64, 16, 64


@ascdsl.jit
def linear_cross_entropy(x_ptr, w_ptr, label_ptr, loss_ptr, M, V, H: tl.constexpr, BLOCK_M: tl.constexpr,
                         BLOCK_V: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_h = tl.arange(0, H)
    x = tl.load(x_ptr + rows[:, None] * H + offs_h[None, :], mask=rows[:, None] < M, other=0.0)
    label = tl.load(label_ptr + rows, mask=rows < M, other=0)
    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    picked = tl.zeros((BLOCK_M,), tl.float32)
    for start in range(0, V, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        w = tl.load(w_ptr + cols[:, None] * H + offs_h[None, :], mask=cols[:, None] < V, other=0.0)
        logits = tl.where(cols[None, :] < V, tl.dot(x, tl.trans(w)), float("-inf"))
        m_new = tl.maximum(m_i, tl.max(logits, 1))
        l_i = l_i * tl.exp(m_i - m_new) + tl.sum(tl.exp(logits - m_new[:, None]), 1)
        picked += tl.sum(tl.where(cols[None, :] == label[:, None], logits, 0.0), 1)
        m_i = m_new
    tl.store(loss_ptr + rows, m_i + tl.log(l_i) - picked, mask=rows < M)


def _inputs():
    rng = np.random.default_rng(7)
    x = data((M, H), dtypes.float16, rng)
    w = (data((V, H), dtypes.float16, rng) * np.float16(0.05)).astype(np.float16)
    return x, w, rng.integers(0, V, M).astype(np.int32)


def _launch(backend: str):
    x, w, label = _inputs()
    loss = np.zeros(M, np.float32)
    linear_cross_entropy[(ascdsl.cdiv(M, BLOCK_M),)](x, w, label, loss, M, V, H=H, BLOCK_M=BLOCK_M, BLOCK_V=BLOCK_V,
                                                      backend=backend)
    return x, w, label, loss


def test_the_interpreter_gives_each_rows_cross_entropy():
    x, w, label, loss = _launch("interpreter")
    z = x.astype(np.float64) @ w.astype(np.float64).T
    top = z.max(1)
    picked = z[np.arange(M), label]
    want = np.log(np.exp(z - top[:, None]).sum(1)) + top - picked
    # the loss is the difference of its log-sum-exp and the picked logit: float32's tolerance of their magnitudes
    assert_close(loss, want, dtypes.float32, scale=np.abs(top) + np.log(V) + np.abs(picked))


def test_the_simulator_build_is_a_located_error_at_the_loop():
    with pytest.raises(CompilationError) as raised:
        _launch("sim")
    loop = next(n for n, line in enumerate(open(__file__), 1) if "for start in range(0, V, BLOCK_V):" in line)
    assert raised.value.loc.line == loop
    assert "running max and sum over blocks of logits" in str(raised.value)
    assert "two products" in str(raised.value)
