"""Checks on the names and strings a user hands ascdsl that end up in C++ or in file names.

They run where the value enters (the op declaration, attributes, host-function messages), so a
hostile or mistyped value is an error naming the field, never a path outside the output folder or a
line of generated code.
"""
from __future__ import annotations

import re
import unicodedata

from .errors import InputValueError

OP_TYPE = re.compile(r"[A-Z][A-Za-z0-9]*")
"""CANN op types are CamelCase (``SoftmaxGrad``); the build folder and file names derive from them."""
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

CPP_RESERVED = frozenset("""
    alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t
    class compl concept const consteval constexpr constinit const_cast continue co_await co_return
    co_yield decltype default delete do double dynamic_cast else enum explicit export extern false float
    for friend goto if inline int long mutable namespace new noexcept not not_eq nullptr operator or
    or_eq private protected public register reinterpret_cast requires return short signed sizeof static
    static_assert static_cast struct switch template this thread_local throw true try typedef typeid
    typename union unsigned using virtual void volatile wchar_t while xor xor_eq
""".split())
"""C++20 keywords and alternative tokens: never valid as a C++ name."""


def op_type(value, field: str = "op_type") -> str:
    """``value`` if it is a CANN op type (``^[A-Z][A-Za-z0-9]*$``), else an error naming ``field``."""
    if not isinstance(value, str) or not OP_TYPE.fullmatch(value):
        raise InputValueError(f"{field} must be a CamelCase name matching [A-Z][A-Za-z0-9]* (such as "
                              f"'SoftmaxGrad'), got {value!r}")
    return value


def identifier(value, field: str) -> str:
    """``value`` if it can be a C++ name (an ASCII identifier, no keyword, not reserved), else an error."""
    if not isinstance(value, str) or not IDENTIFIER.fullmatch(value):
        raise InputValueError(f"{field} must be an identifier matching [A-Za-z_][A-Za-z0-9_]*, got {value!r}")
    if value in CPP_RESERVED or value.startswith("__") or re.match(r"_[A-Z]", value):
        raise InputValueError(f"{field} {value!r} is a C++ keyword or a reserved name; rename it")
    return value


def text(value, field: str) -> str:
    """``value`` if it is a string without control characters (newline, CR, NUL, ...), else an error."""
    if not isinstance(value, str):
        raise InputValueError(f"{field} must be a string, got {type(value).__name__}")
    bad = next((c for c in value if unicodedata.category(c) in ("Cc", "Cs")), None)
    if bad is not None:
        raise InputValueError(f"{field} must not contain control characters; {value!r} contains {bad!r}")
    return value
