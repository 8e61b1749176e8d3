"""Named fault points in application code, armed from the harness.

Application code marks its seams::

    from harness.failpoints import failpoint
    failpoint("submit.after_job_write", job_id=job.id)

and the harness (another process) arms them with an action and a condition
through :class:`harness.failpoints.control.FailpointControl`. Every firing is
appended to ``triggers.jsonl``.

Why a shared directory is the control channel: scenarios stop Redis,
restart the database and cut the network, and the failpoints must keep
working through all of it, so the channel depends on none of them. A
directory works for local processes, for Celery prefork children (they
inherit the mapping) and for containers that bind-mount it. Its ``state``
file is mapped into memory, so noticing that nothing changed costs a memory
read and no syscall; the harness's write is visible to every process as
soon as ``arm()`` returns. The one place a shared mapping is not coherent is
a bind mount that crosses a virtual machine boundary (Docker Desktop's
file sharing); run the harness inside the same VM there.

Cost when off: ``failpoint`` is one function whose first act is to return
when no control directory is configured; that is as cheap as a separate
no-op function and, unlike swapping functions, it also holds for code that
did ``from harness.failpoints import failpoint`` before :func:`configure`.
With a directory configured and the name not armed, the extra cost is one
shared-memory read, one int compare and one frozenset lookup
(``benchmarks/failpoints.py`` measures all three cases). Only an armed name
takes the slow path in ``_fire``, which loads on first use.
"""
from __future__ import annotations

import os
from typing import Any

from harness.failpoints._registry import (
    register_callback,
    register_exception_factory,
    register_resource,
)
from harness.failpoints._state import ClientState
from harness.failpoints.spec import ENV_VAR

__all__ = [
    "ENV_VAR",
    "configure",
    "configured_dir",
    "failpoint",
    "is_armed",
    "register_callback",
    "register_exception_factory",
    "register_resource",
]

# None: failpoints are off. Reading the environment is all the import does;
# the directory itself is opened on the first failpoint call.
_client: ClientState | None = ClientState(os.environ[ENV_VAR]) if os.environ.get(ENV_VAR) else None
_fire: Any = None  # the slow path, loaded by _slow_path()


def failpoint(name: str, /, **context: Any) -> Any:
    """Mark a seam named ``name``; does nothing unless the harness armed it.

    ``context`` (e.g. ``job_id=...``) is matched against the arming's
    ``match`` and recorded with each trigger. Returns None unless the action
    is ``return`` or ``callback``; may raise, sleep, hang, or kill the process.
    """
    client = _client
    if client is None:
        return None
    if client.view[0] != client.generation:
        client.refresh()
    if name not in client.names:
        return None
    return _slow_path()(client, name, context)


def is_armed(name: str, /) -> bool:
    """Whether ``failpoint(name, ...)`` would act now: a caller that builds a costly context first
    asks this (the same shared-memory read as ``failpoint`` itself), so a seam costs nothing more
    while nobody armed it."""
    client = _client
    if client is None:
        return False
    if client.view[0] != client.generation:
        client.refresh()
    return name in client.names


def _slow_path() -> Any:
    # imported on the first armed call only; cached, since even a cached import costs ~0.5 µs
    global _fire
    if _fire is None:
        from harness.failpoints._fire import fire as _fire
    return _fire


def configure(path: str | os.PathLike[str] | None) -> None:
    """Point this process at a control directory (None turns failpoints off).

    For apps that learn the directory after import. Opens the directory at
    once, so a wrong path fails here with a ConfigError rather than at the
    first failpoint. Child processes need ``ENV_VAR`` in their environment.
    """
    global _client
    if path is None:
        _client = None
        return
    client = ClientState(os.fspath(path))
    client.refresh()
    _client = client


def configured_dir() -> str | None:
    """The control directory in use, or None when failpoints are off."""
    return None if _client is None else _client.path
