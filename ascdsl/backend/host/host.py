"""Lower an op's ``@ascdsl.host`` function to a plain C++ tiling function.

The generated function has the host function's parameters (tensors as ``ascdsl_host::TensorDesc``,
attributes as C++ values, ``platform`` as ``ascdsl_host::Platform``) and fills the tiling struct,
``blockDim`` and a message. It returns an ``ascdsl_host::Status`` (``templates/host_runtime.h.j2``):
``raise ValueError``/``TypeError`` become ``VALUE_ERROR``/``TYPE_ERROR`` with the same message, Python
errors such as an index out of range become ``HOST_ERROR``, and a launch plan that selects a kernel
specialisation this build does not contain becomes ``VARIANT_NOT_COMPILED``.

A host parameter that is neither an input, an attribute nor ``platform`` but has a default is fixed
to that default in the C++ (the op project serves that case; the Python entry may pass others).

The work is split by job: :mod:`.hostcode` (value kinds and the function model), :mod:`.hostexpr`
(expressions), :mod:`.hostlower` (statements and the launch plan), :mod:`.hostplan` (UB-planner
queries as build-time tables); this module renders the header and runs the same contract in Python.
"""
from __future__ import annotations

import functools
import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ... import dtypes
from ...errors import CompilationError, InputTypeError, InputValueError
from ...op import Operator, Output
from ...platforms import Platform
from . import cores
from ..cube import mix
from .hostcode import (DTYPE_ENUM, MAX_DIMS, HostFunction, Param, Signed, camel, cpp, cpp_name, declare, dtype_enum,
                       literal, signature)
from .hostlower import HostLowering
from ..kir import Bin, BinOp
from ..kir.host import (Argument, Assign, Bound, Branch, HostType, Ident, Index, Invoke, Member, Passing, Return,
                        Status, Value)
from ..render.emit import host_expr, host_lines
from ..render.jinja import render
from ..names.naming import field_name
from ..plan.tiling import TilingLayout, Variant, cann_name, scratch_field, scratch_params

__all__ = ["DTYPE_ENUM", "HostCode", "HostFunction", "Param", "ShapeFunction", "TilingResult", "WorkspaceFunction", "cpp",
           "cpp_name", "dtype_enum", "literal", "lower", "lower_output_shape", "lower_tiling", "output_shapes", "python_tiling",
           "tiling_header", "workspace_function"]


def lower_tiling(op: Operator, layout: TilingLayout, variants: Sequence[Variant], platform: Platform,
                 name: str) -> HostFunction:
    """The tiling function for ``op``'s host function: ``Status name(params..., Struct& tiling,
    uint32_t& blockDim, std::string& message)`` (``platform``: the build's)."""
    return HostLowering(op, op.host, layout, variants, platform).function(name)


def lower_output_shape(op: Operator, output: Output, name: str) -> HostFunction:
    """``Status name(params..., ascdsl_host::Shape& shape, std::string& message)`` for an output whose
    shape is an ``@ascdsl.host`` function of the inputs and attributes."""
    return HostLowering(op, output.shape, None, (), None).function(name)


# ---------------------------------------------------------------------- the plain tiling header

SHAPES, MESSAGE, STATUS_VAR = Ident("shapes"), Ident("message"), Ident("status")


@dataclass(frozen=True)
class ShapeFunction(Signed):
    """``Status name(inputs..., attrs..., Shape* shapes, message)``: the shape of every output."""

    name: str
    params: tuple[Param, ...]
    helpers: tuple[HostFunction, ...]
    body: tuple  # host statements (:mod:`.kir.host`)
    used: frozenset[str]

    @property
    def arguments(self) -> tuple[str, ...]:
        return declare(self.params, self.used, Argument(SHAPES.name, HostType.SHAPE, Passing.POINTER))

    @property
    def body_lines(self) -> tuple[str, ...]:
        return host_lines(self.body)


def op_params(op: Operator) -> tuple[Param, ...]:
    """Every input, then every attribute, as C++ parameters (the order of InferShape and main.cpp)."""
    def all_params(*_):
        pass
    names = [*op.inputs, *(a.name for a in op.attrs)]
    all_params.__signature__ = inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                                                  for n in names])
    return signature(op, all_params)


def output_shapes(op: Operator, prefix: str) -> ShapeFunction:
    helpers, body, used = [], [], set()
    for i, output in enumerate(op.outputs):
        if callable(output.shape):
            fn = lower_output_shape(op, output, f"{prefix}{camel(output.name)}Shape")
            helpers.append(fn)
            used |= {p.name for p in fn.params}
            args = tuple(Ident(cpp_name(p.name)) for p in fn.params) + (Index(SHAPES, Value(i)), MESSAGE)
            status = Bound(HostType.STATUS, STATUS_VAR, Invoke(fn.name, args))
            body.append(Branch(((status, (Return(STATUS_VAR),)),)))
        else:
            used.add(output.shape or op.inputs[0])
            body.append(Assign(Index(SHAPES, Value(i)), Member(Ident(cpp_name(output.shape or op.inputs[0])), "shape"),
                               output.name))
    if not helpers:
        body.append(Assign(None, MESSAGE, "no output shape can fail"))
    return ShapeFunction(f"{prefix}OutputShapes", op_params(op), tuple(helpers), tuple(body), frozenset(used))


def runtime_source(platform) -> str:
    """The ``ascdsl_host`` runtime the generated functions use (``templates/host_runtime.h.j2``)."""
    rows = [{"enum": DTYPE_ENUM[d.name], "code": i, "name": d.name, "itemsize": d.itemsize}
            for i, d in enumerate(dtypes.ALL)]
    return render("host_runtime.h.j2", dtypes=rows, max_dims=MAX_DIMS, default=platform)


@dataclass(frozen=True)
class HostCode:
    """An op's generated host functions, lowered once for its build: the tiling function, the output shapes and
    the workspace function (None: no variant needs a user workspace)."""

    op: Operator
    layout: TilingLayout
    platform: Platform
    tiling: HostFunction
    shapes: "ShapeFunction"
    workspace: "WorkspaceFunction | None"


def lower(op: Operator, layout: TilingLayout, variants: Sequence[Variant], platform: Platform) -> HostCode:
    """``op``'s host functions for the build of ``variants`` laid out in ``layout`` on ``platform``."""
    return HostCode(op, layout, platform, lower_tiling(op, layout, variants, platform, f"{op.op_type}Tiling"),
                    output_shapes(op, op.op_type), workspace_function(op, layout, variants, platform))


def tiling_header(code: HostCode, source: str) -> str:
    """``kernel/<op>_tiling.h``: the plain tiling struct, and (host side only) the tiling function
    ``<OpType>Tiling``, ``<OpType>OutputShapes`` and, where a variant is a MIX kernel, ``<OpType>WorkspaceSize``."""
    op = code.op
    return render("tiling_header.h.j2", op=op, source=source, guard=f"{cann_name(op.op_type).upper()}_TILING_H",
                  struct=code.layout.struct_source(), runtime=runtime_source(code.platform), tiling=code.tiling,
                  shapes=code.shapes, workspace=code.workspace)


@dataclass(frozen=True)
class WorkspaceFunction:
    """``uint64_t name(const Struct& tiling)``: the user workspace (bytes) of a launch with that tiling, per
    tiling key of a MIX variant or of one with scratch (``cases``: key, C++ expression, comment; ``programs``:
    whether an expression reads the launch's programs)."""

    name: str
    struct: str
    cases: tuple[tuple[int, Any, str], ...]  # key, a host expression of the tiling, comment
    programs: bool
    scratch: bool

    @property
    def case_lines(self) -> tuple[tuple[int, str, str], ...]:
        return tuple((key, host_expr(expr), what) for key, expr, what in self.cases)


def workspace_function(op: Operator, layout: TilingLayout, variants: Sequence[Variant],
                       platform) -> WorkspaceFunction | None:
    """The workspace function of a build whose variants include MIX kernels or kernels with scratch pointer
    parameters (:func:`.tiling.scratch_params`, in the workspace in parameter order; None: no variant needs one)."""
    cases, programs, scratch = [], False, False
    for v in variants:
        names = scratch_params(v.kernel, op.tensor_count)
        if cores.of(v.kernel, platform) is cores.MIX:
            parts = mix.split(v.kernel, platform)
            rows, cols = parts.tile
            what = (f"a {rows} x {cols} float32 product" if parts.dtype == dtypes.float32 else
                    f"{parts.tile_elements} {parts.dtype} elements")
            cases.append((v.key, Bin(BinOp.MUL, Ident("programs"), Value(parts.tile_elements * parts.dtype.itemsize)),
                          f"{v.kernel.name}: {what} a program"))
            programs = True
        elif names:
            fields = [Member(Ident("tiling"), scratch_field(n)) for n in names]
            cases.append((v.key, functools.reduce(lambda a, b: Bin(BinOp.ADD, a, b), fields),
                          f"{v.kernel.name}: the scratch {', '.join(names)}"))
            scratch = True
    return WorkspaceFunction(f"{op.op_type}WorkspaceSize", layout.struct_name, tuple(cases), programs,
                             scratch) if cases else None


# ---------------------------------------------------------------------- the same contract in Python

STATUS = {s.name: s.value for s in Status}
"""The generated function's status codes by name (:class:`.kir.host.Status`)."""


@dataclass(frozen=True)
class TilingResult:
    """What a tiling function gives: a status and message, the tiling fields and the block dim."""

    status: int
    message: str = ""
    fields: tuple[tuple[str, Any], ...] = ()
    block_dim: int = 0
    workspace_bytes: int = 0  # the user workspace of a MIX kernel's launch (:mod:`.cores`) or of its scratch


def python_tiling(op: Operator, layout: TilingLayout, variants: Sequence[Variant], platform,
                  inputs: Sequence, attrs: dict) -> TilingResult:
    """Run ``op``'s host function in Python on ``inputs`` (:class:`TensorDesc`) and ``attrs`` and map
    its plan to what the generated C++ function returns (the reference for that function)."""
    try:
        plan = host_plan(op, platform, inputs, attrs)
    except InputValueError as e:  # a DeclarationError (a bad Launch) is located: its message alone
        return TilingResult(STATUS["VALUE_ERROR"], e.message if isinstance(e, CompilationError) else str(e))
    except InputTypeError as e:
        return TilingResult(STATUS["TYPE_ERROR"], str(e))
    except (IndexError, ZeroDivisionError) as e:
        return TilingResult(STATUS["HOST_ERROR"], str(e))
    grid = tuple(plan.grid) + (1,) * (3 - len(plan.grid))
    programs = grid[0] * grid[1] * grid[2]
    scratch = plan.scratch_bytes()
    fields = {"grid0": grid[0], "grid1": grid[1], "grid2": grid[2],
              **{field_name(k): v for k, v in plan.scalars.items()},
              **{scratch_field(k): v for k, v in scratch.items()}, "tilingKey": 0}
    kind, workspace = cores.VECTOR, 0
    if programs:
        kernel = launched_kernel(op, plan, inputs)
        pointers = [d.dtype for d in inputs] + [op.output_dtype(o, tuple(inputs)) for o in op.outputs]
        # specialisations first, then the lifted variant serving the kernel's runtime tile extents
        serving = sorted((v for v in variants if v.serves(kernel)), key=lambda v: v.lift is not None)
        keys = [v.key for v in serving]
        if serving and serving[0].lift is not None:
            values = serving[0].lifted_values(kernel)
            problem = serving[0].lift.problem(values, platform.ub_budget_bytes)
            if problem is not None:
                return TilingResult(STATUS["VALUE_ERROR"], problem)
            fields.update({field_name(k): v for k, v in values.items()})
        if not keys:
            consts = ", ".join(f"{k}={_python_str(v)}" for k, v in plan.constexprs.items())
            return TilingResult(STATUS["VARIANT_NOT_COMPILED"],
                                f"{kernel.name} with {consts} for {', '.join(d.name for d in pointers)} "
                                "was not compiled into this build; add a case that launches it")
        fields["tilingKey"] = keys[0]
        kind = cores.of(serving[0].kernel, platform)
        try:
            cores.check_resident(serving[0].kernel, platform, programs)
            workspace = cores.workspace_bytes(serving[0].kernel, platform, programs) + sum(scratch.values())
        except CompilationError as e:  # a barrier's programs past the cores, past int32 tile offsets: the
            return TilingResult(STATUS["VALUE_ERROR"], e.message)  # generated function's VALUE_ERROR
    order = [f.name for f in layout.fields]
    return TilingResult(0, "", tuple(sorted(fields.items(), key=lambda kv: order.index(kv[0]))),
                        kind.block_dim(platform, programs), workspace)


def host_plan(op: Operator, platform, inputs: Sequence, attrs: dict):
    """``op``'s host function on ``inputs`` (:class:`TensorDesc`) and ``attrs`` for ``platform``."""
    return op.host(**op.arguments(op.host, tuple(inputs), attrs, platform))


def launched_kernel(op: Operator, plan, inputs: Sequence):
    """The kernel specialisation a host ``plan`` for ``inputs`` launches."""
    pointers = [d.dtype for d in inputs] + [op.output_dtype(o, tuple(inputs)) for o in op.outputs]
    plan.check_arrays(len(pointers))
    scratch = {name: dtypes.PointerType(dtype) for name, (dtype, _) in plan.scratch.items()}
    try:
        return plan.kernel.specialize(*(dtypes.PointerType(d) for d in pointers), **scratch, **plan.scalars,
                                      **plan.constexprs).kernels[0]
    except CompilationError as e:
        if e.loc.file == inspect.getsourcefile(plan.kernel.fn):
            raise  # located in the kernel
        # the arguments do not bind: located at the host's Launch, with what the op passes
        tensors = ", ".join([*op.inputs, *(o.name for o in op.outputs)])
        raise CompilationError(plan.site, e.message, f"the op passes the kernel a pointer per input and output "
                               f"({tensors}), then the Launch's scalars and constexprs; a host parameter that "
                               "is no tensor is an attribute: declare it in Operator(attrs=...)") from None


def _python_str(value) -> str:
    return value.name if isinstance(value, dtypes.DType) else str(value)
