"""The kernel compiled for symbols, the lift's one source (issue 25, step 6 of docs/design.md's "Symbolic tile
extents"): :mod:`.lift` compiles a kernel for its constexprs as :class:`~ascdsl.ir.symbol.Symbol` s; where that
decides every choice on a domain, the kernel at each value of it is that kernel at the value, and its polynomials
are the lifted kernel's leaves. Where it does not decide, the constexpr is not lifted: no samples answer.

* :func:`decides`: one constexpr's quantum and low (:func:`.lift._single`);
* :func:`named` and :func:`lifted`: the joint fit (:func:`.lift._joint`): the kernel compiled for all the
  symbols, its polynomials written over the names (monomials ``1, X, Y, XY``), then as the lifted kernel's leaves.
"""
from __future__ import annotations

import dataclasses
import enum
import itertools

from ... import dtypes
from ...errors import CompilationError, Loc
from ...ir.symbol import Ceil, Poly, Symbol, Undecided, var_name
from ...ir.treemap import tree_map
from .. import kir
from ..kir import Lit
from ..names.naming import to_expr
from ..plan.ubplan import Plan


def decides(s, name: str, quantum: int, low: int) -> kir.Kernel | None:
    """The kernel (:func:`named`) by which ``name`` lifts with ``quantum`` from ``low`` (``s``: the lift's
    :class:`.lift._Sampler`): the kernel compiled for ``Symbol(name, quantum, low, 101 * quantum)`` through the
    backend's passes decides every choice on that domain, so the kernel IR at each value is the symbolic one at
    it, each of its polynomials degree 1 in ``name`` and an integer on the domain. None where the domain does not
    decide (:class:`Undecided`, :class:`Differs`, a CompilationError): ``name`` is not lifted on ``quantum``."""
    try:
        return named(s.symbolic((Symbol(name, quantum, low, 101 * quantum),)), {name: quantum})
    except (Undecided, CompilationError):
        return None


_NO_VARS = (int, float, str, enum.Enum, type(None), Loc, dtypes.DType, Lit, kir.Field, kir.SizeOf, kir.ElemsPer,
            kir.IsSame, kir.Text, kir.Buf, kir.Queue, kir.Local, kir.Bind, kir.Barrier, kir.Flag, kir.Note,
            kir.GmParam, Plan)
"""What holds no variable (a buffer's queue identity is strings and ints): :func:`relabel` returns it
as it is without walking it (the walk of every sample's leaves was a seventh of a lift)."""


def relabel(k: kir.Kernel) -> kir.Kernel:
    """``k`` with its variables numbered in first-use order (value ids differ between samples when the
    frontend shares equal constants)."""
    keys: dict[int, int] = {}

    def number(node):
        if isinstance(node, _NO_VARS):
            return node
        if isinstance(node, kir.Var) and node.kind is not kir.VarKind.PID:
            return dataclasses.replace(node, key=keys.setdefault(node.key, len(keys)))
        return None
    return tree_map(k, number)


def polys(node) -> list[Poly]:
    """The polynomials in ``node``."""
    out: list = []

    def seen(x):
        if isinstance(x, Poly):
            out.append(x)
            return x
        return None
    tree_map(node, seen)
    return out


def named(k: kir.Kernel, quanta: dict) -> kir.Kernel:
    """``k``, compiled for symbols named as ``quanta``'s keys, with each polynomial as :func:`.poly.fit` writes
    the one it fits through samples (over the names; monomials of distinct names in their order, listed as
    the fit lists them) and each constant one its integer. :class:`Undecided` where one is no polynomial the
    samples fit (a symbol twice in a term, a variable that is no symbol, not an integer on multiples of the
    quanta)."""
    names = tuple(quanta)
    monos = {m: i for i, m in enumerate(m for r in range(len(names) + 1) for m in itertools.combinations(names, r))}

    def fitted(p):
        if not isinstance(p, Poly):
            return None
        terms = {}
        for mono, coef in p:
            key = tuple(sorted(map(var_name, mono), key=lambda v: names.index(v) if v in names else -1))
            if key not in monos:
                raise Undecided(f"{p} is no polynomial the samples fit")
            terms[key] = coef
        out = Poly(tuple(sorted(terms.items(), key=lambda mc: monos[mc[0]])))
        if not out.integral(quanta):
            raise Undecided(f"{out} is not an integer on multiples of the quanta")
        return out if any(m for m, _ in out) else int(out.at({}))
    return tree_map(k, fitted)


def evaluated(k: kir.Kernel, values: dict) -> kir.Kernel:
    """``k`` (:func:`named`) at ``values`` (by name): what the kernel compiled for them gives (as the lift's
    :class:`.lift._Sampler` keeps it: no names, no constexprs; no footprint)."""
    out = tree_map(k, lambda x: int(x.at(values)) if isinstance(x, (Poly, Ceil)) else None)  # a Ceil: a slot's bytes
    return dataclasses.replace(out, plan=dataclasses.replace(out.plan, footprint=()))


def lifted(k: kir.Kernel, quanta: dict, top: dict, budget: int) -> kir.Kernel:
    """``k`` (:func:`named`) with the leaves the lift fills: each literal polynomial its expression over tiling
    fields (:func:`.naming.to_expr`), each view's extent its value at ``top`` (at least 1, at most
    ``budget``); the plan as it is. :class:`Undecided` for a polynomial elsewhere (the samples would differ
    there: no kernel of the lift)."""
    def literal(x):
        if isinstance(x, Lit) and isinstance(x.value, Poly):
            if not x.dtype.is_int:
                raise Undecided(f"a literal {x.value} of {x.dtype}")
            return to_expr(x.value, quanta, x.dtype)
        return x if isinstance(x, Plan) else None

    def extent(x):
        if isinstance(x, kir.Ref) and isinstance(x.extent, Poly):
            return dataclasses.replace(x, extent=max(1, min(budget, int(x.extent.at(top)))))
        return None
    out = tree_map(k, literal, extent)
    if polys(dataclasses.replace(out, plan=None)):
        raise Undecided("a polynomial outside the literals, extents and slots")
    return out


__all__ = ["decides", "evaluated", "lifted", "named", "polys", "relabel"]
