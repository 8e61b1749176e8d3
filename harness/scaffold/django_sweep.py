"""The rows a Django project's periodic sweep picks up, read from its query.

The sweep is a task ``CELERY_BEAT_SCHEDULE`` sends. Its first ``filter()``
/ ``Q()`` / ``exclude()``-free lookup that names the job's state says what a
row it picks up looks like: ``status=Status.REVIEWING`` (a choices member,
read as its value), ``status__in=[...]`` (the first), and a time column
compared with something older (``heartbeat_at__lt=now - ...``: a day ago).
"""
from __future__ import annotations

import ast
import json

from harness.scaffold.django_models import Model

OLDER = ("__lt", "__lte")


def schedule_tasks(trees: list[tuple[str, ast.Module]]) -> list[str]:
    """The task names ``CELERY_BEAT_SCHEDULE`` sends (``"contracts.tasks.sweep_stale_reviews"``)."""
    names = []
    for _, tree in trees:
        for node in tree.body:
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "CELERY_BEAT_SCHEDULE" \
                    and isinstance(node.value, ast.Dict):
                for entry in node.value.values:
                    task = _entry_task(entry)
                    if task:
                        names.append(task)
    return names


def _entry_task(entry: ast.expr) -> str | None:
    if not isinstance(entry, ast.Dict):
        return None
    for key, value in zip(entry.keys, entry.values):
        if isinstance(key, ast.Constant) and key.value == "task" and isinstance(value, ast.Constant):
            return str(value.value)
    return None


def picked_row(function: ast.FunctionDef, model: Model, state: str, enums: dict[str, dict[str, str]]) -> dict[str, str]:
    """Column -> Python expression of a row the sweep's query selects; {} when it cannot be read."""
    for node in ast.walk(function):
        if not (isinstance(node, ast.Call) and _called(node) in ("filter", "Q")):
            continue
        lookups = {k.arg: k.value for k in node.keywords if k.arg}
        if not any(name.split("__")[0] == state for name in lookups):
            continue
        return {column: value for name, expr in lookups.items()
                if (column := _column(model, name)) and (value := _value(name, expr, enums)) is not None}
    return {}


def _called(node: ast.Call) -> str:
    return node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")


def _column(model: Model, lookup: str) -> str | None:
    field = model.column(lookup.split("__")[0])
    return field.column if field is not None else None


def _value(lookup: str, expr: ast.expr, enums: dict[str, dict[str, str]]) -> str | None:
    if lookup.endswith(OLDER):
        return "LONG_AGO"
    if lookup.endswith("__isnull"):
        return "None" if isinstance(expr, ast.Constant) and expr.value is True else None
    if lookup.endswith("__in") and isinstance(expr, (ast.List, ast.Tuple, ast.Set)) and expr.elts:
        expr = expr.elts[0]
    elif "__" in lookup:
        return None
    if isinstance(expr, ast.Constant) and isinstance(expr.value, (str, int)):
        return json.dumps(expr.value)
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, (ast.Name, ast.Attribute)):
        enum = expr.value.attr if isinstance(expr.value, ast.Attribute) else expr.value.id
        value = enums.get(enum, {}).get(expr.attr)
        return json.dumps(value) if value is not None else None
    return None
