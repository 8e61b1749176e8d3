"""Every setting of refapp, read from ``REFAPP_*`` environment variables, typed, with defaults.

Durations here are real seconds, like the budget table: ``REFAPP_TIME_SCALE``
multiplies them wherever they are used (``budgets.scaled``), so a test run at
0.01 keeps the same proportions as production.
"""
from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TypeVar

from refapp import catalogue

T = TypeVar("T")


class SettingsError(ValueError):
    """A ``REFAPP_*`` variable holds a value refapp cannot use."""


@dataclass(frozen=True)
class Settings:
    """The effective settings of one process."""

    database_url: str
    broker_url: str
    events_url: str
    paidapi_url: str
    sqs_endpoint: str | None
    sqs_region: str
    sqs_queue: str
    time_scale: float
    mutants: frozenset[str]
    model_deadline_s: float | None  # real seconds; None: the budget table's model_call
    db_pool_size: int
    db_max_overflow: int
    db_pool_timeout_s: float | None  # real seconds; None: the budget table's db_pool_wait
    port: int
    worker_concurrency: int
    consumer_concurrency: int
    max_attempts: int
    max_documents: int
    max_upload_bytes: int
    allowed_users: frozenset[str]  # empty: everyone may submit
    default_route: str


def _get(env: Mapping[str, str], name: str, parse: Callable[[str], T], default: T) -> T:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return parse(raw.strip())
    except ValueError as exc:
        raise SettingsError(f"{name}={raw!r}: {exc}") from exc


def _positive(kind: Callable[[str], T]) -> Callable[[str], T]:
    def parse(raw: str) -> T:
        value = kind(raw)
        if not value > 0:  # type: ignore[operator]
            raise ValueError("must be > 0")
        return value
    return parse


def _non_negative_int(raw: str) -> int:
    value = int(raw)
    if value < 0:
        raise ValueError("must be >= 0")
    return value


def _names(raw: str) -> frozenset[str]:
    return frozenset(part.strip() for part in raw.split(",") if part.strip())


def _route(raw: str) -> str:
    if raw not in ("celery", "sqs"):
        raise ValueError("must be 'celery' or 'sqs'")
    return raw


def load(env: Mapping[str, str] | None = None) -> Settings:
    """Read the settings from ``env`` (default: the process environment).

    Raises SettingsError for a bad value and catalogue.UnknownMutant for a
    mutant name nobody defined, so a typo stops the process at start.
    """
    env = os.environ if env is None else env
    broker = _get(env, "REFAPP_BROKER_URL", str, "redis://127.0.0.1:6379/0")
    return Settings(
        database_url=_get(env, "REFAPP_DATABASE_URL", str, "postgresql+psycopg://postgres@127.0.0.1:5432/app"),
        broker_url=broker,
        events_url=_get(env, "REFAPP_EVENTS_URL", str, broker),
        paidapi_url=_get(env, "REFAPP_PAIDAPI_URL", str, "http://127.0.0.1:8900"),
        sqs_endpoint=_get(env, "REFAPP_SQS_ENDPOINT", str, None),
        sqs_region=_get(env, "REFAPP_SQS_REGION", str, "us-east-1"),
        sqs_queue=_get(env, "REFAPP_SQS_QUEUE", str, "refapp-jobs"),
        time_scale=_get(env, "REFAPP_TIME_SCALE", _positive(float), 1.0),
        mutants=catalogue.parse(env.get(catalogue.ENV_VAR, "")),
        model_deadline_s=_get(env, "REFAPP_MODEL_DEADLINE_S", _positive(float), None),
        db_pool_size=_get(env, "REFAPP_DB_POOL_SIZE", _positive(int), 5),
        db_max_overflow=_get(env, "REFAPP_DB_MAX_OVERFLOW", _non_negative_int, 5),
        db_pool_timeout_s=_get(env, "REFAPP_DB_POOL_TIMEOUT_S", _positive(float), None),
        port=_get(env, "REFAPP_PORT", _positive(int), 8080),
        worker_concurrency=_get(env, "REFAPP_WORKER_CONCURRENCY", _positive(int), 2),
        consumer_concurrency=_get(env, "REFAPP_CONSUMER_CONCURRENCY", _positive(int), 2),
        max_attempts=_get(env, "REFAPP_MAX_ATTEMPTS", _positive(int), 3),
        max_documents=_get(env, "REFAPP_MAX_DOCUMENTS", _positive(int), 95),
        max_upload_bytes=_get(env, "REFAPP_MAX_UPLOAD_BYTES", _positive(int), 2_000_000),
        allowed_users=_get(env, "REFAPP_ALLOWED_USERS", _names, frozenset()),
        default_route=_get(env, "REFAPP_DEFAULT_ROUTE", _route, "celery"),
    )


@functools.lru_cache(maxsize=1)
def _load_once() -> Settings:
    return load()


_borrowed: list[Settings] = []  # settings lent by ``using``, innermost last


def get() -> Settings:
    """The settings of this process, read once (tests call ``get.cache_clear()``)."""
    return _borrowed[-1] if _borrowed else _load_once()


get.cache_clear = _load_once.cache_clear  # type: ignore[attr-defined]


@contextlib.contextmanager
def using(config: Settings) -> Iterator[Settings]:
    """Run refapp's own code with ``config`` as its settings (e.g. another process's, to audit them)."""
    _borrowed.append(config)
    try:
        yield config
    finally:
        _borrowed.pop()


def for_process() -> Settings:
    """The settings, or exit with status 2 and a clear message (entry points call this first)."""
    try:
        return get()
    except (SettingsError, catalogue.UnknownMutant) as exc:
        print(f"refapp: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
