"""The optional real CANN 8.1 headers (``ASCEND_HOME_PATH``) and what CANN's builds generate around them.

Tests that use them skip cleanly when ``ASCEND_HOME_PATH`` does not point at a toolkit; nothing from
the toolkit is copied into the repository.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.sim.test_cann_headers import KERNELS, cann_flags


def toolkit() -> Path | None:
    """The CANN toolkit folder (holding ``<arch>-linux/include``), or None."""
    home = os.environ.get("ASCEND_HOME_PATH")
    if not home or not sorted(Path(home).glob("*-linux/include/acl")):
        return None
    return Path(home)


def host_flags() -> list[str] | None:
    """g++ flags type-checking host code (ACL, op_host, tiling APIs) against the toolkit, or None."""
    root = toolkit()
    if root is None:
        return None
    arch = sorted(root.glob("*-linux"))[0]
    return ["-std=c++17", "-fsyntax-only", "-Wall", f"-I{arch / 'include'}",
            f"-I{arch / 'ascendc/include/highlevel_api'}"]


needs_host_headers = pytest.mark.skipif(host_flags() is None, reason="ASCEND_HOME_PATH does not point at a CANN toolkit")
needs_kernel_headers = pytest.mark.skipif(cann_flags() is None, reason="ASCEND_HOME_PATH does not point at a CANN toolkit")


def launch_header(symbol: str, params: Sequence[str]) -> str:
    """``aclrtlaunch_<symbol>.h`` as ``ascendc_library`` generates it for a kernel whose GM_ADDR
    parameters are ``params``: the ``ACLRT_LAUNCH_KERNEL`` macro and one ``void*`` per parameter."""
    guard = f"HEADER_ACLRTLAUNCH_{symbol.upper()}_H"
    args = ", ".join(f"void* {p}" for p in params)
    return (f"#ifndef {guard}\n#define {guard}\n#include \"acl/acl_base.h\"\n\n"
            "#ifndef ACLRT_LAUNCH_KERNEL\n#define ACLRT_LAUNCH_KERNEL(kernel_func) aclrtlaunch_##kernel_func\n#endif\n\n"
            f"extern \"C\" uint32_t aclrtlaunch_{symbol}(uint32_t blockDim, aclrtStream stream, {args});\n#endif\n")


def type_check(flags: list[str], source: Path, *includes: Path) -> None:
    """g++, and clang++ where installed, with ``flags`` on ``source`` (``includes`` on the include path);
    fails the test with the compiler's errors. The toolkit's folders are system headers (``-isystem``):
    only diagnostics in our code count."""
    flags = [f"-isystem{f[2:]}" if f.startswith("-I") and not f.startswith(f"-I{KERNELS}") else f for f in flags]
    for cxx in ("g++", "clang++") if shutil.which("clang++") else ("g++",):
        proc = subprocess.run([cxx, *flags, *(f"-I{i}" for i in includes), str(source)],
                              capture_output=True, text=True, check=False)
        assert proc.returncode == 0, f"{cxx}: {proc.stderr[:4000]}"
