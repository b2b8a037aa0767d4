"""The one on-disk cache: generated sources and g++ outputs, named by what determines them.

Everything lives under ``$ASCDSL_CACHE_DIR`` or ``~/.cache/ascdsl`` (created private to the user;
a folder owned by someone else or writable by others is refused). Two kinds of entries:

* :func:`text` — a text file named by the hash of its own content (``gen-<hash>.cpp``); an existing
  file is reused only if its content still has that hash, otherwise it is rewritten;
* :func:`entry` — a file made by a function (a g++ build) under a key the caller computes from
  every input (sources, include-directory contents and path, compiler version, flags). Next to it a
  record ``<name>.sha256`` holds the SHA-256 and size of what was made; an entry whose bytes do not
  match its record (truncated, planted, copied over) is rebuilt.

Writes go to a temporary file in the same folder and are renamed into place (``os.replace``), under a
per-entry lock, so concurrent processes never see a partial file and build an entry once. Temporary
files of dead processes (an interrupted build) are removed the next time the folder is used.
"""
from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import pickle
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from .errors import Error

TMP = ".tmp-"  # temporary files: <name>.tmp-<pid>-<nonce>
_STALE_SECONDS = 24 * 3600  # a temporary file this old is stale even if its pid was reused
_verified: dict[Path, tuple[int, int, int]] = {}  # path -> (inode, size, mtime) last verified
_UNREADABLE = object()


def folder(*parts: str) -> Path:
    """``$ASCDSL_CACHE_DIR`` (or ``~/.cache/ascdsl``) / ``parts``, created private to the user."""
    root = os.environ.get("ASCDSL_CACHE_DIR")
    path = Path(root) if root else Path.home() / ".cache" / "ascdsl"
    path = path.joinpath(*parts)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    _check_private(path)
    _remove_stale(path)
    return path


def digest(*parts: str | bytes) -> str:
    """SHA-256 (hex) of ``parts``, each length-prefixed so that no two sequences collide."""
    h = hashlib.sha256()
    for p in parts:
        b = p.encode() if isinstance(p, str) else p
        h.update(len(b).to_bytes(8, "little") + b)
    return h.hexdigest()


@functools.lru_cache(maxsize=1)
def package_digest() -> str:
    """SHA-256 of this ascdsl's own Python sources: part of the key of every result it computes."""
    root = Path(__file__).parent
    files = sorted(root.rglob("*.py"))
    return digest(*(x for f in files for x in (f.relative_to(root).as_posix(), f.read_bytes())))


def stored(kind: str, key: str, compute: Callable[[], object]):
    """What ``compute()`` returns, pickled in the cache folder ``kind`` under ``key`` (a digest of every
    input, :func:`package_digest` among them): computed once per key across processes."""
    return kept(folder(kind) / f"{key[:40]}.pickle", compute)


def kept(path: Path, compute: Callable[[], object]):
    """What ``compute()`` returns, pickled as the entry ``path``: computed once across processes (the
    first value stored stays)."""
    made: list = []

    def make(tmp: Path) -> None:
        made.append(compute())
        tmp.write_bytes(pickle.dumps(made[0], protocol=pickle.HIGHEST_PROTOCOL))
    path, reused = entry(path, make)
    if not reused:
        return made[0]
    value = load(path, _UNREADABLE)
    if value is _UNREADABLE:  # an entry this ascdsl cannot read (whatever the reason) is remade
        invalidate(path)
        return kept(path, compute)
    return value


def load(path: Path, default=None):
    """The value :func:`kept` stored as ``path``, or ``default`` where there is none that matches its record
    and unpickles."""
    if not _matches_record(path):
        return default
    try:
        return pickle.loads(path.read_bytes())
    except Exception:  # noqa: BLE001 - whatever the reason, there is no readable value
        return default


def text(prefix: str, content: str, suffix: str = ".cpp", where: Path | None = None) -> Path:
    """``content`` as the file ``<prefix>-<hash of content><suffix>`` in the cache (or in ``where``)."""
    name = f"{prefix}-{hashlib.sha256(content.encode()).hexdigest()[:32]}{suffix}"
    return write_text((where or folder()) / name, content)


def intact_text(path: Path) -> bool:
    """Whether the file ``path`` that :func:`text` wrote still holds the content its name hashes."""
    try:
        st = path.stat()
        if _verified.get(path) == (st.st_ino, st.st_size, st.st_mtime_ns):
            return True
        intact = path.stem.rpartition("-")[2] == _file_digest(path)[:32]
    except OSError:
        return False
    if intact:
        _remember(path)
    return intact


def write_text(path: Path, content: str) -> Path:
    """``path`` holding exactly ``content``: kept if it does, else written atomically."""
    data = content.encode()
    with _locked(path):
        if not (path.is_file() and path.read_bytes() == data):
            _publish(path, lambda tmp: tmp.write_bytes(data))
    return path


def entry(path: Path, make: Callable[[Path], None]) -> tuple[Path, bool]:
    """The cache entry ``path`` (a file in a cache folder): reused if its bytes match its record, else
    made by ``make(tmp)`` writing the temporary file ``tmp``. Returns ``(path, reused)``."""
    with _locked(path):
        if _matches_record(path):
            return path, True
        invalidate(path)
        _publish(path, make)
        _record(path)
        return path, False


def invalidate(path: Path) -> None:
    """Forget the entry ``path`` (e.g. after it failed to load): the next :func:`entry` rebuilds it."""
    _verified.pop(path, None)
    for p in (path, _record_path(path)):
        with contextlib.suppress(FileNotFoundError):
            p.unlink()


def _record_path(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _record(path: Path) -> None:
    line = f"{_file_digest(path)} {path.stat().st_size}\n"
    _publish(_record_path(path), lambda tmp: tmp.write_text(line))
    _remember(path)


def _matches_record(path: Path) -> bool:
    try:
        st = path.stat()
        if _verified.get(path) == (st.st_ino, st.st_size, st.st_mtime_ns):
            return True
        want_hash, want_size = _record_path(path).read_text().split()
    except (OSError, ValueError):
        return False
    if int(want_size) != st.st_size or _file_digest(path) != want_hash:
        return False
    _remember(path)
    return True


def _remember(path: Path) -> None:
    st = path.stat()
    _verified[path] = (st.st_ino, st.st_size, st.st_mtime_ns)


def _publish(path: Path, make: Callable[[Path], None]) -> None:
    """``make(tmp)`` then rename ``tmp`` to ``path``; ``tmp`` is removed if ``make`` fails."""
    tmp = path.with_name(f"{path.name}{TMP}{os.getpid()}-{os.urandom(4).hex()}{path.suffix}")
    try:
        make(tmp)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Serialises work on one entry across processes (the second waits, then reuses the first's)."""
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _check_private(path: Path) -> None:
    st = path.stat()
    if st.st_uid != os.getuid() or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise Error(f"the ascdsl cache folder {path} is owned by another user or writable by others; "
                    "set ASCDSL_CACHE_DIR to a folder of your own")


@functools.cache
def _remove_stale(path: Path) -> None:
    """Remove temporary files left by processes that died mid-write (once per folder per process)."""
    now = time.time()
    for tmp in path.glob(f"*{TMP}*"):
        pid = tmp.name.rpartition(TMP)[2].split("-")[0]
        try:
            old = now - tmp.stat().st_mtime > _STALE_SECONDS
            if old or not (pid.isdigit() and _alive(int(pid))):
                tmp.unlink()
        except FileNotFoundError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
