"""Runtime values of the interpreter's programs (compact arrays with a leading program axis, or symbolic
tiles of :mod:`ascdsl.affine`): the helpers every handler shares."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import affine, numerics
from ..affine import Affine, Conj, Loaded, lift
from ..ir.core import Instr


Array = np.ndarray


def whole(x, shape: tuple[int, ...]) -> Array:
    """A runtime value (compact or symbolic) as an array of the whole tile ``shape`` (a tile loaded
    lazily stays so: only the handlers of :data:`.runner.LAZY_USERS` get one)."""
    if type(x) is Loaded:
        return x
    x = affine.dense(x)
    return x if x.shape[1:] == shape else np.broadcast_to(x, x.shape[:1] + shape)


def select(cond: Array, a, b):
    """Per program: ``a`` where ``cond`` (shape ``(n,)``) holds, else ``b``."""
    if isinstance(a, Affine) and isinstance(b, Affine):
        out = affine.select(cond, a, b)
        if out is not None:
            return out
    a, b = affine.dense(a), affine.dense(b)
    return np.where(lift(cond, max(a.ndim, b.ndim) - 1), a, b)


def result(instr: Instr) -> np.dtype:
    return numerics.np_dtype(instr.result.type.dtype)


def align(xs: Sequence[Array]) -> list[Array]:
    """``xs`` with one program axis: values uniform over programs are broadcast to the others."""
    n = max(x.shape[0] for x in xs)
    return [x if x.shape[0] == n else np.broadcast_to(x, (n,) + x.shape[1:]) for x in xs]


def repeat(x, copies: int, interleaved: bool = False):
    """A runtime value of some programs for ``copies`` copies of them (uniform values stay as they
    are), laid out as :meth:`.state.Programs.copies` says."""
    if isinstance(x, Affine):
        return affine.repeat(x, copies, interleaved)
    if isinstance(x, Conj):
        return Conj(tuple(repeat(f, copies, interleaved) for f in x.factors))
    if x.shape[0] == 1:
        return x
    return np.tile(x, (copies,) + (1,) * (x.ndim - 1)) if interleaved else np.repeat(x, copies, axis=0)
