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
import re
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
    """Any of ``words`` is whole words of ``name`` (``CALL`` is not in ``CALLBACK_READ_TIMEOUT``), a plural
    included (``EXPIRE`` in ``RESULT_EXPIRES``): ``MAX_`` or ``_DB`` say where the word stands."""
    parts = name.upper().split("_")
    for word in words:
        wanted = word.upper().split("_")
        core = [w for w in wanted if w]
        for start in range(len(parts) - len(core) + 1):
            window = parts[start:start + len(core)]
            if window[:-1] == core[:-1] and window[-1] in (core[-1], core[-1] + "S", core[-1] + "ES") and \
                    (wanted[0] or start > 0) and (wanted[-1] or start + len(core) < len(parts)):
                return True
    return False


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
    return _has(name, "DATABASE", "_DB", "DB_", "POSTGRES", "POSTGRESQL", "SQLALCHEMY", "PG_") and \
        _has(name, "URL", "DSN", "URI")


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


# a signing or encryption secret: any value works in a test, but every process of one must share it
SECRET_NAMES = re.compile(r"(^|_)(SECRET|SECRET_KEY|ENCRYPTION_KEY|FERNET_KEY|SIGNING_KEY|JWT_SECRET)$|^SECRET_|_SECRET_")
THROWAWAY_SECRET = "jobquake-throwaway-secret-not-for-production"


def secret(name: str) -> bool:
    """A signing or encryption secret (Django's ``SECRET_KEY``, ``JWT_SECRET``, ``ENCRYPTION_KEY``...)."""
    return bool(SECRET_NAMES.search(name.upper()))


NOT_PAID_CALL_WORDS = ("CALLBACK", "WEBHOOK", "HOOK", "NOTIFY", "NOTIFICATION")  # the app's own calls out


def deadline(name: str) -> bool:
    """The per-call deadline of the model call: a timeout named for the provider or its request, never
    for the app's callbacks and webhooks (``CALLBACK_READ_TIMEOUT`` is the app's own call out)."""
    return _has(name, "TIMEOUT", "DEADLINE") and _has(name, *PROVIDER_WORDS, "CALL", "REQUEST") and \
        not _has(name, *NOT_PAID_CALL_WORDS)


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
PART_WORDS = {"_HOST": "host", "_HOSTNAME": "host", "_SERVER": "host", "_PORT": "port", "_PASSWORD": "password", "_PASS": "password",
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
    run_seconds, floor = floored(name, seconds * time_scale)
    scaled = run_seconds / unit
    whole = annotation.strip() == "int"  # pydantic refuses "0.45" for an int; untyped reads convert themselves
    if whole:
        scaled = max(1, math.ceil(round(scaled, 6)))
    text = f"{scaled:g}" if not whole else str(int(scaled))
    note = floor + (", rounded up: the code reads a whole number" if whole and scaled != run_seconds / unit else "")
    return EnvValue(name, text, f"{_plain(default)} {_unit_word(unit)} in the code, x time_scale {time_scale:g}{note}",
                    "duration")


# the shortest a task's scaled soft time limit may be, in run seconds: its imports and connections are not scaled
SOFT_LIMIT_AT_LEAST_S = 10.0
HARD_LIMIT_MARGIN_S = 2.0  # a hard limit at least this long after the soft one: time to handle the soft one


def floored(name: str, run_seconds: float) -> tuple[float, str]:
    """A scaled duration raised to its floor, and the note that says so: a paid call's deadline at least
    as long as the instrumentation gives a call (task time limits: ``limit_scale``)."""
    if deadline(name) and run_seconds < PAID_CALL_AT_LEAST_S:
        return PAID_CALL_AT_LEAST_S, f", at least {PAID_CALL_AT_LEAST_S:g} s for a paid call"
    return run_seconds, ""


def limit_scale(durations: dict[str, float], time_scale: float) -> tuple[float, float]:
    """(the scale for durations at least as long as the task's time limit, that limit in production seconds).

    ``durations``: production seconds by variable. The soft time limit (else the hard one) scales to at
    least ``SOFT_LIMIT_AT_LEAST_S`` (the hard one alone to ``HARD_LIMIT_MARGIN_S`` more); every duration
    as long as the limit or longer (a visibility timeout, a stale-job bound) is scaled alike, so the
    app's order of them is kept. (time_scale, inf) when there is no limit.
    """
    soft = next((s for n, s in durations.items() if soft_limit(n) and s > 0), None)
    hard = next((s for n, s in durations.items() if hard_limit(n) and s > 0), None)
    limit = soft or hard
    if limit is None:
        return time_scale, math.inf
    return max(time_scale, (SOFT_LIMIT_AT_LEAST_S + (0 if soft else HARD_LIMIT_MARGIN_S)) / limit), limit


def spaced_hard_limit(env: list[EnvValue]) -> list[EnvValue]:
    """``env`` with a hard time limit at least ``HARD_LIMIT_MARGIN_S`` after the soft one (same unit)."""
    soft = next((e for e in env if e.kind == "duration" and soft_limit(e.name)), None)
    if soft is None:
        return env
    out = []
    for e in env:
        unit = unit_s(e.name) or 1.0
        at_least = float(soft.value) + HARD_LIMIT_MARGIN_S / unit
        if e.kind == "duration" and hard_limit(e.name) and unit == unit_s(soft.name) and float(e.value) < at_least:
            e = EnvValue(e.name, f"{at_least:g}", f"{e.why}; raised to {soft.name} + {HARD_LIMIT_MARGIN_S:g} s, time "
                                                  "to handle the soft limit", e.kind)
        out.append(e)
    return out


def _plain(value: object) -> str:
    number = _number(value)
    return f"{number:g}" if number is not None else str(value)


def _unit_word(unit: float) -> str:
    return {0.001: "ms", 1.0: "s", 60.0: "min", 3600.0: "h"}.get(unit, "s")


def size(name: str) -> bool:
    """A count or size (pool size, concurrency, retries): never scaled."""
    return _size(name)

