"""ascdsl: a Triton-style tile DSL that compiles operators to Ascend C."""
from .errors import CompilationError, Error, InputTypeError, InputValueError, Loc, OutOfBoundsError
from .op import Attr, Case, Launch, Operator, Output, TensorDesc, entry, host
from . import language, planner
from .jit import JITFunction, jit
from .language import cdiv, next_power_of_2
from .backend import simrun as _simrun  # registers backend="sim"

__all__ = ["CompilationError", "Error", "InputTypeError", "InputValueError", "Loc", "OutOfBoundsError",
           "Attr", "Case", "Launch", "Operator", "Output", "TensorDesc", "entry", "host",
           "JITFunction", "cdiv", "jit", "language", "next_power_of_2", "planner"]
