"""Lowering of host-code statements and the launch plan to C++ (see :mod:`ascdsl.backend.host.host`).

``return ascdsl.Launch(kernel, grid=..., constexprs=..., scalars=...)`` writes the grid and scalars
into their tiling fields, sets ``blockDim = min(grid product, bound)`` (the bound of the cores the variant
runs on, :mod:`.cores`: the vector cores, 65535 for a pure-cube kernel, the cube cores for a MIX kernel) and
picks the tiling key by matching (kernel, constexprs, tensor dtypes, scalar widths) against the build's variant
table: the same specialisation the Python launch would compile. A kernel may be chosen through a
variable (``kernel = a if cond else b``): kernel references are compile-time symbols, a C++
``enum class Kernel`` whose members are the kernels the function names.
"""
from __future__ import annotations

import ast
import copy
import inspect
import string

from ... import dtypes, planner, scratch
from ...errors import CompilationError
from ...op import Launch, host_source
from .hostcode import (BOOL, DTYPE, FLOAT, FORMAT, INT, KERNEL, SHAPE, VARIABLE, E, HostFunction, cpp_name,
                       dtype_value, literal)
from .hostexpr import HostExpressions, concat, host_body
from .hostplan import footprint
from ...platforms import Platform
from . import cores
from ..cube import mix
from ..kir import Bin, BinOp, CInt, Cond, Conv, For, Not, Note
from ..kir.host import (Argument, Assign, Branch, Declare, Enum, HostType, Ident, Init, Invoke, Logic, Member,
                        Passing, Return, Runtime, Scoped, Status, Storage, Throw, Value, stmt_reads)
from ..lift.poly import describe_slots
from ..names.naming import field_name
from ..plan.tiling import Variant, scratch_field, scratch_params

PLATFORM = Ident("platform")
UB_BUDGET = Conv(HostType.INT, Member(PLATFORM, "ubBudget"))
TILING, PROGRAMS, BLOCKS = Ident("tiling"), Ident("programs"), Ident("blocks")


def limit(kind: cores.Cores) -> Member:
    """The bound of the blocks of a launch on ``kind`` in host code (a member of the platform)."""
    return Member(PLATFORM, kind.host_limit)


class HostLowering(HostExpressions):
    """One pass over the function's AST, emitting C++ lines (``platform``: the build's, whose passes decide
    which variants run on which cores, :mod:`.cores`; None for an output-shape function, which launches nothing)."""

    def __init__(self, op, fn, layout, variants, platform: Platform | None):
        super().__init__(op, fn, layout, variants)
        self.platform = platform
        self.dicts: dict[str, dict[str, E]] = {}
        self.returns = 0  # the return statements lowered
        self.inlining: list = []  # the host helpers being inlined, outermost first
        self.helper_names: dict[tuple, str] = {}  # (helper, name) -> the C++ variable of the helper's local

    # ------------------------------------------------------------------ driver

    def function(self, name: str) -> HostFunction:
        for stmt in self.body:
            self.stmt(stmt)
        if not isinstance(self.body[-1], ast.Return):
            end = ("the host function returned no launch plan" if self.layout is not None
                   else "the output-shape function returned no shape")
            self.emit(Throw(Status.HOST_ERROR, Value(end)))
        (body,) = self.blocks
        # the module constants the body reads are declared; the parameters and variables it does not read are
        # `[[maybe_unused]]` (a value folded at build time reads nothing)
        reads = set().union(*map(stmt_reads, body))
        decls = tuple(Declare(t, Ident(cpp_name(n)), storage=Storage.VARIABLE, unused=cpp_name(n) not in reads)
                      for n, t in self.locals.items())
        constants = tuple(d for n, d in self.module_constants.items() if n in reads) + \
            tuple(self.constants.values())
        if self.kernels:
            constants = (Enum("Kernel", tuple(self.kernels)),) + constants
        results = ((self.layout.struct_name, TILING), (CInt.UINT32, Ident("blockDim"))) if self.layout is not None \
            else ((SHAPE, Ident("shape")),)
        # every path raising, the function writes none
        results = tuple(Argument(n.name, t, Passing.REF, unused=not self.returns) for t, n in results)
        used = frozenset(p.name for p in self.params if cpp_name(p.name) in reads)
        return HostFunction(name, self.params, results, constants, decls, tuple(body), used)

    # ------------------------------------------------------------------ statements

    def stmt(self, node: ast.stmt) -> None:
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is None:
            raise self.error(node, f"'{type(node).__name__}' statements cannot be lowered to C++")
        method(node)

    def stmt_Pass(self, node: ast.Pass) -> None:
        pass

    def stmt_Expr(self, node: ast.Expr) -> None:
        if not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            raise self.error(node, "an expression statement has no effect in host code")

    def stmt_Assign(self, node: ast.Assign) -> None:
        helper = self.helper(node.value)
        if helper is not None and len(node.targets) == 1:
            self.inline(node.targets[0], node.value, helper)
            return
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            raise self.error(node, "assign to one name at a time in host code")
        if isinstance(node.value, ast.Dict):  # a dict of launch arguments: one variable per key
            self.dicts[node.targets[0].id] = {
                key: self.assign(ast.copy_location(ast.Name(f"{node.targets[0].id}_{key}", ast.Store()), value),
                                 self.expr(value))
                for key, value in self.mapping(node.value).items()}
            return
        self.assign(node.targets[0], self.expr(node.value))

    def stmt_AugAssign(self, node: ast.AugAssign) -> None:
        if not isinstance(node.target, ast.Name):
            raise self.error(node, "assign to one name at a time in host code")
        load = ast.copy_location(ast.Name(node.target.id, ast.Load()), node)
        value = self.binop(ast.copy_location(ast.BinOp(load, node.op, node.value), node))
        self.assign(node.target, value)

    def assign(self, target: ast.Name, value: E) -> E:
        name = target.id
        if name in self.scope and name not in self.locals:
            raise self.error(target, f"host code may not assign to the parameter {name!r}")
        if value.type not in VARIABLE:
            raise self.error(target, f"a host variable cannot hold a {value.type.word}")
        if self.locals.setdefault(name, value.type) != value.type:
            raise self.error(target, f"{name!r} is a {self.locals[name].word} here and a {value.type.word} elsewhere",
                             hint="C++ variables have one type: use another name")
        self.scope[name] = value.type
        self.emit(Assign(Ident(cpp_name(name)), value.node))
        return E(Ident(cpp_name(name)), value.type)

    def stmt_If(self, node: ast.If) -> None:
        cond = self.truth(node.test)
        if cond.is_const:  # decided at build time: only the branch Python takes exists
            for stmt in node.body if cond.const else node.orelse:
                self.stmt(stmt)
            return
        arms, orelse = [], None
        while True:  # an `elif` chain: one `else if` a branch; a branch decided at build time ends it
            arms.append((cond.node, self.block(node.body)))
            if not (len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If)):
                orelse = self.block(node.orelse) if node.orelse else None
                break
            node = node.orelse[0]
            cond = self.truth(node.test)
            if cond.is_const:
                orelse = self.block(node.body if cond.const else node.orelse)
                break
        self.emit(Branch(tuple(arms), orelse))

    def block(self, body: list[ast.stmt]) -> tuple:
        return self.nested(lambda: [self.stmt(stmt) for stmt in body])

    def stmt_For(self, node: ast.For) -> None:
        it = node.iter
        if not (isinstance(node.target, ast.Name) and isinstance(it, ast.Call) and self.resolve(it.func) is range
                and 1 <= len(it.args) <= 3 and not it.keywords and not node.orelse):
            raise self.error(node, "host loops must be `for name in range(...)`")
        args = [self.int_expr(a) for a in it.args]
        start, stop, step = (literal(0), args[0], literal(1)) if len(args) == 1 else (
            args[0], args[1], args[2] if len(args) == 3 else literal(1))
        if not step.is_const or step.const == 0:
            raise self.error(it, "the step of a host loop must be a non-zero constant")
        counter, end = Ident(self.temp("it")), Ident(self.temp("stop"))
        self.emit(Declare(INT, end, stop.node))
        body = self.nested(lambda: [self.assign(node.target, E(counter, INT)), *map(self.stmt, node.body)])
        self.emit(For(counter, start.node, end, step.node, body, cmp=BinOp.LT if step.const > 0 else BinOp.GT))

    def stmt_Raise(self, node: ast.Raise) -> None:
        exc = node.exc
        kind = self.resolve(exc.func) if isinstance(exc, ast.Call) else None
        status = {ValueError: Status.VALUE_ERROR, TypeError: Status.TYPE_ERROR}.get(kind)
        if status is None or exc.keywords or len(exc.args) > 1 or node.cause is not None:
            raise self.error(node, "host code raises only ValueError(message) or TypeError(message)")
        self.emit(Throw(status, self.node(self.message(exc.args[0]) if exc.args else Value(""))))

    def stmt_Return(self, node: ast.Return) -> None:
        self.returns += 1
        if self.layout is None:
            shape = self.expr(node.value) if node.value is not None else None
            if shape is None or shape.type != SHAPE:
                raise self.error(node, "an output-shape function returns a tuple of ints")
            self.emit(Assign(Ident("shape"), shape.node))
            self.emit(Return(Status.OK))
            return
        call = node.value
        if not (isinstance(call, ast.Call) and self.resolve(call.func) is Launch):
            raise self.error(node, "a host function returns ascdsl.Launch(...)")
        self.launch(call)

    # ------------------------------------------------------------------ host helpers

    def helper(self, node: ast.AST):
        """The ``@ascdsl.host`` function ``node`` calls (a host helper), or None."""
        fn = self.resolve(node.func) if isinstance(node, ast.Call) else None
        return fn if getattr(fn, "__ascdsl_host__", False) else None

    def expr_Call(self, node: ast.Call) -> E:
        if self.helper(node) is not None:
            raise self.error(node, "a host helper's call is the whole value of an assignment in host code, "
                             "`x = helper(...)` or `a, b = helper(...)`")
        if self.inlining and self.resolve(node.func) in (planner.largest_block, planner.largest_extent):
            raise self.error(node, "the UB planner is asked from the op's host function, not from a host helper")
        return super().expr_Call(node)

    def inline(self, target: ast.expr, call: ast.Call, helper) -> None:
        """``target = helper(...)`` with ``target`` a name or a tuple of names: the helper's body inlined, its
        parameters and locals C++ variables named after it (``<helper>_<name>``), then its return value assigned.
        Arguments known at build time stay constants (the helper's conditions on them fold)."""
        fn = inspect.unwrap(helper)
        if fn in self.inlining:
            raise self.error(call, f"{fn.__name__} calls itself: host helpers are inlined, so they cannot recurse")
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            raise self.error(call, "name the arguments of a host helper one by one")
        sig = inspect.signature(fn)
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values()):
            raise self.error(call, f"{fn.__name__} takes *args or **kwargs, which host code cannot pass")
        try:
            bound = sig.bind(*call.args, **{k.arg: k.value for k in call.keywords}).arguments
        except TypeError as e:
            raise self.error(call, f"{fn.__name__}{sig}: {e}") from None
        args = {name: self.expr(bound[name]) if name in bound else literal(p.default)
                for name, p in sig.parameters.items()}
        saved = (self.fn, self.path, self.scope, self.fixed)
        self.fn, (self.path, tree) = fn, host_source(fn)
        self.scope, self.fixed = {}, {}
        self.inlining.append(fn)
        try:
            values = self.helper_body(fn, host_body(tree), args, target)
        finally:
            self.fn, self.path, self.scope, self.fixed = saved
            self.inlining.pop()
        names = target.elts if isinstance(target, ast.Tuple) else [target]
        for name, value in zip(names, values):
            if not isinstance(name, ast.Name):
                raise self.error(name, "assign a host helper's results to names")
            self.assign(name, value)

    def helper_body(self, fn, body: list[ast.stmt], args: dict[str, E], target: ast.expr) -> list[E]:
        """Lower the body of the helper ``fn`` (in its own scope) and return its result: one value, or one a name
        of ``target`` where it is a tuple."""
        returns = [n for stmt in body for n in ast.walk(stmt) if isinstance(n, ast.Return)]
        if len(returns) != 1 or body[-1] is not returns[0] or returns[0].value is None:
            raise self.error(next((r for r in returns if r is not body[-1]), body[-1]),
                             "a host helper ends in its one return statement, which returns a value")
        stored = sorted({n.id for stmt in body for n in ast.walk(stmt)
                         if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)})
        for stmt in body:
            for n in ast.walk(stmt):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id in args:
                    raise self.error(n, f"host code may not assign to the parameter {n.id!r}")
        names = {name: self.helper_name(fn, name) for name in [*args, *stored]}
        body = copy.deepcopy(body)
        for stmt in body:
            for n in ast.walk(stmt):
                if isinstance(n, ast.Name):
                    n.id = names.get(n.id, n.id)
        self.emit(Note(f"{fn.__name__}(...)"))
        for name, value in args.items():
            if value.is_const or value.type not in VARIABLE:  # tensors and the platform: as a host function's fixed parameters
                self.fixed[names[name]] = value
                self.scope[names[name]] = value.type
            else:  # a copy, so that the result does not read the caller's variables, which it assigns
                self.assign(ast.copy_location(ast.Name(names[name], ast.Store()), body[0]), value)
        for stmt in body[:-1]:
            self.stmt(stmt)
        result = body[-1].value
        if not isinstance(target, ast.Tuple):
            return [self.expr(result)]
        if not isinstance(result, ast.Tuple) or len(result.elts) != len(target.elts):
            raise self.error(result, f"{fn.__name__} returns {len(result.elts) if isinstance(result, ast.Tuple) else 1}"
                             f" values here, and the call assigns {len(target.elts)}")
        return [self.expr(e) for e in result.elts]

    def helper_name(self, fn, name: str) -> str:
        """The C++ variable of the local ``name`` of the host helper ``fn`` (the same for every call of it)."""
        if (fn, name) not in self.helper_names:
            unique = f"{fn.__name__}_{name}"
            while unique in self.taken:
                unique += "_"
            self.taken.add(unique)
            self.helper_names[fn, name] = unique
        return self.helper_names[fn, name]

    # ------------------------------------------------------------------ the launch plan

    def launch(self, call: ast.Call) -> None:
        if any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
            raise self.error(call, "name the arguments of a Launch one by one in host code")
        try:
            spec = inspect.signature(Launch).bind(*call.args, **{k.arg: k.value for k in call.keywords})
        except TypeError as e:
            raise self.error(call, f"ascdsl.Launch(kernel, grid, constexprs, scalars, variant, scratch): {e}") from None
        if "site" in spec.arguments:
            raise self.error(call, "a Launch's site is where host code makes it: do not pass one")
        kernel = self.expr(spec.arguments["kernel"])
        if kernel.type != KERNEL:
            raise self.error(call, "the kernel of a Launch must be an @ascdsl.jit function named at module level "
                             "(directly or through a variable)")
        # the kernels this launch may run: the one it names, or every kernel the function names
        candidates = [kernel.const.parsed.name] if kernel.is_const else list(self.kernels)
        grid = spec.arguments.get("grid")
        if not isinstance(grid, (ast.Tuple, ast.List)) or not 1 <= len(grid.elts) <= 3:
            raise self.error(call, "the grid must be a tuple of 1 to 3 ints")
        constexprs = self.mapping(spec.arguments.get("constexprs"))
        scalars = self.mapping(spec.arguments.get("scalars"))
        bound = self.mapping(spec.arguments.get("scratch"))
        name = " or ".join(candidates)
        fields = {f.name: f for f in self.layout.fields}
        variant = spec.arguments.get("variant")
        self.emit(Note(name + (f" ({variant.value})" if isinstance(variant, ast.Constant) else "")))
        if variant is not None:
            self.expr(variant)  # informational only, but it must lower
        dims = [self.int_expr(g).node for g in grid.elts] + [Value(1)] * (3 - len(grid.elts))
        for i, dim in enumerate(dims):
            fits = isinstance(dim, Value) and type(dim.value) is int and 0 <= dim.value < 2**31
            self.emit(Assign(Member(TILING, f"grid{i}"), dim if fits else Conv(dtypes.int32, dim)))
        values = {}
        for key, node in scalars.items():
            field = field_name(key)
            if field not in fields and not any(v.kernel.name in candidates for v in self.variants):
                raise self.error(call, f"no case or probe shape of the op reaches this launch of {name}, so no "
                                 "kernel was compiled for it: add a case whose host call returns it")
            if field not in fields:
                raise self.error(call, f"{name} has no runtime scalar parameter {key!r}")
            value = node if isinstance(node, E) else self.expr(node)
            if value.type not in (INT, FLOAT, BOOL):
                raise self.error(call, f"scalar {key!r} must be an int, float or bool")
            values[key] = E(Ident(self.temp(key + "_")), value.type)
            self.emit(Declare(value.type, values[key].node, value.node))
            self.emit(Assign(Member(TILING, field), Conv(fields[field].dtype, values[key].node)))
        scratch_dtypes = {key: self.lower_scratch(call, name, key, node, fields) for key, node in bound.items()}
        consts = {}
        for key, node in constexprs.items():
            value = node if isinstance(node, E) else self.expr(node)
            if value.type not in (INT, FLOAT, BOOL, DTYPE):
                raise self.error(call, f"constexpr {key!r} must be an int, float, bool or dtype in host code")
            if value.is_const:  # known at build time: the variants' conditions on it fold
                consts[key] = value
                continue
            consts[key] = E(Ident(self.temp(key + "_")), value.type)
            self.emit(Declare(value.type, consts[key].node, value.node))
        rows = []
        # specialisations first: a lifted variant serves the values no specialisation has
        for v in sorted(self.variants, key=lambda v: v.lift is not None):
            if v.kernel.name in candidates:
                cond = self.variant_condition(v, consts, values, scratch_dtypes)
                if cond is not None and not kernel.is_const:
                    cond = Logic(True, (Bin(BinOp.EQ, kernel.node, Scoped(HostType.KERNEL, v.kernel.name)),
                                               *cond.items))
                if cond is not None:
                    rows.append((v, cond))
                if cond is not None and not cond.items:  # selected whatever the run-time values: the rest never is
                    break
        kinds = {v.key: cores.of(v.kernel, self.platform) for v, _ in rows}
        if bound and any(k is not cores.VECTOR for k in kinds.values()):
            raise self.error(call, f"{name} multiplies matrices on the cube cores: an op project gives scratch only "
                             "to kernels on the vector cores")
        limits = list(dict.fromkeys(limit(k) for k in kinds.values())) or [limit(cores.VECTOR)]
        grid = [Member(TILING, f"grid{i}") for i in range(3)]
        self.emit(Declare(INT, PROGRAMS, Bin(BinOp.MUL, Bin(BinOp.MUL, Init(INT, grid[0]), grid[1]), grid[2])))
        self.emit(Assign(Member(TILING, "tilingKey"), Value(0), "an empty grid launches nothing"))
        if len(limits) > 1:  # variants on different cores: the chosen one's bound
            self.emit(Declare(INT, BLOCKS, limit(cores.VECTOR), Storage.VARIABLE))
        arms = [(cond, self.nested(lambda: self.variant_branch(v, consts, kinds[v.key], len(limits) > 1)))
                for v, cond in rows]
        if arms and not arms[-1][0].items:  # the last row always selects: it is the `else`, or the whole choice
            *others, (_, last) = arms
            chosen = (Branch(tuple(others), last),) if others else last
        else:
            missing = self.node(self.not_compiled(kernel, candidates, consts))
            chosen = (Branch(tuple(arms), (Throw(Status.VARIANT_NOT_COMPILED, missing),)),)
        self.emit(Branch(((Bin(BinOp.GT, PROGRAMS, Value(0)), chosen),)))
        bound = BLOCKS if len(limits) > 1 else limits[0]
        self.emit(Assign(Ident("blockDim"), Conv(CInt.UINT32, Invoke(Runtime.MIN, (PROGRAMS, bound), INT))))
        self.emit(Return(Status.OK))

    def variant_branch(self, variant: Variant, consts: dict[str, E], kind: cores.Cores, chosen: bool) -> None:
        """The launch's branch that selects ``variant``: its tiling key, runtime tile extents and bounds."""
        self.emit(Assign(Member(TILING, "tilingKey"), Value(variant.key)))
        self.lifted_fields(variant, consts)
        self.launch_bounds(variant, kind, chosen)

    def lower_scratch(self, call: ast.Call, name: str, key: str, node: ast.AST, fields: dict) -> E:
        """Write scratch ``key``'s bytes in the user workspace (its element count times its dtype's size, rounded
        up to :data:`.scratch.ALIGN`) into its tiling field; its dtype (the variant's pointer type)."""
        if scratch_field(key) not in fields:
            raise self.error(call, f"{name} has no pointer parameter {key!r} past the op's {self.op.tensor_count} "
                             "tensors: scratch binds the kernel's pointer parameters after its inputs and outputs")
        if not (isinstance(node, ast.Tuple) and len(node.elts) == 2):
            raise self.error(node, f"scratch {key!r} is a (dtype, element count) pair")
        dtype, count = (self.expr(e) for e in node.elts)
        if dtype.type != DTYPE:
            raise self.error(node.elts[0], f"scratch {key!r}: the dtype must be a language dtype (tl.float32, ...), "
                             f"got a {dtype.type.word}")
        if count.type != INT:
            raise self.error(node.elts[1], f"scratch {key!r}: the element count must be an int, got a {count.type.word}")
        field = Member(TILING, scratch_field(key))
        if count.is_const and count.const < 0:  # every launch of this plan fails, as the Python plan does
            self.emit(Throw(Status.VALUE_ERROR, Value(scratch.negative(key, count.const))))
            return dtype
        if count.is_const and dtype.is_const:  # the bytes are known at build time
            self.emit(Assign(field, Value(scratch.size(count.const * dtype.const.itemsize))))
            return dtype
        n = count.node
        if not count.is_const:
            n = Ident(self.temp(key + "_"))
            self.emit(Declare(INT, n, count.node))
            message = self.formatted(scratch.negative(key, "{count}"), {"count": Invoke(Runtime.FORMAT_INT, (n,))})
            self.emit(Branch(((Bin(BinOp.LT, n, Value(0)), (Throw(Status.VALUE_ERROR, message),)),)))
        size = literal(dtype.const.itemsize).node if dtype.is_const else Invoke(Runtime.DTYPE_SIZE, (dtype.node,))
        padded = Bin(BinOp.ADD, Bin(BinOp.MUL, n, size), Value(scratch.ALIGN - 1))
        self.emit(Assign(field, Bin(BinOp.MUL, Bin(BinOp.DIV, padded, Value(scratch.ALIGN)), Value(scratch.ALIGN))))
        return dtype

    def launch_bounds(self, variant: Variant, kind: cores.Cores, chosen: bool) -> None:
        """In the branch of ``variant`` (running on ``kind``): its blocks' bound (``chosen``: into ``blocks``)
        and, for a MIX kernel, the check that its workspace's tile offsets fit int32 (:mod:`.mix`)."""
        if chosen:
            self.emit(Assign(BLOCKS, limit(kind), f"{variant.kernel.name} runs on {kind.what}"))
        if cores.barrier(variant.kernel) is not None:
            text = cores.RESIDENT.format(programs="{programs}", cores="{cores}")
            values = {"programs": Invoke(Runtime.FORMAT_INT, (PROGRAMS,)),
                      "cores": Invoke(Runtime.FORMAT_INT, (limit(kind),))}
            self.emit(Branch(((Bin(BinOp.GT, PROGRAMS, limit(kind)),
                               (Throw(Status.VALUE_ERROR, self.formatted(text, values)),)),),
                             note="a grid barrier: every program on a core of its own"))
        if kind is not cores.MIX:
            return
        rows, cols = mix.split(variant.kernel, self.platform).tile
        most = cores.max_programs(variant.kernel, self.platform)
        values = {"programs": Invoke(Runtime.FORMAT_INT, (PROGRAMS,)),
                  "elements": Invoke(Runtime.FORMAT_INT, (Bin(BinOp.MUL, PROGRAMS, Value(rows * cols)),))}
        text = mix.OVERFLOW.format(programs="{programs}", rows=rows, cols=cols, elements="{elements}")
        overflow = Throw(Status.VALUE_ERROR, self.formatted(text, values))
        self.emit(Branch(((Bin(BinOp.GT, PROGRAMS, Value(most)), (overflow,)),),
                         note="the products' float32 tiles at int32 offsets in the workspace"))

    @staticmethod
    def formatted(text: str, values: dict):
        """The host string of ``text`` with each ``{name}`` in it the host expression ``values[name]``."""
        parts = []
        for piece, name, _, _ in string.Formatter().parse(text):
            parts += ([Value(piece)] if piece else []) + ([values[name]] if name else [])
        return concat(parts)

    def mapping(self, node: ast.AST | None) -> dict[str, ast.AST]:
        if node is None:
            return {}
        if isinstance(node, ast.Name) and node.id in self.dicts:
            return self.dicts[node.id]
        if not isinstance(node, ast.Dict) or not all(isinstance(k, ast.Constant) and isinstance(k.value, str)
                                                     for k in node.keys):
            raise self.error(node, "constexprs, scalars and scratch are dict literals with string keys in host code")
        return {k.value: v for k, v in zip(node.keys, node.values)}

    def tensor_dtypes(self) -> list:
        """The dtypes of the kernel's pointer arguments: inputs, then outputs."""
        out = [Member(Ident(cpp_name(i)), "dtype") for i in self.op.inputs]
        for o in self.op.outputs:
            source = o.dtype or self.op.inputs[0]
            out.append(Member(Ident(cpp_name(source)), "dtype") if source in self.op.inputs else dtype_value(source))
        return out

    def variant_condition(self, variant: Variant, consts: dict[str, E], scalars: dict[str, E],
                          scratch_dtypes: dict[str, E]) -> Logic | None:
        """The test that selects ``variant``, or None if these launch values (``scratch_dtypes``: of each scratch) can
        never select it."""
        kernel = variant.kernel
        pointers = [p.type.dtype.element_ty for p in kernel.params if not p.type.is_scalar
                    or isinstance(p.type.dtype, dtypes.PointerType)]
        if len(pointers) < self.op.tensor_count:
            raise CompilationError(kernel.loc, f"{kernel.name} takes {len(pointers)} pointers, but the op has "
                                   f"{len(self.op.inputs)} inputs and {len(self.op.outputs)} outputs")
        if set(scratch_params(kernel, self.op.tensor_count)) != set(scratch_dtypes):
            return None
        given = self.tensor_dtypes() + [scratch_dtypes[n].node for n in scratch_params(kernel, self.op.tensor_count)]
        conds = []
        for expr, d in zip(given, pointers):
            if not isinstance(expr, Scoped):
                conds.append(Bin(BinOp.EQ, expr, dtype_value(d.name)))
            elif expr != dtype_value(d.name):  # a dtype known at build time: the test folds
                return None
        for key, value in kernel.constexprs:
            have = consts.get(key)
            if have is None or have.type != literal(value).type:
                return None
            if key in variant.lifted:
                continue
            if not have.is_const:
                conds.append(Bin(BinOp.EQ, have.node, literal(value).node))
            elif have.const != value:
                return None
        for name, param in zip(kernel.param_names, kernel.params):
            value = scalars.get(name)
            if value is not None and value.type == INT and param.type.dtype in (dtypes.int32, dtypes.int64):
                fits = Invoke(Runtime.FITS_INT32, (value.node,))
                conds.append(fits if param.type.dtype == dtypes.int32 else Not(fits))
        return Logic(True, tuple(dict.fromkeys(conds)))

    def lifted_fields(self, variant: Variant, consts: dict[str, E]) -> None:
        """Write ``variant``'s runtime tile extents into the tiling, after checking them as
        :meth:`.lift.Lift.problem` does (a VALUE_ERROR with the same message)."""
        if variant.lift is None:
            return
        lift = variant.lift
        for e in lift.extents:
            value = consts[e.name].node
            low = Bin(BinOp.LT, value, Value(e.low))
            off = (Bin(BinOp.NE, Bin(BinOp.MOD, value, Value(e.quantum)), Value(0)),) if e.quantum > 1 else ()
            message = concat([Value(f"{e.name}="), Invoke(Runtime.FORMAT_INT, (value,)), Value(e.requirement)])
            self.emit(Branch(((Logic(False, (*off, low)), (Throw(Status.VALUE_ERROR, message),)),)))
        need = Ident(self.temp("ubBytes"))
        values = {n: consts[n].node for n in lift.names}
        self.emit(Declare(INT, need, footprint(lift.slots, values), note=f"UB bytes: {describe_slots(lift.slots)}"))
        named = []
        for n in lift.names:
            named += ([Value(", ")] if named else []) + [Value(f"{n}="), Invoke(Runtime.FORMAT_INT, (values[n],))]
        message = concat([*named, Value(" needs "),
                          Invoke(Runtime.FORMAT_INT, (need,)), Value(" bytes of UB, more than the "),
                          Invoke(Runtime.FORMAT_INT, (Member(PLATFORM, "ubBudget"),)), Value(" bytes available")])
        self.emit(Branch(((Bin(BinOp.GT, need, UB_BUDGET), (Throw(Status.VALUE_ERROR, message),)),)))
        for n in lift.names:
            self.emit(Assign(Member(TILING, field_name(n)), Conv(dtypes.int32, values[n])))

    def not_compiled(self, kernel: E, candidates: list[str], consts: dict[str, E]):
        """The message of a launch no variant serves."""
        name = Value(candidates[0])
        for other in candidates[1:]:  # a kernel chosen at run time: name the one chosen
            name = Cond(Bin(BinOp.EQ, kernel.node, Scoped(HostType.KERNEL, other)), Value(other), name)
        parts = [Invoke(Runtime.STRING, (name,)), Value(" with ")]
        for i, (key, value) in enumerate(consts.items()):
            shown = Value(value.const.name if value.type == DTYPE else str(value.const)) if value.is_const else \
                Invoke(FORMAT[value.type], (value.node,))  # as the Python plan's message shows it
            parts += [Value(f"{', ' if i else ''}{key}="), shown]
        parts.append(Value(" for "))
        for i, dtype in enumerate(self.tensor_dtypes()):
            parts += ([Value(", ")] if i else []) + [Invoke(Runtime.DTYPE_NAME, (dtype,))]
        parts.append(Value(" was not compiled into this build; add a case that launches it"))
        return concat(parts)
