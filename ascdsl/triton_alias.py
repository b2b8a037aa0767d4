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
    """Finds ``triton[.X]`` as the already-imported or importable ``ascdsl[.X]``."""

    def __init__(self) -> None:
        self.specs: dict = {}

    def find_spec(self, fullname, path=None, target=None):
        if fullname != ALIAS and not fullname.startswith(ALIAS + "."):
            return None
        real = "ascdsl" + fullname[len(ALIAS):]
        if importlib.util.find_spec(real) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=True)

    def create_module(self, spec):
        module = importlib.import_module("ascdsl" + spec.name[len(ALIAS):])
        self.specs[module.__name__] = module.__spec__
        return module

    def exec_module(self, module):
        # already executed under its ascdsl name; keep its own spec (the import system set ours)
        module.__spec__ = self.specs[module.__name__]


def install() -> None:
    """Make ``triton`` and its submodules resolve to ascdsl's (idempotent)."""
    if ALIAS in sys.modules and getattr(sys.modules[ALIAS], "__name__", "") != "ascdsl":
        raise ImportError("a real `triton` is already imported; install the ascdsl alias before it")
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


__all__ = ["install"]
