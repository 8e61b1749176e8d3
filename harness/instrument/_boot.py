"""Switch the instrumentation on in this process (called from ``boot/sitecustomize.py``).

Everything is installed as a post-import hook: a process that never imports
Celery, httpx or SQLAlchemy pays for none of them. Once the hooks are in
place the process writes ``LOADED_MARKER`` to its stderr; the harness fails
the process's start when its log lacks it.
"""
from __future__ import annotations

import os

from harness.instrument import ENV_DIR, ENV_JOB_ID_FROM, ENV_PAIDAPI_URL, LOADED_MARKER, _events
from harness.instrument._hooks import when_imported


def activate() -> None:
    """Install every hook, from the settings the harness put in the environment."""
    folder = os.environ[ENV_DIR]
    if not os.path.isdir(folder):
        raise RuntimeError(f"{ENV_DIR}={folder!r} is not a folder")
    expression = os.environ.get(ENV_JOB_ID_FROM, "")

    from harness.instrument._celery import CeleryHooks
    from harness.instrument._http import PaidCalls

    celery_hooks = CeleryHooks(folder, expression)  # a bad expression fails here, at start
    calls = PaidCalls(os.environ.get(ENV_PAIDAPI_URL, ""))
    when_imported("celery", celery_hooks.install)
    when_imported("httpx", calls.patch_httpx)
    when_imported("httpx2", calls.patch_httpx)  # httpx's fork, what openai >= 3 sends through
    when_imported("requests", calls.patch_requests)
    when_imported("aiohttp", calls.patch_aiohttp)
    when_imported("sqlalchemy", _sqlalchemy)
    when_imported("django.db.backends.base.base", _django)
    _events.log(f"{LOADED_MARKER} (paid API {calls.prefixes or 'unset'}, job_id_from {expression or 'task id'!r})")


def _sqlalchemy(module: object) -> None:
    from harness.instrument import _sqlalchemy as hooks

    hooks.install(module)


def _django(module: object) -> None:
    from harness.instrument import _django as hooks

    hooks.install(module)
