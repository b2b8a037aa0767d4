"""docs/: the tutorial's code is ops/rmsnorm.py and its session runs, the platform table is the
platform table, every API the simulator page lists exists in the headers, every link lands, the
language reference is generated from the language."""
import re
from pathlib import Path

import pytest

import ascdsl.language as tl
from ascdsl.language import reference
from ascdsl.op import load_operators
from ascdsl.platforms import DEFAULT_PLATFORM, PLATFORMS
from ascdsl.sim import INCLUDE_DIR
from ascdsl.sim.build import front_ends
from ascdsl.testing import assert_close
from tests.backend.helpers import op_case_files

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
TUTORIAL = (DOCS / "tutorial.md").read_text()


def test_every_tutorial_python_block_is_part_of_the_op_file():
    op_file = (ROOT / "ops" / "rmsnorm.py").read_text()
    blocks = re.findall(r"```python\n(.*?)```", TUTORIAL, re.S)
    assert len(blocks) >= 6
    for block in blocks:
        assert block in op_file, block[:80]
    # and together they are the whole file, apart from its docstring
    body = op_file[op_file.index('"""', 3) + 4:]
    assert sum(len(b.strip()) for b in blocks) >= 0.95 * len(body.strip())


@pytest.fixture
def rms_norm_case_files():
    """The tutorial's simulator runs use the kernel files of ops/rmsnorm.py's cases that
    ``tests/ops/test_sim_sweeps.py`` builds (one g++ build, not one per case)."""
    op_case_files(load_operators([ROOT / "ops" / "rmsnorm.py"])[0])


@pytest.mark.slow
def test_tutorial_session_runs(monkeypatch, rms_norm_case_files):
    session = re.search(r"```\n(>>> .*?)```", TUTORIAL, re.S).group(1)
    code = "\n".join(line[4:] for line in session.splitlines() if line.startswith(">>> "))
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(str(ROOT))
    scope = {}
    exec(compile(code, "tutorial-session", "exec"), scope)
    assert scope["out"].shape == (4, 100)
    assert_close(scope["sim"], scope["out"])
    assert all(r.ok for r in scope["results"]) and len(scope["results"]) == 2 * len(scope["OP"].cases)


def test_platform_table_is_the_platform_table():
    rows = [line for line in (DOCS / "platforms.md").read_text().splitlines() if line.startswith("| `")]
    assert len(rows) == len(PLATFORMS)
    for row, p in zip(rows, PLATFORMS.values()):
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells == [f"`{p.name}`" + (" (default)" if p.name == DEFAULT_PLATFORM else ""),
                         str(p.vector_core_count), str(p.ai_core_count), f"{p.ub_bytes // 1024} KiB",
                         f"{p.ub_budget_bytes // 1024} KiB", "yes" if p.has_bf16 else "no"]


def test_every_simulator_api_listed_exists_in_the_headers():
    page = (DOCS / "simulator.md").read_text()
    table = page[page.index("## The API subset"):page.index("## Counters")]
    names = {n for line in table.splitlines() if line.startswith("| ") for n in re.findall(r"`(\w+)`", line)}
    headers = "\n".join(p.read_text() for p in INCLUDE_DIR.rglob("*.h"))
    assert len(names) > 50
    assert sorted(n for n in names if not re.search(rf"\b{n}\b", headers)) == []


def _anchor(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("page", sorted(p.name for p in DOCS.glob("*.md")) + ["../README.md"])
def test_links_land(page):
    text = re.sub(r"```.*?```|`[^`\n]*`", "", (DOCS / page).read_text(), flags=re.S)  # code is no link
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        assert not target.startswith(("http:", "https:")), target
        file, _, anchor = target.partition("#")
        path = (DOCS / page).parent / file if file else DOCS / page
        assert path.is_file(), target
        if anchor:
            headings = re.findall(r"^#+ (.*)$", path.read_text(), re.M)
            assert anchor in {_anchor(h) for h in headings}, target


def test_readme_points_at_the_docs_and_the_fast_subset():
    readme = (ROOT / "README.md").read_text()
    for page in DOCS.glob("*.md"):
        assert f"docs/{page.name}" in readme, page.name
    assert '-m "not slow"' in readme


def _quoted(command: str) -> list[str]:
    """The lines the tutorial quotes under ``$ command`` (without the ``...`` that elides rows)."""
    block = re.search(rf"```\n\$ {re.escape(command)}\n(.*?)```", TUTORIAL, re.S).group(1)
    return [line for line in block.splitlines() if line != "..."]


def test_tutorial_counts_are_what_the_commands_count():
    from ascdsl import build
    op, = load_operators([ROOT / "ops" / "rmsnorm.py"])
    b = build.plan(op, PLATFORMS[DEFAULT_PLATFORM])
    # check: the host row and every case on both backends; build: every case (and probe) on both
    # backends, then the op-project kernel and main.cpp of every variant
    assert _quoted("ascdsl check ops/rmsnorm.py")[-1] == f"{1 + 2 * len(op.cases)} passed, 0 failed"
    clang = 1  # the row of clang++'s front end, which the tutorial's machine has
    assert _quoted("ascdsl build ops/rmsnorm.py")[-1] == \
        f"{2 * len(b.cases) + 2 * len(b.variants) + clang} passed, 0 failed"


def test_tutorial_teaches_no_workaround_for_scalar_rsqrt():
    assert "tl.rsqrt(mean_square + eps)" in TUTORIAL and "tl.full((BLOCK,), eps" not in TUTORIAL
    assert "does not support the scalar op" not in TUTORIAL


@pytest.mark.slow
def test_tutorial_sessions_print_what_the_commands_print(tmp_path, monkeypatch, capsys, rms_norm_case_files):
    from ascdsl.cli import main
    monkeypatch.chdir(ROOT)
    assert main(["check", "ops/rmsnorm.py"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line for line in _quoted("ascdsl check ops/rmsnorm.py") if line not in out] == []
    monkeypatch.chdir(tmp_path)
    assert main(["build", str(ROOT / "ops" / "rmsnorm.py")]) == 0
    out = capsys.readouterr().out.splitlines()
    quoted = _quoted("ascdsl build ops/rmsnorm.py")
    if not front_ends():  # no clang++ row here: one row fewer than the tutorial's machine prints
        total = int(quoted[-1].split()[0]) - 1
        quoted[-1] = f"{total} passed, 0 failed"
    assert [line for line in quoted if line not in out] == []
    assert "Rsqrt(" in (tmp_path / "build" / "rms_norm" / "kernel" / "rms_norm_kernel.cpp").read_text()
    # the draft's UB overflow the tutorial quotes, from the quick loop
    draft = (ROOT / "ops" / "rmsnorm.py").read_text()
    cut = draft.index("    largest = ascdsl.planner.largest_extent")
    draft = draft[:cut] + draft[draft.index("    return ascdsl.Launch(rms_norm_kernel"):]
    draft = draft.replace("ascdsl.Case((0, 16), (16,))]", "ascdsl.Case((0, 16), (16,)), ascdsl.Case((2, 50000), (50000,))]")
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "rmsnorm.py").write_text(draft)
    assert main(["check", "ops/rmsnorm.py", "--backend", "interpreter"]) == 1
    quoted = re.search(r"```\n(FAIL rms_norm \[2x50000.*?)\n```", TUTORIAL, re.S).group(1)
    assert quoted in capsys.readouterr().out.splitlines()


def test_the_language_reference_lists_every_builtin_as_the_language_defines_it():
    text = (ROOT / "docs" / "language.md").read_text()
    assert reference.replaced(text, reference.markdown()) == text, \
        "regenerate: python -m ascdsl.language.reference --write docs/language.md"
    block = text.split(reference.BEGIN, 1)[1].split(reference.END, 1)[0]
    names = {*tl.core.__all__, *tl.math.__all__, *tl.random.__all__} - {"cdiv", "next_power_of_2"}
    missing = [n for n in names if f"`tl.{n}" not in block and f"`tl.math.{n}(" not in block]
    assert not missing
    assert "| `libdevice.fmax` | `tl.maximum` |" in block and "`libdevice.erfinv(x)`" in block
    assert "`tl.math.fma(x, y, z)` | " in block  # signature as the frontend binds it
    assert all(getattr(tl, n) is getattr(tl.math, n) for n in tl.math.__all__)  # "each also tl.<name>"


def test_the_reference_generator_replaces_only_its_block(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(f"before\n{reference.BEGIN}\nstale\n{reference.END}\nafter\n")
    assert reference.main(["--write", str(page)]) == 0
    text = page.read_text()
    assert text.startswith("before\n") and text.endswith(f"{reference.END}\nafter\n") and "stale" not in text
    page.write_text("no markers\n")
    with pytest.raises(ValueError):
        reference.main(["--write", str(page)])
