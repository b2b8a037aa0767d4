"""``report.html``: parsed (bars add up to the manifest's UB plan, every link lands, nothing from the
network) and rendered in headless Chromium (skipped where Chromium is absent)."""
import html
import json
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace

import pytest

from ascdsl import build, report
from ascdsl.cli import main as cli_main
from ascdsl.op import load_operators
from ascdsl.platforms import get_platform
from ascdsl.verify import Sample

ROOT = Path(__file__).resolve().parents[2]
OPFILES = Path(__file__).parent / "opfiles"


class Page(HTMLParser):
    """Every element's attributes, grouped the way the tests read them."""

    def __init__(self, text: str):
        super().__init__()
        self.ids, self.hrefs, self.urls, self.buffers, self.maps, self.tags = set(), [], [], [], [], []
        self._variant = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if "id" in a:
            assert a["id"] not in self.ids, f"duplicate id {a['id']}"
            self.ids.add(a["id"])
            if a["id"].startswith("variant-"):
                self._variant = int(a["id"].removeprefix("variant-"))
        if "href" in a:
            self.hrefs.append(a["href"])
        self.urls += [v for k, v in attrs if k in ("src", "href", "xmlns", "action") and v and not v.startswith("#")]
        if tag == "svg" and "ubmap" in a.get("class", ""):
            self.maps.append({"variant": self._variant, "total": int(a["data-total"]), "buffers": []})
        if tag == "g" and a.get("class") == "buffer":
            self.maps[-1]["buffers"].append(a)
        if tag == "rect" and self.maps and self.maps[-1]["buffers"] and "width" in a and a.get("class") in (
                "VECIN", "VECOUT", "VECIN-VECOUT", "VECCALC"):
            self.maps[-1]["buffers"][-1]["px"] = float(a["width"])


def _built(tmp_path, path, samples=None):
    op, = load_operators([path])
    b = build.plan(op, get_platform("Ascend910B3"))
    folder = build.write(b, tmp_path)
    report.write(b, folder, samples)
    return b, folder, json.loads((folder / "manifest.json").read_text())


@pytest.mark.parametrize("name", ["softmax", "scale_add", "log_softmax_grad"])
def test_bars_add_up_to_the_plan_and_every_link_lands(tmp_path, name):
    b, folder, manifest = _built(tmp_path, ROOT / "ops" / f"{name}.py")
    text = (folder / "report.html").read_text()
    page = Page(text)
    assert page.urls == [] and "http://" not in text and "https://" not in text
    assert not {"script", "link", "img", "iframe"} & set(page.tags)
    internal = [h for h in page.hrefs if h.startswith("#")]
    assert internal and all(h[1:] in page.ids for h in internal)
    assert any(h.startswith("#src0-L") for h in internal)            # generated lines link to DSL lines
    planned = {row["key"]: report.ub_plan(row) for row in manifest["variants"]}
    assert [m["variant"] for m in page.maps] == [k for k, p in planned.items() if p]
    for m in page.maps:
        plan = planned[m["variant"]]
        bars = m["buffers"]
        assert m["total"] == plan["total_bytes"] == sum(int(g["data-bytes"]) for g in bars)
        assert [(g["data-name"], int(g["data-num"]), int(g["data-slot-bytes"])) for g in bars] == \
            [(x["name"], x["num"], x["bytes"]) for x in plan["buffers"]]
        assert sum(g["px"] for g in bars) == pytest.approx(report.BAR_WIDTH, abs=0.05 * len(bars))
    for row in manifest["variants"]:
        assert f'id="variant-{row["key"]}"' in text and html.escape(row["class"]) in text


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
    from ascdsl.backend import ascendc
    from ascdsl.backend.emit import where
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


def test_simulator_counters_and_cost_model_timeline(tmp_path):
    stats = SimpleNamespace(gm_read_bytes=400, gm_write_bytes=200, gm_copies=4, ub_copies=0, ub_peak_bytes=1088,
                            per_block=(None, None), vector_calls={"Mul": 2}, vector_elements={"Mul": 100})
    _, folder, _ = _built(tmp_path, OPFILES / "tiny_square.py", {1: Sample("100 float32", stats)})
    text = (folder / "report.html").read_text()
    assert "Counters of case <code>100 float32</code>" in text and "<code>Mul</code>" in text
    assert "Cost model" not in text                      # no cost model: no timeline
    costed = SimpleNamespace(**vars(stats), est_cycles=900, est_us=0.5, floor_cycles=300,
                             pipe_busy={"MTE2": 600, "V": 200, "MTE3": 300, "S": 50}, critical_pipe="MTE2")
    _, folder, _ = _built(tmp_path / "c", OPFILES / "tiny_square.py", {1: Sample("100 float32", costed)})
    text = (folder / "report.html").read_text()
    assert "Cost model: 900 cycles (0.5 us)" in text and "floor 300 cycles" in text
    assert "MTE2 600 cycles (critical)" in text
    assert Page(text).urls == []


@pytest.mark.slow
def test_verified_build_reports_real_counters(tmp_path):
    assert cli_main(["build", str(OPFILES / "tiny_square.py"), "-o", str(tmp_path)]) == 0
    text = (tmp_path / "square" / "report.html").read_text()
    assert "Counters of case <code>100 float32</code>" in text
    assert "<th>GM write</th><td class=\"num\">400 B</td>" in text    # 100 floats out
    assert "<th>blocks</th><td class=\"num\">2</td>" in text          # cdiv(100, 64) programs
    read = int(text.split("<th>GM read</th><td class=\"num\">")[1].split(" B")[0])
    assert 400 <= read <= 512                                           # 100 floats in, tail in 32 B blocks
    assert "Cost model: " in text and "MTE2 " in text                   # the simulator's cost model


# ------------------------------------------------------------------------------ headless Chromium

def _browser():
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _png_pixels(data: bytes) -> list[bytes]:
    """The rows of an 8-bit RGB(A) PNG, unfiltered (what Chromium's screenshots are)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6)
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up, corner = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append(bytes(b for i, b in enumerate(line) if i % bpp < 3))
        prev = line
    return rows


@pytest.mark.skipif(_browser() is None, reason="Chromium is not installed")
def test_report_renders_in_headless_chromium(tmp_path):
    _, folder, _ = _built(tmp_path, ROOT / "ops" / "softmax.py")
    shot = tmp_path / "shot.png"
    subprocess.run([_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--screenshot={shot}", "--window-size=1000,800", (folder / "report.html").as_uri()],
                   check=True, capture_output=True, timeout=120, cwd=tmp_path)
    rows = _png_pixels(shot.read_bytes())
    pixels = [row[i:i + 3] for row in rows for i in range(0, len(row), 3)]
    colours = set(pixels)
    ink = sum(p != b"\xff\xff\xff" for p in pixels) / len(pixels)
    assert len(colours) > 50 and ink > 0.02, (len(colours), ink)
    # the UB map's buffer colours are on screen (the first variant is in the first 800 px)
    assert {bytes.fromhex("7fb3e6"), bytes.fromhex("8fd19e")} <= colours


def test_build_api_writes_the_report_too(tmp_path):
    op, = load_operators([OPFILES / "tiny_square.py"])
    (folder,) = build.build([op], tmp_path, get_platform("Ascend910B3"))
    text = (folder / "report.html").read_text()
    assert folder == tmp_path / "square" and 'id="variant-1"' in text and "No simulator run" in text
