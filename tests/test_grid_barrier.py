"""Grid barriers (``triton.language.extra.cann.extension.sync_block_all``): a row's reduction split over programs,
the partial sums exchanged through a GM scratch buffer between two barriers' sides, equals NumPy on the
interpreter and the interpreter on the simulator; the barrier is ``SyncAll()`` between the segments in the
generated code, which compiles against the real CANN headers. Two barriers and a barrier in a uniform loop
work alike. Each refusal is located at the barrier's line: an unsupported mode or event id, a barrier under
control flow on the program id (compile time) or on loaded values that differ per program (the interpreter),
a launch of more programs than vector cores on the device backends; batching and persistent programs leave
a kernel with a barrier as it is, the explanation naming the barrier's line."""
from __future__ import annotations

import io
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
import ascdsl.language.extra.cann.extension as al
from ascdsl import interpreter
from ascdsl.backend.batching.batchrun import explain
from ascdsl.backend.plan import tiling
from ascdsl.backend.render.ascendc import compile_variant, kernel_source
from ascdsl.errors import display_path
from ascdsl.ir import Module, Op, walk
from ascdsl.ir.text import dump, parse
from ascdsl.passes.batching import form, refusal
from ascdsl.passes.persistent import persistent_programs
from ascdsl.passes.reuse import reused_loads
from ascdsl.platforms import get_platform
from tests.backend.helpers import CANN, assert_type_checks, both

pytestmark = pytest.mark.usefixtures("prebuilt_module")  # the simulator kernels in few g++ runs

PLATFORM = get_platform("Ascend910B3")
LINES = Path(__file__).read_text().splitlines()
ROOT = Path(__file__).resolve().parents[1]
RNG = np.random.default_rng(24)


def line(marker: str) -> int:
    """The line marked ``# B:marker``."""
    (n,) = [n for n, text in enumerate(LINES, 1) if text.rstrip().endswith(f"# B:{marker}")]
    return n


def located(error: ascdsl.CompilationError, marker: str, *fragments: str) -> None:
    """``error`` is at the marked line of this file and mentions ``fragments``."""
    text = str(error)
    assert text.startswith(f"{display_path(__file__)}:{line(marker)}:"), text
    assert (Path(error.loc.file).name, error.loc.line) == ("test_grid_barrier.py", line(marker))
    for fragment in fragments:
        assert fragment in text, text


# ----------------------------------------------------------------------------- kernels


@ascdsl.jit
def split_row_grad(y_ptr, dy_ptr, out_ptr, part_ptr, n_cols, PARTS: tl.constexpr, BLOCK: tl.constexpr,
                   SYNC: tl.constexpr = True):
    """softmax_grad's row split over PARTS programs: each sums its part of dy * y into ``part[row, part]``,
    then, past the barrier (none with ``SYNC=False``: a race), reads its row's PARTS partial sums and finishes
    ``y * (dy - sum)`` on its part."""
    pid = tl.program_id(0)
    row = pid // PARTS
    part = pid % PARTS
    cols = part * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    y = tl.load(y_ptr + row * n_cols + cols, mask=mask, other=0.0)
    dy = tl.load(dy_ptr + row * n_cols + cols, mask=mask, other=0.0)
    tl.store(part_ptr + row * PARTS + part, tl.sum(y * dy, axis=0))
    if SYNC:
        al.sync_block_all("all_vector", 0)  # B:grad
    total = tl.sum(tl.load(part_ptr + row * PARTS + tl.arange(0, PARTS)), axis=0)  # B:race
    tl.store(out_ptr + row * n_cols + cols, y * (dy - total), mask=mask)


@ascdsl.jit
def split_row_norm(x_ptr, out_ptr, part_ptr, n_cols, PARTS: tl.constexpr, BLOCK: tl.constexpr,
                   SQUARES: tl.constexpr = 0, LAST_SYNC: tl.constexpr = True):
    """A row centred and scaled by its norm, the row split over PARTS programs: two barriers (the mean's partial
    sums, then the centred squares', stored ``SQUARES`` elements into ``part``). ``LAST_SYNC=False`` leaves out the
    last barrier: the first exchange is synchronised, the second is not."""
    pid = tl.program_id(0)
    row = pid // PARTS
    part = pid % PARTS
    cols = part * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    tl.store(part_ptr + row * PARTS + part, tl.sum(x, axis=0))
    tl.extra.cann.extension.sync_block_all("all", 1)
    mean = tl.sum(tl.load(part_ptr + row * PARTS + tl.arange(0, PARTS)), axis=0) / n_cols
    xc = tl.where(mask, x - mean, 0.0)
    al.sync_block_all("all_vector", 2)  # every program has read the sums before they are overwritten
    tl.store(part_ptr + SQUARES + row * PARTS + part, tl.sum(xc * xc, axis=0))
    if LAST_SYNC:
        al.sync_block_all("all_vector", 3)
    squares = tl.sum(tl.load(part_ptr + SQUARES + row * PARTS + tl.arange(0, PARTS)), axis=0)  # B:second
    tl.store(out_ptr + row * n_cols + cols, xc / tl.sqrt(squares), mask=mask)


@ascdsl.jit
def rotate_sums(x_ptr, next_ptr, steps, BLOCK: tl.constexpr):
    """``steps`` rounds of ``x[p] += x[(p + 1) % programs]`` over the programs, a barrier on each side of the
    exchange (a uniform loop: its trip count is a scalar argument)."""
    pid = tl.program_id(0)
    n = tl.num_programs(0)
    lanes = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + pid * BLOCK + lanes)
    for _ in range(steps):
        tl.store(next_ptr + pid * BLOCK + lanes, x)
        al.sync_block_all("all_vector", 0)
        x = x + tl.load(next_ptr + ((pid + 1) % n) * BLOCK + lanes)
        al.sync_block_all("all_vector", 0)
    tl.store(x_ptr + pid * BLOCK + lanes, x)


@ascdsl.jit
def loaded_trips(trips_ptr, out_ptr, TICKETS: tl.constexpr):
    """A barrier in a loop of a loaded trip count: the same in every program (one load of one address), or, with
    TICKETS, a count each program takes from an atomic counter (which no compile-time rule sees differ)."""
    pid = tl.program_id(0)
    trips = tl.atomic_add(trips_ptr, 1) if TICKETS else tl.load(trips_ptr)
    acc = 0.0
    for _ in range(trips):
        al.sync_block_all("all_vector", 0)  # B:loaded
        acc += 1.0
    tl.store(out_ptr + pid, acc)


def _grad_args(m, n, parts):
    y, dy = (RNG.standard_normal((m, n)).astype(np.float32) for _ in range(2))
    return [y, dy, np.zeros((m, n), np.float32), np.zeros((m, parts), np.float32), np.int32(n)]


def _grad_want(y, dy):
    return y * (dy - (y.astype(np.float64) * dy).sum(axis=1, keepdims=True)).astype(np.float32)


def _kernel(jit, args, **constexprs):
    return jit.specialize(*args, **constexprs).kernels[0]


# ----------------------------------------------------------------------------- semantics


@pytest.mark.parametrize("m,n,parts,block", [(5, 100, 4, 32), (3, 1000, 8, 128), (2, 7, 2, 8)])
def test_a_row_split_over_programs_equals_numpy(m, n, parts, block):
    """Each program sums its part of the row before the barrier and reads the row's sums after it."""
    args = _grad_args(m, n, parts)
    split_row_grad[(m * parts,)](*args, PARTS=parts, BLOCK=block)
    np.testing.assert_allclose(args[2], _grad_want(args[0], args[1]), rtol=1e-5, atol=1e-4)


def test_two_barriers_equal_numpy():
    m, n, parts = 3, 200, 4
    x = RNG.standard_normal((m, n)).astype(np.float32)
    out = np.zeros_like(x)
    split_row_norm[(m * parts,)](x, out, np.zeros((m, parts), np.float32), np.int32(n), PARTS=parts, BLOCK=64)
    xc = x - x.mean(axis=1, keepdims=True)
    np.testing.assert_allclose(out, xc / np.sqrt((xc * xc).sum(axis=1, keepdims=True)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("programs,steps", [(6, 3), (5, 0), (1, 2)])
def test_a_barrier_in_a_uniform_loop_exchanges_every_round(programs, steps):
    x = RNG.standard_normal((programs, 16)).astype(np.float32)
    want = x.copy()
    for _ in range(steps):
        want = want + np.roll(want, -1, axis=0)
    rotate_sums[(programs,)](x, np.zeros_like(x), np.int32(steps), BLOCK=16)
    np.testing.assert_array_equal(x, want)


def test_every_program_runs_in_one_chunk(monkeypatch):
    """The interpreter runs programs in chunks; a kernel with a barrier runs all of them in one (else the later
    chunks' partial sums would be read before they were stored)."""
    monkeypatch.setattr(interpreter.state, "CHUNK_ELEMENTS", 64)
    args = _grad_args(6, 200, 4)
    split_row_grad[(24,)](*args, PARTS=4, BLOCK=64)
    np.testing.assert_allclose(args[2], _grad_want(args[0], args[1]), rtol=1e-5, atol=1e-4)


def test_a_load_past_the_barrier_is_not_the_one_before():
    """reused_loads does not replace a load after a barrier by the same load before it: other programs stored
    there in between."""
    @ascdsl.jit
    def twice(x_ptr, out_ptr):
        pid = tl.program_id(0)
        a = tl.load(x_ptr)
        tl.store(x_ptr + pid + 1, a + pid)
        al.sync_block_all("all_vector", 0)
        b = tl.load(x_ptr + 2)
        c = tl.load(x_ptr + 2)
        tl.store(out_ptr + pid, b + c)

    kernel = _kernel(twice, [np.zeros(8, np.float32), np.zeros(4, np.float32)])
    loads = sum(i.op is Op.LOAD for i in walk(reused_loads(kernel).body))
    assert loads == 2  # the load past the barrier stays, its twin is reused


def test_the_barrier_is_an_instruction_that_prints_and_parses():
    kernel = _kernel(split_row_grad, _grad_args(4, 64, 2), PARTS=2, BLOCK=32)
    (barrier,) = [i for i in walk(kernel.body) if i.op is Op.SYNC_ALL]
    assert (barrier.results, barrier.operands, barrier.attrs) == ((), (), (("mode", "all_vector"),))
    assert barrier.loc.line == line("grad")
    text = dump(Module((kernel,)))
    assert 'sync_all {mode = "all_vector"}' in text and parse(text) == Module((kernel,))


def test_the_builtin_is_the_triton_extension_s(tmp_path):
    """``import triton.language.extra.cann.extension as al`` (the Ascend Triton compiler's spelling) under the
    alias runs a Triton kernel with its barrier; outside a kernel the builtin is an error."""
    assert tl.extra.cann.extension.sync_block_all is al.sync_block_all
    with pytest.raises(ascdsl.Error, match="inside an @ascdsl.jit function"):
        al.sync_block_all("all_vector", 0)
    script = tmp_path / "triton_barrier.py"
    script.write_text(textwrap.dedent("""
        import ascdsl.triton_alias
        ascdsl.triton_alias.install()
        import numpy as np
        import triton
        import triton.language as tl
        import triton.language.extra.cann.extension as al

        @triton.jit
        def rotate(x_ptr, y_ptr):
            pid = tl.program_id(0)
            tl.store(x_ptr + pid, pid + 1.0)
            al.sync_block_all("all_vector", 0)
            tl.store(y_ptr + pid, tl.load(x_ptr + (pid + 1) % tl.num_programs(0)))

        y = np.zeros(4, np.float32)
        rotate[(4,)](np.zeros(4, np.float32), y)
        print(y.tolist())
    """))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[2.0, 3.0, 4.0, 1.0]"


# ----------------------------------------------------------------------------- refusals


@pytest.mark.parametrize("mode,event_id,fragment", [
    ("all_cube", 0, "mode 'all_cube' is not supported"),
    ("all_sub_vector", 0, "'all_vector' and 'all'"),
    ("all_vector", 16, "must be in 0..15, got 16"),
    ("all_vector", -1, "must be in 0..15"),
])
def test_an_unsupported_mode_or_event_id_is_located(mode, event_id, fragment):
    @ascdsl.jit
    def bad(x_ptr, MODE: tl.constexpr, EVENT: tl.constexpr):
        tl.store(x_ptr + tl.program_id(0), 1.0)
        al.sync_block_all(MODE, EVENT)  # B:mode

    with pytest.raises(ascdsl.CompilationError) as info:
        bad.specialize(np.zeros(4, np.float32), MODE=mode, EVENT=event_id)
    located(info.value, "mode", fragment)


def test_a_runtime_event_id_is_located():
    @ascdsl.jit
    def bad(x_ptr, event):
        al.sync_block_all("all_vector", event)  # B:runtime

    with pytest.raises(ascdsl.CompilationError) as info:
        bad.specialize(np.zeros(4, np.float32), 3)
    located(info.value, "runtime", "must be a constexpr int")


@ascdsl.jit
def under_branch(x_ptr):
    pid = tl.program_id(0)
    if pid < 2:
        al.sync_block_all("all_vector", 0)  # B:branch
    tl.store(x_ptr + pid, 1.0)


@ascdsl.jit
def in_loop(x_ptr):
    pid = tl.program_id(0)
    for _ in range(pid):
        al.sync_block_all("all_vector", 0)  # B:loop
    tl.store(x_ptr + pid, 1.0)


@ascdsl.jit
def after_return(x_ptr, n):
    pid = tl.program_id(0)
    if pid >= n:
        return
    tl.store(x_ptr + pid, 1.0)
    al.sync_block_all("all_vector", 0)  # B:return


@pytest.mark.parametrize("kernel,marker,fragment", [
    (under_branch, "branch", "in a branch whose condition depends on the program id"),
    (in_loop, "loop", "in a loop whose bounds depend on the program id"),
    (after_return, "return", "in a branch whose condition depends on the program id"),
])
def test_a_barrier_under_program_dependent_control_flow_is_located(kernel, marker, fragment):
    args = [np.zeros(8, np.float32)] + ([np.int32(4)] if kernel is after_return else [])
    with pytest.raises(ascdsl.CompilationError) as info:
        kernel.specialize(*args)
    located(info.value, marker, fragment, "wait for ever")


def test_a_barrier_under_loaded_control_flow_is_checked_where_it_runs():
    """The same loaded trip count in every program runs; trip counts that differ are an error at the barrier."""
    out = np.zeros(4, np.float32)
    loaded_trips[(4,)](np.array([3], np.int32), out, TICKETS=False)
    np.testing.assert_array_equal(out, np.full(4, 3.0, np.float32))
    with pytest.raises(ascdsl.CompilationError) as info:
        loaded_trips[(4,)](np.array([1], np.int32), out, TICKETS=True)  # trips 1, 2, 3, 4
    located(info.value, "loaded", "program (1, 0, 0) reaches this grid barrier and program (0, 0, 0) does not")


def test_a_grid_over_the_vector_cores_is_located_on_the_simulator():
    """On the device every program of a launch with a barrier must hold a core at once: 41 programs on the 40
    vector cores of an Ascend910B3 are refused before anything is built; the interpreter runs them."""
    args = _grad_args(41, 16, 1)
    with pytest.raises(ascdsl.CompilationError) as info:
        split_row_grad[(41,)](*args, PARTS=1, BLOCK=16, backend="sim")
    located(info.value, "grad", "41 programs with a grid barrier", "40 vector cores", "at most 40 programs")
    split_row_grad[(41,)](*args, PARTS=1, BLOCK=16)
    np.testing.assert_allclose(args[2], _grad_want(args[0], args[1]), rtol=1e-5, atol=1e-4)


def test_batching_and_persistent_programs_leave_the_kernel_as_it_is():
    kernel = _kernel(split_row_grad, _grad_args(4, 64, 2), PARTS=2, BLOCK=32)
    why = refusal(kernel)
    assert why is not None and why.loc.line == line("grad") and "grid barrier" in why.reason
    assert form(kernel) is None and persistent_programs(kernel) is kernel
    text = explain(kernel, 8, PLATFORM)
    assert "program batching does not apply: a grid barrier" in text and "al.sync_block_all(" in text


def test_a_1d_elementwise_kernel_with_a_barrier_is_not_the_flat_form():
    @ascdsl.jit
    def shifted(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs))
        al.sync_block_all("all_vector", 0)  # B:flat
        tl.store(x_ptr + offs, tl.load(y_ptr + offs) + 1.0)

    kernel = _kernel(shifted, [np.zeros(64, np.float32), np.zeros(64, np.float32)], BLOCK=16)
    assert form(kernel) is None and refusal(kernel).loc.line == line("flat")


# ----------------------------------------------------------------------------- generated code


def test_the_barrier_is_sync_all_between_the_segments():
    """``SyncAll();`` (CANN's all-AIV hardware barrier: PIPE_ALL, then the FFTS sync) in Process after the stores
    before it (CopyOut) and before the loads after it (CopyIn), at the barrier's line."""
    kernel = _kernel(split_row_grad, _grad_args(4, 64, 2), PARTS=2, BLOCK=32)
    text = kernel_source("grad", tiling.variants([kernel]), tiling.layout("GradTiling", [kernel]), PLATFORM)
    process = [s.strip() for s in text.split("void Process()")[1].split("private:")[0].splitlines()]
    at = next(k for k, s in enumerate(process) if s.startswith("SyncAll();"))
    assert process[at].endswith(f"test_grid_barrier.py:{line('grad')}")
    assert process[at - 1].startswith("CopyOut1(") and process[at + 1].startswith("CopyIn2(")
    assert sum(s.startswith("SyncAll();") for s in process) == 1


@pytest.mark.parametrize("m,n,parts,block", [(5, 100, 4, 32), (4, 1000, 8, 128), (40, 16, 1, 16)])
def test_the_simulator_equals_the_interpreter(m, n, parts, block):
    """The simulator runs the launch's blocks to the barrier, each then past it (its front end compiles the
    generated file with -Wall -Wextra -Werror first)."""
    interp, simu = both(split_row_grad[(m * parts,)], *_grad_args(m, n, parts), PARTS=parts, BLOCK=block)
    np.testing.assert_allclose(simu[3], interp[3], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(simu[2], interp[2], rtol=1e-6, atol=1e-5)


def test_two_barriers_and_a_barrier_in_a_loop_on_the_simulator():
    x = RNG.standard_normal((3, 200)).astype(np.float32)
    interp, simu = both(split_row_norm[(12,)], x, np.zeros_like(x), np.zeros((3, 4), np.float32), np.int32(200),
                        PARTS=4, BLOCK=64)
    np.testing.assert_allclose(simu[1], interp[1], rtol=1e-5, atol=1e-6)
    x = RNG.standard_normal((6, 16)).astype(np.float32)
    interp, simu = both(rotate_sums[(6,)], x, np.zeros_like(x), np.int32(3), BLOCK=16)
    np.testing.assert_array_equal(simu[0], interp[0])


def test_tiles_read_past_the_barrier_stay_in_their_queue_buffers():
    """y and dy, loaded before the barrier and read after it, are held in their queue buffers (a program a core:
    nothing else would use them), not copied to TBufs."""
    kernel = _kernel(split_row_grad, _grad_args(4, 64, 2), PARTS=2, BLOCK=32)
    k = compile_variant(kernel, PLATFORM)
    assert sorted(b.hint for b in k.held) == ["dyIn", "yIn"]
    text = kernel_source("grad", tiling.variants([kernel]), tiling.layout("GradTiling", [kernel]), PLATFORM)
    assert "DataCopy(y, yIn" not in text and "DataCopy(dy, dyIn" not in text


@CANN
def test_the_generated_code_type_checks_against_the_cann_headers(tmp_path):
    kernels = [_kernel(split_row_grad, _grad_args(4, 64, 2), PARTS=2, BLOCK=32),
               _kernel(rotate_sums, [np.zeros((4, 16), np.float32)] * 2 + [np.int32(2)], BLOCK=16)]
    assert_type_checks("grid_barrier", kernels, tmp_path)


def test_a_barrier_in_a_kernel_with_a_product_is_located():
    """The cube lowering (a MIX or cube kernel) renders no grid barrier: a located error; the interpreter runs it."""
    @ascdsl.jit
    def product(a_ptr, c_ptr):
        r = tl.arange(0, 16)
        a = tl.load(a_ptr + r[:, None] * 16 + r[None, :])
        al.sync_block_all("all", 0)  # B:dot
        tl.store(c_ptr + r[:, None] * 16 + r[None, :], tl.dot(a, a))

    a, c = np.ones((16, 16), np.float32), np.zeros((16, 16), np.float32)
    with pytest.raises(ascdsl.CompilationError) as info:
        product[(1,)](a, c, backend="sim")
    located(info.value, "dot", "does not support a grid barrier")
    product[(1,)](a, c)
    np.testing.assert_array_equal(c, np.full((16, 16), 16.0, np.float32))


# ----------------------------------------------------------------------------- races


def test_the_kernel_without_its_barrier_is_a_race_on_the_interpreter():
    """Run in lockstep, the load would read every partial sum; the interpreter refuses it at the load, naming the
    program that stored what another loads."""
    args = _grad_args(3, 100, 4)
    with pytest.raises(ascdsl.CompilationError) as info:
        split_row_grad[(12,)](*args, PARTS=4, BLOCK=32, SYNC=False)
    located(info.value, "race", "program (0, 0, 0) loads element 1 of part_ptr, which program (1, 0, 0) stored "
                                "with no grid barrier between")


@pytest.mark.parametrize("chunk", [64, 1 << 21])
def test_a_store_read_back_by_its_own_program_is_no_race(monkeypatch, chunk):
    """Programs that read back what they stored themselves (in place, in several chunks) run as before."""
    monkeypatch.setattr(interpreter.state, "CHUNK_ELEMENTS", chunk)

    @ascdsl.jit
    def twice_in_place(x_ptr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2.0)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1.0)

    x = RNG.standard_normal(8 * 32).astype(np.float32)
    want = x * 2 + 1
    twice_in_place[(8,)](x, BLOCK=32)
    np.testing.assert_array_equal(x, want)


def test_a_missing_second_barrier_is_a_race():
    """A barrier clears what the programs stored before it: the exchange after it needs its own."""
    x = RNG.standard_normal((3, 200)).astype(np.float32)
    with pytest.raises(ascdsl.CompilationError) as info:
        split_row_norm[(12,)](x, np.zeros_like(x), np.zeros(64, np.float32), np.int32(200), PARTS=4, BLOCK=64,
                              SQUARES=32, LAST_SYNC=False)
    located(info.value, "second", "element 33 of part_ptr, which program (1, 0, 0) stored with no grid barrier")


@ascdsl.jit
def gathered(x_ptr, out_ptr, n):
    """Each program stores its element, then loads another program's through an index (no affine access)."""
    pid = tl.program_id(0)
    tl.store(x_ptr + pid, pid * 1.0)
    lanes = tl.arange(0, 2)
    tl.store(out_ptr + pid * 2 + lanes, tl.load(x_ptr + (pid * 3 + lanes * lanes) % n))  # B:gathered


def test_a_race_through_gathered_addresses_is_found():
    with pytest.raises(ascdsl.CompilationError) as info:
        gathered[(4,)](np.zeros(4, np.float32), np.zeros(8, np.float32), np.int32(4))
    located(info.value, "gathered", "program (0, 0, 0) loads element 1 of x_ptr, which program (1, 0, 0) stored")


def test_the_bench_row_of_the_split_row_form(monkeypatch):
    """``ascdsl bench``'s row of softmax's backward split over programs (ascdsl/bench_batching.py) at a small
    shape: est/floor on the simulator, unbatched for its barrier, its result checked against the interpreter."""
    from ascdsl import bench_batching
    chosen = [(f, ((5, 300),)) for f, _ in bench_batching.forms(ROOT / "ops") if "a grid barrier" in f.name]
    monkeypatch.setattr(bench_batching, "forms", lambda ops_dir: chosen)
    out = io.StringIO()
    (row,) = bench_batching.run(out=out)
    name, shape, p, before, after, est, floor = row
    assert shape == "5x300" and p == "1" and 1.0 <= before == after and est > floor > 0
    assert "unbatched: " in out.getvalue() and "a grid barrier (sync_block_all)" in out.getvalue()
