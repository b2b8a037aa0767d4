"""The one dtype table, shared by the frontend, the interpreter and the backends.

Each row says how a dtype is spelled in the DSL (``tl.float16``), in the IR text (``f16``),
in NumPy and in Ascend C, and which tolerance verification uses for it (``rtol``/``atol``:
the bound for transcendental functions and reductions; everything else must match exactly).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import ml_dtypes
import numpy as np


@dataclass(frozen=True)
class DType:
    name: str
    short: str
    itemsize: int
    kind: str  # "float", "int", "uint" or "bool"
    cpp: str
    np: np.dtype = field(compare=False, repr=False)
    rtol: float = field(default=0.0, compare=False, repr=False)
    atol: float = field(default=0.0, compare=False, repr=False)

    def __reduce__(self):  # unpickled (the lift cache) as the table's own instance
        return _unpickle, (self.name,)

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_int(self) -> bool:
        return self.kind in ("int", "uint")

    @property
    def bits(self) -> int:
        return 1 if self.kind == "bool" else self.itemsize * 8

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class PointerType:
    """The type of a pointer into global memory; ``element_ty`` is what it points at."""

    element_ty: DType

    @property
    def name(self) -> str:
        return f"ptr<{self.element_ty.short}>"

    short = name
    kind = "pointer"
    is_float = False
    is_int = False

    def __str__(self) -> str:
        return self.name


float32 = DType("float32", "f32", 4, "float", "float", np.dtype(np.float32), 1e-5, 1e-6)
float16 = DType("float16", "f16", 2, "float", "half", np.dtype(np.float16), 2e-3, 1e-3)
bfloat16 = DType("bfloat16", "bf16", 2, "float", "bfloat16_t", np.dtype(ml_dtypes.bfloat16), 1.6e-2, 8e-3)
int8 = DType("int8", "i8", 1, "int", "int8_t", np.dtype(np.int8))
int16 = DType("int16", "i16", 2, "int", "int16_t", np.dtype(np.int16))
int32 = DType("int32", "i32", 4, "int", "int32_t", np.dtype(np.int32))
int64 = DType("int64", "i64", 8, "int", "int64_t", np.dtype(np.int64))
uint8 = DType("uint8", "u8", 1, "uint", "uint8_t", np.dtype(np.uint8))
bool_ = DType("bool", "i1", 1, "bool", "bool", np.dtype(np.bool_))

uint32 = DType("uint32", "u32", 4, "uint", "uint32_t", np.dtype(np.uint32))
"""Not a language dtype (not in :data:`ALL`): the Ascend C backend's view of API offset tensors (``Gather``)."""

ALL = (float32, float16, bfloat16, int8, int16, int32, int64, uint8, bool_)
TRITON_ONLY = frozenset({"float64", "uint16", "uint32", "uint64", "float8e4nv", "float8e5", "float8e4b8", "float8e5b16",
                         "float8e4b15"})
"""Triton's ``tl.*`` dtypes that are not in :data:`ALL` (a kernel naming one gets an error that says so)."""
FLOATS = (float32, float16, bfloat16)
BY_NAME = {d.name: d for d in ALL} | {d.short: d for d in ALL} | {"int1": bool_}
_BY_NP = {d.np: d for d in ALL}


def from_numpy(dt) -> DType:
    """The DType of a NumPy dtype (``ml_dtypes.bfloat16`` included); raises KeyError if unsupported."""
    return _BY_NP[np.dtype(dt)]


def _unpickle(name: str) -> DType:
    return uint32 if name == uint32.name else BY_NAME[name]


def lookup(name: str) -> DType:
    """The DType named ``name`` (``"float16"``, ``"f16"``...); raises KeyError if unknown."""
    return BY_NAME[name]
