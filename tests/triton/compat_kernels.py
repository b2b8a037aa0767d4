"""``build(triton, tl)``: the kernels of ``compat_source.py`` compiled against one ``triton`` module."""
from __future__ import annotations

import importlib
from pathlib import Path
from types import SimpleNamespace

SOURCE = Path(__file__).with_name("compat_source.py")


def build(triton, tl) -> SimpleNamespace:
    """Execute ``compat_source.py`` with ``triton``/``tl``/``libdevice`` as its globals; its kernels."""
    namespace = {"__name__": f"compat_source_{triton.__name__}", "__file__": str(SOURCE), "triton": triton,
                 "tl": tl, "libdevice": importlib.import_module(tl.__name__ + ".extra.libdevice")}
    exec(compile(SOURCE.read_text(), str(SOURCE), "exec"), namespace)
    return SimpleNamespace(**{k: v for k, v in namespace.items() if k.endswith("_kernel")})
