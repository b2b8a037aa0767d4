"""Pointers and offset tiles a loop advances (``ptrs += BLOCK``, ``p += n``, ``offs += BLOCK``), as Triton
kernels write them, on the simulator against the interpreter (bit-exact): the ``carried_offsets`` pass
carries the sum of the steps as a scalar, so the accesses are block copies. A pointer a loop updates in
another way is a located error (it was a KeyError deep in the backend)."""
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from ascdsl.ir import dump
from ascdsl.passes import run_passes
from tests.backend.helpers import both, data


@ascdsl.jit
def advanced_tiles_kernel(in_ptr, out_ptr, n, BLOCK: tl.constexpr, STEPS: tl.constexpr):
    offset = STEPS * tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x_in = in_ptr + offset
    x_out = out_ptr + offset
    for _ in range(0, STEPS):
        mask = offset < n
        tl.store(x_out, tl.load(x_in, mask=mask, other=0.0) * 2.0, mask)
        x_in += BLOCK
        x_out += BLOCK
        offset += BLOCK


@ascdsl.jit
def advanced_scalars_kernel(in_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    p = in_ptr + tl.program_id(0) * 2 * BLOCK
    q = out_ptr + tl.program_id(0) * 2 * BLOCK
    offs = tl.arange(0, BLOCK)
    for _ in range(2):
        x = tl.load(p + offs, mask=offs < n, other=-1.0)
        tl.store(q + offs, x + 1.0)
        p = p + stride.to(tl.int64) + BLOCK - stride  # 64-bit steps: a 64-bit carried offset
        q += BLOCK
        n -= BLOCK
    tl.store(q + offs - 2 * BLOCK, tl.load(p + offs - 2 * BLOCK) * 3.0)  # the loop's results


@ascdsl.jit
def advanced_rows_kernel(in_ptr, out_ptr, rows, cols, ROWS: tl.constexpr, COLS: tl.constexpr):
    r = tl.arange(0, ROWS)[:, None]
    c = tl.arange(0, COLS)[None, :]
    ptrs = in_ptr + r * cols + c
    acc = tl.zeros((ROWS, COLS), tl.float32)
    for k in range(0, tl.cdiv(cols, COLS)):  # the tutorial matmul's form: a 2-D block of pointers advanced
        acc += tl.load(ptrs, mask=(r < rows) & (c < cols - k * COLS), other=0.0)
        ptrs += COLS
    tl.store(out_ptr + r * COLS + c, acc, mask=r < rows)


@pytest.mark.parametrize("n, block", [(4 * 37, 32), (69 * 5, 64), (512, 128)])
def test_pointer_and_offset_tiles_advanced_in_a_loop_bit_exact(n, block):
    x = data(n, dtypes.float32)
    steps = 2
    grid = -(-n // (steps * block))
    want, got = both(advanced_tiles_kernel[(grid,)], x, np.zeros(grid * steps * block, np.float32), n,
                     BLOCK=block, STEPS=steps)
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(want[1][:n], x * 2)


def test_scalar_pointers_advanced_in_a_loop_bit_exact():
    x = data(128, dtypes.float32)
    want, got = both(advanced_scalars_kernel[(2,)], x, np.zeros(128, np.float32), 50, 7, BLOCK=32)
    np.testing.assert_array_equal(got[1], want[1])
    expect = np.concatenate([x[i * 32:(i + 1) * 32] + 1 for i in range(4)]).copy()
    for i, rest in ((0, 50), (1, 18), (2, 50), (3, 18)):
        expect[i * 32 + max(rest, 0):(i + 1) * 32] = 0.0
    expect[:32], expect[64:96] = x[:32] * 3, x[64:96] * 3
    np.testing.assert_array_equal(want[1], expect)


def test_a_block_of_pointers_advanced_along_its_rows_bit_exact():
    x = data((13, 100), dtypes.float32)
    want, got = both(advanced_rows_kernel[(1,)], x, np.zeros((16, 32), np.float32), 13, 100, ROWS=16, COLS=32)
    np.testing.assert_array_equal(got[1], want[1])
    padded = np.pad(x, ((0, 0), (0, 28)))
    np.testing.assert_allclose(want[1][:13], padded.reshape(13, 4, 32).sum(1), rtol=1e-6)


@pytest.mark.parametrize("kernel, constexprs", [(advanced_tiles_kernel, dict(BLOCK=32, STEPS=2)),
                                                 (advanced_scalars_kernel, dict(BLOCK=32))])
def test_the_loops_carry_no_pointers_and_steps_the_same_each_time_carry_nothing(kernel, constexprs):
    """Steps the same on every iteration make the offset ``count * step`` (nothing carried); a pointer read
    after the loop carries its offset as an integer."""
    ptr, i32 = tl.pointer_type(dtypes.float32), dtypes.int32
    (k,) = kernel.specialize(ptr, ptr, *[i32] * (len(kernel.arg_names) - 2 - len(constexprs)),
                             **constexprs).kernels
    text = dump(run_passes(k))
    (loop,) = [line for line in text.splitlines() if line.strip().split(" = ")[-1].startswith("for ")]
    assert "ptr" not in loop and "tile" not in loop, loop
    carried = loop.split(" : ")[-1] if " : " in loop else ""
    assert carried.count("i64") == (kernel is advanced_scalars_kernel), loop  # p after the loop, 64-bit steps
    assert " load " not in text and " store " not in text


@ascdsl.jit
def swapped_pointers_kernel(a_ptr, b_ptr, BLOCK: tl.constexpr):
    p, q = a_ptr, b_ptr
    offs = tl.arange(0, BLOCK)
    for _ in range(3):
        tl.store(q + offs, tl.load(p + offs) + 1)
        p, q = q, p


def test_pointers_a_loop_swaps_are_a_located_error():
    x = np.arange(32, dtype=np.float32)
    with pytest.raises(ascdsl.CompilationError) as info:
        swapped_pointers_kernel[(1,)](x, np.zeros(32, np.float32), BLOCK=32, backend="sim")
    message = str(info.value)
    assert "test_sim_carried_offsets.py:" in message.splitlines()[0]
    assert "the pointer is a loop argument" in message and "tl.load(p + offs)" in message
