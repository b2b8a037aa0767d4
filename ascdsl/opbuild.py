"""The build of one operator as data (:class:`OpBuild`) and the files rendered from it: the kernel, its host
code, the CANN op project, the IR dumps, ``manifest.json`` and ``report.txt`` (:mod:`ascdsl.build` plans
it and writes the files; :mod:`ascdsl.verify` and :mod:`ascdsl.report` read it)."""
from __future__ import annotations

import hashlib
import inspect
import json
from dataclasses import dataclass
from functools import cached_property

from . import dtypes
from .backend.cube import mix
from .backend.host import cores, host
from .backend.host.hostcode import is_kernel
from .backend.host.opproject import (aclnn_signature, fields, json_value, main_model, msopgen, op_host_model,
                                     op_kernel_model, opdef_dtypes, opdef_name, padding)
from .backend.lift.poly import as_json
from .backend.plan import ubplan
from .backend.plan.tiling import TilingLayout, Variant, cann_name
from .backend.render import ascendc
from .backend.render.jinja import Rendered, render
from .errors import CompilationError, Error, source_root
from .ir import dump
from .ir.symbol import ZERO
from .op import Operator
from .platforms import Platform

MANIFEST_VERSION = 2


@dataclass(frozen=True)
class OpBuild:
    """Everything the files of one operator are rendered from. ``variants`` are the specialisations
    the kernel files contain; ``failed`` those the backend could not emit, with the located error
    (the tiling function answers VARIANT_NOT_COMPILED for them, and the build fails)."""

    op: Operator
    platform: Platform
    variants: tuple[Variant, ...]
    layout: TilingLayout
    source: str  # the op file, as the generated comments name it
    failed: tuple[tuple[Variant, CompilationError], ...] = ()
    root: str = "."  # generated files name source files relative to this folder
    probes: tuple = ()  # cases of the host's probe shapes for variants no case of the op runs

    @property
    def cases(self) -> tuple:
        """The op's cases, then the probe cases: what verification runs."""
        return tuple(self.op.cases) + self.probes

    @property
    def name(self) -> str:
        return cann_name(self.op.op_type)

    @property
    def project_name(self) -> str:
        """CANN's name of the op project's OpType (``softmax_grad_custom``): its files and kernel entry."""
        return cann_name(self.op.project_op_type)

    @cached_property
    def files(self) -> dict[str, str]:
        """Every output file, rendered once: path (relative to ``DIR/<op>/``) -> text (the kernel file a
        :class:`~ascdsl.backend.render.jinja.Rendered`, with its lines' DSL locations)."""
        with source_root(self.root):
            return {**self._sources, "manifest.json": json.dumps(self.manifest, indent=2) + "\n",
                    "report.txt": render("build_report.txt.j2", b=self, name=self.name, fields=fields(self.layout),
                                         variants=self.manifest["variants"],
                                         files=sorted([*self._sources, "manifest.json"]),
                                         failed=failures(self))}

    @cached_property
    def manifest(self) -> dict:
        """What ``manifest.json`` holds, as data: the report reads this, never the file."""
        with source_root(self.root):
            return manifest(self, self._sources)

    @cached_property
    def classes(self) -> Rendered:
        """Every variant's C++ class, rendered once: the direct-launch kernel and the op project's kernel
        both hold this text (a located CompilationError if the backend cannot emit a variant)."""
        with source_root(self.root):
            return ascendc.render_classes(self.variants, self.layout, self.platform)

    @cached_property
    def _sources(self) -> dict[str, str]:
        """The files the manifest lists and hashes (all but itself and report.txt)."""
        with source_root(self.root):
            return render_sources(self)

    @property
    def pointers(self) -> tuple[str, ...]:
        return (*self.op.inputs, *(o.name for o in self.op.outputs))


def render_sources(b: OpBuild) -> dict[str, str]:
    """The kernel, tiling, op-project and IR files (all but the manifest and report.txt, which describe them)."""
    name, op = b.name, b.op
    code = host.lower(op, b.layout, b.variants, b.platform)  # once: the header, main.cpp and op_host read it
    tiling_h = host.tiling_header(code, b.source)
    files = {
        f"kernel/{name}_kernel.cpp": ascendc.kernel_source(name, b.variants, b.layout, b.platform, b.classes,
                                                            b.op.tensor_count),
        f"kernel/{name}_tiling.h": tiling_h,
        "kernel/main.cpp": render("main.cpp.j2", **main_model(b, code)),
        "kernel/CMakeLists.txt": render("kernel_cmake.txt.j2", name=name, symbol=name, platform=b.platform.name),
        **op_project_files(b, code, tiling_h),
    }
    for v in sorted(b.variants + tuple(v for v, _ in b.failed), key=lambda v: v.key):
        files[f"ir/{v.key:02d}_{v.kernel.name}.ir"] = dump(v.kernel)
    return files


def op_project_files(b: OpBuild, code: host.HostCode, tiling_h: str) -> dict[str, str]:
    """The op project's files (named after ``b.project_name``); ``code`` is the op's host code, ``tiling_h`` its
    header."""
    name = b.project_name
    return {
        f"op_project/{name}.json": json.dumps(msopgen(b), indent=4) + "\n",
        f"op_project/op_host/{name}_tiling.h": render("op_host_tiling.h.j2", b=b, name=name, fields=fields(b.layout),
                                                      padding=padding(b.layout)),
        f"op_project/op_host/{name}_tiling_func.h": tiling_h,
        f"op_project/op_host/{name}.cpp": render("op_host.cpp.j2", **op_host_model(b, code)),
        f"op_project/op_kernel/{name}.cpp": render(
            "op_kernel.cpp.j2", b=b, name=name, classes=b.classes,
            **op_kernel_model(b)),
        "op_project/README.md": render("op_project_readme.md.j2", b=b, name=name, aclnn=aclnn_signature(b),
                                       tensors=[opdef_name(n) for n in b.pointers], failed=failures(b),
                                       columns=opdef_dtypes(b)),
    }


def failures(b: OpBuild) -> list[dict]:
    return [{"key": v.key, "kernel": v.kernel.name, "constexprs": {k: json_value(c) for k, c in v.kernel.constexprs},
             "error": str(e)}
            for v, e in b.failed]



def pointer_dtypes(kernel) -> list[dtypes.DType]:
    return [p.type.dtype.element_ty for p in kernel.params if isinstance(p.type.dtype, dtypes.PointerType)]


def variant_row(v: Variant, b: OpBuild) -> dict:
    pointers = [d.name for d in pointer_dtypes(v.kernel)]
    scalars = {n: p.type.dtype.name for n, p in zip(v.kernel.param_names, v.kernel.params)
               if isinstance(p.type.dtype, dtypes.DType)}
    return {"key": v.key, "kernel": v.kernel.name, "class": ascendc.class_names(b.variants, b.platform)[v.key],
            "kernel_type": cores.of(v.kernel, b.platform).kernel_type,
            "constexprs": {k: json_value(c) for k, c in v.kernel.constexprs if k not in v.lifted},
            "runtime_extents": [{"name": e.name, "quantum": e.quantum, "low": e.low, "high": e.high}
                                for e in (v.lift.extents if v.lift is not None else ())],
            "pointer_dtypes": pointers, "scalar_dtypes": scalars,
            "ir": f"ir/{v.key:02d}_{v.kernel.name}.ir", "ub_plan": ub_plan(v, b),
            "footprint": footprint(v, b)}


def jit_functions(op: Operator) -> dict:
    """The ``@ascdsl.jit`` functions of the op's file, by name (what its variants specialise)."""
    return {f.parsed.name: f for f in inspect.unwrap(op.host).__globals__.values() if is_kernel(f)}


def footprint(v: Variant, b: OpBuild) -> list[dict]:
    """The UB bytes of the plan ``v`` runs, slot by slot: ``[{num, needs}]``, the bytes being the sum over its
    slots of ``num`` times the largest of its ``needs`` (polynomials of the runtime extents, :func:`.poly.as_json`)
    rounded up to 32 bytes, at any values the variant admits. A lifted variant's is the UB planner's expression
    the tiling function checks against the budget (:attr:`.lift.Lift.slots`); a specialisation's needs are its
    plan's constant bytes; none where the kernel has no vector plan (a pure-cube kernel)."""
    if v.lift is not None:
        slots = v.lift.slots
    else:
        try:
            slots = tuple((s.num, (ZERO + s.bytes,)) for s in _vector_kernel(v, b).plan.slots if s.num)
        except Error:
            return []
    return [{"num": num, "needs": [as_json(p) for p in needs]} for num, needs in slots if num and needs]


def _vector_kernel(v: Variant, b: OpBuild):
    """The kernel IR whose UB plan ``v`` runs on the vector cores (a MIX kernel: its epilogue's)."""
    if cores.of(v.kernel, b.platform) is cores.MIX:
        return ascendc.planned(mix.split(v.kernel, b.platform).vector, b.platform)
    return ascendc.variant_planned(v, b.platform)


def ub_plan(v: Variant, b: OpBuild) -> dict | None:
    """The variant's UB buffers: the backend's one plan of it, named as its class names them (a template's
    float32 instance: the plan it places its buffers by; a MIX kernel: its epilogue's); None if the backend
    cannot plan it (a pure-cube kernel uses no UB)."""
    quanta = {e.name: e.quantum for e in v.lift.extents} if v.lift is not None else {}
    try:
        if cores.of(v.kernel, b.platform) is not cores.MIX:
            for c in ascendc.classes(b.variants, b.platform):
                if c.float32 is not None and (v, f"{c.name}<float>") in c.instances:
                    return ubplan.as_dict(c.kernel, c.float32, v.form.kernel.plan.footprint, quanta)
        return ubplan.as_dict(_vector_kernel(v, b), quanta=quanta)
    except Error:
        return None


def manifest(b: OpBuild, files: dict[str, str]) -> dict:
    op, lay = b.op, b.layout
    return {
        "manifest_version": MANIFEST_VERSION,
        "op": {"name": op.name, "op_type": op.op_type, "cann_name": b.name, "project_op_type": op.project_op_type,
               "source": b.source,
               "inputs": list(op.inputs), "outputs": [o.name for o in op.outputs],
               "attrs": [{"name": a.name, "type": a.type, "default": json_value(a.default)} for a in op.attrs],
               "dtypes": [list(c) for c in op.dtypes]},
        "platform": {"name": b.platform.name, "vector_core_count": b.platform.vector_core_count,
                     "ub_bytes": b.platform.ub_bytes, "ub_budget_bytes": b.platform.ub_budget_bytes},
        "tiling": {"struct": lay.struct_name, "size": lay.numpy_dtype.itemsize,
                   "fields": [{k: f[k] for k in ("name", "dtype", "offset", "size")} for f in fields(lay)]},
        "kernels": [{"name": k, "variants": [v.key for v in b.variants if v.kernel.name == k]}
                    for k in dict.fromkeys(v.kernel.name for v in b.variants)],
        "variants": [variant_row(v, b) for v in b.variants],
        "failed_variants": failures(b),
        "files": {path: hashlib.sha256(text.encode()).hexdigest() for path, text in sorted(files.items())},
    }
