"""ascdsl: a Triton-style tile DSL that compiles operators to Ascend C.

``import ascdsl as triton`` gives Triton's top level too: ``jit``, ``autotune``, ``heuristics``,
``Config``, ``cdiv``, ``next_power_of_2`` and the modules ``language``, ``runtime``, ``compiler``,
``testing`` (see ``ascdsl.triton_alias`` to make ``import triton`` itself resolve to ascdsl).
"""
from .errors import (CompilationError, DeviceAssertionError, Error, InputTypeError, InputValueError, Loc,
                     OutOfBoundsError, PoisonError)
from .op import Attr, Case, Launch, Operator, Output, TensorDesc, entry, host, render_template
from . import language, planner
from .jit import JITFunction, jit
from .language import cdiv, next_power_of_2
from .runtime import Config, autotune, heuristics
from . import compiler, runtime, testing
from .backend import simrun as _simrun  # registers backend="sim"
from . import triton_alias as _triton_alias  # ``sys.modules["triton"] = ascdsl`` imports ascdsl's submodules

__version__ = "3.2.0"
"""The Triton release whose language ascdsl follows (``triton.__version__`` under either alias, which
libraries compare at import); ascdsl's own version is ``importlib.metadata.version("ascdsl")``."""

__all__ = ["CompilationError", "DeviceAssertionError", "Error", "InputTypeError", "InputValueError", "Loc",
           "OutOfBoundsError", "PoisonError", "Attr", "Case", "Launch", "Operator", "Output", "TensorDesc", "entry", "host", "render_template",
           "Config", "JITFunction", "autotune", "cdiv", "compiler", "heuristics", "jit", "language",
           "next_power_of_2", "planner", "runtime", "testing"]
