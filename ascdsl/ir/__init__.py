"""Tile IR: data structures (:mod:`.core`), a builder, and the text form (``dump``/``parse``)."""
from .builder import Builder
from .core import Block, GroupOp, Instr, Kernel, Module, Op, Type, Value, walk

__all__ = ["Block", "Builder", "GroupOp", "Instr", "Kernel", "Module", "Op", "Type", "Value", "walk"]
from .text import IRParseError, dump, parse  # noqa: E402

__all__ += ["IRParseError", "dump", "parse"]
