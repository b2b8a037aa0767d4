"""g++ builds of simulator kernels, cached in :mod:`ascdsl.cache` (``sim/``).

A build's key hashes the compiler version, the flags, the simulator headers' path and contents and
the sources it includes (contents and paths relative to the sources' common folder, followed through
quoted ``#include``s), so the same files in another folder (another build or temporary folder) reuse
the build.
``kernel_operator.h`` is precompiled once per header version so a cold kernel build mostly pays for
the kernel's own templates. g++ runs with a timeout (``ASCDSL_CXX_TIMEOUT`` seconds, default 600).
With ``ASCDSL_BUILD_LOG`` naming a file, every g++ run (in this process and the processes it starts)
appends a JSON line to it: what it made, its sources, its seconds and the pytest test running
(:func:`log`; the test suite's summary of builds reads it).

Every build treats a narrowing conversion as an error (``-Werror=narrowing``), as clang, the base of
CANN's device compiler, does. :func:`check_front_end` runs further compilers' front ends over generated
code with warnings on (``ASCDSL_FRONT_END``; by default clang++ where it is installed).
"""
from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import cache
from .errors import SimCompileError

INCLUDE_DIR = Path(__file__).parent / "include"
CXX = os.environ.get("CXX", "g++")
# -Og: a quarter less g++ time than -O1 (code generation is most of a build) for kernels that run as
# fast; no flag changes floating-point semantics (no -ffast-math, no FMA on the default x86-64 target)
FLAGS = ("-std=c++17", "-Og", "-fPIC", "-fno-gnu-unique", "-pthread", "-Werror=narrowing")
FRONT_END_FLAGS = ("-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Wconversion", "-Wno-sign-conversion", "-Werror")
"""What generated code must pass without a diagnostic (sign conversions of proven non-negative int32
counts to the API's unsigned parameters are left out: ``docs/limits.md``)."""
_DIAGNOSTIC = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?:\d+:)? (?:fatal )?error: (?P<msg>.*)$", re.MULTILINE)
_QUOTED_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)
_OWN_PATH = re.compile(rb"__FILE__|__builtin_FILE|source_location|\bassert\b")
_PCH_STUB = "#include_next <kernel_operator.h>\n"  # found first via -I pch-dir; goes on to INCLUDE_DIR


@dataclass(frozen=True)
class BuildStats:
    """Builds run by this process: ``builds`` g++ runs taking ``seconds`` in total, ``cache_hits`` reuses."""

    builds: int = 0
    seconds: float = 0.0
    cache_hits: int = 0


_stats = BuildStats()


def build_stats() -> BuildStats:
    """How many g++ builds this process ran, how long they took, and how many builds the cache saved."""
    return _stats


def log(record: dict) -> None:
    """Append ``record`` with the pytest test running (``PYTEST_CURRENT_TEST``) to ``$ASCDSL_BUILD_LOG``, if set."""
    path = os.environ.get("ASCDSL_BUILD_LOG")
    if path:
        line = json.dumps({**record, "test": os.environ.get("PYTEST_CURRENT_TEST", "").rpartition(" ")[0]})
        with open(path, "a") as f:  # one short write in append mode: lines of concurrent processes never mix
            f.write(line + "\n")


@dataclass(frozen=True)
class LogSummary:
    """Of a build log: ``builds`` g++ runs that made a file taking ``seconds``, ``checks`` front-end checks
    taking ``check_seconds``, the seconds of both per test file, ``twice``: the kernels (a digest of
    their IR and platform, the same in every process) in more than one built library, with those
    libraries' sources: each was compiled again where a build of it existed; ``names``, the kernels'
    names, and ``built_in``, the tests whose g++ runs built each source."""

    builds: int
    seconds: float
    checks: int
    check_seconds: float
    per_file: dict[str, float]
    twice: dict[str, tuple[str, ...]]
    names: dict[str, str]
    built_in: dict[str, tuple[str, ...]]


def log_summary(path: Path) -> LogSummary:
    """The :class:`LogSummary` of the build log ``path`` (see :func:`log`)."""
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    kernels = {r["file"]: r["kernels"] for r in records if "file" in r}
    runs = [r for r in records if "made" in r]
    checks = [r for r in runs if r["made"].startswith("front-")]
    builds = [r for r in runs if not r["made"].startswith("front-")]
    per_file: dict[str, float] = {}
    for r in runs:
        test = r["test"].partition("::")[0] or "(no test)"
        per_file[test] = per_file.get(test, 0.0) + r["seconds"]
    files_of: dict[str, set[str]] = {}
    for r in builds:
        for source in r["sources"] if r["ok"] else ():
            for kernel in kernels.get(source, ()):
                files_of.setdefault(kernel, set()).add(source)
    names = {k: n for r in records if "file" in r for k, n in zip(r["kernels"], r.get("names", ()))}
    built_in: dict[str, set[str]] = {}
    for r in builds:
        for source in r["sources"] if r["ok"] else ():
            built_in.setdefault(source, set()).add(r["test"] or "(no test)")
    return LogSummary(len(builds), sum(r["seconds"] for r in builds), len(checks), sum(r["seconds"] for r in checks),
                      per_file, {k: tuple(sorted(f)) for k, f in files_of.items() if len(f) > 1}, names,
                      {f: tuple(sorted(t)) for f, t in built_in.items()})


def _count(seconds: float | None) -> None:
    global _stats
    if seconds is None:
        _stats = BuildStats(_stats.builds, _stats.seconds, _stats.cache_hits + 1)
    else:
        _stats = BuildStats(_stats.builds + 1, _stats.seconds + seconds, _stats.cache_hits)


def cache_dir() -> Path:
    """The simulator's cache folder: ``sim/`` in :func:`ascdsl.cache.folder`."""
    return cache.folder("sim")


def _toolchain_hash() -> str:
    """Compiler version, flags, and the simulator headers' path and contents."""
    return _toolchain_hash_of(INCLUDE_DIR.resolve(), CXX)


@functools.cache
def _toolchain_hash_of(include: Path, cxx: str) -> str:
    version = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=True).stdout
    parts = [version, repr(FLAGS), str(include)]
    for path in sorted(include.rglob("*.h")):
        parts += [str(path.relative_to(include)), path.read_bytes()]
    return cache.digest(*parts)[:24]


def source_digest(paths: list[Path]) -> str:
    """Hash of the given sources and every local file they include with quotes: their contents and
    their paths relative to the folder that holds them all. A file that names its own path
    (``__FILE__``, ``assert``) puts its absolute path in the hash too."""
    files: dict[Path, bytes] = {}
    todo = [p.resolve() for p in paths]
    while todo:
        path = todo.pop()
        if path in files or not path.is_file():
            continue
        files[path] = data = path.read_bytes()
        todo += [(path.parent / inc).resolve() for inc in _QUOTED_INCLUDE.findall(data.decode(errors="replace"))]
    root = Path(os.path.commonpath([p.parent for p in files])) if files else Path()
    parts: list[str | bytes] = [str(p.resolve().relative_to(root)) for p in paths if p.resolve() in files]
    for path in sorted(files):
        own = _OWN_PATH.search(files[path]) is not None
        parts += [str(path) if own else str(path.relative_to(root)), files[path]]
    return cache.digest(*parts)


def _compile(args: list[str], sources: Sequence[Path] = ()) -> Callable[[Path], None]:
    """A maker for :func:`ascdsl.cache.entry`: g++ ``args`` writing the temporary output, with a timeout
    (``sources``: the files the build log names)."""
    def make(tmp: Path) -> None:
        start = time.perf_counter()
        proc = None
        try:
            proc = subprocess.run([CXX, *FLAGS, *args, "-o", str(tmp)], capture_output=True, text=True,
                                  check=False, timeout=_timeout())
        except subprocess.TimeoutExpired:
            raise SimCompileError(f"g++ took longer than {_timeout():g} s (ASCDSL_CXX_TIMEOUT) and was stopped",
                                  None, None, "") from None
        finally:
            _count(time.perf_counter() - start)
            log({"made": tmp.name.partition(cache.TMP)[0], "sources": [p.name for p in sources],
                 "seconds": round(time.perf_counter() - start, 3), "ok": proc is not None and proc.returncode == 0})
        if proc.returncode != 0:
            raise _compile_error(proc.stderr)
    return make


def front_ends() -> tuple[str, ...]:
    """The compilers ``ASCDSL_FRONT_END`` names (space-separated; empty: none) for :func:`check_front_end`;
    unset, clang++ where it is installed."""
    names = os.environ.get("ASCDSL_FRONT_END")
    if names is None:
        return ("clang++",) if shutil.which("clang++") else ()
    return tuple(names.split())


def check_front_end(source: Path, compilers: tuple[str, ...] | None = None, defines: tuple[str, ...] = ()) -> None:
    """Each of ``compilers`` (default :func:`front_ends`) parses the generated ``source`` against the
    simulator's headers (as system headers: only ``source`` is judged) with :data:`FRONT_END_FLAGS` and
    the macros ``defines`` (``NAME=VALUE``); any diagnostic raises :class:`SimCompileError`. A clean
    result is cached per compiler, source and defines."""
    flags = [*FRONT_END_FLAGS, *(f"-D{d}" for d in defines)]
    for cxx in front_ends() if compilers is None else compilers:
        key = cache.digest(_toolchain_hash_of(INCLUDE_DIR.resolve(), cxx), repr(flags), source_digest([source]))[:32]

        def make(tmp: Path, cxx=cxx) -> None:
            start = time.perf_counter()
            proc = subprocess.run([cxx, *flags, *_front_end_pch(cxx, flags), "-isystem", str(INCLUDE_DIR), str(source)],
                                  capture_output=True, text=True, check=False, timeout=_timeout())
            log({"made": tmp.name.partition(cache.TMP)[0], "sources": [source.name],
                 "seconds": round(time.perf_counter() - start, 3), "ok": proc.returncode == 0})
            if proc.returncode != 0 or proc.stderr.strip():
                raise _compile_error(proc.stderr, cxx)
            tmp.write_text(proc.stderr)
        cache.entry(cache_dir() / f"front-{Path(cxx).name}-{key}.ok", make)


def _front_end_pch(cxx: str, flags: list[str]) -> list[str]:
    """For clang, the simulator's headers precompiled with ``flags`` (half a front-end check's time), as
    the arguments that use them; none for another compiler."""
    if "clang" not in Path(cxx).name:
        return []
    key = cache.digest(_toolchain_hash_of(INCLUDE_DIR.resolve(), cxx), repr(flags))[:24]
    header = cache.write_text(cache_dir() / f"front-{key}.h", '#include "kernel_operator.h"\n')
    build = [f for f in flags if f != "-fsyntax-only"]

    def make(tmp: Path) -> None:
        proc = subprocess.run([cxx, *build, "-x", "c++-header", "-isystem", str(INCLUDE_DIR), str(header),
                               "-o", str(tmp)], capture_output=True, text=True, check=False, timeout=_timeout())
        if proc.returncode != 0:
            raise _compile_error(proc.stderr, cxx)
    pch, _ = cache.entry(cache_dir() / f"front-{key}.pch", make)
    # clang checks a PCH's headers by mtime; the key holds their contents, so a header rewritten unchanged
    # (a checkout) leaves the PCH valid and a changed one makes another key
    return ["-include-pch", str(pch), "-Xclang", "-fno-validate-pch"]


def _timeout() -> float:
    return float(os.environ.get("ASCDSL_CXX_TIMEOUT", "600"))


def _compile_error(stderr: str, cxx: str = CXX) -> SimCompileError:
    m = _DIAGNOSTIC.search(stderr)
    if m is None:
        return SimCompileError(f"{cxx} failed: {stderr.strip()[:2000]}", None, None, stderr)
    return SimCompileError(m.group(0), m.group("file"), int(m.group("line")), stderr)


def _precompiled_header(defines: tuple[str, ...] = ()) -> Path:
    """Directory holding ``kernel_operator.h.gch`` for the current headers, flags and preprocessor ``defines``
    (GCC uses it only where the same macros are defined), next to a stub ``kernel_operator.h`` that the
    kernel's own ``#include`` finds (and the include guard empties). The stub names no path
    (``#include_next`` goes on to the ``-I`` after it), and the folder's key holds the headers' path, so a
    moved or deleted install never leaves a stub pointing nowhere."""
    flags = [f"-D{d}" for d in defines]
    pch_dir = cache_dir() / f"pch-{_toolchain_hash()}{'-' + cache.digest(*flags)[:12] if flags else ''}"
    pch_dir.mkdir(mode=0o700, exist_ok=True)
    header = cache.write_text(pch_dir / "kernel_operator.h", _PCH_STUB)
    cache.entry(pch_dir / "kernel_operator.h.gch",
                _compile([*flags, "-x", "c++-header", "-I", str(INCLUDE_DIR), str(header)]))
    return pch_dir


def _launch_object() -> Path:
    """The simulator's launch code (``ascdsl_sim/launch_run.h``) compiled once per header version, which
    every kernel library links instead of compiling it again (about 0.4 s of each build)."""
    name = f"launch-{_toolchain_hash()}"
    src = cache.write_text(cache_dir() / f"{name}.cpp", '#define ASCDSL_SIM_LAUNCH_LINKAGE\n#include "ascdsl_sim/launch.h"\n')
    return cache.entry(cache_dir() / f"{name}.o", _compile(["-c", "-I", str(INCLUDE_DIR), str(src)]))[0]


def build_library(wrapper: Callable[[list[str]], str], sources: list[Path]) -> Path:
    """The shared library of the C++ text ``wrapper(names)`` (including ``sources`` by ``names``), built if
    not cached. The key holds the text rendered with each source named by its place in ``sources`` (which
    :func:`source_digest` places relative to the others), g++ compiles it rendered with their absolute
    paths: the same text in another folder reuses the build."""
    placed = wrapper([f"<source {i}>" for i in range(len(sources))])
    key = cache.digest(_toolchain_hash(), source_digest(sources), placed)[:32]
    src = cache.text("kernel", wrapper([str(Path(source).resolve()) for source in sources]), where=cache_dir())

    def make(tmp: Path) -> None:  # the header and launch object only where a library is built
        _compile(["-shared", "-DASCDSL_SIM_PREBUILT_LAUNCH", "-I", str(_precompiled_header()), "-I", str(INCLUDE_DIR),
                  "-include", "kernel_operator.h", str(src), str(_launch_object())], sources)(tmp)
    lib, reused = cache.entry(cache_dir() / f"kernel-{key}.so", make)
    if reused:
        _count(None)
    return lib


def build_executable(sources: list[Path], defines: tuple[str, ...] = (), precompiled: bool = False) -> Path:
    """An executable linked from ``sources`` (e.g. a CPU-debug main.cpp plus kernels) with the
    preprocessor ``defines`` (``NAME`` or ``NAME=VALUE``), built if not cached. ``precompiled``: every
    source includes ``kernel_operator.h``, which then comes precompiled for ``defines`` (a third less g++
    time for a main.cpp and its kernel)."""
    flags = [f"-D{d}" for d in defines]
    key = cache.digest(_toolchain_hash(), source_digest(sources), "exe", repr(flags), *(("pch",) if precompiled else ()))[:32]

    def make(tmp: Path) -> None:  # the header only where an executable is built
        pch = ["-I", str(_precompiled_header(defines)), "-include", "kernel_operator.h"] if precompiled else []
        _compile([*flags, *pch, "-I", str(INCLUDE_DIR), *map(str, sources)], sources)(tmp)
    exe, reused = cache.entry(cache_dir() / f"main-{key}", make)
    if reused:
        _count(None)
    return exe
