"""A chain of elementwise ops that a store computes into its memory runs strip by strip
(:meth:`ascdsl.affine.Access.compute`): the same bits as the chain computed tile by tile, special
values included, and the lanes the store masks off untouched."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl.affine import access, plans
from ascdsl.interpreter import runner
from ascdsl.lib import core_span


@pytest.mark.parametrize("shape", [(5,), (3, 7), (2, 3, 5), (1, 40), (6, 1, 4)])
@pytest.mark.parametrize("strip", [1, 4, 6, 35, 1000])
def test_strips_cover_a_box_once_in_order(monkeypatch, shape, strip):
    monkeypatch.setattr(access, "STRIP_ELEMENTS", strip)
    box = np.arange(int(np.prod(shape))).reshape(shape)
    seen = [box[cut].reshape(-1) for cut in access._strips(shape)]
    assert all(s.size <= strip for s in seen)
    np.testing.assert_array_equal(np.concatenate(seen), box.reshape(-1))


def special_values(rng, shape) -> np.ndarray:
    """Normal values with NaN, infinities, signed zeros and tiny and huge values strewn in."""
    x = rng.standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1)
    picks = rng.choice(flat.size, size=(7, flat.size // 8), replace=False) if flat.size >= 56 else [[]] * 7
    for where, value in zip(picks, (np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, 3e38)):
        flat[where] = value
    return x


def assert_same_bits(a: np.ndarray, b: np.ndarray) -> None:
    """The same bits in every lane (-0.0 included), NaN where the other is NaN: the sign of a NaN is not
    fixed by NumPy's loops (its SIMD body and its tail may take a commutative op's operands in either
    order), whatever the layout."""
    nan = np.isnan(a)
    np.testing.assert_array_equal(nan, np.isnan(b))
    np.testing.assert_array_equal(np.where(nan, 0, a.view(np.uint32)), np.where(nan, 0, b.view(np.uint32)))


@ascdsl.jit
def chain_rows_kernel(x_ptr, y_ptr, w_ptr, out_ptr, n_rows, n_cols, out_stride, ROWS: tl.constexpr,
                      BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    offs = rows[:, None] * n_cols + cols[None, :]
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=1.0)
    w = tl.load(w_ptr + cols, mask=cols < n_cols, other=0.0)
    m = tl.max(x, axis=1)
    value = tl.maximum((x - m[:, None]) * w[None, :] / y, -1.5) + x
    tl.store(out_ptr + rows[:, None] * out_stride + cols[None, :], value, mask=mask)


@ascdsl.jit
def pair_rows_kernel(x_ptr, y_ptr, w_ptr, out_ptr, n_rows, n_cols, out_stride, ROWS: tl.constexpr,
                     BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0.0)
    y = tl.load(y_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=1.0)
    w = tl.load(w_ptr + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + rows[:, None] * out_stride + cols[None, :], (x - y) * w[None, :], mask=mask)


@ascdsl.jit
def chain_shares_kernel(x_ptr, y_ptr, w_ptr, out_ptr, n_cols, out_stride, per_core, big_cores, ROWS: tl.constexpr,
                        BLOCK: tl.constexpr):
    start, end = core_span(per_core, big_cores)
    cols = tl.arange(0, BLOCK)
    w = tl.load(w_ptr + cols, mask=cols < n_cols, other=0.0)
    for row0 in range(start, end, ROWS):
        rows = row0 + tl.arange(0, ROWS)
        offs = rows[:, None] * n_cols + cols[None, :]
        mask = (rows[:, None] < end) & (cols[None, :] < n_cols)
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        y = tl.load(y_ptr + offs, mask=mask, other=1.0)
        tl.store(out_ptr + rows[:, None] * out_stride + cols[None, :], tl.minimum(-x * w[None, :] - y, 2.5) * y,
                 mask=mask)


LAUNCHES = {
    # one row per program, the columns masked: one box (a view), each run's leading lanes
    "view": (lambda x, y, w, out, rows: chain_rows_kernel[(rows,)](x, y, w, out, rows, x.shape[1], out.shape[1],
                                                                    ROWS=1, BLOCK=64), 50),
    # 4 rows per program, the last program's rows partly past the end: a view under a row mask
    "rows masked": (lambda x, y, w, out, rows: chain_rows_kernel[(-(-rows // 4),)](
        x, y, w, out, rows, x.shape[1], out.shape[1], ROWS=4, BLOCK=64), 64),
    # uneven shares of rows over 4 programs: strided pieces
    "pieces": (lambda x, y, w, out, rows: chain_shares_kernel[(4,)](x, y, w, out, x.shape[1], out.shape[1], rows // 4,
                                                                    rows % 4, ROWS=2, BLOCK=64), 64),
    # a chain of two ops, under a row mask: not in strips
    "two ops": (lambda x, y, w, out, rows: pair_rows_kernel[(-(-rows // 4),)](
        x, y, w, out, rows, x.shape[1], out.shape[1], ROWS=4, BLOCK=64), 64),
}


@pytest.mark.parametrize("layout", LAUNCHES)
@pytest.mark.parametrize("strip", [24, 150, 1 << 16])  # many strips (parts of rows, rows), one
@pytest.mark.parametrize("gap", [0, 16])  # the stored rows one after another, apart
def test_a_chain_stored_in_strips_is_bit_exact(monkeypatch, layout, strip, gap):
    """Against the same kernel whose ops all compute into tiles (no chain computed into memory), on
    operands with NaN, infinities, signed zeros, subnormal and huge values; the strips of the stored
    memory contiguous (computed there) or not (computed in a scratch strip, the last op there); a
    chain of two ops in one piece."""
    launch, cols = LAUNCHES[layout]
    rng = np.random.default_rng(7)
    rows = 37
    x, y = special_values(rng, (rows + 3, cols)), special_values(rng, (rows + 3, cols))  # (the boxes in bounds)
    w = special_values(rng, (cols,))
    monkeypatch.setattr(plans, "PIECE_ELEMENTS", 1)
    monkeypatch.setattr(access, "STRIP_ELEMENTS", strip)
    strips = []
    found = access._strips
    monkeypatch.setattr(access, "_strips", lambda shape: (strips.append(shape), found(shape))[1])
    outs = []
    for fuse in (True, False):
        monkeypatch.setattr(runner, "_prepared", {})
        if not fuse:
            monkeypatch.setattr(runner, "_stored_directly", lambda block: set())
        out = np.full((rows + 3, cols + gap), 7.0, np.float32)  # rows past the end, the gaps: untouched
        launch(x, y, w, out, rows)
        outs.append(out)
    if layout == "two ops":
        assert not strips
    else:
        assert strips and (strip > 1000 or sum(len(list(found(s))) for s in strips) > len(strips))
    assert_same_bits(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0][rows:], 7.0)
    np.testing.assert_array_equal(outs[0][:, cols:], 7.0)
