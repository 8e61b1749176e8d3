"""Switch the instrumentation on in this process (called from ``boot/sitecustomize.py``).

Everything is installed as a post-import hook: a process that never imports
Celery, httpx or SQLAlchemy pays for none of them. Once the hooks are in
place the process writes ``LOADED_MARKER`` to its stderr; the harness fails
the process's start when its log lacks it.
"""
from __future__ import annotations

import json
import os
from typing import Any

from harness.instrument import ENV_DIR, ENV_JOB_ID_FROM, ENV_PAIDAPI_URL, ENV_SETTINGS, LOADED_MARKER, _events
from harness.instrument._hooks import when_imported


def activate() -> None:
    """Install every hook, from the settings the harness put in the environment."""
    folder = os.environ[ENV_DIR]
    if not os.path.isdir(folder):
        raise RuntimeError(f"{ENV_DIR}={folder!r} is not a folder")
    expression = os.environ.get(ENV_JOB_ID_FROM, "")
    settings = _settings()

    from harness.instrument._celery import CeleryHooks
    from harness.instrument._http import PaidCalls
    from harness.instrument._overrides import CeleryOverrides
    from harness.instrument._routes import Routes
    from harness.instrument._targets import Targets
    from harness.instrument._timeouts import TimeoutPolicy

    celery_hooks = CeleryHooks(folder, expression)  # a bad expression fails here, at start
    overrides = CeleryOverrides(settings.get("celery") or {}, folder)
    routes = Routes(os.environ.get(ENV_PAIDAPI_URL, ""), settings.get("paid_hosts") or {})
    calls = PaidCalls("", routes, TimeoutPolicy(float(settings.get("time_scale") or 1.0),
                                                settings.get("scale_paid_call_timeouts") or ()))
    targets = Targets(settings.get("broker") or (), settings.get("database") or (), settings.get("sqs") or ())
    when_imported("celery", celery_hooks.install)
    when_imported("celery", overrides.install)
    when_imported("kombu", targets.patch_kombu)
    when_imported("httpx", calls.patch_httpx)
    when_imported("httpx2", calls.patch_httpx)  # httpx's fork, what openai >= 3 sends through
    when_imported("requests", calls.patch_requests)
    when_imported("aiohttp", calls.patch_aiohttp)
    when_imported("sqlalchemy", lambda module: _sqlalchemy(module, targets))
    _watch_connections(folder)
    when_imported("django.db.backends.base.base", _django)
    _events.log(f"{LOADED_MARKER} (paid API {calls.prefixes or 'unset'}, job_id_from {expression or 'task id'!r})")


def _settings() -> dict[str, Any]:
    raw = os.environ.get(ENV_SETTINGS, "")
    if not raw:
        return {}
    value = json.loads(raw)
    if not isinstance(value, dict):
        raise RuntimeError(f"{ENV_SETTINGS} must hold a JSON object, got {raw[:80]!r}")
    return value


def _sqlalchemy(module: object, targets: Any) -> None:
    from harness.instrument import _sqlalchemy as hooks

    hooks.install(module, targets.engine_created)


def _watch_connections(folder: str) -> None:
    """Pool check-outs and Celery retries as evidence; the process's database sessions named after it."""
    from harness.instrument._pools import PoolWatch, name_sessions
    from harness.instrument._retries import RetryHooks

    name_sessions()
    when_imported("sqlalchemy", PoolWatch(folder).install)
    when_imported("celery", RetryHooks(folder).install)


def _django(module: object) -> None:
    from harness.instrument import _django as hooks

    hooks.install(module)
