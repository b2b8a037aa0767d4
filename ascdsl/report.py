"""``report.html``: one self-contained page per built operator (inline CSS and SVG, no scripts,
no network), written by ``ascdsl build`` next to ``manifest.json``.

Per variant it shows the UB map (every buffer a bar of its bytes, split into its queue slots, against
the planner budget), the schedule (kernel class, constexprs, the first case that selects the variant
with its tiling field values, grid and block dim), the UB footprint formula, and, when the build was
verified, the simulator's counters of that variant's first passing case (with the cost model's pipe
timeline when ``SimStats`` carries ``est_cycles``). The generated kernel is listed with its
``// file.py:LINE`` comments linked to the listed DSL source lines.

Everything comes from the build's data: the manifest (UB plans, tiling fields; read through
:func:`ub_plan`), the verification samples, and the kernel as the renderer returns it: its text and
the DSL location of each line whose comment names one (:class:`.backend.render.Rendered`), so no
generated text is read back.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from .backend import ascendc
from .backend.render import render
from .errors import Loc, source_path, source_root

BAR_WIDTH = 640  # px of a UB map or pipe timeline


def ub_plan(variant_row: Mapping) -> dict | None:
    """``{"total_bytes", "buffers": [{"name", "position", "num", "bytes"}]}`` of a manifest variant row
    (None when the backend could not plan it). The only reader of the manifest's plan."""
    return variant_row.get("ub_plan")


def write(b, folder: Path, samples: Mapping | None = None) -> Path:
    """Write ``folder/report.html`` for the build ``b`` (an :class:`ascdsl.build.OpBuild` written to
    ``folder``); ``samples``: tiling key -> :class:`ascdsl.verify.Sample` from its verification."""
    path = Path(folder) / "report.html"
    with source_root(b.root):  # source files named as the build's other files name them
        path.write_text(html(b, folder, samples or {}))
    return path


def html(b, folder: Path, samples: Mapping) -> str:
    from .verify import cases_by_variant
    manifest = json.loads((Path(folder) / "manifest.json").read_text())
    sources = _Sources()
    kernel_file = f"kernel/{b.name}_kernel.cpp"
    kernel = ascendc.kernel_source(b.name, b.variants, b.layout, b.platform)
    targets = {n: sources.anchor(loc) for n, loc in kernel.locs}
    listings = sources.listings()
    ids = {line["id"] for listing in listings for line in listing["lines"]}
    chosen = cases_by_variant(b)
    fields = manifest["tiling"]["fields"]
    variants = [_variant(row, fields, chosen.get(row["key"]), samples.get(row["key"]), manifest["platform"])
                for row in manifest["variants"]]
    return render("report.html.j2", op=manifest["op"], platform=manifest["platform"], variants=variants,
                  failed=manifest["failed_variants"], tiling=manifest["tiling"], kernel_file=kernel_file,
                  kernel=_listing(kernel, {n: a for n, a in targets.items() if a in ids}),
                  sources=listings, files=sorted(manifest["files"]))


def _variant(row: Mapping, fields, chosen, sample, platform: Mapping) -> dict:
    plan = ub_plan(row)
    out = {"key": row["key"], "kernel": row["kernel"], "class": row["class"], "constexprs": row["constexprs"],
           "dtypes": row["pointer_dtypes"], "ir": row["ir"], "ub": _ub_map(plan, platform) if plan else None,
           "footprint": [f"{_frac(f['num'], f['den'])} * {name} + {f['base']} bytes"
                         for name, f in row["footprint"].items()],
           "case": None, "tiling": [], "block_dim": None, "stats": _stats(sample)}
    if chosen is not None:
        case, tiling = chosen
        values = dict(tiling.fields)
        out.update(case=case.label, block_dim=tiling.block_dim,
                   tiling=[{**f, "value": values.get(f["name"], "")} for f in fields])
    return out


def _frac(num: int, den: int) -> str:
    return str(num) if den == 1 else f"{num}/{den}"


def _ub_map(plan: Mapping, platform: Mapping) -> dict:
    """An overview bar of the whole UB (what the plan uses, the budget line), and one row per buffer
    laid end to end on a scale where the plan's total spans the map, split into its queue slots."""
    ub, budget, total = platform["ub_bytes"], platform["ub_budget_bytes"], plan["total_bytes"]
    overview, scale = BAR_WIDTH / ub, BAR_WIDTH / max(total, 1)
    bars, offset = [], 0
    for i, buf in enumerate(plan["buffers"]):
        size = buf["num"] * buf["bytes"]
        bars.append({**buf, "css": buf["position"].replace("/", "-"), "total": size, "offset": offset, "y": 44 + 22 * i,
                     "x": round(offset * scale, 2), "width": round(size * scale, 2),
                     "slots": [round((offset + s * buf["bytes"]) * scale, 2) for s in range(1, buf["num"])]})
        offset += size
    return {"bars": bars, "total": total, "budget": budget, "ub": ub, "width": BAR_WIDTH,
            "used_x": max(round(total * overview, 2), 1.0), "budget_x": round(budget * overview, 2),
            "height": 52 + 22 * len(bars), "percent": round(100 * total / budget, 1)}


def _stats(sample) -> dict | None:
    if sample is None:
        return None
    s = sample.stats
    counters = [("GM read", f"{s.gm_read_bytes} B"), ("GM write", f"{s.gm_write_bytes} B"),
                ("GM copies", s.gm_copies), ("UB copies", s.ub_copies), ("UB peak", f"{s.ub_peak_bytes} B"),
                ("blocks", len(s.per_block))]
    vector = [{"api": api, "calls": n, "elements": s.vector_elements.get(api, 0)}
              for api, n in sorted(s.vector_calls.items())]
    return {"case": sample.case, "counters": counters, "vector": vector, "cost": _cost(s)}


def _cost(s) -> dict | None:
    """The cost model's estimate and pipe timeline, when the simulator has a cost model."""
    cycles = getattr(s, "est_cycles", 0)
    if not cycles:
        return None
    busy = dict(getattr(s, "pipe_busy", {}))
    scale = BAR_WIDTH / max(cycles, *busy.values(), 1)
    pipes = [{"name": p, "cycles": c, "width": max(round(c * scale, 2), 1.0), "y": 8 + 22 * i,
              "critical": p == getattr(s, "critical_pipe", "")} for i, (p, c) in enumerate(busy.items())]
    return {"cycles": cycles, "us": f"{getattr(s, 'est_us', 0.0):.3g}", "floor": getattr(s, "floor_cycles", 0),
            "pipes": pipes, "width": BAR_WIDTH, "total_x": round(cycles * scale, 2),
            "height": 16 + 22 * len(pipes)}


def _listing(text: str, targets: Mapping[int, str]) -> list[dict]:
    """The lines of a generated file, each with the anchor of the DSL line it names (``targets``: by
    line number), if any."""
    return [{"n": n, "text": line, "target": targets.get(n)} for n, line in enumerate(text.splitlines(), 1)]


class _Sources:
    """The DSL files the IR's locations name, each listed once with an anchor per line."""

    def __init__(self):
        self.files: dict[str, int] = {}

    def anchor(self, loc: Loc) -> str:
        index = self.files.setdefault(loc.file, len(self.files))
        return f"src{index}-L{loc.line}"

    def listings(self) -> list[dict]:
        out = []
        for file, index in self.files.items():
            path = Path(file)
            lines = path.read_text().splitlines() if path.is_file() else []
            out.append({"file": source_path(file), "index": index,
                        "lines": [{"n": n, "text": t, "id": f"src{index}-L{n}"} for n, t in enumerate(lines, 1)]})
        return out
