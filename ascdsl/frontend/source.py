"""A ``@jit`` function's source: its AST with exact file positions, its signature and locations."""
from __future__ import annotations

import ast
import dataclasses
import inspect
from dataclasses import dataclass
from typing import Any, Callable

from .. import language
from ..errors import CompilationError, Error, Loc, display_path, source_file
from ..semantics import SemanticError


@dataclass(frozen=True, eq=False)
class ParsedFunction:
    """The parsed source of a Python function; ``loc(node)`` gives a node's place in its file."""

    fn: Callable
    file: str
    tree: ast.FunctionDef
    indent: int
    signature: inspect.Signature
    constexprs: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.tree.name

    @property
    def params(self) -> tuple[str, ...]:
        return tuple(self.signature.parameters)

    @property
    def globals(self) -> dict[str, Any]:
        return self.fn.__globals__

    def closure(self) -> dict[str, Any]:
        """The closure cells of the function that are bound by now (a helper defined later in the
        enclosing function is found once it exists, as in Triton)."""
        cells = zip(self.fn.__code__.co_freevars, self.fn.__closure__ or ())
        out = {}
        for name, cell in cells:
            try:
                out[name] = cell.cell_contents
            except ValueError:  # not assigned yet
                pass
        return out

    def resolve(self, name: str) -> tuple[bool, Any]:
        """``(found, value)`` of a free name: closure cells first, then the module's globals."""
        if name in self.fn.__code__.co_freevars:
            closure = self.closure()
            if name in closure:
                return True, closure[name]
        if name in self.fn.__globals__:
            return True, self.fn.__globals__[name]
        return False, None

    def loc(self, node: ast.AST) -> Loc:
        return Loc(source_file(self.file), node.lineno, node.col_offset + 1 + self.indent)

    def error(self, node: ast.AST, message: str, hint: str | None = None) -> CompilationError:
        return CompilationError(self.loc(node), message, hint)

    def describe(self) -> str:
        """The signature as users wrote it, e.g. ``add(x_ptr, n, BLOCK: tl.constexpr)``."""
        return f"{self.name}(" + ", ".join(
            p + (": tl.constexpr" if p in self.constexprs else "") for p in self.params) + ")"

    def bind(self, args, kwargs) -> dict[str, Any]:
        """Arguments by parameter name, defaults applied (SemanticError on a mismatch)."""
        try:
            bound = self.signature.bind_partial(*args, **kwargs)
        except TypeError as e:
            raise SemanticError(f"wrong arguments for {self.name}(): {e}",
                                f"the signature is {self.describe()}") from None
        bound.apply_defaults()
        missing = [p for p in self.params if p not in bound.arguments]
        if missing:
            what = "constexpr argument" if missing[0] in self.constexprs else "argument"
            raise SemanticError(f"{self.name}() is missing the {what} `{missing[0]}`",
                                f"the signature is {self.describe()}")
        return dict(bound.arguments)


def parse_function(fn: Callable) -> ParsedFunction:
    """Parse ``fn``'s source so that node positions are its positions in its file."""
    try:
        lines, first = inspect.getsourcelines(fn)
        file = inspect.getsourcefile(fn)
    except (OSError, TypeError):
        file = None
    if file is None:
        raise Error(f"cannot read the source of `{fn.__name__}`: ascdsl compiles kernels from "
                    "their source, so define them in a .py file")
    prefix = lines[0][:len(lines[0]) - len(lines[0].lstrip())]
    # NOTE: re-indent by stripping the def's indent (keeping the column shift) and pad with blank
    # lines, so that AST positions are file positions.
    body = "".join(line[len(prefix):] if line.startswith(prefix) else line for line in lines)
    try:
        tree = ast.parse("\n" * (first - 1) + body, filename=file).body[0]
    except SyntaxError:
        tree = None
    if not isinstance(tree, ast.FunctionDef) or tree.name != fn.__name__:
        raise Error(f"cannot find the `def` of `{fn.__name__}` in {display_path(file)}: ascdsl compiles "
                    "kernels from their source, so define them in a .py file")
    parsed = ParsedFunction(fn, file, tree, len(prefix), inspect.signature(fn), ())
    arguments = tree.args
    for extra in (arguments.vararg, arguments.kwarg):
        if extra is not None:
            raise parsed.error(extra, f"variadic parameter `{extra.arg}` is not supported in a kernel",
                               "list every parameter explicitly")
    every = arguments.posonlyargs + arguments.args + arguments.kwonlyargs
    constexprs = tuple(a.arg for a in every if _is_constexpr_annotation(a.annotation, parsed.resolve))
    return dataclasses.replace(parsed, constexprs=constexprs)


def _is_constexpr_annotation(node: ast.expr | None, resolve: Callable[[str], tuple[bool, Any]]) -> bool:
    """Whether an annotation names ``tl.constexpr`` (resolved by name, so string annotations and
    ``from __future__ import annotations`` work)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        node = ast.parse(node.value, mode="eval").body
    path = []
    while isinstance(node, ast.Attribute):
        path.append(node.attr)
        node = node.value
    found, obj = resolve(node.id) if isinstance(node, ast.Name) else (False, None)
    if not found:
        return False
    for attr in reversed(path):
        obj = getattr(obj, attr, None)
    return obj is language.constexpr
