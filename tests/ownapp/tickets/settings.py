"""Every setting comes from the environment, read when it is needed (never at import)."""
from __future__ import annotations

import os


def _get(name: str, default: str | None = None) -> str:
    value = os.environ.get(name, default)
    if value is None:
        raise RuntimeError(f"environment variable {name} is not set")
    return value


def database_url() -> str:
    return _get("TICKETS_DATABASE_URL")


def broker_url() -> str:
    return _get("TICKETS_BROKER_URL", "redis://127.0.0.1:6379/0")


def openai_base_url() -> str:
    return _get("TICKETS_OPENAI_BASE_URL", "https://api.openai.com/v1")


def openai_api_key() -> str:
    return _get("TICKETS_OPENAI_API_KEY", "not-needed-here")


def seconds(name: str, default: float) -> float:
    return float(_get(name, str(default)))


def model_timeout_s() -> float:
    """How long one model call may take before the ticket fails with ``timeout:``."""
    return seconds("TICKETS_MODEL_TIMEOUT_S", 150)


def soft_limit_s() -> float:
    """The summarise task's soft time limit: it saves a ``timeout:`` failure and leaves."""
    return seconds("TICKETS_TASK_SOFT_LIMIT_S", 600)


def hard_limit_s() -> float:
    """The summarise task's hard time limit: the pool child is killed, no code runs after."""
    return seconds("TICKETS_TASK_HARD_LIMIT_S", 660)


def stale_after_s() -> float:
    """A ticket claimed this long ago and not finished has lost its worker (must exceed the hard limit)."""
    return seconds("TICKETS_STALE_AFTER_S", 720)


def broker_visibility_s() -> float:
    """Redis hides an unacknowledged task this long before handing it out again (> stale_after)."""
    return seconds("TICKETS_BROKER_VISIBILITY_S", 900)


def sweep_every_s() -> float:
    return seconds("TICKETS_SWEEP_EVERY_S", 60)


def relay_every_s() -> float:
    return seconds("TICKETS_RELAY_EVERY_S", 0.5)


def max_tries() -> int:
    return int(_get("TICKETS_MAX_TRIES", "3"))


def pool_timeout_s() -> float:
    """How long a request waits for a database connection before giving up."""
    return seconds("TICKETS_DB_POOL_TIMEOUT_S", 30)
