"""The content-addressed cache (ascdsl.cache) and its users: sim builds, generated sources, the
SoftmaxGrad API path. Each test runs against a fresh cache folder of its own."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import cache, sim
from ascdsl.backend import simrun
from ascdsl.sim import build

ADD = Path(__file__).parents[1] / "sim" / "kernels" / "add.cpp"


@pytest.fixture(scope="module")
def module_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(autouse=True)
def fresh_cache(module_cache, monkeypatch):
    """One cache folder for the module (its precompiled header is built once), fresh per test run."""
    monkeypatch.setenv("ASCDSL_CACHE_DIR", str(module_cache))
    return module_cache


def kernel_copy(tmp_path: Path, tag: str) -> Path:
    """A copy of the add kernel at a path of its own (its own cache key)."""
    path = tmp_path / f"add_{tag}.cpp"
    path.write_text(ADD.read_text() + f"// {tag}\n")
    return path


def run_add(source: Path, n: int = 512) -> None:
    x, y, z = np.arange(n, dtype=np.float32), np.ones(n, np.float32), np.zeros(n, np.float32)
    sim.run_kernel(source, "add_custom", [x, y, z, np.uint32(n), np.uint32(256)], 1)
    np.testing.assert_array_equal(z, (x + y) * 2)


def warm() -> None:
    """The precompiled header and the launch object of every kernel build, built where the cache lacks them."""
    build._precompiled_header()
    build._launch_object()


def library_of(source: Path) -> Path:
    text = source.read_text()
    kernels = sim.signature.find_kernels(text)
    tiling = sim.signature.default_tiling_type(text)
    return build.build_library(lambda names: sim.signature.wrapper_source(names[0], kernels, tiling), [source.resolve()])


def test_cache_lives_under_the_users_folder_not_tmp(fresh_cache, tmp_path, monkeypatch):
    assert build.cache_dir() == fresh_cache / "sim"
    monkeypatch.delenv("ASCDSL_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.folder() == tmp_path / "home" / ".cache" / "ascdsl"
    assert oct(cache.folder().stat().st_mode & 0o777) == oct(0o700)


def test_a_cache_folder_writable_by_others_is_refused(tmp_path, monkeypatch):
    fresh_cache = tmp_path / "shared"
    fresh_cache.mkdir()
    fresh_cache.chmod(0o777)
    monkeypatch.setenv("ASCDSL_CACHE_DIR", str(fresh_cache))
    with pytest.raises(ascdsl.Error, match="writable by others"):
        cache.folder()


def test_a_planted_source_file_is_replaced_not_trusted(fresh_cache):
    path = cache.text("gen", "int good;\n")
    path.write_text("int planted;\n")  # same name, other content
    assert cache.text("gen", "int good;\n").read_text() == "int good;\n"
    path.write_text("int go")  # truncated
    assert cache.text("gen", "int good;\n").read_text() == "int good;\n"


def test_a_planted_softmax_grad_api_source_does_not_change_the_result(fresh_cache):
    sys.path.insert(0, str(Path(__file__).parents[2] / "ops"))
    try:
        import softmax_grad as op
    finally:
        sys.path.pop(0)
    rng = np.random.default_rng(0)
    grad, src = rng.standard_normal((4, 32)).astype(np.float32), rng.random((4, 32)).astype(np.float32)
    want = op.softmax_grad(grad, src, impl="api", backend="sim")
    planted = [f for f in (fresh_cache / "softmax-grad-api").rglob("*.cpp") if "SoftmaxGrad<float>(" in f.read_text()]
    assert len(planted) == 1 and planted[0].is_relative_to(fresh_cache)
    planted[0].write_text(planted[0].read_text().replace("SoftmaxGrad<float>(dst, grad, src",
                                                          "Duplicate(dst, 42.0f, 32); (void)(grad, src"))
    got = op.softmax_grad(grad, src, impl="api", backend="sim")
    np.testing.assert_array_equal(got, want)


def test_kernel_libraries_link_one_launch_object(tmp_path, fresh_cache):
    """The simulator's launch code is compiled once (``launch-*.o``) and linked into every kernel library;
    a kernel build compiles only the kernel (its wrapper declares the launch functions)."""
    warm()
    before = sim.build_stats().builds
    lib = library_of(kernel_copy(tmp_path, "second"))
    assert sim.build_stats().builds == before + 1
    assert len(list((fresh_cache / "sim").glob("launch-*.o"))) == 1
    assert b"outcome_json" in lib.read_bytes()  # linked from the object
    run_add(kernel_copy(tmp_path, "second"))


def test_a_library_copied_over_another_entry_is_rebuilt(tmp_path):
    a, b = kernel_copy(tmp_path, "a"), kernel_copy(tmp_path, "b")
    lib_a, lib_b = library_of(a), library_of(b)
    original = lib_b.read_bytes()
    shutil.copyfile(lib_a, lib_b)  # a planted binary under b's name
    before = sim.build_stats().builds
    assert library_of(b) == lib_b and sim.build_stats().builds == before + 1
    assert lib_b.read_bytes() != lib_a.read_bytes() and len(lib_b.read_bytes()) == len(original)
    run_add(b)


def test_a_truncated_library_is_rebuilt(tmp_path):
    source = kernel_copy(tmp_path, "truncated")
    lib = library_of(source)
    lib.write_bytes(lib.read_bytes()[:1000])
    run_add(source)
    assert lib.stat().st_size > 1000


def test_a_library_that_fails_to_load_is_rebuilt(tmp_path):
    source = kernel_copy(tmp_path, "unloadable")
    lib = library_of(source)
    lib.write_bytes(b"not an ELF file")
    cache._record(lib)  # the record agrees, so only loading finds out
    run_add(source)
    assert lib.read_bytes().startswith(b"\x7fELF")


@ascdsl.jit
def twice(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


def test_a_truncated_generated_kernel_source_is_rewritten(fresh_cache):
    simrun._compiled.cache_clear()
    x = np.arange(64, dtype=np.float32)
    out = np.zeros_like(x)
    before = set(fresh_cache.glob("gen-*.cpp"))
    twice[(1,)](x, out, 64, BLOCK=64, backend="sim")
    gen = list(set(fresh_cache.glob("gen-*.cpp")) - before)
    assert len(gen) == 1
    gen[0].write_text(gen[0].read_text()[:200])
    simrun._compiled.cache_clear()
    out[:] = 0
    twice[(1,)](x, out, 64, BLOCK=64, backend="sim")
    np.testing.assert_array_equal(out, 2 * x)
    assert cache.intact_text(gen[0])


def test_a_deleted_install_does_not_break_later_builds(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCDSL_CACHE_DIR", str(tmp_path / "cache"))
    first = tmp_path / "install1" / "include"
    shutil.copytree(build.INCLUDE_DIR, first)
    monkeypatch.setattr(build, "INCLUDE_DIR", first)
    build._precompiled_header()  # what a build with the first install writes that names an install
    stubs = list(build.cache_dir().glob("pch-*/kernel_operator.h"))
    assert stubs and all(str(first) not in s.read_text() for s in stubs)
    second = tmp_path / "install2" / "include"
    first.parent.rename(second.parent)  # the first install is gone
    monkeypatch.setattr(build, "INCLUDE_DIR", second)
    run_add(kernel_copy(tmp_path, "install2"))
    assert len(list(build.cache_dir().glob("pch-*"))) == 2  # keyed by the headers' path


def test_two_processes_building_one_kernel_at_once(tmp_path):
    fresh_cache = tmp_path / "cache"
    source = kernel_copy(tmp_path, "race")
    script = textwrap.dedent(f"""
        import numpy as np
        from ascdsl import sim
        n = 512
        x, y, z = np.arange(n, dtype=np.float32), np.ones(n, np.float32), np.zeros(n, np.float32)
        sim.run_kernel({str(source)!r}, "add_custom", [x, y, z, np.uint32(n), np.uint32(256)], 1)
        assert (z == (x + y) * 2).all()
        print(sim.build_stats().builds)
    """)
    env = dict(os.environ, ASCDSL_CACHE_DIR=str(fresh_cache))
    procs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env) for _ in range(2)]
    results = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], results
    assert sum(int(out) for out, _ in results) == 3  # the pch, the launch object and the kernel, each built once
    assert not list(fresh_cache.rglob("*.tmp-*"))


def test_an_interrupted_build_leaves_no_temporary_file(tmp_path, monkeypatch, fresh_cache):
    source = kernel_copy(tmp_path, "interrupted")
    warm()  # only the kernel's build is interrupted

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(build.subprocess, "run", interrupted)
    with pytest.raises(KeyboardInterrupt):
        library_of(source)
    monkeypatch.undo()
    monkeypatch.setenv("ASCDSL_CACHE_DIR", str(fresh_cache))
    assert not list(fresh_cache.rglob("*.tmp-*"))
    run_add(source)


def test_temporary_files_of_dead_processes_are_removed(tmp_path, monkeypatch):
    folder = tmp_path / "other-cache"
    folder.mkdir(mode=0o700)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    stale = folder / f"kernel-x.so.tmp-{dead}-0000.so"
    live = folder / f"kernel-y.so.tmp-{os.getpid()}-0000.so"
    stale.write_bytes(b"partial")
    live.write_bytes(b"being written")
    monkeypatch.setenv("ASCDSL_CACHE_DIR", str(folder))
    cache.folder()
    assert not stale.exists() and live.exists()


def test_gxx_runs_with_a_timeout(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCDSL_CXX_TIMEOUT", "0.01")
    with pytest.raises(sim.SimCompileError, match="longer than 0.01 s"):
        library_of(kernel_copy(tmp_path, "slow"))
    assert not list(build.cache_dir().rglob("*.tmp-*"))


def test_the_key_covers_included_files(tmp_path):
    header = tmp_path / "scale.h"
    header.write_text("#define SCALE 2\n")
    source = tmp_path / "k.cpp"
    source.write_text('#include "scale.h"\n')
    first = build.source_digest([source])
    header.write_text("#define SCALE 3\n")
    assert build.source_digest([source]) != first


def test_the_same_sources_in_another_folder_reuse_the_build(tmp_path):
    """The key holds the sources' paths relative to their folder: a copy of a build folder elsewhere
    (another ``-o`` or temporary folder) reuses its g++ build; a changed file or layout does not."""
    def program(folder: str, value: int = 3, header: str = "value.h", main: str = "") -> Path:
        (tmp_path / folder).mkdir()
        (tmp_path / folder / header).write_text(f"#define VALUE {value}\n")
        source = tmp_path / folder / "main.cpp"
        source.write_text(f'#include "{header}"\nint main() {{ {main}return VALUE; }}\n')
        return source
    first = build.build_executable([program("a")])
    builds = build.build_stats().builds
    assert build.build_executable([program("b")]) == first and build.build_stats().builds == builds
    assert subprocess.run([str(first)]).returncode == 3
    digest = build.source_digest([program("c")])
    assert build.source_digest([program("d", value=4)]) != digest
    assert build.source_digest([program("e", header="other.h")]) != digest
    uses_path = 'const char* f = __FILE__; (void)f; '
    assert build.source_digest([program("f", main=uses_path)]) != build.source_digest([program("g", main=uses_path)])


def test_lifts_are_computed_once_per_key_and_a_changed_entry_is_recomputed(monkeypatch):
    """The runtime-extent analysis (seconds per kernel) is stored by what determines it: a second
    process (here: a cleared in-memory cache) reads it; an entry whose bytes changed is recomputed."""
    from ascdsl.backend.lift import lift
    from ascdsl.op import load_operators
    from ascdsl.platforms import DEFAULT_PLATFORM, get_platform
    (op,) = load_operators([Path(__file__).parents[2] / "ops" / "scale_add.py"])
    samples = []
    real = lift._sample
    monkeypatch.setattr(lift, "_sample", lambda *a: samples.append(a[1].name) or real(*a))

    def lifts():
        lift._analyse.cache_clear()
        lift._KNOWN.clear()
        from ascdsl import build
        b = build.plan(op, get_platform(DEFAULT_PLATFORM))
        return [(v.lift.extents, v.lift.slots) for v in b.variants if v.lift is not None]
    first = lifts()
    assert first and samples
    done = len(samples)
    assert lifts() == first and len(samples) == done  # read back, not sampled again
    entries = list(cache.folder("lift").glob("*.pickle"))
    assert entries
    for e in entries:
        e.write_bytes(e.read_bytes()[:-1] + b"\0")
    assert lifts() == first and len(samples) > done


def test_an_edited_copy_of_an_op_file_reads_the_lifts_of_its_unchanged_kernels(tmp_path, monkeypatch):
    """The key is the kernel's code, not its file's path or the rest of the file: a copy elsewhere with
    another function edited reads the lift, with its source locations in the copy."""
    from ascdsl import build
    from ascdsl.backend.lift import lift
    from ascdsl.op import load_operators
    from ascdsl.platforms import DEFAULT_PLATFORM, get_platform
    source = Path(__file__).parents[2] / "ops" / "scale_add.py"
    copy = tmp_path / "scale_add_copy.py"
    copy.write_text(source.read_text().replace('"""', '"""Edited. ', 1))
    samples = []
    real = lift._sample
    monkeypatch.setattr(lift, "_sample", lambda *a: samples.append(a[1].name) or real(*a))
    done = 0
    for path in (source, copy):
        lift._analyse.cache_clear()
        lift._KNOWN.clear()
        (op,) = load_operators([path])
        b = build.plan(op, get_platform(DEFAULT_PLATFORM))
        files = {n.loc.file for v in b.variants if v.lift is not None for n in v.lift.kernel.process
                 if getattr(n, "loc", None) is not None and n.loc.line}
        assert files == {str(path.resolve())} or files == {str(path)}, files
        done = len(samples) if path == source else done
    assert len(samples) == done  # the copy sampled nothing (the source's lifts are in the cache)


def test_every_dtype_unpickles_as_the_tables_own_instance():
    """Lifts are pickled; the backend's uint32 (Gather offsets) is in them though not a language dtype."""
    import pickle

    from ascdsl import dtypes
    for d in (*dtypes.ALL, dtypes.uint32):
        assert pickle.loads(pickle.dumps(d)) is d


def test_an_entry_that_cannot_be_unpickled_is_recomputed():
    calls = []
    key = cache.digest("unreadable entry", str(id(calls)))
    assert cache.stored("test", key, lambda: calls.append(1) or (1, 2)) == (1, 2)
    path = cache.folder("test") / f"{key[:40]}.pickle"
    path.write_bytes(b"\x80\x05cno_such_module\nthing\n.")  # a class that does not exist
    cache._record(path)  # a matching record: only loading fails
    assert cache.stored("test", key, lambda: calls.append(2) or (3, 4)) == (3, 4) and calls == [1, 2]
