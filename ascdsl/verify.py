"""Verification of a build (``ascdsl build`` without ``--no-verify``), one table of rows:

* ``emit``: a variant the Ascend C backend could not emit (always a failure, with its located error);
* ``interpreter`` / ``sim``: every case of the op against its reference, on the interpreter through the
  Python entry as ``ascdsl check`` runs them, on ``sim`` (an OpDef-expressible case) through what the op
  project's tiling function launches (:func:`project_entry`); on ``sim`` a launch of a variant the build contains runs the built
  ``op_project/op_kernel/<op>.cpp`` (all variants in one source: one g++ build per op) on the blocks, and
  for a MIX kernel the workspace, the ``sim`` backend gives it (:func:`.backend.simrun.launch_blocks`), other launches
  (cases only the Python entry can express) the sim backend's own one-variant kernels;
* ``op_kernel``: per variant, whether a passing case ran it through the op-project kernel;
* ``clang++`` (each compiler of :func:`ascdsl.sim.build.front_ends`): the direct-launch and op-project
  kernels pass its front end with warnings on;
* ``main.cpp``: per variant, ``kernel/main.cpp`` (with ``kernel/<op>_kernel.cpp``) compiled and run on
  the simulator with the first OpDef-expressible case that selects the variant.
"""
from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import cache, scratch, sim
from .backend import simrun
from .backend.host import host
from .backend.plan.tiling import launch_fields, scratch_field, scratch_params
from .sim.build import check_front_end, front_ends
from .sim.errors import SimCompileError
from .sim.signature import gm_entry
from .errors import Error
from .jit import BACKENDS, Backend
from .op import Operator, TensorDesc
from .opbuild import OpBuild
from .testing import CaseResult, assert_close, error_scales, expected_outputs, run_case


@dataclass(frozen=True)
class VariantCheck:
    """One variant run through ``kernel/main.cpp`` on the simulator with a case that selects it."""

    key: int
    case: str  # the case label, or "" when no case selects the variant
    ok: bool
    message: str = ""


def case_arguments(op: Operator, case) -> tuple[tuple, tuple, dict] | None:
    """``(arrays, descs, OpDef attrs)`` of ``case``, or None if the OpDef cannot express it."""
    attrs = op.opdef_attrs(case)
    if attrs is None:
        return None
    arrays = op.inputs_of(case)
    return arrays, tuple(TensorDesc.of(a) for a in arrays), attrs


@dataclass(frozen=True)
class Sample:
    """The simulator's counters (``ascdsl.sim.SimStats``) of a passing case that ran a variant through
    the op-project kernel (its first launch of that variant)."""

    case: str
    stats: object


def verify_build(b: OpBuild, folder: Path, tick: Callable[[], object] = lambda: None
                 ) -> tuple[list[CaseResult], dict[int, list[Sample]]]:
    """Every row of the build's verification (see the module docstring), and per variant key the
    :class:`Sample` of every passing case that ran it. ``tick`` is called after each case and after
    main.cpp."""
    name = b.op.name
    rows = [CaseResult(name, f"variant {v.key} {v.kernel.name}", "emit", False, message=str(e).splitlines()[0])
            for v, e in b.failed]
    runner = _OpKernelRunner(b)
    for case in b.cases:
        rows.append(run_case(b.op, case, "interpreter", b.platform.name))
        rows.append(runner.run_case(case))
        tick()
    for v in b.variants:
        label = f"variant {v.key} {v.kernel.name}"
        ok = runner.passed.get(v.key)
        rows.append(CaseResult(name, label, "op_kernel", bool(ok), message="" if ok else
                               "no case ran this variant" if ok is None else "a case running it failed"))
    rows += front_end_rows(b, folder, runner.source)
    with tempfile.TemporaryDirectory(prefix="ascdsl-verify-") as work:
        checks = verify_main(b, folder, Path(work))
    tick()
    for c in checks:
        rows.append(CaseResult(name, f"variant {c.key} [{c.case}]", "main.cpp", c.ok, message=c.message))
    return rows, runner.samples


def front_end_rows(b: OpBuild, folder: Path, op_kernel: Path) -> list[CaseResult]:
    """A row per compiler of :func:`ascdsl.sim.build.front_ends` (clang++ where installed): the
    direct-launch kernel and the op-project kernel parse with warnings on and no diagnostic."""
    rows = []
    for cxx in front_ends():
        try:
            check_front_end(folder / "kernel" / f"{b.name}_kernel.cpp", (cxx,))
            check_front_end(op_kernel, (cxx,), (f"ASCDSL_TILING_TYPE={b.layout.struct_name}",))
            rows.append(CaseResult(b.op.name, "kernel sources", cxx, True))
        except SimCompileError as e:
            rows.append(CaseResult(b.op.name, "kernel sources", cxx, False, message=str(e).splitlines()[0]))
    return rows


class _OpKernelRunner:
    """The ``sim`` backend of a build's cases: launches of a built variant run the op-project kernel
    with that variant's tiling key, other launches the sim backend's own kernels; ``passed`` records,
    per key, whether its cases passed."""

    def __init__(self, b: OpBuild):
        self.b, self.fallback = b, BACKENDS["sim"].run
        # the op project's build prepends the kernel-side struct generated from BEGIN_TILING_DATA_DEF
        text = b.files[f"op_project/op_kernel/{b.project_name}.cpp"]
        self.source = _cached_source("#include <cstdint>\n" + b.layout.struct_source() + text)
        self.launched: list[tuple[int, object]] = []  # (key, SimStats) of the current case
        self.passed: dict[int, bool] = {}
        self.samples: dict[int, list[Sample]] = {}

    def run_case(self, case) -> CaseResult:
        """``case`` on the simulator, its launches of built variants through the op-project kernel: an
        OpDef-expressible case runs what the op project's tiling function launches (:func:`project_entry`),
        any other case the Python entry."""
        attrs = self.b.op.opdef_attrs(case)
        entry = project_entry(self.b, attrs) if attrs is not None else None
        result = run_case(self.b.op, case, Backend("sim", self.run), self.b.platform.name, entry)
        self.settle(result)
        return result

    def settle(self, result: CaseResult) -> None:
        for key, stats in self.launched:
            self.passed[key] = self.passed.get(key, True) and result.ok
            if result.ok and all(x.case != result.case for x in self.samples.get(key, ())):
                self.samples.setdefault(key, []).append(Sample(result.case, stats))
        self.launched = []

    def run(self, kernel, args: list, grid: tuple[int, int, int], platform: str) -> None:
        serving = sorted((v for v in self.b.variants if v.serves(kernel)), key=lambda v: v.lift is not None)
        keys = [v.key for v in serving]
        if not keys or platform != self.b.platform.name:
            self.fallback(kernel, args, grid, platform)
            return
        fields, arrays = launch_fields(kernel, args, grid, serving[0])
        fields["tilingKey"] = keys[0]
        block_dim, workspace = simrun.launch_blocks(kernel, fields, grid, self.b.platform)
        mixed, tensors = workspace is not None, self.b.op.tensor_count
        if len(arrays) > tensors:  # the launch plan's scratch: one after another in the user workspace, poisoned
            sizes = {scratch_field(n): scratch.size(a.nbytes)
                     for n, a in zip(scratch_params(kernel, tensors), arrays[tensors:])}
            fields.update(sizes)
            workspace, arrays = np.full(max(sum(sizes.values()), 32), scratch.POISON, np.uint8), arrays[:tensors]
        with simrun.located_errors(kernel, range(len(arrays))):
            res = sim.run_kernel(self.source, self.b.project_name, [*arrays, workspace, self.b.layout.pack(fields)],
                                 block_dim, platform, tiling_key=keys[0], tiling_type=self.b.layout.struct_name,
                                 entry=gm_entry(self.b.project_name, self.b.pointers), mix=mixed)
        self.launched.append((keys[0], res.stats))


def project_entry(b: OpBuild, values: dict) -> Callable:
    """An entry that runs what the op project runs: the op's host function at the OpDef attribute ``values``
    (:meth:`.op.Operator.opdef_attrs` of the case) and the defaults of its other parameters
    (:func:`.backend.host.host.host_plan`, as the generated C++ has them), on outputs of the op's shapes and
    dtypes. The Python entry may launch other kernels (``softmax_grad``'s packed rows, a kernel per row length),
    which ``ascdsl check`` verifies."""
    def entry(*inputs, backend, platform, **_case_attrs):
        descs = tuple(TensorDesc.of(a) for a in inputs)
        outputs = [np.empty(b.op.output_shape(o, descs, values), b.op.output_dtype(o, descs).np)
                   for o in b.op.outputs]
        host.host_plan(b.op, b.platform, descs, values)(*inputs, *outputs, backend=backend, platform=platform)
        return outputs
    return entry


def sample_cases(b: OpBuild, cases=None) -> dict[int, list[Sample]]:
    """Run ``cases`` (default: all of the build's) on the simulator through the build's op-project
    kernel; per variant key, the :class:`Sample` of every passing case that ran it."""
    runner = _OpKernelRunner(b)
    for case in b.cases if cases is None else cases:
        runner.run_case(case)
    return runner.samples


def cases_of_variants(b: OpBuild) -> dict[int, list[tuple[object, host.TilingResult, bool]]]:
    """Per tiling key, every OpDef-expressible case whose tiling selects it (the op's cases, then the
    probe cases; one per label), with that tiling and whether it is a probe."""
    out: dict[int, list[tuple[object, host.TilingResult, bool]]] = {}
    seen: set[str] = set()
    for n, case in enumerate(b.cases):
        args = case_arguments(b.op, case)
        if args is None or case.label in seen:
            continue
        seen.add(case.label)
        got = host.python_tiling(b.op, b.layout, b.variants, b.platform, args[1], args[2])
        key = dict(got.fields).get("tilingKey", 0) if got.status == 0 else 0
        out.setdefault(key, []).append((case, got, n >= len(b.op.cases)))
    return out


def cases_by_variant(b: OpBuild) -> dict[int, tuple[object, host.TilingResult]]:
    """Per tiling key, the first OpDef-expressible case whose tiling selects it, with that tiling."""
    return {key: runs[0][:2] for key, runs in cases_of_variants(b).items()}


def verify_main(b: OpBuild, folder: Path, workdir: Path) -> list[VariantCheck]:
    """Compile ``kernel/main.cpp`` with the kernel on ``ascdsl.sim`` and run, for every variant, the
    first OpDef-expressible case that selects it; outputs are compared with the op's reference."""
    chosen = {key: case for key, (case, _) in cases_by_variant(b).items()}
    checks = []
    for v in b.variants:
        case = chosen.get(v.key)
        if case is None:
            checks.append(VariantCheck(v.key, "", False, "no case selects this variant"))
            continue
        try:
            check_main_case(b, folder, workdir / f"v{v.key}", case)
            checks.append(VariantCheck(v.key, case.label, True))
        except (Error, AssertionError) as e:
            checks.append(VariantCheck(v.key, case.label, False, str(e)))
    return checks


def check_main_case(b: OpBuild, folder: Path, run: Path, case) -> None:
    """Run the built ``kernel/main.cpp`` (on ``ascdsl.sim``) on ``case``, in the folder ``run``, and
    compare its outputs with the op's reference (an Error or AssertionError otherwise)."""
    kernel = folder / "kernel"
    main = kernel / "main.cpp"  # run_main defines ASCENDC_CPU_DEBUG and friends, as CANN's CPU build does
    arrays, descs, attrs = case_arguments(b.op, case)
    run.mkdir(parents=True, exist_ok=True)
    argv = [str(run)]
    for name, a, d in zip(b.op.inputs, arrays, descs):
        a.tofile(run / f"{name}.bin")
        argv.append(f"{name}={d.dtype.name}:{','.join(map(str, d.shape))}")
    argv += [f"{a.name}={_arg_text(attrs[a.name])}" for a in b.op.attrs]
    res = sim.run_main(main, [kernel / f"{b.name}_kernel.cpp"], platform=b.platform.name, argv=argv)
    if res.returncode != 0:
        raise Error(f"main.cpp exited with {res.returncode}: {res.stderr.strip()[-500:]}")
    expected = expected_outputs(b.op, arrays, dict(case.attrs))
    for o, e, scale in zip(b.op.outputs, expected, error_scales(b.op, arrays, dict(case.attrs))):
        dt = b.op.output_dtype(o, descs)
        out = np.fromfile(run / f"{o.name}.bin", dt.np).reshape(np.shape(e))
        assert_close(out, e, dt, scale)


def _cached_source(text: str) -> Path:
    """``text`` as a file in the cache named by its hash (a stable path keeps g++ builds cached)."""
    return cache.text("verify", text)


def _arg_text(value) -> str:
    if isinstance(value, (tuple, list)):
        return ",".join(map(str, value))
    return repr(float(value)) if isinstance(value, float) else str(int(value)) if isinstance(value, bool) else str(value)
