"""The README's example kernel runs as printed, and its Quick start has the two commands."""
import re
import runpy
from pathlib import Path

README = (Path(__file__).parent.parent / "README.md").read_text()


def test_readme_kernel_example_runs(tmp_path, capsys):
    (code,) = re.findall(r"## A kernel\n\n```python\n(.*?)```", README, re.S)
    script = tmp_path / "readme_example.py"
    script.write_text(code)
    runpy.run_path(str(script))
    assert "kernel @add_kernel" in capsys.readouterr().out


def test_quick_start_has_main_job_then_tests():
    block = re.search(r"## Quick start\n.*?```\n(.*?)```", README, re.S).group(1).splitlines()
    assert len(block) == 2
    assert "ascdsl build ops/" in block[0] and "pytest" in block[1]
