"""Reader: a job row written through a repository class (``JobCrud(session=db).create(...)``).

Apps with a repository (CRUD) layer build the job's ORM object inside a
method, and their service function builds the repository and calls that
method, then queues the task. When no module-level function writes the
job table itself, such a service function is the one the scenarios submit
through: one that also queues a task (``delay`` / ``apply_async`` /
``send_task``, itself or through a function of the project) first, then the
one with the fewest arguments to fill.
"""
from __future__ import annotations

import ast

from harness.scaffold.findings import Findings, Function, Table
from harness.scaffold.jobs import job_columns
from harness.scaffold.project import Project
from harness.scaffold.submit import writes_to

QUEUEING_CALLS = {"delay", "apply_async", "send_task"}


def read(project: Project, found: Findings) -> None:
    job = job_columns(found)
    if found.submit is not None or job is None or any(writes_to(fn, job.table) for fn in found.functions):
        return
    writers = _writing_methods(project, job.table)
    if not writers:
        return
    tasks = {(t.module, t.function) for t in found.tasks}
    candidates = [fn for fn in found.functions if not fn.name.startswith("_") and fn.route is None
                  and (fn.module, fn.name) not in tasks and _uses(fn.body, writers)]
    if candidates:
        queueing = {fn.name for fn in found.functions if _queues(fn.body, set())}
        found.submit = min(candidates, key=lambda fn: (not _queues(fn.body, queueing), _to_fill(fn), fn.module))


def _writing_methods(project: Project, table: Table) -> dict[str, set[str]]:
    """Class name -> its methods that build a row of ``table``."""
    out: dict[str, set[str]] = {}
    for module, tree in project.modules:
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            for method in cls.body:
                if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                        writes_to(Function(module, method.name, [], method), table):  # type: ignore[arg-type]
                    out.setdefault(cls.name, set()).add(method.name)
    return out


def _uses(body: ast.AST, writers: dict[str, set[str]]) -> bool:
    """Builds one of the repository classes and calls one of its writing methods."""
    calls = [n for n in ast.walk(body) if isinstance(n, ast.Call)]
    built = {getattr(c.func, "id", None) for c in calls} & set(writers)
    methods = {getattr(c.func, "attr", None) for c in calls}
    return any(methods & writers[cls] for cls in built)


def _queues(body: ast.AST, queueing: set[str]) -> bool:
    return any(isinstance(n, ast.Call) and getattr(n.func, "attr", getattr(n.func, "id", None))
               in QUEUEING_CALLS | queueing for n in ast.walk(body))


def _to_fill(fn: Function) -> int:
    return sum(1 for _, _, has_default in fn.params if not has_default)
