"""``triton.language.extra.cann.libdevice``: the same functions as :mod:`..libdevice`."""
from ..libdevice import *  # noqa: F403
from ..libdevice import __all__  # noqa: F401
