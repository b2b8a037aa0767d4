"""The frontend: a ``@jit`` function's Python source -> one tile IR :class:`~ascdsl.ir.Kernel`.

* :mod:`.source` parses a function with exact file positions (its ``loc(node)`` is what errors show);
* :mod:`.codegen` walks the whitelisted Python subset (statements, control flow, inlined helpers);
* :mod:`.builtins` says what each ``tl`` builtin emits;
* :mod:`.emit` emits typed instructions with the rules of :mod:`ascdsl.semantics`.
"""
from __future__ import annotations

from typing import Any

from ..ir import Builder, Kernel, Type
from .codegen import CodeGen, check_syntax
from .emit import Emitter
from .source import ParsedFunction, parse_function

__all__ = ["ParsedFunction", "check_syntax", "compile_kernel", "parse_function"]


def compile_kernel(fn: ParsedFunction, constexprs: dict[str, Any], types: dict[str, Type]) -> Kernel:
    """Compile ``fn`` for constexpr values ``constexprs`` and runtime parameter types ``types``."""
    b = Builder()
    runtime = [name for name in fn.params if name not in fn.constexprs]
    with b.block([types[name] for name in runtime]) as params:
        scope = {name: constexprs[name] for name in fn.constexprs} | dict(zip(runtime, params))
        CodeGen(fn, Emitter(b), scope).run()
    return b.kernel(fn.name, runtime, [(name, constexprs[name]) for name in fn.constexprs],
                    loc=fn.loc(fn.tree))
