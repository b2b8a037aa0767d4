"""``triton.compiler`` for ascdsl: :func:`compile` of an :class:`ASTSource` to the tile IR, and the
error types (``triton.compiler.errors.CompilationError`` is :class:`ascdsl.CompilationError`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import dtypes, ir
from ..dtypes import PointerType
from .errors import CompilationError, CompileTimeAssertionFailure

_TYPES = {"fp32": dtypes.float32, "fp16": dtypes.float16, "bf16": dtypes.bfloat16, "i8": dtypes.int8,
          "i16": dtypes.int16, "i32": dtypes.int32, "i64": dtypes.int64, "u8": dtypes.uint8, "i1": dtypes.bool_}


def _type(text: str):
    """A Triton signature type (``"*fp32"``, ``"i32"``) as an ascdsl type."""
    pointer = text.startswith("*")
    try:
        dtype = _TYPES[text.lstrip("*")]
    except KeyError:
        raise ValueError(f"unsupported signature type {text!r}; supported: "
                         + ", ".join(sorted(_TYPES)) + " (and pointers *T)") from None
    return PointerType(dtype) if pointer else dtype


@dataclass
class ASTSource:
    """A kernel with its runtime argument types (``{"x_ptr": "*fp32", "n": "i32"}``) and constexprs."""

    fn: Any
    signature: dict
    constexprs: dict = field(default_factory=dict)
    attrs: Any = None


@dataclass(frozen=True)
class CompiledKernel:
    """What :func:`compile` returns: the IR module and its text (``asm["ir"]``)."""

    module: ir.Module
    asm: dict
    name: str


def compile(src: ASTSource, target=None, options=None) -> CompiledKernel:
    """Compile ``src`` for its signature and constexprs (``target`` and ``options`` are ignored)."""
    args = {name: _type(t) if isinstance(t, str) else t for name, t in src.signature.items()}
    module = src.fn.specialize(**args, **src.constexprs)
    return CompiledKernel(module, {"ir": ir.dump(module)}, module.kernels[0].name)


__all__ = ["ASTSource", "CompilationError", "CompileTimeAssertionFailure", "CompiledKernel", "compile"]
