"""The marker of a builtin: every function of ``tl`` that the frontend emits IR for is one (see
:mod:`ascdsl.language`). The frontend recognises a marker by identity; its signature and docstring are
the contract.
"""
from __future__ import annotations

import functools

from ..errors import Error


def builtin(fn):
    """Mark ``fn`` as a DSL builtin: its body never runs; outside a kernel calling it is an error."""

    @functools.wraps(fn)
    def marker(*args, **kwargs):
        raise Error(f"tl.{fn.__name__}() can only be called inside an @ascdsl.jit function")

    return marker
