"""Hostile or mistyped names and strings are refused where they enter: the op declaration, its
attributes, host-function messages; build outputs stay inside ``-o``."""
from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import ascdsl
from ascdsl import build, cli
from ascdsl.platforms import get_platform

OPS = Path(__file__).parents[2] / "ops"


def op_file(tmp_path: Path, **replace: str) -> Path:
    """ops/scale_add.py with some text replaced, in a folder of its own."""
    text = (OPS / "scale_add.py").read_text()
    for old, new in replace.items():
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "src" / "scale_add.py"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize("op_type", ["../../../escaped/Pwn", "/tmp/abs/Pwn", "", ".", "Scale\nint x;",
                                     "scaleAdd", "Scale-Add", "Scale_Add", "Scale\x00Add"])
def test_op_type_must_be_a_camel_case_name(tmp_path, capsys, op_type):
    path = op_file(tmp_path, **{'op_type="ScaleAdd"': f"op_type={op_type!r}"})
    assert cli.main(["build", str(path), "-o", str(tmp_path / "out" / "build"), "--no-verify"]) == 1
    assert "op_type must be a CamelCase name" in capsys.readouterr().err
    assert not (tmp_path / "out").exists() and not (tmp_path / "escaped").exists()


@pytest.mark.parametrize("field, value", [("name", "scale add"), ("name", "a/../b"), ("inputs", ("x", "1y")),
                                          ("inputs", ("x", "class")), ("outputs", ("out\n",)),
                                          ("inputs", ("x", "__y"))])
def test_operator_and_tensor_names_must_be_identifiers(field, value):
    from ops_scale_add import OP
    kwargs = dict(name=OP.name, op_type=OP.op_type, entry=OP.entry, host=OP.host, reference=OP.reference,
                  inputs=OP.inputs, outputs=("out",), attrs=OP.attrs)
    kwargs[field] = value
    with pytest.raises(ascdsl.InputValueError, match="name") as info:
        line = inspect.currentframe().f_lineno + 1
        ascdsl.Operator(**kwargs)
    assert isinstance(info.value, ascdsl.CompilationError)
    assert (Path(info.value.loc.file), info.value.loc.line) == (Path(__file__), line)


@pytest.fixture(autouse=True)
def scale_add_module(monkeypatch):
    import importlib.util
    import sys
    spec = importlib.util.spec_from_file_location("ops_scale_add", OPS / "scale_add.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setitem(sys.modules, "ops_scale_add", module)


@pytest.mark.parametrize("name", ["is front", "1st", "a-b", "", "int", "x\ny"])
def test_attribute_names_must_be_identifiers(name):
    with pytest.raises(ascdsl.InputValueError, match="attribute name") as info:
        line = inspect.currentframe().f_lineno + 1
        ascdsl.Attr(name, "Int", 0)
    assert isinstance(info.value, ascdsl.CompilationError)
    assert (Path(info.value.loc.file), info.value.loc.line) == (Path(__file__), line)


@pytest.mark.parametrize("default", ["a\rb", "a\x00b", "line\nbreak", "\x1b[31m"])
def test_string_attribute_defaults_have_no_control_characters(default):
    with pytest.raises(ascdsl.InputValueError, match="attribute 'mode': the default must not contain"):
        ascdsl.Attr("mode", "String", default)
    assert ascdsl.Attr("mode", "String", 'quote " and \\ are fine').default


def test_host_messages_have_no_control_characters(tmp_path):
    path = op_file(tmp_path, **{'raise ValueError(f"x and y must': 'raise ValueError(f"x\\ry must'})
    with pytest.raises(ascdsl.CompilationError) as info:
        cli.load_operators([path])
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "x\\ry must" in t)
    assert f"scale_add.py:{line}:" in str(info.value) and "control characters" in str(info.value)


def test_docstrings_of_host_functions_may_span_lines(tmp_path):
    path = op_file(tmp_path, **{"def scale_add_host(x, y, alpha, platform):\n":
                                'def scale_add_host(x, y, alpha, platform):\n    """Two\n    lines."""\n'})
    assert cli.load_operators([path])[0].op_type == "ScaleAdd"


def test_build_outputs_stay_inside_the_output_folder(tmp_path):
    from ops_scale_add import OP
    b = build.plan(OP, get_platform("Ascend910B3"))
    out, outside = tmp_path / "out", tmp_path / "outside"
    (out / "scale_add").mkdir(parents=True)
    outside.mkdir()
    (out / "scale_add" / "kernel").symlink_to(outside)  # planted link out of the folder
    with pytest.raises(ascdsl.Error, match="outside the output folder"):
        build.write(b, out)
    assert list(outside.iterdir()) == []
    (out / "scale_add" / "kernel").unlink()
    folder = build.write(b, out)
    assert folder.resolve() == (out / "scale_add").resolve()
    assert all(p.resolve().is_relative_to(out.resolve()) for p in out.rglob("*"))
