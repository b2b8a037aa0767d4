"""``tl.extra.cann``: what the Ascend Triton backend adds (its ``libdevice`` and ``extension``)."""
from . import extension, libdevice

__all__ = ["extension", "libdevice"]
