"""The one Jinja environment: Python builds render models, templates in ``templates/`` lay them out.

Templates live at the repository's top level (``templates/``); a wheel ships them as
``ascdsl/templates`` (see ``setup.py``), which is looked at first. Set ``ASCDSL_TEMPLATES`` to use
another folder. ``StrictUndefined``: a missing variable is an error, never an empty string.
"""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import jinja2


def _templates() -> Path:
    if os.environ.get("ASCDSL_TEMPLATES"):
        return Path(os.environ["ASCDSL_TEMPLATES"])
    package = Path(__file__).resolve().parents[1]
    installed = package / "templates"
    return installed if installed.is_dir() else package.parent / "templates"


TEMPLATES = _templates()


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )


def render(template: str, **model) -> str:
    """Render ``templates/<template>`` with ``model``."""
    return environment().get_template(template).render(**model)
