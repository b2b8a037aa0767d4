"""The language imports without the compiler: its functions written in the language (``tl.swizzle2d``,
``libdevice.erfinv``...) are ordinary module attributes, in every import order (issue 25)."""
from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl.language.extra import cann, libdevice

ROOT = Path(__file__).resolve().parents[1]


def run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_no_module_getattr():
    for module in (tl, libdevice, cann.libdevice):
        assert "__getattr__" not in vars(module), module.__name__
    assert "swizzle2d" in tl.__all__ and {"erfinv", "lgamma", "tgamma"} <= set(libdevice.__all__) <= set(dir(cann.libdevice))
    assert cann.libdevice.tgamma is libdevice.gamma


@pytest.mark.parametrize("first", ["import ascdsl", "import ascdsl.language as tl",
                                   "from ascdsl.language.extra import libdevice"])
def test_every_import_order(first):
    assert run(f"""
        {first}
        import ascdsl.language as tl
        from ascdsl.language.extra import libdevice
        from ascdsl.language.extra.cann.libdevice import *
        print(tl.swizzle2d.__name__, libdevice.erfinv.__name__, cyl_bessel_i0.__name__, lgamma.__name__)
    """) == "swizzle2d erfinv cyl_bessel_i0 lgamma"


def test_the_language_does_not_import_the_compiler():
    """``ascdsl/__init__`` is skipped (it imports the jit): the language alone must not reach it."""
    assert run(f"""
        import sys, types
        package = types.ModuleType("ascdsl")
        package.__path__ = [{str(Path(ascdsl.__file__).parent)!r}]
        sys.modules["ascdsl"] = package
        import ascdsl.language as tl
        from ascdsl.language.extra import libdevice
        tl.swizzle2d, libdevice.erfinv, libdevice.tgamma
        print(sorted(m for m in sys.modules if m.startswith(("ascdsl.jit", "ascdsl.frontend"))))
    """) == "[]"


def test_a_helper_called_outside_a_kernel():
    with pytest.raises(ascdsl.Error, match=r"`erfinv` is written in the ascdsl language: call it from an @ascdsl.jit"):
        libdevice.erfinv(1.0)
    assert str(inspect.signature(tl.swizzle2d)) == "(i, j, size_i, size_j, size_g)"
    assert tl.swizzle2d.__doc__.startswith("Triton's ``tl.swizzle2d``")


@ascdsl.jit
def erfinv_of_a_pointer(x_ptr):
    tl.store(x_ptr, libdevice.erfinv(x_ptr))


def test_an_error_inside_a_helper_is_at_the_users_call():
    with pytest.raises(ascdsl.CompilationError) as info:
        erfinv_of_a_pointer.specialize(tl.pointer_type(tl.float32))
    assert info.value.loc.file.endswith("test_language_imports.py") and "cannot cast ptr<f32>" in info.value.message
    assert (info.value.loc.line, info.value.loc.col) == (erfinv_of_a_pointer.fn.__code__.co_firstlineno + 2, 21)
    assert "inside ascdsl's `erfinv`" in info.value.notes
