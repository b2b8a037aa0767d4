"""Host code is data: an ``@ascdsl.host`` function lowers to frozen host statements (:mod:`ascdsl.backend.kir.host`),
which only :mod:`ascdsl.backend.render.emit` turns into C++."""
from __future__ import annotations

import dataclasses

import ascdsl
import ascdsl.language as tl
from ascdsl import dtypes
from ascdsl.backend.host import host
from ascdsl.backend.kir import Bin, BinOp, Brace, For, Note
from ascdsl.backend.kir import host as hk
from ascdsl.backend.plan import tiling
from ascdsl.backend.render.emit import LINE_WIDTH, host_arguments, host_lines

from .test_tiling_function import PLATFORMS, check_equivalence, desc


@ascdsl.jit
def scale_kernel(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr, TWICE: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i, mask=i < n) * scale
    if TWICE:
        x = x * scale
    tl.store(out_ptr + i, x, mask=i < n)


@ascdsl.host
def scale_host(x, mode, platform):
    if x.ndim == 0:
        raise ValueError(f"x must have a dimension on {platform.name}, got {x.ndim} dimensions")
    elif mode > 2:
        block = 1024
    elif x.numel > 4096:
        block = 512
    else:
        block = 256
    scale = 1.0
    for d in range(x.ndim):
        scale = scale * 0.5
    return ascdsl.Launch(scale_kernel, grid=(ascdsl.cdiv(x.numel, block),), scalars={"n": x.numel, "scale": scale},
                         constexprs={"BLOCK": block, "TWICE": False})


SCALE = ascdsl.Operator(name="scale", op_type="ScaleOp", entry=None, host=scale_host, reference=None, inputs=("x",),
                        attrs=(ascdsl.Attr("mode", "Int", 0),))


def scale_kernels():
    return [k for block in (256, 512, 1024) for twice in (False, True) for k in scale_kernel.specialize(
        tl.pointer_type(dtypes.float32), tl.pointer_type(dtypes.float32), 1, 1.0, BLOCK=block, TWICE=twice).kernels]


def lowered():
    kernels = scale_kernels()
    layout = tiling.layout("ScaleOpTilingData", kernels)
    return host.lower_tiling(SCALE, layout, tiling.variants(kernels), PLATFORMS[0], "ScaleOpTiling")


def nodes(value):
    """Every dataclass node under ``value`` (statements, expressions, nested blocks)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        yield value
        for f in dataclasses.fields(value):
            yield from nodes(getattr(value, f.name))
    elif isinstance(value, tuple):
        for item in value:
            yield from nodes(item)


def test_the_tiling_function_is_frozen_data_and_lowers_alike_twice():
    fn, again = lowered(), lowered()
    assert (fn.constants, fn.locals, fn.body) == (again.constants, again.locals, again.body)
    hash((fn.constants, fn.locals, fn.body))  # frozen all the way down
    kinds = {type(n) for n in nodes(fn.body)}
    # the elif chain, the loop, the raise and the launch's table are statements, not text
    assert {hk.Branch, For, hk.Throw, hk.Declare, hk.Assign, hk.Return, Note} <= kinds
    assert all(not isinstance(s, str) for s in fn.body + fn.constants + fn.locals)
    (chain,) = [s for s in fn.body if isinstance(s, hk.Branch) and len(s.arms) == 3]
    assert isinstance(chain.arms[0][1][0], hk.Throw) and chain.orelse is not None  # if / else if / else if / else
    assert fn.body_lines == again.body_lines


def test_tests_on_values_known_at_build_time_fold():
    """A constexpr the host passes as a constant, the dtype of an output or scratch fixed in the op: the launch
    compares nothing known at build time, and the variants those values never select have no branch."""
    kernels = scale_kernels()
    variants = tiling.variants(kernels)
    layout = tiling.layout("ScaleOpTilingData", kernels)
    fn = host.lower_tiling(SCALE, layout, variants, PLATFORMS[0], "ScaleOpTiling")
    constant = (hk.Value, hk.Scoped)
    assert not [n for n in nodes(fn.body) if isinstance(n, Bin) and n.op in (BinOp.EQ, BinOp.NE)
                and isinstance(n.a, constant) and isinstance(n.b, constant)]
    keys = {n.value.value for n in nodes(fn.body) if isinstance(n, hk.Assign) and n.target == hk.Member(
        hk.Ident("tiling"), "tilingKey") and n.value != hk.Value(0)}
    assert keys == {v.key for v in variants if not dict(v.kernel.constexprs)["TWICE"]} and len(keys) == 3
    # messages: one std::string from the start, adjacent literals joined, nothing converted twice
    strings = [n for n in nodes(fn.body) if isinstance(n, hk.Invoke) and n.fn is hk.Runtime.STRING]
    assert strings and not [n for n in strings if isinstance(n.args[0], hk.Invoke)]
    literal = lambda e: isinstance(e, hk.Value) and isinstance(e.value, str)  # noqa: E731
    assert not [n for n in nodes(fn.body) if isinstance(n, Bin) and literal(n.b) and (literal(n.a) or (
        isinstance(n.a, Bin) and literal(n.a.b)))]
    # a constant's value in the message of a launch no variant serves is text already, as Python shows it
    assert ', TWICE=False for " + DTypeName(x.dtype)' in "\n".join(fn.body_lines)


def test_the_lowered_function_runs_as_the_python_host(tmp_path):
    sweep = [((desc(shape),), {"mode": mode}) for shape in [(), (3,), (5000,), (64, 70)] for mode in (0, 3)]
    assert check_equivalence(tmp_path, SCALE, scale_kernels(), sweep, platforms=PLATFORMS[:1]) == {0, 1}


def test_statements_render_as_cpp():
    x, n = hk.Ident("x"), hk.Ident("n")
    chain = hk.Branch(((Bin(BinOp.LT, x, hk.Value(0)), (hk.Throw(hk.Status.VALUE_ERROR, hk.Value("negative")),)),
                       (Bin(BinOp.EQ, x, hk.Value(0)), (hk.Assign(n, hk.Value(1)),))),
                      (hk.Assign(n, x, "the rest"),), note="three ways")
    fits = hk.Invoke(hk.Runtime.LARGEST_FITTING,
                     (hk.Value(8), hk.Value(8), hk.Lambda(hk.Ident("v"), Bin(BinOp.LE, hk.Ident("v"), n))))
    table = hk.Table("Footprint", hk.Ident("rows"), ((Brace((hk.Value(1), hk.Value(2))), "0: float32"),), "bytes")
    body = (hk.Declare(hk.HostType.INT, n, hk.Value(-1), hk.Storage.VARIABLE), chain,
            hk.Branch((), (hk.Return(hk.Status.OK),)), hk.Assign(hk.Ident("best"), fits),
            hk.Declare(hk.HostType.INT, hk.Ident("k"), hk.Value(2**40), hk.Storage.CONSTEXPR, note="big"), table)
    assert host_lines(body, depth=1, qualified=False) == (
        "    int64_t n = -1;",
        "    if (x < 0) {  // three ways",
        '        throw HostError{VALUE_ERROR, "negative"};',
        "    } else if (x == 0) {",
        "        n = 1;",
        "    } else {",
        "        n = x;  // the rest",
        "    }",
        "    {",
        "        return OK;",
        "    }",
        "    best = LargestFitting(8, 8, [&](int64_t v) {",
        "        return v <= n;",
        "    });",
        "    constexpr int64_t k = INT64_C(1099511627776);  // big",
        "    // bytes",
        "    constexpr Footprint rows[] = {",
        "        {1, 2},  // 0: float32",
        "    };")
    assert host_lines((hk.Return(hk.Status.OK),)) == ("return ascdsl_host::OK;",)  # qualified outside the body


def test_signatures_render_from_arguments():
    args = (hk.Argument("x", hk.HostType.TENSOR, hk.Passing.CONST_REF),
            hk.Argument("mode", hk.HostType.INT, hk.Passing.VALUE, unused=True),
            hk.Argument("tiling", "ScaleOpTilingData", hk.Passing.REF),
            hk.Argument("shapes", hk.HostType.SHAPE, hk.Passing.POINTER))
    assert host_arguments(args) == ("const ascdsl_host::TensorDesc& x", "[[maybe_unused]] int64_t mode",
                                    "ScaleOpTilingData& tiling", "ascdsl_host::Shape* shapes")


def test_what_a_statement_reads_includes_its_nested_blocks_and_not_its_targets():
    inner = hk.Branch(((Bin(BinOp.GT, hk.Ident("a"), hk.Value(0)),
                        (hk.Throw(hk.Status.VALUE_ERROR, hk.Invoke(hk.Runtime.FORMAT_INT, (hk.Ident("b"),))),)),))
    outer = hk.Branch(((hk.Ident("c"), (inner, hk.Assign(hk.Ident("d"), hk.Ident("e")))),))
    assert hk.stmt_reads(outer) == {"a", "b", "c", "e"}


def test_a_long_line_breaks_after_its_operators_and_keeps_its_tokens():
    tests = tuple(Bin(BinOp.EQ, hk.Ident(f"variable_number_{i}"), hk.Value(i)) for i in range(12))
    terms = hk.Ident("first_term")
    for i in range(12):
        terms = Bin(BinOp.ADD, terms, hk.Invoke(hk.Runtime.ROUND_UP, (hk.Ident(f"term_{i}"), hk.Value(32))))
    body = (hk.Declare(hk.HostType.INT, hk.Ident("total"), terms, note="a sum of twelve rounded terms"),)
    branch = hk.Branch(((hk.Logic(True, tests), body),))
    lines = host_lines((branch,), depth=1)
    assert all(len("    " + line) <= LINE_WIDTH for line in lines)  # the template indents the body by 4
    head = [line for line in lines if not line.startswith("        ")]
    assert head[0].startswith("    if (variable_number_0 == 0 &&") and head[-1] == "    }"
    condition = lines[:lines.index("        // a sum of twelve rounded terms")]
    assert all(line.startswith(" " * 12) for line in condition[1:])  # continued two levels deeper
    assert " ".join(line.strip() for line in condition) == \
        "if (" + " && ".join(f"variable_number_{i} == {i}" for i in range(12)) + ") {"
    declared = lines[len(condition) + 1:-1]
    assert declared[0].startswith("        const int64_t total = first_term + ") and declared[-1].endswith(";")
    assert " ".join(line.strip() for line in declared) == "const int64_t total = first_term + " + " + ".join(
        f"ascdsl_host::RoundUp(term_{i}, 32)" for i in range(12)) + ";"
    # what fits stays one line, with its note at the end
    assert host_lines((hk.Declare(hk.HostType.INT, hk.Ident("n"), hk.Value(1), note="one"),)) == \
        ("const int64_t n = 1;  // one",)


def test_a_long_signature_breaks_after_its_commas():
    fn = lowered()
    assert fn.signature == (
        "inline int32_t ScaleOpTiling(const ascdsl_host::TensorDesc& x, int64_t mode, "
        "const ascdsl_host::Platform& platform,",
        "        ScaleOpTilingData& tiling, uint32_t& blockDim, std::string& message)")
