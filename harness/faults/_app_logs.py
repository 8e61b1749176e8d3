"""What the app's own processes logged while a fault was set: evidence that it felt the fault.

A fault that takes a service away (the broker, every database slot) has no
effect of its own to show: the effect is in the app, which failed to
publish, consume or connect, and said so in its logs. ``AppLogWatch``
notes where each app process's and worker's log ended at injection; at
heal, ``lines(pattern)`` gives the lines since then that match.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.faults.target import RunTarget

SHOWN = 3  # matching lines quoted in the history


class AppLogWatch:
    """Log offsets of every app process and worker, taken now."""

    def __init__(self, run: RunTarget):
        self.run = run
        self.offsets = {svc.name: svc.log_offset() for svc in self._services()}

    def _services(self) -> list[Any]:
        stack = self.run.stack
        return [*stack.processes.values(), *stack.workers.workers]

    def lines(self, pattern: str) -> list[str]:
        """Lines logged since the watch began that match ``pattern`` (a regex, case-insensitive)."""
        regex = re.compile(pattern, re.IGNORECASE)
        found = []
        for svc in self._services():
            offset = self.offsets.get(svc.name, 0)
            if offset > svc.log_offset():  # a replaced process started a fresh log
                offset = 0
            found += [f"{svc.name}: {line.strip()}" for line in svc.logs_since(offset).splitlines()
                      if regex.search(line)]
        return found

    def evidence(self, pattern: str) -> dict[str, Any]:
        """``{"app_errors": n, "app_error_lines": [first few]}`` for the history."""
        found = self.lines(pattern)
        return {"app_errors": len(found), "app_error_lines": found[:SHOWN]}
