"""Fire a framework failpoint, unless the instrumentation is already inside one's action.

``exhaust_pool`` checks connections out of the app's pool; without the
guard each of those checkouts would fire ``sqlalchemy.pool_checkout`` again.
"""
from __future__ import annotations

import os
from typing import Any

from harness.failpoints import failpoint, is_armed
from harness.instrument import ENV_PROCESS, _context

# the stack's name for this process, so an arming can target one (match={"process": "api"})
_PROCESS = {"process": os.environ[ENV_PROCESS]} if os.environ.get(ENV_PROCESS) else {}


def fire(name: str, **context: Any) -> Any:
    """``failpoint(name, **context)`` with the current job's context added (built only when armed:
    the framework's hooks fire on every commit, checkout and paid call)."""
    if not is_armed(name) or _context.inside_action():
        return None
    job = _context.current()
    full = {**_PROCESS, **(job.failpoint_context() if job else {}), **context}
    with _context.quiet():
        return failpoint(name, **full)
