"""Copies of one row that follow each other in GM and in UB, made as one ``DataCopyPad``.

Layer norm's loops unrolled (:func:`ascdsl.passes.reuse.unrolled_loops`) load a row of ``X`` in chunks of the
loops' block, packed one after another in a queue buffer (:mod:`.queues`), and store ``Y`` from them alike: at one
row a trip, eight copies of 4 KiB a row each way where one of 32 KiB moves the same bytes (the MTE's cost is a
set-up a copy and a cost a burst, :mod:`ascdsl.sim.cost`). Two consecutive ``DataCopyPad`` s of a stage (only
their parameters' ``Let`` s between them) merge where they move one burst at most (their burst count the same
expression, at most 1: the rows of a batched program of one row, ``min(rows left, 1)``), with no gaps, through
one GM tensor and one UB buffer, the second starting in both where the first ends (GM offsets compared through
the kernel's ``const`` definitions), and the first a whole number of 32-byte blocks long, unpadded: the merged
copy moves the first's bytes and then the second's, its padding the second's.
"""
from __future__ import annotations

import dataclasses
from collections import Counter

from .. import kir
from ..kir import BinOp, Brace, Call, Conv, Gm, Let, Lit, Ref, SizeOf


def _defs(k: kir.Kernel) -> dict:
    """The expression of each ``const`` variable of ``k`` (a ``Let`` not updated after)."""
    return {s.var.key: s.expr for s in kir.walk(k.process) if isinstance(s, Let) and not s.mutable}


def _linear(e, defs: dict) -> tuple[Counter, int]:
    """``e`` as terms (opaque expressions, with their coefficients) plus a constant."""
    if isinstance(e, Lit) and isinstance(e.value, int):
        return Counter(), e.value
    if isinstance(e, Conv):
        return _linear(e.x, defs)
    if isinstance(e, kir.Var) and e.key in defs:
        return _linear(defs[e.key], defs)
    if isinstance(e, kir.Bin) and e.op in (BinOp.ADD, BinOp.SUB):
        (ta, ca), (tb, cb) = _linear(e.a, defs), _linear(e.b, defs)
        if e.op is BinOp.SUB:
            ta.subtract(tb)
            return ta, ca - cb
        ta.update(tb)
        return ta, ca + cb
    return Counter({e: 1}), 0


def _distance(a, b, defs: dict) -> int | None:
    """``b - a`` where it is a constant."""
    (ta, ca), (tb, cb) = _linear(a, defs), _linear(b, defs)
    tb.subtract(ta)
    return cb - ca if not any(tb.values()) else None


def _most(e, defs: dict) -> int | None:
    """An upper bound of an integer expression where one shows: a literal, or a minimum ``x < y ? x : y``."""
    if isinstance(e, Lit) and isinstance(e.value, int):
        return e.value
    if isinstance(e, Conv):
        return _most(e.x, defs)
    if isinstance(e, kir.Var) and e.key in defs:
        return _most(defs[e.key], defs)
    if (isinstance(e, kir.Cond) and isinstance(e.c, kir.Bin) and e.c.op in (BinOp.LT, BinOp.LE)
            and (e.c.a, e.c.b) == (e.a, e.b)):
        bounds = [m for m in (_most(e.a, defs), _most(e.b, defs)) if m is not None]
        return min(bounds) if bounds else None
    return None


def _zero(e) -> bool:
    return e is not None and kir.is_lit(e.x if isinstance(e, Conv) else e, 0)


def _ends(call: Call) -> tuple[Ref, Gm]:
    return (call.dst, call.srcs[0]) if isinstance(call.dst, Ref) else (call.srcs[0], call.dst)


def _columns(items: tuple) -> kir.Expr | None:
    """The elements a burst of these copy parameters moves: ``blockLen`` is ``cols * sizeof(T)``."""
    length = items[1].x if isinstance(items[1], Conv) else items[1]
    if isinstance(length, kir.Bin) and length.op is BinOp.MUL and isinstance(length.b, SizeOf):
        return length.a
    return None


def _merged(a: Call, b: Call, lets: dict, defs: dict, block_bytes: int) -> tuple[Call, Let] | None:
    """The copy of ``a``'s bytes then ``b``'s and its parameters' ``Let`` (``b``'s variable), or None."""
    if not (a.api == b.api == "DataCopyPad" and a.pipe is b.pipe and len(a.args) == len(b.args)):
        return None
    (ra, ga), (rb, gb) = _ends(a), _ends(b)
    pa, pb = lets.get(a.args[0]), lets.get(b.args[0])
    if pa is None or pb is None or not (isinstance(pa.expr, Brace) and isinstance(pb.expr, Brace)):
        return None
    ia, ib = pa.expr.items, pb.expr.items
    cols = _columns(ia)
    if not (ra.buf == rb.buf and ra.dtype == rb.dtype and ga.param == gb.param and ga.dtype == gb.dtype
            and isinstance(cols, Lit) and cols.value * ra.dtype.itemsize % block_bytes == 0
            and ia[0] == ib[0] and _most(ia[0], defs) in (0, 1) and all(map(_zero, (*ia[2:], *ib[2:])))
            and isinstance(ra.offset, Lit) and isinstance(rb.offset, Lit)
            and rb.offset.value - ra.offset.value == cols.value == _distance(ga.offset, gb.offset, defs)):
        return None
    if len(a.args) == 2 and not _zero(_pad_of(lets.get(a.args[1]))):  # the first's burst padded
        return None
    colsb = _columns(ib)
    if colsb is None:
        return None
    both = kir.lit(cols.value + colsb.value) if isinstance(colsb, Lit) else kir.add(cols, colsb)
    params = Let(pb.var, Brace((ib[0], Conv(kir.CInt.UINT32, kir.mul(both, SizeOf(ra.dtype))), *ib[2:])), pb.loc)
    ref = Ref(ra.buf, ra.dtype, ra.offset, rb.extent)
    ends = (ref, (ga,)) if isinstance(a.dst, Ref) else (ga, (ref,))
    return dataclasses.replace(a, dst=ends[0], srcs=ends[1], args=b.args), params


def _pad_of(let: Let | None):
    """The right padding of a ``DataCopyPadExtParams`` (``{isPad, left, right, value}``)."""
    return let.expr.items[2] if let is not None and isinstance(let.expr, Brace) else None


def _body(body, defs: dict, block_bytes: int) -> tuple:
    out: list = []
    lets: dict = {}  # the Let of each variable defined in this body so far, by its variable
    for s in body:
        if isinstance(s, (kir.For, kir.If, kir.While)):
            s = dataclasses.replace(s, **{f: _body(getattr(s, f), defs, block_bytes) for f in ("body", "orelse")
                                          if hasattr(s, f)})
        if isinstance(s, Let):
            lets[s.var] = s
        if isinstance(s, Call) and s.api == "DataCopyPad":
            last = next((i for i in range(len(out) - 1, -1, -1) if not isinstance(out[i], Let)), None)
            merged = None if last is None or not isinstance(out[last], Call) else _merged(
                out[last], s, lets, defs, block_bytes)
            if merged is not None:
                call, params = merged
                dead = {v for v in out[last].args if isinstance(v, kir.Var)}
                out = [x for x in out[:last] if not (isinstance(x, Let) and x.var in dead)] + [
                    params if isinstance(x, Let) and x.var == params.var else x for x in out[last + 1:]]
                lets[params.var] = params
                s = call
        out.append(s)
    return tuple(out)


def coalesce(k: kir.Kernel, platform) -> kir.Kernel:
    """The merging pass (see the module docstring), on the segments before staging (a stage then takes the
    offsets its copies still read, no more)."""
    defs = _defs(k)

    def segment(s) -> tuple:
        if not isinstance(s, kir.Segment):
            return (s,)
        return (dataclasses.replace(s, copy_in=_body(s.copy_in, defs, platform.block_bytes),
                                    copy_out=_body(s.copy_out, defs, platform.block_bytes)),)
    return dataclasses.replace(k, process=kir.rewrite(k.process, segment))


__all__ = ["coalesce"]
