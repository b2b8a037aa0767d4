"""``tl.extra.cann``: what the Ascend Triton backend adds (its ``libdevice``)."""
from . import libdevice

__all__ = ["libdevice"]
