"""Parsers of setting values: each turns what a user wrote into the typed value, or raises ValueError.

The message of the ValueError says what the value must be; ``load`` adds
the key and where the value came from. Values written in the language of a
layer above config (a call-key pattern, a price table, a job-id expression)
are checked by that layer, asked through ``harness.setting_checks``.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping, cast

from harness import setting_checks

__all__ = [
    "boolean", "call_key", "choice", "job_id_expression", "list_of_tables", "non_negative_int", "positive_float",
    "prices", "sql_list", "str_list", "table", "within",
]


def positive_float(value: Any) -> float:
    number = float(value)
    if not number > 0:
        raise ValueError("must be > 0")
    return number


def non_negative_int(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError("must be an integer")
    number = int(value)
    if number < 0:
        raise ValueError("must be >= 0")
    return number


def choice(*allowed: str) -> Callable[[Any], str]:
    def parse(value: Any) -> str:
        if value not in allowed:
            raise ValueError(f"must be one of {', '.join(allowed)}")
        return cast("str", value)
    return parse


def str_list(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError("must be a list of strings or a comma-separated string")


def table(value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ValueError("must be a table")
    return dict(value)


def list_of_tables(value: Any) -> tuple[dict[str, Any], ...]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, Mapping) for v in value):
        raise ValueError("must be a list of tables")
    return tuple(dict(v) for v in value)


def sql_list(value: Any) -> tuple[str, ...]:
    # never split on commas: SQL has them
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) and v.strip() for v in value):
        return tuple(value)
    raise ValueError("must be a list of SQL queries, each returning one number")


def boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError("must be true or false")


def _owner_accepts(key: str, value: Any) -> None:
    found = setting_checks.problem(key, value)
    if found:
        raise ValueError(found)


def call_key(value: Any) -> str:
    """The paid API's idempotency-key pattern ('' = attribute by headers only)."""
    if not isinstance(value, str):
        raise ValueError("must be a string such as 'sum:{job_id}:{step}'")
    if value:
        _owner_accepts("call_key", value)
    return value


def prices(value: Any) -> dict[str, Any]:
    """The paid API's price table, checked model by model by the paid API."""
    parsed = table(value)
    _owner_accepts("paidapi_prices", parsed)
    return parsed


def job_id_expression(value: Any) -> str:
    """Where a task's job id is, checked by the instrumentation that resolves it."""
    if not isinstance(value, str):
        raise ValueError("must be a string")
    _owner_accepts("job_id_from", value)
    return value.strip()


def within(bounds: tuple[float, float] | None, value: Any) -> Any:
    """``value`` if it is finite and within ``bounds`` (inclusive); ValueError naming the range otherwise."""
    if bounds is None or value is None:
        return value
    low, high = bounds
    if not math.isfinite(value) or not low <= value <= high:
        raise ValueError(f"must be a finite number from {low:g} to {high:g}")
    return value
