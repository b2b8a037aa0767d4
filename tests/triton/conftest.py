"""Fixtures for the Triton-compatibility tests: ``lib`` runs a test once on ascdsl and once on
upstream Triton's interpreter (``TRITON_INTERPRET=1``), which is skipped where ``triton`` or
``torch`` is not installed. Kernels are built by ``tests.triton.compat_kernels.build(triton, tl)``, so both
runs compile the same source."""
from __future__ import annotations

import os
from types import SimpleNamespace

import numpy as np
import pytest

import ascdsl
from tests.triton import compat_kernels as kernels


def upstream_modules():
    """``(triton, triton.language, torch)`` of a real Triton in interpreter mode, or skip."""
    os.environ["TRITON_INTERPRET"] = "1"  # read when kernels are decorated
    triton = pytest.importorskip("triton")
    torch = pytest.importorskip("torch")
    if triton.__name__ != "triton" or not hasattr(triton, "__version__"):
        pytest.skip("`triton` is not upstream Triton here")
    import triton.language as tl
    return triton, tl, torch


_BUILT: dict = {}


class Lib(SimpleNamespace):
    """One implementation: its kernels, and how arrays go in (``arg``) and come out (``out``)."""

    def arg(self, array: np.ndarray):
        return self.torch.from_numpy(np.ascontiguousarray(array)) if self.torch else array

    def out(self, value) -> np.ndarray:
        return value.numpy() if self.torch else value


@pytest.fixture(params=["ascdsl", "triton"])
def lib(request) -> Lib:
    if request.param == "ascdsl":
        if "ascdsl" not in _BUILT:
            _BUILT["ascdsl"] = Lib(name="ascdsl", k=kernels.build(ascdsl, ascdsl.language), torch=None,
                                   triton=ascdsl)
        return _BUILT["ascdsl"]
    triton, tl, torch = upstream_modules()
    if "triton" not in _BUILT:
        _BUILT["triton"] = Lib(name="triton", k=kernels.build(triton, tl), torch=torch, triton=triton)
    return _BUILT["triton"]
