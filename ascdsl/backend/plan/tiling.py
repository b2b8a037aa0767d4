"""What the host hands the kernel: the tiling struct and the table of compiled variants.

One operator builds one kernel entry that switches on a tiling key between its *variants* (one per
kernel, dtypes and structural constexprs). Runtime scalars, the grid and the lifted constexprs
(runtime tile extents, :mod:`.lift`) travel in one tiling struct shared by all variants, so one
binary serves every shape.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ... import dtypes
from ...dtypes import DType
from ...errors import CompilationError, Error
from ...ir import Kernel
from ..names.naming import field_name
from ..render.jinja import render

GRID_FIELDS = ("grid0", "grid1", "grid2")


@dataclass(frozen=True)
class Field:
    name: str
    dtype: DType


@dataclass(frozen=True)
class TilingLayout:
    """A ``#pragma pack(1)`` struct with naturally aligned fields and a size that is a multiple of 8
    (what CANN's tiling serialiser expects)."""

    struct_name: str
    fields: tuple[Field, ...]

    @property
    def numpy_dtype(self) -> np.dtype:
        names = [f.name for f in self.fields]
        formats = [f.dtype.np for f in self.fields]
        offsets = list(np.cumsum([0] + [f.dtype.itemsize for f in self.fields[:-1]]))
        size = -(-sum(f.dtype.itemsize for f in self.fields) // 8) * 8
        return np.dtype({"names": names, "formats": formats, "offsets": offsets, "itemsize": size})

    def pack(self, values: Mapping[str, Any]) -> np.ndarray:
        """The struct's bytes (a uint8 array) for ``values`` by field name; missing fields are 0."""
        unknown = set(values) - {f.name for f in self.fields}
        if unknown:
            raise Error(f"{self.struct_name} has no field {sorted(unknown)[0]!r}")
        record = np.zeros((), self.numpy_dtype)
        for name, value in values.items():
            record[name] = value
        return np.frombuffer(record.tobytes(), np.uint8).copy()

    def struct_source(self) -> str:
        """The C++ definition of the struct (``#pragma pack(1)``, explicit tail padding)."""
        fields = [{"cpp": f.dtype.cpp, "name": f.name} for f in self.fields]
        tail = self.numpy_dtype.itemsize - sum(f.dtype.itemsize for f in self.fields)
        return render("tiling_struct.h.j2", layout=self, fields=fields,
                      padding=[tail] if tail else [])


def pointer_params(kernel: Kernel) -> list[str]:
    """The names of ``kernel``'s pointer parameters, in order, as the user wrote them."""
    return [n for p, n in zip(kernel.params, kernel.param_names) if isinstance(p.type.dtype, dtypes.PointerType)]


def scratch_params(kernel: Kernel, tensors: int) -> list[str]:
    """``kernel``'s pointer parameters past the op's ``tensors`` inputs and outputs: those its launch plans bind to
    scratch (``Launch(scratch=...)``), which the op project carves out of the user workspace in this order."""
    return pointer_params(kernel)[tensors:]


def scratch_names(kernels: Sequence[Kernel], tensors: int) -> tuple[str, ...]:
    """The :func:`scratch_params` of every one of ``kernels``, each name once in first-seen order: the ``scratch``
    of :func:`layout`."""
    return tuple(dict.fromkeys(n for k in kernels for n in scratch_params(k, tensors)))


def scratch_field(name: str) -> str:
    """The tiling field of scratch pointer parameter ``name`` (``Launch(scratch=...)``): its bytes in the user
    workspace."""
    return f"{name}_bytes"


def layout(struct_name: str, kernels: Sequence[Kernel], lifted: Sequence[str] = (),
           scratch: Sequence[str] = ()) -> TilingLayout:
    """The tiling struct for ``kernels``: ``tilingKey``, the grid, then every runtime scalar
    parameter, every ``lifted`` constexpr (an int32 runtime tile extent) by name and the int64 bytes of every
    ``scratch`` pointer parameter (:func:`scratch_field`), widest first, so each field is naturally aligned."""
    scalars: dict[str, DType] = {}
    for kernel in kernels:
        named: dict[str, str] = {}
        for name, value in zip(kernel.param_names, kernel.params):
            if not value.type.is_scalar or not isinstance(value.type.dtype, DType):
                continue
            if named.setdefault(field_name(name), name) != name:
                raise CompilationError(kernel.loc, f"scalar parameters `{named[field_name(name)]}` and `{name}` "
                                       f"both become the tiling field `{field_name(name)}` (a C/C++ keyword "
                                       "or macro gets a `_`)", "rename one of them")
            name = field_name(name)
            if scalars.setdefault(name, value.type.dtype) != value.type.dtype:
                raise Error(f"scalar parameter {name!r} is {scalars[name]} in one kernel and "
                            f"{value.type.dtype} in another; give them different names")
    if set(scalars) & set(GRID_FIELDS) or "tilingKey" in scalars:
        raise Error(f"kernel parameters may not be named tilingKey, {', '.join(GRID_FIELDS)}")
    for name in map(field_name, lifted):
        if scalars.setdefault(name, dtypes.int32) != dtypes.int32:
            raise Error(f"constexpr {name!r} of one kernel is a {scalars[name]} scalar of another; rename one")
    for name in dict.fromkeys(map(scratch_field, scratch)):
        if name in scalars:
            raise Error(f"the tiling field {name!r} of a scratch is a kernel's scalar or constexpr too; rename one")
        scalars[name] = dtypes.int64
    rest = [Field(g, dtypes.int32) for g in GRID_FIELDS] + [Field(n, d) for n, d in scalars.items()]
    rest.sort(key=lambda f: -f.dtype.itemsize)  # stable: the grid stays first among 4-byte fields
    return TilingLayout(struct_name, (Field("tilingKey", dtypes.int64), *rest))


@dataclass(frozen=True)
class Variant:
    """One compiled kernel and the tiling key that selects it: a specialisation (``kernel``), or, with
    a ``lift`` (:class:`.lift.Lift`), every specialisation of ``kernel``'s function that differs from it
    only by the lifted constexprs, which the tiling struct carries."""

    key: int
    kernel: Kernel
    lift: object = None
    form: object = None  # float32 variants: the lift of a 16-bit variant's float32 form (.templated), which
    # the template instance of this variant runs when the two join one class

    @property
    def class_name(self) -> str:
        return "".join(w.capitalize() for w in self.kernel.name.split("_")) + f"V{self.key}"

    @property
    def lifted(self) -> tuple[str, ...]:
        return self.lift.names if self.lift is not None else ()

    def serves(self, kernel: Kernel) -> bool:
        """``kernel`` runs as this variant (for a lifted variant: with its lifted values in the tiling,
        each a multiple of its extent's quantum and at least its smallest value)."""
        if self.lift is None:
            return kernel == self.kernel
        mine = self.kernel
        consts = dict(kernel.constexprs)
        return (kernel.name == mine.name and kernel.param_names == mine.param_names
                and [p.type for p in kernel.params] == [p.type for p in mine.params]
                and [kv for kv in kernel.constexprs if kv[0] not in self.lifted]
                == [kv for kv in mine.constexprs if kv[0] not in self.lifted]
                and all(e.admits(consts[e.name]) for e in self.lift.extents))

    def lifted_values(self, kernel: Kernel) -> dict[str, int]:
        consts = dict(kernel.constexprs)
        return {n: consts[n] for n in self.lifted}


def variants(kernels: Sequence[Kernel]) -> tuple[Variant, ...]:
    """Distinct kernels in first-seen order, keyed 1, 2, ... (0 means "no variant")."""
    unique: list[Kernel] = []
    for k in kernels:
        if k not in unique:
            unique.append(k)
    return tuple(Variant(i + 1, k) for i, k in enumerate(unique))


def cann_name(op_type: str) -> str:
    """CANN's file and kernel-symbol name for an op type: ``SoftmaxGrad`` -> ``softmax_grad``,
    ``GatherV2Custom`` -> ``gather_v2_custom``, ``Conv2DCustom`` -> ``conv2_d_custom``."""
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", op_type)
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    return name.lower()


def launch_fields(kernel: Kernel, args: Sequence, grid: tuple[int, int, int],
                  variant: Variant | None = None) -> tuple[dict, list]:
    """A launch's tiling fields (grid, runtime scalars and ``variant``'s lifted constexprs by name; no
    ``tilingKey``) and its arrays in pointer order, from the kernel's arguments ``args``."""
    fields = dict(zip(GRID_FIELDS, grid))
    if variant is not None:
        fields.update({field_name(n): v for n, v in variant.lifted_values(kernel).items()})
    arrays = []
    for name, param, value in zip(kernel.param_names, kernel.params, args):
        if isinstance(param.type.dtype, DType):
            fields[field_name(name)] = value
        else:
            arrays.append(value)
    return fields, arrays
