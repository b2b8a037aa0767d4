"""``tl.extra``: vendor math libraries, as Triton names them (``libdevice``, ``cann.libdevice``)."""
from . import cann, libdevice

__all__ = ["cann", "libdevice"]
