"""The app's schema in the template database, the way the app makes it.

``schema`` (config) is one of:

* ``"module:function"`` taking one argument: called here with the template
  database's URL (the app's ``create_schema(url)``);
* ``"module:function"`` taking none (an ``init_db()`` that calls
  ``metadata.create_all`` on the app's own engine): called in a process of
  its own, with the app's environment pointing at the template database;
* a command, such as ``"alembic upgrade head"``: run in the project folder
  with that same environment (the app's migrations find the database the
  way they do in production, from the app's settings); its arguments may
  name the template database's values (``{database_url}``, ``{database_host}``...).

A command or a function run apart that fails is a ``ConfigError`` with its
exit status and the tail of its output.
"""
from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Mapping

from harness.config import load_callable
from harness.errors import ConfigError
from harness.stack.database_values import database_values

SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
RUN_TIMEOUT = 300.0  # seconds a migration may take
TAIL = 3000
CALL = "import importlib, sys; m, _, f = sys.argv[1].partition(':'); getattr(importlib.import_module(m), f)()"

Env = Callable[[str], Mapping[str, str]]  # template database URL -> the app's environment pointing at it


def schema_builder(spec: str, root: Path, env_for: Env) -> Callable[[str], None]:
    """A function that makes the app's schema in the database at the URL it is given."""
    if not SPEC.match(spec):
        return lambda url: _run(_command(spec, url), spec, root, env_for(url))
    function = load_callable(spec, "schema", root)
    if _takes_no_argument(function) and not _can_take_one(function):
        return lambda url: _run([sys.executable, "-c", CALL, spec], spec, root, env_for(url))
    _takes_one_argument(function, spec)
    return lambda url: _call(function, spec, url)


def _command(spec: str, url: str) -> list[str]:
    from harness.stack.app import render_command

    return render_command(spec, database_values(url))  # its URLs and parts: {database_host}, {database_port}...


def _run(command: list[str], spec: str, root: Path, env: Mapping[str, str]) -> None:
    path = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH", "")) if p)
    try:
        done = subprocess.run(command, cwd=root, env={**env, "PYTHONPATH": path}, capture_output=True,
                              text=True, timeout=RUN_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"schema = {spec!r}: {exc}", key="schema") from exc
    if done.returncode != 0:
        output = (done.stdout + done.stderr)[-TAIL:]
        raise ConfigError(f"schema = {spec!r} failed (exit {done.returncode}) on the template database, "
                          f"run as {' '.join(command)!r} in {root}:\n{output}", key="schema")


def _call(function: Callable[[str], Any], spec: str, url: str) -> None:
    try:
        function(url)
    except SystemExit as exc:  # a command's main() named by mistake: argparse exits
        raise ConfigError(f"schema = {spec!r} exited ({exc!r}) when called with the template database's URL: "
                          f"it must name a function that takes a database URL and creates the app's tables",
                          key="schema") from exc


def _takes_no_argument(function: Callable[..., Any]) -> bool:
    try:
        inspect.signature(function).bind()
    except TypeError:
        return False
    except ValueError:
        return False  # no signature to read (a builtin): let the call tell
    return True


def _can_take_one(function: Callable[..., Any]) -> bool:
    try:
        inspect.signature(function).bind("postgresql://")
    except (TypeError, ValueError):
        return False
    return True


def _takes_one_argument(function: Callable[..., Any], spec: str) -> None:
    """ConfigError unless ``schema`` can be called with one argument (the database URL)."""
    try:
        inspect.signature(function).bind("postgresql://")
    except TypeError as exc:
        raise ConfigError(f"schema = {spec!r} cannot be called with a database URL ({exc}): it must "
                          f"name a function taking one argument, or none (run with the app's environment), "
                          f"or be a command such as 'alembic upgrade head'", key="schema") from exc
    except ValueError:
        pass
