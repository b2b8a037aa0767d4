"""ascdsl: a Triton-style tile DSL that compiles operators to Ascend C."""
from .errors import CompilationError, Error, InputTypeError, InputValueError, Loc, OutOfBoundsError
from .op import Case, Launch, Operator, TensorDesc, host

__all__ = ["CompilationError", "Error", "InputTypeError", "InputValueError", "Loc", "OutOfBoundsError",
           "Case", "Launch", "Operator", "TensorDesc", "host"]
