"""g++ builds of simulator kernels, cached by content hash.

A build's key hashes the compiler version, the flags, every simulator header and the sources it
includes (followed through quoted ``#include``s). ``kernel_operator.h`` is precompiled once per header
version so a cold kernel build mostly pays for the kernel's own templates.
"""
from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .errors import SimCompileError

INCLUDE_DIR = Path(__file__).parent / "include"
CXX = os.environ.get("CXX", "g++")
FLAGS = ("-std=c++17", "-O1", "-fPIC", "-fno-gnu-unique", "-pthread")
_DIAGNOSTIC = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?:\d+:)? (?:fatal )?error: (?P<msg>.*)$", re.MULTILINE)
_QUOTED_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)


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


def _count(seconds: float | None) -> None:
    global _stats
    if seconds is None:
        _stats = BuildStats(_stats.builds, _stats.seconds, _stats.cache_hits + 1)
    else:
        _stats = BuildStats(_stats.builds + 1, _stats.seconds + seconds, _stats.cache_hits)


def cache_dir() -> Path:
    """``$ASCDSL_CACHE_DIR`` or ``~/.cache/ascdsl/sim``."""
    root = os.environ.get("ASCDSL_CACHE_DIR")
    path = Path(root) if root else Path.home() / ".cache" / "ascdsl" / "sim"
    path.mkdir(parents=True, exist_ok=True)
    return path


@functools.cache
def _toolchain_hash() -> str:
    version = subprocess.run([CXX, "--version"], capture_output=True, text=True, check=True).stdout
    h = hashlib.sha256(version.encode() + repr(FLAGS).encode())
    for path in sorted(INCLUDE_DIR.rglob("*.h")):
        h.update(str(path.relative_to(INCLUDE_DIR)).encode() + path.read_bytes())
    return h.hexdigest()[:20]


def source_digest(paths: list[Path]) -> str:
    """Hash of the given sources and every local file they include with quotes."""
    h = hashlib.sha256()
    seen: set[Path] = set()
    todo = [p.resolve() for p in paths]
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        text = path.read_text(errors="replace")
        h.update(str(path).encode() + b"\0" + text.encode())
        todo += [(path.parent / inc).resolve() for inc in _QUOTED_INCLUDE.findall(text)]
    return h.hexdigest()


@contextlib.contextmanager
def _exclusive(target: Path) -> Iterator[None]:
    """Serialises builds of one target across processes (xdist workers wait instead of building twice)."""
    with open(target.with_name(target.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _write_atomic(path: Path, text: str) -> None:
    """Writes ``text`` so that a concurrent reader (another xdist worker's g++) never sees a partial file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _compile(args: list[str], output: Path) -> None:
    """Runs g++ writing to a temporary next to ``output`` and renames it into place (safe under xdist)."""
    fd, tmp = tempfile.mkstemp(dir=output.parent, prefix=output.name + ".", suffix=output.suffix)
    os.close(fd)
    start = time.perf_counter()
    proc = subprocess.run([CXX, *FLAGS, *args, "-o", tmp], capture_output=True, text=True, check=False)
    _count(time.perf_counter() - start)
    if proc.returncode != 0:
        os.unlink(tmp)
        raise _compile_error(proc.stderr)
    os.replace(tmp, output)


def _compile_error(stderr: str) -> SimCompileError:
    m = _DIAGNOSTIC.search(stderr)
    if m is None:
        return SimCompileError(f"g++ failed: {stderr.strip()[:2000]}", None, None, stderr)
    return SimCompileError(m.group(0), m.group("file"), int(m.group("line")), stderr)


def _precompiled_header() -> Path:
    """Directory holding ``kernel_operator.h.gch`` for the current headers and flags, next to a stub
    ``kernel_operator.h`` that the kernel's own ``#include`` finds (and the include guard empties)."""
    pch_dir = cache_dir() / f"pch-{_toolchain_hash()}"
    gch = pch_dir / "kernel_operator.h.gch"
    pch_dir.mkdir(parents=True, exist_ok=True)
    with _exclusive(gch):
        if not gch.exists():
            stub = pch_dir / "kernel_operator.h"
            _write_atomic(stub, f'#include "{INCLUDE_DIR / "kernel_operator.h"}"\n')
            _compile(["-x", "c++-header", str(stub)], gch)
    return pch_dir


def build_library(wrapper: str, sources: list[Path]) -> Path:
    """The shared library for ``wrapper`` (C++ text that includes ``sources``), built if not cached."""
    key = hashlib.sha256((_toolchain_hash() + source_digest(sources) + wrapper).encode()).hexdigest()[:24]
    lib = cache_dir() / f"kernel-{key}.so"
    pch_dir = _precompiled_header()
    with _exclusive(lib):
        if lib.exists():
            _count(None)
            return lib
        src = cache_dir() / f"kernel-{key}.cpp"
        _write_atomic(src, wrapper)
        _compile(["-shared", "-I", str(pch_dir), "-I", str(INCLUDE_DIR), "-include", "kernel_operator.h", str(src)], lib)
    return lib


def build_executable(sources: list[Path], defines: tuple[str, ...] = ()) -> Path:
    """An executable linked from ``sources`` (e.g. a CPU-debug main.cpp plus kernels) with the
    preprocessor ``defines`` (``NAME`` or ``NAME=VALUE``), built if not cached."""
    flags = [f"-D{d}" for d in defines]
    key = hashlib.sha256((_toolchain_hash() + source_digest(sources) + "exe" + repr(flags)).encode()).hexdigest()[:24]
    exe = cache_dir() / f"main-{key}"
    with _exclusive(exe):
        if exe.exists():
            _count(None)
            return exe
        _compile([*flags, "-I", str(INCLUDE_DIR), *map(str, sources)], exe)
    return exe
