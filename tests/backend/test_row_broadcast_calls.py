"""A binary op of ``[M, N]`` tiles with a ``[1, N]`` operand (one row every row reads, such as layer norm's weight
over a trip's rows): one call a row whose repeats walk the row where that issues fewer calls than column chunks
with the rows as repeats (few long rows), as for an ``[M, 1]`` operand
(:func:`ascdsl.backend.selection.reduce.broadcast_binary`). The simulator's calls counted, its results against
the interpreter's."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes, sim
from ascdsl.planner import arg_types
from ascdsl.testing import assert_close
from tests.backend.helpers import CANN, assert_type_checks, both


@ascdsl.jit
def scaled_kernel(x_ptr, w_ptr, out_ptr, N, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    w = tl.load(w_ptr + cols)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], x * w[None, :])


@pytest.mark.parametrize("rows, block, dtype, calls", [
    (2, 1024, dtypes.float32, 2),  # two rows of 16 repeats: 16 column chunks of two repeats before
    (16, 256, dtypes.float32, 4),  # four column chunks of 16 repeats: fewer than 16 rows
    (2, 2048, dtypes.float16, 2),  # 16 repeats of 128 halves a row
])
def test_a_row_read_by_few_long_rows_is_one_call_a_row(rows, block, dtype, calls):
    n, programs = block, 2
    rng = np.random.default_rng(5)
    x = rng.standard_normal(programs * rows * n).astype(dtype.np)
    w = rng.standard_normal(n).astype(dtype.np)
    with sim.record() as runs:
        interp, out = both(scaled_kernel[(programs,)], x, w, np.zeros_like(x), n, ROWS=rows, BLOCK=block)
    (run,) = runs
    assert run.stats.vector_calls["Mul"] == programs * calls
    assert_close(out[2], interp[2], dtype)


@CANN
def test_rows_walked_type_check_against_cann(tmp_path):
    """The kernels of the row walk (float32, float16) against the real CANN headers, with g++ and clang++."""
    kernels = []
    for rows, block, dtype in [(2, 1024, dtypes.float32), (2, 2048, dtypes.float16)]:
        desc = ascdsl.TensorDesc((2 * rows * block,), dtype)
        w = ascdsl.TensorDesc((block,), dtype)
        kernels.append(scaled_kernel.specialize(*arg_types(scaled_kernel, (desc, w, desc, block)), ROWS=rows,
                                                BLOCK=block).kernels[0])
    assert_type_checks("rows_walked", kernels, tmp_path)
