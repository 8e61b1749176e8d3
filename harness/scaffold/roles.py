"""What an environment variable is for, judged by its name, its default and its type in the code.

The app reads its own variable names; jobquake fills them from the stack.
A variable is a database URL (``{database_url}``, in the driver its default
names), a broker URL (``{redis_url}``), a model provider's base URL
(``{paidapi_url}``) or key (a fake one), a duration (scaled to the run's
time when it is 10 s or more), a size (left alone), or something else
(left to the app's default).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from harness.instrument._timeouts import AT_LEAST_S as PAID_CALL_AT_LEAST_S

SCALE_AT_LEAST_S = 10.0  # shorter defaults are left as they are: scaled, they would make polling loops spin
PROVIDER_WORDS = ("OPENAI", "ANTHROPIC", "MODEL", "LLM", "PROVIDER", "COMPLETION", "GPT", "CLAUDE", "OPENROUTER",
                  "OLLAMA", "GROQ", "MISTRAL", "TOGETHER", "DEEPSEEK", "GEMINI", "AI_")
PROVIDER_HOSTS = ("api.openai.com", "api.anthropic.com", "openrouter.ai", "localhost:11434", "127.0.0.1:11434",
                  "api.groq.com", "api.together.xyz", "api.mistral.ai", "api.deepseek.com")
# unit suffix -> seconds per unit
UNITS = {"_MS": 0.001, "_MILLIS": 0.001, "_MILLISECONDS": 0.001, "_S": 1.0, "_SEC": 1.0, "_SECS": 1.0,
         "_SECONDS": 1.0, "_MIN": 60.0, "_MINS": 60.0, "_MINUTES": 60.0, "_H": 3600.0, "_HOURS": 3600.0}
DURATION_WORDS = ("TIMEOUT", "INTERVAL", "DELAY", "TTL", "EXPIRE", "PERIOD", "EVERY", "BACKOFF", "STALE",
                  "DEADLINE", "TIME_LIMIT", "VISIBILITY", "HEARTBEAT", "LEASE", "WAIT")
SIZE_WORDS = ("SIZE", "CONCURRENCY", "WORKERS", "MAX_", "_COUNT", "LIMIT", "TRIES", "RETRIES", "ATTEMPTS", "BATCH",
              "TOKENS", "PREFETCH", "OVERFLOW")


@dataclass(frozen=True)
class EnvValue:
    """The value ``[tool.jobquake.env]`` gives a variable, and why; ``kind`` names what it is."""

    name: str
    value: str
    why: str
    kind: str = ""


def _has(name: str, *words: str) -> bool:
    return any(word in name for word in words)


OTHER_DATABASES = ("mysql", "mariadb", "sqlite", "mongodb", "mssql", "oracle", "cockroach")


def other_database(name: str, default: object = None) -> bool:
    """A database jobquake does not run (it runs PostgreSQL): MySQL, SQLite, MongoDB..."""
    scheme = default.split("://", 1)[0].lower() if isinstance(default, str) and "://" in default else ""
    return any(scheme.startswith(kind) for kind in OTHER_DATABASES) or _has(name, "MONGO", "MYSQL", "SQLITE")


def database(name: str, default: object = None) -> bool:
    if other_database(name, default):
        return False
    if isinstance(default, str) and default.startswith(("postgres://", "postgresql")):
        return True
    return _has(name, "DATABASE", "_DB", "DB_", "POSTGRES", "SQLALCHEMY", "PG_") and _has(name, "URL", "DSN", "URI")


def broker(name: str, default: object = None) -> bool:
    if isinstance(default, str) and default.startswith(("redis://", "rediss://")):
        return True
    return _has(name, "BROKER", "REDIS", "CELERY") and _has(name, "URL", "URI")


def provider_url(name: str, default: object = None) -> bool:
    if isinstance(default, str) and default.startswith("http") and any(h in default for h in PROVIDER_HOSTS):
        return True
    return _has(name, *PROVIDER_WORDS) and _has(name, "URL", "BASE", "ENDPOINT", "HOST") and not database(name)


def provider_key(name: str, annotation: str = "") -> bool:
    keyish = name.endswith(("API_KEY", "_KEY", "_TOKEN", "_SECRET")) or "SecretStr" in annotation
    return keyish and _has(name, *PROVIDER_WORDS)


def secret(name: str) -> bool:
    """A signing secret (Django's ``SECRET_KEY``, ``JWT_SECRET``...): any value works in a test."""
    return name.endswith("SECRET_KEY") or "_SECRET" in name or name.startswith("SECRET_")


def deadline(name: str) -> bool:
    """The per-call deadline of the model call."""
    return _has(name, "TIMEOUT", "DEADLINE") and _has(name, *PROVIDER_WORDS, "CALL", "REQUEST")


def soft_limit(name: str) -> bool:
    return "SOFT" in name and "LIMIT" in name


def hard_limit(name: str) -> bool:
    return "LIMIT" in name and not soft_limit(name) and _has(name, "HARD", "TIME_LIMIT", "TASK_LIMIT")


def unit_s(name: str, annotation: str = "") -> float | None:
    """Seconds per unit of a duration variable (by its suffix, its words, its type); None if it is none."""
    for suffix, seconds in sorted(UNITS.items(), key=lambda item: -len(item[0])):
        if name.endswith(suffix):
            return seconds
    if "timedelta" in annotation or (_has(name, *DURATION_WORDS) and not _size(name)):
        return 1.0
    return None


def _size(name: str) -> bool:
    return _has(name, *SIZE_WORDS) and not _has(name, "TIME_LIMIT", "TIMEOUT")


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def duration_s(name: str, default: object, annotation: str = "") -> float | None:
    """The default, in seconds, of a duration variable; None for anything else."""
    unit, number = unit_s(name, annotation), _number(default)
    return None if unit is None or number is None else number * unit


SERVICE_WORDS = {"redis": ("REDIS", "BROKER", "CELERY_BROKER"), "database": ("POSTGRES", "PG", "DB", "DATABASE")}
PART_WORDS = {"_HOST": "host", "_HOSTNAME": "host", "_PORT": "port", "_PASSWORD": "password", "_PASS": "password",
              "_USER": "user", "_USERNAME": "user", "_NAME": "name", "_DB": "name"}


def service_part(name: str) -> str | None:
    """``{redis_port}`` for ``REDIS_PORT``, ``{database_host}`` for ``POSTGRES_HOST``...: a broker's or
    database's address given as separate settings; None for anything else."""
    for suffix, part in sorted(PART_WORDS.items(), key=lambda item: -len(item[0])):
        if not name.endswith(suffix):
            continue
        head = name[: -len(suffix)]
        for service, words in SERVICE_WORDS.items():
            if any(head == w or head.endswith("_" + w) or head.startswith(w) for w in words) and \
                    not (service == "redis" and part == "name") and not _has(head, "MONGO", "MYSQL"):
                return f"{{{service}_{part}}}"
    return None


def env_value(name: str, default: object, time_scale: float, annotation: str = "") -> EnvValue | None:
    """What jobquake should set ``name`` to, or None to leave it to the app."""
    if name.endswith("REDIS_DB") or name == "REDIS_DATABASE":
        return EnvValue(name, "0", "the Redis database the harness reads the broker's queues from", "address")
    part = service_part(name)
    if part is not None and not other_database(name, default):
        return EnvValue(name, part, f"part of the address of jobquake's {part.strip('{}').split('_')[0]}", "address")
    if database(name, default):
        return EnvValue(name, _database_template(default), "a database URL: the per-test database jobquake "
                        "starts", "database")
    if broker(name, default):
        return EnvValue(name, "{redis_url}", "a broker URL: jobquake's Redis", "broker")
    if provider_url(name, default):
        plain = _has(name, "ANTHROPIC", "OLLAMA") or (isinstance(default, str) and
                                                      ("anthropic" in default or ":11434" in default))
        v1 = not plain and (default is None or "/v1" in str(default) or "openrouter" in str(default))
        return EnvValue(name, "{paidapi_url}/v1" if v1 else "{paidapi_url}",
                        "the model provider's URL: jobquake's fake paid API, through the fault proxy", "provider")
    if provider_key(name, annotation):
        return EnvValue(name, "jobquake-fake-key", "a model provider's key: the fake paid API takes any", "key")
    return _duration(name, default, time_scale, annotation)


def _database_template(default: object) -> str:
    scheme = default.split("://", 1)[0] if isinstance(default, str) and "://" in default else ""
    if scheme in ("", "postgresql+psycopg"):
        return "{database_url}"
    if scheme in ("postgresql", "postgres"):
        return "{database_dsn}"
    return f"{scheme}://{{database_address}}"


def _duration(name: str, default: object, time_scale: float, annotation: str) -> EnvValue | None:
    seconds = duration_s(name, default, annotation)
    if seconds is None or seconds < SCALE_AT_LEAST_S:
        return None
    unit = unit_s(name, annotation) or 1.0
    run_seconds = seconds * time_scale
    floor = ""
    if deadline(name) and run_seconds < PAID_CALL_AT_LEAST_S:  # as the instrumentation floors a call's timeout
        run_seconds, floor = PAID_CALL_AT_LEAST_S, f", at least {PAID_CALL_AT_LEAST_S:g} s for a paid call"
    scaled = run_seconds / unit
    whole = annotation.strip() == "int"  # pydantic refuses "0.45" for an int; untyped reads convert themselves
    if whole:
        scaled = max(1, math.ceil(round(scaled, 6)))
    text = f"{scaled:g}" if not whole else str(int(scaled))
    note = floor + (", rounded up: the code reads a whole number" if whole and scaled != run_seconds / unit else "")
    return EnvValue(name, text, f"{_plain(default)} {_unit_word(unit)} in the code, x time_scale {time_scale:g}{note}",
                    "duration")


def _plain(value: object) -> str:
    number = _number(value)
    return f"{number:g}" if number is not None else str(value)


def _unit_word(unit: float) -> str:
    return {0.001: "ms", 1.0: "s", 60.0: "min", 3600.0: "h"}.get(unit, "s")


def size(name: str) -> bool:
    """A count or size (pool size, concurrency, retries): never scaled."""
    return _size(name)

