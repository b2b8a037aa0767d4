"""Merging IR trees side by side: the one walk behind the lift's differential compile (:mod:`.lift`:
the kernel IR of N samples, a hole where integer leaves differ) and a template's float32 join
(:mod:`.templated`: the 16-bit kernel IR and the float32 form, ``T`` and ``if constexpr`` where they
differ).

:class:`TreeMerge` walks trees of frozen dataclasses and tuples in step: where all nodes are equal it
returns the first; where they differ, :meth:`~TreeMerge.differ` decides (a subclass's rules for its
leaves), by default merging tuples item by item and dataclasses field by field (the fields that take
part in equality, each through :meth:`~TreeMerge.field`). Shared subtrees are merged once (memoised by
identity); a subtree that merges to its first node is returned as is, so unchanged parts stay shared.
"""
from __future__ import annotations

import dataclasses

from ...ir.treemap import fields


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
