"""Where a task's job id is: ``job_id_from`` parsed once, then resolved per task run.

Forms: ``""`` (the Celery task id), ``"args[N]"`` (a positional argument),
a parameter name (a keyword argument, or the positional argument bound to
that parameter of the task function), ``"module:callable"`` (called as
``fn(task, args, kwargs)``, returns the job id). Parsing is shared with the
harness, which checks the expression when it reads the config.
"""
from __future__ import annotations

import re
from typing import Any, Callable

from harness.setting_checks import checks_setting

_ARGS = re.compile(r"^args\[(\d+)\]$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_CALLABLE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")

FORMS = "'' (the task id), 'args[N]', a parameter name, or 'module:callable'"


class Unresolved(Exception):
    """The expression found no job id in this task run."""


@checks_setting("job_id_from")
def check(expression: str) -> str | None:
    """None when ``expression`` is well formed, else why not."""
    expression = expression.strip()
    if not expression or _ARGS.match(expression) or _NAME.match(expression) or _CALLABLE.match(expression):
        return None
    return f"{expression!r} is none of {FORMS}"


def resolver(expression: str) -> Callable[[Any, str, tuple, dict], str]:
    """A function ``(task, task_id, args, kwargs) -> job id`` for ``expression``; raises Unresolved."""
    expression = expression.strip()
    problem = check(expression)
    if problem:
        raise ValueError(problem)
    if not expression:
        return lambda task, task_id, args, kwargs: task_id
    if (match := _ARGS.match(expression)) is not None:
        return _positional(int(match.group(1)))
    if _NAME.match(expression):
        return _named(expression)
    return _called(expression)


def _positional(index: int) -> Callable[[Any, str, tuple, dict], str]:
    def resolve(task: Any, task_id: str, args: tuple, kwargs: dict) -> str:
        if index >= len(args or ()):
            raise Unresolved(f"the task got {len(args or ())} positional argument(s)")
        return _text(args[index])
    return resolve


def _named(name: str) -> Callable[[Any, str, tuple, dict], str]:
    def resolve(task: Any, task_id: str, args: tuple, kwargs: dict) -> str:
        if kwargs and name in kwargs:
            return _text(kwargs[name])
        bound = _bind(task, args or (), kwargs or {})
        if name in bound:
            return _text(bound[name])
        raise Unresolved(f"no keyword argument or parameter {name!r} (kwargs: {sorted(kwargs or {})})")
    return resolve


def _bind(task: Any, args: tuple, kwargs: dict) -> dict[str, Any]:
    import inspect

    try:
        return dict(inspect.signature(task.run).bind_partial(*args, **kwargs).arguments)
    except (TypeError, ValueError, AttributeError):
        return {}


def _called(spec: str) -> Callable[[Any, str, tuple, dict], str]:
    state: dict[str, Any] = {}

    def resolve(task: Any, task_id: str, args: tuple, kwargs: dict) -> str:
        if "fn" not in state:
            state["fn"] = _load(spec)
        try:
            value = state["fn"](task, args, kwargs)
        except Exception as exc:  # noqa: BLE001 - the app's function: report whatever it raised
            raise Unresolved(f"{spec} raised {type(exc).__name__}: {exc}") from exc
        return _text(value)
    return resolve


def _load(spec: str) -> Callable[..., Any]:
    import importlib

    module_name, _, attr = spec.partition(":")
    try:
        target: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as exc:
        raise Unresolved(f"cannot import {spec}: {exc}") from exc
    return target


def _text(value: Any) -> str:
    if value is None or value == "":
        raise Unresolved(f"the value found is {value!r}")
    return str(value)
