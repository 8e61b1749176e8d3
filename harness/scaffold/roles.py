"""What an environment variable is for, judged by its name (and its default in the code).

The app reads its own variable names; jobquake fills them from the stack.
A name is matched to a stack value (``{database_url}``, ``{redis_url}``,
``{paidapi_url}``), to a fake key, or to a duration that is scaled to the
run's time; the rest are left to the app's defaults.
"""
from __future__ import annotations

from dataclasses import dataclass

SCALE_AT_LEAST_S = 10.0  # shorter defaults are left as they are: scaled, they would make polling loops spin
DURATION_SUFFIXES = ("_S", "_SECONDS", "_SECS", "_SEC")
PROVIDER_WORDS = ("OPENAI", "ANTHROPIC", "MODEL", "LLM", "PROVIDER", "COMPLETION", "GPT", "CLAUDE")


@dataclass(frozen=True)
class EnvValue:
    """The value ``[tool.jobquake.env]`` gives a variable, and why."""

    name: str
    value: str
    why: str


def _has(name: str, *words: str) -> bool:
    return any(word in name for word in words)


def database(name: str) -> bool:
    return _has(name, "DATABASE", "_DB", "DB_", "POSTGRES", "SQLALCHEMY", "PG_") and _has(name, "URL", "DSN", "URI")


def broker(name: str) -> bool:
    return _has(name, "BROKER", "REDIS", "CELERY") and _has(name, "URL", "URI")


def provider_url(name: str) -> bool:
    return _has(name, *PROVIDER_WORDS, "_AI_") and _has(name, "URL", "BASE", "ENDPOINT", "HOST")


def deadline(name: str) -> bool:
    """The per-call deadline of the model call."""
    return _has(name, "TIMEOUT", "DEADLINE") and _has(name, *PROVIDER_WORDS, "CALL", "REQUEST")


def soft_limit(name: str) -> bool:
    return "SOFT" in name and "LIMIT" in name


def hard_limit(name: str) -> bool:
    return "LIMIT" in name and not soft_limit(name) and _has(name, "HARD", "TIME_LIMIT", "TASK_LIMIT")


def duration_s(name: str, default: object) -> float | None:
    """The default, in seconds, of a duration variable (by its suffix); None for anything else."""
    if not name.endswith(DURATION_SUFFIXES) or isinstance(default, bool):
        return None
    try:
        return float(default)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def env_value(name: str, default: object, time_scale: float) -> EnvValue | None:
    """What jobquake should set ``name`` to, or None to leave it to the app."""
    if database(name):
        return EnvValue(name, "{database_url}", "a database URL: the per-test database jobquake starts")
    if broker(name):
        return EnvValue(name, "{redis_url}", "a broker URL: jobquake's Redis")
    if provider_url(name):
        # the official openai client's base URL ends in /v1 (its default does), anthropic's does not
        v1 = "ANTHROPIC" not in name and (default is None or "/v1" in str(default))
        return EnvValue(name, "{paidapi_url}/v1" if v1 else "{paidapi_url}",
                        "the model provider's URL: jobquake's fake paid API, through the fault proxy")
    if name.endswith("API_KEY") and _has(name, *PROVIDER_WORDS):
        return EnvValue(name, "jobquake-fake-key", "the fake paid API takes any key")
    seconds = duration_s(name, default)
    if seconds is not None and seconds >= SCALE_AT_LEAST_S:
        scaled = round(seconds * time_scale, 4)
        return EnvValue(name, f"{scaled:g}", f"{seconds:g} s in the code, x time_scale {time_scale:g}")
    return None
