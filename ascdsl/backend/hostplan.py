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

from .. import dtypes, planner
from ..errors import Error
from ..op import Operator
from .hostcode import BOOL, DTYPE, INT, KERNEL, SHAPE, STR, E, camel, cpp_name, dtype_enum, literal, quote


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
        if platform is None or platform.type != "platform":
            raise low.error(node, "pass platform=platform (the host function's platform) to largest_block")
        rows = self.rows(kernel.const, call.arguments.get("args", ()), call.arguments.get("constexprs", {}))
        table = low.temp(f"ub{camel(kernel.const.parsed.name)}{camel(name.const.lower())}")
        entries = []
        for i, (cond, label, (jit_fn, args, consts)) in enumerate(rows):
            try:
                a, b = planner.footprint(jit_fn, name.const, *args, samples=sorted(set(candidates.const)), **consts)
            except Error as e:
                raise low.error(node, f"no build-time UB footprint for {label}: {e}".replace("\n", " ")) from None
            entries.append(f"{{{a.numerator}, {a.denominator}, {b}}},  // {i}: {label}")
        low.constants[table] = (
            f"// UB bytes of {kernel.const.parsed.name}: num / den * {name.const} + base (ascdsl.planner.footprint)\n"
            f"    constexpr Footprint {table}[] = {{" + "".join("\n        " + e for e in entries) + "\n    };")
        row, block = low.temp("row"), low.temp("block")
        low.emit(f"int64_t {row} = -1;")
        for i, (cond, _, _) in enumerate(rows):
            low.emit(f"{'} else ' if i else ''}if ({cond}) {{")
            low.emit(f"    {row} = {i};")
        low.emit("} else {")
        missing = f"{kernel.const.parsed.name} has no UB footprint for these dtypes in this build"
        low.emit(f"    throw HostError{{HOST_ERROR, {quote(missing)}}};")
        low.emit("}")
        order = ", ".join(str(c) for c in sorted(set(candidates.const), reverse=True))
        low.emit(f"const int64_t {block} = LargestBlock({table}[{row}], {{{order}}}, {platform.code}.ubBudget);")
        low.emit(f"if ({block} < 0) {{")
        message = quote(planner.no_fit_message(name.const, candidates.const))
        low.emit(f"    throw HostError{{VALUE_ERROR, std::string({message}) + {platform.code}.name}};")
        low.emit("}")
        return E(block, INT)

    def rows(self, jit_fn, args: tuple, constexprs: dict) -> list:
        """``(C++ condition, label, (kernel, args, constexprs))`` for every dtype combination of the op's
        inputs and every value of the bool constexprs known only at run time."""
        low = self.lowering
        inputs = [i for i in self.op.inputs if low.scope.get(i) == "tensor"]
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
                conds = [f"{cpp_name(i)}.dtype == {dtype_enum(d.name)}" for i, d in bound.items()]
                conds += [f"{values[k].code} == {literal(f).code}" for k, f in zip(runtime, flags)]
                label = ", ".join([d.name for d in bound.values()] + [f"{k}={f}" for k, f in zip(runtime, flags)])
                rows.append((" && ".join(conds) or "true", label, (jit_fn, types, consts)))
        return rows

    def arg_type(self, node: ast.AST):
        """A kernel argument of a planner query under the current dtype binding: an input tensor is a
        pointer to its dtype, a dtype known at build time a scalar."""
        low = self.lowering
        value = low.expr(node)
        if value.type == "tensor" and isinstance(node, ast.Name) and node.id in low.dtype_binding:
            return dtypes.PointerType(low.dtype_binding[node.id])
        if value.type == DTYPE and value.is_const:
            return value.const
        raise low.error(node, "a kernel argument of a planner query is an input tensor of the op or a dtype "
                        "known at build time")
