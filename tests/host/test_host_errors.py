"""Host code and op declarations that ascdsl cannot translate are located errors at the user's line, never
Python exceptions from inside ascdsl nor C++ that fails to compile; what it can translate compiles cleanly
under g++ -Wall -Wextra -Werror, whatever the names and messages. No g++ runs where the error comes first."""
from __future__ import annotations

import re
import subprocess
import textwrap

import pytest

import ascdsl
from ascdsl import build, dtypes, verify
from ascdsl.backend.host import host
from ascdsl.backend.host.hostcode import CPP_KEYWORDS
from ascdsl.backend.plan import tiling
from ascdsl.op import load_operators
from ascdsl.platforms import get_platform
from tests.cann.headers import host_flags, needs_host_headers, type_check

PLATFORM = get_platform("Ascend910B3")
MARK = "#<"  # the line the error must point at

PRELUDE = '''\
import ascdsl
import ascdsl.language as tl


@ascdsl.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.load(x_ptr + i, mask=i < n), mask=i < n)


'''
LAUNCH = 'return ascdsl.Launch(k, grid=(ascdsl.cdiv(x.numel, 64),), scalars={"n": x.numel}, constexprs={"BLOCK": 64})'
OP = 'OP = ascdsl.Operator(name="t", op_type="T", entry=None, reference=None, {fields})'


def op_file(tmp_path, body: str, params: str = "", extra: str = "", name: str = "hosted", fields: str = "host=h") -> tuple:
    """An op file with host function ``h(x{params})`` of ``body`` (a ``LAUNCH`` line stands for the launch) and
    ``OP`` with ``fields`` and ``extra``; its path and the line marked ``#<`` (0: none)."""
    body = textwrap.indent(textwrap.dedent(body).replace("LAUNCH", LAUNCH), "    ")
    text = PRELUDE + f"@ascdsl.host\ndef h(x{params}):\n{body}\n\n" + OP.format(fields=fields + extra) + "\n"
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    line = next((i for i, t in enumerate(text.splitlines(), 1) if MARK in t), 0)
    return path, line


def header(op) -> str:
    """``op``'s tiling header for the kernel ``k`` on float32 (no g++)."""
    jit = op.host.__wrapped__.__globals__["k"]
    ptr = ascdsl.language.pointer_type(dtypes.float32)
    kernels = jit.specialize(ptr, ptr, 1, BLOCK=64).kernels
    return host.tiling_header(host.lower(op, tiling.layout("TTilingData", kernels), tiling.variants(kernels), PLATFORM),
                              "test")


def assert_located(tmp_path, body, message, params="", extra=""):
    path, line = op_file(tmp_path, body, params, extra)
    assert line, "the case marks its line"
    with pytest.raises(ascdsl.CompilationError) as info:
        header(*load_operators([path]))
    assert (info.value.loc.file, info.value.loc.line) == (str(path), line), str(info.value)
    assert message in info.value.message, str(info.value)


@pytest.mark.parametrize("body, message", [
    ("while x.ndim > 3:  #<\n    pass\nLAUNCH", "'While' is not allowed in an @ascdsl.host function"),
    ("try:  #<\n    n = 1\nexcept ValueError:\n    n = 2\nLAUNCH", "'Try' is not allowed"),
    ("with x:  #<\n    pass\nLAUNCH", "'With' is not allowed"),
    ("s = [d for d in x.shape]  #<\nLAUNCH", "'ListComp' is not allowed"),
    ("s = max(d for d in x.shape)  #<\nLAUNCH", "'GeneratorExp' is not allowed"),
    ("import math  #<\nLAUNCH", "'Import' is not allowed"),
    ("from math import ceil  #<\nLAUNCH", "'ImportFrom' is not allowed"),
    ("f = lambda: 1  #<\nLAUNCH", "'Lambda' is not allowed"),
    ("def g():  #<\n    return 1\nLAUNCH", "'FunctionDef' statements cannot be lowered"),
    ("raise ValueError(f'{x.numel!r}')  #<", "f-string conversions and format specs are not supported"),
    ("raise ValueError(f'{x.numel:5d}')  #<", "f-string conversions and format specs are not supported"),
    ("a, b = 1, 2  #<\nLAUNCH", "assign to one name at a time"),
    ("x = 3  #<\nLAUNCH", "may not assign to the parameter 'x'"),
    ("n = len(3)  #<\nLAUNCH", "len(...) cannot be called in host code"),
    ("n = x.foo  #<\nLAUNCH", "a tensor has no attribute 'foo'"),
    ("n = x.shape + 1  #<\nLAUNCH", "cannot apply Add to a shape and a int"),
    ("n = 1 if x.ndim else 'a'  #<\nLAUNCH", "both branches must have one type"),
    ("for d in x.shape:  #<\n    pass\nLAUNCH", "host loops must be `for name in range(...)`"),
    ("raise RuntimeError('no')  #<", "host code raises only ValueError(message) or TypeError(message)"),
    ("n = 100000000000000000000000  #<\nLAUNCH", "the constant 100000000000000000000000 cannot be lowered"),
    ("n = None  #<\nLAUNCH", "the constant None cannot be lowered"),
    ("return (1, 2)  #<", "a host function returns ascdsl.Launch(...)"),
    ("return ascdsl.Launch(k)  #<", "missing a required argument: 'grid'"),
    ("return ascdsl.Launch(k, grid=(1,), blocks=2)  #<", "got an unexpected keyword argument 'blocks'"),
    ("return ascdsl.Launch(k, (1,), {}, {}, 'v', 1, 2)  #<", "too many positional arguments"),
    ("return ascdsl.Launch(k, grid=(1,), **{'scalars': {}})  #<", "name the arguments of a Launch one by one"),
    ("return ascdsl.Launch(k, grid=(1,), site=None)  #<", "a Launch's site is where host code makes it"),
    ("p = ascdsl.Launch(k, grid=(1,))  #<\nreturn p", "makes its ascdsl.Launch in the return statement"),
    ("return ascdsl.Launch(k, grid=(1, 1, 1, 1))  #<", "the grid must be a tuple of 1 to 3 ints"),
    ("return ascdsl.Launch(k, grid=(1,), constexprs={1: 64})  #<", "dict literals with string keys"),
    ("n = 1\nn = 1.5  #<\nLAUNCH", "'n' is a int here and a float elsewhere"),
])
def test_unsupported_host_code_is_located(tmp_path, body, message):
    assert_located(tmp_path, body, message)


def test_an_output_shape_lambda_is_checked_where_it_is(tmp_path):
    extra = ',\n    outputs=(ascdsl.Output("out",\n                           shape=lambda x: x.numel),)  #<\n'
    assert_located(tmp_path, "LAUNCH", "an output-shape function returns a tuple of ints", extra=extra)
    extra = ',\n    outputs=(ascdsl.Output("out", shape=lambda q: (1,)),)  #<\n'
    assert_located(tmp_path, "LAUNCH", "parameter 'q' of <lambda> is not an input, an attribute or `platform`",
                   extra=extra)
    extra = ',\n    outputs=(ascdsl.Output("out", shape=lambda x: ascdsl.Launch(k, grid=(1,))),)  #<\n'
    assert_located(tmp_path, "LAUNCH", "an output-shape function makes none", extra=extra)


@pytest.mark.parametrize("fields, message", [
    ("host=3", "host must be an @ascdsl.host function, got 3"),
    ("host=len", "host must be an @ascdsl.host function, got <built-in function len>"),
    ('host=h, inputs="x"', "inputs and outputs are tuples of names"),
    ('host=h, outputs="out"', "inputs and outputs are tuples of names"),
    ("host=h, outputs=(3,)", "outputs are names or ascdsl.Output(name, shape=..., dtype=...), got 3"),
    ('host=h, outputs=(ascdsl.Output("out", shape="zz"),)', "output 'out': shape='zz' names no input (inputs: x)"),
    ('host=h, outputs=(ascdsl.Output("out", shape=(3, 4)),)', "output 'out': shape is the name of an input or a function"),
    ('host=h, outputs=(ascdsl.Output("out", dtype="float99"),)', "dtype='float99' names no input (inputs: x) and no dtype"),
    ('host=h, outputs=(ascdsl.Output("out", dtype=tl.float32),)', "output 'out': dtype is the name of an input or of a dtype"),
    ('host=h, attrs=("alpha",)', "attrs are ascdsl.Attr(name, type, default), got 'alpha'"),
    ('host=h, dtypes="float32"', "dtypes is a tuple of dtype combinations"),
    ('host=h, dtypes=("float99",)', "dtypes: 'float99' is not a dtype name"),
    ('host=h, inputs=("x", "platform")', "`platform` is the host function's platform parameter"),
    ('host=h, inputs=("x", "1y")', "input name must be an identifier"),
    ('host=h, inputs=("x", "out")', "input, output and attribute names must be distinct"),
    ('host=h, dtypes=(("float32", "float32", "float32"),)', "needs 2 entries (inputs, then outputs)"),
    ('host=h, attrs=(ascdsl.Attr("alpha", "Double"),)', "attribute 'alpha': type must be one of"),
    ("host=h, sample=3", "sample must be a function, got 3"),
    ('host=h, error_scale="abs"', "error_scale must be a function, got 'abs'"),
])
def test_operator_fields_of_the_wrong_kind_are_located_at_the_declaration(tmp_path, fields, message):
    path, _ = op_file(tmp_path, "LAUNCH", fields=fields)
    line = len(path.read_text().splitlines())
    with pytest.raises(ascdsl.CompilationError) as info:
        load_operators([path])
    assert info.value.loc.line == line and message in info.value.message, str(info.value)


# Host code that translates: its C++ compiles without a warning, in one g++ run.
CLEAN = {
    "unread_locals": ("n = x.numel // 2\nshape = x.shape[1:]\nLAUNCH", ""),
    "names_of_the_generated_code": ("programs = 1\nblocks = 2\nstd = 3\nint64_t = 4\nHostError = 5\nNumel = 6\n"
                                    "tiling = 7\nn_1 = programs + blocks + std + int64_t + HostError + Numel + tiling\n"
                                    "it1 = 0\nfor i in range(3):\n    it1 += i\nLAUNCH", ""),
    "only_raises": ("raise ValueError('a \"quoted\" \\\\ message?? with ??= and ??/ trigraphs')", ""),
    "no_return": ("n = 1", ""),
}


def test_translatable_host_code_compiles_cleanly(tmp_path):
    sources = []
    for name, (body, params) in CLEAN.items():
        path, _ = op_file(tmp_path, body, params, name=name)
        (tmp_path / f"{name}.h").write_text(header(*load_operators([path])))
        sources.append(tmp_path / f"{name}.cpp")
        sources[-1].write_text(f'#include "{name}.h"\n')
    subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", *map(str, sources)],
                   check=True, capture_output=True, text=True)


def test_no_host_variable_takes_a_name_of_the_runtime():
    runtime = host.runtime_source(PLATFORM)
    body = runtime[runtime.index("namespace ascdsl_host {"):]
    declared = set(re.findall(r"^(?:inline|constexpr) [\w:<>*& ]+? (\w+)(?: =|\()", body, re.M))
    declared |= set(re.findall(r"^(?:enum class|enum|struct) (\w+)", body, re.M))
    status = body[body.index("enum Status"):]
    declared |= set(re.findall(r"^    ([A-Z_]+) = \d", status[:status.index("};")], re.M))
    assert declared and declared <= CPP_KEYWORDS, declared - CPP_KEYWORDS


NAMED_LIKE_THE_GENERATED_CODE = '''\
import ascdsl
import ascdsl.language as tl


@ascdsl.jit
def add(blocks_ptr, Shape_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.load(blocks_ptr + i, mask=i < n) + tl.load(Shape_ptr + i, mask=i < n), mask=i < n)


@ascdsl.host
def h(blocks, Shape, Numel):
    return ascdsl.Launch(add, grid=(ascdsl.cdiv(blocks.numel, 64),), scalars={"n": blocks.numel + Numel},
                         constexprs={"BLOCK": 64})


def entry(blocks, Shape, Numel=0, *, platform=None, backend=None):
    out = blocks.copy()
    h(ascdsl.TensorDesc.of(blocks), ascdsl.TensorDesc.of(Shape), Numel)(blocks, Shape, out, backend=backend)
    return out


OP = ascdsl.Operator(name="named", op_type="Named", entry=entry, host=h, reference=None, inputs=("blocks", "Shape"),
                     attrs=(ascdsl.Attr("Numel", "Int", 0),), cases=[ascdsl.Case((100,), (100,))],
                     dtypes=("float32",))
'''


@needs_host_headers
def test_tensors_and_attributes_named_like_the_generated_code_build_an_op_project(tmp_path):
    """The tiling function's parameters and op_host.cpp's variables take another C++ name (``blocks_``); the
    op project type-checks against CANN."""
    path = tmp_path / "named.py"
    path.write_text(NAMED_LIKE_THE_GENERATED_CODE)
    b = build.plan(*load_operators([path]), PLATFORM)
    folder = build.write(b, tmp_path / "out") / "op_project" / "op_host"
    assert "NamedTiling(blocks_, Shape_, Numel_, platform" in (folder / f"{b.project_name}.cpp").read_text()
    type_check(host_flags(), folder / f"{b.project_name}.cpp", folder)


NAMED_LIKE_THE_TEMPLATES = '''\
import numpy as np

import ascdsl
import ascdsl.language as tl


@ascdsl.jit
def k(a_ptr, b_ptr, c_ptr, out_ptr, scale, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + i, mask=i < n)
    b = tl.load(b_ptr + i, mask=i < n)
    tl.store(out_ptr + i, scale * a + b - tl.load(c_ptr + i, mask=i < n), mask=i < n)


@ascdsl.host
def h(message, shapes, dir, tiling, std, attrs, message_, uint8_t):
    return ascdsl.Launch(k, grid=(ascdsl.cdiv(message.numel, 64),), constexprs={"BLOCK": 64},
                         scalars={"scale": std * tiling + attrs + message_ + uint8_t, "n": message.numel})


@ascdsl.entry
def entry(message, shapes, dir, tiling=2, std=0.5, attrs=0.25, message_=1.0, uint8_t=4, *, platform=None,
          backend=None):
    out = np.empty_like(message)
    desc = ascdsl.TensorDesc.of
    h(desc(message), desc(shapes), desc(dir), tiling, std, attrs, message_, uint8_t)(
        message, shapes, dir, out, backend=backend, platform=platform)
    return out


def reference(message, shapes, dir, tiling=2, std=0.5, attrs=0.25, message_=1.0, uint8_t=4):
    return (std * tiling + attrs + message_ + uint8_t) * message + shapes - dir


OP = ascdsl.Operator(name="named", op_type="Named", entry=entry, host=h, reference=reference,
                     inputs=("message", "shapes", "dir"),
                     attrs=(ascdsl.Attr("tiling", "Int", 2), ascdsl.Attr("std", "Float", 0.5),
                            ascdsl.Attr("attrs", "Float", 0.25), ascdsl.Attr("message_", "Float", 1.0),
                            ascdsl.Attr("uint8_t", "Int", 4)),
                     cases=[ascdsl.Case((100,), (100,), (100,), tiling=3, std=-0.5)], dtypes=("float32",))
'''


def built_named_like_the_templates(tmp_path) -> tuple[build.OpBuild, object]:
    path = tmp_path / "named.py"
    path.write_text(NAMED_LIKE_THE_TEMPLATES)
    b = build.plan(*load_operators([path]), PLATFORM)
    return b, build.write(b, tmp_path / "out")


def test_tensors_and_attributes_named_like_the_locals_of_main_cpp_run(tmp_path):
    """Inputs and attributes named like what main.cpp and op_host.cpp declare or use (``message``, ``shapes``,
    ``tiling``, ``std``, ``attrs``, ``dir``, ``uint8_t``, and ``message_``, what ``message`` becomes where it is
    taken): the direct-launch program compiles and computes the reference."""
    b, folder = built_named_like_the_templates(tmp_path)
    assert [(c.ok, c.message) for c in verify.verify_main(b, folder, tmp_path / "run")] == [(True, "")]


@needs_host_headers
def test_tensors_and_attributes_named_like_the_locals_of_op_host_cpp_type_check(tmp_path):
    b, folder = built_named_like_the_templates(tmp_path)
    op_host = folder / "op_project" / "op_host"
    type_check(host_flags(), op_host / f"{b.project_name}.cpp", op_host)


@pytest.mark.parametrize("extra, message", [
    (', inputs=("x",)', "the op has no input or attribute of that name"),
    ("", "the op takes it for input tensor 2 of (x, scale), and a case gives 1 input shape"),
])
def test_a_host_parameter_the_op_cannot_give_is_located_at_it(tmp_path, extra, message):
    path, _ = op_file(tmp_path, "LAUNCH", params=", scale", extra=extra + ", cases=[ascdsl.Case((10,))]")
    with pytest.raises(ascdsl.CompilationError) as info:
        build.case_kernels(*load_operators([path]), PLATFORM)
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if t.startswith("def h("))
    assert (info.value.loc.line, info.value.loc.col) == (line, 10), str(info.value)
    assert f"`h` takes `scale`, which the op cannot give it: {message}" in info.value.message
    assert "declare it in Operator(attrs=...)" in info.value.hint
