"""UB-planner queries in host code, answered from tables computed at build time.

``ascdsl.planner.largest_block(kernel, "BLOCK", candidates, x, ..., platform=platform, **constexprs)``
lowers to a constant table of :func:`ascdsl.planner.footprint` rows, ``{num, den, base}`` (UB bytes
``num / den * BLOCK + base``), one per dtype combination of the op's inputs and per value of every
bool constexpr the call passes at run time, and to a run-time pick of the row and of the largest
candidate whose footprint fits ``platform.ubBudget`` (``ascdsl_host::LargestBlock``): the answer
Python's planner gives on every platform. Each row's fit is checked on every candidate, so the
table is exact where it is used. Constexprs known only at run time that are not bools, and tensor
arguments that are not inputs of the op, are located errors.
"""
from __future__ import annotations

import ast
import inspect
import itertools

from ... import dtypes, planner
from ...errors import Error
from ...op import Operator
from ...platforms import DEFAULT_PLATFORM, get_platform
from .hostcode import (BOOL, DTYPE, INT, KERNEL, PLATFORM, SHAPE, STR, TENSOR, E, camel, cpp_name, dtype_value,
                       literal)
from ..kir import Bin, BinOp, Brace, Conv, Note
from ..kir.host import (Assign, Branch, Declare, HostType, Ident, Index, Init, Invoke, Lambda, Logic, Member, Neg,
                        Runtime, Status, Storage, Table, Throw, Value)
from ..lift.poly import BLOCK, describe_slots


class PlannerTables:
    def __init__(self, op: Operator, lowering):
        self.op, self.lowering = op, lowering

    def largest_block(self, node: ast.Call) -> E:
        low = self.lowering
        try:
            call = inspect.signature(planner.largest_block).bind(
                *node.args, **{k.arg: k.value for k in node.keywords})
        except TypeError as e:
            raise low.error(node, f"ascdsl.planner.largest_block: {e}") from None
        kernel, name, candidates = (low.expr(call.arguments[k]) for k in ("jit_fn", "name", "candidates"))
        platform = low.expr(call.arguments["platform"]) if "platform" in call.arguments else None
        if kernel.type != KERNEL or not kernel.is_const or name.type != STR or not name.is_const:
            raise low.error(node, "largest_block takes an @ascdsl.jit kernel named at module level and a "
                            "constexpr name given as a string")
        if candidates.type != SHAPE or not candidates.is_const or not candidates.const:
            raise low.error(node, "the candidates of largest_block are a tuple of int constants")
        if platform is None or platform.type != PLATFORM:
            raise low.error(node, "pass platform=platform (the host function's platform) to largest_block")
        rows = self.rows(kernel.const, call.arguments.get("args", ()), call.arguments.get("constexprs", {}))
        table = low.temp(f"ub{camel(kernel.const.parsed.name)}{camel(name.const.lower())}")
        entries = []
        for i, (cond, label, (jit_fn, args, consts)) in enumerate(rows):
            try:
                a, b = planner.footprint(jit_fn, name.const, *args, samples=sorted(set(candidates.const)), **consts)
            except Error as e:
                raise low.error(node, f"no build-time UB footprint for {label}: {e}".replace("\n", " ")) from None
            entries.append((Brace((Value(a.numerator), Value(a.denominator), Value(b))), f"{i}: {label}"))
        note = f"UB bytes of {kernel.const.parsed.name}: num / den * {name.const} + base (ascdsl.planner.footprint)"
        low.constants[table] = Table("Footprint", Ident(table), tuple(entries), note)
        row, block = Ident(low.temp("row")), Ident(low.temp("block"))
        low.emit(Declare(INT, row, Value(-1), Storage.VARIABLE))
        low.emit(Branch(tuple((cond, (Assign(row, Value(i)),)) for i, (cond, _, _) in enumerate(rows)),
                        (self.missing(kernel),)))
        order = Brace(tuple(Value(c) for c in sorted(set(candidates.const), reverse=True)))
        low.emit(Declare(INT, block, Invoke(Runtime.LARGEST_BLOCK, (Index(Ident(table), row), order,
                                                                     Member(platform.node, "ubBudget")))))
        message = Invoke(Runtime.STRING, (Value(planner.no_fit_message(name.const, candidates.const)),))
        low.emit(Branch(((Bin(BinOp.LT, block, Value(0)),
                          (Throw(Status.VALUE_ERROR, Bin(BinOp.ADD, message, Member(platform.node, "name"))),)),)))
        return E(block, INT)

    @staticmethod
    def missing(kernel: E) -> Throw:
        """The error of a planner query for dtypes the build has no table row for."""
        return Throw(Status.HOST_ERROR, Value(f"{kernel.const.parsed.name} has no UB footprint for these dtypes in "
                                              "this build"))

    def largest_extent(self, node: ast.Call) -> E:
        """``planner.largest_extent``: per dtype row, the kernel's lifted footprint as C++ of the runtime
        extents, and the largest admissible value that fits ``platform.ubBudget`` (``LargestFitting``)."""
        low = self.lowering
        try:
            call = inspect.signature(planner.largest_extent).bind(
                *node.args, **{k.arg: k.value for k in node.keywords})
        except TypeError as e:
            raise low.error(node, f"ascdsl.planner.largest_extent: {e}") from None
        kernel, name = (low.expr(call.arguments[k]) for k in ("jit_fn", "name"))
        platform = low.expr(call.arguments["platform"]) if "platform" in call.arguments else None
        if kernel.type != KERNEL or not kernel.is_const or name.type != STR or not name.is_const:
            raise low.error(node, "largest_extent takes an @ascdsl.jit kernel named at module level and a "
                            "runtime tile extent's name given as a string")
        if platform is None or platform.type != PLATFORM:
            raise low.error(node, "pass platform=platform (the host function's platform) to largest_extent")
        constexprs = call.arguments.get("constexprs", {})
        extents = {}
        first = self.op.dtypes[0]
        low.dtype_binding = {i: dtypes.lookup(first[n]) for n, i in enumerate(self.op.inputs)
                             if low.scope.get(i) == TENSOR}
        try:
            values = {k: low.expr(v) for k, v in constexprs.items()}
        finally:
            low.dtype_binding = {}
        for k, value in values.items():
            if value.type == INT and not value.is_const:  # known only at run time: a runtime extent
                value = low.expr(constexprs[k])
                extents[k] = Ident(low.temp(camel(k.lower())))
                low.emit(Declare(INT, extents[k], value.node))
        fixed = {k: v for k, v in constexprs.items() if k not in extents}
        rows = self.rows(kernel.const, call.arguments.get("args", ()), fixed)
        result, probe = Ident(low.temp(f"{camel(name.const.lower())}Fit")), Ident(low.temp("value"))
        low.emit(Declare(INT, result, Value(-1), Storage.VARIABLE))
        arms = []
        for i, (cond, label, (jit_fn, types, consts)) in enumerate(rows):
            try:
                found = planner.lifted(jit_fn, types, get_platform(DEFAULT_PLATFORM),
                                       {**consts, **{k: None for k in extents}, name.const: None})
            except Error as e:
                raise low.error(node, f"largest_extent for {label}: {e}") from None
            (ext,) = [e for e in found.extents if e.name == name.const]
            values = {**{n: Value(consts[n]) for n in found.names if n in consts}, **extents, name.const: probe}
            fits = Bin(BinOp.LE, footprint(found.slots, values), Conv(HostType.INT, Member(platform.node, "ubBudget")))
            search = Invoke(Runtime.LARGEST_FITTING, (Value(ext.low), Value(ext.quantum), Lambda(probe, fits)))
            arms.append((cond, (Note(f"{label}: UB bytes {describe_slots(found.slots)}"), Assign(result, search))))
        low.emit(Branch(tuple(arms), (self.missing(kernel),)))
        return E(result, INT)

    def rows(self, jit_fn, args: tuple, constexprs: dict) -> list:
        """``(condition, label, (kernel, args, constexprs))`` for every dtype combination of the op's
        inputs and every value of the bool constexprs known only at run time."""
        low = self.lowering
        inputs = [i for i in self.op.inputs if low.scope.get(i) == TENSOR]
        rows, seen = [], set()
        for combo in self.op.dtypes:
            bound = {i: dtypes.lookup(combo[self.op.inputs.index(i)]) for i in inputs}
            key = tuple(bound.values())
            if key in seen:
                continue
            seen.add(key)
            low.dtype_binding = bound
            try:
                types = [self.arg_type(a) for a in args]
                values = {k: low.expr(v) for k, v in constexprs.items()}
            finally:
                low.dtype_binding = {}
            for k, v in values.items():
                if not v.is_const and v.type != BOOL:
                    raise low.error(constexprs[k], f"constexpr {k!r} of a planner query must be known at build "
                                    "time (a constant, or an expression of the tensors' dtypes) or be a bool",
                                    hint="the build tabulates the footprint for every value it can take")
            runtime = [k for k, v in values.items() if not v.is_const]
            for flags in itertools.product((False, True), repeat=len(runtime)):
                consts = {k: v.const for k, v in values.items() if v.is_const} | dict(zip(runtime, flags))
                conds = [Bin(BinOp.EQ, Member(Ident(cpp_name(i)), "dtype"), dtype_value(d.name))
                         for i, d in bound.items()]
                conds += [Bin(BinOp.EQ, values[k].node, literal(f).node) for k, f in zip(runtime, flags)]
                label = ", ".join([d.name for d in bound.values()] + [f"{k}={f}" for k, f in zip(runtime, flags)])
                rows.append((Logic(True, tuple(conds)) if conds else Value(True), label, (jit_fn, types, consts)))
        return rows

    def arg_type(self, node: ast.AST):
        """A kernel argument of a planner query under the current dtype binding: an input tensor is a
        pointer to its dtype, ``tl.pointer_type(dtype)`` a pointer to ``dtype`` known at build time (GM scratch
        of the launch), a dtype known at build time a scalar."""
        low = self.lowering
        if isinstance(node, ast.Call) and low.resolve(node.func) is dtypes.PointerType and len(node.args) == 1 \
                and not node.keywords:  # tl.pointer_type(dtype): a GM scratch parameter
            element = low.expr(node.args[0])
            if element.type == DTYPE and element.is_const:
                return dtypes.PointerType(element.const)
        value = low.expr(node)
        if value.type == TENSOR and isinstance(node, ast.Name) and node.id in low.dtype_binding:
            return dtypes.PointerType(low.dtype_binding[node.id])
        if value.type == DTYPE and value.is_const:
            return value.const
        raise low.error(node, "a kernel argument of a planner query is an input tensor of the op, "
                        "tl.pointer_type(dtype) or a dtype known at build time")


def poly_value(poly, values: dict):
    """``poly`` (:mod:`.poly`) as an int64_t expression of ``values`` (by name; exact: each term's division is
    exact on the extents' quanta, as :func:`.poly.to_expr` checked)."""
    result = None
    for mono, coef in poly:
        term = Init(HostType.INT, Value(abs(coef.numerator)))
        for n in mono:
            term = Bin(BinOp.MUL, term, values[n])
        if coef.denominator != 1:
            term = Bin(BinOp.DIV, term, Value(coef.denominator))
        result = (Neg(term) if coef < 0 else term) if result is None else \
            Bin(BinOp.SUB if coef < 0 else BinOp.ADD, result, term)
    return Value(0) if result is None else result


def footprint(slots, values: dict):
    """The UB bytes of ``slots`` (:func:`.poly.footprint`) as an expression of ``values``."""
    result = None
    for num, needs in slots:
        most = poly_value(needs[0], values) if len(needs) == 1 else \
            Invoke(Runtime.MAX, (Brace(tuple(poly_value(p, values) for p in needs)),), HostType.INT)
        term = Invoke(Runtime.ROUND_UP, (most, Value(BLOCK)))
        term = Bin(BinOp.MUL, Value(num), term) if num != 1 else term
        result = term if result is None else Bin(BinOp.ADD, result, term)
    return Value(0) if result is None else result
