"""The generated reference pages of the docs site: one module per page, each with ``render() -> str``.

``scripts/reference_docs.py`` writes them (``make reference-docs``);
``tests/quality/test_reference_docs.py`` fails when a committed page is not
what its module renders from the code as it is now.
"""
from __future__ import annotations

import importlib

# page (under docs/) -> the module that renders it
PAGES = {
    "reference/config.md": "docgen.config",
    "reference/faults.md": "docgen.faults",
    "reference/failpoints.md": "docgen.failpoints",
    "reference/invariants.md": "docgen.invariants",
    "reference/cli.md": "docgen.cli",
    "reference/api.md": "docgen.api",
}


def render(page: str) -> str:
    """The Markdown of one page, as the code is now."""
    return importlib.import_module(PAGES[page]).render()
