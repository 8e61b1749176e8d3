"""Reader: how the code queues each Celery task, by keyword or by position.

A task queued as ``summarise.delay(job_id=...)``, ``.apply_async(kwargs={"job_id": ...})`` or
``.s(job_id=...)`` receives its job id as a keyword argument: the instrumentation must
then read it by name, not as ``args[N]``. Recorded per task function: the keyword names its
callers pass.
"""
from __future__ import annotations

import ast

from harness.scaffold.findings import Findings
from harness.scaffold.project import Project
from harness.scaffold.syntax import keywords

QUEUEING = {"delay", "apply_async", "s", "si", "signature"}


def read(project: Project, found: Findings) -> None:
    tasks = {t.function for t in found.tasks}
    for _, tree in project.modules:
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in QUEUEING):
                continue
            task = node.func.value
            name = task.attr if isinstance(task, ast.Attribute) else getattr(task, "id", None)
            if name in tasks:
                found.task_call_keywords.setdefault(name, set()).update(_keywords(node))


def _keywords(node: ast.Call) -> set[str]:
    given = {k.arg for k in node.keywords if k.arg}
    packed = keywords(node).get("kwargs") if node.func.attr == "apply_async" else None  # type: ignore[attr-defined]
    if isinstance(packed, ast.Dict):
        given |= {k.value for k in packed.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    return given
