"""A g++ harness that runs a generated tiling function on cases read from stdin.

Each stdin line is one case: for every parameter of the function, in order, a tensor is
``dtype_code ndim dims...``, an Int/Bool attribute an integer, a Float attribute a number, a String
attribute a word, a ListInt attribute ``n values...``, and the platform ``vector_cores ub_bytes``. Each output line is
``status blockDim workspace-bytes tiling-bytes-hex shape-status;shape;...|message``.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

from ascdsl import dtypes
from ascdsl.backend.host.host import HostFunction, ShapeFunction, WorkspaceFunction

READ = {
    "tensor": "ascdsl_host::TensorDesc {n}; {{ int32_t d; std::cin >> d >> {n}.shape.ndim; {n}.dtype = "
              "static_cast<ascdsl_host::DType>(d); for (int i = 0; i < {n}.shape.ndim; ++i) std::cin >> "
              "{n}.shape.dims[i]; }}",
    "Int": "int64_t {n}; std::cin >> {n};",
    "Bool": "int {n}_raw; std::cin >> {n}_raw; bool {n} = {n}_raw != 0;",
    "Float": "double {n}; std::cin >> {n};",
    "String": "std::string {n}; std::cin >> {n};",
    "ListInt": "ascdsl_host::Shape {n}; std::cin >> {n}.ndim; for (int i = 0; i < {n}.ndim; ++i) std::cin >> "
               "{n}.dims[i];",
    "platform": "ascdsl_host::Platform {n}; std::string {n}_name; std::cin >> {n}_name >> {n}.vectorCoreNum >> "
                "{n}.aiCoreNum >> {n}.ubSize >> {n}.ubBudget >> {n}.hasBf16; {n}.name = {n}_name.c_str();",
}


def harness_source(header: str, tiling: HostFunction, shapes: ShapeFunction, struct: str, outputs: int,
                   workspace: WorkspaceFunction | None = None) -> str:
    reads = [READ[p.attr_type or p.kind].format(n=p.name) for p in tiling.params]
    workspace_bytes = f"{workspace.name}(tiling)" if workspace is not None else "0"
    call = ", ".join([p.name for p in tiling.params] + ["tiling", "blockDim", "message"])
    shape_call = ", ".join([p.name for p in shapes.params] + ["shapes", "shapeMessage"])
    return f"""#include <iostream>
#include "{header}"
int main() {{
    std::string line;
    while (std::cin.peek() != EOF && std::cin >> std::ws && std::cin.peek() != EOF) {{
        {' '.join(reads)}
        {struct} tiling{{}};
        uint32_t blockDim = 0;
        std::string message, shapeMessage;
        const int32_t status = {tiling.name}({call});
        ascdsl_host::Shape shapes[8];
        const int32_t shapeStatus = {shapes.name}({shape_call});
        std::cout << status << ' ' << blockDim << ' ' << (status == 0 ? {workspace_bytes} : 0) << ' ';
        const unsigned char* raw = reinterpret_cast<const unsigned char*>(&tiling);
        for (size_t i = 0; i < sizeof(tiling); ++i) {{ char b[3]; std::snprintf(b, 3, "%02x", raw[i]); std::cout << b; }}
        std::cout << ' ' << shapeStatus;
        for (int i = 0; i < {outputs}; ++i) std::cout << ';' << ascdsl_host::FormatShape(shapes[i]);
        std::cout << '|' << message << '\\n';
    }}
}}
"""


def case_line(tiling: HostFunction, inputs: dict, attrs: dict, platform) -> str:
    words = []
    for p in tiling.params:
        if p.kind == "tensor":
            desc = inputs[p.name]
            words += [dtypes.ALL.index(desc.dtype), len(desc.shape), *desc.shape]
        elif p.kind == "platform":
            words += [platform.name, platform.vector_core_count, platform.ai_core_count, platform.ub_bytes,
                      platform.ub_budget_bytes, int(platform.has_bf16)]
        elif p.attr_type == "ListInt":
            words += [len(attrs[p.name]), *attrs[p.name]]
        elif p.attr_type == "Float":
            words.append(repr(float(attrs[p.name])))
        elif p.attr_type == "String":
            words.append(attrs[p.name])  # one word
        else:
            words.append(int(attrs[p.name]))
    return " ".join(map(str, words))


def compile_and_run(workdir: Path, header_text: str, source: str, lines: list[str]) -> list[str]:
    (workdir / "tiling.h").write_text(header_text)
    (workdir / "harness.cpp").write_text(source)
    exe = workdir / "harness"
    subprocess.run(["g++", "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-o", str(exe),
                    str(workdir / "harness.cpp")], check=True, capture_output=True, text=True)
    out = subprocess.run([str(exe)], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True)
    return out.stdout.splitlines()
