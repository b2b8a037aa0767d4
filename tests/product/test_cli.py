"""The ``ascdsl`` command as a user meets it: help, version, platforms, one-line errors, check
running build's host-code checks, build folders named after OP.name, a quiet progress bar."""
import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ascdsl import cli
from ascdsl.op import load_operators
from ascdsl.platforms import DEFAULT_PLATFORM, PLATFORMS

ROOT = Path(__file__).resolve().parents[2]
OPFILES = Path(__file__).parent / "opfiles"


def _cann_name(path: Path) -> str:
    """What the files inside a build folder are named after (CANN's name for the op type)."""
    from ascdsl import build
    op, = load_operators([path])
    return build.plan(op, PLATFORMS[DEFAULT_PLATFORM]).name


def _run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _actions(parser: argparse.ArgumentParser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from ((sub.prog, a) for a in sub._actions)
        else:
            yield parser.prog, action


def test_every_argument_and_command_has_help():
    parser = cli.parser()
    for prog, action in _actions(parser):
        assert action.help and action.help != argparse.SUPPRESS, f"{prog}: {action.dest} has no help"
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert {c.dest for c in sub._choices_actions} == {"check", "build", "ir", "platforms", "bench"}
    assert all(c.help for c in sub._choices_actions)
    assert "OP.name" in sub.choices["build"].format_help()


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["--version"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("ascdsl ") and out.strip() != "ascdsl"


def test_platforms_table(capsys):
    code, out, _ = _run(capsys, "platforms")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 1 + len(PLATFORMS)
    for p in PLATFORMS.values():
        row = next(line for line in lines if line.split()[0] == p.name)
        assert f"{p.ub_bytes // 1024} KiB" in row and str(p.vector_core_count) in row.split()
        assert ("(default)" in row) == (p.name == DEFAULT_PLATFORM)
    assert "no" in next(line for line in lines if line.startswith("Ascend310P3")).split()


@pytest.mark.parametrize("command", ["check", "build"])
def test_unknown_platform_is_one_line(capsys, tmp_path, command):
    code, out, err = _run(capsys, command, str(ROOT / "ops" / "scale_add.py"), "--platform", "Ascend999",
                          *(["-o", str(tmp_path)] if command == "build" else []))
    assert code == 1 and out == ""
    assert len(err.splitlines()) == 1 and "unknown platform 'Ascend999'" in err and "Ascend910B3" in err


def test_unexpected_exception_is_one_line_and_debug_shows_the_traceback(capsys, monkeypatch):
    def boom(paths):
        raise RuntimeError("disk on fire\nsecond line")
    monkeypatch.setattr(cli, "load_operators", boom)
    code, _, err = _run(capsys, "check", "x.py")
    assert code == 1 and err.splitlines() == [
        "ascdsl: internal error: RuntimeError: disk on fire (rerun with --debug for the traceback)"]
    for argv in (["--debug", "check", "x.py"], ["check", "x.py", "--debug"]):
        code, _, err = _run(capsys, *argv)
        assert code == 1 and "Traceback (most recent call last)" in err and "disk on fire" in err


def test_missing_path_and_broken_op_file_are_one_line(capsys, tmp_path):
    code, _, err = _run(capsys, "check", str(tmp_path / "nope.py"))
    assert code == 1 and len(err.splitlines()) == 1 and "no such file" in err
    bad = tmp_path / "broken.py"
    bad.write_text("import ascdsl\nOP = undefined_name\n")
    code, _, err = _run(capsys, "check", str(bad))
    assert code == 1 and len(err.splitlines()) == 1
    assert "broken.py:2: NameError: " in err and "undefined_name" in err and "internal" not in err
    bad.write_text("import ascdsl\nOP = (\n")
    code, _, err = _run(capsys, "check", str(bad))
    assert code == 1 and len(err.splitlines()) == 1 and "broken.py:2: SyntaxError: " in err


@pytest.mark.parametrize("file, needle", [
    ("numpy_host.py", "numpy_host.py:16:"),      # n = int(np.prod(x.shape))
    ("nonaffine_host.py", "not affine in BLOCK"),
])
def test_check_rejects_host_code_that_build_rejects(capsys, tmp_path, file, needle):
    code, out, err = _run(capsys, "check", str(OPFILES / file), "--backend", "interpreter")
    assert code == 1
    assert "(host code -> C++)" in out and "FAIL" in out and needle in err
    assert "interpreter  ok" in out        # the cases themselves pass: only build's check fails
    code, _, err = _run(capsys, "build", str(OPFILES / file), "-o", str(tmp_path), "--no-verify")
    assert code == 1 and needle in err


def test_check_passes_host_code_that_lowers(capsys):
    code, out, _ = _run(capsys, "check", str(OPFILES / "tiny_square.py"), "--backend", "interpreter")
    assert code == 0 and "(host code -> C++)" in out and "FAIL" not in out


def test_build_folder_is_named_after_op_name(capsys, tmp_path):
    code, out, _ = _run(capsys, "build", str(OPFILES / "tiny_square.py"), "-o", str(tmp_path), "--no-verify")
    assert code == 0 and f"built {tmp_path / 'square'}" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["square"]
    # the files inside keep CANN's name for the op type
    assert (tmp_path / "square" / "kernel" / f"{_cann_name(OPFILES / 'tiny_square.py')}_kernel.cpp").is_file()
    assert _cann_name(OPFILES / "tiny_square.py") != "square"
    assert (tmp_path / "square" / "report.html").is_file()


def test_progress_bar_is_silent_without_a_terminal(tmp_path):
    run = subprocess.run([sys.executable, "-m", "ascdsl", "check", str(OPFILES / "tiny_square.py"),
                          "--backend", "interpreter"], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0 and run.stderr == ""


def test_progress_bar_draws_on_a_terminal(monkeypatch, capsys):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    with cli.progress(3, "case") as bar:
        bar.set_description("softmax")
        bar.update(3)
        bar.refresh()
    err = capsys.readouterr().err
    assert "softmax" in err and "3/3" in err and "case/s" in err
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    with cli.progress(3, "case") as bar:
        bar.update(3)
    assert capsys.readouterr().err == ""


def _picky_square(tmp_path, name: str, most: int):
    """tiny_square whose host rejects more than ``most`` elements."""
    source = (OPFILES / "tiny_square.py").read_text()
    bad = tmp_path / name
    bad.write_text(source.replace("def square_host(x, platform):\n",
                                  f"def square_host(x, platform):\n    if x.numel > {most}:\n"
                                  f"        raise ValueError(\"at most {most} elements\")\n"))
    return bad


def test_check_reports_a_case_the_host_rejects_as_rows(capsys, tmp_path):
    code, out, err = _run(capsys, "check", str(_picky_square(tmp_path, "picky.py", 50)), "--backend", "interpreter")
    assert code == 1 and "FAIL square [100 float32] on interpreter: at most 50 elements" in out
    # the table, not an abort; the host code itself lowers (the build's probe shapes reach a launch)
    assert out.rstrip().endswith("1 passed, 1 failed") and "FAIL square [(host code" not in out


def test_check_names_a_launch_no_shape_reaches(capsys, tmp_path):
    code, out, err = _run(capsys, "check", str(_picky_square(tmp_path, "never.py", 0)), "--backend", "interpreter")
    assert code == 1 and out.rstrip().endswith("0 passed, 2 failed")
    assert "never.py:19:12: error: no case or probe shape of the op reaches this launch of square_kernel" in out


def test_ops_folder_follows_the_rule(capsys, tmp_path):
    """ops/rmsnorm.py declares name="rms_norm": its folder is build/rms_norm."""
    code, out, _ = _run(capsys, "build", str(ROOT / "ops" / "rmsnorm.py"), "-o", str(tmp_path), "--no-verify")
    assert code == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["rms_norm"]
    assert (tmp_path / "rms_norm" / "kernel" / f"{_cann_name(ROOT / 'ops' / 'rmsnorm.py')}_kernel.cpp").is_file()


def test_a_kernel_error_is_headed_as_one_and_printed_once_with_its_cases(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(OPFILES.parent)
    code, out, err = _run(capsys, "check", "opfiles/kernel_error.py")
    where = "opfiles/kernel_error.py:13:30: error: cannot broadcast shapes (64,) and (128,)"
    assert code == 1 and err.splitlines()[:2] == ["ascdsl: twice: kernel error in `twice_kernel`:", where]
    assert "host code" not in err and "host code" not in out
    failures = [line for line in out.splitlines() if line.startswith("FAIL")]
    assert failures == [
        "FAIL twice, 4 cases (100 float32, 7 float32, 3x5 float32 and 1 more) on interpreter and sim; "
        f"(kernels -> Ascend C) on build: {where}"]
    assert out.splitlines()[-1] == "0 passed, 9 failed"
    code, out, err = _run(capsys, "build", "opfiles/kernel_error.py", "-o", str(tmp_path), "--no-verify")
    assert code == 1 and err.splitlines()[:2] == ["ascdsl: cannot build twice: kernel error in `twice_kernel`:", where]


def test_a_line_that_fails_each_specialisation_with_its_own_sizes_is_one_failure():
    """A kernel line that cannot broadcast its BLOCK-long tile fails every BLOCK the cases choose, each with
    its sizes: one FAIL line (the first message, the count of the others), not one per specialisation."""
    from ascdsl.testing import CaseResult, failures
    at = "op.py:12:9: error: cannot broadcast shapes "
    rows = [CaseResult("op", "(kernels -> Ascend C)", "build", False, message=at + "(32,) and (8,)"),
            CaseResult("op", "1 float32", "interpreter", False, message=at + "(32,) and (8,)"),
            CaseResult("op", "33 float32", "sim", False, message=at + "(64,) and (8,)"),
            CaseResult("op", "4096 float32", "sim", False, message=at + "(4096,) and (8,)"),
            CaseResult("op", "7 float32", "sim", False, message="op.py:20:5: error: another line"),
            CaseResult("op", "9 float32", "sim", False, message="max |err| 3 > 1"),
            CaseResult("op", "10 float32", "sim", False, message="max |err| 4 > 1")]
    assert failures(rows) == [
        "FAIL op, 3 cases (1 float32, 33 float32, 4096 float32) on interpreter and sim; (kernels -> Ascend C) on "
        f"build: {at}(32,) and (8,) (and 2 other messages at this line)",
        "FAIL op [7 float32] on sim: op.py:20:5: error: another line",
        "FAIL op [9 float32] on sim: max |err| 3 > 1", "FAIL op [10 float32] on sim: max |err| 4 > 1"]


@pytest.mark.parametrize("backend", ["interpreter", "sim"])
def test_a_ub_overflow_is_located_at_the_host_line_that_chose_the_extents(capsys, monkeypatch, backend):
    """The quick loop (the interpreter) runs the same UB planner as the build, without g++."""
    monkeypatch.chdir(OPFILES.parent)
    code, out, _ = _run(capsys, "check", "opfiles/ub_overflow.py", "--backend", backend)
    assert code == 1 and [line for line in out.splitlines() if line.startswith("FAIL")] == [
        f"FAIL copy, 2 cases (100 float32, 7 float32) on {backend}: opfiles/ub_overflow.py:19:12: error: this launch "
        "of copy_kernel (BLOCK=65536) needs 1048576 bytes of UB, more than the 188416 bytes Ascend910B3 allows: "
        "inQueueX (VECIN, 2 x 262144 B = 524288 B); outQueueOut (VECOUT, 2 x 262144 B = 524288 B)"]
    assert re.search(r"^copy +\(host code -> C\+\+\) +build +ok$", out, re.M)   # the host code itself lowers


def test_a_ub_overflow_names_the_kernel_line_of_its_largest_buffer(monkeypatch):
    import numpy as np
    from ascdsl.errors import UBOverflowError
    monkeypatch.chdir(OPFILES.parent)
    op, = load_operators(["opfiles/ub_overflow.py"])
    with pytest.raises(UBOverflowError) as e:
        op.entry(np.ones(100, np.float32), backend="sim")
    assert str(e.value).splitlines() == [
        "opfiles/ub_overflow.py:19:12: error: this launch of copy_kernel (BLOCK=65536) needs 1048576 bytes of UB, "
        "more than the 188416 bytes Ascend910B3 allows: inQueueX (VECIN, 2 x 262144 B = 524288 B); "
        "outQueueOut (VECOUT, 2 x 262144 B = 524288 B)",
        "    19 |     return ascdsl.Launch(copy_kernel, grid=(ascdsl.cdiv(x.numel, block),), "
        "constexprs={\"BLOCK\": block},",
        "       |            ^",
        "note: the largest buffer is the tile at opfiles/ub_overflow.py:12:9",
        "hint: use a smaller block (ascdsl.planner.largest_block finds the largest that fits)"]


def test_the_check_table_shows_the_error_against_the_tolerance_it_was_judged_by():
    import numpy as np
    from ascdsl import dtypes
    from ascdsl.testing import CaseResult, format_table, nearest_tolerance
    # bfloat16: atol and rtol from dtypes; the element nearest its tolerance, not the largest error
    bf16 = dtypes.bfloat16
    expected = np.array([1000.0, 1.0])
    actual = expected + [3.76, 0.008]
    err, tol = nearest_tolerance(actual, expected, bf16)
    assert (err, tol) == pytest.approx((0.008, bf16.atol + bf16.rtol * 1.0))
    err, tol = nearest_tolerance(expected + [3.76, 0.0], expected, bf16)
    assert (err, tol) == pytest.approx((3.76, bf16.atol + bf16.rtol * 1000.0))
    table = format_table([CaseResult("op", "2x3 bfloat16", "sim", True, 3.76, judged=(3.76, 8.0)),
                          CaseResult("op", "(host code -> C++)", "build", True)])
    assert table.splitlines()[0].split("  ")[-1] == "|err| <= tolerance"
    assert table.splitlines()[1].endswith("ok      3.76 <= 8") and table.splitlines()[2].endswith("ok")


def test_explain_says_per_launch_whether_the_simulator_batches_it_and_why_not(capsys):
    code, out, err = _run(capsys, "check", str(OPFILES / "row_scale.py"), "--backend", "interpreter", "--explain")
    assert code == 0, err
    section = [t for t in out.split("(--explain):\n", 1)[1].splitlines() if not t.startswith("    ")]
    assert len(section) == 3  # one line per distinct (kernel, grid): the cases' three launches, in order
    batched, refused, few = section
    assert batched.startswith("  row_scale_kernel(ptr<f32>, ptr<f32>, int32, BLOCK=128) on grid (4000, 1, 1): batched (rows form): P = ")
    p = int(re.search(r"P = (\d+)", batched).group(1))
    n = int(re.search(r"grid (\d+) \(", batched).group(1))
    assert p >= 2 and n % 40 == 0 and p * n >= 4000 > (p - 1) * n  # every program runs, in whole rounds of the cores
    assert "on grid (30, 1, 1): not batched: 30 programs on 40 vector cores" in few
    line = next(i for i, t in enumerate((OPFILES / "row_scale.py").read_text().splitlines(), 1) if "a branch on a loaded" in t)
    assert f"row_scale.py:{line}:5: program batching does not apply: a branch on a program-dependent value" in refused
    assert "if tl.load(x_ptr + row * n_cols) != 0.0:" in out  # the blocking line's text, under it
    code, out, _ = _run(capsys, "check", str(OPFILES / "row_scale.py"), "--backend", "interpreter")
    assert "--explain" not in out


def test_a_host_parameter_taken_for_a_tensor_is_located_at_the_parameter(capsys, tmp_path):
    source = (OPFILES / "row_scale.py").read_text()
    broken = tmp_path / "row_scale.py"  # `gated` undeclared: the op takes it for an input tensor
    broken.write_text(source.replace(' attrs=(ascdsl.Attr("gated", "Bool", False),),', ""))
    code, out, err = _run(capsys, "check", str(broken), "--backend", "interpreter")
    line = next(i for i, t in enumerate(source.splitlines(), 1) if t.startswith("def row_scale_host("))
    assert code == 1 and f"row_scale.py:{line}:23: error: `row_scale_host` takes `gated`, which the op cannot " \
        "give it: the op takes it for input tensor 2 of (x, gated), and a case gives 1 input shape" in err
    assert "declare it in Operator(attrs=...)" in err and "internal error" not in err + out
