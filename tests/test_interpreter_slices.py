"""The interpreter's slice path for consecutive tiles (one program's tile, or whole programs masked
off) gives what the gather/scatter path gives, in the same program order, with the same errors."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl.errors import OutOfBoundsError
from ascdsl.lib import core_span


@ascdsl.jit
def rows_kernel(x_ptr, out_ptr, n_cols, per_core, big_cores, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    start, end = core_span(per_core, big_cores)  # uneven, non-adjacent row ranges per program
    cols = tl.arange(0, BLOCK)
    for row0 in range(start, end, ROWS):
        rows = row0 + tl.arange(0, ROWS)
        offs = rows[:, None] * n_cols + cols[None, :]
        mask = (rows[:, None] < end) & (cols[None, :] < n_cols)
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        tl.store(out_ptr + offs, x * 2.0 + tl.sum(x, axis=1)[:, None], mask=mask)


@ascdsl.jit
def same_row_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    tl.store(out_ptr + cols, tl.load(x_ptr + tl.program_id(0) * BLOCK + cols))  # every program, one row


@ascdsl.jit
def some_programs_kernel(x_ptr, out_ptr, n_programs, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    on = (pid % 3 != 1) & (pid < n_programs)  # whole programs masked off
    x = tl.load(x_ptr + pid * BLOCK + cols, mask=on & (cols < BLOCK), other=7.0)
    tl.store(out_ptr + pid * BLOCK + cols, x + 1.0, mask=on & (cols < BLOCK))


@pytest.mark.parametrize("rows,programs,rows_per_step", [(103, 8, 4), (64, 40, 2), (7, 3, 8)])
def test_core_split_row_tiles_match_numpy(rows, programs, rows_per_step):
    n_cols = 300
    x = np.random.default_rng(rows).standard_normal((rows, n_cols)).astype(np.float32)
    out = np.full_like(x, np.nan)
    rows_kernel[(programs,)](x, out, n_cols, rows // programs, rows % programs, ROWS=rows_per_step, BLOCK=512)
    np.testing.assert_allclose(out, 2 * x + x.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-5)


def test_programs_storing_the_same_slice_last_program_wins():
    x = np.arange(4 * 256, dtype=np.float32).reshape(4, 256)
    out = np.zeros(256, np.float32)
    same_row_kernel[(4,)](x, out, BLOCK=256)
    np.testing.assert_array_equal(out, x[3])


def test_masked_off_programs_read_other_and_write_nothing():
    x = np.arange(9 * 256, dtype=np.float32)
    out = np.full(9 * 256, -5.0, np.float32)
    some_programs_kernel[(9,)](x, out, 7, BLOCK=256)
    want = np.where(np.repeat([(p % 3 != 1) and p < 7 for p in range(9)], 256), x + 1, -5.0)
    np.testing.assert_array_equal(out, want)


def test_an_enabled_program_past_the_end_names_that_program():
    x = np.zeros(5 * 256, np.float32)  # program 5 of 6 reads past the end; 4 is masked off
    out = np.zeros(6 * 256, np.float32)
    with pytest.raises(OutOfBoundsError, match=r"program \(5, 0, 0\)"):
        some_programs_kernel[(6,)](x, out, 6, BLOCK=256)
