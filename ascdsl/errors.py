"""Errors users see. Every error ascdsl raises derives from :class:`Error`.

Located errors (:class:`CompilationError` and subclasses) render like a compiler's::

    ops/foo.py:12:9: error: cannot broadcast shapes (128,) and (64,)
       12 |     y = x + z
          |         ^
    hint: make both tiles the same length, or expand one with [:, None]
"""
from __future__ import annotations

import contextlib
import contextvars
import linecache
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Loc:
    """A source location: file path (absolute as ascdsl records it; shown relative to the working
    directory when inside it), 1-based line and 1-based column."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{display_path(self.file)}:{self.line}:{self.col}"


UNKNOWN = Loc("<unknown>", 0, 0)


def source_file(path: str) -> str:
    """``path`` as a :class:`Loc` records it: absolute, so that it means the same after a ``chdir``."""
    return path if path.startswith("<") else os.path.abspath(path)


def display_path(path: str) -> str:
    """The path as users should read it: relative to the working directory when inside it."""
    if path.startswith("<"):
        return path
    absolute = os.path.abspath(path)
    try:
        rel = os.path.relpath(absolute, os.getcwd())
    except FileNotFoundError:  # the working directory was removed
        return absolute
    return absolute if rel.startswith("..") else rel


_SOURCE_ROOT: contextvars.ContextVar[str | None] = contextvars.ContextVar("ascdsl_source_root", default=None)


@contextlib.contextmanager
def source_root(folder: str | os.PathLike) -> Iterator[None]:
    """Inside, generated files (``// file.py:LINE`` comments, IR locations, manifests) name source
    files relative to ``folder``: what makes a build the same from any working directory."""
    token = _SOURCE_ROOT.set(os.path.abspath(folder))
    try:
        yield
    finally:
        _SOURCE_ROOT.reset(token)


def source_root_in_effect() -> str | None:
    """The folder of the :func:`source_root` in effect, or None: a cache of text that names source files
    keys on it (that text differs from one root to another)."""
    return _SOURCE_ROOT.get()


def source_path(path: str) -> str:
    """How generated text names a source file: relative to the :func:`source_root` in effect (with
    ``/`` separators), else as :func:`display_path` shows it."""
    root = _SOURCE_ROOT.get()
    if root is None or path.startswith("<"):
        return display_path(path)
    return os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")


def source_line(loc: Loc) -> str | None:
    if loc.line <= 0:
        return None
    text = linecache.getline(os.path.abspath(loc.file), loc.line)
    return text.rstrip("\n") if text else None


class Error(Exception):
    """Base class of every error ascdsl raises on purpose."""


class CompilationError(Error):
    """An error in user code, located at ``loc`` (the message starts with ``path:LINE:COL``)."""

    def __init__(self, loc: Loc, message: str, hint: str | None = None, notes: tuple[str, ...] = ()):
        self.loc, self.message, self.hint, self.notes = loc, message, hint, tuple(notes)
        super().__init__(self.render())

    def render(self) -> str:
        lines = [f"{self.loc}: error: {self.message}"]
        text = source_line(self.loc)
        if text is not None:
            gutter = f"{self.loc.line:>6} | "
            lines.append(gutter + text)
            lines.append(" " * (len(gutter) - 2) + "| " + " " * max(self.loc.col - 1, 0) + "^")
        lines += [f"note: {n}" for n in self.notes]
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)

    def with_note(self, note: str) -> "CompilationError":
        """The same error with one more note (e.g. the call site of a helper function); a subclass's fields (a
        :class:`UBOverflowError`'s sizes) kept."""
        err = type(self).__new__(type(self))
        err.__dict__.update(self.__dict__)
        CompilationError.__init__(err, self.loc, self.message, self.hint, self.notes + (note,))
        return err


class UBOverflowError(CompilationError):
    """A kernel's UB plan exceeds the platform's budget. Raised at the kernel's largest buffer; an op's
    launch re-raises it at the host line that chose the launch's constexprs (:meth:`at_launch`)."""

    def __init__(self, loc: Loc, message: str, hint: str | None = None, notes: tuple[str, ...] = (),
                 needed: int = 0, budget: int = 0, platform: str = "", buffers: str = ""):
        self.needed, self.budget, self.platform, self.buffers = needed, budget, platform, buffers
        super().__init__(loc, message, hint, notes)

    def at_launch(self, site: Loc, kernel: str, constexprs: dict) -> "UBOverflowError":
        """The error located at ``site``, the host line whose launch of ``kernel`` chose ``constexprs``."""
        values = ", ".join(f"{k}={v}" for k, v in constexprs.items()) or "no constexprs"
        return UBOverflowError(
            site, f"this launch of {kernel} ({values}) needs {self.needed} bytes of UB, more than the "
            f"{self.budget} bytes {self.platform} allows: {self.buffers}", self.hint,
            (f"the largest buffer is the tile at {self.loc}",) + self.notes,
            self.needed, self.budget, self.platform, self.buffers)


def caller_site(depth: int = 1) -> Loc:
    """Where user code called into ascdsl: the first frame outside the package, from ``depth`` frames
    up (1: the caller of the function that asks)."""
    frame = sys._getframe(depth + 1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame = frame.f_back
    if frame is None:
        return UNKNOWN
    positions = list(frame.f_code.co_positions())
    col = positions[frame.f_lasti // 2][2] if frame.f_lasti // 2 < len(positions) else None
    return Loc(source_file(frame.f_code.co_filename), frame.f_lineno, (col or 0) + 1)


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def raised_in_package(e: BaseException) -> bool:
    """Whether ``e`` was raised in ascdsl's own files (its traceback's innermost frame): from a
    ``ValueError``/``TypeError`` that is no :class:`Error`, an internal error, not a user's mistake."""
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(_PACKAGE)


class OutOfBoundsError(CompilationError, IndexError):
    """An unmasked load or store outside its array, found while running a kernel."""


class DeviceAssertionError(CompilationError, AssertionError):
    """A ``tl.device_assert`` (in a kernel compiled with ``debug=True``) failed while running."""


class PoisonError(CompilationError, ValueError):
    """Checking mode (``debug=True``): a store wrote a value computed from a masked-off lane of a
    ``tl.load`` without ``other``."""


class InputValueError(Error, ValueError):
    """An op entry point was called with an invalid value (shape, axis, attribute)."""


class DeclarationError(CompilationError, InputValueError):
    """A bad value in an op declaration (a name, a dtype combination), located at the user's
    ``Operator(...)`` or ``Attr(...)`` line; still an :class:`InputValueError`."""


class InputTypeError(Error, TypeError):
    """An op entry point was called with an invalid type (e.g. an unsupported dtype)."""
