"""Runtime tile extents (ascdsl/backend/lift.py): constexprs that only size tiles become tiling fields,
so one built operator serves every shape.

* the lift itself: a tile extent is lifted (its buffers sized from the tiling field), a constexpr
  that changes the code's structure or whose sizes fit no polynomial stays a specialisation;
* the built direct-launch program ``kernel/main.cpp`` (not the Python entry) serves shapes that no
  case of the op names, checked against NumPy with the tolerance table;
* the tiling function answers a tiling key (never "not compiled") over a grid of shapes;
* ``ascdsl build`` gives one template class per algorithm for all three element types: the float32
  form of the 16-bit kernel joins it (``if constexpr`` at each cast), each instance placing its
  buffers by its own plan.
"""
from __future__ import annotations

import dataclasses
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import build, cache, dtypes, sim
from ascdsl.backend import kir
from ascdsl.backend.lift import lift, poly
from ascdsl.backend.host import host
from ascdsl.backend.names.naming import to_expr
from ascdsl.backend.render import ascendc, emit
from ascdsl.cli import not_lifted
from ascdsl.ir.symbol import Undecided
from ascdsl.op import load_operators
from ascdsl.platforms import get_platform
from ascdsl.verify import check_main_case

OPS = Path(__file__).resolve().parents[2] / "ops"
PLATFORM = get_platform("Ascend910B3")
F32 = tl.pointer_type(tl.float32)


@ascdsl.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, tl.exp(x), mask=offs < n)


@ascdsl.jit
def unrolled_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, TIMES: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    for _ in tl.static_range(TIMES):  # TIMES changes the code, not a size
        x = x * 2.0
    tl.store(out_ptr + offs, x, mask=offs < n)


@ascdsl.jit
def square_kernel(x_ptr, out_ptr, n, SIDE: tl.constexpr):
    offs = tl.arange(0, SIDE * SIDE)  # a tile of SIDE^2 lanes: its sizes are no polynomial of degree 1
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, x + 1.0, mask=offs < n)


def _specialised(fn, **constexprs):
    return fn.specialize(F32, F32, tl.int32, **constexprs).kernels[0]


def test_a_tile_extent_is_lifted_into_the_tiling():
    found = lift.analyse(copy_kernel, _specialised(copy_kernel, BLOCK=64), PLATFORM)
    assert found is not None and found.names == ("BLOCK",)
    (e,) = found.extents
    assert (e.quantum, e.low) == (1, 1)  # any extent: buffers are rounded up to whole blocks at run time
    assert found.bytes({"BLOCK": e.high}) <= PLATFORM.ub_budget_bytes < found.bytes({"BLOCK": e.high + e.quantum})
    k = found.kernel
    assert dict(k.constexprs) == {}
    sizes = [s.size for s in k.plan.slots]
    assert all(s is not None and kir.Field("BLOCK", dtypes.int32) in kir.sub_exprs(s) for s in sizes)
    text = emit.class_model(k, "CopyKernel", "T")["queues"][0]["bytes"]
    assert text == "(tiling_.BLOCK * 4 + 31) / 32 * 32"
    # the footprint is exact: it is the static plan of every admitted value
    from ascdsl.backend.render.ascendc import planned
    for block in (1, 7, 24, 1000, e.high):
        assert found.bytes({"BLOCK": block}) == planned(_specialised(copy_kernel, BLOCK=block), PLATFORM,
                                                        general=True).plan.total_bytes


def test_a_constexpr_that_changes_the_structure_stays_a_specialisation():
    found = lift.analyse(unrolled_kernel, _specialised(unrolled_kernel, BLOCK=64, TIMES=3), PLATFORM)
    assert found is not None and found.names == ("BLOCK",)  # TIMES unrolls a loop: structural
    assert dict(found.kernel.constexprs) == {"TIMES": 3}


def test_a_size_that_fits_no_polynomial_falls_back_to_a_specialisation():
    assert lift.analyse(square_kernel, _specialised(square_kernel, SIDE=8), PLATFORM) is None


@pytest.mark.parametrize("fn, constexprs, lifted, samples", [
    (unrolled_kernel, {"BLOCK": 64, "TIMES": 3}, ("BLOCK",), 1),  # the one sample: is BLOCK's low 1?
    (square_kernel, {"SIDE": 8}, None, 0),
])
def test_a_constexpr_whose_symbolic_compile_does_not_decide_is_not_sampled(monkeypatch, fn, constexprs, lifted,
                                                                          samples):
    """``TIMES`` (a ``static_range`` of a symbol is refused) and ``SIDE`` (``SIDE * SIDE`` lanes, no polynomial
    of degree 1) decide on no quantum: each quantum is passed over without a sample compile (the retired sampler
    compiled 3 at each of the 9 quanta to see it), and the constexpr stays a specialisation."""
    monkeypatch.setattr(lift, "_COMPILED", {})  # no compile remembered: each sample counts
    before = lift.samples()
    found = lift._sample(fn, _specialised(fn, **constexprs), PLATFORM, frozenset())
    assert (found and found.names) == lifted
    assert sum((lift.samples() - before).values()) == samples


def _line(text: str) -> int:
    """The line of this file that holds ``text``."""
    return next(i for i, line in enumerate(Path(__file__).read_text().splitlines(), 1) if text in line)


def test_a_constexpr_that_stays_a_specialisation_says_why_at_its_line():
    """``ascdsl build --explain`` (:func:`.lift.declines`): ``TIMES`` at the ``static_range`` the symbolic compile
    refuses, ``SIDE`` at its kernel with the comparison no quantum decides; a lifted ``BLOCK`` says nothing.
    Compiles for symbols only: no sample."""
    unrolled = _specialised(unrolled_kernel, BLOCK=64, TIMES=3)
    square, copy = _specialised(square_kernel, SIDE=8), _specialised(copy_kernel, BLOCK=64)
    lifts = [lift.analyse(fn, k, PLATFORM) for fn, k in ((unrolled_kernel, unrolled), (copy_kernel, copy))]
    before = lift.samples()
    assert lift.declines(unrolled_kernel, unrolled, lifts[0], PLATFORM) == [
        f"tests/backend/test_runtime_extents.py:{_line('tl.static_range(TIMES)')}:14: unrolled_kernel: "
        "TIMES not lifted: "
        "tl.static_range bounds must be constexpr ints"]
    assert lift.declines(square_kernel, square, None, PLATFORM) == [
        f"tests/backend/test_runtime_extents.py:{_line('def square_kernel')}:1: square_kernel: SIDE not lifted: "
        "on no quantum up to 256: "
        "the symbols' domains do not decide SIDE * SIDE - 16777216 > 0"]
    assert lift.declines(copy_kernel, copy, lifts[1], PLATFORM) == []
    assert sum((lift.samples() - before).values()) == 0


def test_polynomial_fit_is_exact_or_refuses():
    names = ("X", "Y")
    grid = [{"X": x, "Y": y} for x in (3, 5) for y in (2, 7)]
    p = poly.fit(grid, [x * y * 4 + 3 * x + 8 for x, y in ((3, 2), (3, 7), (5, 2), (5, 7))], names)
    assert dict(p) == {("X", "Y"): 4, ("X",): 3, (): 8}
    assert str(p) == "4 * X * Y + 3 * X + 8"
    assert p.at({"X": 10, "Y": 10}) == 438
    half = poly.fit([{"X": 8}, {"X": 16}], [4, 8], ("X",))
    assert dict(half) == {("X",): Fraction(1, 2)}
    with pytest.raises(Undecided):
        to_expr(half, {"X": 1}, dtypes.int32)  # X / 2 is not an integer on every X
    assert to_expr(half, {"X": 8}, dtypes.int32) == kir.Bin(kir.BinOp.DIV, kir.Field("X", dtypes.int32), kir.lit(2))


# ----------------------------------------------------------------------------- built operators

def _built(name: str, tmp_path_factory):
    (op,) = load_operators([OPS / f"{name}.py"])
    b = build.plan(op, PLATFORM)
    return b, build.write(b, tmp_path_factory.mktemp(name))


def _op_fixture(name: str, file: str):
    """A module fixture ``name``: the op of ``ops/<file>.py`` planned and written."""
    @pytest.fixture(scope="module", name=name)
    def built(tmp_path_factory):
        return _built(file, tmp_path_factory)
    return built


scale_add_op, log_softmax_grad_op, softmax_grad_op, rms_norm_op, softmax_op = (
    _op_fixture(n, f) for n, f in (("scale_add", "scale_add"), ("log_softmax_grad", "log_softmax_grad"),
                                   ("softmax_grad", "softmax_grad"), ("rms_norm", "rmsnorm"), ("softmax", "softmax")))


def test_build_explain_names_the_constexprs_no_variant_lifts(scale_add, softmax_grad):
    """``ascdsl build --explain`` (:func:`ascdsl.cli.not_lifted`): scale_add's ``BLOCK`` lifts in every variant
    (nothing to say); softmax_grad's ``ALIGN`` sizes no buffer without ``FRONT``, at each kernel's location."""
    assert not_lifted(scale_add[0]) == []
    lines = not_lifted(softmax_grad[0])
    assert "ops/softmax_grad.py:77:1: rows_kernel: ALIGN not lifted: alone on multiples of 1, but ALIGN sizes no " \
           "buffer: no tile extent" in lines
    assert lines and all(": ALIGN not lifted: " in line for line in lines)


SCALE_ADD_SHAPES = [((7,), "float32"), ((1000,), "float16"), ((4097,), "bfloat16"), ((3, 1000), "float32"),
                    ((300, 77), "float16"), ((2, 3, 2, 3, 2, 3, 2, 5), "bfloat16")]


@pytest.mark.parametrize("shape,dtype", SCALE_ADD_SHAPES)
def test_the_built_main_serves_scale_add_shapes_no_case_names(scale_add, shape, dtype, tmp_path):
    b, folder = scale_add
    assert shape not in [c.inputs()[0].shape for c in b.op.cases]
    check_main_case(b, folder, tmp_path, ascdsl.Case(shape, shape, dtype=dtype, alpha=0.75))


NO_REDUCE_SHAPES = [((5, 1, 300), "float32"), ((1, 9999), "float16"), ((4, 1, 3, 1, 5), "bfloat16")]


@pytest.mark.parametrize("shape,dtype", NO_REDUCE_SHAPES)
def test_the_built_main_serves_elementwise_log_softmax_grad_shapes(log_softmax_grad, shape, dtype, tmp_path):
    b, folder = log_softmax_grad
    dim = 1 if len(shape) > 2 or shape[0] != 1 else 0
    assert shape[dim] == 1  # the no-reduce kernel, whose BLOCK is a runtime extent
    check_main_case(b, folder, tmp_path, ascdsl.Case(shape, shape, dtype=dtype, dim=dim))


# (shape, dtype, dim): reduce-tail and reduce-middle, ranks 1-8, odd sizes, rows over UB (recompute).
# Long float32 sums are judged by the ops' error scale (the terms grad - exp(out) * sum cancels).
LOG_SOFTMAX_SHAPES = [((3, 1000), "float32", -1), ((300, 77), "float16", 1), ((7, 3, 129), "float32", 1),
                      ((1, 1025), "bfloat16", -1), ((5, 4097), "float16", -1), ((81, 640), "float16", 0),
                      ((2, 1, 3, 1, 2, 3, 1, 5), "float32", 5), ((2, 50000), "bfloat16", -1), ((1000,), "float16", 0),
                      ((3, 70001), "float16", 1), ((3, 9000), "float16", -1),  # the last: one row per tile
                      ((5, 2023, 15), "float32", 1)]
LOG_SOFTMAX_SLOW = [((s, k), dt, d) for s, k in ((1, 7), (130, 33), (4, 12345), (1, 70000)) for dt in
                    ("float32", "float16", "bfloat16") for d in (0, -1)]
LOG_SOFTMAX_SLOW += [((2, 3, 4, 5, 6), "bfloat16", 2), ((3, 9000, 5), "float16", 1), ((17, 3, 2, 5), "float16", 0)]


SOFTMAX_GRAD_SHAPES = [((81, 640), "float16", False), ((7, 33), "float32", False), ((3, 1000), "float16", False),
                       ((300, 77), "bfloat16", True), ((1, 1025), "float32", True), ((5, 4097), "bfloat16", False),
                       ((2, 3, 2, 3, 2, 3, 2, 7), "float16", False), ((2, 50000), "float16", False),
                       ((3, 20000), "bfloat16", True), ((2, 7000), "bfloat16", False)]  # the last: one row per tile
SOFTMAX_GRAD_SLOW = [((m, k), dt, f) for m, k in ((1, 7), (130, 33), (40, 12345)) for dt in
                     ("float32", "float16", "bfloat16") for f in (False, True)]
# rows in whole 64-float repeats up to the largest the UB fits (9344 elements for rms_norm);
# softmax's rows over UB (23168 elements) take the looped kernel
RMS_NORM_SHAPES = [((3, 1000), "float16"), ((300, 77), "bfloat16"), ((1, 1025), "float32"), ((5, 4097), "float32"),
                   ((2, 3, 2, 3, 65), "float16"), ((2, 9300), "float32"), ((7, 1), "bfloat16")]
SOFTMAX_SHAPES = [((3, 1000), "float16"), ((300, 77), "bfloat16"), ((1, 1025), "float32"), ((2, 23200), "float32"),
                  ((2, 23300), "float16"), ((2, 3, 2, 3, 2, 3, 2, 7), "bfloat16"), ((1, 70001), "bfloat16")]
SWEEP = [("log_softmax_grad", shape, dtype, {"dim": dim}) for shape, dtype, dim in LOG_SOFTMAX_SHAPES]
SWEEP += [("rms_norm", shape, dtype, {"eps": 1e-5}) for shape, dtype in RMS_NORM_SHAPES]
SWEEP += [("softmax", shape, dtype, {}) for shape, dtype in SOFTMAX_SHAPES]
SWEEP += [("softmax_grad", shape, dtype, {"is_front": front}) for shape, dtype, front in SOFTMAX_GRAD_SHAPES]
SLOW_SWEEP = [("log_softmax_grad", shape, dtype, {"dim": dim}) for shape, dtype, dim in LOG_SOFTMAX_SLOW]
SLOW_SWEEP += [("softmax_grad", shape, dtype, {"is_front": front}) for shape, dtype, front in SOFTMAX_GRAD_SLOW]


def _case(name, shape, dtype, attrs):
    inputs = {"rms_norm": (shape, shape[-1:]), "softmax": (shape,)}.get(name, (shape, shape))
    return ascdsl.Case(*inputs, dtype=dtype, **attrs)


def _serve(request, name, shape, dtype, attrs, tmp_path):
    b, folder = request.getfixturevalue(name)
    check_main_case(b, folder, tmp_path, _case(name, shape, dtype, attrs))


@pytest.mark.parametrize("name,shape,dtype,attrs", SWEEP)
def test_the_built_main_serves_op_shapes_no_case_names(request, name, shape, dtype, attrs, tmp_path):
    b, _ = request.getfixturevalue(name)
    assert (shape, dtype) not in [(c.inputs()[0].shape, c.dtype) for c in b.op.cases]
    _serve(request, name, shape, dtype, attrs, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name,shape,dtype,attrs", SLOW_SWEEP)
def test_the_built_main_serves_a_seed_op_sweep(request, name, shape, dtype, attrs, tmp_path):
    _serve(request, name, shape, dtype, attrs, tmp_path)


GRID = [(n,) for n in (1, 5, 1000, 300001)] + [(m, k) for m in (1, 3, 81, 4096) for k in (1, 7, 640, 1025, 4097, 70001)]
GRID += [(2, 3, 129), (7, 1, 300), (2, 3, 2, 3, 2, 3, 2, 3), (32768, 152064)]


@pytest.mark.parametrize("name", ["log_softmax_grad", "softmax_grad"])
def test_the_tiling_function_answers_a_key_for_every_shape(name, request, tmp_path):
    """Every shape of a grid gets a tiling key from the Python host and from the compiled C++ tiling
    function alike (no "not compiled"), for every dtype and attribute value."""
    from tests.host.test_tiling_function import check_equivalence
    b, _ = request.getfixturevalue(name)
    attrs = [{"dim": d} for d in (0, 1, -1)] if name == "log_softmax_grad" else [{"is_front": f} for f in (False, True)]
    sweep = [(inputs, a) for inputs, a in _grid_sweep(b.op, GRID, attrs)
             if name != "log_softmax_grad" or a["dim"] < max(len(inputs[0].shape), 1)]
    for inputs, a in sweep:
        got = host.python_tiling(b.op, b.layout, b.variants, PLATFORM, inputs, a)
        assert got.status == 0, (inputs[0].shape, inputs[0].dtype.name, a, got.message)
    # the C++ agrees on every platform (TYPE_ERROR: bfloat16 where a platform has no bfloat16 casts)
    assert check_equivalence(tmp_path, b.op, (), sweep, built=b) <= {0, host.STATUS["TYPE_ERROR"]}


ROW_SHAPES = [(n,) for n in (1, 63, 64, 65, 1000)] + [(m, k) for m in (1, 81) for k in
                                                    (1, 640, 1025, 9344, 9345, 23168, 23169, 70001)]


@pytest.mark.parametrize("name", ["rms_norm", "softmax"])
def test_the_tiling_function_serves_every_row_length(name, request, tmp_path):
    """Python host and compiled C++ agree on a key for every row length; rms_norm's rows over the UB
    are a ValueError naming the largest row (9344 elements), softmax's go looped."""
    from tests.host.test_tiling_function import check_equivalence
    b, _ = request.getfixturevalue(name)
    attrs = {"eps": 1e-5} if name == "rms_norm" else {}
    sweep = [(tuple(ascdsl.TensorDesc(x.shape, dtypes.lookup(d)) for x in _case(name, s, d, attrs).inputs()), attrs)
             for s in ROW_SHAPES for d in ("float32", "float16", "bfloat16")]
    kernels = {}
    for inputs, a in sweep:
        got = host.python_tiling(b.op, b.layout, b.variants, PLATFORM, inputs, a)
        n = inputs[0].shape[-1]
        too_long = name == "rms_norm" and -(-n // 64) * 64 > 9344
        assert got.status == (host.STATUS["VALUE_ERROR"] if too_long else 0), (inputs[0].shape, got.message)
        if got.status == 0:
            (v,) = [v for v in b.variants if v.key == dict(got.fields)["tilingKey"]]
            kernels.setdefault(v.kernel.name, set()).add(n)
    if name == "softmax":
        # one tile per row up to 23168 elements (x - max and e / sum written over their dying sources,
        # the queue's load, and stored from it), then looped
        assert max(kernels["softmax_row_kernel"]) == 23168 and 23169 in kernels["softmax_looped_kernel"]
    # TYPE_ERROR: bfloat16 where a platform has no bfloat16 casts
    assert check_equivalence(tmp_path, b.op, (), sweep, built=b) <= {0, host.STATUS["VALUE_ERROR"],
                                                                      host.STATUS["TYPE_ERROR"]}


ALL_OPS = ["log_softmax_grad", "softmax_grad", "rms_norm", "softmax", "scale_add"]


def _classes_by_algorithm(folder: Path, *, by_float32: bool) -> dict:
    """The class names (template instances folded) of the built manifest's variants per (kernel,
    structural constexprs[, float32 or not]); a constexpr whose value follows from the element type
    (``ALIGN``: the elements of a 32-byte block) does not make another algorithm."""
    import json
    manifest = json.loads((folder / "manifest.json").read_text())
    by_dtype: dict = {}
    for v in manifest["variants"]:
        for n, value in v["constexprs"].items():
            by_dtype.setdefault((v["kernel"], n), {}).setdefault(tuple(v["pointer_dtypes"]), set()).add(repr(value))
    typed = {k for k, values in by_dtype.items()
             if all(len(s) == 1 for s in values.values()) and len(set.union(*values.values())) > 1}
    out: dict = {}
    for v in manifest["variants"]:
        float32 = set(v["pointer_dtypes"]) == {"float32"} if by_float32 else None
        consts = tuple(sorted((n, repr(c)) for n, c in v["constexprs"].items() if by_float32 or (v["kernel"], n) not in typed))
        key = (v["kernel"], consts, float32)
        out.setdefault(key, set()).add(v["class"].split("<")[0])
    return out


@pytest.mark.parametrize("name", ALL_OPS)
def test_one_class_per_algorithm(name, request):
    """Every variant is lifted (no tile extent specialises a class), and the classes are one per
    kernel, structural constexprs and float32-or-not (a template serves float16 and bfloat16)."""
    b, folder = request.getfixturevalue(name)
    assert [v.kernel.name for v in b.variants if v.lift is None] == []
    assert {k: c for k, c in _classes_by_algorithm(folder, by_float32=True).items() if len(c) > 1} == {}


@pytest.mark.parametrize("name", ALL_OPS)
def test_one_template_serves_every_element_type(name, request):
    """One ``template <typename T>`` class per kernel and structural constexprs serves float32, float16
    and bfloat16 (``if constexpr`` at each cast)."""
    _, folder = request.getfixturevalue(name)
    assert {k: c for k, c in _classes_by_algorithm(folder, by_float32=False).items() if len(c) > 1} == {}


@pytest.mark.parametrize("name", ["softmax", "log_softmax_grad", "softmax_grad"])
def test_the_manifest_records_each_instance_s_own_plan_by_its_class_s_names(name, request):
    """A template's float32 instance places its buffers by its own plan: the manifest records that plan
    with the names of the class's members (declared in the kernel file), using the UB of the float32
    kernel's own plan."""
    import json
    b, folder = request.getfixturevalue(name)
    manifest = json.loads((folder / "manifest.json").read_text())
    (kernel_file,) = (folder / "kernel").glob("*_kernel.cpp")
    text = kernel_file.read_text()
    rows = {row["key"]: row for row in manifest["variants"]}
    joined = [v for v in b.variants if v.form is not None and rows[v.key]["class"].endswith("<float>")]
    assert joined
    for v in joined:
        plan = rows[v.key]["ub_plan"]
        assert plan["total_bytes"] == ascendc.variant_planned(v, PLATFORM).plan.total_bytes
        for buf in plan["buffers"]:
            member = {"VECCALC": "TBuf<TPosition::VECCALC>", "VECIN/VECOUT": "TQueBind<TPosition::VECIN, TPosition::VECOUT, 1>"
                      }.get(buf["position"], f"TQue<QuePosition::{buf['position']}, 1>")
            assert f"    {member} {buf['name']};" in text, buf


@pytest.mark.parametrize("name", ["softmax", "softmax_grad"])
def test_element_sizes_in_a_template_are_named_class_constants(name, request):
    """``32 / sizeof(T)`` (the elements of a 32-byte block) is one class constant used by name."""
    _, folder = request.getfixturevalue(name)
    (kernel_file,) = (folder / "kernel").glob("*_kernel.cpp")
    text = kernel_file.read_text()
    definition = "static constexpr int32_t ELEMS_PER_BLOCK = static_cast<int32_t>(32 / sizeof(T));"
    assert text.count("32 / sizeof(T)") == text.count(definition) > 0
    assert text.count("ELEMS_PER_BLOCK") > 3 * text.count(definition)


def _float32_form_cases():
    import importlib.util
    out = []
    for file, kernel, args in (("scale_add", "scale_add_kernel", ("p", "p", "p", tl.float32, tl.int32)),
                               ("rmsnorm", "rms_norm_kernel", ("p", "p", "p", tl.int32, tl.float32)),
                               ("softmax", "softmax_row_kernel", ("p", "p", tl.int32)),
                               ("softmax", "softmax_looped_kernel", ("p", "p", tl.int32))):
        spec = importlib.util.spec_from_file_location(f"float32_form_{file}", OPS / f"{file}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        out.append(pytest.param(getattr(module, kernel), args, id=kernel))
    return out


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("fn,args", _float32_form_cases())
def test_the_float32_form_of_a_template_keeps_its_calls_and_the_float32_footprint(fn, args, dtype):
    """The 16-bit kernel retyped to float32 with its casts kept (templated.float32_form) has the 16-bit
    kernel's calls, and the planner computes every kept cast in place: it needs the UB of the float32
    kernel compiled without casts, and the same vector calls once the identity casts are dropped."""
    from ascdsl.backend.render import templated
    from ascdsl.backend.render.ascendc import planned

    def kernel(t, block):
        types = [tl.pointer_type(t) if a == "p" else a for a in args]
        return fn.specialize(*types, BLOCK=block).kernels[0]

    def calls(k):
        return [s for s in kir.walk(k.process) if isinstance(s, kir.Call)]
    for block in (64, 320):
        narrow = planned(kernel(dtypes.lookup(dtype), block), PLATFORM, general=True)
        plain = planned(kernel(tl.float32, block), PLATFORM, general=True)
        form = planned(templated.float32_form(kernel(dtypes.lookup(dtype), block)), PLATFORM, general=True)
        assert form.plan.total_bytes == plain.plan.total_bytes
        assert [(c.api, len(c.srcs)) for c in calls(form)] == [(c.api, len(c.srcs)) for c in calls(narrow)]
        kept = [c for c in calls(form) if c.is_identity_cast]
        assert len(kept) == len([c for c in calls(narrow) if c.api == "Cast"]) > 0
        assert all(form.plan.root(c.dst.buf) == form.plan.root(c.srcs[0].buf) for c in kept)  # in place
        assert sorted(c.api for c in calls(form) if not c.is_identity_cast) == sorted(c.api for c in calls(plain))


@pytest.mark.parametrize("name,shape", [("log_softmax_grad", (4096, 4097)), ("softmax_grad", (4096, 4097)),
                                        ("log_softmax_grad", (64, 8192, 3)), ("log_softmax_grad", (4096, 1, 1024))])
def test_large_shapes_use_most_of_the_ub(name, shape, request):
    """Tiles are chosen from the exact footprint: at least 70% of the UB budget on large shapes, unless
    the tile is one whole row and two do not fit (a row of 4097 floats: one pass over the data beats a
    fuller UB)."""
    b, _ = request.getfixturevalue(name)
    budget = PLATFORM.ub_budget_bytes
    for dtype in ("float32", "float16"):
        inputs = (ascdsl.TensorDesc(shape, dtypes.lookup(dtype)),) * 2
        attrs = {"dim": 1} if name == "log_softmax_grad" else {"is_front": False}
        got = host.python_tiling(b.op, b.layout, b.variants, PLATFORM, inputs, attrs)
        fields = dict(got.fields)
        (v,) = [v for v in b.variants if v.key == fields["tilingKey"]]
        extents = {n: fields[n] for n in v.lifted}
        used = v.lift.bytes(extents)
        assert used <= budget
        if used < 0.7 * budget:
            assert extents.get("ROWS") == 1 and v.lift.bytes({**extents, "ROWS": 2}) > budget, (dtype, used)


def _grid_sweep(op, shapes, attrs):
    return [((ascdsl.TensorDesc(s, dtypes.lookup(d)),) * len(op.inputs), a)
            for s in shapes for d in ("float32", "float16", "bfloat16") for a in attrs]


def test_the_scale_add_tiling_function_answers_every_shape(scale_add, tmp_path):
    from tests.host.test_tiling_function import check_equivalence
    b, _ = scale_add
    shapes = [(n,) for n in (1, 5, 8, 100, 1023, 4096, 4097, 65537, 10 ** 7)] + [(3, 7, 11), (2, 1, 2, 1, 2, 1, 2, 1)]
    sweep = _grid_sweep(b.op, shapes, [{"alpha": 0.5}])
    for inputs, attrs in sweep:
        got = host.python_tiling(b.op, b.layout, b.variants, PLATFORM, inputs, attrs)
        assert got.status == 0, got.message
    assert check_equivalence(tmp_path, b.op, (), sweep, built=b) <= {0, host.STATUS["TYPE_ERROR"]}


def test_scale_add_builds_one_class_per_algorithm(scale_add):
    b, _ = scale_add
    classes = ascendc.classes(b.variants, b.platform)
    assert len(classes) == 1  # one template for float32, float16 and bfloat16
    assert {v.key for c in classes for v, _ in c.instances} == {v.key for v in b.variants}
    assert all(v.lift is not None for v in b.variants)


# (op, input shapes, attributes, the kernel the tiling picks): the last four kernels' 16-bit instances
# pack their buffers otherwise than the float32 kernel does (each instance places them by its own plan)
OWN_CLASS_CASES = [("scale_add", [(1 << 16,), (1 << 16,)], {"alpha": 0.5}, "scale_add_kernel"),
                   ("rms_norm", [(64, 1000), (1000,)], {"eps": 1e-6}, "rms_norm_kernel"),
                   ("softmax", [(2, 23200)], {}, "softmax_looped_kernel"),
                   ("log_softmax_grad", [(64, 1000)] * 2, {"dim": 1}, "reduce_tail_full_kernel"),
                   ("log_softmax_grad", [(2, 20000)] * 2, {"dim": 1}, "reduce_tail_recompute_kernel"),
                   ("softmax_grad", [(2, 20000)] * 2, {"is_front": False}, "two_pass_kernel")]


FORMS = ("template", "own class")


def _forms(b) -> dict[str, tuple]:
    """The built variants (one template per algorithm) and each kernel's own class (no template form)."""
    return {"template": b.variants, "own class": tuple(dataclasses.replace(v, form=None) for v in b.variants)}


def _entry(name: str, form: str) -> str:
    return f"{name}_{form.replace(' ', '_')}"


@pytest.fixture(scope="module")
def forms_sources(request) -> dict[str, str]:
    """Per form, one kernel file of every op of OWN_CLASS_CASES (entry :func:`_entry`): one g++ build a form
    (each op's classes, tiling struct and entry have names of their own, so the ops share a file)."""
    texts = {form: [] for form in FORMS}
    for name in dict.fromkeys(case[0] for case in OWN_CLASS_CASES):
        b, _ = request.getfixturevalue(name)
        for form, variants in _forms(b).items():
            texts[form].append(ascendc.kernel_source(_entry(name, form), variants, b.layout, PLATFORM,
                                                     tensors=b.op.tensor_count))
    return {form: str(cache.text("gen", "".join(parts))) for form, parts in texts.items()}


@pytest.mark.parametrize("name,shapes,attrs,kernel", OWN_CLASS_CASES)
def test_the_float32_instance_of_a_template_costs_what_its_own_class_does(name, shapes, attrs, kernel, request,
                                                                         forms_sources):
    """The float32 instance of the one template (casts compiled away by ``if constexpr``, tiles computed
    in the queue buffers, buffers placed by the float32 plan) against the float32 class the kernel had
    of its own: the same outputs, UB and simulated time (the cost model's estimate, printed)."""
    b, _ = request.getfixturevalue(name)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    got = host.python_tiling(b.op, b.layout, b.variants, PLATFORM,
                             tuple(ascdsl.TensorDesc(a.shape, dtypes.float32) for a in arrays), attrs)
    fields = dict(got.fields)
    assert [v.kernel.name for v in b.variants if v.key == fields["tilingKey"]] == [kernel]
    runs = {}
    for form, variants in _forms(b).items():
        instance = ascendc.class_names(variants, PLATFORM)[fields["tilingKey"]]
        out = np.zeros_like(arrays[0])
        blocks = min(fields["grid0"] * fields["grid1"] * fields["grid2"], PLATFORM.vector_core_count)
        workspace = np.full(got.workspace_bytes // 4, np.nan, np.float32) if got.workspace_bytes else None  # scratch
        res = sim.run_kernel(forms_sources[form], _entry(name, form), [*arrays, out, workspace, b.layout.pack(fields)],
                             blocks, PLATFORM.name, tiling_key=fields["tilingKey"])
        runs[form] = (instance, out, res.stats.est_us, res.stats.ub_peak_bytes)
    (t_name, t_out, t_us, t_ub), (o_name, o_out, o_us, o_ub) = runs["template"], runs["own class"]
    print(f"{name} float32: {t_name} {t_us:.3f} us / {o_name} {o_us:.3f} us = {t_us / o_us:.4f}")
    assert t_name.endswith("<float>") and "<" not in o_name
    assert np.array_equal(t_out, o_out) and t_ub == o_ub and t_us <= o_us


@pytest.mark.parametrize("name", ALL_OPS)
def test_no_built_kernel_has_a_loop_that_runs_once(name, request):
    """The general form walks one-row tiles in loops (ascdsl/backend/simplify.py unrolls them): none
    is left in the written kernels."""
    import re
    _, folder = request.getfixturevalue(name)
    once = re.compile(r"for \(int(?:32|64)_t (\w+) = (-?\d+); \1 < (-?\d+);")
    for source in folder.glob("kernel/*_kernel.cpp"):
        loops = [m.group(0) for m in once.finditer(source.read_text()) if int(m.group(3)) - int(m.group(2)) <= 1]
        assert loops == [], f"{source.name}: {loops[:3]}"
