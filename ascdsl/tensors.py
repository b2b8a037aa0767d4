"""Arrays at an op's entry boundary: NumPy arrays and PyTorch tensors in, the same kind out.

Inside, ascdsl works on C-contiguous NumPy arrays (bfloat16 as ``ml_dtypes.bfloat16``). A torch
tensor is copied to the CPU and made contiguous when it is not already (otherwise its memory is
shared); ``torch.bfloat16`` crosses as its bits (NumPy has no bfloat16 of its own). torch is never
imported here: a tensor's type says whether it is one.
"""
from __future__ import annotations

import sys

import ml_dtypes
import numpy as np


def is_torch(value) -> bool:
    return type(value).__module__.split(".")[0] == "torch" and hasattr(value, "numpy")


def to_numpy(value):
    """``value`` as a C-contiguous NumPy array if it is an array or tensor; anything else unchanged."""
    if isinstance(value, np.ndarray):
        return np.asarray(value, order="C")  # (ascontiguousarray would make a 0-d array 1-d)
    if not is_torch(value):
        return value
    torch = sys.modules["torch"]
    tensor = value.detach().cpu().contiguous()
    if tensor.dtype == torch.bfloat16:
        return tensor.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return tensor.numpy()


def to_torch(value, like):
    """``value`` (an array, or a tuple/list of them) as torch tensors on ``like``'s device."""
    if isinstance(value, (tuple, list)):
        return type(value)(to_torch(v, like) for v in value)
    if not isinstance(value, np.ndarray):
        return value
    torch = sys.modules["torch"]
    if value.dtype == ml_dtypes.bfloat16:
        tensor = torch.from_numpy(np.asarray(value, order="C").view(np.int16)).view(torch.bfloat16)
    else:
        tensor = torch.from_numpy(np.asarray(value, order="C"))
    return tensor.to(like.device)
