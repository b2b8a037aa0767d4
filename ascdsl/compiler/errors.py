"""``triton.compiler.errors``: ascdsl's located compile errors under Triton's names."""
from ..errors import CompilationError

CompileTimeAssertionFailure = CompilationError
"""A failed ``tl.static_assert`` (an ascdsl :class:`CompilationError`, as every compile error is)."""

__all__ = ["CompilationError", "CompileTimeAssertionFailure"]
