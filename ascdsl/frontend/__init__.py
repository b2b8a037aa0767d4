"""The frontend: a ``@jit`` function's Python source -> one tile IR :class:`~ascdsl.ir.Kernel`.

* :mod:`.source` parses a function with exact file positions (its ``loc(node)`` is what errors show);
* :mod:`.codegen` walks the whitelisted Python subset (statements, control flow, inlined helpers);
* :mod:`.builtins` says what each ``tl`` builtin emits;
* :mod:`.emit` emits typed instructions with the rules of :mod:`ascdsl.semantics`.
"""
from __future__ import annotations

import dataclasses

from typing import Any

from ..ir import Builder, Kernel, Type
from ..ir.symbol import Poly, Symbol
from .codegen import CodeGen, check_syntax
from .emit import Emitter
from .source import ParsedFunction, parse_function
from .uniform import check_barriers

__all__ = ["ParsedFunction", "check_syntax", "compile_kernel", "parse_function"]


def compile_kernel(fn: ParsedFunction, constexprs: dict[str, Any], types: dict[str, Type],
                   debug: bool = False) -> Kernel:
    """Compile ``fn`` for constexpr values ``constexprs`` and runtime parameter types ``types`` (every
    parameter is in one of them: a ``None`` argument of a pointer parameter is a constexpr too);
    ``debug`` compiles ``tl.device_assert`` checks in. A constexpr given as a :class:`Symbol` is a
    run-time tile extent: the kernel's code sees it as a :class:`Poly` (``tl.arange(0, BLOCK)`` is a tile
    of shape ``(BLOCK,)``) and the kernel records the symbol."""
    b = Builder()
    runtime = [name for name in fn.params if name not in constexprs]
    with b.block([types[name] for name in runtime]) as params:
        symbolic = {n: Poly.var(v) for n, v in constexprs.items() if isinstance(v, Symbol)}  # they take part in arithmetic
        scope = dict(constexprs) | symbolic | dict(zip(runtime, params))
        CodeGen(fn, Emitter(b, debug), scope).run()
    kernel = b.kernel(fn.name, runtime, [(name, constexprs[name]) for name in fn.params if name in constexprs],
                      loc=fn.loc(fn.tree))
    check_barriers(kernel)
    return dataclasses.replace(kernel, poison=True) if debug else kernel
