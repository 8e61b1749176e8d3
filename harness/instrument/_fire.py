"""Fire a framework failpoint, unless the instrumentation is already inside one's action.

``exhaust_pool`` checks connections out of the app's pool; without the
guard each of those checkouts would fire ``sqlalchemy.pool_checkout`` again.
"""
from __future__ import annotations

from typing import Any

from harness.failpoints import failpoint
from harness.instrument import _context


def fire(name: str, **context: Any) -> Any:
    """``failpoint(name, **context)`` with the current job's context added."""
    if _context.inside_action():
        return None
    job = _context.current()
    full = {**(job.failpoint_context() if job else {}), **context}
    with _context.quiet():
        return failpoint(name, **full)
