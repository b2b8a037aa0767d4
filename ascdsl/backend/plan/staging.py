"""Staging: each segment becomes its ``CopyIn``/``Compute``/``CopyOut`` methods, called from ``Process``.

A stage takes, as ``const`` parameters, the ``Process`` variables it reads (``pid``, loop
variables, scalars defined once per program or iteration), in the order ``Process`` defines them;
a compute stage declares the local tensors of the ``TBuf`` slots it uses at its top (queue buffers
are declared by their ``AllocTensor``/``DeQue``; a load the program holds is a member of the class). Empty
stages are dropped. A runtime ``if`` of the DSL stays in ``Process`` with the stage calls of its branches'
segments inside it (selection cuts segments at every runtime ``if``), so its condition is evaluated on the
scalar unit once, and no stage holds a queue buffer across the branch.
"""
from __future__ import annotations

import dataclasses

from .. import kir
from ..kir import Local, Role, Run, Segment, Stage, StageKind, VarKind


def _defined(body) -> set:
    out = set()
    for s in kir.walk(body):
        if isinstance(s, kir.Let):
            out.add(s.var)
        elif isinstance(s, kir.For):
            out.add(s.var)
    return out


def _locals(body, plan) -> list[Local]:
    seen: dict = {}
    for s in kir.walk(body):
        refs = list(s.refs) if isinstance(s, kir.Call) else []
        refs += [x.ref for e in kir.exprs(s) for x in kir.sub_exprs(e) if isinstance(x, kir.Elem)]
        for r in refs:
            if r.buf.role in (Role.TILE, Role.SCRATCH) and plan.root(r.buf) == r.buf:
                seen.setdefault((r.buf, r.dtype))
    return [Local(b, d) for b, d in seen]


def _queue_views(body, plan, held: tuple) -> tuple:
    """``body`` with a :class:`Local` after each AllocTensor/DeQue that declares a queue buffer's local (or
    DeQues a load the program holds into its member, ``held``), for the other element types it is viewed in
    (``ReinterpretCast`` s of the local; a DeQue into the local already declared returns the same UB, which the
    views still name); a held load's views in a later stage at the stage's top."""
    seen: dict = {}
    for s in kir.walk(body):
        for r in s.refs if isinstance(s, kir.Call) else ():
            root = plan.root(r.buf)
            if root.role in (Role.INPUT, Role.OUTPUT) and r.dtype != root.dtype:
                seen.setdefault((root, r.dtype))
    if not seen:
        return tuple(body)
    dequed = {s.buf for s in body if isinstance(s, kir.Queue) and s.op is kir.QOp.DEQUE}
    out = [Local(b, d) for b, d in seen if b in held and b not in dequed]
    for s in body:
        out.append(s)
        if isinstance(s, kir.Queue) and s.op in (kir.QOp.ALLOC, kir.QOp.DEQUE) and (s.declare or s.buf in held):
            out += [Local(b, d) for b, d in seen if b == s.buf]
    return tuple(out)


def stage(k: kir.Kernel, platform=None) -> kir.Kernel:
    """The staging pass (see the module docstring)."""
    order: dict = {}
    for s in kir.walk(k.process):
        if isinstance(s, (kir.Let, kir.For)):
            order.setdefault(s.var, len(order))
    stages: list[Stage] = []

    def runs(s) -> tuple:
        if not isinstance(s, Segment):
            return (s,)
        out = []
        for kind, part in ((StageKind.COPY_IN, s.copy_in), (StageKind.COMPUTE, s.compute),
                           (StageKind.COPY_OUT, s.copy_out)):
            if not any(isinstance(x, (kir.Call, kir.Set)) for x in kir.walk(part)):
                continue
            inner = _defined(part)
            params = [v for v in kir.vars_read(part) if v not in inner and v.kind is not VarKind.MEMBER]
            params.sort(key=lambda v: (v.kind is not VarKind.PID, order.get(v, 0)))
            st = Stage(kind, s.index, tuple(params), tuple(_locals(part, k.plan)) + _queue_views(part, k.plan, k.held))
            stages.append(st)
            out.append(Run(st))
        return tuple(out)
    process = kir.rewrite(k.process, runs)
    return dataclasses.replace(k, process=process, stages=tuple(stages))
