"""``backend="sim"``: run kernels as generated Ascend C on the CPU simulator (:mod:`ascdsl.sim`).

A launch specialises the kernel, runs the passes, renders a one-variant direct-launch kernel file,
writes it under the simulator's cache (named by its content hash, so g++ builds it once) and runs
the blocks :mod:`.cores` gives (``min(grid product, vector cores)`` for a vector kernel, ``min(grid product,
cube cores)`` for a pure-cube or a MIX kernel); results land
in the arrays in place.

g++ dominates the cost, so many kernels can share one build: launches inside :func:`recording`
only note their kernels, and :func:`prebuild` renders those into files of several variants each
(one entry switching on the tiling key) that later launches of the same kernels use. Every file written
enters its kernels in the cache's kernel index (``sim-index/``, keyed by the kernel, its platform and this
ascdsl's sources): a kernel that a file of any process holds is launched from that file (its build is
shared through the build cache) and a prebuild leaves it out, so no kernel is compiled into two files.
"""
from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

from .. import cache, interpreter, sim
from ..errors import Error
from ..ir import Kernel, dump, walk
from ..ir.provenance import access_roots
from ..jit import register_backend
from ..platforms import Platform, get_platform
from .cube import cube, mix
from .host import cores
from .plan import tiling
from ..sim import SimCompileError, SimError
from ..sim.build import log as build_log
from ..sim.errors import KernelSimError
from ..sim.signature import Entry, gm_entry
from .render.ascendc import compile_variant, entry_pointers, kernel_source, pointer_names, pointer_params
from .batching.batchrun import batch_launch

SYMBOL = "ascdsl_kernel"


@dataclass(frozen=True)
class _File:
    """A written kernel file: its path, its tiling layout, its entry's declaration and how many kernels it holds."""
    path: str
    layout: tiling.TilingLayout
    entry: Entry
    variants: int = 1


_prebuilt: dict[tuple[Kernel, str], tuple[_File, int]] = {}
_failed: set[str] = set()  # files g++ rejected in this process: their kernels are built alone
_recorded: list | None = None


def _write(kernels: list[Kernel], platform: str) -> _File:
    """The kernel file of ``kernels``, each entered in the kernel index (where no file holds it yet)."""
    layout = tiling.layout("KernelTilingData", kernels)
    variants = tiling.variants(kernels)
    source = kernel_source(SYMBOL, variants, layout, platform)
    path = cache.text("gen", source)
    keys = [_kernel_key(k, platform) for k in kernels]
    if os.environ.get("ASCDSL_BUILD_LOG"):  # which kernels the file holds: a kernel in two built files was built twice
        build_log({"file": path.name, "kernels": [k[:16] for k in keys], "names": [k.name for k in kernels]})
    file = _File(str(path), layout, gm_entry(SYMBOL, entry_pointers(variants)), len(kernels))
    for tiling_key, key in enumerate(keys, 1):
        cache.kept(_index_folder() / f"{key}.pickle",
                   lambda tiling_key=tiling_key: (path.name, tiling_key, file.layout, file.entry, file.variants))
    return file


def _index_folder() -> Path:
    """The kernel index: per kernel, the file (of any process) that holds it."""
    return cache.folder("sim-index")


@lru_cache(maxsize=4096)
def _kernel_key(kernel: Kernel, platform: str) -> str:
    """What determines a kernel's variant in any file: the kernel, the platform and this ascdsl's sources."""
    return cache.digest(cache.package_digest(), platform, dump(kernel))[:40]


def _indexed(kernel: Kernel, platform: str) -> tuple[_File, int] | None:
    """The file the kernel index names for ``kernel`` and its tiling key there; None where it names none
    intact, or one g++ rejected here."""
    found = cache.load(_index_folder() / f"{_kernel_key(kernel, platform)}.pickle")
    if found is None:
        return None
    name, tiling_key, layout, entry, variants = found
    path = cache.folder() / name
    if str(path) in _failed or not cache.intact_text(path):
        return None
    return _File(str(path), layout, entry, variants), tiling_key


@lru_cache(maxsize=256)
def _compiled(kernel: Kernel, platform: str) -> tuple[_File, int]:
    """The kernel file for ``kernel`` on ``platform`` and the kernel's tiling key in it: this process's
    prebuild's, else the kernel index's, else a file of its own."""
    found = _prebuilt.get((kernel, platform)) or _indexed(kernel, platform)
    return found or (_write([kernel], platform), 1)


@contextmanager
def recording():
    """Inside, ``sim`` launches record ``(kernel, platform)`` into the list this yields and run on the
    interpreter instead (nothing is built; outputs are the interpreter's, so code that checks them runs
    on to its later launches), once the launch-time checks of :func:`launch_blocks` pass."""
    global _recorded
    outer, _recorded = _recorded, []
    try:
        yield _recorded
    finally:
        _recorded = outer


def prebuild(launches, batch: int = 24) -> int:
    """Render the distinct ``(kernel, platform)`` pairs into kernel files of up to ``batch``
    variants; returns how many files. Kernels whose scalar parameters clash share no file (the file's
    entry takes every kernel's pointers, :func:`gm_arguments`). A kernel that has a file already
    (:func:`prebuilt`: of any process) is left out, so the same launches over the same cache make the same
    files; a kernel the backend does not lower (:func:`lowers`) is left out, its launch reports why at the
    user's line. Inside a :func:`recording`, the launches join that recording instead (its own prebuild
    makes the files, fewer and larger)."""
    if _recorded is not None:
        _recorded.extend(launches)
        return 0
    files = 0
    groups: dict[str, list[list[Kernel]]] = {}
    for kernel, platform in filter(lambda launch: not prebuilt(*launch) and lowers(*launch), dict.fromkeys(launches)):
        for group in groups.setdefault(platform, []):
            if len(group) < batch:
                try:
                    tiling.layout("KernelTilingData", [*group, kernel])
                except Error:
                    continue
                group.append(kernel)
                break
        else:
            groups[platform].append([kernel])
    for platform, batches in groups.items():
        for kernels in batches:
            file = _write(kernels, platform)
            files += 1
            for key, kernel in enumerate(kernels, 1):
                _prebuilt[(kernel, platform)] = (file, key)
    _compiled.cache_clear()
    return files


def lowers(kernel: Kernel, platform: str) -> bool:
    """Whether the backend lowers ``kernel`` on ``platform``: through the vector passes, or, for a kernel that
    multiplies matrices, rendered alone (its cube and MIX forms); not where it raises an ascdsl error (a
    refusal located at the user's line, which the kernel's launch raises)."""
    try:
        if cube.is_cube(kernel):
            kernel_source(SYMBOL, tiling.variants([kernel]), tiling.layout("KernelTilingData", [kernel]), platform)
        else:
            compile_variant(kernel, platform)
    except Error:
        return False
    return True


def prebuilt(kernel: Kernel, platform: str) -> bool:
    """Whether ``kernel`` has a file on ``platform``: of this process's :func:`prebuild`, or of any process
    (the kernel index)."""
    return (kernel, platform) in _prebuilt or _indexed(kernel, platform) is not None


def _unbatch(file: _File) -> None:
    """Forget ``file``: its kernels' next launches build each alone (one kernel that g++ rejects fails the
    whole file it shares)."""
    for pair in [pair for pair, (f, _) in _prebuilt.items() if f == file]:
        del _prebuilt[pair]
    _failed.add(file.path)
    _compiled.cache_clear()


def gm_arguments(kernel: Kernel, arrays: list, entry: Entry) -> tuple[list, list[int | None]]:
    """The kernel's pointer ``arrays`` at ``entry``'s pointer parameters (a file's entry takes the
    pointers of all its kernels: None for the others') and, per parameter, the index of the kernel's
    pointer it carries (None: another kernel's)."""
    own = {name: i for i, name in enumerate(pointer_names(kernel))}
    slots = [own.get(p.name) for p in entry.params[:-2]]  # ..., workspace, tiling
    return [None if i is None else arrays[i] for i in slots], slots


def run(kernel: Kernel, args: list, grid: tuple[int, int, int], platform: str) -> None:
    """The ``sim`` backend runner (see :func:`ascdsl.jit.register_backend`); programs batched where
    :mod:`.batchrun` finds it applies."""
    given = kernel, args, grid
    kernel, args, grid = batch_launch(kernel, args, grid, platform)
    fields, arrays = tiling.launch_fields(kernel, args, grid)
    if _recorded is not None:  # the launch's own checks first: one they refuse (it may be huge) is not run at all
        launch_blocks(kernel, fields, grid, get_platform(platform))
        _recorded.append((kernel, platform))
        interpreter.run(*given)
        return
    block_dim, workspace = launch_blocks(kernel, fields, grid, get_platform(platform))  # its checks before a build
    file, key = _compiled(kernel, platform)
    arrays = [a if a is None or a.flags.writeable else a.copy() for a in arrays]  # read-only: never stored
    fields["tilingKey"] = key
    gm, owners = gm_arguments(kernel, arrays, file.entry)
    try:
        with located_errors(kernel, owners):
            _front_end(file.path)
            plat = get_platform(platform)
            result = sim.run_kernel(file.path, SYMBOL, [*gm, workspace, file.layout.pack(fields)], block_dim,
                                    platform, tiling_key=key, tiling_type=file.layout.struct_name, entry=file.entry,
                                    mix=workspace is not None, cube=cores.of(kernel, plat) is not cores.VECTOR)
    except sim.SimCompileError:
        if file.variants == 1:
            raise
        _unbatch(file)  # maybe another kernel of the file: this one alone
        return run(kernel, args, grid, platform)
    sys.stdout.write(result.stdout)  # tl.device_print


def launch_blocks(kernel: Kernel, fields: dict, grid: tuple[int, int, int],
                  platform: Platform) -> tuple[int, np.ndarray | None]:
    """The block dim of a launch of ``kernel`` over ``grid`` (:mod:`.cores`; at least one block) and, for a MIX
    kernel, its workspace (4-byte words of the products or of the operands the AIVs compute, NaN until
    written); a located error where the launch's tiling ``fields`` break the cube form's assumptions
    (:func:`.cube.check_launch`) or a grid barrier's (:func:`.cores.check_resident`)."""
    programs = grid[0] * grid[1] * grid[2]
    kind = cores.of(kernel, platform)
    cores.check_resident(kernel, platform, programs)
    if kind is not cores.VECTOR:
        cube.check_launch(mix.cube_plan(kernel, platform), fields)
    workspace = None
    if kind is cores.MIX:
        workspace = np.full(mix.workspace_elements(kernel, platform, programs), np.nan, np.float32)
    return max(1, kind.block_dim(platform, programs)), workspace


@lru_cache(maxsize=1024)
def _front_end(path: str) -> None:
    """The front-end check of a generated file (:func:`ascdsl.sim.check_front_end`), once per process."""
    sim.check_front_end(Path(path))


@contextmanager
def located_errors(kernel: Kernel, owners: Sequence[int | None]):
    """Inside, a simulator GM check about an argument of the entry (passed first, ``owners[i]`` the index
    of the kernel's pointer argument ``i`` carries) is re-raised at the DSL line that accesses it, naming
    the pointer."""
    try:
        yield
    except SimCompileError:
        raise
    except SimError as e:
        if e.arg is None or e.arg >= len(owners) or owners[e.arg] is None:
            raise
        raise _located(e, kernel, owners[e.arg]) from None


def _located(error, kernel: Kernel, pointer: int):
    names = pointer_params(kernel)
    roots = access_roots(kernel)
    accesses = sorted({i.loc for i in walk(kernel.body) if pointer in roots.get(id(i), ())},
                      key=lambda loc: (loc.line, loc.col))
    if not accesses:
        return error
    notes = tuple(f"`{names[pointer]}` is also accessed at {loc}" for loc in accesses[1:])
    return KernelSimError(error, accesses[0], names[pointer], notes)


register_backend("sim", run)
