"""Reductions, Brcb, Compare and Select against NumPy models of the documented semantics."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from simref import tree

from ascdsl import sim

SRC = Path(__file__).parent / "kernels" / "reduce.cpp"


def run(name, *args, **kw):
    return sim.run_kernel(SRC, name, list(args), 1, **kw)


def test_reduce_sum_max_min_count_form(rng):
    n = 1000  # 15 full repeats of 64 floats and a tail of 40
    a = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(24, np.float32)
    run("reduce_all_f32", a, out, np.uint32(n))
    chunks = [np.concatenate([a[i:i + 64], np.zeros(64 - a[i:i + 64].size, np.float32)]) for i in range(0, n, 64)]
    acc = tree(chunks[0])
    for c in chunks[1:]:  # per-repeat trees accumulated in order
        acc = np.float32(acc + tree(c))
    assert out[0] == acc
    assert out[8] == a.max() and out[9:10].view(np.uint32)[0] == a.argmax()
    assert out[16] == a.min() and out[17:18].view(np.uint32)[0] == a.argmin()


def test_reduce_max_min_index_ties_pick_the_lowest_index(rng):
    """argmax/argmin lower to ReduceMax/ReduceMin(calIndex=true): ties across repeats give the first index."""
    n = 1000
    a = rng.uniform(-1, 1, n).astype(np.float32)
    a[[900, 70, 500]] = 5.0  # the same maximum in three repeats
    a[[999, 64, 63]] = -5.0  # the same minimum, one of them at a repeat boundary
    out = np.zeros(24, np.float32)
    run("reduce_all_f32", a, out, np.uint32(n))
    assert out[8] == 5.0 and out[9:10].view(np.uint32)[0] == 70 == np.argmax(a)
    assert out[16] == -5.0 and out[17:18].view(np.uint32)[0] == 63 == np.argmin(a)


def test_reduce_sum_half_rounds_each_step(rng):
    n = 256
    a = rng.uniform(0, 4, n).astype(np.float16)
    out = np.zeros(16, np.float16)
    run("reduce_sum_f16", a, out, np.uint32(n))
    assert out[0] == np.float16(tree(a[:128]) + tree(a[128:]))


def test_half_sums_saturate_instead_of_overflowing():
    out = np.zeros(16, np.float16)
    run("reduce_sum_f16", np.full(256, 60000, np.float16), out, np.uint32(256))
    assert out[0] == np.float16(65504)


def test_reduce_sum_repeat_form_is_tree_of_trees(rng):
    a = rng.standard_normal(192).astype(np.float32)
    out = np.zeros(8, np.float32)
    run("reduce_sum_repeat", a, out)
    assert out[0] == tree(np.array([tree(a[0:64]), tree(a[64:128]), tree(a[128:192])], np.float32))


@pytest.mark.parametrize("mask,repeat", [(64, 8), (13, 4)])
def test_whole_reduce_sum_one_result_per_repeat(rng, mask, repeat):
    a = rng.standard_normal(512).astype(np.float32)
    out = np.full(16, -99, np.float32)
    run("whole_reduce_sum", a, out, np.int32(mask), np.int32(repeat))
    expect = np.full(16, -99, np.float32)
    for r in range(repeat):
        expect[r] = tree(np.concatenate([a[r * 64: r * 64 + mask], np.zeros(64 - mask, np.float32)]))
    np.testing.assert_array_equal(out, expect)


def test_whole_reduce_max_orders(rng):
    a = rng.standard_normal(128).astype(np.float32)
    a[70] = a[100] = 9.0  # a tie: the lowest lane wins
    out = np.full(32, -99, np.float32)
    run("whole_reduce_max", a, out)
    bits = out.view(np.uint32)
    rows = a.reshape(2, 64)
    for r in range(2):
        assert out[2 * r] == rows[r].max() and bits[2 * r + 1] == rows[r].argmax()
        assert bits[8 + 2 * r] == rows[r].argmax() and out[8 + 2 * r + 1] == rows[r].max()
        assert out[16 + r] == rows[r].max()
        assert bits[24 + r] == rows[r].argmin()
    assert bits[3] == 6


def test_block_reduce_sum(rng):
    a = rng.standard_normal(128).astype(np.float32)
    out = np.zeros(16, np.float32)
    run("block_reduce_sum", a, out)
    np.testing.assert_array_equal(out, [tree(a[i:i + 8]) for i in range(0, 128, 8)])


def test_brcb_broadcasts_each_element_to_a_block(rng):
    a = rng.standard_normal(16).astype(np.float32)
    out = np.zeros(128, np.float32)
    run("brcb", a, out)
    np.testing.assert_array_equal(out, np.repeat(a, 8))


CMP = {"LT": np.less, "GT": np.greater, "EQ": np.equal, "LE": np.less_equal, "GE": np.greater_equal, "NE": np.not_equal}


@pytest.mark.parametrize("mode", list(CMP))
def test_compare_bit_packing(rng, mode):
    n = 128
    a = rng.integers(-3, 3, n).astype(np.float32)
    b = rng.integers(-3, 3, n).astype(np.float32)
    out = np.zeros(32, np.uint8)
    run("compare", a, b, out, np.uint32(n), np.int32(list(CMP).index(mode)))
    np.testing.assert_array_equal(out[:16], np.packbits(CMP[mode](a, b), bitorder="little"))
    assert not out[16:].any()


def test_compare_bit_order_worked_example():
    a = np.zeros(64, np.float32)
    a[[0, 3, 9]] = -1  # lanes 0 and 3 -> byte 0 = 0b00001001, lane 9 -> byte 1 = 0b00000010
    out = np.zeros(32, np.uint8)
    run("compare", a, np.zeros(64, np.float32), out, np.uint32(64), np.int32(0))
    assert list(out[:2]) == [0x09, 0x02]


def test_compare_repeat_form_half(rng):
    a = rng.standard_normal(256).astype(np.float16)
    b = rng.standard_normal(256).astype(np.float16)
    out = np.zeros(32, np.uint8)
    run("compare_repeat_f16", a, b, out)
    np.testing.assert_array_equal(out, np.packbits(a < b, bitorder="little"))


def test_select_tensor_and_scalar_modes(rng):
    n = 64
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(2 * n, np.float32)
    run("select_modes", a, b, out, np.uint32(n))
    np.testing.assert_array_equal(out[:n], np.where(a < b, a, b))
    np.testing.assert_array_equal(out[n:], np.where(a < b, a, np.float32(0.5)))


def test_select_mode0_reuses_mask_per_repeat(rng):
    a = rng.standard_normal(128).astype(np.float32)
    b = rng.standard_normal(128).astype(np.float32)
    mask = rng.integers(0, 256, 32).astype(np.uint8)
    out = np.zeros(128, np.float32)
    run("select_mode0", a, b, out, mask)
    bits = np.unpackbits(mask, bitorder="little")[:64]
    np.testing.assert_array_equal(out, np.where(np.tile(bits, 2) == 1, a, b))
