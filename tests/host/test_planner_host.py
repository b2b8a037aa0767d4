"""UB-planner queries in host code: the generated C++ picks the same block as Python on every platform
and dtype, the footprint tables are exact, the chosen block fits and the next candidate does not."""
from __future__ import annotations

import json

import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import build, dtypes, planner
from ascdsl.backend.host import host
from ascdsl.backend.lift import poly
from ascdsl.backend.plan import tiling
from ascdsl.backend.render.ascendc import compile_variant, planned

from .test_tiling_function import PLATFORMS, check_equivalence, desc, load

FLOATS = ("float32", "float16", "bfloat16")


@ascdsl.jit
def square_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, SQUARE: tl.constexpr, WIDTH: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i, mask=i < n, other=0.0).to(tl.float32)
    if SQUARE:
        x = x * x + WIDTH
    tl.store(out_ptr + i, x.to(out_ptr.dtype.element_ty), mask=i < n)


SMALL = tuple(2 ** i for i in range(8, 15))
HUGE = (12288, 14336, 16384)  # on a 910B none fits for float32; the 310P's larger UB takes one


@ascdsl.host
def square_host(x, square, huge, platform):
    if huge:
        block = ascdsl.planner.largest_block(square_kernel, "BLOCK", HUGE, x, x, platform=platform, SQUARE=square,
                                             WIDTH=x.dtype.itemsize)
    else:
        block = ascdsl.planner.largest_block(square_kernel, "BLOCK", SMALL, x, x, platform=platform, SQUARE=square,
                                             WIDTH=x.dtype.itemsize)
    return ascdsl.Launch(square_kernel, grid=(ascdsl.cdiv(x.numel, block),), scalars={"n": x.numel},
                         constexprs={"BLOCK": block, "SQUARE": square, "WIDTH": x.dtype.itemsize})


SQUARE = ascdsl.Operator(name="square", op_type="SquareOp", entry=None, host=square_host, reference=None,
                         inputs=("x",), attrs=(ascdsl.Attr("square", "Bool", False), ascdsl.Attr("huge", "Bool", False)))


def square_kernels():
    return [k for dt in FLOATS for block in SMALL + HUGE for square in (False, True)
            for k in square_kernel.specialize(tl.pointer_type(dtypes.lookup(dt)), tl.pointer_type(dtypes.lookup(dt)),
                                              1, BLOCK=block, SQUARE=square, WIDTH=dtypes.lookup(dt).itemsize).kernels]


def test_planner_hosts_match_python_per_platform(tmp_path):
    sweep = [((desc((n,), dt),), {"square": s, "huge": h}) for dt in FLOATS for s in (False, True)
             for h in (False, True) for n in (1, 5000, 100000)]
    assert check_equivalence(tmp_path, SQUARE, square_kernels(), sweep) == {0, 1}
    f32 = desc((8,))
    answers = {p.name: planner.largest_block(square_kernel, "BLOCK", HUGE, f32, f32, platform=p, SQUARE=False,
                                             WIDTH=4) for p in PLATFORMS if p.name == "Ascend310P3"}
    assert answers == {"Ascend310P3": 14336}  # the 910Bs raise: see the sweep's VALUE_ERROR rows


def test_generated_table_and_selection():
    variants = tiling.variants(square_kernels())
    layout = tiling.layout("SquareOpTilingData", square_kernels())
    fn = host.lower_tiling(SQUARE, layout, variants, PLATFORMS[0], "SquareOpTiling")
    table = "\n".join(fn.constant_lines)
    a, b = planner.footprint(square_kernel, "BLOCK", tl.pointer_type(dtypes.float16), tl.pointer_type(dtypes.float16),
                             samples=SMALL, SQUARE=True, WIDTH=2)
    assert f"{{{a.numerator}, {a.denominator}, {b}}},  // 3: float16, SQUARE=True" in table
    body = "\n".join(fn.body_lines)
    assert "x.dtype == DType::FLOAT16 && square == true" in body
    assert "LargestBlock(" in body and "platform.ubBudget" in body


OP_QUERIES = [  # (op file, kernel, block, other constexprs per dtype, candidates) as the ops' hosts ask
    # (the other tiles are sized by ascdsl.planner.largest_extent from the exact lifted footprint)
    ("softmax_grad", "nz_kernel", "ROWS", lambda d: {}, "NZ_ROWS"),
]


def query(row, dt):
    op, _ = load(row[0])
    scope = op.host.__wrapped__.__globals__
    t = ascdsl.TensorDesc((8,), dtypes.lookup(dt))
    return scope[row[1]], row[2], scope[row[4]], (t, t, t), row[3](t.dtype)


def total(jit_fn, args, constexprs, platform):
    (k,) = jit_fn.specialize(*planner.arg_types(jit_fn, args), **constexprs).kernels
    return compile_variant(k, platform).plan.total_bytes


@pytest.mark.parametrize("row", OP_QUERIES, ids=lambda r: f"{r[1]}-{r[2]}-{r[3](dtypes.float32)}")
@pytest.mark.parametrize("dt", FLOATS)
def test_footprint_is_exact_on_a_fourth_block(row, dt):
    jit_fn, name, candidates, args, consts = query(row, dt)
    a, b = planner.footprint(jit_fn, name, *args, samples=candidates[:3], **consts)
    fourth = candidates[-2]
    (k,) = jit_fn.specialize(*planner.arg_types(jit_fn, args), **consts, **{name: fourth}).kernels
    assert planned(k, PLATFORMS[0]).plan.total_bytes == a * fourth + b


@pytest.mark.parametrize("row", OP_QUERIES, ids=lambda r: f"{r[1]}-{r[2]}-{r[3](dtypes.float32)}")
@pytest.mark.parametrize("platform", PLATFORMS, ids=lambda p: p.name)
def test_the_chosen_block_fits_and_the_next_does_not(row, platform):
    for dt in (d for d in FLOATS if platform.has_bf16 or d != "bfloat16"):  # hosts reject bf16 there
        jit_fn, name, candidates, args, consts = query(row, dt)
        best = planner.largest_block(jit_fn, name, candidates, *args, platform=platform, **consts)
        assert total(jit_fn, args, {**consts, name: best}, platform) <= platform.ub_budget_bytes
        bigger = sorted(c for c in candidates if c > best)
        assert bigger, "the candidates should reach past what fits"
        (k,) = jit_fn.specialize(*planner.arg_types(jit_fn, args), **consts, **{name: bigger[0]}).kernels
        assert planned(k, platform).plan.total_bytes > platform.ub_budget_bytes  # double-buffered
        try:  # the compiled kernel falls back to single-buffered queues, or is a located error
            slots = compile_variant(k, platform).plan.slots
            assert all(s.num == 1 for s in slots if s.num)
        except ascdsl.CompilationError as e:
            assert "bytes of UB, more than" in str(e)


def test_a_run_time_constexpr_is_a_located_error():
    @ascdsl.host
    def bad_host(x, platform):
        block = ascdsl.planner.largest_block(square_kernel, "BLOCK", SMALL, x, x, platform=platform,
                                             SQUARE=False, WIDTH=x.numel)
        return ascdsl.Launch(square_kernel, grid=(block,))

    op = ascdsl.Operator(name="bad", op_type="Bad", entry=None, host=bad_host, reference=None, inputs=("x",))
    with pytest.raises(ascdsl.CompilationError) as info:
        host.lower_tiling(op, tiling.layout("BadTilingData", []), (), PLATFORMS[0], "BadTiling")
    line = bad_host.__wrapped__.__code__.co_firstlineno + 3
    assert f"test_planner_host.py:{line}:66:" in str(info.value)
    assert "constexpr 'WIDTH' of a planner query must be known at build time" in str(info.value)


def manifest_bytes(row: dict, values: dict) -> int:
    """The UB bytes ``manifest.json`` gives for a variant at ``values`` of its runtime extents (as its schema says)."""
    return sum(slot["num"] * poly.ceil_block(max(poly.from_json(n).at(values) for n in slot["needs"]))
               for slot in row["footprint"])


def odd_points(extents: list[dict]) -> list[dict]:
    """Values of the runtime extents no lift or footprint sample takes (those are 1, 2, 3, 4, 5, 7, 11, 16, 37 and 101
    quanta, and twice and four times a case's value): all at their low, all past it, each alone past it."""
    low = {e["name"]: e["low"] for e in extents}
    past = {e["name"]: e["low"] + 8 if e["quantum"] == 1 else max(e["low"], 13 * e["quantum"]) for e in extents}
    return [low, past] + [{**low, e["name"]: e["low"] + 22 * e["quantum"]} for e in extents]


@pytest.mark.parametrize("name", ["log_softmax_grad", "softmax_grad"])
def test_the_manifest_footprint_is_the_plan_the_variant_runs_at_values_no_sample_took(tmp_path, name):
    """A lifted variant runs the general form (no decision depends on an extent), whose plan the UB planner's
    expression gives at every value: the manifest's footprint, evaluated, is that plan's total, not a fit through
    specialisations at 1, 2 and 4 times a case's value (whose plans are smaller: log_softmax_grad's float32
    ``reduce_tail_full_kernel`` takes 1856 bytes at 2 rows of 40, its specialisation 1568, which the fit recorded)."""
    op, _ = load(name)
    b = build.plan(op, PLATFORMS[0])
    rows = {r["key"]: r for r in json.loads((build.write(b, tmp_path) / "manifest.json").read_text())["variants"]}
    jit_fns = op.host.__wrapped__.__globals__
    checked = 0
    for v in b.variants:
        types = [p.type.dtype for p in v.kernel.params]
        for values in odd_points(rows[v.key]["runtime_extents"]) if v.lift is not None else ():
            (k,) = jit_fns[v.kernel.name].specialize(*types, **{**dict(v.kernel.constexprs), **values}).kernels
            plan = planned(k, PLATFORMS[0], general=True).plan
            assert manifest_bytes(rows[v.key], values) == plan.total_bytes, (v.key, values)
            checked += 1
    assert checked >= 3 * len(b.variants)  # every variant lifted, each at three points or more


def test_largest_extent_answers_each_question_once(monkeypatch):
    import importlib.util
    from pathlib import Path
    path = Path(__file__).parents[2] / "ops" / "log_softmax_grad.py"
    spec = importlib.util.spec_from_file_location("lsm_for_planner_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = desc((4096, 1024), "float32")
    ask = lambda platform: planner.largest_extent(module.reduce_tail_full_kernel, "ROWS", x, x, x,  # noqa: E731
                                                  platform=platform, BLOCK_R=1024)
    first = ask("Ascend910B3")
    calls = []
    lifted = planner.lifted
    monkeypatch.setattr(planner, "lifted", lambda *a: (calls.append(a), lifted(*a))[1])
    assert ask("Ascend910B3") == first >= 1 and not calls  # the host asks at every launch: answered once
    assert ask("Ascend310P3") >= first and len(calls) == 1  # another UB budget: asked again
    with pytest.raises(ascdsl.CompilationError, match="constexpr `BLOCK_R` got a list"):
        planner.largest_extent(module.reduce_tail_full_kernel, "ROWS", x, x, x, platform="Ascend910B3", BLOCK_R=[1024])
