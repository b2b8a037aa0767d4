"""``triton.runtime.libentry``: the Ascend/FlagGems launch-caching decorator, ``@libentry()``.

Its job (caching launch metadata in front of ``@triton.jit``) is what :class:`ascdsl.JITFunction`
already does, so it returns the kernel unchanged."""
from __future__ import annotations


def libentry(*args, **kwargs):
    """``@libentry()`` over ``@triton.jit`` (or ``@triton.autotune``): the kernel unchanged."""
    return lambda fn: fn


__all__ = ["libentry"]
