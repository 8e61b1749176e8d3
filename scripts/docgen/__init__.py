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


# blocks of README.md made from the code: name -> the module whose ``readme_block()`` renders it; the block
# sits between "<!-- generated: NAME -->" and "<!-- end: NAME -->"
README_BLOCKS = {
    "invariants": "docgen.invariants",
}


def render(page: str) -> str:
    """The Markdown of one page, as the code is now."""
    return importlib.import_module(PAGES[page]).render()


def readme(current: str) -> str:
    """README.md's text ``current`` with every generated block as the code is now (a block's markers
    missing: a ValueError naming them)."""
    for name, module in README_BLOCKS.items():
        start, end = f"<!-- generated: {name} -->", f"<!-- end: {name} -->"
        if start not in current or end not in current:
            raise ValueError(f"README.md has no {start} ... {end} block")
        head, rest = current.split(start, 1)
        tail = rest.split(end, 1)[1]
        block = importlib.import_module(module).readme_block()
        current = f"{head}{start}\n{block.strip()}\n{end}{tail}"
    return current
