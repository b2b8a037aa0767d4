"""Errors raised by the simulator."""
from __future__ import annotations

from ..errors import CompilationError, Error, Loc


class SimError(Error):
    """A kernel broke a rule the hardware enforces (or would silently punish).

    ``api`` is the Ascend C API that failed, ``block`` the block index (``None`` outside a block) and
    ``reason`` what went wrong; the message reads ``"<api>: block <n>: <reason>"``. For a GM check
    (out of bounds, two blocks writing the same bytes) ``arg`` is the index of the kernel argument
    concerned (for an access outside every buffer: the nearest one), else ``None``.
    """

    def __init__(self, reason: str, api: str | None = None, block: int | None = None, arg: int | None = None):
        self.reason, self.api, self.block, self.arg = reason, api, block, arg
        super().__init__(self.summary())

    def summary(self) -> str:
        where = [p for p in (self.api, None if self.block is None else f"block {self.block}") if p]
        return ": ".join(where + [self.reason])


class KernelSimError(SimError, CompilationError):
    """A :class:`SimError` in a kernel compiled from the DSL: located at the kernel's line that made
    the access (``loc``), naming the ``tensor`` (the pointer parameter) and the block."""

    def __init__(self, error: SimError, loc: Loc, tensor: str | None, notes: tuple[str, ...] = ()):
        self.reason, self.api, self.block, self.arg, self.tensor = error.reason, error.api, error.block, error.arg, tensor
        what = f"tensor `{tensor}`: " if tensor else ""
        CompilationError.__init__(self, loc, f"on the simulator, {what}{error.summary()}", notes=notes,
                                  hint="programs must stay inside their arrays and write disjoint elements; "
                                       "the interpreter (backend='interpreter') checks the bounds of every lane")


class SimCompileError(SimError):
    """g++ rejected the kernel; ``file`` and ``line`` locate its first diagnostic."""

    def __init__(self, diagnostic: str, file: str | None, line: int | None, output: str):
        self.diagnostic, self.file, self.line, self.output = diagnostic, file, line, output
        super().__init__(diagnostic)


class SimArgumentError(SimError, TypeError):
    """run_kernel's arguments do not match the kernel's extern "C" declaration."""
