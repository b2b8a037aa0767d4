"""The op protocol: host functions, cases, loading op files, tolerance comparison."""
import ast
from pathlib import Path

import numpy as np
import pytest

import ascdsl
from ascdsl import dtypes
from ascdsl.op import Case, TensorDesc, host, load_operators
from ascdsl.testing import assert_close, close


def test_host_errors_are_value_and_type_errors():
    @host
    def plan(x, platform):
        if x.ndim == 0:
            raise ValueError("rank 0 is not supported")
        if x.dtype.name == "int8":
            raise TypeError("int8 is not supported")
        return x.numel

    assert plan(TensorDesc((2, 3), dtypes.float32), None) == 6
    with pytest.raises(ascdsl.InputValueError, match="rank 0") as e:
        plan(TensorDesc((), dtypes.float32), None)
    assert isinstance(e.value, ValueError) and isinstance(e.value, ascdsl.Error)
    with pytest.raises(TypeError, match="int8"):
        plan(TensorDesc((4,), dtypes.int8), None)


@pytest.mark.parametrize("body, construct, line_offset, col", [
    ("    while x:\n        pass\n    return 1\n", "While", 1, 5),
    ("    return [d for d in x.shape]\n", "ListComp", 1, 12),
    ("    y = lambda: 1\n    return y\n", "Lambda", 1, 9),
    ("    return x ** 2\n", "Pow", 1, 12),
])
def test_host_subset_is_checked_at_decoration_with_location(tmp_path, monkeypatch, body, construct,
                                                           line_offset, col):
    monkeypatch.chdir(tmp_path)
    src = tmp_path / "hostmod.py"
    src.write_text("import ascdsl\n\n\n@ascdsl.host\ndef plan(x):\n" + body)
    with pytest.raises(ascdsl.CompilationError) as e:
        load_operators([src])
    first = str(e.value).splitlines()[0]
    assert first.startswith(f"hostmod.py:{5 + line_offset}:{col}: error: '{construct}' is not allowed")
    assert "^" in str(e.value)


def test_case_inputs_are_deterministic_and_typed():
    case = Case((2, 3), (2, 3), dtype="bfloat16", dim=-1)
    a, b = case.inputs()
    a2, _ = case.inputs()
    assert a.dtype == dtypes.bfloat16.np and a.shape == (2, 3)
    assert np.array_equal(a.view(np.uint16), a2.view(np.uint16))
    assert not np.array_equal(a.view(np.uint16), b.view(np.uint16))
    assert case.label == "2x3 2x3 bfloat16 dim=-1"


def test_load_operators_requires_op(tmp_path):
    (tmp_path / "not_an_op.py").write_text("X = 1\n")
    with pytest.raises(ascdsl.InputValueError, match="must define OP"):
        load_operators([tmp_path])


def test_close_uses_the_dtype_tolerance_table():
    e = np.array([1.0, 100.0, np.nan, np.inf])
    f16 = dtypes.float16
    ok = close(np.array([1.0 + 1e-3, 100.1, np.nan, np.inf]), e, f16)
    assert ok.tolist() == [True, True, True, True]
    assert close(np.array([1.01]), np.array([1.0]), f16).tolist() == [False]
    assert close(np.array([1.0]), np.array([1.0 + 1e-7]), dtypes.int32).tolist() == [False]
    with pytest.raises(AssertionError, match="1 of 2 elements differ"):
        assert_close(np.array([1.0, 2.0], np.float32), np.array([1.0, 2.1]))


def test_close_can_measure_error_against_the_magnitude_of_cancelling_terms():
    expected, actual = np.array([1e-3]), np.array([1e-3 + 5e-6])
    assert not close(actual, expected, dtypes.float32).all()
    assert close(actual, expected, dtypes.float32, scale=np.array([1.0])).all()


def test_an_op_renders_its_own_templates_strictly(tmp_path):
    (tmp_path / "api.cpp.j2").write_text("{% for k in kernels %}void {{ k }}();\n{% endfor %}")
    assert ascdsl.render_template(tmp_path / "api.cpp.j2", kernels=["a", "b"]) == "void a();\nvoid b();\n"
    (tmp_path / "missing.cpp.j2").write_text("void {{ name }}();\n")
    with pytest.raises(Exception, match="'name' is undefined"):
        ascdsl.render_template(tmp_path / "missing.cpp.j2")


def test_ops_reach_only_the_public_api():
    """An op module imports ``ascdsl`` and its public modules, never the compiler's internals."""
    internal = ("ascdsl.backend", "ascdsl.passes", "ascdsl.frontend", "ascdsl.ir", "ascdsl.interpreter")
    for path in sorted((Path(__file__).parents[1] / "ops").glob("*.py")):
        imported = {name for node in ast.walk(ast.parse(path.read_text())) for name in (
            [a.name for a in node.names] if isinstance(node, ast.Import)
            else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])}
        assert not {n for n in imported if n.startswith(internal)}, (path.name, imported)
