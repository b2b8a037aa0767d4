"""The interpreter's symbolic tiles (:mod:`ascdsl.affine`) and batched loops give what the plain
elementwise semantics give: int32 wrap-around, masks, aliasing, store order and errors."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import affine
from ascdsl.affine import plans
from ascdsl.interpreter import control, runner, state
from ascdsl.errors import OutOfBoundsError
from ascdsl.ir.core import Op
from ascdsl.lib import core_span
from test_interpreter_slices import rows_kernel


@ascdsl.jit
def wrapped_compare_kernel(x_ptr, out_ptr):
    lanes = tl.arange(0, 4)
    big = lanes * 1073741824  # 0, 2**30, then 2**31 and 3 * 2**30 wrap to negative int32
    tl.store(out_ptr + lanes, tl.load(x_ptr + lanes, mask=big >= 0, other=-1.0))


@ascdsl.jit
def wrapped_offset_kernel(x_ptr, out_ptr):
    lanes = tl.arange(0, 4)
    zero = lanes * 1073741824 * 4  # multiples of 2**32: 0 in int32
    tl.store(out_ptr + lanes, tl.load(x_ptr + zero + 1))


def test_int32_index_arithmetic_wraps_as_the_elementwise_ops_do():
    x = np.arange(4, dtype=np.float32) + 10
    out = np.zeros(4, np.float32)
    wrapped_compare_kernel[(1,)](x, out)
    np.testing.assert_array_equal(out, [10, 11, -1, -1])
    wrapped_offset_kernel[(1,)](x, out)
    np.testing.assert_array_equal(out, [11, 11, 11, 11])


def test_affine_tiles_materialise_to_their_elements():
    cols = affine.arange(3, 7, np.dtype(np.int32))
    rows = affine.expand_dims(affine.elementwise(Op.MUL, [cols, np.array([5], np.int32)], np.dtype(np.int32), (4,)),
                              1, (4, 1))
    grid = affine.elementwise(Op.ADD, [affine.broadcast(rows, (4, 2)),
                                       np.array([100, 200], np.int32)], np.dtype(np.int32), (4, 2))
    np.testing.assert_array_equal(grid.dense(), (np.array([100, 200])[:, None, None]
                                                 + 5 * np.arange(3, 7)[None, :, None]).astype(np.int32))
    assert grid.bounds() == (115, 230)


@ascdsl.jit
def box_kernel(x_ptr, out_ptr, n_rows, n_cols, stride, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    offs = rows[:, None] * stride + cols[None, :]
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask, other=-2.0) + 1.0, mask=mask)


@pytest.mark.parametrize("rows,cols,block_rows", [(10, 5, 4), (3, 8, 8), (33, 1, 2)])
def test_masked_rows_and_columns_past_the_end_touch_no_memory(rows, cols, block_rows):
    x = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    out = np.zeros_like(x)  # masked lanes address past the end of both arrays: no error, no write
    box_kernel[(ascdsl.cdiv(rows, block_rows),)](x, out, rows, cols, cols, ROWS=block_rows, BLOCK=8)
    np.testing.assert_array_equal(out, x + 1)


@ascdsl.jit
def other_tile_kernel(x_ptr, out_ptr, n_rows, n_cols, starts_ptr, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.load(starts_ptr + tl.program_id(0)) + tl.arange(0, ROWS)  # equally spaced or not
    cols = tl.arange(0, BLOCK)
    offs = rows[:, None] * n_cols + cols[None, :]
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    other = (rows[:, None] * 100 + cols[None, :]).to(tl.float32)
    tl.store(out_ptr + tl.program_id(0) * ROWS * BLOCK + tl.arange(0, ROWS)[:, None] * BLOCK + cols[None, :],
             tl.load(x_ptr + offs, mask=mask, other=other))


@pytest.mark.parametrize("starts,n_rows", [([0, 3, 6], 7), ([0, 4, 5], 7), ([0, 1, 2], 5)],
                         ids=["spaced-past-the-end", "uneven", "spaced-inside"])
def test_masked_lanes_take_a_tile_of_other_values(starts, n_rows):
    x = np.arange(7 * 5, dtype=np.float32).reshape(7, 5)
    out = np.zeros((3, 4, 8), np.float32)
    other_tile_kernel[(3,)](x, out, n_rows, 5, np.array(starts, np.int32), ROWS=4, BLOCK=8)
    rows = np.array(starts)[:, None, None] + np.arange(4)[None, :, None]
    cols = np.arange(8)[None, None, :]
    inside = (rows < n_rows) & (cols < 5)
    want = np.where(inside, x.reshape(-1)[np.where(inside, rows * 5 + cols, 0)], rows * 100 + cols)
    np.testing.assert_array_equal(out, want)


@ascdsl.jit
def column_kernel(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    rows = tl.arange(0, BLOCK)
    col = tl.program_id(0)
    x = tl.load(x_ptr + rows * stride + col, mask=rows < n, other=0.0)
    tl.store(out_ptr + col * stride + rows, x, mask=rows < n)  # transposed: strided loads, rows stored


def test_strided_columns_and_transposes():
    x = np.arange(36, dtype=np.float32).reshape(6, 6)
    out = np.zeros_like(x)
    column_kernel[(6,)](x, out, 6, 6, BLOCK=8)
    np.testing.assert_array_equal(out, x.T)


@pytest.fixture
def batched(monkeypatch):
    """The number of loops run as batches of iterations (so that a test knows it covered them)."""
    calls = []
    run = control._for_batched
    monkeypatch.setattr(control, "_for_batched", lambda *a: (calls.append(a), run(*a))[1])
    return calls


@ascdsl.jit
def loop_store_kernel(out_ptr, per_core, big_cores):
    start, end = core_span(per_core, big_cores)
    lanes = tl.arange(0, 2)
    for i in range(start, end):  # lane 0 of every iteration of every program writes element 0
        value = (tl.program_id(0) * 1000 + i + lanes * 0).to(tl.float32)
        tl.store(out_ptr + lanes * (i + 1), value)


def test_batched_loop_keeps_the_order_of_the_writes(batched):
    out = np.zeros(14, np.float32)  # 13 rows over 3 programs: 5, 4, 4
    loop_store_kernel[(3,)](out, 4, 1)
    assert batched
    ends, want = [5, 9, 13], np.zeros(14, np.float32)
    for k in range(5):  # the loop in order: iteration k of every program, program by program
        for p, start in enumerate([0, 5, 9]):
            i = start + k
            if i < ends[p]:
                want[i + 1] = want[0] = p * 1000 + i
    np.testing.assert_array_equal(out, want)


@ascdsl.jit
def shift_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    lanes = tl.arange(0, BLOCK)
    for i in range(tl.program_id(0), n - 1, tl.num_programs(0)):
        tl.store(y_ptr + i + 1 + lanes, tl.load(x_ptr + i + lanes, mask=lanes < 1, other=0.0), mask=lanes < 1)


def test_a_loop_that_reads_what_it_wrote_runs_in_order():
    x = np.arange(8, dtype=np.float32)
    y = np.zeros(8, np.float32)
    shift_kernel[(1,)](x, y, 8, BLOCK=2)
    np.testing.assert_array_equal(y, np.r_[0, x[:-1]])
    shift_kernel[(1,)](x, x, 8, BLOCK=2)  # in place: each iteration reads the previous one's write
    np.testing.assert_array_equal(x, np.zeros(8))


@ascdsl.jit
def reload_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    lanes = tl.arange(0, BLOCK)
    before = tl.load(x_ptr + lanes)
    tl.store(y_ptr + lanes, tl.zeros((BLOCK,), tl.float32))
    tl.store(out_ptr + lanes, before)


def test_a_load_is_a_copy_when_another_argument_shares_its_memory():
    x = np.arange(1.0, 9.0, dtype=np.float32)
    out = np.zeros(8, np.float32)
    reload_kernel[(1,)](x, x, out, BLOCK=8)  # x loaded, then zeroed through y: the load saw 1..8
    np.testing.assert_array_equal(out, np.arange(1.0, 9.0))
    np.testing.assert_array_equal(x, np.zeros(8))


@ascdsl.jit
def two_loads_kernel(x_ptr, y_ptr, out_ptr, per_core, big_cores, reach_x, reach_y):
    start, end = core_span(per_core, big_cores)
    for i in range(start, end):
        a = tl.load(x_ptr + i * reach_x)
        b = tl.load(y_ptr + i * reach_y)
        tl.store(out_ptr + i, a + b)


def test_an_error_in_a_batched_loop_is_the_one_the_loop_order_gives(batched):
    x, y = np.zeros(100, np.float32), np.zeros(10, np.float32)
    out = np.zeros(12, np.float32)
    # x's load comes first in the body but fails only in the third iteration (program 2, element 100);
    # y's fails in the first (program 1, element 4 * 3 = 12 of 10): in loop order y's error comes first
    with pytest.raises(OutOfBoundsError, match=r"load from y_ptr out of bounds: program \(1, 0, 0\) accesses "
                                               r"element 12 of an array of 10 elements"):
        two_loads_kernel[(3,)](x, y, out, 4, 0, 10, 3)
    assert batched


def test_batched_loops_match_iteration_by_iteration_whatever_the_chunk(monkeypatch, batched):
    rows, n_cols = 37, 40
    x = np.random.default_rng(0).standard_normal((rows, n_cols)).astype(np.float32)
    outs = []
    for chunk in (state.CHUNK_ELEMENTS, 64 * 5, 64):  # all iterations at once, a few, one at a time
        monkeypatch.setattr(state, "CHUNK_ELEMENTS", chunk)
        out = np.full_like(x, np.nan)
        rows_kernel[(5,)](x, out, n_cols, rows // 5, rows % 5, ROWS=2, BLOCK=64)
        outs.append(out)
    assert batched
    for out in outs[1:]:
        np.testing.assert_array_equal(out, outs[0])
    np.testing.assert_allclose(outs[0], 2 * x + x.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-5)



@ascdsl.jit
def difference_kernel(x_ptr, y_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    offs = tl.program_id(0) * n_cols + cols
    x = tl.load(x_ptr + offs, mask=cols < n_cols, other=0.0)
    y = tl.load(y_ptr + offs, mask=cols < n_cols, other=0.0)
    if tl.program_id(0) % 2 == 0:  # the odd programs store nothing
        tl.store(out_ptr + offs, x - y, mask=cols < n_cols)  # computed straight into out


def test_arithmetic_stored_in_place_writes_the_enabled_lanes_only():
    x = np.arange(6 * 5, dtype=np.float32).reshape(6, 5)
    y = np.full_like(x, 0.5)
    out = np.full((6 * 5 + 3,), -7.0, np.float32)  # three elements past the last row
    difference_kernel[(6,)](x, y, out, 5, BLOCK=8)
    want = np.full_like(out, -7.0)
    want[:30] = np.where((np.arange(6) % 2 == 0)[:, None], x - y, -7.0).reshape(-1)
    np.testing.assert_array_equal(out, want)


@ascdsl.jit
def uneven_rows_kernel(dy_ptr, x_ptr, out_ptr, n_cols, per_core, big_cores, ROWS: tl.constexpr,
                       BLOCK: tl.constexpr):
    start, end = core_span(per_core, big_cores)  # the entry points' uneven shares: no view fits them all
    cols = tl.arange(0, BLOCK)
    for row0 in range(start, end, ROWS):
        rows = row0 + tl.arange(0, ROWS)
        offs = rows[:, None] * n_cols + cols[None, :]
        mask = (rows[:, None] < end) & (cols[None, :] < n_cols)
        dy = tl.load(dy_ptr + offs, mask=mask, other=0.0)
        x = tl.load(x_ptr + offs, mask=mask, other=-1.0)
        tl.store(out_ptr + offs, dy - tl.exp(x) * tl.sum(dy, axis=1)[:, None], mask=mask)  # computed in place


@pytest.mark.parametrize("rows,cols,block,programs,tile_rows", [(103, 32, 32, 5, 3), (50, 20, 32, 7, 4),
                                                                (37, 64, 64, 4, 1)])
def test_uneven_row_shares_are_copied_as_strided_pieces(monkeypatch, rows, cols, block, programs, tile_rows):
    rng = np.random.default_rng(1)
    dy, x = (rng.standard_normal((rows, cols)).astype(np.float32) for _ in range(2))
    pieces = []
    found = plans._pieces
    monkeypatch.setattr(plans, "_pieces", lambda *a: (pieces.append(r := found(*a)), r)[1])
    outs = []
    for elements in (1, 1 << 40):  # every access in pieces (the last tiles past the end included), then none
        monkeypatch.setattr(plans, "PIECE_ELEMENTS", elements)
        out = np.full((rows + 3, cols), 7.0, np.float32)  # rows past the end stay untouched
        uneven_rows_kernel[(programs,)](dy, x, out, cols, rows // programs, rows % programs, ROWS=tile_rows,
                                        BLOCK=block)
        outs.append(out)
    assert any(p is not None for p in pieces) and pieces[-1] is None
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0][rows:], 7.0)
    np.testing.assert_allclose(outs[0][:rows], dy - np.exp(x) * dy.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-5)


@ascdsl.jit
def tile_slots_kernel(x_ptr, w_ptr, slots_ptr, sums_ptr, n_cols, per_core, big_cores, TRIPS: tl.constexpr,
                      ROWS: tl.constexpr, BLOCK: tl.constexpr):
    start, end = core_span(per_core, big_cores)
    cols = tl.arange(0, BLOCK)
    lanes = tl.arange(0, ROWS)
    for row0 in range(start, end, ROWS):
        rows = row0 + lanes
        mask = (rows[:, None] < end) & (cols[None, :] < n_cols)
        x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=-1.5)
        w = tl.load(w_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=2.0)
        slot = (tl.program_id(0) * TRIPS + (row0 - start) // ROWS) * ROWS + lanes  # every row of every tile
        tl.store(slots_ptr + slot[:, None] * BLOCK + cols[None, :], tl.exp(x) * w + x)
        tl.store(sums_ptr + slot, tl.sum(x * w, axis=1) + tl.max(x, axis=1))


def test_lanes_a_mask_disables_hold_the_other_values_in_pieces(monkeypatch):
    rows, cols, programs, tile_rows = 46, 32, 5, 4  # 10 rows for the first program, 9 for the others
    trips = 3
    rng = np.random.default_rng(2)
    x, w = (rng.standard_normal((rows, cols)).astype(np.float32) for _ in range(2))
    results, made = [], []
    found = affine.loaded
    monkeypatch.setattr(affine, "loaded", lambda *a: (made.append(r := found(*a)), r)[1])
    for elements in (1, 1 << 40):
        monkeypatch.setattr(plans, "PIECE_ELEMENTS", elements)
        slots = np.full((programs * trips * tile_rows, cols), np.nan, np.float32)
        sums = np.full(programs * trips * tile_rows, np.nan, np.float32)
        tile_slots_kernel[(programs,)](x, w, slots, sums, cols, rows // programs, rows % programs, TRIPS=trips,
                                       ROWS=tile_rows, BLOCK=cols)
        results.append((slots, sums))
    assert any(m is not None and m.off is not None for m in made)  # loaded in pieces, disabled rows included
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    slots, sums = results[0]
    starts = [0, 10, 19, 28, 37]
    for p, start in enumerate(starts):
        for r in range(trips * tile_rows):
            row = start + r
            mine = row < (starts + [rows])[p + 1]
            xr = x[row] if mine else np.full(cols, -1.5, np.float32)
            wr = w[row] if mine else np.full(cols, 2.0, np.float32)
            k = p * trips * tile_rows + r
            np.testing.assert_allclose(slots[k], np.exp(xr) * wr + xr, rtol=1e-6)
            np.testing.assert_allclose(sums[k], (xr * wr).sum() + xr.max(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("programs,tile_rows", [(5, 3), (4, 1)])
def test_accesses_through_the_same_offsets_are_planned_once(monkeypatch, programs, tile_rows):
    rows, cols = 37, 24
    rng = np.random.default_rng(3)
    dy, x = (rng.standard_normal((rows, cols)).astype(np.float32) for _ in range(2))
    planned = []
    found = plans._geometry
    monkeypatch.setattr(plans, "_geometry", lambda *a: (planned.append(a), found(*a))[1])
    out = np.full((rows + 2, cols), 7.0, np.float32)
    uneven_rows_kernel[(programs,)](dy, x, out, cols, rows // programs, rows % programs, ROWS=tile_rows, BLOCK=32)
    assert len(planned) == 1  # the two loads and the store: dy_ptr + offs, x_ptr + offs, out_ptr + offs
    np.testing.assert_array_equal(out[rows:], 7.0)
    np.testing.assert_allclose(out[:rows], dy - np.exp(x) * dy.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-5)


def test_a_buffer_too_small_for_offsets_planned_on_another_is_out_of_bounds():
    rows, cols, programs = 20, 16, 3
    dy = np.ones((rows, cols), np.float32)
    x = np.ones((rows - 1, cols), np.float32)  # the last row's offsets fit dy, not x
    out = np.zeros((rows, cols), np.float32)
    with pytest.raises(OutOfBoundsError, match="load from x_ptr out of bounds"):
        uneven_rows_kernel[(programs,)](dy, x, out, cols, rows // programs, rows % programs, ROWS=2, BLOCK=16)


@ascdsl.jit
def same_offsets_overlap_kernel(x_ptr, out_ptr, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.arange(0, ROWS)
    offs = rows[:, None] * 0 + tl.arange(0, BLOCK)[None, :]  # every row at the same elements
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x + rows[:, None].to(tl.float32))  # the last row wins


def test_a_store_through_offsets_a_load_planned_with_overlapping_lanes_keeps_the_lane_order():
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    same_offsets_overlap_kernel[(1,)](x, out, ROWS=4, BLOCK=8)
    np.testing.assert_array_equal(out, x + 3)


@ascdsl.jit
def temporaries_kernel(x_ptr, out_ptr, keep_ptr, n_cols, per_core, big_cores, ROWS: tl.constexpr,
                       BLOCK: tl.constexpr):
    start, end = core_span(per_core, big_cores)
    cols = tl.arange(0, BLOCK)
    for row0 in range(start, end, ROWS):
        rows = row0 + tl.arange(0, ROWS)
        offs = rows[:, None] * n_cols + cols[None, :]
        mask = (rows[:, None] < end) & (cols[None, :] < n_cols)
        x = tl.load(x_ptr + offs, mask=mask, other=0.5)
        e = tl.exp(x)  # dies in the product below
        kept = e * 2.0 + 1.0  # used twice: by the chain and by its own store
        same = tl.where(cols[None, :] < BLOCK, kept, 0.0)  # the condition holds everywhere: ``kept`` itself
        chain = (same * same - x) / (kept + 3.0)
        tl.store(out_ptr + offs, chain * 0.5 + tl.sum(chain, axis=1)[:, None], mask=mask)
        tl.store(keep_ptr + offs, kept, mask=mask)


def test_an_elementwise_op_computes_into_operands_that_die_and_nothing_else(monkeypatch):
    rows, cols, programs = 45, 24, 4
    x = np.random.default_rng(4).standard_normal((rows, cols)).astype(np.float32)
    given = []
    found = state._donated
    monkeypatch.setattr(state, "_donated", lambda *a: (given.append(r := found(*a)), r)[1])
    results = []
    for limit in (0, 1 << 40):  # small tiles may receive results, then none may
        monkeypatch.setattr(state, "DONATED_BYTES", limit)
        out, keep = np.zeros((rows, cols), np.float32), np.zeros((rows, cols), np.float32)
        temporaries_kernel[(programs,)](x, out, keep, cols, rows // programs, rows % programs, ROWS=4, BLOCK=32)
        results.append((out, keep, sum(g is not None for g in given)))
        given.clear()
    (out, keep, donated), (plain_out, plain_keep, none) = results
    assert donated >= 3 and none == 0
    np.testing.assert_array_equal(out, plain_out)
    np.testing.assert_array_equal(keep, plain_keep)
    padded = np.pad(x, ((0, 0), (0, 32 - cols)), constant_values=0.5)  # the masked lanes' other value
    kept = np.exp(padded) * np.float32(2) + np.float32(1)
    chain = (kept * kept - padded) / (kept + np.float32(3))
    np.testing.assert_array_equal(keep, kept[:, :cols])
    np.testing.assert_allclose(out, (chain * 0.5 + chain.sum(axis=1, keepdims=True))[:, :cols], rtol=1e-5, atol=1e-5)


@ascdsl.jit
def folded_rows_kernel(x_ptr, out_ptr, per_core, big_cores, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    start, end = core_span(per_core, big_cores)
    rows = tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    for unit in range(start, end):
        for row0 in range(0, 2 * ROWS, ROWS):  # rows of BLOCK continue each other: a tile is one run
            offs = unit * 2 * ROWS * BLOCK + (row0 + rows[:, None]) * BLOCK + cols[None, :]
            mask = (rows[:, None] < ROWS) & (cols[None, :] < BLOCK)
            x = tl.load(x_ptr + offs, mask=mask, other=0.0)
            y = tl.load(x_ptr + offs, mask=mask, other=rows[:, None] * 1.0 + cols[None, :])
            tl.store(out_ptr + offs, x * 2.0 + y, mask=mask)


@pytest.mark.parametrize("elements", [1, 1 << 40])
@pytest.mark.parametrize("units", [5, 4, 9])
def test_a_program_mask_over_tiles_folded_into_one_run(monkeypatch, units, elements):
    """Programs with fewer units than others run their last loop masked: the mask has one entry per
    program, and the access folds the tile's rows into a single run (a gather, scalar and tile other
    values, a store; in pieces, then through runs)."""
    monkeypatch.setattr(plans, "PIECE_ELEMENTS", elements)
    programs, rows, block = 4, 2, 8
    x = np.arange(units * 2 * rows * block, dtype=np.float32)
    out = np.full_like(x, 7.0)
    folded_rows_kernel[(programs,)](x, out, units // programs, units % programs, ROWS=rows, BLOCK=block)
    np.testing.assert_array_equal(out, 3 * x)


@ascdsl.jit
def grid_stride_kernel(x_ptr, out_ptr, last_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    for row in range(tl.program_id(0), n_rows, tl.num_programs(0)):  # the programs take adjacent rows
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        tl.store(out_ptr + row * n_cols + cols, 2 * x + tl.sum(x, axis=0), mask=cols < n_cols)
        tl.store(last_ptr + cols * 0, (tl.program_id(0) * 1000 + row + cols * 0).to(tl.float32), mask=cols < 2)


def test_a_grid_stride_loop_runs_its_copies_interleaved(monkeypatch, batched):
    """Copy ``j`` of every program, then copy ``j + 1``: the rows are in memory order (one view), and
    the result, the last write to a shared address included, is the loop's in order."""
    rows, n_cols, programs = 37, 40, 5
    x = np.random.default_rng(0).standard_normal((rows, n_cols)).astype(np.float32)
    layouts = []
    layout = control._layout
    monkeypatch.setattr(control, "_layout", lambda *a: (layouts.append((r := layout(*a))[0]), r)[1])
    outs = []
    for chunk in (state.CHUNK_ELEMENTS, 64 * 5 * 3, 64):  # all iterations at once, 3, one program at a time
        monkeypatch.setattr(state, "CHUNK_ELEMENTS", chunk)
        out, last = np.full_like(x, np.nan), np.zeros(1, np.float32)
        grid_stride_kernel[(programs,)](x, out, last, rows, n_cols, BLOCK=64)
        outs.append((out, last[0]))
    assert batched and layouts[0] is True and layouts.count(True) == 1 + 3  # (3 groups of 3, 3, 2 iterations)
    for out, _ in outs[1:]:
        np.testing.assert_array_equal(out, outs[0][0])
    np.testing.assert_allclose(outs[0][0], 2 * x + x.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-5)
    # iteration k of every program, program by program: the last write is program 1's row 36 (in one chunk)
    assert outs[0][1] == outs[1][1] == 1036


@ascdsl.jit
def scaled_rows_kernel(x_ptr, out_ptr, first, n_rows, stride, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < BLOCK)
    x = tl.load(x_ptr + (first + rows[:, None]) * stride + cols[None, :], mask=mask, other=0.0)
    tl.store(out_ptr + rows[:, None] * BLOCK + cols[None, :], x * 2.0, mask=mask)


def test_plans_are_remembered_across_launches_only_for_the_same_geometry(monkeypatch):
    """A launch like an earlier one plans nothing again; a changed first row (base), stride, row count
    (mask), grid or buffer size is planned anew (a stale plan would copy the wrong rows or miss the bounds)."""
    planned = []
    found = plans._geometry
    monkeypatch.setattr(plans, "_geometry", lambda *a: (planned.append(a[0].shape), found(*a))[1])
    monkeypatch.setattr(plans, "MEMO", plans.Memo())
    x = np.arange(40 * 48, dtype=np.float32).reshape(40, 48)

    def launch(stride, n_rows, grid, first=0, source=x):
        out = np.full((16, 16), -1.0, np.float32)
        scaled_rows_kernel[(grid,)](source, out, first, n_rows, stride, ROWS=4, BLOCK=16)
        want = np.full((16, 16), -1.0, np.float32)
        rows = min(n_rows, 4 * grid)
        want[:rows] = 2 * source.reshape(-1)[(first + np.arange(rows)[:, None]) * stride + np.arange(16)]
        np.testing.assert_array_equal(out, want)
        return len(planned)

    first = launch(48, 13, 4)
    assert first > 0 and launch(48, 13, 4) == first  # the same launch: remembered
    for stride, n_rows, grid, first in ((32, 13, 4, 0), (48, 10, 4, 0), (48, 13, 3, 0), (16, 13, 4, 0),
                                        (48, 13, 4, 5), (48, 13, 1, 0), (32, 13, 1, 0)):  # (the last: only a coefficient)
        before = len(planned)
        assert launch(stride, n_rows, grid, first) > before
    with pytest.raises(OutOfBoundsError):  # the same pointers into a buffer too small for them
        launch(48, 13, 4, source=x[:10].copy())
    monkeypatch.setattr(plans, "MEMO", plans.Memo(largest=16))  # too large to keep: planned every time
    first = launch(48, 13, 4)
    assert launch(48, 13, 4) > first


@ascdsl.jit
def chained_store_kernel(a_ptr, b_ptr, c_ptr, out_ptr, n_rows, per_core, big_cores, ROWS: tl.constexpr,
                         BLOCK: tl.constexpr):
    start, end = core_span(per_core, big_cores)
    cols = tl.arange(0, BLOCK)
    for row0 in range(start, end, ROWS):
        rows = row0 + tl.arange(0, ROWS)
        offsets = rows[:, None] * BLOCK + cols[None, :]
        mask = (rows[:, None] < end) & (cols[None, :] < BLOCK)
        a = tl.load(a_ptr + offsets, mask=mask, other=1.0)
        b = tl.load(b_ptr + offsets, mask=mask, other=2.0)
        c = tl.load(c_ptr + offsets, mask=mask, other=3.0)
        total = tl.sum(a * b, axis=1)
        tl.store(out_ptr + offsets, ((total[:, None] * 0.5 - a) * c + a * b) / (b - c), mask=mask)


@pytest.mark.parametrize("out_dtype", [np.float32, np.float16])
@pytest.mark.parametrize("rows, programs", [(40, 1), (37, 4)])  # one box (a view), uneven shares (pieces)
def test_a_chain_computed_into_the_stored_memory_is_bit_exact(monkeypatch, out_dtype, rows, programs):
    """``((t * 0.5 - a) * c + a * b) / (b - c)`` stored through one box or, with lazily loaded tiles,
    through the store's pieces: computed op by op into the store's memory when it is float32 (a
    float16 store rounds once, after the chain: its cast keeps the chain in tiles); the same bits as
    tile by tile, the lanes it masks off untouched."""
    rng = np.random.default_rng(3)
    block = 16
    monkeypatch.setattr(plans, "PIECE_ELEMENTS", 1)
    a, b, c = (rng.standard_normal((rows, block)).astype(np.float32) for _ in range(3))
    outs, computed = [], []
    found = affine.Access.compute
    monkeypatch.setattr(affine.Access, "compute",
                        lambda self, links: (computed.append([f for f, _ in links]), found(self, links))[1])
    for fuse in (True, False):
        monkeypatch.setattr(runner, "_prepared", {})
        if not fuse:
            monkeypatch.setattr(runner, "_stored_directly", lambda block: set())
        out = np.full((rows + 5, block), 7.0, out_dtype)
        chained_store_kernel[(programs,)](a, b, c, out, rows, rows // programs, rows % programs, ROWS=8, BLOCK=block)
        outs.append(out)
        if fuse:
            chain = [np.subtract, np.multiply, np.add, np.true_divide]
            assert computed == [chain if out_dtype == np.float32 else [None]]  # (None: a copy, of the cast tile)
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0][rows:], 7.0)
    t = (a * b).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(outs[0][:rows], (((t * 0.5 - a) * c + a * b) / (b - c)).astype(out_dtype),
                               rtol=2e-3, atol=1e-3)
