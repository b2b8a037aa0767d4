"""The kernel IR and the backend's passes: verifier, one plan per variant, names, platform checks."""
import ast
import collections
import dataclasses
from pathlib import Path

import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from ascdsl.backend import kir
from ascdsl.backend.render import ascendc
from ascdsl.backend.plan import tiling, ubplan
from ascdsl.backend.names.naming import RESERVED
from tests.backend.test_passes import all_launches

BACKEND = Path(kir.__file__).parents[1]
pytestmark = pytest.mark.usefixtures("prebuilt_module")  # the simulator kernels in few g++ runs
F32 = tl.pointer_type(dtypes.float32)
BF16 = tl.pointer_type(dtypes.bfloat16)


def _compiled():
    out = []
    for launch in all_launches():
        try:
            out.append(ascendc.compile_variant(launch.kernel, "Ascend910B3"))
        except ascdsl.CompilationError:
            continue
    return out


def test_every_launch_compiles_to_verified_kernel_ir():
    kernels = _compiled()
    assert len(kernels) > 10
    for k in kernels:
        assert kir.verify(k) is k
        assert k.stages and k.plan.total_bytes <= 188416
        assert not any(isinstance(s, kir.Segment) for s in kir.walk(k.process))
        # every buffer a call touches has a slot, every slot is sized by the views of its buffers
        for b in kir.buffers(k):
            assert k.plan.slot(b).bytes >= 32


def test_verifier_rejects_a_variable_read_before_its_definition():
    k = _compiled()[0]
    ghost = kir.Var(12345, dtypes.int32, "ghost")
    broken = dataclasses.replace(k, process=(kir.Let(kir.Var(1, dtypes.int32, "a"), ghost),) + k.process)
    with pytest.raises(kir.KirError, match="read before it is defined"):
        kir.verify(broken)


def test_verifier_rejects_a_variable_of_two_types():
    """Names are a variable key's: a read (or a stage's parameter) typed apart from the definition would be
    declared narrower than what is passed to it (clang's -Wshorten-64-to-32)."""
    k = _compiled()[0]
    i32, i64 = (kir.Var(777, t, "rows", kir.VarKind.LOOP) for t in (dtypes.int32, dtypes.int64))
    read = kir.Let(kir.Var(778, dtypes.int64, "end"), i64)
    ok = kir.For(i64, kir.lit(0), kir.lit(4), kir.lit(1), (read,))
    kir.verify(dataclasses.replace(k, process=(ok,) + k.process))
    with pytest.raises(kir.KirError, match="key 777 .rows. has two C types"):
        kir.verify(dataclasses.replace(k, process=(dataclasses.replace(ok, var=i32),) + k.process))


def test_the_plan_is_computed_once_per_variant(monkeypatch, tmp_path):
    from ascdsl import build
    from ascdsl.op import load_operators
    ascendc._planned.cache_clear()
    calls = []
    real = ubplan.plan
    # (the lift compiles samples in the general form: the same specialisation may be planned in both forms)
    monkeypatch.setattr(ubplan, "plan", lambda k, p: calls.append((k.name, k.constexprs, k.gms, k.process))
                        or real(k, p))
    (op,) = load_operators([Path(__file__).resolve().parents[2] / "ops" / "log_softmax_grad.py"])
    b = build.plan(op, ascdsl.platforms.get_platform("Ascend910B3"))
    build.render_files(b)  # kernel file, op project, manifest (footprints too) and report all read the plans
    assert len(calls) >= len(b.variants) and max(collections.Counter(calls).values()) <= 2  # once per form


def test_no_backend_pass_reads_text():
    """The passes build data; only emit.py (and the Jinja templates) produce C++ text."""
    for name in ("kir/__init__", "kir/expr", "kir/stmt", "kir/walk", "expand/decompose", "selection/selector",
                 "selection/support", "selection/facts", "selection/buffers", "selection/scalars",
                 "selection/packed_rows", "legalise_shapes/packed",
                 "selection/select", "selection/compute", "selection/reduce", "selection/memory", "selection/repeat",
                 "plan/ubplan", "plan/staging", "plan/sync", "names/naming"):
        tree = ast.parse((BACKEND / f"{name}.py").read_text())
        imported = {a.name for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                    for a in n.names} | {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert "re" not in imported and "emit" not in imported, name


@ascdsl.jit
def clash_kernel(x, x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    tiling = tl.program_id(0) * BLOCK
    pipe = tiling + tl.arange(0, BLOCK)
    NULL = pipe < n
    new = tl.load(x + pipe, mask=NULL, other=0.0)
    int = tl.load(x_ptr + pipe, mask=NULL, other=0.0)  # noqa: A001 - a C++ keyword on purpose
    tl.store(out_ptr + pipe, new * 2.0 + int * 3.0, mask=NULL)


def test_names_never_collide_with_cpp_or_generated_names():
    (k,) = clash_kernel.specialize(F32, F32, F32, dtypes.int32, BLOCK=64).kernels
    c = ascendc.compile_variant(k, "Ascend910B3")
    names = c.names
    assert names.gms[0] != names.gms[1] and {names.gms[0], names.gms[1]} == {"xGm", "xPtrGm"}
    # views computed in place in a load's queue buffer share its local tensor; nothing else is shared
    every = [*names.slots.values(), *names.gms.values(), *set(names.views.values()), *names.vars.values()]
    assert len(every) == len(set(every)) and not set(every) & RESERVED
    x = np.arange(300, dtype=np.float32)
    y = np.arange(300, dtype=np.float32) * 0.5
    out = np.zeros_like(x)
    clash_kernel[(5,)](x, y, out, 300, BLOCK=64, backend="sim")
    assert np.array_equal(out, x * 2.0 + y * 3.0)


@ascdsl.jit
def underscored_kernel(x, x_, new, new_, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x + offs, mask=mask) + 2.0 * tl.load(x_ + offs, mask=mask)
    tl.store(out_ptr + offs, a + 3.0 * tl.load(new + offs, mask=mask) + 5.0 * tl.load(new_ + offs, mask=mask),
             mask=mask)


def test_parameters_a_trailing_underscore_apart_get_distinct_names():
    """``x`` and ``x_``, and ``new`` (a C++ keyword, so renamed) and ``new_``: four entry parameters, four
    C++ names, and the kernel runs on the simulator."""
    (k,) = underscored_kernel.specialize(F32, F32, F32, F32, F32, dtypes.int32, BLOCK=64).kernels
    pointers = ascendc.pointer_names(k)
    assert len(set(pointers)) == 5 and not set(pointers) & RESERVED
    x, x_, new, new_ = (np.arange(200, dtype=np.float32) * (i + 1) for i in range(4))
    out = np.zeros_like(x)
    underscored_kernel[(4,)](x, x_, new, new_, out, 200, BLOCK=64, backend="sim")
    assert np.array_equal(out, x + 2.0 * x_ + 3.0 * new + 5.0 * new_)


def test_generated_code_has_readable_names():
    (k,) = clash_kernel.specialize(F32, F32, F32, dtypes.int32, BLOCK=64).kernels
    text = ascendc.kernel_source("clash", tiling.variants([k]), tiling.layout("T", [k]), "Ascend910B3")
    assert "tiling2" in text and "new2" in text and "int2" in text  # DSL names, renamed away from C++
    assert not any(f"v{i} " in text for i in range(100))
    assert "scalarBuf" not in text


@ascdsl.jit
def bf16_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2.0)


def test_bf16_on_a_platform_without_bf16_casts_is_a_located_error():
    (k,) = bf16_kernel.specialize(BF16, BF16, BLOCK=64).kernels
    with pytest.raises(ascdsl.CompilationError, match="Ascend310P3 has no bfloat16") as info:
        ascendc.compile_variant(k, "Ascend310P3")
    assert "test_kir.py:" in str(info.value)
    ascendc.compile_variant(k, "Ascend910B3")


def test_platform_capabilities_come_from_the_platform_table():
    """A platform with 64-byte blocks pads rows and tails to 64 bytes (nothing assumes 32)."""
    wide = dataclasses.replace(ascdsl.platforms.get_platform("Ascend910B3"), name="Wide", block_bytes=64)
    (k,) = clash_kernel.specialize(F32, F32, F32, dtypes.int32, BLOCK=8).kernels
    narrow = ascendc.planned(k, "Ascend910B3").plan
    assert all(s.bytes % 32 == 0 for s in narrow.slots)
    assert all(s.bytes % 64 == 0 for s in ascendc.planned(k, wide).plan.slots)


@ascdsl.jit
def exp2_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, tl.exp2(x), mask=mask)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_exp2_on_the_interpreter_and_the_simulator(dtype):
    dt = dtypes.lookup(dtype)
    x = np.linspace(-12.0, 12.0, 777).astype(dt.np)  # 2**x stays finite in float16
    want = np.exp2(x.astype(np.float64))
    for backend in ("interpreter", "sim"):
        out = np.zeros_like(x)
        exp2_kernel[(ascdsl.cdiv(777, 256),)](x, out, 777, BLOCK=256, backend=backend)
        np.testing.assert_allclose(out.astype(np.float64), want, rtol=dt.rtol, atol=dt.atol, err_msg=backend)


def _is_wide(e) -> bool:
    """Whether C++ computes ``e`` in 64 bits: an int64_t leaf or cast, or arithmetic with a 64-bit operand."""
    if isinstance(e, kir.Conv):
        return e.dtype == dtypes.int64
    if isinstance(e, kir.Bin):
        return _is_wide(e.a) or _is_wide(e.b)
    if isinstance(e, kir.Cond):
        return _is_wide(e.a) or _is_wide(e.b)
    return (e.dtype if isinstance(e, kir.Field) else e.ctype if isinstance(e, kir.Var) else None) == dtypes.int64


def _narrow_leaves(e, wide=False):
    """Int32 leaves of a GM offset expression that are not widened to int64_t before arithmetic: by a cast
    around them, or as the direct operand of arithmetic whose other operand is 64-bit (C++'s promotion)."""
    if isinstance(e, kir.Conv):
        return _narrow_leaves(e.x, e.dtype == dtypes.int64)
    if isinstance(e, (kir.Bin, kir.Cond)):
        parts = (e.a, e.b) if isinstance(e, kir.Bin) else (e.c, e.a, e.b)
        promoted = isinstance(e, kir.Bin) and (_is_wide(e.a) or _is_wide(e.b))
        return [x for part in parts
                for x in _narrow_leaves(part, wide or promoted and isinstance(part, (kir.Field, kir.Var)))]
    if isinstance(e, kir.Field) or isinstance(e, kir.Var) and e.ctype != dtypes.int64:
        return [] if wide else [e]
    return []


def test_the_offset_check_follows_cpp_promotion():
    """``program % grid0`` with ``program`` an int64_t is 64-bit arithmetic; ``a32 * b32`` is not, also inside
    a 64-bit sum."""
    a, b = kir.Var(1, dtypes.int32, "a"), kir.Var(2, dtypes.int32, "b")
    program, grid0 = kir.Var(3, dtypes.int64, "program"), kir.Field("grid0", dtypes.int32)
    assert _narrow_leaves(kir.Bin(kir.BinOp.MOD, program, grid0)) == []
    assert _narrow_leaves(kir.Bin(kir.BinOp.MUL, a, grid0)) == [a, grid0]
    assert _narrow_leaves(kir.Bin(kir.BinOp.ADD, program, kir.Bin(kir.BinOp.MUL, a, b))) == [a, b]
    assert _narrow_leaves(kir.Bin(kir.BinOp.ADD, kir.Conv(dtypes.int64, kir.Bin(kir.BinOp.MUL, a, b)), a)) == []


def narrow_gm_offsets(k: kir.Kernel) -> list:
    """Every GM offset of ``k`` (and the Let each is computed by) with an int32 leaf that is not widened
    to int64_t before arithmetic; empty when all GM offset arithmetic is 64-bit. Asserts there are offsets."""
    lets = {s.var: s.expr for s in kir.walk(k.process) if isinstance(s, kir.Let)}
    offsets = [o.offset for s in kir.walk(k.process) if isinstance(s, kir.Call)
               for o in (s.dst, *s.srcs) if isinstance(o, kir.Gm)]
    assert offsets
    exprs = offsets + [lets[x] for e in offsets for x in kir.sub_exprs(e) if isinstance(x, kir.Var) and x in lets]
    return [(e, leaf) for e in exprs for leaf in _narrow_leaves(e)]


def test_an_llm_vocabulary_block_is_planned_with_int64_offsets():
    """[32768, 152064] float16 has 4.98e9 elements: the tiling function serves it and every GM offset
    (and the Let it is computed by) is int64_t arithmetic."""
    from ascdsl import build
    from ascdsl.backend.host import host
    from ascdsl.op import TensorDesc, load_operators
    platform = ascdsl.platforms.get_platform("Ascend910B3")
    (op,) = load_operators([Path(__file__).resolve().parents[2] / "ops" / "softmax_grad.py"])
    b = build.plan(op, platform)
    d = TensorDesc((32768, 152064), dtypes.float16)
    got = host.python_tiling(op, b.layout, b.variants, platform, (d, d), {"is_front": False})
    assert got.status == 0, got.message
    (v,) = [v for v in b.variants if v.key == dict(got.fields)["tilingKey"]]
    assert narrow_gm_offsets(ascendc.compile_variant(v.kernel, platform)) == []


def test_variants_differing_only_by_element_type_share_one_template_class():
    from ascdsl import build
    from ascdsl.op import load_operators
    platform = ascdsl.platforms.get_platform("Ascend910B3")
    (op,) = load_operators([Path(__file__).resolve().parents[2] / "ops" / "log_softmax_grad.py"])
    b = build.plan(op, platform)
    plans = ascendc.classes(b.variants, platform)
    templates = [c for c in plans if c.is_template]
    assert templates and len(plans) < len(b.variants)
    for c in templates:
        instances = [name for _, name in c.instances]
        assert f"{c.name}<half>" in instances and f"{c.name}<bfloat16_t>" in instances
        assert {v.kernel.name for v, _ in c.instances} == {c.kernel.name}
    text = build.render_files(b)["kernel/log_softmax_backward_kernel.cpp"]
    assert text.count("template <typename T>") == len(templates)
    assert text.count("\nclass ") == len(plans)


def test_expressions_print_with_cpp_precedence():
    from ascdsl.backend.render.emit import Printer
    from ascdsl.backend.names.naming import Names
    a, b, c = (kir.Var(k, dtypes.int32, n) for k, n in ((1, "a"), (2, "b"), (3, "c")))
    p = Printer(Names(vars={1: "a", 2: "b", 3: "c"}))
    B, Op_ = kir.Bin, kir.BinOp
    assert p.expr(B(Op_.AND, B(Op_.OR, a, b), c)) == "(a | b) & c"  # & binds tighter than |
    assert p.expr(B(Op_.AND, a, B(Op_.OR, b, c))) == "a & (b | c)"
    assert p.expr(B(Op_.XOR, B(Op_.OR, a, b), c)) == "(a | b) ^ c"
    assert p.expr(B(Op_.LT, B(Op_.SHL, a, b), c)) == "a << b < c"
    assert p.expr(B(Op_.SHL, a, B(Op_.ADD, b, c))) == "a << (b + c)"
    assert p.expr(kir.Not(B(Op_.LT, a, b))) == "!(a < b)" and p.expr(kir.Not(a)) == "!a"


def test_verifier_scopes_a_while_condition_in_its_test():
    k = _compiled()[0]
    flag = kir.Var(54321, dtypes.bool_, "flag")
    ok = kir.While((kir.Let(flag, kir.Lit(True, dtypes.bool_)),), flag, ())
    kir.verify(dataclasses.replace(k, process=(ok,) + k.process))
    with pytest.raises(kir.KirError, match="read before it is defined"):
        kir.verify(dataclasses.replace(k, process=(kir.While((), flag, ()),) + k.process))
