"""More double-buffered queues on one position than the hardware has event ids (8) is a located
compile-time error naming the queues, not a simulator failure at InitBuffer."""
from pathlib import Path

import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl


@ascdsl.jit
def five_outputs(x_ptr, a_ptr, b_ptr, c_ptr, d_ptr, e_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m)
    tl.store(a_ptr + i, x + 1.0, mask=m)
    tl.store(b_ptr + i, x + 2.0, mask=m)
    tl.store(c_ptr + i, x + 3.0, mask=m)
    tl.store(d_ptr + i, x + 4.0, mask=m)
    tl.store(e_ptr + i, x + 5.0, mask=m)  # the fifth VECOUT queue: buffers 9 and 10


@ascdsl.jit
def four_outputs(x_ptr, a_ptr, b_ptr, c_ptr, d_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m)
    tl.store(a_ptr + i, x + 1.0, mask=m)
    tl.store(b_ptr + i, x + 2.0, mask=m)
    tl.store(c_ptr + i, x + 3.0, mask=m)
    tl.store(d_ptr + i, x + 4.0, mask=m)


def test_a_fifth_double_buffered_output_queue_is_a_located_error():
    x = np.arange(64, dtype=np.float32)
    outs = [np.zeros_like(x) for _ in range(5)]
    five_outputs[(1,)](x, *outs, 50, BLOCK=64)  # the interpreter runs it
    assert np.array_equal(outs[4][:50], x[:50] + 5)
    with pytest.raises(ascdsl.CompilationError, match="10 VECOUT queue buffers, more than the 8 hardware") as e:
        five_outputs[(1,)](x, *[np.zeros_like(x) for _ in range(5)], 50, BLOCK=64, backend="sim")
    assert Path(e.value.loc.file).name == "test_queue_events.py" and "hint:" in str(e.value)


def test_four_double_buffered_output_queues_fit():
    x = np.arange(64, dtype=np.float32)
    want, got = [np.zeros_like(x) for _ in range(4)], [np.zeros_like(x) for _ in range(4)]
    four_outputs[(1,)](x, *want, 50, BLOCK=64)
    four_outputs[(1,)](x, *got, 50, BLOCK=64, backend="sim")
    for w, g in zip(want, got):
        assert np.array_equal(w, g)
