"""``triton.language.extra.cann.libdevice``: the same functions as :mod:`..libdevice`."""
from ..libdevice import *  # noqa: F403
from ..libdevice import __all__  # noqa: F401
from .. import libdevice as _libdevice


def __getattr__(name: str):
    if name in _libdevice.SPECIAL:
        return getattr(_libdevice, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
