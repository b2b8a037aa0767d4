"""ascdsl: a Triton-style tile DSL that compiles operators to Ascend C."""
from .errors import CompilationError, Error, InputTypeError, InputValueError, Loc, OutOfBoundsError
from .op import Case, Launch, Operator, TensorDesc, host
from . import language
from .jit import JITFunction, jit
from .language import cdiv, next_power_of_2

__all__ = ["CompilationError", "Error", "InputTypeError", "InputValueError", "Loc", "OutOfBoundsError",
           "Case", "Launch", "Operator", "TensorDesc", "host",
           "JITFunction", "cdiv", "jit", "language", "next_power_of_2"]
