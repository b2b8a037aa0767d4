"""Instruction selection state: which buffer and which scalar expression each tile-IR value has.

:class:`Selector` joins the kernel's facts (:mod:`.facts`), its buffers (:mod:`.buffers`: every tile value gets a
logical :class:`~.kir.Buf` the UB planner maps to a slot; a column's ``Brcb`` blocks made once for users all in its
stage: :attr:`Selector.brcbs`) and its scalars (:mod:`.scalars`). Its shared vocabulary is :mod:`.support`.
"""
from __future__ import annotations

from ...ir.core import Kernel
from ...platforms import Platform
from .. import kir
from ..kir import Buf, Ref, Var
from .buffers import BufferAssignment
from .scalars import ScalarSelection


class Selector(BufferAssignment, ScalarSelection):
    """One kernel's selection state: value -> buffer and value -> scalar expression."""

    def __init__(self, kernel: Kernel, platform: Platform, general: bool = False):
        super().__init__(kernel, platform, general)
        self.next_key, self.next_var = 0, -1  # the last buffer key and variable key handed out
        self.bufs: dict[int, Buf] = {}  # value id -> buffer its users read
        self.inbuf: dict[int, Buf] = {}  # load value id -> its INPUT buffer (when copied to a TILE buffer)
        self.held: dict[int, Buf] = {}  # load value id -> its queue buffer, held to the program's end (:meth:`holds`)
        self.outbuf: dict[int, Buf] = {}  # id(block_store) -> its OUTPUT buffer
        self.scalars: dict[int, kir.Expr] = {}
        self.members: list[Var] = []
        self.brcbs: dict[int, Ref] = {}  # a fused [M, 1] broadcast -> its Brcb blocks (:func:`.reduce.brcb`)
        self.segments = 0
        self._assign_buffers()
