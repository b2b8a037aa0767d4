"""The Ascend C backend: tile IR -> kernel IR -> C++, as one visible list of named passes.

:data:`PIPELINE` runs on each variant after the tile-IR passes (:mod:`ascdsl.passes`):

1. ``check_vector_cores`` (:mod:`.limits`): a located error for what the A2 vector cores cannot run
   (``tl.dot``, atomics other than add/max/min, atomics whose old values are read);
2. ``decompose`` (:mod:`.decompose`): instruction-selection rewrites on the tile IR (chains such
   as sigmoid, float32 forms of what the vector unit lacks; platform-aware);
3. ``select`` (:mod:`.select`): tile IR -> kernel IR (:mod:`.kir`): API calls on logical buffers,
   cut into segments at the loops;
4. ``hoist`` (:mod:`.hoist`): the calls that build a ``Gather``'s offsets from nothing a loop changes run
   on the loop's first trip only;
5. ``fit_queues`` (:mod:`.queues`): a kernel whose queues need more event ids than the platform has
   packs each segment's loads (or stores) into one queue buffer, one queue for all segments;
6. ``plan_ub`` (:mod:`.ubplan`): buffers -> UB slots, the plan kept on the kernel (a store computed
   in a load's dying queue buffer where it can be; outside the general form, the plan whose tiles are spread
   over slots (:data:`.ubplan.SPREAD`) where it fits the budget and leaves fewer vector barriers,
   :func:`vector_barriers`);
7. ``bind_queues`` (:mod:`.queues`): those stores' queue operations on the load's queue
   (``TQueBind<VECIN, VECOUT>``);
8. ``coalesce`` (:mod:`.coalesce`): copies of one row that follow each other in GM and UB made as one;
9. ``stage`` (:mod:`.staging`): segments -> CopyIn/Compute/CopyOut methods;
10. ``order`` (:mod:`.order`): a run of vector calls reordered where that needs fewer barriers;
11. ``sync`` (:mod:`.sync`): barriers and V_S flags from per-pipe reads and writes of each slot;
12. ``name`` (:mod:`.naming`): readable, collision-free C++ names;
13. ``check_budget`` (:mod:`.budget`): the plan fits the platform's UB (a located error otherwise).

Each variant is compiled once (:func:`compile_variant` is cached). After the lift (:mod:`.lift`,
runtime tile extents) and the template classes (:mod:`.templated`), ``simplify``
(:mod:`.simplify`) folds what stayed literal in the general form (loops over one row, literal
arithmetic) just before rendering; rendering (:mod:`.emit`) is the only place C++ text appears. ``Process`` walks the program ids of its block
(``pid = GetBlockIdx(); pid < programs; pid += GetBlockNum()``).
"""
from __future__ import annotations

from collections import Counter
from functools import lru_cache
from typing import Sequence

from ...errors import CompilationError
from ...ir import Kernel
from ...ir.symbol import Undecided
from ...passes import run_passes
from ...platforms import Platform, get_platform
from .. import kir
from ..cube import cube, mix
from ..expand.decompose import decompose
from .emit import class_model, literal
from ..legalise_types.limits import check_vector_cores
from ..names.naming import safe
from ..plan.hoist import hoist
from ..plan.queues import bind_queues, fit_queues
from .jinja import Rendered, render_located
from ..selection.select import select
from ..names.simplify import simplify
from ..plan.staging import stage
from ..plan.coalesce import coalesce
from ..plan.order import order
from ..plan.sync import sync
from .templated import ClassPlan, plan_classes
from ..names.naming import name
from ..plan.tiling import TilingLayout, Variant, pointer_params, scratch_field, scratch_params
from ..plan.budget import check_budget
from ..plan.ubplan import plan_ub, spread_out

PIPELINE = (check_vector_cores, decompose, select, hoist, fit_queues, plan_ub, bind_queues, coalesce, stage, order,
            sync, name, check_budget)
assert PIPELINE[-1] is check_budget  # planned() runs all but this one
"""The backend's passes, in order (the first runs on the tile IR, ``select`` turns it into kernel IR)."""


def compile_variant(kernel: Kernel, platform: Platform | str) -> kir.Kernel:
    """``kernel`` after every pass (a located CompilationError if the backend cannot lower it)."""
    platform = _platform(platform)
    return check_budget(planned(kernel, platform), platform)


def variant_kernel(v: Variant, platform: Platform | str) -> kir.Kernel:
    """The kernel IR of variant ``v``: its lifted kernel (runtime tile extents) or its specialisation."""
    platform = _platform(platform)
    return check_budget(v.lift.kernel, platform) if v.lift is not None else compile_variant(v.kernel, platform)


def variant_planned(v: Variant, platform: Platform | str) -> kir.Kernel:
    """:func:`variant_kernel` without the budget check (what the manifest reads)."""
    return v.lift.kernel if v.lift is not None else planned(v.kernel, platform)


_WORK: Counter = Counter()


def work() -> Counter:
    """What this process's backend computed, to count repeated work: ``("plan", kernel name, kernel hash,
    platform name, general)`` per run of the passes on a tile-IR kernel (:func:`planned`), ``("render", class name)`` per class
    rendered (:func:`render_classes`). A copy; subtract two to count what happened between them."""
    return Counter(_WORK)


_PLAN_UB = PIPELINE.index(plan_ub)


def _after_plan(k: kir.Kernel, platform: Platform) -> kir.Kernel:
    for p in PIPELINE[_PLAN_UB + 1:-1]:
        k = p(k, platform)
    return k


def vector_barriers(k: kir.Kernel) -> int:
    """The ``PipeBarrier<PIPE_V>`` statements of a synced kernel's stages (each once, whatever loops it is in):
    :func:`planned` takes the UB plan whose tiles are spread over slots (:data:`.ubplan.SPREAD`) where it leaves
    fewer, else the compact one."""
    return sum(isinstance(s, kir.Barrier) and s.pipe is kir.Pipe.V for st in k.stages for s in kir.walk(st.body))


@lru_cache(maxsize=4096)
def _planned(kernel: Kernel, platform: Platform, general: bool) -> kir.Kernel | CompilationError | Undecided:
    _WORK["plan", kernel.name, hash(kernel), platform.name, general] += 1
    try:
        k = run_passes(kernel, platform)
        for p in PIPELINE[:_PLAN_UB]:
            k = select(k, platform, general) if p is select else p(k, platform)
        compact = plan_ub(k, platform)
        spread = None if general else spread_out(k, compact.plan, platform)
        k = _after_plan(compact, platform)
        if spread is not None and spread.plan != compact.plan:
            k = min(k, _after_plan(spread, platform), key=vector_barriers)
    except (CompilationError, Undecided) as e:  # kept too: the manifest and planner queries ask again about kernels
        return e                                  # the backend refuses, the lift about symbols that do not decide
    return kir.verify(k)  # once, on the result (each pass keeps the invariants: verifying after each cost a fifth of a lift)


def planned(kernel: Kernel, platform: Platform | str, general: bool = False) -> kir.Kernel:
    """``kernel`` through every pass but the budget check, computed once per variant and platform
    (what the manifest and the planner queries read; a located CompilationError if the backend cannot
    lower it, :class:`.Undecided` where a symbol's domain does not decide a choice, each raised again when asked
    again); ``general``: selection in the form whose structure does not depend on tile extents
    (:mod:`.lift` compares such forms)."""
    out = _planned(kernel, _platform(platform), general)
    if isinstance(out, (CompilationError, Undecided)):
        raise out.with_traceback(None)
    return out


def _platform(platform: Platform | str) -> Platform:
    return get_platform(platform) if isinstance(platform, str) else platform


def classes(variants: Sequence[Variant], platform: Platform | str) -> list[ClassPlan]:
    """The C++ classes of ``variants``: one per variant, or one template for variants that differ
    only by element type (:mod:`.templated`)."""
    return _classes(tuple(variants), _platform(platform))


@lru_cache(maxsize=64)
def _classes(variants: tuple[Variant, ...], platform: Platform) -> list[ClassPlan]:
    forms = {v.key: check_budget(v.form.kernel, platform) for v in variants if v.form is not None}
    return plan_classes(variants, {v.key: variant_kernel(v, platform) for v in variants}, forms)


def class_names(variants: Sequence[Variant], platform: Platform | str) -> dict[int, str]:
    """The class (or template instance) each variant's entry branch constructs, by tiling key (a MIX
    variant's: the class its AIC runs, :func:`vector_class_name` the one its AIVs run)."""
    platform = _platform(platform)
    names = {v.key: instance for c in classes(_vector(variants), platform) for v, instance in c.instances}
    return names | {v.key: cube_class_name(v, platform) for v in variants if cube.is_cube(v.kernel)}


def cube_class_name(v: Variant, platform: Platform) -> str:
    """The AIC class of cube variant ``v``: its class name, with ``Cube`` after it in a MIX kernel."""
    return f"{v.class_name}Cube" if mix.is_mix(v.kernel, platform) else v.class_name


def vector_class_name(v: Variant) -> str:
    """The AIV class of MIX variant ``v``."""
    return f"{v.class_name}Vector"


def _vector(variants: Sequence[Variant]) -> list[Variant]:
    """The variants the vector pipeline compiles (the others multiply matrices: :mod:`.cube`)."""
    return [v for v in variants if not cube.is_cube(v.kernel)]


def render_classes(variants: Sequence[Variant], layout: TilingLayout, platform: Platform | str) -> Rendered:
    """Every variant's class (no includes, no entry), with the DSL location of each line that names one;
    a MIX variant's two (:mod:`.mix`: its AIC's cube class and its AIVs' vector class)."""
    platform = _platform(platform)
    mixed = [v for v in variants if mix.is_mix(v.kernel, platform)]
    vector = [class_model(simplify(c.kernel), c.name, layout.struct_name, c.is_template, c.float32)
              for c in classes(_vector(variants), platform)]
    vector += [class_model(simplify(_epilogue(v, platform)), vector_class_name(v), layout.struct_name,
                           mix="steps" if mix.split(v.kernel, platform).steps is not None else "programs")
               for v in mixed]
    cubes = [v for v in variants if cube.is_cube(v.kernel)]
    _WORK.update([("render", c["class_name"]) for c in vector] + [("render", cube_class_name(v, platform)) for v in cubes])
    return render_located("kernel_classes.cpp.j2", classes=vector, cube_classes=[
        cube.render_class(mix.cube_plan(v.kernel, platform), cube_class_name(v, platform), layout.struct_name)
        for v in cubes])


def _epilogue(v: Variant, platform: Platform) -> kir.Kernel:
    """The vector part of MIX variant ``v`` after every pass (an error in it says what part it is)."""
    parts = mix.split(v.kernel, platform)
    try:
        return compile_variant(parts.vector, platform)
    except CompilationError as e:
        raise e.with_note("the vector work before `tl.dot` runs on the vector cores, which store the operands it "
                          "computes whole" if parts.before else
                          "the vector work of each step of the loop runs on the vector cores, each on the whole tiles "
                          "of the step's products" if parts.steps is not None else
                          f"the vector work after `tl.dot` runs on the vector cores, on the product's whole "
                          f"{parts.tile[0]} x {parts.tile[1]} float32 tile") from None


def kernel_source(symbol: str, variants: Sequence[Variant], layout: TilingLayout, platform: Platform | str,
                  classes: Rendered | None = None, tensors: int | None = None) -> Rendered:
    """A complete direct-launch kernel file: the tiling struct, the classes and the entry ``symbol``
    (the pointers of every variant in first-seen order, then ``workspace`` and ``tiling``), with the DSL
    location of each line that names one. A MIX variant's classes take ``workspace`` as their last
    pointer: its product's float32 tiles, or the operands of its product it computes
    (:func:`.mix.workspace_elements`). ``classes``: :func:`render_classes` of the same arguments, when the
    caller has it (a build renders its classes once for both of its kernel files). ``tensors``: an op's inputs and
    outputs, whose pointers the entry takes; a variant's pointer parameters past them are its scratch, at offsets
    of ``workspace`` (:func:`scratch_args`)."""
    platform = _platform(platform)
    if classes is None:
        classes = render_classes(variants, layout, platform)
    names = class_names(variants, platform)
    calls = [{"key": v.key, "class_name": names[v.key], "args": pointer_names(v.kernel)[:tensors] + (
                  [] if tensors is None else scratch_args(v, tensors, "workspace")), "cube": cube.is_cube(v.kernel),
              "mix": mix.is_mix(v.kernel, platform), "vector_class": vector_class_name(v), **mix_launch(v, platform)}
             for v in variants]
    return render_located("kernel.cpp.j2", symbol=symbol, struct=layout.struct_name, struct_source=layout.struct_source(),
                  classes=classes, pointers=entry_pointers(variants, tensors), calls=calls,
                  workspace=mix.WORKSPACE)


def mix_launch(v: Variant, platform: Platform) -> dict:
    """The arguments of ``mix_launch.cpp.j2`` an entry's branch of variant ``v`` takes: whether its AIVs run
    first (``before``) and how many workspace parameters its classes take (a loop of steps: 2)."""
    if not mix.is_mix(v.kernel, platform):
        return {"before": False, "workspaces": 0}
    return {"before": mix.before(v.kernel, platform), "workspaces": len(mix.split(v.kernel, platform).workspaces)}


def pointer_names(kernel: Kernel) -> list[str]:
    """The C++ names of ``kernel``'s pointer parameters, in order (the entry's ``GM_ADDR`` parameters)."""
    return [safe(n) for n in pointer_params(kernel)]


def entry_pointers(variants: Sequence[Variant], tensors: int | None = None) -> list[str]:
    """The pointer parameters of ``kernel_source``'s entry: every variant's (the first ``tensors`` of each), in
    first-seen order."""
    return list(dict.fromkeys(n for v in variants for n in pointer_names(v.kernel)[:tensors]))


def scratch_args(v: Variant, tensors: int, workspace: str) -> list[str]:
    """The class's arguments for variant ``v``'s scratch pointer parameters (those past the op's ``tensors``,
    :func:`.tiling.scratch_params`): the GM address ``workspace`` plus the bytes of the scratch before each."""
    args, before = [], []
    for n in scratch_params(v.kernel, tensors):
        args.append(" + ".join([workspace, *before]))
        before.append(f"tilingData.{scratch_field(n)}")
    return args


__all__ = ["PIPELINE", "class_names", "cube_class_name", "mix_launch", "vector_class_name", "classes", "compile_variant", "entry_pointers", "pointer_names", "pointer_params", "scratch_args", "variant_kernel", "variant_planned", "kernel_source", "literal", "planned",
           "render_classes", "work"]
