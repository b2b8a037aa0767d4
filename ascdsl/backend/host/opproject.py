"""Render models of the generated host-side files: ``kernel/main.cpp``, the op project's op_host
(TilingFunc, InferShape, OpDef) and msopgen JSON. Python decides what; the templates lay it out.

OpDef tensor names are CANN's lowerCamelCase of the op's input and output names (``grad_output`` ->
``gradOutput``), which is what msopgen and the generated aclnn API print. The op project registers
``Operator.project_op_type`` (by default the op type with a ``Custom`` suffix, so that it never
shadows a CANN built-in), its files and kernel entry named after it (``softmax_grad_custom``).

The OpDef's dtype columns are the declared combinations (:func:`opdef_dtypes`): an output declared
with a fixed dtype has it in every column, one that follows an input has that input's, and
combinations with bfloat16 are left out on a platform without bfloat16; every column is ND.

main.cpp and op_host.cpp declare the op's inputs and attributes as C++ variables (:func:`variable`) beside
their own locals: a user's name that the templates use (``message``, ``tiling``, ``std``, ``uint8_t``; read from
their source, :func:`.jinja.template_names`) takes another.
"""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

from ... import dtypes
from . import cores, host
from .hostcode import CPP_KEYWORDS
from ..kir.host import Ident, Invoke
from ..names.naming import unclash
from ..render import ascendc, jinja
from ..render.emit import host_expr
from ..plan.tiling import TilingLayout, cann_name

GE_DTYPE = {"float32": "DT_FLOAT", "float16": "DT_FLOAT16", "bfloat16": "DT_BF16", "int8": "DT_INT8",
            "int16": "DT_INT16", "int32": "DT_INT32", "int64": "DT_INT64", "uint8": "DT_UINT8", "bool": "DT_BOOL"}
MSOPGEN_DTYPE = {"float32": "float", "float16": "float16", "bfloat16": "bfloat16", "int8": "int8",
                 "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8", "bool": "bool"}
ATTR_CPP = {"Int": ("int64_t", "0", "std::stoll(args[\"{n}\"])", "GetAttrPointer<int64_t>({i})"),
            "Float": ("double", "0.0", "std::stod(args[\"{n}\"])", "GetAttrPointer<float>({i})"),
            "Bool": ("bool", "false", "ParseBool(args[\"{n}\"])", "GetAttrPointer<bool>({i})"),
            "ListInt": ("ascdsl_host::Shape", "ascdsl_host::Shape{}", "", "GetListInt({i})"),
            "String": ("std::string", "std::string()", "args[\"{n}\"]", "GetStr({i})")}


TEMPLATE_NAMES = jinja.template_names("main.cpp.j2", "op_host.cpp.j2")


def variable(b, name: str) -> str:
    """The C++ variable of input or attribute ``name`` in main.cpp and op_host.cpp: the tiling function's
    parameter name (:func:`.hostcode.cpp_name`), unless the templates or build ``b`` (its tiling struct, its
    kernel) take that too."""
    return unclash(name, CPP_KEYWORDS | TEMPLATE_NAMES | {b.layout.struct_name, b.name})


def variables(b, names: Sequence[str]) -> list[dict]:
    return [{"name": n, "var": variable(b, n)} for n in names]


def fields(lay: TilingLayout) -> list[dict]:
    offsets = lay.numpy_dtype.fields
    return [{"name": f.name, "cpp": f.dtype.cpp, "dtype": f.dtype.name, "offset": offsets[f.name][1],
             "size": f.dtype.itemsize} for f in lay.fields]


def padding(lay: TilingLayout) -> list[int]:
    tail = lay.numpy_dtype.itemsize - sum(f.dtype.itemsize for f in lay.fields)
    return [tail] if tail else []


def host_call(b, fn, *extra: str) -> str:
    """A call of the generated host function ``fn`` from op_host.cpp or main.cpp, which declare the tensors and
    attributes as :func:`variable` (``extra``: the out-parameters' variables)."""
    args = [variable(b, p.name) if p.kind != "platform" else p.name for p in fn.params] + list(extra)
    return host_expr(Invoke(fn.name, tuple(map(Ident, args))))


def dtype_rows() -> list[dict]:
    return [{"name": d.name, "enum": host.DTYPE_ENUM[d.name]} for d in dtypes.ALL]


def output_dtype(b, output) -> str:
    source = output.dtype or b.op.inputs[0]
    return f"{variable(b, source)}.dtype" if source in b.op.inputs else host.dtype_enum(source)


def main_model(b, code: host.HostCode) -> dict:
    op = b.op
    attrs = []
    for a in op.attrs:
        cpp, zero, parse, _ = ATTR_CPP[a.type]
        default = zero if a.default is None else host.cpp(host.literal(
            tuple(a.default) if a.type == "ListInt" else a.default))
        var = variable(b, a.name)
        parse = (f"ParseInts(args[\"{a.name}\"], {var})" if a.type == "ListInt"
                 else f"{var} = {parse.format(n=a.name)}")
        attrs.append({"name": a.name, "declare": f"{cpp} {var}", "default": default, "parse": parse})
    workspace = code.workspace
    return {"op_type": op.op_type, "kernel_mode": kernel_mode(b), "source": b.source, "cann": b.name,
            "workspace_call": workspace_call(workspace, "tilingData"), "symbol": b.name,
            "workspace_scratch": workspace is not None and not workspace.programs,
            "pointers": b.pointers,
            "inputs": variables(b, op.inputs), "attrs": attrs, "dtypes": dtype_rows(), "platform": b.platform.name,
            "outputs": [{"name": o.name, "dtype": output_dtype(b, o)} for o in op.outputs],
            "struct": b.layout.struct_name,
            "shapes_call": host_call(b, code.shapes, "shapes", "message"),
            "tiling_call": host_call(b, code.tiling, "tilingData", "blockDim", "message")}


def workspace_call(workspace, tiling: str) -> str | None:
    """The call of the workspace function on the tiling variable ``tiling`` (None: there is none)."""
    return None if workspace is None else host_expr(Invoke(workspace.name, (Ident(tiling),)))


def variant_cores(b) -> tuple[dict[int, cores.Cores], cores.Cores]:
    """The cores each variant of build ``b`` runs on (:mod:`.cores`), by tiling key, and the most common
    (the first of equals; the vector cores without variants): the op kernel's default type."""
    kinds = {v.key: cores.of(v.kernel, b.platform) for v in b.variants}
    counts = Counter(kinds.values())
    return kinds, max(counts, key=counts.get) if counts else cores.VECTOR


def kernel_mode(b) -> str:
    """The CPU-debug ``KernelMode`` of ``main.cpp``'s launch: the default cores' mode, chosen by tiling key
    for the variants that run on others."""
    kinds, default = variant_cores(b)
    text = f"KernelMode::{default.mode}"
    for key, kind in reversed(kinds.items()):
        if kind.mode != default.mode:
            text = f"tilingData.tilingKey == {key} ? KernelMode::{kind.mode} : {text}"
    return text


def opdef_dtypes(b) -> list[tuple[str, ...]]:
    """The OpDef's dtype columns: one per declared combination (inputs, then outputs), each output
    as declared (a fixed dtype, or the dtype of the input it follows), without the combinations
    that need bfloat16 where the platform has none; duplicates dropped, order kept."""
    op = b.op
    columns = []
    for combo in op.dtypes:
        inputs = combo[:len(op.inputs)]
        follows = [o.dtype if o.dtype in op.inputs else None if o.dtype else op.inputs[0] for o in op.outputs]
        outputs = tuple(o.dtype if f is None else inputs[op.inputs.index(f)] for o, f in zip(op.outputs, follows))
        column = tuple(dtypes.lookup(d).name for d in (*inputs, *outputs))
        if column not in columns and (b.platform.has_bf16 or "bfloat16" not in column):
            columns.append(column)
    return columns


def op_kernel_model(b) -> dict:
    """The op kernel's entry: one ``TILING_KEY_IS`` branch for every key the generated tiling function can
    set, 0 (an empty input: one block is launched and does nothing) and every variant the build contains,
    each with its kernel type (:mod:`.cores`); the default type is the variants' most common one (the
    vector cores' without variants), the others are declared per key (``KERNEL_TASK_TYPE``). A variant's scratch
    pointers (``Launch(scratch=...)``) are offsets of the user workspace (:func:`.ascendc.scratch_args`). A MIX
    variant's branch runs its AIC and AIV classes on the user workspace (``GetUserWorkspace``: what the
    op_host asks for past the system workspace), as the direct-launch entry does (:func:`.ascendc.mix_launch`)."""
    names = ascendc.class_names(b.variants, b.platform)
    kinds, default = variant_cores(b)
    branches = [{"key": 0, "class_name": None, "vector_class": None, "kernel_type": default.kernel_type,
                 "what": default.what}]
    branches += [{"key": v.key, "class_name": names[v.key], "kernel_type": kinds[v.key].kernel_type,
                  "what": kinds[v.key].what,
                  "scratch": ascendc.scratch_args(v, b.op.tensor_count, "GetUserWorkspace(workspace)"),
                  "vector_class": ascendc.vector_class_name(v) if kinds[v.key] is cores.MIX else None,
                  **ascendc.mix_launch(v, b.platform)}
                 for v in b.variants]
    return {"branches": branches, "kernel_type": default.kernel_type}


def op_host_model(b, code: host.HostCode) -> dict:
    op = b.op
    attrs = []
    for i, a in enumerate(op.attrs):
        cpp, _, _, getter = ATTR_CPP[a.type]
        var = variable(b, a.name)
        store = ([f"attrs.{var}.ndim = static_cast<int32_t>(std::min<size_t>({var}->GetSize(), "
                  "ascdsl_host::MAX_DIMS));",
                  f"std::copy_n({var}->GetData(), attrs.{var}.ndim, attrs.{var}.dims);"]
                 if a.type == "ListInt" else [f"attrs.{var} = *{var};"])
        attrs.append({"name": a.name, "var": var, "cpp": cpp, "getter": getter.format(i=i), "store": store,
                      "def": attr_def(a)})
    columns = opdef_dtypes(b)
    ge = {"inputs": [], "outputs": []}
    for i, name in enumerate(op.inputs):
        ge["inputs"].append({"name": opdef_name(name), "types": [f"ge::{GE_DTYPE[c[i]]}" for c in columns]})
    for j, o in enumerate(op.outputs):
        source = o.dtype or op.inputs[0]
        ge["outputs"].append({"name": opdef_name(o.name),
                              "types": [f"ge::{GE_DTYPE[c[len(op.inputs) + j]]}" for c in columns],
                              "dtype": f"context->GetInputDataType({op.inputs.index(source)})"
                              if source in op.inputs else f"ge::{GE_DTYPE[dtypes.lookup(source).name]}"})
    workspace = code.workspace
    return {"b": b, "name": b.project_name, "op_type": op.project_op_type, "attrs": attrs,
            "workspace_call": workspace_call(workspace, "plain"),
            "workspace_scratch": workspace is not None and not workspace.programs,
            "attr_names": ", ".join(a.name for a in op.attrs),
            "fields": fields(b.layout), "params": variables(b, op.inputs), "ge": ge,
            "formats": ", ".join(["ge::FORMAT_ND"] * len(columns)),
            "dtype_cases": [{"ge": GE_DTYPE[d.name], "enum": host.DTYPE_ENUM[d.name]} for d in dtypes.ALL],
            "ub_reserve": b.platform.ub_bytes - b.platform.ub_budget_bytes, "soc": b.platform.soc,
            "log": f"{cann_name(op.project_op_type).upper()}_LOGE",
            "tiling_call": host_call(b, code.tiling, "plain", "blockDim", "message"),
            "shapes_call": host_call(b, code.shapes, "shapes", "message")}


def attr_def(a) -> str:
    kind = "REQUIRED" if a.default is None else "OPTIONAL"
    if a.default is None:
        value = ""
    elif a.type == "ListInt":
        value = "{" + ", ".join(map(str, a.default)) + "}"
    elif a.type == "Bool":
        value = "true" if a.default else "false"
    elif a.type == "String":
        value = json.dumps(a.default)
    else:
        value = repr(a.default)
    return f'this->Attr("{a.name}").AttrType({kind}).{a.type}({value});'


def msopgen(b) -> list[dict]:
    op = b.op
    columns = opdef_dtypes(b)

    def desc(name: str, index: int) -> dict:
        types = [MSOPGEN_DTYPE[c[index]] for c in columns]
        return {"name": opdef_name(name), "param_type": "required", "format": ["ND"] * len(types), "type": types}

    entry = {"op": op.project_op_type,
             "input_desc": [desc(n, i) for i, n in enumerate(op.inputs)],
             "output_desc": [desc(o.name, len(op.inputs) + j) for j, o in enumerate(op.outputs)]}
    if op.attrs:
        entry["attr"] = [{"name": a.name, "param_type": "required" if a.default is None else "optional",
                          "type": {"Int": "int", "Float": "float", "Bool": "bool", "ListInt": "list_int",
                                   "String": "string"}[a.type],
                          **({} if a.default is None else {"default_value": json_value(a.default)})}
                         for a in op.attrs]
    return [entry]


def json_value(value):
    if isinstance(value, dtypes.DType):
        return value.name
    if isinstance(value, tuple):
        return [json_value(v) for v in value]
    return value


def opdef_name(name: str) -> str:
    """CANN's lowerCamelCase tensor name: ``grad_output`` -> ``gradOutput``."""
    first, *rest = name.split("_")
    return first + "".join(w.capitalize() for w in rest)


def aclnn_signature(b) -> str:
    """The two-stage API CANN generates from the OpDef (inputs, attributes, outputs, in order)."""
    args = [opdef_name(n) for n in b.op.inputs] + [a.name for a in b.op.attrs] + \
        [opdef_name(o.name) for o in b.op.outputs]
    name = b.op.project_op_type
    return (f"aclnn{name}GetWorkspaceSize({', '.join(args)}, &workspaceSize, &executor)` and "
            f"`aclnn{name}(workspace, workspaceSize, executor, stream)")
