"""The one tree map of every IR (tile IR, kernel IR, plans): a pass that replaces some nodes of a tree
of frozen dataclasses, tuples and dicts gives its rules here and gets the tree back rebuilt only
along the paths to what changed (unchanged subtrees are the same objects, and a subtree shared by
several parents is mapped once).

:class:`TreeMerge` walks several trees of one shape side by side: the one walk behind the lift's
differential compile (:mod:`ascdsl.backend.lift.lift`: the kernel IR of N samples, a hole where integer
leaves differ) and a template's float32 join (:mod:`ascdsl.backend.render.templated`: the 16-bit kernel IR
and the float32 form, ``T`` and ``if constexpr`` where they differ). Where all nodes are equal it returns
the first; where they differ, :meth:`~TreeMerge.differ` decides (a subclass's rules for its leaves), by
default merging tuples item by item and dataclasses field by field (the fields that take part in
equality, each through :meth:`~TreeMerge.field`). Shared subtrees are merged once (memoised by
identity); a subtree that merges to its first node is returned as is, so unchanged parts stay shared."""
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


class TreeMerge:
    """Merges tuples of nodes of one shape (see the module); ``refused``: the exception a difference no
    rule merges raises."""

    refused: type[Exception] = ValueError

    def __init__(self):
        self.memo: dict = {}

    def __call__(self, nodes: tuple, where: str = ""):
        key = tuple(map(id, nodes))
        if key not in self.memo:
            self.memo[key] = (nodes, self.merge(nodes, where))  # keeps the nodes alive: ids are not reused
        return self.memo[key][1]

    def merge(self, nodes: tuple, where: str):
        first = nodes[0]
        if all(n is first for n in nodes[1:]) or all(n == first for n in nodes[1:]):
            return first
        kinds = {type(n) for n in nodes}
        if len(kinds) != 1:
            raise self.refused(f"{where}: {kinds}")
        return self.differ(nodes, where)

    def differ(self, nodes: tuple, where: str):
        """``nodes``: of one type, not all equal."""
        first = nodes[0]
        if isinstance(first, tuple):
            if len({len(n) for n in nodes}) != 1:
                raise self.refused(f"{where}: lengths differ")
            out = tuple(self(tuple(n[i] for n in nodes), f"{where}[{i}]") for i in range(len(first)))
            return first if all(a is b for a, b in zip(out, first)) else out
        names = fields(type(first))
        if not names:
            raise self.refused(f"{where}: {nodes[:2]}")
        changes = {}
        for f in names:
            values = tuple(getattr(n, f) for n in nodes)
            merged = self.field(nodes, f, values, where)
            if merged is not values[0]:
                changes[f] = merged
        return dataclasses.replace(first, **changes) if changes else first

    def field(self, nodes: tuple, name: str, values: tuple, where: str):
        """The merge of field ``name`` (its ``values``) of ``nodes``."""
        return self(values, f"{where}.{type(nodes[0]).__name__}.{name}")


__all__ = ["TreeMerge", "fields", "tree_map"]
