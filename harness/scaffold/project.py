"""The project ``jobquake init`` reads: its folder, its own Python files, each parsed once.

Every Python file of the project (not its tests, virtualenvs or build
folders) is parsed with ``ast``; nothing is imported, so a project whose
modules need their environment at import time is read as safely as any.
"""
from __future__ import annotations

import ast
from functools import cached_property
from pathlib import Path

SKIP_DIRS = {".git", ".venv", "venv", "env", "node_modules", "build", "dist", "__pycache__", "scenarios",
             "tests", "test", ".jobquake", ".tox", ".mypy_cache", ".pytest_cache", "site-packages"}


class Project:
    """A project folder as the readers see it."""

    def __init__(self, root: Path):
        self.root = Path(root).resolve()

    @cached_property
    def modules(self) -> list[tuple[str, ast.Module]]:
        """(dotted module name, syntax tree) of every Python file of the project that parses."""
        parsed = []
        for path in python_files(self.root):
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            except (SyntaxError, UnicodeDecodeError):
                continue  # not ours to judge; the scan reads what it can
            parsed.append((module_name(self.root, path), tree))
        return parsed


def python_files(root: Path) -> list[Path]:
    """The project's own Python files, sorted."""
    files = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if any(part in SKIP_DIRS or part.startswith(".") for part in parts[:-1]):
            continue
        if parts[-1] in ("setup.py", "conftest.py", "noxfile.py") or parts[-1].startswith("test_"):
            continue
        files.append(path)
    return files


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts and parts[0] == "src":
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)
