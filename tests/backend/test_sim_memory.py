"""Memory ops on the simulator (hazard checks on) against the interpreter: atomics (SetAtomicAdd/
Max/Min around the store's DataCopy(Pad)) of tiles, 2-D reductions and single elements, from
programs on many cores at once; what the A2 vector cores cannot do stays a located error."""
import numpy as np
import pytest

import ascdsl
from ascdsl import dtypes
from ascdsl.sim.errors import KernelSimError
from tests.backend import mem_kernels as k
from tests.backend.helpers import both, data, each

RNG = np.random.default_rng(11)
F32 = dtypes.float32


def _ints(shape, dtype=np.float32):
    """Small integers as floats: sums are exact in any order (cores add in their own order)."""
    return RNG.integers(-50, 50, shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=str)
def test_atomic_add_max_min_of_tiles(dtype):
    def check(n, block):
        x = _ints(n, dtype)
        outs = np.zeros(block, dtype), np.full(block, -1000, dtype), np.full(block, 1000, dtype)
        want, got = both(k.atomic_kernel[(ascdsl.cdiv(n, block),)], x, *outs, n, BLOCK=block)
        padded = np.zeros(ascdsl.cdiv(n, block) * block, np.float32)
        padded[:n] = x
        lanes = padded.reshape(-1, block)
        np.testing.assert_array_equal(want[1], lanes.sum(0).astype(dtype))  # the interpreter is the spec
        for a, b in zip(want[1:4], got[1:4]):
            np.testing.assert_array_equal(a, b, err_msg=f"n={n}")
    cases = [(1000, 64), (33, 32), (5000, 128)]  # 16, 2 and 40 programs
    each(check, cases)


def test_atomic_add_of_column_sums():
    def check(m, n, rows, cols):
        x = _ints((m, n))
        want, got = both(k.atomic_rows_kernel[(ascdsl.cdiv(m, rows),)], x, np.zeros(n, np.float32), m, n, n,
                          ROWS=rows, COLS=cols)
        np.testing.assert_array_equal(want[1], x.sum(0))
        np.testing.assert_array_equal(got[1], want[1], err_msg=f"{m}x{n}")
    cases = [(37, 20, 8, 32), (300, 64, 4, 64)]  # 5 and 75 programs
    each(check, cases)


def test_atomic_add_of_single_elements():
    n = 1000
    x = _ints(n)
    want, got = both(k.atomic_scalar_kernel[(ascdsl.cdiv(n, 64),)], x, np.zeros(1, np.float32),
                      np.full(4, -1e9, np.float32), n, BLOCK=64)
    assert want[1][0] == x.sum()
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[2], want[2])


def test_a_store_over_the_programs_own_atomic_add_runs_as_on_the_interpreter():
    """A program's atomic add then plain store to the same elements: its MTE3 copies run in order, so the store
    lands last, as the interpreter's program order says (the simulator took it for a race between blocks)."""
    x = _ints(128)
    want, got = both(k.atomic_then_store_kernel[(2,)], x, np.ones(128, np.float32), BLOCK=64, SWAP=False)
    np.testing.assert_array_equal(want[1], x * 3)
    np.testing.assert_array_equal(got[1], want[1])


def test_a_store_over_another_programs_atomic_add_is_a_race_on_the_simulator():
    """Program 1 stores plainly where program 0 accumulated: the cores run in no set order, a race the
    simulator reports at the store (the interpreter runs the programs one after another)."""
    x = _ints(128)
    with pytest.raises(KernelSimError, match="accumulated atomically .* by block|by block 1 .atomically") as info:
        k.atomic_then_store_kernel[(2,)](x, np.ones(128, np.float32), BLOCK=64, SWAP=True, backend="sim")
    assert "blocks must write disjoint GM" in str(info.value)


@pytest.mark.parametrize("kernel, kw, feature, line", [
    (k.dot_kernel, dict(N=4), "the cube lowering of `tl.dot` does not support a float32 operand block whose K is "
     "strided", "b = tl.load(b_ptr + i[:, None] * N + i[None, :])"),
    (k.atomic_old_kernel, dict(BLOCK=16), "reading the old values `tl.atomic_add` returns cannot run",
     "old = tl.atomic_add(x_ptr + offs, 1.0)"),
    (k.atomic_xchg_kernel, dict(BLOCK=16), "`tl.atomic_xchg` cannot run on the Ascend A2 vector cores: the only GM "
     "atomics of A2 are the DMA engine's SetAtomicAdd/SetAtomicMax/SetAtomicMin", "tl.atomic_xchg(x_ptr + offs, 1.0)"),
])
def test_what_vector_cores_cannot_do_is_a_located_error(kernel, kw, feature, line):
    arrays = [np.zeros(16, np.float32) for _ in range(kernel.fn.__code__.co_argcount - len(kw))]
    with pytest.raises(ascdsl.CompilationError) as info:
        kernel[(1,)](*arrays, backend="sim", **kw)
    message = str(info.value)
    assert message.startswith("tests/backend/mem_kernels.py:"), message
    assert feature in message and line in message and "backend='interpreter'" in message
    kernel[(1,)](*arrays, **kw)  # the interpreter runs it


def test_int64_tile_arithmetic_runs_on_the_scalar_unit():
    x = np.arange(16, dtype=np.int64) + 2**40
    want, got = both(k.int64_add_kernel[(1,)], x, BLOCK=16)
    np.testing.assert_array_equal(want[0], x + 1)
    np.testing.assert_array_equal(got[0], want[0])


def test_atomic_of_an_unsupported_dtype_is_a_located_error():
    x = np.zeros(16, np.int64)
    with pytest.raises(ascdsl.CompilationError) as info:
        k.atomic_int64_kernel[(1,)](x, backend="sim", BLOCK=16)
    message = str(info.value)
    assert "`tl.atomic_add` of int64 cannot run on the Ascend A2 vector cores" in message
    assert "tl.atomic_add(x_ptr + offs, 1)" in message


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.float16, dtypes.bfloat16], ids=str)
def test_strided_loads_bit_exact(dtype):
    def check(n, stride, block):
        x = data(n * max(stride, 5) + 2, dtype, RNG)
        want, got = both(k.strided_load_kernel[(ascdsl.cdiv(n, block),)], x, np.zeros(n, dtype.np), n, stride,
                          BLOCK=block, STEP=5)
        a, b = x[0:stride * n:stride].astype(np.float32), x[1:5 * n + 1:5].astype(np.float32)
        np.testing.assert_array_equal(want[1], (a + b).astype(dtype.np))
        np.testing.assert_array_equal(got[1].view(np.uint8), want[1].view(np.uint8), err_msg=f"n={n} stride={stride}")
    cases = [(100, 3, 64), (31, 2, 32), (33, 1, 32), (1000, 7, 256), (5, 12, 8)]
    each(check, cases)


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.float16, dtypes.int32, dtypes.int8, dtypes.uint8,
                                   dtypes.int64], ids=str)
def test_column_loads_transpose_bit_exact(dtype):
    def check(m, n, rows, cols):
        x = data((m, n), dtype, RNG)
        want, got = both(k.column_load_kernel[(ascdsl.cdiv(n, rows),)], x, np.zeros((n, m), dtype.np), m, n, n,
                          ROWS=rows, COLS=cols)
        np.testing.assert_array_equal(want[1], x.T)
        np.testing.assert_array_equal(got[1], want[1], err_msg=f"{m}x{n}")
    cases = [(7, 10, 4, 8), (33, 5, 2, 64), (16, 16, 16, 16)]
    each(check, cases)


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.float16, dtypes.bfloat16, dtypes.int8], ids=str)
def test_strided_and_transposed_stores_bit_exact(dtype):
    def check(m, n, grid, stride):
        x = (RNG.integers(-9, 9, m * n * grid)).astype(dtype.np)  # atomic sums of small ints: exact in any order
        count = grid * n - 3
        outs = np.zeros(count * stride, dtype.np), np.zeros(grid * m * n, dtype.np), np.zeros(2 * n, dtype.np)
        want, got = both(k.strided_store_kernel[(grid,)], x, *outs, count, stride, M=m, N=n)
        np.testing.assert_array_equal(want[1][::stride], (x[:count].astype(np.float32) + 1).astype(dtype.np))
        np.testing.assert_array_equal(want[2][:m * n].reshape(n, m), x[:m * n].reshape(m, n).T)
        for a, b in zip(want[1:4], got[1:4]):
            np.testing.assert_array_equal(a, b, err_msg=f"{m}x{n} grid={grid} stride={stride}")
    cases = [(4, 16, 4, 3), (2, 8, 8, 1), (8, 32, 2, 5)]
    each(check, cases)


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.float16, dtypes.bfloat16, dtypes.int32], ids=str)
def test_gathers_bit_exact(dtype):
    def check(n, block):
        x = data(n, dtype, RNG)
        idx = RNG.integers(0, n, n).astype(np.int32)
        idx[:3] = [0, n - 1, 0]
        want, got = both(k.gather_kernel[(ascdsl.cdiv(n, block),)], x, idx, np.zeros(n, dtype.np), n, BLOCK=block)
        wide = x.astype(np.float32) if dtype.is_float else x
        np.testing.assert_array_equal(want[2], (wide[idx] + wide[n - 1 - idx]).astype(dtype.np))
        np.testing.assert_array_equal(got[2].view(np.uint8), want[2].view(np.uint8), err_msg=f"n={n}")
    cases = [(100, 64), (33, 32), (8, 8), (1000, 256)]
    each(check, cases)


def test_gather_out_of_bounds_is_located_on_the_simulator():
    x, idx = np.zeros(16, np.float32), np.full(16, 3, np.int32)
    idx[5] = 1000
    with pytest.raises(KernelSimError) as info:
        k.gather_kernel[(1,)](x, idx, np.zeros(16, np.float32), 16, BLOCK=16, backend="sim")
    assert "tests/backend/mem_kernels.py:" in str(info.value) and "`x_ptr`" in str(info.value)


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.float16, dtypes.int32], ids=str)
def test_scatters_and_atomic_histograms_bit_exact(dtype):
    def check(n, block):
        x = RNG.integers(-9, 9, n).astype(dtype.np)  # atomic sums of small ints: exact in any order
        idx, bins = RNG.permutation(n).astype(np.int32), RNG.integers(0, 8, n).astype(np.int32)
        want, got = both(k.scatter_kernel[(ascdsl.cdiv(n, block),)], x, idx, bins, np.zeros(n, dtype.np),
                          np.zeros(8, dtype.np), n, BLOCK=block)
        np.testing.assert_array_equal(want[3][idx], x * 2)
        np.testing.assert_array_equal(want[4], np.bincount(bins, weights=x.astype(np.float64), minlength=8))
        np.testing.assert_array_equal(got[3], want[3], err_msg=f"n={n}")
        np.testing.assert_array_equal(got[4], want[4], err_msg=f"n={n}")
    cases = [(100, 64), (33, 32), (2000, 64)]
    each(check, cases)


def test_strided_columns_bit_exact():
    def check(m, stride, rows):
        x = data(m * stride + 1, dtypes.float32, RNG)
        want, got = both(k.column_kernel[(ascdsl.cdiv(m, rows),)], x, np.zeros(2 * m, np.float32), m, stride, M=rows)
        np.testing.assert_array_equal(want[1][::2], x[1:m * stride + 1:stride] * 3)
        np.testing.assert_array_equal(got[1], want[1], err_msg=f"m={m} stride={stride}")
    cases = [(37, 5, 16), (8, 3, 8)]
    each(check, cases)


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.float16, dtypes.int32], ids=str)
def test_addresses_that_are_not_affine_run_lane_by_lane(dtype):
    """Loaded row indices times a stride plus columns, offsets through ``%``, and an address the same
    along a dim: a gather or scatter of the lanes (were "cannot be copied as blocks")."""
    def check(n_rows, n_cols, m, n):
        x = data((20, n_cols + 3), dtype, RNG)
        idx = RNG.integers(0, 20, n_rows).astype(np.int32)
        out = np.zeros((n_rows, n_cols), dtype.np)
        want, got = both(k.row_gather_kernel[(ascdsl.cdiv(n_rows, m),)], x, idx, out, n_cols + 3, n_rows, n_cols,
                         M=m, N=n)
        np.testing.assert_array_equal(want[2], (x[idx, :n_cols].astype(np.float32) * 2).astype(dtype.np))
        np.testing.assert_array_equal(got[2].view(np.uint8), want[2].view(np.uint8))
        period, total = 13, n_rows * 5
        flat = data(period, dtype, RNG)
        want, got = both(k.wrapped_kernel[(ascdsl.cdiv(total, 32),)], flat, np.zeros(total, dtype.np), total, period,
                         BLOCK=32)
        expect = np.zeros(total, dtype.np)
        expect[(np.arange(total) * 7) % total] = flat[np.arange(total) % period]
        if total % 7:  # 7 coprime with the total: a permutation, so no two lanes write one element
            np.testing.assert_array_equal(want[1], expect)
        np.testing.assert_array_equal(got[1].view(np.uint8), want[1].view(np.uint8))
        want, got = both(k.repeated_rows_kernel[(1,)], data(2 * m, dtype, RNG), np.zeros((m, n), dtype.np), M=m, N=n)
        np.testing.assert_array_equal(want[1], np.repeat(want[0][::2, None], n, axis=1))
        np.testing.assert_array_equal(got[1].view(np.uint8), want[1].view(np.uint8))
    each(check, [(9, 5, 4, 8), (30, 16, 8, 16)])


def test_a_column_masked_along_its_one_column_bit_exact():
    """``[C, 1]`` blocks whose mask also bounds the column (a program past ``D`` copies nothing): was
    "masking the size-1 dim of a strided column" (a cross-entropy kernel with BLOCK_D = 1)."""
    x = data((10, 3), F32, RNG)
    want, got = both(k.column_per_program_kernel[(5,)], x, np.zeros_like(x), 10, 3, BLOCK_C=16, BLOCK_D=1)
    np.testing.assert_array_equal(want[1], x * 2)
    np.testing.assert_array_equal(got[1], want[1])


def test_programs_storing_equal_values_over_each_other_run_and_unequal_ones_are_located():
    x = data(64, F32, RNG)
    want, got = both(k.every_program_stores_all_kernel[(2,)], x, np.zeros(64, np.float32), N=64, SHIFT=0)
    np.testing.assert_array_equal(got[1], want[1])
    with pytest.raises(KernelSimError) as info:  # each program its own values: a race on a device
        k.every_program_stores_all_kernel[(2,)](x, np.zeros(64, np.float32), N=64, SHIFT=1, backend="sim")
    assert "tests/backend/mem_kernels.py:" in str(info.value).splitlines()[0]
    assert "with another value (blocks must write disjoint GM)" in str(info.value)
