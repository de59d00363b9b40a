"""Sphinx configuration of the dejavu-env documentation site (``bash .ci/docs.sh`` builds it).

Pages are Markdown (MyST); docstrings are reStructuredText, read by autodoc. The env pages
under ``envs/`` and the API stubs under ``api/`` are generated at build time (see
``_ext/envpages.py`` and autosummary), so they always match the code.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
# Sphinx finds a project's own extensions on sys.path: docs/_ext holds them. The packages
# documented are the installed ones (the README's `pip install -e`, i.e. this checkout).
sys.path.insert(0, str(DOCS / "_ext"))

import dejavu_env  # noqa: E402

project = "dejavu-env"
author = "dejavu-env contributors"
copyright = "2026, dejavu-env contributors"
release = dejavu_env.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "envpages",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "scripts", "_ext"]
root_doc = "index"

myst_enable_extensions = ["colon_fence", "deflist"]
# GitHub-style anchors for headings, so ``rules.md#grid-reveal`` works on GitHub and here alike.
myst_heading_anchors = 4

autosummary_generate = True
autosummary_imported_members = False
# Document each object where it is defined: a package's re-exports (its ``__all__``) would give
# every class two targets and make cross-references ambiguous.
autodoc_default_options = {"members": True, "show-inheritance": True, "ignore-module-all": True}
# Inherited gymnasium docstrings (``step``, ``reset``) are Google style; the env pages say it better.
autodoc_inherit_docstrings = False
autodoc_member_order = "bysource"
autodoc_typehints = "description"
# The learners' stack is not needed to read the docstrings: a docs build needs no torch.
autodoc_mock_imports = ["torch", "stable_baselines3", "sb3_contrib", "ray", "tensorboard", "pyspiel", "open_spiel"]
napoleon_google_docstring = False
napoleon_numpy_docstring = False



def _skip_foreign_docstrings(app, what, name, obj, options, lines) -> None:
    """Drop the docstring of a builtin that a dataclass field holds as its default (``input``)."""
    if inspect.isbuiltin(obj) and not name.startswith("builtins."):
        lines.clear()


def setup(app) -> None:
    app.connect("autodoc-process-docstring", _skip_foreign_docstrings)


html_theme = "furo"
html_title = f"dejavu-env {release}"
html_static_path = ["_static"]
html_theme_options = {"source_repository": "", "navigation_with_keys": True}
# Wide tables (the results pages) scroll sideways in a smaller type instead of being cut.
html_css_files = ["tables.css"]
