"""``ascdsl build``: one folder per operator with the kernel, its host code and a CANN op project.

``DIR/<OP.name>/`` holds (``<op>`` is CANN's name for the op type, e.g. ``scale_add``)::

    kernel/<op>_kernel.cpp      the direct-launch kernel (one entry switching on the tiling key)
    kernel/<op>_tiling.h        the plain tiling struct and the tiling function (host C++)
    kernel/main.cpp             direct launch: CANN CPU debug mode (ASCENDC_CPU_DEBUG) or the NPU (ACLRT_LAUNCH_KERNEL)
    kernel/CMakeLists.txt       RUN_MODE cpu (tikicpulib), sim or npu (ascendc_library)
    op_project/<opc>.json       msopgen's operator description (<opc>: the project's OpType, e.g.
                                softmax_grad_custom for SoftmaxGradCustom: Operator.project_op_type)
    op_project/op_host/...      BEGIN_TILING_DATA_DEF header, TilingFunc/InferShape/OpDef, the tiling function
    op_project/op_kernel/<opc>.cpp
    op_project/README.md        how to build it inside msopgen's generated project
    ir/NN_<kernel>.ir           the IR of every variant
    manifest.json               kernels, variants, tiling keys and fields (ascdsl/schema/manifest.schema.json)
    report.txt                  a readable summary
    report.html                 UB maps, tiling, schedules, simulator counters (:mod:`ascdsl.report`)

Every file is a pure function of the op file and the platform, so two builds are byte-identical.
"""
from __future__ import annotations

import hashlib
import inspect
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from . import dtypes, planner, report
from .backend.lift import lift
from .backend.cube import mix
from .backend.host import cores, host
from .backend.render import ascendc
from .backend.plan import ubplan
from .backend.host.opproject import (aclnn_signature, fields, json_value, main_model, msopgen, op_host_model,
                                     op_kernel_model, opdef_dtypes, opdef_name, padding)
from .backend.host.hostcode import is_kernel
from .backend.render.jinja import render
from .backend.plan.tiling import TilingLayout, Variant, cann_name, layout
from .errors import CompilationError, Error, InputTypeError, InputValueError, source_path, source_root
from .ir import dump
from .op import Case, Operator, TensorDesc, specializations
from .platforms import Platform
from .verify import VariantCheck, verify_main

MANIFEST_VERSION = 1
SCHEMA = Path(__file__).parent / "schema" / "manifest.schema.json"
__all__ = [
    "SCHEMA",
    "OpBuild",
    "VariantCheck",
    "build",
    "check_host",
    "error_heading",
    "kernel_at",
    "manifest",
    "plan",
    "render_files",
    "verify_main",
    "write",
]


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
                                         failed=_failures(self))}

    @cached_property
    def manifest(self) -> dict:
        """What ``manifest.json`` holds, as data: the report reads this, never the file."""
        with source_root(self.root):
            return manifest(self, self._sources)

    @cached_property
    def _sources(self) -> dict[str, str]:
        """The files the manifest lists and hashes (all but itself and report.txt)."""
        with source_root(self.root):
            return _render_sources(self)

    @property
    def pointers(self) -> tuple[str, ...]:
        return (*self.op.inputs, *(o.name for o in self.op.outputs))


def _kernels(op: Operator, platform: Platform,
             root: str | Path | None = None) -> tuple[tuple[Variant, ...], TilingLayout, str, str, list]:
    """The variants of the kernel specialisations the op's OpDef-expressible cases launch on
    ``platform`` (none with bfloat16 tensors where the platform has no bfloat16: the OpDef registers
    no such dtypes there; constexprs that only size tiles lifted into the tiling, :mod:`.backend.lift.lift`),
    their tiling layout, the op file as generated comments name it, and the folder they name it
    relative to: ``root`` (default: the op file's folder), so builds match from any directory; and
    the kernels the cases launch."""
    cases = _case_kernels(op, platform)
    kernels = list(cases)
    op_file = inspect.getsourcefile(inspect.unwrap(op.host)) or op.name
    root = os.path.abspath(root if root is not None else os.path.dirname(os.path.abspath(op_file)))
    with source_root(root):
        source = source_path(op_file)
    kernels += [k for k, _ in probe_kernels(op, platform) if k not in kernels]
    vs = lift.variants(kernels, _jit_functions(op), platform)
    lifted = dict.fromkeys(n for v in vs for n in v.lifted)
    return vs, layout(f"{op.op_type}TilingData", kernels, tuple(lifted)), source, root, cases


def probe_cases(op: Operator, platform: Platform, variants, cases: list) -> tuple:
    """A probe case for every variant that no case of the op runs (verification runs them too)."""
    covered = {v.key for v in variants for k in cases if v.serves(k)}
    out = []
    for k, case in probe_kernels(op, platform):
        keys = [v.key for v in variants if v.serves(k) and v.key not in covered]
        if keys:
            covered.add(keys[0])
            out.append(case)
    return tuple(out)


def _case_kernels(op: Operator, platform: Platform) -> list:
    return [k for k in specializations(op, opdef_only=True, platform=platform.name).kernels
            if platform.has_bf16 or dtypes.bfloat16 not in _pointer_dtypes(k)]


PROBE_SHAPES = ((1,), (7,), (4099,), (300001,), (3, 1), (3, 5), (5, 1000), (2, 9000), (2, 70001), (300, 77),
                (5, 1, 7), (6, 7, 3), (1, 600, 3), (2, 70001, 3), (3, 300, 4099))
"""Input shapes the host function is probed on, for every dtype combination and attribute value of
the op's cases: the build compiles every kernel specialisation those launch, not only the cases'."""


def probe_kernels(op: Operator, platform: Platform) -> list:
    """``(kernel, case)``: the kernel specialisations the op's host function launches on cases of
    :data:`PROBE_SHAPES` (every input of one shape) for every dtype of the op and every OpDef
    attribute value of its cases, each with the first probe case that launches it (the lift then
    serves them with few variants: :mod:`.backend.lift.lift`)."""
    attrs = []
    for case in op.cases:
        a = op.opdef_attrs(case)
        if a is not None and a not in attrs:
            attrs.append(a)
    out: dict = {}
    for combo in op.dtypes:
        names = set(combo[:len(op.inputs)])
        if len(names) != 1 or not platform.has_bf16 and "bfloat16" in names:
            continue
        for shape in PROBE_SHAPES:
            inputs = tuple(TensorDesc(shape, dtypes.lookup(combo[0])) for _ in op.inputs)
            for a in attrs:
                try:
                    launch = host.host_plan(op, platform, inputs, a)
                    if all(launch.grid):
                        k = host.launched_kernel(op, launch, inputs)
                        out.setdefault(k, Case(*(shape,) * len(op.inputs), dtype=combo[0], **a))
                except (InputTypeError, InputValueError, IndexError, ZeroDivisionError):
                    continue
    return list(out.items())


def check_host(op: Operator, platform: Platform) -> None:
    """Raise the located error ``plan``/``write`` would raise for the op's host code (what does not
    lower to C++: NumPy calls, planner queries whose UB footprint is not affine, ...), without
    emitting kernels. ``ascdsl check`` runs it."""
    vs, lay, source, _, _ = _kernels(op, platform)
    host.tiling_header(op, lay, vs, platform, source)


def plan(op: Operator, platform: Platform, root: str | Path | None = None) -> OpBuild:
    """Collect the kernel specialisations the op's OpDef-expressible cases launch, lay out the tiling
    struct, and set aside the variants the Ascend C backend cannot emit. Generated files name source
    files relative to ``root`` (default: the op file's folder)."""
    vs, lay, source, root, cases = _kernels(op, platform, root)
    emitted, failed = [], []
    for v in vs:
        try:
            ascendc.render_classes([v], lay, platform)
            emitted.append(v)
        except CompilationError as e:
            if v.kernel in cases:  # a kernel only a probe launches: the host accepts what no kernel serves
                failed.append((v, e))
    return OpBuild(op, platform, tuple(emitted), lay, source, tuple(failed), root, probe_cases(op, platform, emitted, cases))


def render_files(b: OpBuild) -> dict[str, str]:
    """Every output file of one operator: path (relative to ``DIR/<op>/``) -> text."""
    return dict(b.files)


def _render_sources(b: OpBuild) -> dict[str, str]:
    """The kernel, tiling, op-project and IR files (all but the manifest and report.txt, which describe them)."""
    name, op = b.name, b.op
    tiling_h = host.tiling_header(op, b.layout, b.variants, b.platform, b.source)
    files = {
        f"kernel/{name}_kernel.cpp": ascendc.kernel_source(name, b.variants, b.layout, b.platform),
        f"kernel/{name}_tiling.h": tiling_h,
        "kernel/main.cpp": render("main.cpp.j2", **main_model(b)),
        "kernel/CMakeLists.txt": render("kernel_cmake.txt.j2", name=name, symbol=name, platform=b.platform.name),
        **op_project_files(b, tiling_h),
    }
    for v in sorted(b.variants + tuple(v for v, _ in b.failed), key=lambda v: v.key):
        files[f"ir/{v.key:02d}_{v.kernel.name}.ir"] = dump(v.kernel)
    return files


def op_project_files(b: OpBuild, tiling_h: str) -> dict[str, str]:
    """The op project's files (named after ``b.project_name``); ``tiling_h`` is the tiling function."""
    name = b.project_name
    return {
        f"op_project/{name}.json": json.dumps(msopgen(b), indent=4) + "\n",
        f"op_project/op_host/{name}_tiling.h": render("op_host_tiling.h.j2", b=b, name=name, fields=fields(b.layout),
                                                      padding=padding(b.layout)),
        f"op_project/op_host/{name}_tiling_func.h": tiling_h,
        f"op_project/op_host/{name}.cpp": render("op_host.cpp.j2", **op_host_model(b)),
        f"op_project/op_kernel/{name}.cpp": render(
            "op_kernel.cpp.j2", b=b, name=name, classes=ascendc.render_classes(b.variants, b.layout, b.platform),
            **op_kernel_model(b)),
        "op_project/README.md": render("op_project_readme.md.j2", b=b, name=name, aclnn=aclnn_signature(b),
                                       tensors=[opdef_name(n) for n in b.pointers], failed=_failures(b),
                                       columns=opdef_dtypes(b)),
    }


def _failures(b: OpBuild) -> list[dict]:
    return [{"key": v.key, "kernel": v.kernel.name, "constexprs": {k: json_value(c) for k, c in v.kernel.constexprs},
             "error": str(e)}
            for v, e in b.failed]


def write(b: OpBuild, out: str | Path) -> Path:
    """Write the files of ``b`` under ``out/<OP.name>/``; returns that folder. Every path is resolved
    (symbolic links followed) and must stay inside that folder."""
    root = Path(out).resolve()
    folder = Path(out) / b.op.name
    for rel, text in render_files(b).items():
        path = folder / rel
        resolved = path.resolve()
        if not resolved.is_relative_to(root / b.op.name) or resolved == root / b.op.name:
            raise Error(f"refusing to write {rel!r} of {b.op.name}: it resolves to {resolved}, outside "
                        f"the output folder {root / b.op.name}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder


def build(ops: Sequence[Operator], out: str | Path, platform: Platform, root: str | Path | None = None) -> list[Path]:
    """Write every op's files and its ``report.html`` (without simulator counters: ``ascdsl build``
    adds them when it verifies) under ``out``; returns the op folders (``root``: see :func:`plan`)."""
    folders = []
    for op in ops:
        b = plan(op, platform, root)
        folders.append(write(b, out))
        report.write(b, folders[-1])
    return folders


def _pointer_dtypes(kernel) -> list[dtypes.DType]:
    return [p.type.dtype.element_ty for p in kernel.params if isinstance(p.type.dtype, dtypes.PointerType)]


def _variant_row(v: Variant, b: OpBuild) -> dict:
    pointers = [d.name for d in _pointer_dtypes(v.kernel)]
    scalars = {n: p.type.dtype.name for n, p in zip(v.kernel.param_names, v.kernel.params)
               if isinstance(p.type.dtype, dtypes.DType)}
    return {"key": v.key, "kernel": v.kernel.name, "class": ascendc.class_names(b.variants, b.platform)[v.key],
            "kernel_type": cores.of(v.kernel, b.platform).kernel_type,
            "constexprs": {k: json_value(c) for k, c in v.kernel.constexprs if k not in v.lifted},
            "runtime_extents": [{"name": e.name, "quantum": e.quantum, "low": e.low, "high": e.high}
                                for e in (v.lift.extents if v.lift is not None else ())],
            "pointer_dtypes": pointers, "scalar_dtypes": scalars,
            "ir": f"ir/{v.key:02d}_{v.kernel.name}.ir", "ub_plan": _ub_plan(v, b),
            "footprint": footprints(v, _jit_functions(b.op)[v.kernel.name])}


def _jit_functions(op: Operator) -> dict:
    """The ``@ascdsl.jit`` functions of the op's file, by name (what its variants specialise)."""
    return {f.parsed.name: f for f in inspect.unwrap(op.host).__globals__.values() if is_kernel(f)}


def kernel_at(op: Operator, loc) -> str | None:
    """The name of the ``@ascdsl.jit`` function of the op's file whose source holds ``loc``, or None."""
    for name, f in _jit_functions(op).items():
        fn = inspect.unwrap(f.fn)
        lines, first = inspect.getsourcelines(fn)
        if os.path.abspath(inspect.getsourcefile(fn) or "") == os.path.abspath(loc.file) and \
                first <= loc.line < first + len(lines):
            return name
    return None


def error_heading(op: Operator, e: Error) -> str:
    """What an error of an op's code is: ``kernel error in `name``` when it is located in one of the
    op's kernels, else ``host code that `ascdsl build` rejects``."""
    name = kernel_at(op, e.loc) if isinstance(e, CompilationError) else None
    return f"kernel error in `{name}`" if name else "host code that `ascdsl build` rejects"


def footprints(v: Variant, jit_fn) -> dict:
    """``{constexpr: {num, den, base}}`` for every int constexpr of ``v`` in which its UB plan is affine
    (the other constexprs as in ``v``); ``jit_fn`` is the ``@ascdsl.jit`` function ``v`` specialises."""
    types = [p.type.dtype for p in v.kernel.params]
    consts = dict(v.kernel.constexprs)
    out = {}
    for name, value in consts.items():
        if type(value) is not int or value < 1:
            continue
        try:
            a, b = planner.footprint(jit_fn, name, *types, samples=(value, 2 * value, 4 * value),
                                     **{k: c for k, c in consts.items() if k != name})
        except Error:
            continue
        out[name] = {"num": a.numerator, "den": a.denominator, "base": b}
    return out


def _ub_plan(v: Variant, b: OpBuild) -> dict | None:
    """The variant's UB buffers: the backend's one plan of it, named as its class names them (a template's
    float32 instance: the plan it places its buffers by; a MIX kernel: its epilogue's); None if the backend
    cannot plan it (a pure-cube kernel uses no UB)."""
    quanta = {e.name: e.quantum for e in v.lift.extents} if v.lift is not None else {}
    try:
        if cores.of(v.kernel, b.platform) is cores.MIX:  # the epilogue's, on the vector cores
            return ubplan.as_dict(ascendc.planned(mix.split(v.kernel, b.platform).vector, b.platform), quanta=quanta)
        for c in ascendc.classes(b.variants, b.platform):
            if c.float32 is not None and (v, f"{c.name}<float>") in c.instances:
                return ubplan.as_dict(c.kernel, c.float32, v.form.kernel.plan.footprint, quanta)
        return ubplan.as_dict(ascendc.variant_planned(v, b.platform), quanta=quanta)
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
        "variants": [_variant_row(v, b) for v in b.variants],
        "failed_variants": _failures(b),
        "files": {path: hashlib.sha256(text.encode()).hexdigest() for path, text in sorted(files.items())},
    }
