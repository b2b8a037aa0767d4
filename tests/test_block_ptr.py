"""Block pointers (tl.make_block_ptr / tl.advance): the IR they lower to, interpreter results
against NumPy (tails on each dim, zero/NaN padding, loops, if/else), located errors, and the same
kernels on the simulator against the interpreter (one batched g++ build; the backend has no `if`
yet, so the if/else joins run on the interpreter only)."""
from pathlib import Path

import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl.backend import simrun
from ascdsl.errors import display_path
from ascdsl.ir import Op, walk

pytestmark = pytest.mark.usefixtures("prebuilt_module")  # the simulator kernels in few g++ runs

P = tl.pointer_type
F32, I32 = P(tl.float32), P(tl.int32)
LINES = Path(__file__).read_text().splitlines()
RNG = np.random.default_rng(11)


# ----------------------------------------------------------------------------- kernels

@ascdsl.jit
def copy2d(x_ptr, out_ptr, m, n, sx, mo, no, so, BM: tl.constexpr, BN: tl.constexpr,
           LOAD_CHECK: tl.constexpr, PAD: tl.constexpr, STORE_CHECK: tl.constexpr):
    offsets = (tl.program_id(0) * BM, tl.program_id(1) * BN)
    src = tl.make_block_ptr(x_ptr, (m, n), (sx, 1), offsets, (BM, BN), (1, 0))
    dst = tl.make_block_ptr(out_ptr, (mo, no), (so, 1), offsets, (BM, BN), (1, 0))
    tl.store(dst, tl.load(src, boundary_check=LOAD_CHECK, padding_option=PAD), boundary_check=STORE_CHECK)


@ascdsl.jit
def scale1d(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    start = tl.program_id(0) * BLOCK
    x = tl.load(tl.make_block_ptr(x_ptr, (n,), (1,), (start,), (BLOCK,), (0,)), boundary_check=(0,))
    tl.store(tl.make_block_ptr(out_ptr, (n,), (1,), (start,), (BLOCK,), (0,)), x * 3.0, boundary_check=0)


@ascdsl.jit
def row_sum(x_ptr, out_ptr, m, n, stride, BM: tl.constexpr, BN: tl.constexpr):
    """Each program sums BM rows, walking the columns with tl.advance."""
    block = tl.make_block_ptr(x_ptr, (m, n), (stride, 1), (tl.program_id(0) * BM, 0), (BM, BN), (1, 0))
    acc = tl.zeros((BM,), tl.float32)
    for _ in range(0, n, BN):
        acc += tl.sum(tl.load(block, boundary_check=(0, 1), padding_option="zero"), axis=1)
        block = tl.advance(block, (0, BN))
    out = tl.make_block_ptr(out_ptr, (m,), (1,), (tl.program_id(0) * BM,), (BM,), (0,))
    tl.store(out, acc, boundary_check=(0,))


@ascdsl.jit
def tiled_copy(x_ptr, out_ptr, m, n, BM: tl.constexpr, BN: tl.constexpr):
    """Each program copies a column strip, walking down the rows with two carried block pointers."""
    src = tl.make_block_ptr(x_ptr, (m, n), (n, 1), (0, tl.program_id(0) * BN), (BM, BN), (1, 0))
    dst = tl.make_block_ptr(out_ptr, (m, n), (n, 1), (0, tl.program_id(0) * BN), (BM, BN), (1, 0))
    for _ in range(tl.cdiv(m, BM)):
        tl.store(dst, tl.load(src, boundary_check=(0, 1)) + 1.0, boundary_check=(0, 1))
        src = tl.advance(src, (BM, 0))
        dst = tl.advance(dst, (BM, 0))


@ascdsl.jit
def pick(x_ptr, out_ptr, n, which, BLOCK: tl.constexpr):
    """Block 0, 1 or 2 of x, chosen at run time through if/else joins of a block pointer."""
    block = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (BLOCK,), (0,))
    if which == 1:
        block = tl.advance(block, (BLOCK,))
    elif which == 2:
        block = tl.advance(block, (2 * BLOCK,))
    else:
        block = tl.advance(block, (0,))
    x = tl.load(block, boundary_check=(0,), padding_option="nan")
    tl.store(tl.make_block_ptr(out_ptr, (BLOCK,), (1,), (0,), (BLOCK,), (0,)), x)


@ascdsl.jit
def after_loop(x_ptr, out_ptr, m, n, BM: tl.constexpr):
    """After the loop the block pointer has moved down once per iteration (here m // BM - 1 times)."""
    block = tl.make_block_ptr(x_ptr, (m, n), (n, 1), (0, 0), (BM, 1), (1, 0))
    for _ in range(BM, m, BM):
        block = tl.advance(block, (BM, 0))
    out = tl.make_block_ptr(out_ptr, (m, 1), (1, 1), (0, 0), (BM, 1), (1, 0))
    tl.store(out, tl.load(block))


@ascdsl.jit
def runtime_advance(x_ptr, out_ptr, n, step):
    """Every `step`-th block of 4, compacted: the advance is a runtime amount, so it is carried."""
    src = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (4,), (0,))
    dst = tl.make_block_ptr(out_ptr, (n,), (1,), (0,), (4,), (0,))
    for _ in range(tl.cdiv(n, 4 * step)):
        tl.store(dst, tl.load(src, boundary_check=(0,)), boundary_check=(0,))
        src = tl.advance(src, (4 * step,))
        dst = tl.advance(dst, (4,))


def _data(shape, dtype=np.float32):
    return (RNG.standard_normal(shape) * 3).astype(dtype)


def _padded(x, shape, fill):
    out = np.full(shape, fill, x.dtype)
    out[tuple(slice(0, s) for s in x.shape)] = x
    return out


# ----------------------------------------------------------------------------- IR

def _kernel(fn, *args, **constexprs):
    (kernel,) = fn.specialize(*args, **constexprs).kernels
    return kernel


def test_a_checked_load_lowers_to_pointer_arithmetic_and_an_index_mask():
    k = _kernel(copy2d, F32, F32, 5, 7, 9, 8, 8, 8, BM=4, BN=4, LOAD_CHECK=(0, 1), PAD="zero", STORE_CHECK=())
    ops = [i.op for i in walk(k.body)]
    load = ops.index(Op.LOAD)
    assert ops[:load + 1] == [
        Op.PROGRAM_ID, Op.CONST, Op.MUL, Op.PROGRAM_ID, Op.CONST, Op.MUL,  # offsets
        Op.ARANGE, Op.ADD, Op.EXPAND_DIMS, Op.LT, Op.CONST, Op.GE, Op.AND,  # rows: 0 <= (off0 + i)[:, None] < m
        Op.MUL,  # * sx
        Op.ARANGE, Op.ADD, Op.EXPAND_DIMS, Op.LT, Op.CONST, Op.GE, Op.AND,  # cols: 0 <= (off1 + j)[None, :] < n
        Op.BROADCAST, Op.BROADCAST, Op.AND, Op.BROADCAST, Op.BROADCAST, Op.ADD, Op.PTR_ADD, Op.CONST, Op.LOAD]
    instr = [i for i in walk(k.body) if i.op == Op.LOAD][0]
    assert instr.attrs == (("has_mask", True), ("has_other", True))
    assert instr.operands[2].type.is_scalar and instr.result.type.shape == (4, 4)
    store = [i for i in walk(k.body) if i.op == Op.STORE][0]
    assert store.attrs == (("has_mask", False),) and Op.LT not in ops[load:]


def test_without_boundary_check_there_is_no_mask_and_nan_padding_is_a_nan_constant():
    k = _kernel(copy2d, F32, F32, 5, 7, 9, 8, 8, 8, BM=4, BN=4, LOAD_CHECK=(), PAD="nan", STORE_CHECK=(1,))
    load, store = [i for i in walk(k.body) if i.op in (Op.LOAD, Op.STORE)]
    assert load.attrs == (("has_mask", False), ("has_other", False))
    assert store.attrs == (("has_mask", True),)
    k = _kernel(pick, F32, F32, 10, 1, BLOCK=4)
    (load,) = [i for i in walk(k.body) if i.op == Op.LOAD]
    other = [i for i in walk(k.body) if i.results and i.result is load.operands[2]][0]
    assert np.isnan(other.attr("value"))


def test_constexpr_advances_in_loops_follow_the_induction_variable_and_ifs_join_what_differs():
    k = _kernel(row_sum, F32, F32, 5, 7, 7, BM=4, BN=4)
    (loop,) = [i for i in walk(k.body) if i.op == Op.FOR]
    assert [v.type.shape for v in loop.results] == [(4,)]  # only acc; the column offset is 0 + iv
    k = _kernel(tiled_copy, F32, F32, 5, 7, BM=4, BN=4)
    (loop,) = [i for i in walk(k.body) if i.op == Op.FOR]
    iv = loop.regions[0].args[0]
    assert not loop.results and [i.op for i in loop.regions[0].body if iv in i.operands] == [Op.MUL, Op.MUL]
    k = _kernel(runtime_advance, F32, F32, 7, 3)
    (loop,) = [i for i in walk(k.body) if i.op == Op.FOR]
    assert [v.type.shape for v in loop.results] == [()]  # a runtime step is carried
    k = _kernel(pick, F32, F32, 10, 1, BLOCK=4)
    assert [len(i.results) for i in walk(k.body) if i.op == Op.IF] == [1, 1]


# ----------------------------------------------------------------------------- interpreter

def _copy(x, n_valid, out_shape, grid_blocks, backend="interpreter", **constexprs):
    m, n = x.shape[0], n_valid
    out = np.full(out_shape, -7.0, x.dtype)
    grid = tuple(-(-s // b) for s, b in zip(grid_blocks[0], grid_blocks[1]))
    copy2d[grid](x, out, m, n, x.shape[1], out_shape[0], out_shape[1], out_shape[1], backend=backend,
                 BM=grid_blocks[1][0], BN=grid_blocks[1][1], **constexprs)
    return out


COPIES = [  # (x shape, valid columns, load check, padding, out shape, store check)
    ((5, 9), 7, (0, 1), "zero", (8, 8), ()),  # tails in both dims, runtime row stride 9
    ((5, 8), 8, (0,), "zero", (8, 8), ()),  # a tail in dim 0 only
    ((8, 9), 7, (1,), "nan", (8, 8), ()),  # a tail in dim 1 only
    ((5, 9), 7, (1, 0), "nan", (8, 8), ()),
    ((5, 9), 7, (0, 1), "", (5, 7), (0, 1)),  # masked store: only the 5x7 inside is written
]


@pytest.mark.parametrize("shape, n, load_check, pad, out_shape, store_check", COPIES)
def test_copy_with_tails_matches_numpy(shape, n, load_check, pad, out_shape, store_check):
    x = _data(shape)
    out = _copy(x, n, out_shape, (out_shape, (4, 4)), LOAD_CHECK=load_check, PAD=pad, STORE_CHECK=store_check)
    fill = {"zero": 0.0, "nan": np.nan, "": 0.0}[pad]
    want = _padded(x[:, :n], out_shape, fill)[:out_shape[0], :out_shape[1]]
    np.testing.assert_array_equal(out, want)


def test_unchecked_lanes_past_the_array_are_out_of_bounds():
    with pytest.raises(ascdsl.Error, match="out of bounds|outside"):
        _copy(_data((5, 8)), 8, (8, 8), ((8, 8), (4, 4)), LOAD_CHECK=(1,), PAD="zero", STORE_CHECK=())


def test_1d_int_blocks_with_a_tail():
    x = np.arange(10, dtype=np.int32)
    out = np.zeros(10, np.int32)
    scale1d[(3,)](x, out, 10, BLOCK=4)
    np.testing.assert_array_equal(out, x * 3)


def test_advance_in_a_loop_row_sum_and_tiled_copy():
    x = _data((5, 11))
    out = np.zeros(5, np.float32)
    row_sum[(2,)](x, out, 5, 11, 11, BM=4, BN=4)
    np.testing.assert_allclose(out, x.sum(axis=1), rtol=1e-5, atol=1e-5)
    y = np.zeros_like(x)
    tiled_copy[(3,)](x, y, 5, 11, BM=2, BN=4)
    np.testing.assert_array_equal(y, x + 1.0)


def test_a_runtime_advance_in_a_loop():
    x, out = _data(30), np.zeros(30, np.float32)
    runtime_advance[(1,)](x, out, 30, 2)
    np.testing.assert_array_equal(out[:16], np.concatenate([x[0:4], x[8:12], x[16:20], x[24:28]]))


def test_a_block_pointer_after_a_loop_has_moved_by_every_iteration():
    x = _data((6, 8))
    out = np.zeros(6, np.float32)
    after_loop[(1,)](x, out, 6, 8, BM=2)
    np.testing.assert_array_equal(out[:2], x[4:6, 0])


@pytest.mark.parametrize("which", [0, 1, 2])
def test_if_else_joins_of_a_block_pointer(which):
    x = _data(10)
    out = np.zeros(4, np.float32)
    pick[(1,)](x, out, 10, which, BLOCK=4)
    np.testing.assert_array_equal(out, _padded(x, 12, np.nan)[4 * which:4 * which + 4])


# ----------------------------------------------------------------------------- errors

@ascdsl.jit
def bad_kernel(x_ptr, n, WHAT: tl.constexpr):
    b = tl.make_block_ptr(x_ptr, (n, n), (n, 1), (0, 0), (4, 4), (1, 0))
    if WHAT == "rank":
        tl.make_block_ptr(x_ptr, (n,), (n, 1), (0, 0), (4, 4), (1, 0))  # E:rank
    if WHAT == "block_shape":
        tl.make_block_ptr(x_ptr, (n, n), (n, 1), (0, 0), (n, 4), (1, 0))  # E:block_shape
    if WHAT == "order":
        tl.make_block_ptr(x_ptr, (n, n), (n, 1), (0, 0), (4, 4), (1, 1))  # E:order
    if WHAT == "check":
        tl.load(b, boundary_check=(0, 2))  # E:check
    if WHAT == "padding":
        tl.load(b, boundary_check=(0,), padding_option="inf")  # E:padding
    if WHAT == "mask":
        tl.load(b, mask=tl.arange(0, 4) < n)  # E:mask
    if WHAT == "other":
        tl.load(b, other=0.0)  # E:other
    if WHAT == "arithmetic":
        b = b + 4  # E:arithmetic
    if WHAT == "store_shape":
        tl.store(b, tl.zeros((4, 2), tl.float32))  # E:store_shape
    if WHAT == "plain":
        tl.load(x_ptr + tl.arange(0, 4), boundary_check=(0,))  # E:plain
    if WHAT == "advance":
        tl.advance(b, (4,))  # E:advance
    if WHAT == "loop":
        for i in range(n):
            b = tl.make_block_ptr(x_ptr, (n, n), (1, n), (0, 0), (4, 4), (1, 0))  # E:loop


ERRORS = [  # (marker, column snippet, message fragments)
    ("rank", "tl.make_block_ptr", ["the shape of a block pointer need one entry per dim of block_shape (2), got 1"]),
    ("block_shape", "tl.make_block_ptr", ["block_shape of a block pointer must be a tuple of constexpr ints"]),
    ("order", "tl.make_block_ptr", ["order of a block pointer must be a permutation of 0..1"]),
    ("check", "tl.load", ["boundary_check dim 2 is out of range for a block pointer of rank 2"]),
    ("padding", "tl.load", ["unknown padding_option 'inf'"]),
    ("mask", "tl.load", ["takes no `mask` or `other`"]),
    ("other", "tl.load", ["takes no `mask` or `other`"]),
    ("arithmetic", "b + 4", ["operators are not defined on block pointers", "tl.advance"]),
    ("store_shape", "tl.store", ["does not have the block shape (4, 4)"]),
    ("plain", "tl.load", ["boundary_check and padding_option work only with block pointers"]),
    ("advance", "tl.advance", ["advance offsets of a block pointer need one entry per dim of block_shape (2)"]),
    ("loop", "b =", ["`b` is a block pointer with a different base, shape, strides, block_shape or order after "
                     "an iteration", "may change only its offsets"]),
]


@pytest.mark.parametrize("marker, snippet, fragments", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_are_located(marker, snippet, fragments):
    with pytest.raises(ascdsl.CompilationError) as info:
        bad_kernel.specialize(F32, 8, WHAT=marker)
    (line,) = [n for n, text in enumerate(LINES, 1) if text.rstrip().endswith(f"# E:{marker}")]
    col = LINES[line - 1].index(snippet) + 1
    text = str(info.value)
    first, quoted, caret = text.splitlines()[:3]
    assert first.startswith(f"{display_path(__file__)}:{line}:{col}: error: "), text
    assert quoted.endswith("| " + LINES[line - 1]) and caret.index("^") == quoted.index("| ") + 1 + col
    assert "hint: " in text and "internal" not in text
    for fragment in fragments:
        assert fragment in text, text


def test_nan_padding_of_an_int_block_is_rejected():
    with pytest.raises(ascdsl.CompilationError, match="needs a float block"):
        copy2d.specialize(I32, I32, 5, 7, 9, 8, 8, 8, BM=4, BN=4, LOAD_CHECK=(0,), PAD="nan", STORE_CHECK=())


# ----------------------------------------------------------------------------- simulator

SIM_CASES = {  # name: (launch, arrays and scalars, constexprs); outputs are compared in full
    "copy-zero": (copy2d[(2, 2)], lambda: [_data((5, 9)), np.full((8, 8), -7, np.float32), 5, 7, 9, 8, 8, 8],
                  dict(BM=4, BN=4, LOAD_CHECK=(0, 1), PAD="zero", STORE_CHECK=())),
    "copy-nan-dim1": (copy2d[(2, 2)], lambda: [_data((8, 9)), np.full((8, 8), -7, np.float32), 8, 7, 9, 8, 8, 8],
                      dict(BM=4, BN=4, LOAD_CHECK=(1,), PAD="nan", STORE_CHECK=())),
    "copy-store-check": (copy2d[(2, 3)], lambda: [_data((5, 9)), np.full((5, 7), -7, np.float32), 5, 7, 9, 5, 7, 7],
                         dict(BM=4, BN=4, LOAD_CHECK=(0, 1), PAD="", STORE_CHECK=(0, 1))),
    "row-sum": (row_sum[(2,)], lambda: [_data((5, 11)), np.zeros(5, np.float32), 5, 11, 11], dict(BM=4, BN=8)),
    "tiled-copy": (tiled_copy[(2,)], lambda: [_data((5, 11)), np.zeros((5, 11), np.float32), 5, 11],
                   dict(BM=2, BN=8)),
    "scale1d": (scale1d[(3,)], lambda: [_data(20), np.zeros(20, np.float32), 20], dict(BLOCK=8)),
}


@pytest.fixture(scope="module")
def sim_built():
    """Record every simulator launch of this module first, so they share one batched g++ build."""
    with simrun.recording() as launches:
        for launch, arrays, constexprs in SIM_CASES.values():
            launch(*arrays(), backend="sim", **constexprs)
    simrun.prebuild(launches)


@pytest.mark.parametrize("name", sorted(SIM_CASES))
def test_simulator_matches_the_interpreter(name, sim_built):
    launch, arrays, constexprs = SIM_CASES[name]
    inputs = arrays()
    outs = []
    for backend in ("interpreter", "sim"):
        args = [a.copy() if isinstance(a, np.ndarray) else a for a in inputs]
        launch(*args, backend=backend, **constexprs)
        outs.append(args[1])
    if name == "row-sum":
        np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-5)
    else:
        assert outs[0].tobytes() == outs[1].tobytes()
