"""Schema by the app's own migrations: a command run once per session in the template database.

``schema_command`` (``python manage.py migrate --noinput``, ``alembic
upgrade head``) runs from the project folder with the app's environment
(``[tool.jobquake.env]``), whose ``{database_url}`` / ``{database_dsn}``
name the template database for this one run, so the app's own settings
(``DATABASES`` from ``DATABASE_URL``, an ``env.py`` reading its URL) point
the migrations there. Every test's database is then a copy of that
template. The job table config names is checked against the migrated
table right after, as for a ``schema`` function.
"""
from __future__ import annotations

import os
import subprocess
from typing import Any, Callable, Mapping
from urllib.parse import unquote, urlsplit

from harness.config import Config
from harness.errors import ConfigError
from harness.evidence import prepare_template
from harness.stack.app import render_command

SCHEMA_TIMEOUT_S = 300.0  # a project with hundreds of migrations takes a minute or two on a busy machine
TAIL = 3000  # characters of the command's output an error shows


def schema_by_command(config: Config, values: Callable[[], Mapping[str, Any]]) -> Callable[[str], None]:
    """The template builder running ``config.schema_command``; ``values()`` gives the stack's values."""

    def build(url: str) -> None:
        here = {**values(), **database_values(url)}
        command = render_command(config.schema_command, here)
        env = {**os.environ, **template_env(config, here)}
        _run(config, command, env)
        prepare_template(config, here["database_dsn"])  # a wrong job_* key fails here, naming the columns that exist

    return build


def database_values(url: str) -> dict[str, Any]:
    """The template values naming one database: its URL for SQLAlchemy and for libpq, and its parts
    (``{database_host}``... for settings that take them one by one, as Django's ``DATABASES`` may)."""
    dsn = url.replace("postgresql+psycopg://", "postgresql://", 1)
    parts = urlsplit(dsn)
    return {"database_url": url, "database_dsn": dsn, "database_host": parts.hostname or "",
            "database_port": parts.port or "", "database_name": parts.path.lstrip("/"),
            "database_user": unquote(parts.username or ""), "database_password": unquote(parts.password or "")}


def template_env(config: Config, values: Mapping[str, Any]) -> dict[str, str]:
    """``[tool.jobquake.env]`` filled from ``values`` (the template database's URLs)."""
    env = {}
    for var, template in config.env.items():
        try:
            env[var] = str(template).format_map(values)
        except (KeyError, ValueError) as exc:
            raise ConfigError(f"env.{var} = {template!r}: unknown value {exc}; known: "
                              f"{', '.join(sorted(values))}", key=f"env.{var}") from exc
    return env


def _run(config: Config, command: list[str], env: dict[str, str]) -> None:
    what = f"schema_command = {config.schema_command!r}"
    try:
        proc = subprocess.run(command, cwd=config.root, env=env, capture_output=True, text=True,
                              timeout=SCHEMA_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except FileNotFoundError as exc:
        raise ConfigError(f"{what}: no program {command[0]!r} (run from {config.root}); name a program on "
                          f"PATH or beside this Python", key="schema_command") from exc
    except subprocess.TimeoutExpired as exc:
        raise ConfigError(f"{what} ran longer than {SCHEMA_TIMEOUT_S:g} s on the template database",
                          key="schema_command") from exc
    if proc.returncode != 0:
        output = (proc.stdout + proc.stderr)[-TAIL:]
        raise ConfigError(f"{what} failed with exit {proc.returncode} on the template database (run from "
                          f"{config.root}, with [tool.jobquake.env]); the end of its output:\n{output}",
                          key="schema_command")
