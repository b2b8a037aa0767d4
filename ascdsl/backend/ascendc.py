"""Ascend C kernel emission: post-pass IR -> render model -> ``templates/kernel.cpp.j2``.

Each kernel variant becomes one class (:class:`.model.KernelModel` names its values,
:mod:`.stages` cuts it into CopyIn/Compute/CopyOut, :mod:`.memory`, :mod:`.compute` and
:mod:`.reduce` select the instructions). ``Process`` walks the program ids of its block
(``pid = GetBlockIdx(); pid < programs; pid += GetBlockNum()``). This module lays the classes and
the entry that switches on the tiling key out through the templates.
"""
from __future__ import annotations

from typing import Sequence

from .. import dtypes
from ..platforms import Platform, get_platform
from . import stages
from .model import KernelModel, literal, where
from .render import render
from .tiling import TilingLayout, Variant


def _class_model(variant: Variant, layout: TilingLayout, platform: Platform) -> dict:
    m = KernelModel(variant, layout, platform)
    stages.build(m)
    k = m.kernel
    buffers = m.plan.buffers
    return {
        "class_name": variant.class_name,
        "kernel_name": k.name,
        "constexprs": ", ".join(f"{n}={v}" for n, v in k.constexprs),
        "where": where(k.loc),
        "struct": layout.struct_name,
        "gms": [{"name": m.gm(p), "cpp": p.type.dtype.element_ty.cpp, "param": n} for p, n in m.pointers],
        "queues": [{"name": b.name, "position": b.position, "num": b.num, "bytes": b.bytes}
                   for b in buffers if b.position != "VECCALC"],
        "tbufs": [{"name": b.name, "bytes": b.bytes} for b in buffers if b.position == "VECCALC"],
        "ub_total": m.plan.total_bytes,
        "uses_event": bool(m.members),
        "members": m.member_decls,
        "process": m.process,
        "methods": [{"name": x.name, "params": x.params, "lines": x.lines} for x in m.methods],
    }


def render_classes(variants: Sequence[Variant], layout: TilingLayout, platform: Platform | str) -> str:
    """Every variant's class (no includes, no entry)."""
    platform = get_platform(platform) if isinstance(platform, str) else platform
    return render("kernel_classes.cpp.j2", classes=[_class_model(v, layout, platform) for v in variants])


def kernel_source(symbol: str, variants: Sequence[Variant], layout: TilingLayout, platform: Platform | str) -> str:
    """A complete direct-launch kernel file: the tiling struct, the classes and the entry ``symbol``
    (the pointers of every variant in first-seen order, then ``workspace`` and ``tiling``)."""
    pointers: list[str] = []
    calls = []
    for v in variants:
        names = [n for p, n in zip(v.kernel.params, v.kernel.param_names) if not isinstance(p.type.dtype, dtypes.DType)]
        pointers += [n for n in names if n not in pointers]
        calls.append({"key": v.key, "class_name": v.class_name, "args": names})
    return render("kernel.cpp.j2", symbol=symbol, struct=layout.struct_name, struct_source=layout.struct_source(),
                  classes=render_classes(variants, layout, platform), pointers=pointers, calls=calls)


__all__ = ["kernel_source", "literal", "render_classes"]
