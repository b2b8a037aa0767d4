"""``report.html``: parsed (per shape, the UB map is the plan at that shape's tiling values and what
the kernel allocates there; every link lands; nothing from the network; the pipe timeline is the
cost model's trace) and rendered in headless Chromium (its DOM and layout; skipped where Chromium is
absent)."""
import html
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace

import pytest

from ascdsl import build, report
from ascdsl.backend.render import ascendc
from ascdsl.cli import main as cli_main
from ascdsl.op import load_operators
from ascdsl.platforms import get_platform
from ascdsl.sim.stats import Interval, Trace
from ascdsl.verify import Sample, cases_of_variants, sample_cases

ROOT = Path(__file__).resolve().parents[2]
OPFILES = Path(__file__).parent / "opfiles"


class Page(HTMLParser):
    """Every element's attributes, grouped the way the tests read them."""

    def __init__(self, text: str):
        super().__init__()
        self.ids, self.hrefs, self.urls, self.maps, self.tags, self.scripts = set(), [], [], [], [], []
        self.panels: dict[str, dict] = {}
        self.bars: list[dict] = []  # timeline rects
        self._variant = self._panel = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if "id" in a:
            assert a["id"] not in self.ids, f"duplicate id {a['id']}"
            self.ids.add(a["id"])
            if a["id"].startswith("variant-"):
                self._variant = int(a["id"].removeprefix("variant-"))
        if tag == "script":
            self.scripts.append(a)
        if "href" in a:
            self.hrefs.append(a["href"])
        self.urls += [v for k, v in attrs if k in ("src", "href", "xmlns", "action") and v and not v.startswith("#")]
        if tag == "div" and a.get("class") == "panel":
            self._panel = a["id"]
            self.panels[a["id"]] = {"variant": self._variant, "shape": a["data-shape"], "hidden": "hidden" in a,
                                    "fields": {}}
        if tag == "td" and "data-field" in a:
            self._field = a["data-field"]
        if tag == "svg" and "ubmap" in a.get("class", ""):
            self.maps.append({"variant": self._variant, "panel": self._panel, "total": int(a["data-total"]),
                              "buffers": []})
        if tag == "g" and a.get("class") == "buffer":
            self.maps[-1]["buffers"].append(a)
        if tag == "rect" and self.maps and self.maps[-1]["buffers"] and "width" in a and a.get("class") in (
                "VECIN", "VECOUT", "VECIN-VECOUT", "VECCALC"):
            self.maps[-1]["buffers"][-1]["px"] = float(a["width"])
        if tag == "rect" and a.get("class", "").split()[0:1] in (["busy"], ["wait"]):
            self.bars.append({**a, "panel": self._panel})

    def handle_endtag(self, tag):
        if tag == "td":
            self._field = None

    def handle_data(self, data):
        if getattr(self, "_field", None) and data.strip():
            value = float(data)
            self.panels[self._panel]["fields"][self._field] = int(value) if value.is_integer() else value


def _built(tmp_path, path, samples=None):
    op, = load_operators([path])
    b = build.plan(op, get_platform("Ascend910B3"))
    folder = build.write(b, tmp_path)
    report.write(b, folder, samples)
    return b, folder, json.loads((folder / "manifest.json").read_text())


@pytest.mark.parametrize("name", ["softmax", "scale_add", "log_softmax_grad", "softmax_grad"])
def test_ub_maps_are_the_plan_at_each_shape_and_every_link_lands(tmp_path, name):
    b, folder, manifest = _built(tmp_path, ROOT / "ops" / f"{name}.py")
    text = (folder / "report.html").read_text()
    page = Page(text)
    assert page.urls == [] and "http://" not in text and "https://" not in text
    assert not {"link", "img", "iframe"} & set(page.tags) and page.scripts == [{}]   # one inline script
    internal = [h for h in page.hrefs if h.startswith("#")]
    assert internal and all(h[1:] in page.ids for h in internal)
    assert any(h.startswith("#src0-L") for h in internal)            # generated lines link to DSL lines
    planned = {row["key"]: report.ub_plan(row) for row in manifest["variants"]}
    runs = cases_of_variants(b)
    variants = {v.key: v for v in b.variants}
    # one panel per shape that selects the variant (the cases', then the probes'), the first one shown
    for key in planned:
        panels = [p for p in page.panels.values() if p["variant"] == key]
        assert [p["shape"] for p in panels] == [c.label for c, _, _ in runs[key]]
        assert [p["hidden"] for p in panels] == [False] + [True] * (len(panels) - 1)
    assert [m["variant"] for m in page.maps] == [k for k, p in planned.items() if p for _ in runs[k]]
    for m in page.maps:
        plan, panel = planned[m["variant"]], page.panels[m["panel"]]
        bars = m["buffers"]
        assert m["total"] == sum(int(g["data-bytes"]) for g in bars)
        assert [(g["data-name"], int(g["data-num"])) for g in bars] == [(x["name"], x["num"]) for x in plan["buffers"]]
        assert sum(g["px"] for g in bars) == pytest.approx(report.BAR_WIDTH, abs=0.05 * len(bars))
        # the bytes at this shape's tiling values: the lift's own footprint (what the tiling function checks)
        v = variants[m["variant"]]
        (case, tiling, _), = [r for r in runs[v.key] if r[0].label == panel["shape"]]
        values = dict(tiling.fields)
        assert {n: panel["fields"][n] for n in values if n in panel["fields"]} == \
            {n: x for n, x in values.items() if n in panel["fields"]}
        expected = v.lift.bytes(values) if v.lift is not None else plan["total_bytes"]
        assert m["total"] == expected <= b.platform.ub_budget_bytes
    for row in manifest["variants"]:
        assert f'id="variant-{row["key"]}"' in text and html.escape(row["class"]) in text


def test_softmax_grad_footprint_is_one_expression_at_real_shapes(tmp_path):
    """Issue 22: variant 1 showed "1057792 B of the 188416 B budget (561.4%)" (every buffer at its largest
    extent) and three partial footprint lines."""
    _, folder, manifest = _built(tmp_path, ROOT / "ops" / "softmax_grad.py")
    text = (folder / "report.html").read_text()
    assert "561.4%" not in text and "1057792" not in text
    section = text.split('id="variant-1"')[1].split('id="variant-2"')[0]
    assert section.count("UB footprint: ") == 1
    assert "UB footprint: <code class=\"footprint\">20 * ROWS * BLOCK_K + 256 * ROWS</code> bytes" in section
    # 100x33 float32: three rows per core, a row of 33 floats padded to 40 lanes: 20 * 3 * 40 + 256 * 3
    panel = section.split('data-shape="100x33 100x33 float32"')[1].split('<div class="panel"')[0]
    assert '<td class="num" data-field="ROWS">3</td>' in panel and '<td class="num" data-field="BLOCK_K">40</td>' in panel
    assert '<p class="ubtotal">3168 B of the 188416 B budget (1.7%)' in panel
    assert all(int(t) <= 188416 for t in re.findall(r'data-total="(\d+)"', text))


def test_linked_lines_name_the_line_they_link_to(tmp_path):
    _, folder, _ = _built(tmp_path, ROOT / "ops" / "softmax.py")
    text = (folder / "report.html").read_text()
    source = (ROOT / "ops" / "softmax.py").read_text().splitlines()
    generated = [line for line in text.splitlines() if line.startswith('<div id="gen-L')]
    links = [line for line in generated if 'href="#src0-L' in line]
    assert len(links) > 10
    for line in links:
        n = int(line.split('href="#src0-L')[1].split('"')[0])
        assert f"softmax.py:{n}" in line and 0 < n <= len(source)
    # a line whose comment names a DSL line links to it (the class headers too: "from softmax.py:N;")
    assert [line for line in generated if "softmax.py:" in line and 'href="#src0-L' not in line] == []


def test_the_renderer_maps_each_commented_line_to_its_location():
    """The kernel text comes with the DSL location of each line that names one, from the kernel IR (the
    report links lines by it, never by reading the text): every mapped line carries that location's
    comment, and every such comment is mapped."""
    from ascdsl.backend.render import ascendc
    from ascdsl.backend.render.emit import where
    from ascdsl.errors import source_root
    op, = load_operators([ROOT / "ops" / "softmax.py"])
    b = build.plan(op, get_platform("Ascend910B3"))
    with source_root(b.root):
        text = ascendc.kernel_source(b.name, b.variants, b.layout, b.platform)
        lines = text.splitlines()
        located = dict(text.locs)
        assert len(located) == len(text.locs) > 20
        for n, loc in text.locs:
            assert loc.file == str(ROOT / "ops" / "softmax.py")
            assert lines[n - 1].endswith(f"  // {where(loc)}") or f" from {where(loc)}; " in lines[n - 1], (n, loc)
    assert {n for n, line in enumerate(lines, 1) if "softmax.py:" in line} == set(located)


def _stats(**extra):
    base = dict(gm_read_bytes=400, gm_write_bytes=200, gm_copies=4, ub_copies=0, ub_peak_bytes=1088,
                per_block=(None, None), vector_calls={"Mul": 2}, vector_elements={"Mul": 100})
    return SimpleNamespace(**{**base, **extra})


def test_simulator_counters_and_cost_model_timeline(tmp_path):
    _, folder, _ = _built(tmp_path, OPFILES / "tiny_square.py", {1: [Sample("100 float32", _stats())]})
    text = (folder / "report.html").read_text()
    assert "Counters of case <code>100 float32</code>" in text and "<code>Mul</code>" in text
    assert "Cost model" not in text and 'class="timeline"' not in text   # no cost model: no timeline
    # a trace: two loads, the vector work of the first while the second loads, a store after a wait
    trace = Trace(0, (Interval("S", 0, 2, "dispatch"), Interval("MTE2", 2, 100, "DataCopy GM->UB"),
                      Interval("MTE2", 100, 200, "DataCopy GM->UB"), Interval("V", 0, 110, "queue buffer", True),
                      Interval("V", 110, 140, "Mul"), Interval("V", 140, 150, "Mul"),
                      Interval("MTE3", 150, 190, "DataCopy UB->GM")))
    costed = _stats(est_cycles=900, est_us=0.5, floor_cycles=300, trace=trace,
                    pipe_busy={"MTE2": 600, "V": 200, "MTE3": 300, "S": 50}, critical_pipe="MTE2")
    _, folder, _ = _built(tmp_path / "c", OPFILES / "tiny_square.py", {1: [Sample("100 float32", costed)]})
    text = (folder / "report.html").read_text()
    assert "Cost model: 900 cycles (0.5 us)" in text and "floor 300 cycles" in text
    assert "MTE2 600 cycles (critical)" in text
    assert "Pipe timeline of block 0 (the longest span of the 2 blocks): 6 intervals over 200 cycles." in text
    page = Page(text)
    assert page.urls == []
    bars = {(r["class"], float(r["data-start"]), float(r["data-end"])) for r in page.bars}
    # back-to-back instructions closer than half a pixel are one bar; the wait is its own
    assert bars == {("busy pipe-S", 0, 2), ("busy pipe-MTE2", 2, 200), ("wait", 0, 110), ("busy pipe-V", 110, 150),
                    ("busy pipe-MTE3", 150, 190)}
    x = {r["class"]: (float(r["x"]), float(r["width"])) for r in page.bars}
    assert x["busy pipe-MTE2"] == (round(2 * 640 / 200, 2), round(198 * 640 / 200, 2))
    assert "2 x DataCopy GM-&gt;UB: cycles 2 to 200" in text


def test_report_lists_every_shape_with_its_own_counters(tmp_path):
    op, = load_operators([ROOT / "ops" / "softmax_grad.py"])
    b = build.plan(op, get_platform("Ascend910B3"))
    labels = [c.label for c, _, _ in cases_of_variants(b)[1]]
    assert len(labels) > 1
    samples = {1: [Sample(label, _stats(gm_read_bytes=1000 + n)) for n, label in enumerate(labels)]}
    folder = build.write(b, tmp_path)
    report.write(b, folder, samples)
    page = Page((folder / "report.html").read_text())
    assert [p["shape"] for p in page.panels.values() if p["variant"] == 1] == labels
    for n, label in enumerate(labels):
        panel = (folder / "report.html").read_text().split(f'data-shape="{label}"')[1].split('class="panel"')[0]
        assert f"<th>GM read</th><td class=\"num\">{1000 + n} B</td>" in panel


@pytest.mark.slow
def test_verified_build_reports_real_counters(tmp_path):
    assert cli_main(["build", str(OPFILES / "tiny_square.py"), "-o", str(tmp_path)]) == 0
    text = (tmp_path / "square" / "report.html").read_text()
    panel = text.split('data-shape="100 float32"')[1].split('class="panel"')[0]
    assert "Counters of case <code>100 float32</code>" in panel
    assert "<th>GM write</th><td class=\"num\">400 B</td>" in panel    # 100 floats out
    assert "<th>blocks</th><td class=\"num\">2</td>" in panel          # cdiv(100, 64) programs
    read = int(panel.split("<th>GM read</th><td class=\"num\">")[1].split(" B")[0])
    assert 400 <= read <= 512                                           # 100 floats in, tail in 32 B blocks
    assert "Cost model: " in panel and 'data-pipe="MTE2"' in panel      # the simulator's cost model


@pytest.mark.slow
def test_ub_map_at_each_shape_is_what_the_simulated_kernel_allocates(tmp_path):
    """Per shape, the UB map's total is the simulator's UB peak (the InitBuffer total) of that case."""
    op, = load_operators([ROOT / "ops" / "softmax_grad.py"])
    b = build.plan(op, get_platform("Ascend910B3"))
    folder = build.write(b, tmp_path)
    cases = [c for c in b.cases if c.label in ("100x33 100x33 float32", "4x31 4x31 float32", "2x10000 2x10000 float16",
                                               "2x5000 2x5000 float32 is_front=True")]
    assert len(cases) == 4
    report.write(b, folder, sample_cases(b, cases))
    text = (folder / "report.html").read_text()
    page = Page(text)
    checked = 0
    for m in page.maps:
        label = page.panels[m["panel"]]["shape"]
        panel = text.split(f'id="{m["panel"]}" data-shape="{label}"')[1].split('class="panel"')[0]
        peak = re.search(r"<th>UB peak</th><td class=\"num\">(\d+) B", panel)
        if label in [c.label for c in cases]:
            assert peak and int(peak.group(1)) == m["total"], label
            assert f"Counters of case <code>{label}</code>" in panel
            checked += 1
        else:
            assert peak is None and "No simulator run of this shape" in panel
    assert checked == 4


# ------------------------------------------------------------------------------ headless Chromium

def _browser():
    return shutil.which("chromium") or shutil.which("chromium-browser")


MEASURE = """<script>
// test only: the rendered boxes of the visible timeline's bars and of every UB map, by panel
var out = {bars: [], maps: []};
document.querySelectorAll("svg.timeline rect.busy").forEach(function (r) {
  var b = r.getBoundingClientRect();
  out.bars.push({panel: r.closest(".panel").id, pipe: r.closest("g").dataset.pipe, left: b.left, right: b.right,
                 width: b.width, height: b.height});
});
document.querySelectorAll("svg.ubmap").forEach(function (s) {
  var b = s.getBoundingClientRect();
  out.maps.push({panel: s.closest(".panel").id, width: b.width, height: b.height});
});
var pre = document.createElement("pre");
pre.id = "layout";
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script>
</body>"""


def _dom(page: Path, fragment: str, tmp_path: Path) -> str:
    """The DOM headless Chromium renders from ``page#fragment`` (after its scripts ran)."""
    done = subprocess.run([_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                           f"{page.as_uri()}#{fragment}"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.skipif(_browser() is None, reason="Chromium is not installed")
def test_report_renders_in_headless_chromium(tmp_path):
    """The chosen shape's panel is the one shown, its UB map is the footprint at that shape's tiling
    values, and its pipe timeline lays out MTE2 and V bars that overlap in time and on screen."""
    op, = load_operators([ROOT / "ops" / "softmax_grad.py"])
    b = build.plan(op, get_platform("Ascend910B3"))
    folder = build.write(b, tmp_path)
    chosen, loop = "100x33 100x33 float32", "300001 300001 float32 is_front=True"    # the latter: a two-pass tile loop
    report.write(b, folder, sample_cases(b, [c for c in b.cases if c.label in (chosen, loop)]))
    page = folder / "report.html"
    text = page.read_text()
    panel_id = re.search(rf'<div class="panel" id="(v\d+-s\d+)" data-shape="{chosen}" hidden>', text).group(1)
    loop_id = re.search(rf'<div class="panel" id="(v\d+-s\d+)" data-shape="{loop}">', text).group(1)
    measured = tmp_path / "measured.html"
    measured.write_text(text.replace("</body>", MEASURE))

    rendered = _dom(measured, panel_id, tmp_path)
    dom = Page(rendered)
    shown = [k for k, p in dom.panels.items() if not p["hidden"]]
    key = dom.panels[panel_id]["variant"]
    assert panel_id in shown and [k for k in shown if dom.panels[k]["variant"] == key] == [panel_id]
    assert re.search(rf'<option value="{panel_id}" selected="">{chosen}</option>', rendered)
    # the UB map of the chosen shape: the manifest's buffer sizes at the tiling values the page shows
    manifest = json.loads((folder / "manifest.json").read_text())
    plan = report.ub_plan(next(r for r in manifest["variants"] if r["key"] == key))
    values = dom.panels[panel_id]["fields"]
    assert (values["ROWS"], values["BLOCK_K"]) == (3, 40)                  # 3 rows per core, 33 floats -> 40 lanes
    (ub,) = [m for m in dom.maps if m["panel"] == panel_id]
    sizes = [report.buffer_bytes(x, values) for x in plan["buffers"]]
    assert [int(g["data-slot-bytes"]) for g in ub["buffers"]] == sizes
    assert ub["total"] == sum(x["num"] * n for x, n in zip(plan["buffers"], sizes)) == \
        b.variants[key - 1].lift.bytes(values) == 20 * 3 * 40 + 256 * 3
    assert plan["total_bytes"] > b.platform.ub_budget_bytes                # what the page used to draw
    assert "Counters of case <code>100x33 100x33 float32</code>" in rendered.split(f'id="{panel_id}"')[1]
    panel_id = loop_id
    # the timeline: bars of every pipe; a load (MTE2) overlapping vector work (V) of an earlier chunk
    bars = [r for r in dom.bars if r["panel"] == panel_id]
    assert {r["class"].split()[-1] for r in bars if r["class"] != "wait"} == {"pipe-MTE2", "pipe-V", "pipe-MTE3", "pipe-S"}
    spans = {pipe: [(float(r["data-start"]), float(r["data-end"])) for r in bars if r["class"] == f"busy pipe-{pipe}"]
             for pipe in ("MTE2", "V")}
    assert any(a < d and c < b_ for a, b_ in spans["MTE2"] for c, d in spans["V"])
    assert len(spans["V"]) > 5 and any(r["class"] == "wait" for r in bars)   # V runs chunk by chunk, between waits
    # and on screen: the shown panel's bars have boxes, MTE2's and V's overlap horizontally
    layout = json.loads(html.unescape(re.search(r'<pre id="layout">(.*?)</pre>', rendered).group(1)))
    boxes = [x for x in layout["bars"] if x["panel"] == panel_id]
    assert boxes and all(x["height"] > 10 and x["width"] > 0 for x in boxes)
    assert any(m["left"] < v["right"] and v["left"] < m["right"] for m in boxes if m["pipe"] == "MTE2"
               for v in boxes if v["pipe"] == "V")
    hidden = [x for x in layout["maps"] if x["panel"] not in shown]
    assert hidden and all(x["width"] == 0 for x in hidden)                # the other shapes are not laid out
    assert all(x["width"] > 600 for x in layout["maps"] if x["panel"] in shown)


def test_build_api_writes_the_report_too(tmp_path):
    op, = load_operators([OPFILES / "tiny_square.py"])
    (folder,) = build.build([op], tmp_path, get_platform("Ascend910B3"))
    text = (folder / "report.html").read_text()
    assert folder == tmp_path / "square" and 'id="variant-1"' in text and "No simulator run" in text


def test_the_build_renders_once_and_the_report_reads_the_build_not_the_folder(tmp_path, monkeypatch):
    """One rendering of the kernel file serves the written files, the manifest and report.html; the
    report comes from the build's data, so it is the same with the written files gone."""
    calls = []
    source = ascendc.kernel_source
    monkeypatch.setattr(ascendc, "kernel_source", lambda *a: calls.append(a) or source(*a))
    b, folder, manifest = _built(tmp_path, OPFILES / "tiny_square.py")
    first = (folder / "report.html").read_text()
    assert len(calls) == 1 and manifest == b.manifest
    shutil.rmtree(folder)
    folder.mkdir()
    report.write(b, folder)
    assert (folder / "report.html").read_text() == first and len(calls) == 1
