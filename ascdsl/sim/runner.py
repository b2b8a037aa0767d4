"""run_kernel: build a kernel source with the simulator headers and run every block of one launch."""
from __future__ import annotations

import contextlib
import ctypes
import json
import os
import random
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np

from .. import cache
from ..platforms import DEFAULT_PLATFORM, Platform, get_platform
from . import cost
from .build import build_library
from .errors import SimArgumentError, SimError
from .signature import Entry, check_args, default_tiling_type, find_kernels, wrapper_source
from .stats import SimResult, SimStats, publish


class _LaunchConfig(ctypes.Structure):
    """Mirror of ascdsl_sim::LaunchConfig (include/ascdsl_sim/runtime.h)."""

    _fields_ = [
        ("platform", ctypes.c_char_p),
        ("ub_bytes", ctypes.c_uint64),
        ("ub_budget_bytes", ctypes.c_uint64),
        ("bf16", ctypes.c_uint64),
        ("check_hazards", ctypes.c_uint64),
        ("check_vv", ctypes.c_uint64),
        ("block_dim", ctypes.c_uint64),
        ("order", ctypes.POINTER(ctypes.c_int64)),
        ("tiling_key", ctypes.c_uint64),
        ("n_regions", ctypes.c_uint64),
        ("region_base", ctypes.POINTER(ctypes.c_uint64)),
        ("region_bytes", ctypes.POINTER(ctypes.c_uint64)),
        ("cost", ctypes.c_void_p),
        ("mix", ctypes.c_uint64),
    ]


class _CostParams(ctypes.Structure):
    """Mirror of ascdsl_sim::CostParams (include/ascdsl_sim/cost.h); the values come from ascdsl.sim.cost."""

    _fields_ = [
        ("scalar_issue", ctypes.c_double),
        ("vector_issue", ctypes.c_double),
        ("barrier_drain", ctypes.c_double),
        ("flag_latency", ctypes.c_double),
        ("copy_setup", ctypes.c_double),
        ("burst_cycles", ctypes.c_double),
        ("gm_bytes_per_cycle", ctypes.c_double),
        ("scalar_gm_latency", ctypes.c_double),
        ("n_apis", ctypes.c_uint64),
        ("api_names", ctypes.POINTER(ctypes.c_char_p)),
        ("api_cycles_per_repeat", ctypes.POINTER(ctypes.c_double)),
        ("api_extra_passes", ctypes.POINTER(ctypes.c_double)),
        ("cube_macs_per_cycle", ctypes.c_double),
        ("scalar_ub_access", ctypes.c_double),
        ("l2_bytes_per_cycle", ctypes.c_double),
        ("l2_burst_cycles", ctypes.c_double),
        ("l2_capacity", ctypes.c_double),
        ("l2_write_bytes_per_cycle", ctypes.c_double),
        ("l2_write_burst_cycles", ctypes.c_double),
        ("l1_to_l0a_bytes_per_cycle", ctypes.c_double),
        ("l1_to_l0b_bytes_per_cycle", ctypes.c_double),
        ("cores", ctypes.c_uint64),
        ("sync_all_latency", ctypes.c_double),
    ]


def _cost_params(plat: Platform, block_dim: int, cube: bool) -> _CostParams:
    k = cost.constants(plat)
    apis = sorted(set(k.cycles_per_repeat) | set(k.extra_passes))
    n = max(len(apis), 1)
    return _CostParams(
        k.scalar_issue.value, k.vector_issue.value, k.barrier_drain.value, k.flag_latency.value, k.copy_setup.value,
        k.burst_cycles.value, cost.core_share(plat, block_dim, cube), k.scalar_gm_latency.value, len(apis),
        (ctypes.c_char_p * n)(*(a.encode() for a in apis)),
        (ctypes.c_double * n)(*(k.cycles_per_repeat.get(a, 1.0) for a in apis)),
        (ctypes.c_double * n)(*(k.extra_passes.get(a, 0.0) for a in apis)),
        k.cube_macs_per_cycle.value, k.scalar_ub_access.value, k.l2_bytes_per_cycle.value,
        cost.l2_burst_cycles(k), plat.l2_bytes, k.l2_write_bytes_per_cycle.value, cost.l2_burst_cycles(k, write=True),
        k.l1_to_l0a_bytes_per_cycle.value, k.l1_to_l0b_bytes_per_cycle.value,
        cost.cores(plat, cube), k.sync_all_latency.value,
    )


_libraries: dict[Path, ctypes.CDLL] = {}


def _load(wrapper: Callable[[list[str]], str], sources: list[Path]) -> ctypes.CDLL:
    """The built library of ``wrapper`` (:func:`.build.build_library`); a cached library that fails to load
    is rebuilt once."""
    path = build_library(wrapper, sources)
    if path not in _libraries:
        try:
            lib = ctypes.CDLL(str(path))
        except OSError:
            cache.invalidate(path)
            lib = ctypes.CDLL(str(build_library(wrapper, sources)))
        lib.ascdsl_sim_report.restype = ctypes.c_char_p
        _libraries[path] = lib
    return _libraries[path]


@contextlib.contextmanager
def _captured_stdout() -> Iterator[list[str]]:
    """Redirects file descriptor 1 (where the kernel's printf goes) into the yielded list."""
    out: list[str] = []
    sys.stdout.flush()
    with tempfile.TemporaryFile() as f:
        saved = os.dup(1)
        os.dup2(f.fileno(), 1)
        try:
            yield out
        finally:
            os.dup2(saved, 1)
            os.close(saved)
            f.seek(0)
            out.append(f.read().decode(errors="replace"))


def _marshal(args: tuple) -> tuple[ctypes.Array, list[np.ndarray], list[tuple[int, int]]]:
    """The kernel's argument pointers, the scalar boxes they point into (keep them alive) and the
    distinct GM regions (address, bytes) of the arrays."""
    keep = [np.array([a]) for a in args if isinstance(a, np.generic)]
    boxes = iter(keep)
    pointers = (ctypes.c_void_p * max(len(args), 1))()
    for i, a in enumerate(args):
        if isinstance(a, np.generic):
            a = next(boxes)
        pointers[i] = None if a is None else a.ctypes.data
    regions = sorted({(a.ctypes.data, a.nbytes) for a in args if isinstance(a, np.ndarray)})
    return pointers, keep, regions


def _argument(args: tuple, regions: list[tuple[int, int]], region: int) -> int | None:
    """The index of the first argument that is GM region ``region`` (None for -1)."""
    if not 0 <= region < len(regions):
        return None
    return next(i for i, a in enumerate(args)
                if isinstance(a, np.ndarray) and (a.ctypes.data, a.nbytes) == regions[region])


def _block_order(block_dim: int, shuffle_blocks: bool | int) -> list[int]:
    order = list(range(block_dim))
    if shuffle_blocks is not False:
        random.Random(None if shuffle_blocks is True else shuffle_blocks).shuffle(order)
    return order


def run_kernel(
    source_path: str | os.PathLike,
    kernel_name: str,
    args: Sequence,
    block_dim: int,
    platform: str = DEFAULT_PLATFORM,
    *,
    hazards: bool = True,
    vv_hazards: bool = True,
    shuffle_blocks: bool | int = False,
    tiling_key: int = 0,
    tiling_type: str | None = None,
    entry: Entry | None = None,
    mix: bool = False,
    cube: bool = False,
) -> SimResult:
    """Compiles ``source_path`` with the simulator's ``kernel_operator.h`` and runs ``kernel_name``.

    ``args`` follow the kernel's ``extern "C"`` parameters: NumPy arrays are GM buffers (written in
    place), NumPy scalars (``np.uint32(n)``, ``np.float32(x)``, ...) are by-value arguments of exactly
    that C type, ``None`` is a null pointer, and a ``uint8`` array can carry tiling bytes.
    Blocks run one after another, each with fresh UB poisoned to all-ones bytes (NaN).

    Options: ``hazards`` checks synchronisation between pipes; ``vv_hazards=False`` drops only the
    vector-after-vector check (for code relying on CANN's automatic PipeBarrier insertion);
    ``shuffle_blocks`` runs blocks in random order (an int is the seed); ``tiling_key`` is what
    ``TILING_KEY_IS`` compares against; ``tiling_type`` names the struct ``GET_TILING_DATA`` fills
    (default: the one struct named ``*TilingData`` in the source). ``entry`` is the kernel's
    declaration when the caller knows it (``signature.gm_entry`` for ascdsl's generated files): the
    source is then not searched, for the kernel or for a tiling struct. ``mix`` launches a MIX kernel:
    each block runs as its AI cube core and its two AI vector cores, interleaved at their cross-core waits
    (``ascdsl_sim/cross_core.h``). ``cube``: the blocks run on the AI cube cores (a kernel with cube work), so HBM
    is shared among those, not the vector cores.

    Launches run one at a time (the simulator state is per process, not per thread).
    Raises SimError naming the API, block and reason when a check fails, SimCompileError when g++
    rejects the source, and SimArgumentError when ``args`` do not match the declaration.
    """
    plat = get_platform(platform)
    path = Path(source_path).resolve()
    if entry is None:
        source = path.read_text()
        kernels = find_kernels(source)
        if kernel_name not in kernels:
            raise SimArgumentError(
                f'no extern "C" kernel {kernel_name!r} in {path}; found: {", ".join(kernels) or "none"}'
            )
        tiling_type = tiling_type or default_tiling_type(source)
    elif entry.name != kernel_name:
        raise SimArgumentError(f"kernel {kernel_name!r} launched with the declaration of {entry.name!r}")
    else:
        kernels = {kernel_name: entry}
    kernel = kernels[kernel_name]
    args = tuple(args)
    check_args(kernel, args)
    if not 1 <= block_dim <= 65535:
        raise SimArgumentError(f"block_dim {block_dim} is outside [1, 65535]")
    lib = _load(lambda names: wrapper_source(names[0], kernels, tiling_type), [path])

    pointers, _scalars_alive, regions = _marshal(args)
    order = _block_order(block_dim, shuffle_blocks)
    params = _cost_params(plat, block_dim, cube)
    cfg = _LaunchConfig(
        plat.name.encode(), plat.ub_bytes, plat.ub_budget_bytes, plat.has_bf16, hazards, vv_hazards, block_dim,
        (ctypes.c_int64 * block_dim)(*order), tiling_key, len(regions),
        (ctypes.c_uint64 * max(len(regions), 1))(*(base for base, _ in regions)),
        (ctypes.c_uint64 * max(len(regions), 1))(*(n for _, n in regions)), ctypes.addressof(params), mix,
    )
    run = getattr(lib, f"ascdsl_sim_run_{kernel_name}")
    with _captured_stdout() as out:
        run(ctypes.byref(cfg), pointers)
    report = json.loads(lib.ascdsl_sim_report().decode())
    if "error" in report:
        e = report["error"]
        raise SimError(e["reason"], e["api"], e["block"], _argument(args, regions, e.get("region", -1)))
    result = SimResult(kernel_name, SimStats.from_report(report["blocks"], plat, report.get("trace")), block_dim, plat, out[0])
    publish(result)
    return result
