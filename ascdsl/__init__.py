"""ascdsl: a Triton-style tile DSL that compiles operators to Ascend C."""
from .errors import CompilationError, Error, InputTypeError, InputValueError, Loc, OutOfBoundsError

__all__ = ["CompilationError", "Error", "InputTypeError", "InputValueError", "Loc", "OutOfBoundsError"]
