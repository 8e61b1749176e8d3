"""Fire a framework failpoint, unless the instrumentation is already inside one's action.

``exhaust_pool`` checks connections out of the app's pool; without the
guard each of those checkouts would fire ``sqlalchemy.pool_checkout`` again.
"""
from __future__ import annotations

import os
from typing import Any

from harness.failpoints import failpoint
from harness.instrument import _context

ENV_PROCESS = "JOBQUAKE_PROCESS"  # a label the harness gives a process it starts (e.g. "submit")


def fire(name: str, **context: Any) -> Any:
    """``failpoint(name, **context)`` with the current job's context added."""
    if _context.inside_action():
        return None
    job = _context.current()
    full = {**(job.failpoint_context() if job else {}), **context}
    process = os.environ.get(ENV_PROCESS)
    if process:  # lets a failpoint be armed for one process only (match={"process": ...})
        full.setdefault("process", process)
    with _context.quiet():
        return failpoint(name, **full)
