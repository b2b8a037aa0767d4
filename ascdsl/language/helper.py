"""Functions written in the language that kernels call, such as ``libdevice.erfinv``.

``@helper`` marks one, as ``@ascdsl.jit`` marks a helper of a user's kernel: the frontend parses its
source on the first call from a kernel and inlines it at each call. The language defines its own helpers
with it (:mod:`.extra.special`), because :mod:`ascdsl.jit` compiles through the frontend, which imports
the language.
"""
from __future__ import annotations

import functools
from typing import Callable

from ..errors import Error


class Helper:
    """A function written in the language: ``fn`` is kept (with its signature and docstring);
    called outside a kernel it raises :class:`ascdsl.Error`."""

    def __init__(self, fn: Callable):
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __repr__(self) -> str:
        return f"<ascdsl helper {self.__module__}.{self.__qualname__}>"

    def __call__(self, *args, **kwargs):
        raise Error(f"`{self.__name__}` is written in the ascdsl language: call it from an @ascdsl.jit function")


def helper(fn: Callable) -> Helper:
    """Mark ``fn`` as a :class:`Helper`."""
    return Helper(fn)
