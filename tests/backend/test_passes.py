"""Every pass keeps results bit-exact on the interpreter and prints/parses round trip; the
memory-access pass rejects what cannot be copied as blocks, with a location."""
import functools
from pathlib import Path

import numpy as np
import pytest

import ascdsl
from ascdsl import interpreter, record
from ascdsl.ir import Op, dump, parse, walk
from ascdsl.op import load_operators
from ascdsl.backend.render.ascendc import compile_variant, planned
from ascdsl.backend.expand.decompose import decompose
from ascdsl.passes import PIPELINE, run_passes
from ascdsl.platforms import get_platform
from tests import test_interpreter_dsl as dsl
from tests.backend import cube_kernels, kernels, mem_kernels
from tests.backend.test_sim_carried_offsets import advanced_rows_kernel, advanced_scalars_kernel

ROOT = Path(__file__).resolve().parents[2]
OPS = {op.name: op for op in load_operators([ROOT / "ops"])}
SOURCES = [*OPS, "dsl"]
"""Where the launches the tests check come from: each operator's cases, and the DSL kernels of
:func:`_dsl_launches`."""


def _dsl_launches() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 33)).astype(np.float32)
    dsl.softmax_kernel[(5,)](np.zeros_like(x), x, 33, 33, 33, BLOCK=64)
    dsl.looped_softmax_kernel[(5,)](np.zeros_like(x), x, 33, 33, BLOCK=16)
    dsl.add_kernel[(3,)](x[0], x[1], np.zeros(33, np.float32), 33, BLOCK=16)
    kernels.unary_kernel[(3,)](x[0], np.zeros(33, np.float32), 33, BLOCK=16)
    ints = rng.integers(-9, 9, 33).astype(np.float32)  # atomics: exact in any order
    mem_kernels.atomic_kernel[(3,)](ints, *(np.zeros(16, np.float32) for _ in range(3)), 33, BLOCK=16)
    mem_kernels.atomic_scalar_kernel[(3,)](ints, np.zeros(1, np.float32), np.zeros(4, np.float32), 33, BLOCK=16)
    mem_kernels.strided_load_kernel[(3,)](rng.standard_normal(200).astype(np.float32), np.zeros(33, np.float32),
                                          33, 3, BLOCK=16, STEP=5)
    mem_kernels.column_load_kernel[(2,)](x, np.zeros((33, 5), np.float32), 5, 33, 33, ROWS=16, COLS=8)
    idx = rng.integers(0, 33, 33).astype(np.int32)
    mem_kernels.gather_kernel[(3,)](x[0], idx, np.zeros(33, np.float32), 33, BLOCK=16)
    mem_kernels.scatter_kernel[(3,)](ints, rng.permutation(33).astype(np.int32), idx % 8, np.zeros(33, np.float32),
                                     np.zeros(8, np.float32), 33, BLOCK=16)
    mem_kernels.strided_store_kernel[(4,)](ints[:32], np.zeros(90, np.float32), np.zeros(128, np.float32),
                                           np.zeros(16, np.float32), 30, 3, M=4, N=8)
    advanced_scalars_kernel[(2,)](x.ravel()[:128], np.zeros(128, np.float32), 50, 7, BLOCK=32)
    advanced_rows_kernel[(1,)](x, np.zeros((8, 16), np.float32), 5, 33, ROWS=8, COLS=16)
    a, b = (rng.standard_normal(shape).astype(np.float16) for shape in ((40, 70), (70, 50)))
    cube_kernels.matmul_plus_equals[(2, 2)](a, b, np.zeros((40, 50), np.float16), 40, 50, 70, BLOCK_M=32,
                                             BLOCK_N=32, BLOCK_K=32)
    cube_kernels.matmul_bias_relu[(4,)](a, b, b[0], np.zeros((40, 50), np.float16), 40, 50, 70, BLOCK_M=32,
                                        BLOCK_N=32, BLOCK_K=32)


@functools.cache
def launches(source: str) -> tuple[record.LaunchRecord, ...]:
    """The distinct interpreter launches (kernel and grid) of ``source`` (one of :data:`SOURCES`), made
    when a test first asks: the operators' cases lift their kernels, half a minute of CPU on a cold
    cache that every xdist worker paid while collecting when this ran at import."""
    with record.launches() as seen:
        if source in OPS:
            for case in OPS[source].cases:
                OPS[source].entry(*case.inputs(), **dict(case.attrs), backend="interpreter")
        else:
            _dsl_launches()
    unique = {}
    for launch in seen:
        unique.setdefault((launch.kernel, launch.grid), launch)
    return tuple(unique.values())


def all_launches() -> list[record.LaunchRecord]:
    return [launch for source in SOURCES for launch in launches(source)]


def _copy(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


@pytest.mark.parametrize("source", SOURCES)
def test_each_pass_keeps_results_and_round_trips(source):
    platform = get_platform()
    for launch in launches(source):
        kernel = launch.kernel
        name = f"{kernel.name} {dict(kernel.constexprs)} over {launch.grid}"
        want = _copy(launch.args)
        interpreter.run(kernel, want, launch.grid)
        for p in PIPELINE + (decompose,):
            kernel = p(kernel, platform)
            text = dump(kernel)
            (parsed,) = parse(text).kernels
            assert parsed == kernel and dump(parsed) == text, f"{name} after {p.__name__} does not round trip"
            got = _copy(launch.args)
            interpreter.run(parsed, got, launch.grid)
            for a, b in zip(want, got):
                if isinstance(a, np.ndarray):
                    assert a.tobytes() == b.tobytes(), f"{p.__name__} changed the results of {name}"


def test_an_accumulation_written_plus_equals_is_one_accumulating_product():
    (launch,) = [l for l in launches("dsl") if l.kernel.name == "matmul_plus_equals"]
    kernel = run_passes(launch.kernel, get_platform())
    (dot,) = [i for i in walk(kernel.body) if i.op is Op.DOT]
    loop = next(i for i in kernel.body.body if i.op is Op.FOR)
    assert dot.attr("has_acc") and dot.operands[2] == loop.regions[0].args[1]
    assert not any(i.op is Op.ADD and not i.result.type.is_scalar for i in walk(kernel.body))


def test_block_accesses_replace_every_load_and_store():
    for launch in all_launches():
        try:
            kernel = run_passes(launch.kernel)
        except ascdsl.CompilationError:
            continue
        assert " load " not in dump(kernel) and " store " not in dump(kernel)


F32 = ascdsl.language.pointer_type(ascdsl.dtypes.float32)


def test_lanes_copied_alone_at_unit_stride_multiply_by_nothing():
    (k,) = kernels.positive_lanes_kernel.specialize(F32, F32, ascdsl.dtypes.int32, BLOCK=64).kernels
    kernel = run_passes(k)
    defs = {v: i for i in walk(kernel.body) for v in i.results}
    muls = [i for i in walk(kernel.body) if i.op is Op.MUL and not i.result.type.is_scalar]
    ones = [i for i in muls if any(defs.get(v) is not None and defs[v].op is Op.CONST and defs[v].attr("value") == 1
                                   for v in i.operands)]
    assert not ones, dump(kernel)


@pytest.mark.parametrize("kernel, args, why, line", [
    (kernels.tile_other_kernel, (F32, F32, F32), "`other` is a tile; it must be a scalar",
     "tl.load(x_ptr + offs, mask=offs < 4, other=y)"),
    (kernels.reversed_kernel, (F32, F32, ascdsl.dtypes.int32), "the innermost stride is negative",
     "tl.load(x_ptr + (BLOCK - 1 - offs))"),
])
def test_non_block_accesses_are_located_errors(kernel, args, why, line):
    (k,) = kernel.specialize(*args, BLOCK=16).kernels
    with pytest.raises(ascdsl.CompilationError) as info:
        run_passes(k)
    message = str(info.value)
    assert message.startswith("tests/backend/kernels.py:") or "tests/backend/kernels.py:" in message.splitlines()[0]
    assert why in message and line in message and "cannot be copied as blocks" in message


def test_ub_overflow_lists_every_buffer():
    (k,) = dsl.softmax_kernel.specialize(F32, F32, ascdsl.dtypes.int32, ascdsl.dtypes.int32,
                                         ascdsl.dtypes.int32, BLOCK=65536).kernels
    with pytest.raises(ascdsl.CompilationError) as info:
        compile_variant(k, "Ascend910B3")
    message = str(info.value)
    assert "test_interpreter_dsl.py:" in message.splitlines()[0]
    assert "more than the 188416 bytes Ascend910B3 allows" in message
    for name in ("inOutQueueIn", "scalarBuf", "workBuf"):  # the result is computed in the load's queue buffer
        assert name in message
    assert "inOutQueueIn (VECIN, 2 x 262144 B = 524288 B)" in message


def test_queues_too_large_to_double_buffer_are_single_buffered():
    """BLOCK=32768 needs 266272 bytes double-buffered (over the budget) and 135200 single-buffered: the
    kernel compiles with one buffer per queue, while the planner's choice stays double-buffered."""
    i32 = ascdsl.dtypes.int32
    (k,) = dsl.softmax_kernel.specialize(F32, F32, i32, i32, i32, BLOCK=32768).kernels
    assert planned(k, "Ascend910B3").plan.total_bytes == 266272
    plan = compile_variant(k, "Ascend910B3").plan
    assert plan.total_bytes == 135200 and [s.num for s in plan.slots] == [1, 1, 1]
    x = np.random.default_rng(0).standard_normal((2, 20000)).astype(np.float32)
    want, got = (np.zeros_like(x) for _ in range(2))
    for out, backend in ((want, "interpreter"), (got, "sim")):
        dsl.softmax_kernel[(2,)](out, x, 20000, 20000, 20000, BLOCK=32768, backend=backend)
    ascdsl.testing.assert_close(got, want, ascdsl.dtypes.float32)


def test_planner_largest_block_and_footprint():
    from ascdsl import planner
    i32 = ascdsl.dtypes.int32
    best = planner.largest_block(dsl.softmax_kernel, "BLOCK", (1024, 4096, 8192, 16384, 32768), F32, F32, i32, i32, i32)
    assert best == 16384  # 32768 needs 266272 bytes (test_ub_overflow_lists_every_buffer)
    a, b = planner.footprint(dsl.softmax_kernel, "BLOCK", F32, F32, i32, i32, i32)
    for block in (2048, 8192):
        (k,) = dsl.softmax_kernel.specialize(F32, F32, i32, i32, i32, BLOCK=block).kernels
        assert planned(k, "Ascend910B3").plan.total_bytes == a * block + b


def test_a_broadcast_with_two_run_time_schedules_writes_over_its_dying_source_in_both():
    """The general form picks between walking each row and column chunks at run time (an If): the
    result still shares its source's slot, so the runtime-extent tiles are as large as the static ones."""
    from ascdsl import dtypes
    from ascdsl.backend import kir
    from ascdsl.planner import arg_types
    from ops import log_softmax_grad as lsm

    d = ascdsl.TensorDesc((64, 65536), dtypes.float16)
    f = lsm.reduce_tail_recompute_kernel
    k = planned(f.specialize(*arg_types(f, (d, d, d)), BLOCK_R=1024).kernels[0], get_platform("Ascend910B3"),
                general=True)
    calls = [s for st in k.stages for s in kir.walk(st.body) if isinstance(s, kir.Call)]
    (exp,) = [c for c in calls if c.api == "Exp"]
    products = [c for c in calls if c.api == "Mul" and any(r.buf == exp.dst.buf for r in c.srcs)]
    assert len(products) == 3  # walking the row's whole repeats, its partial repeat, column chunks
    assert {k.plan.slot(c.dst.buf).index for c in products} == {k.plan.slot(exp.dst.buf).index}
