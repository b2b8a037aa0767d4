"""Atomics on the Ascend C backend: ``tl.atomic_add``/``max``/``min`` whose old values nobody reads.

Memory-access analysis turns them into block stores with an ``atomic`` attribute; their CopyOut is
the store's ``DataCopy``/``DataCopyPad`` between ``SetAtomicAdd<T>()`` (``Max``, ``Min``) and
``SetAtomicNone()``: the DMA engine combines each element with GM as it writes it (A2 supports half,
float, bfloat16_t, int8_t, int16_t and int32_t), so programs on different cores may hit the same
addresses. What A2 cannot do with atomics is a located error in :mod:`.limits`.
"""
from __future__ import annotations

from ..ir.core import Instr, Op
from .kir import Call, Pipe

SET_ATOMIC = {Op.ATOMIC_ADD.value: "SetAtomicAdd", Op.ATOMIC_MAX.value: "SetAtomicMax",
              Op.ATOMIC_MIN.value: "SetAtomicMin"}
"""The ``atomic`` attribute of a block store -> the API that turns its copies into read-modify-writes."""


def around(instr: Instr, dtype, copies: list) -> list:
    """``copies`` (the CopyOut of block store ``instr``), made atomic when the store is an atomic."""
    atomic = instr.attr("atomic")
    if atomic is None:
        return copies
    return [Call(SET_ATOMIC[atomic], None, (), template=dtype, pipe=Pipe.MTE3, loc=instr.loc), *copies,
            Call("SetAtomicNone", None, (), pipe=Pipe.MTE3)]
