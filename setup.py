"""Packaging beyond pyproject.toml: ``templates/`` (top level of the repository) ships inside the
wheel as ``ascdsl/templates`` (``ascdsl.backend.render.jinja`` looks there first, then in the checkout)."""
from setuptools import find_namespace_packages, setup

setup(
    packages=[*find_namespace_packages(include=["ascdsl*"]), "ascdsl.templates"],  # the simulator's header folders too
    package_dir={"ascdsl.templates": "templates"},
)
