"""Run unmodified Triton code on ascdsl: ``ascdsl.triton_alias.install()`` makes ``import triton``,
``import triton.language as tl``, ``from triton.language.extra.cann import libdevice``,
``triton.runtime.driver``, ``triton.testing``... import the ascdsl modules of the same name (one
module object per name, so ``tl.load`` is ascdsl's builtin wherever it is imported from).

Install it before the Triton code is imported (for example in a ``conftest.py``); it does not
mix with a real ``triton`` installed in the same process.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

ALIAS = "triton"


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the submodules of an alias of ascdsl as the ascdsl modules of the same name: ``triton[.X]``
    once :func:`install` ran, and ``name.X`` wherever ``sys.modules["name"]`` was set by hand to
    ascdsl or one of its modules (``sys.modules["triton"] = ascdsl``): a module is the same module
    whatever name it is imported under, so a kernel sees ascdsl's builtins and libdevice."""

    def __init__(self) -> None:
        self.specs: dict = {}
        self.alias = False  # install() ran: ``triton`` is ascdsl even before it is in sys.modules

    def real_name(self, fullname: str) -> str | None:
        top, dot, rest = fullname.partition(".")
        if top == "ascdsl":
            return None
        module = sys.modules.get(top)
        name = getattr(module, "__name__", None) if module is not None else None
        if isinstance(name, str) and (name == "ascdsl" or name.startswith("ascdsl.")):
            return name + dot + rest
        if top == ALIAS and self.alias and module is None:
            return "ascdsl" + dot + rest
        return None

    def find_spec(self, fullname, path=None, target=None):
        real = self.real_name(fullname)
        if real is None or importlib.util.find_spec(real) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=True)

    def create_module(self, spec):
        module = importlib.import_module(self.real_name(spec.name))
        self.specs[module.__name__] = module.__spec__
        return module

    def exec_module(self, module):
        # already executed under its ascdsl name; keep its own spec (the import system set ours)
        module.__spec__ = self.specs[module.__name__]


def _finder() -> _Finder:
    """The one finder, first on ``sys.meta_path`` (put there when ascdsl is imported)."""
    found = next((f for f in sys.meta_path if isinstance(f, _Finder)), None)
    if found is None:
        found = _Finder()
        sys.meta_path.insert(0, found)
    return found


def install() -> None:
    """Make ``triton`` and its submodules resolve to ascdsl's (idempotent)."""
    if ALIAS in sys.modules and getattr(sys.modules[ALIAS], "__name__", "") != "ascdsl":
        raise ImportError("a real `triton` is already imported; install the ascdsl alias before it")
    _finder().alias = True


_finder()

__all__ = ["install"]
