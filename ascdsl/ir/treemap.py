"""The one tree map of every IR (tile IR, kernel IR, plans): a pass that replaces some nodes of a tree
of frozen dataclasses, tuples and dicts gives its rules here and gets the tree back rebuilt only
along the paths to what changed (unchanged subtrees are the same objects, and a subtree shared by
several parents is mapped once)."""
from __future__ import annotations

import dataclasses
import enum
from typing import Callable

from .. import dtypes

_FIELDS: dict[tuple[type, bool], tuple[str, ...] | None] = {}


def fields(cls: type, every: bool = False) -> tuple[str, ...] | None:
    """The fields of an IR node class that take part in equality (``every``: all its init fields,
    source locations too); None when ``cls`` is not a node class (a leaf: numbers, strings, enums,
    element types)."""
    key = (cls, every)
    if key not in _FIELDS:
        node = dataclasses.is_dataclass(cls) and not issubclass(cls, (dtypes.DType, enum.Enum))
        _FIELDS[key] = (tuple(f.name for f in dataclasses.fields(cls) if f.init and (every or f.compare))
                        if node else None)
    return _FIELDS[key]


Rule = Callable[[object], object]


def tree_map(node, before: Rule | None = None, after: Rule | None = None, every: bool = False):
    """``node`` rewritten by two rules, each returning a replacement node or None (no change).
    ``before(x)`` runs first: its replacement stands for ``x`` unwalked; otherwise ``x``'s children are
    mapped (the fields :func:`fields` names, with ``every``), ``x`` is rebuilt where one changed, and
    ``after`` of the result may replace it."""
    memo: dict[int, tuple] = {}

    def visit(x):
        got = memo.get(id(x))
        if got is not None:
            return got[1]
        out = None if before is None else before(x)
        if out is None:
            out = _rebuilt(x, visit, every)
            if after is not None:
                out = _or(after(out), out)
        memo[id(x)] = (x, out)  # keeps x alive, so its id is not reused
        return out

    return visit(node)


def _or(a, b):
    return b if a is None else a


def _rebuilt(x, visit, every: bool):
    if isinstance(x, tuple):
        out = tuple(visit(v) for v in x)
        return x if all(a is b for a, b in zip(out, x)) else out
    if isinstance(x, dict):
        out = {k: visit(v) for k, v in x.items()}
        return x if all(out[k] is v for k, v in x.items()) else out
    names = fields(type(x), every)
    if not names:
        return x
    changes = {}
    for f in names:
        v = getattr(x, f)
        new = visit(v)
        if new is not v:
            changes[f] = new
    return dataclasses.replace(x, **changes) if changes else x


__all__ = ["fields", "tree_map"]
