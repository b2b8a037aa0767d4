"""``report.html``: one self-contained page per built operator (inline CSS and SVG, one small inline
script, no network), written by ``ascdsl build`` next to ``manifest.json``.

Per variant it shows the exact UB footprint as one expression of the tiling fields, then one panel
per shape that selects the variant (the op's cases and the build's probe shapes; a ``<select>``
picks one, and ``#v<key>-s<n>`` in the address opens that panel): the tiling field values and block
dim the tiling function gives for it, the UB map at those values (every buffer a bar of its bytes,
split into its queue slots, against the planner budget) with the footprint's value, and, when the
build was verified, the simulator's counters of that shape with the cost model's pipe timeline
(MTE2 / V / MTE3 / S, and the cube pipes MTE1 / M of a kernel with ``tl.dot``: every instruction of the
block with the longest span, and the waits on flags, queue buffers and barriers; a MIX block's cube core,
then its slower vector core). Each variant names the cores it runs on (:mod:`.backend.host.cores`); a MIX
variant's shapes show their user workspace and its UB map is its epilogue's. The generated kernel is listed
with its ``// file.py:LINE`` comments linked to the listed DSL source lines.

Everything comes from the build's data: the manifest (UB plans with each buffer's size as
polynomials of the tiling fields, tiling fields; read through :func:`ub_plan`), the tiling of every
case (:func:`ascdsl.verify.cases_of_variants`), the verification samples, and the kernel as the
renderer returns it: its text and the DSL location of each line whose comment names one
(:class:`.backend.render.jinja.Rendered`), so no generated text is read back.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from .backend.host import cores
from .backend.lift.poly import ceil_block, from_json
from .backend.render.jinja import render
from .errors import Loc, source_path, source_root
from .sim.cost import CUBE_PIPES, PIPES
from .verify import cases_of_variants

BAR_WIDTH = 640  # px of a UB map or pipe timeline
LANE = 22  # px per row of a UB map or timeline


def ub_plan(variant_row: Mapping) -> dict | None:
    """``{"total_bytes", "expression"?, "buffers": [{"name", "position", "num", "bytes", "needs"?}]}`` of a
    manifest variant row (None when the backend could not plan it). The only reader of the manifest's plan."""
    return variant_row.get("ub_plan")


def buffer_bytes(buffer: Mapping, values: Mapping | None) -> int:
    """Bytes of one buffer of a :func:`ub_plan` at tiling field ``values`` (its largest need rounded up
    to a block, as the generated ``InitBuffer`` computes it); its planned bytes without needs or values."""
    if "needs" not in buffer or values is None:
        return buffer["bytes"]
    return ceil_block(max(from_json(p).at(values) for p in buffer["needs"]))


def write(b, folder: Path, samples: Mapping | None = None) -> Path:
    """Write ``folder/report.html`` for the build ``b`` (an :class:`ascdsl.opbuild.OpBuild` written to
    ``folder``); ``samples``: tiling key -> the :class:`ascdsl.verify.Sample` s of its verification."""
    path = Path(folder) / "report.html"
    with source_root(b.root):  # source files named as the build's other files name them
        path.write_text(html(b, samples or {}))
    return path


def html(b, samples: Mapping) -> str:
    """The page of build ``b`` (its manifest and kernel file as the build rendered them)."""
    manifest = b.manifest
    sources = _Sources()
    kernel_file = f"kernel/{b.name}_kernel.cpp"
    kernel = b.files[kernel_file]
    targets = {n: sources.anchor(loc) for n, loc in kernel.locs}
    listings = sources.listings()
    ids = {line["id"] for listing in listings for line in listing["lines"]}
    runs = cases_of_variants(b)
    fields = manifest["tiling"]["fields"]
    variants = [_variant(row, fields, runs.get(row["key"], []), samples.get(row["key"], ()), manifest["platform"])
                for row in manifest["variants"]]
    return render("report.html.j2", op=manifest["op"], platform=manifest["platform"], variants=variants,
                  failed=manifest["failed_variants"], tiling=manifest["tiling"], kernel_file=kernel_file,
                  kernel=_listing(kernel, {n: a for n, a in targets.items() if a in ids}),
                  sources=listings, files=sorted(manifest["files"]))


def _variant(row: Mapping, fields, runs: Sequence, samples: Sequence, platform: Mapping) -> dict:
    """A variant's page section: its footprint expression and a panel per shape that selects it."""
    plan = ub_plan(row)
    by_case = {s.case: s for s in samples}
    panels = []
    for n, (case, tiling, probe) in enumerate(runs):
        values = dict(tiling.fields)
        panels.append({"id": f"v{row['key']}-s{n}", "label": case.label, "probe": probe,
                       "block_dim": tiling.block_dim, "workspace": tiling.workspace_bytes,
                       "products": row["kernel_type"] == cores.MIX.kernel_type,
                       "tiling": [{**f, "value": values.get(f["name"], "")} for f in fields],
                       "ub": _ub_map(plan, values, platform) if plan else None,
                       "stats": _stats(by_case.get(case.label))})
    if not panels:  # no shape selects it: the plan at the largest extents the variant admits
        panels.append({"id": f"v{row['key']}-s0", "label": "largest extents (no case or probe shape selects it)",
                       "probe": False, "block_dim": None, "workspace": 0, "tiling": [],
                       "ub": _ub_map(plan, None, platform) if plan else None, "stats": None})
    expression = (plan.get("expression") or str(plan["total_bytes"])) if plan else None
    return {"key": row["key"], "kernel": row["kernel"], "class": row["class"], "kernel_type": row["kernel_type"],
            "cores": cores.BY_TYPE[row["kernel_type"]].what, "constexprs": row["constexprs"],
            "dtypes": row["pointer_dtypes"], "ir": row["ir"], "expression": expression,
            "extents": row.get("runtime_extents", []), "panels": panels}


def _ub_map(plan: Mapping, values: Mapping | None, platform: Mapping) -> dict:
    """The UB at tiling field ``values``: an overview bar of the whole UB (what the plan uses, the budget
    line), and one row per buffer laid end to end on a scale where the total spans the map, split into
    its queue slots."""
    sizes = [buffer_bytes(buf, values) for buf in plan["buffers"]]
    total = sum(buf["num"] * size for buf, size in zip(plan["buffers"], sizes))
    ub, budget = platform["ub_bytes"], platform["ub_budget_bytes"]
    overview, scale = BAR_WIDTH / ub, BAR_WIDTH / max(total, 1)
    bars, offset = [], 0
    for i, (buf, size) in enumerate(zip(plan["buffers"], sizes)):
        whole = buf["num"] * size
        bars.append({"name": buf["name"], "position": buf["position"], "num": buf["num"], "bytes": size,
                     "css": buf["position"].replace("/", "-"), "total": whole, "offset": offset, "y": 44 + LANE * i,
                     "x": round(offset * scale, 2), "width": round(whole * scale, 2),
                     "slots": [round((offset + s * size) * scale, 2) for s in range(1, buf["num"])]})
        offset += whole
    return {"bars": bars, "total": total, "budget": budget, "ub": ub, "width": BAR_WIDTH,
            "used_x": max(round(total * overview, 2), 1.0), "budget_x": round(budget * overview, 2),
            "height": 52 + LANE * len(bars), "percent": round(100 * total / budget, 1)}


def _stats(sample) -> dict | None:
    if sample is None:
        return None
    s = sample.stats
    counters = [("GM read", f"{s.gm_read_bytes} B"), ("GM write", f"{s.gm_write_bytes} B"),
                ("GM copies", s.gm_copies), ("UB copies", s.ub_copies), ("UB peak", f"{s.ub_peak_bytes} B"),
                ("blocks", len(s.per_block))]
    vector = [{"api": api, "calls": n, "elements": s.vector_elements.get(api, 0)}
              for api, n in sorted(s.vector_calls.items())]
    return {"case": sample.case, "counters": counters, "vector": vector, "cost": _cost(s),
            "timeline": _timeline(getattr(s, "trace", None), len(s.per_block))}


def _cost(s) -> dict | None:
    """The cost model's estimate and busy cycles per pipe, when the simulator has a cost model."""
    cycles = getattr(s, "est_cycles", 0)
    if not cycles:
        return None
    busy = dict(getattr(s, "pipe_busy", {}))
    return {"cycles": cycles, "us": f"{getattr(s, 'est_us', 0.0):.3g}", "floor": getattr(s, "floor_cycles", 0),
            "pipes": [{"name": p, "cycles": c, "critical": p == getattr(s, "critical_pipe", "")} for p, c in busy.items()
                      if p not in CUBE_PIPES or c]}


def _timeline(trace, blocks: int) -> dict | None:
    """The pipe timeline of the traced block: per pipe its busy intervals and its waits, each interval
    of at least half a pixel kept apart and shorter neighbours joined (their instructions counted)."""
    if trace is None or not trace.intervals:
        return None
    span = max(i.end for i in trace.intervals)
    scale = BAR_WIDTH / span
    lanes = []
    cores = list(dict.fromkeys(i.core for i in trace.intervals))
    rows = [(core, p) for core in cores for p in PIPES
            if (p not in CUBE_PIPES and not core) or any(i.pipe == p and i.core == core for i in trace.intervals)]
    for row, (core, pipe) in enumerate(rows):
        y = 20 + LANE * row
        mine = [i for i in trace.intervals if i.pipe == pipe and i.core == core]
        lane = {"name": pipe, "core": core, "label": f"{core} {pipe}".strip(), "y": y, "busy": [], "waits": [],
                "cycles": round(sum(i.end - i.start for i in mine if not i.wait))}
        for wait, key in ((False, "busy"), (True, "waits")):
            ivs = sorted((i for i in mine if i.wait == wait), key=lambda i: i.start)
            lane[key] = [_bar(group, scale, y) for group in _joined(ivs, 0.5 / scale)]
        lanes.append(lane)
    ticks = [{"x": round(t * scale, 2), "label": f"{t:g}"} for t in _ticks(span)]
    return {"block": trace.block, "blocks": blocks, "span": round(span), "dropped": trace.dropped,
            "instructions": sum(not i.wait for i in trace.intervals), "lanes": lanes, "ticks": ticks,
            "width": BAR_WIDTH, "height": 28 + LANE * len(rows) + 14}


def _joined(intervals: list, gap: float) -> list[list]:
    """Runs of ``intervals`` (sorted by start) whose neighbours are less than ``gap`` apart."""
    groups: list[list] = []
    end = 0.0
    for i in intervals:
        if groups and i.start - end < gap:
            groups[-1].append(i)
        else:
            groups.append([i])
        end = max(end, i.end) if len(groups[-1]) > 1 else i.end
    return groups


def _bar(group: list, scale: float, y: int) -> dict:
    start, end = group[0].start, max(i.end for i in group)
    apis = sorted({i.api for i in group})
    what = group[0].api if len(group) == 1 else f"{len(group)} x " + ", ".join(apis[:6]) + (", ..." if len(apis) > 6 else "")
    return {"start": start, "end": end, "x": round(start * scale, 2), "width": max(round((end - start) * scale, 2), 0.5),
            "y": y, "title": f"{what}: cycles {start:g} to {end:g}"}


def _ticks(span: float) -> list[float]:
    """Round cycle counts for about five axis ticks over ``[0, span]``."""
    step = 10 ** max(len(str(int(span / 5))) - 1, 0)
    for m in (1, 2, 5, 10):
        if span / (step * m) <= 6:
            step *= m
            break
    return [step * k for k in range(int(span // step) + 1)]


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
