"""The program-batching rows of ``ascdsl bench`` (also ``python -m ascdsl.bench_batching``): Triton-style
kernels as users write them (one row or one block per program, :mod:`ascdsl.bench_kernels` and the ops'
row kernels) on the simulator, unbatched (``ASCDSL_BATCH=0``) and batched, est/floor of each; every
batched result is checked against the interpreter's (bit for bit where the kernel has no
transcendental function, else within the dtype's tolerance).
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from . import dtypes, record, sim
from .backend.batching.batchrun import explain, launch_plan, scalar_fields
from .bench_kernels import (add_kernel, gelu_kernel, layer_norm_kernel, log_softmax_backward_row_kernel,
                            softmax_grad_split_kernel, softmax_kernel)
from .language.core import next_power_of_2
from .platforms import DEFAULT_PLATFORM, get_platform
from .sim import cost
from .testing import assert_close

F32 = np.float32


@dataclass(frozen=True)
class Form:
    """One kernel form: ``launch(arrays, backend)`` on the arrays ``inputs(shape)`` makes; ``exact``:
    the batched simulator must give the interpreter's bits."""

    name: str
    inputs: Callable
    launch: Callable
    exact: bool = False
    scale: Callable | None = None
    """The magnitude the result is accurate to (:func:`ascdsl.testing.close`): a float32 sum of a row is
    accurate to the sum of its magnitudes, whatever the order the backend adds in."""


def _rows(shape, *names, vectors=()):
    rng = np.random.default_rng(0)
    arrays = {n: rng.standard_normal(shape).astype(F32) for n in names}
    arrays.update({n: rng.standard_normal(shape[-1]).astype(F32) for n in vectors})
    arrays["out"] = np.zeros(shape, F32)
    return arrays


def softmax_form(softmax_row_kernel) -> Form:
    def launch(a, backend):
        m, n = a["x"].shape
        softmax_row_kernel[(m,)](a["x"], a["out"], n, BLOCK=max(64, -(-n // 64) * 64), backend=backend)
    return Form("softmax, one row per program", lambda s: _rows(s, "x"), launch)


def rms_norm_form(rms_norm_kernel) -> Form:
    def launch(a, backend):
        m, n = a["x"].shape
        rms_norm_kernel[(m,)](a["x"], a["w"], a["out"], n, F32(1e-6), BLOCK=max(64, -(-n // 64) * 64),
                              backend=backend)
    return Form("rms norm, one row per program", lambda s: _rows(s, "x", vectors=("w",)), launch)


def _layer_norm(a, backend):
    m, n = a["x"].shape
    a.setdefault("mean", np.zeros(m, F32))
    a.setdefault("rstd", np.zeros(m, F32))
    layer_norm_kernel[(m,)](a["x"], a["out"], a["w"], a["b"], a["mean"], a["rstd"], n, n, F32(1e-5),
                            BLOCK_SIZE=min(next_power_of_2(n), 1024), backend=backend)


def _lsm_backward(a, backend):
    m, n = a["x"].shape
    log_softmax_backward_row_kernel[(m,)](a["x"], a["y"], a["out"], n, n, BLOCK=next_power_of_2(n), backend=backend)


def _persistent_softmax(a, backend):
    m, n = a["x"].shape
    softmax_kernel[(m,)](a["out"], a["x"], n, n, m, n, BLOCK_SIZE=next_power_of_2(n), backend=backend)


def _split_grad(a, backend):
    """softmax's backward with each row split over programs, one a vector core of the default platform: the row
    groups and parts whose blocks are smallest, 8 rows a trip."""
    m, n = a["x"].shape
    cores = get_platform(DEFAULT_PLATFORM).vector_core_count
    groups = min(range(1, min(m, cores) + 1), key=lambda g: -(-m // g) * -(-n // (cores // g)))
    rows, cols = -(-m // groups), -(-n // (cores // groups) // 8) * 8
    parts = -(-n // cols)
    softmax_grad_split_kernel[(-(-m // rows) * parts,)](a["x"], a["y"], a["out"], np.zeros((parts, m), F32), m, n,
                                                        ROWS=rows, ROWS_A_TRIP=min(rows, 8), COLS=cols, PARTS=parts,
                                                        backend=backend)


def _flat(kernel, *names):
    def launch(a, backend):
        n = a["x"].size
        kernel[(-(-n // 1024),)](*(a[k].reshape(-1) for k in names), a["out"].reshape(-1), n, BLOCK_SIZE=1024,
                                 backend=backend)
    return launch


def forms(ops_dir="ops") -> list[tuple[Form, tuple]]:
    """Every form with its shapes: the issue's, many short rows and few long rows, then shape classes P
    was not tuned on (the ops' row kernels where ``ops_dir`` has their files)."""
    softmax = _op_kernel(ops_dir, "softmax", "softmax_row_kernel")
    rms = _op_kernel(ops_dir, "rmsnorm", "rms_norm_kernel")
    layer = Form("layer norm forward, one row per program", lambda s: _rows(s, "x", vectors=("w", "b")), _layer_norm)
    lsm = Form("log-softmax backward, one row per program", lambda s: _rows(s, "x", "y"), _lsm_backward,
               scale=lambda a: np.abs(a["x"]) + np.exp(a["y"]) * np.abs(a["x"]).sum(-1, keepdims=True))
    add = Form("vector add, BLOCK=1024, one block per program", lambda s: _rows(s, "x", "y"),
               _flat(add_kernel, "x", "y"), exact=True)
    gelu = Form("gelu, BLOCK=1024, one block per program", lambda s: _rows(s, "x"), _flat(gelu_kernel, "x"))
    split = Form("softmax backward, a row split over programs (a grid barrier)", lambda s: _rows(s, "x", "y"),
                 _split_grad,
                 scale=lambda a: np.abs(a["x"]) * (np.abs(a["y"]) + np.abs(a["x"] * a["y"]).sum(-1, keepdims=True)))
    untuned = ((8192, 512), (3000, 777))  # shape classes P was not tuned on: rows of 2 KiB, odd rows and counts
    rows = ((4096, 1024), (65536, 64), (256, 8192), *untuned)
    softmax_rows = ((4096, 1024), (16384, 128), (65536, 64), (256, 8192), *untuned)
    # few long rows of odd lengths the norms' launches were not tuned on (7.5 and 2.5 rows a core)
    held_out = ((300, 5000), (100, 12000))
    # 4M elements, then few and many blocks, then untuned counts (2277 blocks, the last part-full; 6830),
    # then fewer blocks than two a core (split into pieces: batchrun.SPLITS)
    flat = ((4096, 1024), (256, 1024), (16384, 1024), (3000, 777), (7000, 999), (64, 1024))
    tutorial = Form("softmax (the tutorial's grid-stride loop), a row per program", lambda s: _rows(s, "x"),
                    _persistent_softmax)
    # rows of a few blocks of 1024 (layer norm's loops unrolled where two programs fit), and a held-out long row
    few_blocks = ((4096, 2048), (2000, 3000), (100, 20000))
    norms = [(layer, (*rows, *held_out, *few_blocks))] + ([(rms_norm_form(rms), (*rows, *held_out))] if rms else [])
    return ([(softmax_form(softmax), softmax_rows)] if softmax else []) + [(tutorial, softmax_rows), *norms] + [
        (lsm, (*softmax_rows, *held_out)), (add, flat), (gelu, flat), (split, ((42, 10954), (62, 2818)))]


_OPS: dict = {}


def _op_kernel(ops_dir, op_file: str, name: str):
    """A kernel of ``<ops_dir>/<op_file>.py`` (op files are not a package: loaded by path), None if absent."""
    path = Path(ops_dir) / f"{op_file}.py"
    if not path.is_file():
        return None
    if path not in _OPS:
        spec = importlib.util.spec_from_file_location(f"ascdsl_bench_{op_file}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _OPS[path] = module
    return getattr(_OPS[path], name)


@contextlib.contextmanager
def _batching(on: bool):
    old = os.environ.get("ASCDSL_BATCH")
    os.environ["ASCDSL_BATCH"] = "1" if on else "0"
    try:
        yield
    finally:
        if old is None:
            del os.environ["ASCDSL_BATCH"]
        else:
            os.environ["ASCDSL_BATCH"] = old


def simulate(form: Form, shape, platform: str, batched: bool):
    """(est us, floor us, P (and the split, where the launch splits programs), the arrays after the launch, why it
    ran unbatched) of one launch on the simulator."""
    arrays = form.inputs(shape)
    with _batching(batched), sim.record() as runs, record.launches() as seen:
        form.launch(arrays, "sim")
    (run,) = runs
    s = run.stats
    plat = get_platform(platform)
    if not batched:
        return s.est_us, s.floor_cycles / cost.constants(plat).clock_mhz.value, "1", arrays, ""
    kernel, c = launch_plan(seen[0].kernel, list(seen[0].args), seen[0].grid, plat)
    why = explain(kernel, seen[0].grid[0], plat, scalar_fields(kernel, seen[0].args)) if not c.run.batched else ""
    return s.est_us, s.floor_cycles / cost.constants(plat).clock_mhz.value, c.label, arrays, why


def run(platform: str = DEFAULT_PLATFORM, out=None, shapes_per_form: int | None = None, ops_dir="ops",
        kernel: str = "", shapes: tuple = ()) -> list[tuple]:
    """Print the table (before = unbatched, after = batched) and return its rows: of the forms whose name starts
    with ``kernel``, at ``shapes`` where given (else each form's own)."""
    out = out or sys.stdout
    rows, notes = [], []
    for form, own in forms(ops_dir):
        if not form.name.startswith(kernel):
            continue
        for shape in (shapes or own)[:shapes_per_form]:
            before, floor0, *_ = simulate(form, shape, platform, False)
            after, floor1, p, got, why = simulate(form, shape, platform, True)
            want = form.inputs(shape)
            form.launch(want, "interpreter")
            for k in want:
                if form.exact:
                    assert np.array_equal(got[k], want[k]), (form.name, shape, k)
                else:
                    assert_close(got[k], want[k], dtypes.float32, form.scale(want) if form.scale and k == "out" else None,
                                 err_msg=f"{form.name} {shape} {k}")
            rows.append((form.name, "x".join(map(str, shape)), p, before / floor0, after / floor1, after, floor1))
            print(f"| {form.name} | {rows[-1][1]} fp32 | {p} | {before / floor0:.2f} | {after / floor1:.2f} | "
                  f"{after:.4g} | {floor1:.4g} |", file=out, flush=True)
            notes += [f"  {form.name} {rows[-1][1]}: unbatched: {why}"] if why else []
    for note in notes:
        print(note, file=out)
    return rows


HEADER = "| kernel | shape | P | est/floor before | est/floor after | est us | floor us |\n|---|---|---|---|---|---|---|"


def report(platform: str = DEFAULT_PLATFORM, out=None, shapes_per_form: int | None = None, ops_dir="ops",
           kernel: str = "", shapes: tuple = ()) -> list[tuple]:
    """:func:`run` under a title and the table's header (what ``ascdsl bench`` prints)."""
    out = out or sys.stdout
    print("\nprogram batching: Triton-style kernels as users write them, est/floor unbatched (before) and "
          "batched (after), results checked against the interpreter:", file=out)
    print(HEADER, file=out)
    return run(platform, out, shapes_per_form, ops_dir, kernel, shapes)


def main(argv: list[str] | None = None) -> None:
    """``python -m ascdsl.bench_batching [SHAPES_PER_FORM] [--platform P] [--ops DIR] [--kernel NAME]
    [--shape MxN ...]``."""
    parser = argparse.ArgumentParser(prog="python -m ascdsl.bench_batching", description="Triton-style kernels (a row or a block per program) on the simulator, "
                                     "est/floor unbatched and batched, each batched result checked against the "
                                     "interpreter's.")
    parser.add_argument("shapes_per_form", nargs="?", type=int, help="the first N shapes of each kernel (default: all)")
    parser.add_argument("--platform", default=DEFAULT_PLATFORM)
    parser.add_argument("--ops", default="ops", help="the folder of the ops whose row kernels run (default: ops)")
    parser.add_argument("--kernel", default="", help="only the kernels whose name starts with this ('layer norm')")
    parser.add_argument("--shape", action="append", default=[], metavar="MxN",
                        help="run at this shape instead of each kernel's own (repeatable)")
    args = parser.parse_args(argv)
    shapes = tuple(tuple(int(d) for d in s.split("x")) for s in args.shape)
    report(args.platform, shapes_per_form=args.shapes_per_form, ops_dir=args.ops, kernel=args.kernel, shapes=shapes)


if __name__ == "__main__":
    main()
