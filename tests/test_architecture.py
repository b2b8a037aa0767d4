"""The package's shape (issue 25, docs/design.md): short modules, imports at module level, no import circle."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ascdsl"
MODULES = {".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__"): p
           for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, path: Path) -> set[str]:
    """The package's modules that module ``name`` imports at its top level (``from P import m`` names module
    ``P.m`` where it is one, else ``P``)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in MODULES}
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1] + [node.module or ""]).rstrip(".") \
                if node.level else node.module
            if base in MODULES:
                out |= {f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names}
    return out - {name}


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root), on.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w), on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while not component or component[-1] != v:
                    component.append(stack.pop())
                    on.discard(component[-1])
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_no_module_is_over_600_lines():
    long = {name: n for name, p in MODULES.items() if (n := len(p.read_text().splitlines())) > 600}
    assert not long, long


def test_every_import_is_at_module_level():
    """No function-local import (the way to hide an import circle)."""
    local = [f"{name}:{s.lineno}" for name, p in MODULES.items() for f in ast.walk(ast.parse(p.read_text()))
             if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) for s in ast.walk(f)
             if isinstance(s, (ast.Import, ast.ImportFrom))]
    assert not local, local


def test_no_import_circle():
    edges = {name: _imports(name, p) for name, p in MODULES.items()}
    assert "ascdsl.backend.render.ascendc" in edges["ascdsl.backend.lift.lift"]  # the walk sees imports
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert not _circles(edges), _circles(edges)
