"""``ascdsl build``: one folder per operator with the kernel, its host code and a CANN op project.

``DIR/<op>/`` (``<op>`` is CANN's name for the op type, e.g. ``scale_add``)::

    kernel/<op>_kernel.cpp      the direct-launch kernel (one entry switching on the tiling key)
    kernel/<op>_tiling.h        the plain tiling struct and the tiling function (host C++)
    kernel/main.cpp             direct launch: CANN CPU debug mode (ASCENDC_CPU_DEBUG) or the NPU
    kernel/CMakeLists.txt
    op_project/<op>.json        msopgen's operator description
    op_project/op_host/...      BEGIN_TILING_DATA_DEF header, TilingFunc/InferShape/OpDef, the tiling function
    op_project/op_kernel/<op>.cpp
    op_project/README.md        how to build it inside msopgen's generated project
    ir/NN_<kernel>.ir           the IR of every variant
    manifest.json               kernels, variants, tiling keys and fields (ascdsl/schema/manifest.schema.json)
    report.txt                  a readable summary

Every file is a pure function of the op file and the platform, so two builds are byte-identical.
"""
from __future__ import annotations

import hashlib
import inspect
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from . import dtypes
from .backend import ascendc, host
from .backend.render import render
from .backend.tiling import TilingLayout, Variant, cann_name, layout, variants
from .errors import Error, display_path
from .ir import dump
from .op import Operator
from .platforms import Platform

MANIFEST_VERSION = 1
SCHEMA = Path(__file__).parent / "schema" / "manifest.schema.json"
GE_DTYPE = {"float32": "DT_FLOAT", "float16": "DT_FLOAT16", "bfloat16": "DT_BF16", "int8": "DT_INT8",
            "int16": "DT_INT16", "int32": "DT_INT32", "int64": "DT_INT64", "uint8": "DT_UINT8", "bool": "DT_BOOL"}
MSOPGEN_DTYPE = {"float32": "float", "float16": "float16", "bfloat16": "bfloat16", "int8": "int8",
                 "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8", "bool": "bool"}
ATTR_CPP = {"Int": ("int64_t", "0", "std::stoll(args[\"{n}\"])", "GetAttrPointer<int64_t>({i})"),
            "Float": ("double", "0.0", "std::stod(args[\"{n}\"])", "GetAttrPointer<float>({i})"),
            "Bool": ("bool", "false", "ParseBool(args[\"{n}\"])", "GetAttrPointer<bool>({i})"),
            "ListInt": ("ascdsl_host::Shape", "ascdsl_host::Shape{}", "", "GetListInt({i})"),
            "String": ("std::string", "std::string()", "args[\"{n}\"]", "GetStr({i})")}


@dataclass(frozen=True)
class OpBuild:
    """Everything the files of one operator are rendered from."""

    op: Operator
    platform: Platform
    variants: tuple[Variant, ...]
    layout: TilingLayout
    source: str  # the op file, as the generated comments name it

    @property
    def name(self) -> str:
        return cann_name(self.op.op_type)

    @property
    def pointers(self) -> tuple[str, ...]:
        return (*self.op.inputs, *(o.name for o in self.op.outputs))


def plan(op: Operator, platform: Platform) -> OpBuild:
    """Collect the op's kernel specialisations (by running its cases) and lay out the tiling struct."""
    from .cli import specializations
    kernels = specializations(op).kernels
    source = display_path(inspect.getsourcefile(inspect.unwrap(op.host)) or op.name)
    return OpBuild(op, platform, variants(kernels), layout(f"{op.op_type}TilingData", kernels), source)


def render_files(b: OpBuild) -> dict[str, str]:
    """Every output file of one operator: path (relative to ``DIR/<op>/``) -> text."""
    name, op = b.name, b.op
    tiling_h = host.tiling_header(op, b.layout, b.variants, b.platform, b.source)
    files = {
        f"kernel/{name}_kernel.cpp": ascendc.kernel_source(name, b.variants, b.layout, b.platform),
        f"kernel/{name}_tiling.h": tiling_h,
        "kernel/main.cpp": render("main.cpp.j2", **_main_model(b)),
        "kernel/CMakeLists.txt": render("kernel_cmake.txt.j2", name=name, platform=b.platform.name),
        f"op_project/{name}.json": json.dumps(_msopgen(b), indent=4) + "\n",
        f"op_project/op_host/{name}_tiling.h": render("op_host_tiling.h.j2", b=b, fields=_fields(b.layout),
                                                      padding=_padding(b.layout)),
        f"op_project/op_host/{name}_tiling_func.h": tiling_h,
        f"op_project/op_host/{name}.cpp": render("op_host.cpp.j2", **_op_host_model(b)),
        f"op_project/op_kernel/{name}.cpp": render(
            "op_kernel.cpp.j2", b=b, classes=ascendc.render_classes(b.variants, b.layout, b.platform),
            calls=[{"key": v.key, "class_name": v.class_name} for v in b.variants]),
        "op_project/README.md": render("op_project_readme.md.j2", b=b, name=name),
    }
    for i, v in enumerate(b.variants):
        files[f"ir/{v.key:02d}_{v.kernel.name}.ir"] = dump(v.kernel)
    files["manifest.json"] = json.dumps(manifest(b, files), indent=2) + "\n"
    files["report.txt"] = render("build_report.txt.j2", b=b, name=name, fields=_fields(b.layout),
                                 variants=[_variant_row(v, b.platform) for v in b.variants], files=sorted(files))
    return files


def build(ops: Sequence[Operator], out: str | Path, platform: Platform) -> list[Path]:
    """Write every op's files under ``out``; returns the op folders."""
    folders = []
    for op in ops:
        b = plan(op, platform)
        folder = Path(out) / b.name
        for rel, text in render_files(b).items():
            path = folder / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        folders.append(folder)
    return folders


# ---------------------------------------------------------------------- render models

def _fields(lay: TilingLayout) -> list[dict]:
    offsets = lay.numpy_dtype.fields
    return [{"name": f.name, "cpp": f.dtype.cpp, "dtype": f.dtype.name, "offset": offsets[f.name][1],
             "size": f.dtype.itemsize} for f in lay.fields]


def _padding(lay: TilingLayout) -> list[int]:
    tail = lay.numpy_dtype.itemsize - sum(f.dtype.itemsize for f in lay.fields)
    return [tail] if tail else []


def _host_args(params: Sequence[host.Param], *extra: str) -> str:
    return ", ".join([host._cpp_name(p.name) for p in params] + list(extra))


def _dtype_rows() -> list[dict]:
    return [{"name": d.name, "enum": host.DTYPE_ENUM[d.name]} for d in dtypes.ALL]


def _output_dtype(b: OpBuild, output) -> str:
    source = output.dtype or b.op.inputs[0]
    return f"{source}.dtype" if source in b.op.inputs else host.dtype_enum(source)


def _main_model(b: OpBuild) -> dict:
    op = b.op
    attrs = []
    for a in op.attrs:
        cpp, zero, parse, _ = ATTR_CPP[a.type]
        default = zero if a.default is None else host._literal(
            tuple(a.default) if a.type == "ListInt" else a.default).code
        parse = (f"ParseInts(args[\"{a.name}\"], {a.name})" if a.type == "ListInt"
                 else f"{a.name} = {parse.format(n=a.name)}")
        attrs.append({"name": a.name, "declare": f"{cpp} {a.name}", "default": default, "parse": parse})
    fn = host.lower_tiling(op, b.layout, b.variants, f"{op.op_type}Tiling")
    shapes = host.output_shapes(op, op.op_type)
    return {"op_type": op.op_type, "source": b.source, "cann": b.name, "symbol": b.name, "pointers": b.pointers,
            "inputs": op.inputs, "attrs": attrs, "dtypes": _dtype_rows(), "platform": b.platform.name,
            "outputs": [{"name": o.name, "dtype": _output_dtype(b, o)} for o in op.outputs],
            "struct": b.layout.struct_name,
            "shapes_call": f"{shapes.name}({_host_args(shapes.params, 'shapes', 'message')})",
            "tiling_call": f"{fn.name}({_host_args(fn.params, 'tilingData', 'blockDim', 'message')})"}


def _op_host_model(b: OpBuild) -> dict:
    op = b.op
    attrs = []
    for i, a in enumerate(op.attrs):
        cpp, _, _, getter = ATTR_CPP[a.type]
        store = ([f"attrs.{a.name}.ndim = static_cast<int32_t>(std::min<size_t>({a.name}->GetSize(), "
                  "ascdsl_host::MAX_DIMS));",
                  f"std::copy_n({a.name}->GetData(), attrs.{a.name}.ndim, attrs.{a.name}.dims);"]
                 if a.type == "ListInt" else [f"attrs.{a.name} = *{a.name};"])
        attrs.append({"name": a.name, "cpp": cpp, "getter": getter.format(i=i), "store": store,
                      "def": _attr_def(a)})
    fn = host.lower_tiling(op, b.layout, b.variants, f"{op.op_type}Tiling")
    shapes = host.output_shapes(op, op.op_type)
    ge = {"inputs": [], "outputs": []}
    for i, name in enumerate(op.inputs):
        ge["inputs"].append({"name": name, "types": [f"ge::{GE_DTYPE[c[i]]}" for c in op.dtypes]})
    for j, o in enumerate(op.outputs):
        source = o.dtype or op.inputs[0]
        ge["outputs"].append({"name": o.name, "types": [f"ge::{GE_DTYPE[c[len(op.inputs) + j]]}" for c in op.dtypes],
                              "dtype": f"context->GetInputDataType({op.inputs.index(source)})"
                              if source in op.inputs else f"ge::{GE_DTYPE[dtypes.lookup(source).name]}"})
    return {"b": b, "name": b.name, "attrs": attrs, "fields": _fields(b.layout), "params": op.inputs,
            "ge": ge, "formats": ", ".join(["ge::FORMAT_ND"] * len(op.dtypes)),
            "dtype_cases": [{"ge": GE_DTYPE[d.name], "enum": host.DTYPE_ENUM[d.name]} for d in dtypes.ALL],
            "ub_reserve": b.platform.ub_bytes - b.platform.ub_budget_bytes,
            "tiling_call": f"{fn.name}({_host_args(fn.params, 'plain', 'blockDim', 'message')})",
            "shapes_call": f"{shapes.name}({_host_args(shapes.params, 'shapes', 'message')})"}


def _attr_def(a) -> str:
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


def _msopgen(b: OpBuild) -> list[dict]:
    op = b.op

    def desc(name: str, index: int) -> dict:
        types = [MSOPGEN_DTYPE[c[index]] for c in op.dtypes]
        return {"name": name, "param_type": "required", "format": ["ND"] * len(types), "type": types}

    entry = {"op": op.op_type,
             "input_desc": [desc(n, i) for i, n in enumerate(op.inputs)],
             "output_desc": [desc(o.name, len(op.inputs) + j) for j, o in enumerate(op.outputs)]}
    if op.attrs:
        entry["attr"] = [{"name": a.name, "param_type": "required" if a.default is None else "optional",
                          "type": {"Int": "int", "Float": "float", "Bool": "bool", "ListInt": "list_int",
                                   "String": "string"}[a.type],
                          **({} if a.default is None else {"default_value": _json_value(a.default)})}
                         for a in op.attrs]
    return [entry]


def _json_value(value):
    if isinstance(value, dtypes.DType):
        return value.name
    if isinstance(value, tuple):
        return [_json_value(v) for v in value]
    return value


def _variant_row(v: Variant, platform: Platform) -> dict:
    pointers = [p.type.dtype.element_ty.name for p in v.kernel.params if isinstance(p.type.dtype, dtypes.PointerType)]
    scalars = {n: p.type.dtype.name for n, p in zip(v.kernel.param_names, v.kernel.params)
               if isinstance(p.type.dtype, dtypes.DType)}
    return {"key": v.key, "kernel": v.kernel.name, "class": v.class_name,
            "constexprs": {k: _json_value(c) for k, c in v.kernel.constexprs},
            "pointer_dtypes": pointers, "scalar_dtypes": scalars,
            "ir": f"ir/{v.key:02d}_{v.kernel.name}.ir", "ub_plan": _ub_plan(v, platform)}


def _ub_plan(v: Variant, platform: Platform) -> dict | None:
    """The variant's UB buffers after the backend passes (None if the backend cannot plan it)."""
    from .passes import run_passes, ubplan
    try:
        return ubplan.plan(run_passes(v.kernel, platform)).as_dict()
    except Error:
        return None


def manifest(b: OpBuild, files: dict[str, str]) -> dict:
    op, lay = b.op, b.layout
    return {
        "manifest_version": MANIFEST_VERSION,
        "op": {"name": op.name, "op_type": op.op_type, "cann_name": b.name, "source": b.source,
               "inputs": list(op.inputs), "outputs": [o.name for o in op.outputs],
               "attrs": [{"name": a.name, "type": a.type, "default": _json_value(a.default)} for a in op.attrs],
               "dtypes": [list(c) for c in op.dtypes]},
        "platform": {"name": b.platform.name, "vector_core_count": b.platform.vector_core_count,
                     "ub_bytes": b.platform.ub_bytes, "ub_budget_bytes": b.platform.ub_budget_bytes},
        "tiling": {"struct": lay.struct_name, "size": lay.numpy_dtype.itemsize,
                   "fields": [{k: f[k] for k in ("name", "dtype", "offset", "size")} for f in _fields(lay)]},
        "kernels": [{"name": k, "variants": [v.key for v in b.variants if v.kernel.name == k]}
                    for k in dict.fromkeys(v.kernel.name for v in b.variants)],
        "variants": [_variant_row(v, b.platform) for v in b.variants],
        "files": {path: hashlib.sha256(text.encode()).hexdigest() for path, text in sorted(files.items())},
    }


# ---------------------------------------------------------------------- verification on the simulator

@dataclass(frozen=True)
class VariantCheck:
    """One variant run through ``kernel/main.cpp`` on the simulator with a case that selects it."""

    key: int
    case: str  # the case label, or "" when no case selects the variant
    ok: bool
    message: str = ""


def _case_descs(op: Operator, case) -> tuple[tuple, dict]:
    from .op import TensorDesc
    arrays = case.inputs()
    attrs = {a.name: a.default for a in op.attrs} | dict(case.attrs)
    return arrays, tuple(TensorDesc.of(a) for a in arrays), attrs


def verify_main(b: OpBuild, folder: Path, workdir: Path) -> list[VariantCheck]:
    """Compile ``kernel/main.cpp`` with the kernel on ``ascdsl.sim`` and run, for every variant, the
    first op case that selects it; outputs are compared with the op's reference."""
    from . import sim
    from .testing import assert_close
    kernel = folder / "kernel"
    workdir.mkdir(parents=True, exist_ok=True)
    main = workdir / "cpu_main.cpp"  # CANN's CPU build defines ASCENDC_CPU_DEBUG on the command line
    main.write_text(f'#define ASCENDC_CPU_DEBUG 1\n#include "{(kernel / "main.cpp").resolve()}"\n')
    chosen: dict[int, object] = {}
    for case in b.op.cases:
        _, descs, attrs = _case_descs(b.op, case)
        got = host.python_tiling(b.op, b.layout, b.variants, b.platform, descs, attrs)
        key = dict(got.fields).get("tilingKey", 0) if got.status == 0 else 0
        chosen.setdefault(key, case)
    checks = []
    for v in b.variants:
        case = chosen.get(v.key)
        if case is None:
            checks.append(VariantCheck(v.key, "", False, "no case selects this variant"))
            continue
        arrays, descs, attrs = _case_descs(b.op, case)
        run = workdir / f"v{v.key}"
        run.mkdir(parents=True, exist_ok=True)
        argv = [str(run)]
        for name, a, d in zip(b.op.inputs, arrays, descs):
            a.tofile(run / f"{name}.bin")
            argv.append(f"{name}={d.dtype.name}:{','.join(map(str, d.shape))}")
        argv += [f"{a.name}={_arg_text(attrs[a.name])}" for a in b.op.attrs]
        try:
            res = sim.run_main(main, [kernel / f"{b.name}_kernel.cpp"], platform=b.platform.name, argv=argv)
            if res.returncode != 0:
                raise Error(f"main.cpp exited with {res.returncode}: {res.stderr.strip()[-500:]}")
            expected = b.op.reference(*(a.astype(np.float64) for a in arrays), **dict(case.attrs))
            expected = expected if isinstance(expected, tuple) else (expected,)
            for o, e, a in zip(b.op.outputs, expected, arrays):
                dt = b.op.output_dtype(o, descs)
                out = np.fromfile(run / f"{o.name}.bin", dt.np).reshape(np.shape(e))
                assert_close(out, e, dt)
            checks.append(VariantCheck(v.key, case.label, True))
        except (Error, AssertionError) as e:
            checks.append(VariantCheck(v.key, case.label, False, str(e)))
    return checks


def _arg_text(value) -> str:
    if isinstance(value, (tuple, list)):
        return ",".join(map(str, value))
    return repr(float(value)) if isinstance(value, float) else str(int(value)) if isinstance(value, bool) else str(value)
