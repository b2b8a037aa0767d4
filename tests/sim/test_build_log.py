"""The build log (``ASCDSL_BUILD_LOG``): every g++ run and the kernels of every generated file, from which
the suite's summary counts kernels compiled in more than one library."""
import json

import numpy as np

from ascdsl.backend import simrun
from ascdsl.sim.build import log_summary
from tests.kernels.basic import add_kernel, scale_add_kernel


def _launch_both():
    x, y = np.arange(512, dtype=np.float32), np.ones(512, np.float32)
    add_kernel[(2,)](x, y, np.zeros_like(x), 512, BLOCK=256, backend="sim")
    scale_add_kernel[(2,)](x, y, np.zeros_like(x), 2.0, 512, BLOCK=256, backend="sim")


def test_prebuilt_kernels_are_launched_from_their_file_and_built_once(tmp_path, monkeypatch):
    log = tmp_path / "builds.jsonl"
    monkeypatch.setenv("ASCDSL_BUILD_LOG", str(log))
    with simrun.recording() as launches:
        _launch_both()
    simrun.prebuild(launches)
    _launch_both()
    records = [json.loads(line) for line in log.read_text().splitlines()]
    files = [r for r in records if "file" in r]
    assert len(files) == 1 and len(files[0]["kernels"]) == 2  # the launches wrote no file of their own
    libraries = [r for r in records if r.get("made", "").startswith("kernel-")]
    assert all(r["sources"] == [files[0]["file"]] for r in libraries)  # built (if not cached) from that file
    assert log_summary(log).twice == {}
    assert sorted(log_summary(log).names.values()) == ["add_kernel", "scale_add_kernel"]


def test_a_kernel_in_two_built_libraries_is_reported(tmp_path):
    log = tmp_path / "builds.jsonl"
    records = [{"file": "gen-a.cpp", "kernels": ["k1", "k2"], "names": ["add", "scale"]},
               {"file": "gen-b.cpp", "kernels": ["k2"], "names": ["scale"]},
               {"file": "gen-c.cpp", "kernels": ["k1"]},
               {"made": "kernel-1.so", "sources": ["gen-a.cpp"], "seconds": 2.0, "ok": True, "test": "t.py::a"},
               {"made": "kernel-2.so", "sources": ["gen-b.cpp"], "seconds": 1.5, "ok": True, "test": "u.py::b"},
               {"made": "kernel-3.so", "sources": ["gen-c.cpp"], "seconds": 1.0, "ok": False, "test": "u.py::c"},
               {"made": "front-clang++-1.ok", "sources": ["gen-a.cpp"], "seconds": 0.5, "ok": True, "test": "t.py::a"}]
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    s = log_summary(log)
    assert (s.builds, s.seconds, s.checks, s.check_seconds) == (3, 4.5, 1, 0.5)
    assert s.per_file == {"t.py": 2.5, "u.py": 2.5}
    assert s.twice == {"k2": ("gen-a.cpp", "gen-b.cpp")}  # k1's second build failed: g++ made nothing
    assert s.names == {"k1": "add", "k2": "scale"}  # what the summary prints of each, with the tests below
    assert s.built_in == {"gen-a.cpp": ("t.py::a",), "gen-b.cpp": ("u.py::b",)}
