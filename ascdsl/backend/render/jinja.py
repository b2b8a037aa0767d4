"""The one Jinja environment: Python builds render models, templates in ``templates/`` lay them out.

Templates live at the repository's top level (``templates/``); a wheel ships them as
``ascdsl/templates`` (see ``setup.py``), which is looked at first. Set ``ASCDSL_TEMPLATES`` to use
another folder. ``StrictUndefined``: a missing variable is an error, never an empty string.

:func:`render_located` returns the text with the DSL location of each generated line that names one
(its ``// file.py:LINE`` comment): render models hold such lines as :class:`Located` values, and a
rendered text inserted into another keeps its locations (:class:`Rendered`). The line numbers come
from the rendering itself (the newlines of the output before each value), never from reading the
text back.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import jinja2

from ...errors import Loc


@dataclass(frozen=True)
class Located:
    """One generated line (``text``, no newline) and the DSL location its comment names; ``depth``: its
    nesting in the render model's blocks (the template indents it)."""

    text: str
    loc: Loc | None = None
    depth: int = 0

    def __str__(self) -> str:
        return self.text


class Rendered(str):
    """A rendered text (a ``str``) and ``locs``: ``(line number from 1, Loc)`` of each line that names
    a DSL location."""

    locs: tuple[tuple[int, Loc], ...]

    def __new__(cls, text: str, locs=()):
        out = super().__new__(cls, text)
        out.locs = tuple(locs)
        return out


@dataclass
class _Recorder:
    line: int = 0  # newlines output so far
    locs: list = field(default_factory=list)


_RECORDING: list[_Recorder] = []  # the renders under way (innermost last)


def _finalize(value):
    """What ``{{ value }}`` outputs; a :class:`Located` or :class:`Rendered` value's locations are
    recorded at the line the output has reached."""
    rec = _RECORDING[-1] if _RECORDING else None
    if isinstance(value, Located):
        if rec is not None and value.loc is not None:
            rec.locs.append((rec.line + 1, value.loc))
        return value.text
    if isinstance(value, Rendered):
        if rec is not None:
            rec.locs.extend((rec.line + n, loc) for n, loc in value.locs)
        return str(value)
    return value


def _templates() -> Path:
    if os.environ.get("ASCDSL_TEMPLATES"):
        return Path(os.environ["ASCDSL_TEMPLATES"])
    package = Path(__file__).resolve().parents[2]
    installed = package / "templates"
    return installed if installed.is_dir() else package.parent / "templates"


TEMPLATES = _templates()


@lru_cache(maxsize=None)
def environment(folder: Path = TEMPLATES) -> jinja2.Environment:
    """The environment of the templates in ``folder`` (the package's by default)."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(folder)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
        finalize=_finalize,
    )


def render(template: str, **model) -> str:
    """Render ``templates/<template>`` with ``model``."""
    return environment().get_template(template).render(**model)


def render_file(path: str | os.PathLike, **model) -> str:
    """Render the template file ``path`` (an op's own, beside its module) with ``model``, under the
    package templates' settings (``StrictUndefined``: a missing variable is an error)."""
    path = Path(path).resolve()
    return environment(path.parent).get_template(path.name).render(**model)


def render_located(template: str, **model) -> Rendered:
    """:func:`render` with the line -> DSL location map of the output (see :class:`Rendered`). Values
    are output one by one at the top level of a template (macros buffer theirs, so located lines are
    not output from macros)."""
    rec = _Recorder()
    _RECORDING.append(rec)
    try:
        parts = []
        for chunk in environment().get_template(template).generate(**model):
            parts.append(chunk)
            rec.line += chunk.count("\n")
    finally:
        _RECORDING.pop()
    return Rendered("".join(parts), tuple(rec.locs))


def _code(template: str) -> str:
    """The C++ text of ``templates/<template>`` without Jinja tags, comments, literals and preprocessor lines."""
    env = environment()
    text = env.loader.get_source(env, template)[0]
    for pattern in (r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", r"//[^\n]*|/\*.*?\*/", r'"(?:\\.|[^"\\\n])*"',
                    r"'(?:\\.|[^'\\\n])+'", r"^\s*#\s*include[^\n]*|^\s*#\s*\w+"):
        text = re.sub(pattern, " ", text, flags=re.S | re.M)
    return text


def template_names(*templates: str) -> frozenset[str]:
    """The identifiers the C++ text of ``templates`` uses unqualified (what it declares, calls, or names a
    namespace with): outside Jinja tags, comments, literals and preprocessor directives, and not after
    ``.``, ``->`` or ``::``. A user's variable of one of these names would shadow it or clash with it."""
    return frozenset(name for template in templates
                     for name in re.findall(r"(?<![.\w])(?<!->)(?<!::)[A-Za-z_]\w*", _code(template)))


def declared_names(template: str) -> frozenset[str]:
    """The names the C++ text of ``template`` declares in its namespace (a header: its types, functions,
    constants and the enumerators of its unscoped enums), not the locals and members inside their braces."""
    code, outer, depth = _code(template), [], 0
    for ch in code:
        depth -= ch == "}"
        outer.append(ch if depth <= 1 or ch in "{}" else " ")
        depth += ch == "{"
    outer_code = re.sub(r"\([^()]*\)", "()", re.sub(r"<[^<>;{}]*>", " ", "".join(outer)))
    names = re.findall(r"(?<![.\w])(?<!->)(?<!::)([A-Za-z_]\w*)\s*(?=[({=:;])", outer_code)
    enumerators = [re.findall(r"([A-Za-z_]\w*)\s*(?:=[^,}]*)?(?:,|\s*$)", body)
                   for body in re.findall(r"\benum\s+(?!class\b)\w+[^{;]*\{([^}]*)\}", code)]
    return frozenset(names) | frozenset(n for e in enumerators for n in e)
