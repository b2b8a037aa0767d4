"""A column broadcast (``[M, 1] -> [M, N]``) that several calls of one stage read: its ``Brcb`` blocks are made
once, where the broadcast is defined (:func:`ascdsl.backend.selection.reduce.shared_column`), not by each call
that reads it; a broadcast read in another stage (a loop after it) keeps a ``Brcb`` a call. The kernel IR's calls
counted, and the kernels on the simulator against the interpreter."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from ascdsl.backend import kir
from ascdsl.backend.render.ascendc import compile_variant
from ascdsl.planner import arg_types
from ascdsl.platforms import get_platform
from ascdsl.testing import assert_close
from tests.backend.helpers import both

B3 = get_platform("Ascend910B3")


@ascdsl.jit
def centred_kernel(x_ptr, out_ptr, N, ROWS: tl.constexpr, BLOCK: tl.constexpr, LOOP: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    mean = tl.broadcast_to((tl.sum(x, axis=1) / N)[:, None], (ROWS, BLOCK))
    y = (x - mean) * (x + mean) - x * mean  # three calls read the broadcast
    if LOOP:
        for t in range(2):  # a loop's stage reads it too
            y = y + mean
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], y)


def brcbs(k: kir.Kernel) -> int:
    return sum(isinstance(s, kir.Call) and s.api == "Brcb" for s in kir.walk(k.process))


@pytest.mark.parametrize("rows, loop, want", [(8, False, 1), (16, False, 1), (8, True, 4)])
def test_a_column_broadcast_read_in_its_stage_is_brcbd_once(rows, loop, want):
    """Three calls of the broadcast's stage read one ``Brcb`` (three without the rule); with a loop after it that
    reads the broadcast, each of the four calls has its own (the blocks would live across the loop's stages)."""
    n, m = 128, 2 * rows
    desc = ascdsl.TensorDesc((m * n,), dtypes.float32)
    k = compile_variant(centred_kernel.specialize(*arg_types(centred_kernel, (desc, desc, n)), ROWS=rows, BLOCK=n,
                                                  LOOP=loop).kernels[0], B3)
    assert brcbs(k) == want
    x = np.random.default_rng(3).standard_normal(m * n).astype(np.float32)
    interp, sim = both(centred_kernel[(2,)], x, np.zeros_like(x), n, ROWS=rows, BLOCK=n, LOOP=loop)
    assert_close(sim[1], interp[1], dtypes.float32)


@ascdsl.jit
def centred_int64_kernel(x_ptr, out_ptr, N, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    total = tl.broadcast_to(tl.sum(x, axis=1)[:, None], (ROWS, BLOCK))
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], (x - total) * (x + total))


def test_an_int64_column_broadcast_is_not_brcbd():
    """int64 tiles are computed on the scalar unit (``Brcb`` has no 64-bit form): a column broadcast of them that
    two calls read gets no ``Brcb`` at its definition; the simulator gives the interpreter's results."""
    n, rows = 64, 8
    desc = ascdsl.TensorDesc((2 * rows * n,), dtypes.int64)
    k = compile_variant(centred_int64_kernel.specialize(*arg_types(centred_int64_kernel, (desc, desc, n)), ROWS=rows,
                                                        BLOCK=n).kernels[0], B3)
    assert brcbs(k) == 0
    x = np.random.default_rng(4).integers(-1000, 1000, 2 * rows * n).astype(np.int64)
    interp, sim = both(centred_int64_kernel[(2,)], x, np.zeros_like(x), n, ROWS=rows, BLOCK=n)
    assert (sim[1] == interp[1]).all()
