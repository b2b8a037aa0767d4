"""A kernel in a module with postponed (string) annotations, indented inside a class."""
from __future__ import annotations

import ascdsl
import ascdsl.language as tl
from ascdsl.language import constexpr


class Kernels:
    @staticmethod
    @ascdsl.jit
    def fill(out_ptr, value, N: constexpr, M: "tl.constexpr" = 2):
        tl.store(out_ptr + tl.arange(0, N * M), value)
