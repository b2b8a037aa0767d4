"""Findings of the red-team pass that live in the Ascend C backend (the kernel-IR rewrite fixed
them): each kernel runs on the interpreter, so the simulator must run it too and agree. Those
still open are marked xfail(strict) so they flip when fixed."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from ascdsl.platforms import DEFAULT_PLATFORM, get_platform

pytestmark = pytest.mark.usefixtures("prebuilt_module")  # the simulator kernels in few g++ runs
OPEN = pytest.mark.xfail(strict=True, reason="open: kernel-IR issue")
OPS = Path(__file__).parents[2] / "ops"


def both(kernel, grid, make_args, **constexprs):
    """Run on the interpreter and the simulator; the outputs (every array argument) must agree."""
    ref, got = make_args(), make_args()
    kernel[grid](*ref, **constexprs)
    kernel[grid](*got, **constexprs, backend="sim")
    for r, g in zip(ref, got):
        if isinstance(r, np.ndarray):
            np.testing.assert_allclose(g.astype(np.float64), r.astype(np.float64), rtol=1e-2, atol=1e-2)


@ascdsl.jit
def names_x(x, x_ptr, out_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.load(x_ptr + i) + tl.load(x + i))


@ascdsl.jit
def names_tiling(tiling, out_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.load(tiling + i))


@ascdsl.jit
def names_workspace(workspace, out_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.load(workspace + i))


@ascdsl.jit
def names_null_pointer(NULL, eof, out_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.load(NULL + i) + eof)


@ascdsl.jit
def names_macros(NULL, EOF, out_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.load(NULL + i) + EOF)


def vec(n=64, dtype=np.float32):
    return np.arange(n, dtype=np.float32).astype(dtype)


def test_pointer_x_beside_x_ptr():
    both(names_x, (1,), lambda: (vec(), vec(), np.zeros(64, np.float32)), BLOCK=64)


@pytest.mark.parametrize("kernel", [names_tiling, names_workspace], ids=["tiling", "workspace"])
def test_pointers_named_like_generated_names(kernel):
    both(kernel, (1,), lambda: (vec(), np.zeros(64, np.float32)), BLOCK=64)


def test_parameters_named_like_c_macros():
    """A pointer named NULL and a scalar named EOF (a macro, were it the tiling field ``tiling_.EOF``)
    are renamed in the generated code: the user's names are theirs, and both backends agree."""
    both(names_null_pointer, (1,), lambda: (vec(), 3.0, np.zeros(64, np.float32)), BLOCK=64)
    both(names_macros, (1,), lambda: (vec(), 3.0, np.zeros(64, np.float32)), BLOCK=64)


@ascdsl.jit
def two_loops_one_accumulator(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n, BLOCK):
        acc += tl.load(x_ptr + start + tl.arange(0, BLOCK))
    for start in range(0, n, BLOCK):
        acc += 2.0 * tl.load(x_ptr + start + tl.arange(0, BLOCK))
    tl.store(out_ptr + tl.arange(0, BLOCK), acc)


def test_two_loops_accumulating_into_one_tile():
    both(two_loops_one_accumulator, (1,), lambda: (vec(256), np.zeros(64, np.float32), 256), BLOCK=64)


@ascdsl.jit
def first_block_only(out_ptr, BLOCK: tl.constexpr):
    offs = (tl.program_id(0) + tl.program_id(1) * tl.num_programs(0)) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.full((BLOCK,), 1.0, tl.float32), mask=offs < BLOCK)


def test_a_grid_of_2_to_the_31_programs_counts_programs_in_int64():
    """(65536, 32768) is 2^31 programs: an int32 ``programs_`` wrapped to 0 and ran nothing. Running
    that many programs on the simulator takes hours, so the small grid runs and the big one is read
    off the generated class: the count and the loop over it are int64."""
    out = np.zeros(8, np.float32)
    first_block_only[(3, 2)](out, BLOCK=8, backend="sim")
    assert (out == 1).all()
    from ascdsl.backend.render import ascendc
    from ascdsl.backend.plan.tiling import layout, variants
    kernel = first_block_only.specialize(tl.pointer_type(dtypes.float32), BLOCK=8).kernels[0]
    (variant,) = variants([kernel])
    text = ascendc.kernel_source("first_block_only", [variant], layout("T", [kernel]), DEFAULT_PLATFORM)
    assert "int64_t programs_;" in text and "for (int64_t program = GetBlockIdx(); program < programs_;" in text
    assert "static_cast<int64_t>(tiling.grid0) * tiling.grid1 * tiling.grid2" in text


def load_op(name: str):
    spec = importlib.util.spec_from_file_location(f"ops_{name}", OPS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.OP


@pytest.mark.parametrize("name", ["softmax", "softmax_grad", "log_softmax_grad",
                                  "scale_add"])
def test_shapes_past_int32_offsets_are_refused_or_use_int64(name):
    """[70000, 40000] has 2.8e9 elements: int32 offsets wrap (row 60000 starts at -1894967296). The
    host refuses the shape with the limit named, or every GM offset of the kernel the tiling selects
    is int64_t arithmetic (read off the kernel IR, as tests/backend/test_kir.py does)."""
    from ascdsl import build
    from ascdsl.backend.host import host
    from ascdsl.backend.render import ascendc
    from tests.backend.test_kir import narrow_gm_offsets
    op = load_op(name)
    platform = get_platform(DEFAULT_PLATFORM)
    b = build.plan(op, platform)
    desc = ascdsl.TensorDesc((70000, 40000), dtypes.float16)
    attrs = {a.name: (-1 if a.name == "dim" else a.default) for a in op.attrs}
    got = host.python_tiling(op, b.layout, b.variants, platform, (desc,) * len(op.inputs), attrs)
    if got.status != 0:
        assert "2^31" in got.message or "int32" in got.message or "2147483647" in got.message, got.message
        return
    (v,) = [v for v in b.variants if v.key == dict(got.fields)["tilingKey"]]
    assert narrow_gm_offsets(ascendc.variant_kernel(v, platform)) == []


@ascdsl.jit
def scalar_carried(out_ptr, n):
    acc = 0
    for i in range(0, n):
        acc += 1
    tl.store(out_ptr + tl.arange(0, 8), tl.zeros((8,), tl.int32) + acc)


def test_a_loop_carried_scalar_runs_or_is_a_located_error():
    out = np.zeros(8, np.int32)
    try:
        scalar_carried[(1,)](out, 3, backend="sim")  # was: KeyError in the backend
    except ascdsl.CompilationError as e:
        assert e.loc.file.endswith("test_backend_findings.py")
        return
    assert (out == 3).all()


LOOP_PAST_INT32 = '''
import numpy as np, ascdsl, ascdsl.language as tl

@ascdsl.jit
def count(out_ptr, N: tl.constexpr):
    acc = tl.zeros((8,), tl.float32)
    for i in range(N - 3, N):
        acc += 1.0
    tl.store(out_ptr + tl.arange(0, 8), acc)

out = np.zeros(8, np.float32)
count[(1,)](out, N=2**31 + 5, backend="sim")
assert (out == 3).all(), out
'''


@pytest.mark.slow
def test_constexpr_loop_bounds_past_int32_on_the_simulator(tmp_path):
    """The interpreter counts 3 trips (an i64 loop); the generated loop must not wrap (today: a hang)."""
    import subprocess
    import sys
    script = tmp_path / "loop.py"
    script.write_text(LOOP_PAST_INT32)
    try:
        proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=90)
    except subprocess.TimeoutExpired:
        pytest.fail("the simulator did not finish a 3-trip loop within 90 s")
    assert proc.returncode == 0, proc.stderr[-2000:]


@ascdsl.jit
def bf16_times_runtime_scalar(x_ptr, out_ptr, s, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.load(x_ptr + i) * s)


@ascdsl.jit
def bf16_times_f32_sum(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    total = tl.sum(tl.load(x_ptr + i) * tl.load(y_ptr + i), axis=0)
    tl.store(out_ptr + tl.arange(0, 8), tl.zeros((8,), tl.float32) + total)


def test_a_bf16_tile_times_a_runtime_scalar():
    """Red team: g++ failed with `'workBuf' was not declared`."""
    both(bf16_times_runtime_scalar, (1,), lambda: (vec(128, ml_dtypes.bfloat16),
                                                    np.zeros(128, ml_dtypes.bfloat16), 1.5), BLOCK=128)


def test_a_bf16_times_f32_sum_stays_inside_its_buffers():
    """Red team: `Cast: operand dst touches element 127 of a tensor of 64 elements`."""
    both(bf16_times_f32_sum, (1,), lambda: (vec(128, ml_dtypes.bfloat16) / 64, vec(128) / 64,
                                             np.zeros(8, np.float32)), BLOCK=128)


@ascdsl.jit
def names_like_queues(inQueueX, outQueueOut, xBuf, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(outQueueOut + i, tl.load(inQueueX + i) + tl.load(xBuf + i))


def test_pointers_named_like_generated_queues_and_buffers():
    """Red team: a parameter named ``inQueueX`` collided with a generated queue name."""
    both(names_like_queues, (1,), lambda: (vec(), np.zeros(64, np.float32), vec()), BLOCK=64)


@ascdsl.jit
def sliding_window(x_ptr, out_ptr, step, n, ROWS: tl.constexpr, COLS: tl.constexpr):
    rows, cols = tl.arange(0, ROWS), tl.arange(0, COLS)
    window = tl.load(x_ptr + rows[:, None] * step + cols[None, :], mask=cols[None, :] < n, other=0.0)
    tl.store(out_ptr + rows[:, None] * COLS + cols[None, :], window)


@OPEN
def test_a_load_whose_rows_overlap_in_gm():
    """Fuzz, seed 46 (``ops/log_softmax_grad.py``, ``a = unit | col_blocks``: a negative first column). Row
    ``r`` of the window starts ``r * step`` elements in, ``step`` (2) less than its 12 valid columns: every lane
    is inside ``x``, but the copy's gap between rows, ``step - 12`` elements, is negative, which
    ``DataCopyExtParams``' unsigned ``srcStride`` cannot hold (the rows are read 4 GB apart). The copy must go
    row by row where the rows may overlap (``ascdsl/backend/selection/memory.py``, ``_transfer``/``_params``)."""
    both(sliding_window, (1,), lambda: (vec(64), np.zeros(128, np.float32), 2, 12), ROWS=8, COLS=16)


@ascdsl.jit
def whole_tile_extremes(x_ptr, out_ptr, n, WHAT: tl.constexpr, ROWS: tl.constexpr, COLS: tl.constexpr):
    rows, cols = tl.arange(0, ROWS), tl.arange(0, COLS)
    mask = (rows[:, None] < n) & (cols[None, :] < n)
    x = tl.load(x_ptr + rows[:, None] * n + cols[None, :], mask=mask, other=0.0)
    if WHAT == "keep_dims":  # [1, 1] straight from the reduction
        y = x - tl.max(x, axis=None, keep_dims=True) + tl.argmin(x, axis=None, keep_dims=True).to(tl.float32)
    else:  # [1, 1] from a column of row maxima
        y = x * tl.sum(tl.max(x, axis=1, keep_dims=True), axis=0, keep_dims=True)
    tl.store(out_ptr + rows[:, None] * n + cols[None, :], y, mask=mask)


@pytest.mark.parametrize("what", ["keep_dims", "of_a_column"])
@pytest.mark.parametrize("rows, cols, n", [(16, 16, 64), (4, 128, 100)])
def test_a_one_by_one_tile_broadcast_over_a_tile(what, rows, cols, n):
    """Fuzz, seed 46 (``tests/backend/kernels.py``, ``reduce2d_kernel`` with ``axis=None, keep_dims=True``): a
    ``[1, 1]`` operand of ``x - peak`` was read as an ``[M, 1]`` column (one broadcast block per row: a UB read
    past its one block), and a whole-tile reduction of a 2-D tile with ``keep_dims`` reduced axis 0 only."""
    both(whole_tile_extremes, (1,), lambda: (vec(16384) / 1000, np.zeros(16384, np.float32), n), WHAT=what,
         ROWS=rows, COLS=cols)
