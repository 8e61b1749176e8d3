"""Read a project without running it: what ``jobquake init`` can infer from the source alone.

``scan`` runs every reader of ``readers.READERS`` over the project; each
adds what it recognises to one ``Findings``. Nothing is imported or run.
"""
from __future__ import annotations

from pathlib import Path

from harness.scaffold.findings import Findings, Function, Table, Task
from harness.scaffold.project import Project, module_name, python_files
from harness.scaffold.readers import READERS

__all__ = ["Findings", "Function", "Table", "Task", "module_name", "python_files", "scan"]


def scan(root: Path) -> Findings:
    """Everything ``jobquake init`` can infer about the project at ``root``."""
    project = Project(root)
    found = Findings(root=project.root)
    for reader in READERS:
        reader(project, found)
    return found
