"""``job_id_from``: where the instrumentation finds a task's job id among its arguments.

The job task is the one with a parameter named for the job's id: ``job_id``,
``<something>_job_id``, ``<job table>_id`` (``recap_id`` for ``recaps``) or the
job table's id column. Callers that pass it by keyword (``.delay(job_id=...)``,
``apply_async(kwargs=...)``) get the name form, which reads the keyword
arguments first and then the parameter's position; callers that pass it by
position get ``args[N]``. With no such parameter, the first task's first argument.
"""
from __future__ import annotations

import json

from harness.config import BY_KEY
from harness.scaffold.findings import Findings, Task
from harness.scaffold.jobs import JobColumns

ORDINALS = ("first", "second", "third", "fourth", "fifth")


def lines(found: Findings, job: JobColumns | None) -> list[str]:
    """The commented ``job_id_from`` line (commented out when this jobquake does not have the key)."""
    task = next((t for t in found.tasks if t.params), None)
    if task is None:
        return []
    chosen = next(((t, p) for t in found.tasks for p in t.params if _names_the_job(p, job)), None)
    index, expression = 0, "args[0]"
    if chosen is not None:
        task, param = chosen
        index = task.params.index(param)
        by_keyword = param in found.task_call_keywords.get(task.function, set())
        expression = param if by_keyword else f"args[{index}]"
    signature = f"# found: task {task.name or task.function}({', '.join(task.params)}): the job id is its "
    if expression == "args[0]":
        text = signature + "first argument"
    elif expression.startswith("args["):
        text = signature + f"{_ordinal(index)}, {task.params[index]!r}"
    else:
        text = signature + (f"parameter {expression!r}, which its callers pass by keyword: read by name (the "
                            "keyword arguments first, then its position)")
    line = f"job_id_from = {json.dumps(expression)}"
    return [text] + ([line] if "job_id_from" in BY_KEY else [f"# {line}  (a later jobquake reads this key)"])


def _names_the_job(param: str, job: JobColumns | None) -> bool:
    name = param.lower()
    if name == "job_id" or name.endswith("_job_id"):
        return True
    if job is None:
        return False
    table = job.table.name.lower()
    singular = table[:-1] if table.endswith("s") else table
    key = next((c for c, primary in job.table.columns if primary), "")
    return name in (f"{table}_id", f"{singular}_id") or (name == key.lower() and name != "id")


def _ordinal(index: int) -> str:
    return f"{ORDINALS[index]} argument" if index < len(ORDINALS) else f"argument number {index + 1}"
