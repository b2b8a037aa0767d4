"""Errors raised by the simulator."""
from __future__ import annotations

from ..errors import Error


class SimError(Error):
    """A kernel broke a rule the hardware enforces (or would silently punish).

    ``api`` is the Ascend C API that failed, ``block`` the block index (``None`` outside a block) and
    ``reason`` what went wrong; the message reads ``"<api>: block <n>: <reason>"``.
    """

    def __init__(self, reason: str, api: str | None = None, block: int | None = None):
        self.reason, self.api, self.block = reason, api, block
        where = [p for p in (api, None if block is None else f"block {block}") if p]
        super().__init__(": ".join(where + [reason]))


class SimCompileError(SimError):
    """g++ rejected the kernel; ``file`` and ``line`` locate its first diagnostic."""

    def __init__(self, diagnostic: str, file: str | None, line: int | None, output: str):
        self.diagnostic, self.file, self.line, self.output = diagnostic, file, line, output
        super().__init__(diagnostic)


class SimArgumentError(SimError, TypeError):
    """run_kernel's arguments do not match the kernel's extern "C" declaration."""
