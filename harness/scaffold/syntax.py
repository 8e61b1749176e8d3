"""Small readings of Python syntax trees that every reader shares."""
from __future__ import annotations

import ast
from datetime import timedelta
from typing import Iterator


def call_name(node: ast.AST) -> str | None:
    """``f`` for ``f(...)``, ``x.f`` -> ``f``."""
    func = node.func if isinstance(node, ast.Call) else node
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def dotted(node: ast.AST) -> str:
    """``a.b.c`` for an attribute chain or name; "" for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = dotted(node.value)
        return f"{head}.{node.attr}" if head else ""
    return ""


def literal(node: ast.AST | None) -> object:
    """The value of a literal expression; None for anything else."""
    try:
        return ast.literal_eval(node) if node is not None else None
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def seconds(node: ast.AST | None) -> float | None:
    """A duration written as a number, ``timedelta(...)`` or ``crontab(minute="*/5")``; None otherwise."""
    value = literal(node)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(node, ast.Call) and call_name(node) == "timedelta":
        parts = {k.arg: literal(k.value) for k in node.keywords if k.arg}
        if node.args:
            parts["days"] = literal(node.args[0])
        if all(isinstance(v, (int, float)) for v in parts.values()):
            return timedelta(**parts).total_seconds()  # type: ignore[arg-type]
    if isinstance(node, ast.Call) and call_name(node) in ("crontab",):
        return _crontab_period({k.arg: literal(k.value) for k in node.keywords if k.arg})
    if isinstance(node, ast.Call) and call_name(node) == "schedule":
        run_every = next((k.value for k in node.keywords if k.arg == "run_every"), node.args[0] if node.args else None)
        return seconds(run_every)
    return None


def _crontab_period(fields: dict[str, object]) -> float | None:
    minute = fields.get("minute", "*")
    if isinstance(minute, str) and minute.startswith("*/") and minute[2:].isdigit() and \
            all(fields.get(k, "*") == "*" for k in ("hour", "day_of_week", "day_of_month", "month_of_year")):
        return int(minute[2:]) * 60.0
    if minute == "*" and all(fields.get(k, "*") == "*" for k in ("hour",)):
        return 60.0
    return None


def keywords(node: ast.Call) -> dict[str, ast.expr]:
    """A call's keyword arguments by name (``**spread`` left out)."""
    return {k.arg: k.value for k in node.keywords if k.arg}


def is_env_name(text: object) -> bool:
    """True for a name written like an environment variable (``APP_TIMEOUT_S``)."""
    return isinstance(text, str) and len(text) > 3 and "_" in text and text.replace("_", "").isalnum() \
        and text.isupper() and not text[0].isdigit()


def functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Every function defined in ``tree``, nested ones included."""
    return (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))


def params(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[str, str, bool]]:
    """(name, annotation text, has a default) of each parameter a caller can pass."""
    args = node.args
    plain = [*args.posonlyargs, *args.args]
    defaults = len(args.defaults)
    out = [(a.arg, ast.unparse(a.annotation) if a.annotation else "", i >= len(plain) - defaults)
           for i, a in enumerate(plain)]
    out += [(a.arg, ast.unparse(a.annotation) if a.annotation else "", d is not None)
            for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    return out
