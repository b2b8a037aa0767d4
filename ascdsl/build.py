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

import inspect
import os
from collections.abc import Sequence
from pathlib import Path

from . import dtypes, report
from .backend.lift import lift
from .backend.host import host
from .backend.render import ascendc
from .backend.plan.tiling import TilingLayout, Variant, layout, scratch_names
from .errors import CompilationError, Error, InputTypeError, InputValueError, source_path, source_root
from .op import Case, Operator, TensorDesc
from .opbuild import OpBuild, jit_functions, manifest, pointer_dtypes
from .platforms import Platform
from .verify import VariantCheck, case_arguments, verify_main

SCHEMA = Path(__file__).parent / "schema" / "manifest.schema.json"
__all__ = [
    "SCHEMA",
    "OpBuild",
    "VariantCheck",
    "build",
    "case_kernels",
    "check_host",
    "error_heading",
    "kernel_at",
    "manifest",
    "plan",
    "render_files",
    "verify_main",
    "write",
]


def _kernels(op: Operator, platform: Platform,
             root: str | Path | None = None) -> tuple[tuple[Variant, ...], TilingLayout, str, str, list, list]:
    """The variants of the kernel specialisations the op's OpDef-expressible cases launch on
    ``platform`` (none with bfloat16 tensors where the platform has no bfloat16: the OpDef registers
    no such dtypes there; constexprs that only size tiles lifted into the tiling, :mod:`.backend.lift.lift`),
    their tiling layout, the op file as generated comments name it, and the folder they name it
    relative to: ``root`` (default: the op file's folder), so builds match from any directory; and
    the kernels the cases launch; and :func:`probe_kernels` (the host code runs on the probe shapes once)."""
    cases = case_kernels(op, platform)
    kernels = list(cases)
    op_file = inspect.getsourcefile(inspect.unwrap(op.host)) or op.name
    root = os.path.abspath(root if root is not None else os.path.dirname(os.path.abspath(op_file)))
    with source_root(root):
        source = source_path(op_file)
    probes = probe_kernels(op, platform)
    kernels += [k for k, _ in probes if k not in kernels]
    vs = lift.variants(kernels, jit_functions(op), platform)
    lifted = dict.fromkeys(n for v in vs for n in v.lifted)
    scratch = scratch_names(kernels, op.tensor_count)
    return vs, layout(f"{op.op_type}TilingData", kernels, tuple(lifted), scratch), source, root, cases, probes


def probe_cases(variants, cases: list, probes: list) -> tuple:
    """A probe case for every variant that no case of the op runs (verification runs them too): of
    ``probes``, the ``(kernel, case)`` pairs of :func:`probe_kernels`; ``cases``: the kernels the
    op's cases launch."""
    covered = {v.key for v in variants for k in cases if v.serves(k)}
    out = []
    for k, case in probes:
        keys = [v.key for v in variants if v.serves(k) and v.key not in covered]
        if keys:
            covered.add(keys[0])
            out.append(case)
    return tuple(out)


def case_kernels(op: Operator, platform: Platform) -> list:
    """The kernel specialisations the op project's tiling function launches on the op's OpDef-expressible
    cases, in first-launch order: the op's host function with the cases' attributes and its other
    parameters at their defaults, as the generated C++ has them, not the Python entry (which may pass more:
    ``softmax_grad``'s ``packed``, a kernel per row length that the op project would never select; its
    launches run on the Python entry's path, interpreter against simulator). A case the host rejects (such
    as bfloat16 where the platform has no bfloat16) or whose grid is empty launches nothing."""
    out = []
    for case in op.cases:
        args = case_arguments(op, case)
        if args is None:
            continue
        _, inputs, attrs = args
        try:
            launch = host.host_plan(op, platform, inputs, attrs)
        except (InputTypeError, InputValueError):
            continue
        if not all(launch.grid):  # an empty tensor: nothing runs
            continue
        k = host.launched_kernel(op, launch, inputs)
        if k not in out and (platform.has_bf16 or dtypes.bfloat16 not in pointer_dtypes(k)):
            out.append(k)
    return out


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
    vs, lay, source, _, _, _ = _kernels(op, platform)
    host.tiling_header(host.lower(op, lay, vs, platform), source)


def plan(op: Operator, platform: Platform, root: str | Path | None = None) -> OpBuild:
    """Collect the kernel specialisations the op's OpDef-expressible cases launch, lay out the tiling
    struct, render their classes (once: :attr:`OpBuild.classes`, which the files hold), and set aside
    the variants the Ascend C backend cannot emit. Generated files name source files relative to
    ``root`` (default: the op file's folder)."""
    vs, lay, source, root, cases, probes = _kernels(op, platform, root)
    b = OpBuild(op, platform, vs, lay, source, (), root, probe_cases(vs, cases, probes))
    if _emits(b):
        return b
    # the errors come from each variant's own lowering, so a variant fails alone as it fails among the others
    emitted, failed = [], []
    for v in vs:
        try:
            ascendc.render_classes([v], lay, platform)
            emitted.append(v)
        except CompilationError as e:
            if v.kernel in cases:  # a kernel only a probe launches: the host accepts what no kernel serves
                failed.append((v, e))
    return OpBuild(op, platform, tuple(emitted), lay, source, tuple(failed), root,
                   probe_cases(emitted, cases, probes))


def _emits(b: OpBuild) -> bool:
    """Whether the backend emits every variant of ``b`` (their classes, rendered here, stay on ``b``)."""
    try:
        return b.classes is not None
    except CompilationError:
        return False


def render_files(b: OpBuild) -> dict[str, str]:
    """Every output file of one operator: path (relative to ``DIR/<op>/``) -> text."""
    return dict(b.files)


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


def kernel_at(op: Operator, loc) -> str | None:
    """The name of the ``@ascdsl.jit`` function of the op's file whose source holds ``loc``, or None."""
    for name, f in jit_functions(op).items():
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


