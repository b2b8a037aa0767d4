"""Element types as template parameters: variants that differ only by their tensors' element type
share one ``template <typename T>`` class, instantiated per tiling key (``RowsKernelV7<half>``,
``RowsKernelV7<bfloat16_t>``), as CANN engineers write them.

A variant whose pointers all have one element type ``t`` is *abstracted*: ``t`` becomes the type
parameter ``T`` everywhere in its kernel IR (tensors, views, literals, ``sizeof``). Variants of one
kernel whose abstracted kernel IR is equal (same calls, same sizes, same constants) form a group.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..dtypes import DType
from . import kir
from .naming import name
from .tiling import Variant


def type_parameter(t: DType) -> DType:
    """The template parameter ``T`` standing for element type ``t`` (same size and kind)."""
    return DType("T", "T", t.itemsize, t.kind, "T", np.dtype(f"V{t.itemsize}"))


def _replace(node, old: DType, new: DType):
    if isinstance(node, DType):
        return new if node == old else node
    if isinstance(node, tuple):
        return tuple(_replace(x, old, new) for x in node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        return dataclasses.replace(node, **{f.name: _replace(getattr(node, f.name), old, new)
                                            for f in dataclasses.fields(node) if f.init and f.name != "names"})
    return node


def abstract(k: kir.Kernel) -> tuple[kir.Kernel, DType] | None:
    """``k`` with its one pointer element type as ``T`` (named afresh), or None."""
    types = {g.dtype for g in k.gms}
    if len(types) != 1:
        return None
    (t,) = types
    return name(dataclasses.replace(_replace(k, t, type_parameter(t)), names=None)), t


@dataclass(frozen=True)
class ClassPlan:
    """One C++ class: its kernel IR (abstracted for a template) and the variants it serves."""

    name: str
    kernel: kir.Kernel
    instances: tuple[tuple[Variant, str], ...]  # (variant, the class name its entry branch uses)

    @property
    def is_template(self) -> bool:
        return self.instances[0][1] != self.name


def plan_classes(variants, compiled) -> list[ClassPlan]:
    """Group ``variants`` (``compiled[key]`` is each one's kernel IR) into classes."""
    groups: list[tuple[object, list]] = []
    for v in variants:
        a = abstract(compiled[v.key])
        key = None if a is None else dataclasses.replace(a[0], names=None)
        for group_key, members in groups:
            if key is not None and group_key == key:
                members.append((v, a[1]))
                break
        else:
            groups.append((key, [(v, None if a is None else a[1])]))
    out = []
    for key, members in groups:
        first = members[0][0]
        if len(members) == 1:
            out.append(ClassPlan(first.class_name, compiled[first.key], ((first, first.class_name),)))
        else:
            kernel = abstract(compiled[first.key])[0]
            out.append(ClassPlan(first.class_name, kernel,
                                 tuple((v, f"{first.class_name}<{t.cpp}>") for v, t in members)))
    return out
