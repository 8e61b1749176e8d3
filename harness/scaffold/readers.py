"""The readers ``scan`` runs, in order: each adds what it recognises to the one ``Findings``.

A reader is a function ``read(project, found)``: it looks at the project
(``Project``: the folder, its Python files parsed once) and fills
``Findings`` (tables, tasks, env vars, processes...), which ``render``
turns into the config and the scenarios. Another kind of app (another
framework's settings, models or migrations) is one more reader module
appended here; everything after the findings stays as it is.
"""
from __future__ import annotations

from typing import Callable

from harness.scaffold import django_read, read_pyproject, read_python
from harness.scaffold.findings import Findings
from harness.scaffold.project import Project

Reader = Callable[[Project, Findings], None]

READERS: list[Reader] = [
    read_pyproject.read,
    read_python.read,
    django_read.read,
]
