"""The docs' Python blocks as modules mypy can check with the project's config.

A whole scenario is checked as written. A fragment (``jq.faults.kill_worker(...)``
lines) becomes the body of ``def block(jq: Run) -> None``, and each name it
uses without defining (``job_id``, ``refapp``: the scenario's own values) is
declared ``Any``: what is checked is the harness's API, not the example's
surroundings. Blocks may leave their own functions' parameters unannotated (a
fixture like ``refapp``), as a newcomer's first scenario does.
"""
from __future__ import annotations

import ast
import builtins
import textwrap
from pathlib import Path

from tests.common.typecheck import Finding
from tests.docs.blocks import Block
from tests.docs.python_blocks import is_scenario

# as a comment in each block's module, not on the command line: flags there would change every module's
# options and send mypy through the whole harness again instead of reading it from the cache
RELAXED = "# mypy: allow-untyped-defs, allow-incomplete-defs\n"
HEADER = "from typing import Any\n\nfrom harness import Run\n\n\ndef block(jq: Run) -> None:\n"
BODY_INDENT = "    "


def _free_names(tree: ast.Module) -> list[str]:
    """Names the block reads but never binds (nor imports, nor takes as a parameter)."""
    bound = {"jq", *dir(builtins)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return sorted(read - bound)


def as_module(block: Block) -> str:
    """The block as a module: itself when a scenario, else wrapped in ``block(jq)``."""
    if is_scenario(block.text):
        return RELAXED + block.text
    tree = ast.parse(block.text)
    declared = "".join(f"{BODY_INDENT}{name}: Any = ...\n" for name in _free_names(tree))
    return RELAXED + HEADER + declared + textwrap.indent(block.text, BODY_INDENT) + f"\n{BODY_INDENT}pass\n"


def write(blocks: list[Block], folder: Path) -> dict[Path, Block]:
    """One module per block in ``folder``; its path -> the block, to name the page of each finding."""
    folder.mkdir(parents=True)
    files = {}
    for number, block in enumerate(blocks):
        path = folder / f"block_{number}.py"
        path.write_text(as_module(block), encoding="utf-8")
        files[path] = block
    return files


def line_of(finding: Finding) -> str:
    """The finding's line as written (a fragment's line numbers are shifted by its wrapper)."""
    return finding.path.read_text(encoding="utf-8").splitlines()[finding.line - 1].strip()
