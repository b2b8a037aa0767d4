"""Fuzz: mutated kernels (tests/reliability/fuzz.py) run on the interpreter and, a few of those
that run, on the simulator; every outcome is a run or a refusal located in the mutant's file,
never an internal error or a hang. The fast subset runs in every suite; the big run is slow."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from . import fuzz

SECONDS = 120  # CPU seconds per mutant on the interpreter (under a second; ~10 s when it lifts an op kernel
# cold, ~50 s when that kernel's masked stores go lane by lane: a hang is what this catches)
SIM_SECONDS = 300  # per mutant on the simulator, g++ included


def interpreter_outcomes(tmp_path, count: int, seed: int, shard: tuple[int, int] = (0, 1)):
    out = []
    for m in fuzz.mutants(count, seed, shard):
        path = fuzz.write(m, tmp_path)
        out.append((m, path, *fuzz.run_mutant(path, m.index, "interpreter", SECONDS)))
    return out


def sim_outcomes(mutants: list[tuple[Path, int]]) -> list[tuple[str, str]]:
    """The simulator outcome of each ``(path, index)`` mutant, run in one subprocess that builds their
    kernels in one g++ run (:func:`fuzz.run_on_simulator`); one that ends it (a crash, a hang) is an
    internal error and the mutants after it run in another."""
    out: list[tuple[str, str]] = []
    while len(out) < len(mutants):
        rest = mutants[len(out):]
        timeout = SIM_SECONDS * len(rest) + 60
        try:
            proc = subprocess.run([sys.executable, "-m", "tests.reliability.fuzz", str(SIM_SECONDS),
                                   *(f"{path}:{index}" for path, index in rest)],
                                  cwd=fuzz.REPO, capture_output=True, text=True, timeout=timeout,
                                  env=dict(os.environ, PYTHONPATH=str(fuzz.REPO)))
            lines, ended = proc.stdout, f"exited with {proc.returncode}: {proc.stderr[-500:]}"
        except subprocess.TimeoutExpired as e:
            lines, ended = (e.stdout or b"").decode(), f"gave no outcome within {timeout} s"  # bytes, even with text=True
        out += [tuple(json.loads(line.removeprefix(fuzz.OUTCOME))) for line in lines.splitlines()
                if line.startswith(fuzz.OUTCOME)]
        if len(out) < len(mutants):
            out.append((fuzz.INTERNAL, f"the mutants' process {ended}"))
    return out


def check(tmp_path, count: int, seed: int, sim_count: int, shard: tuple[int, int] = (0, 1)) -> None:
    """Mutants ``shard[0]::shard[1]`` of ``count``: each run on the interpreter, ``sim_count`` of those
    that ran on the simulator too."""
    results = interpreter_outcomes(tmp_path, count, seed, shard)
    kinds = [kind for _, _, kind, _ in results]
    failures = [f"{m.source.name}:{m.kernel} [{m.what}] on the interpreter: {detail}"
                for m, _, kind, detail in results if kind == fuzz.INTERNAL]
    ran = [(m, path) for m, path, kind, _ in results if kind == fuzz.RAN]
    assert kinds.count(fuzz.RAN) >= len(results) // 10 and kinds.count(fuzz.REFUSED) >= len(results) // 10  # both exercised
    on_sim = ran[:sim_count]
    for (m, _), (kind, detail) in zip(on_sim, sim_outcomes([(path, m.index) for m, path in on_sim]), strict=True):
        if kind == fuzz.INTERNAL:
            failures.append(f"{m.source.name}:{m.kernel} [{m.what}] on the simulator: {detail}")
    assert not failures, "\n".join(failures)


def test_fuzz_mutants_are_deterministic():
    a, b = fuzz.mutants(20, seed=5), fuzz.mutants(20, seed=5)
    assert [m.text for m in a] == [m.text for m in b]
    assert fuzz.mutants(20, seed=5, shard=(1, 3)) == a[1::3]  # a shard draws the same mutants
    assert len({m.text for m in a}) == 20 and {m.source.parent.name for m in fuzz.mutants(60, 5)} >= {"ops", "kernels"}


def test_fuzz_draws_no_mutation_that_changes_nothing():
    """A float constant drawn to its own value (`float 0.0 -> 0.0`: seed 0's mutant 53 was one) is drawn again,
    as `Mult -> Mult` is: a mutant is a change."""
    floats = [m.what.removeprefix("float ").split(" -> ") for seed in range(3) for m in fuzz.mutants(60, seed=seed)
              if m.what.startswith("float ")]  # three seeds: a draw of one may hold no float mutant
    assert floats and all(float(old) != float(new) for old, new in floats)


def test_fuzz_fast(tmp_path):
    check(tmp_path, count=60, seed=0, sim_count=1)


@pytest.mark.slow
@pytest.mark.parametrize("shard", range(4))
def test_fuzz(tmp_path, shard):
    """400 mutants in four shards (xdist runs them side by side), 3 of each shard's on the simulator."""
    check(tmp_path, count=400, seed=1, sim_count=3, shard=(shard, 4))


def test_a_hang_is_raised_once_whichever_timer_fires_first():
    """The CPU and the wall-clock timer both stop a hang: the second, due while the first one's Hang is handled,
    raised another from the handler on a loaded machine (CI); the first now disarms both and the second is ignored."""
    alarm = fuzz._alarm_once()
    with pytest.raises(fuzz.Hang):
        alarm(signal.SIGALRM, None)
    assert alarm(signal.SIGPROF, None) is None
    assert signal.getitimer(signal.ITIMER_PROF) == signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_an_internal_error_is_reported(tmp_path):
    """The oracle itself: an error located in ascdsl's files, a raw exception and a hang are findings."""
    path = (tmp_path / "m.py").resolve()
    path.write_text("def call(f, *args):\n    return f(*args)\n\n\ndef refuse():\n    raise TypeError('no')\n")
    import ascdsl
    from ascdsl.errors import Loc
    m = fuzz.load(path, "fuzz_oracle_m")

    def located_elsewhere():
        raise ascdsl.CompilationError(Loc(ascdsl.__file__, 1, 1), "boom")

    def raw():
        return {}["missing"]

    def hang():
        while True:
            pass

    assert fuzz.outcome(path, located_elsewhere, 5)[0] == fuzz.INTERNAL
    assert fuzz.outcome(path, raw, 5)[0] == fuzz.INTERNAL
    assert fuzz.outcome(path, hang, 0.2) == (fuzz.INTERNAL, "no outcome within 0.2 s of CPU time")
    assert fuzz.outcome(path, lambda: True, 5) == (fuzz.RAN, "")
    assert fuzz.outcome(path, m.refuse, 5) == (fuzz.REFUSED, "no")  # the file's own TypeError
    # a TypeError raised inside ascdsl, called from the file (as an op's entry calls it): not the file's own
    assert fuzz.outcome(path, lambda: m.call(ascdsl.next_power_of_2, "a"), 5)[0] == fuzz.INTERNAL
